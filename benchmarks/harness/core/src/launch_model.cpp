#include "gpucheck/core/launch_model.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpucheck {

std::int64_t launch_chain_iterations(std::int64_t n) {
  if (n <= 0) throw std::invalid_argument("launch chain length must be positive");
  return std::clamp<std::int64_t>(20000 / n, 100, 2000);
}

double us_per_launch(double chain_seconds, std::int64_t n) {
  if (n <= 0) throw std::invalid_argument("launch chain length must be positive");
  return chain_seconds * 1e6 / static_cast<double>(n);
}

std::uint32_t expected_counter(std::uint64_t chains, std::uint64_t n) {
  return static_cast<std::uint32_t>(chains * n);  // unsigned wrap, as on the device
}

}  // namespace gpucheck
