#include "gpucheck/core/launch_model.hpp"

#include <stdexcept>

namespace gpucheck {

double us_per_launch(double chain_seconds, std::int64_t n) {
  if (n <= 0) throw std::invalid_argument("launch chain length must be positive");
  return chain_seconds * 1e6 / static_cast<double>(n);
}

std::uint32_t expected_counter(std::uint64_t chains, std::uint64_t n) {
  return static_cast<std::uint32_t>(chains * n);  // unsigned wrap, as on the device
}

}  // namespace gpucheck
