// bench_memory's tables: the variants (with the suites that run them) and the sizes (with
// theirs); a case is a size row and a variant row that share the suite. Pure: the binary
// hands in how to make each variant's op (Make), the unit test hands in nothing (an int).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/options.hpp"

namespace gpucheck::memory {

template <class Make>
struct Variant {
  std::string_view name;
  std::string_view dtype;  // in the name
  double traffic;          // bytes through HBM per call (read + written) per array byte
  Suites suites;
  Make make;
};

template <class Make>
std::vector<Variant<Make>> variants(Make memcpy_d2d, Make copy_flat, Make copy_persistent, Make triad, Make read_sum) {
  using enum Suite;
  namespace seg = contract::segment;
  const std::string_view u8 = to_string(DType::u8), fp32 = to_string(DType::fp32);
  return {
      {seg::memcpy_d2d, u8, 2, {quick, full, accept}, memcpy_d2d},
      {seg::copy_kernel, u8, 2, {quick, full, accept}, copy_flat},
      // The persistent SM-sized grid, measured slower on the H200: the layout comparison.
      {"copy_kernel_persistent", u8, 2, {full}, copy_persistent},
      {"triad", fp32, 3, {quick, full}, triad},
      {"read_sum", fp32, 1, {quick, full}, read_sum},
  };
}

struct Size {
  std::uint64_t bytes;
  Suites suites;
};

// The binary leaves out sizes under 4x the L2 (nothing may be served from cache).
inline std::vector<Size> sizes() {
  using enum Suite;
  constexpr std::uint64_t MiB = std::uint64_t{1} << 20, GiB = std::uint64_t{1} << 30;
  static_assert(contract::kAcceptMemoryBytes == 2 * GiB);
  return {{256 * MiB, {full}}, {GiB, {full}}, {contract::kAcceptMemoryBytes, {quick, full, accept}}, {4 * GiB, {full}}};
}

template <class Make>
std::string case_name(const Variant<Make>& v, const Size& s) {
  return contract::memory_name(v.name, v.dtype, s.bytes);
}

}  // namespace gpucheck::memory
