// bench_memory's tables: the variants (with the suites that run them) and the sizes (with
// theirs); a case is a size row and a variant row that share the suite. Pure: the binary
// hands in how to make each variant's op (Make), the unit test hands in nothing (an int).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/options.hpp"
#include "listing.hpp"

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

template <class Make>
struct Case {
  const Variant<Make>* variant;
  std::uint64_t bytes;
  bool cached;  // under 4x the L2: a user's size, registered skipped (a suite's is left out)
  std::string name() const { return contract::memory_name(variant->name, variant->dtype, bytes); }
  Coordinates coordinates() const { return {{"bytes", bytes_label(bytes)}, {"variant", std::string(variant->name)}}; }
};

inline std::vector<axes::Axis> axis_table() {
  using axes::Kind;
  std::vector<std::string> names;
  for (const auto& v : variants(0, 0, 0, 0, 0)) names.emplace_back(v.name);
  return {
      {"bytes", Kind::bytes, "per array (at least 4x the L2)", {}, 1, std::int64_t{1} << 40, "2GiB",
       "256MiB,1GiB,2GiB,4GiB"},
      {"variant", Kind::word, "the kernel or call", names, 1, 1, "memcpy_d2d,copy_kernel,triad,read_sum",
       "memcpy_d2d,copy_kernel,copy_kernel_persistent,triad,read_sum"},
  };
}

// A suite's cases on a device with `l2_bytes` of L2: sizes past 4x of it (nothing served from
// cache), each with the variants of the suite; or the axes' points.
template <class Make>
std::vector<Case<Make>> cases(const std::vector<Variant<Make>>& vs, Suite s, const std::vector<axes::Point>* points,
                              std::uint64_t l2_bytes) {
  std::vector<Case<Make>> out;
  if (!points) {
    for (const Size& z : sizes())
      if (z.suites.has(s) && z.bytes >= 4 * l2_bytes)
        for (const auto& v : vs)
          if (v.suites.has(s)) out.push_back({&v, z.bytes, false});
    return out;
  }
  for (const axes::Point& p : *points) {
    const auto bytes = static_cast<std::uint64_t>(p.n("bytes"));
    for (const auto& v : vs)
      if (v.name == p.text("variant")) out.push_back({&v, bytes, bytes < 4 * l2_bytes});
  }
  return out;
}

}  // namespace gpucheck::memory
