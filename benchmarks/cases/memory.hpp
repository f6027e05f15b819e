// bench_memory's case model: the variants (name, dtype, HBM traffic) and the suites as values
// of the axes bytes and variant. Pure: the binary maps a variant's name to its op.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/options.hpp"
#include "listing.hpp"

namespace gpucheck::memory {

struct Variant {
  std::string_view name;
  std::string_view dtype;  // in the name
  double traffic;          // bytes through HBM per call (read + written) per array byte
};

// The persistent SM-sized grid is the layout comparison of the full suite (slower than the
// flat grid on the H200; docs/PERFORMANCE.md).
inline constexpr std::array<Variant, 5> kVariants{{{contract::segment::memcpy_d2d, "u8", 2},
                                                   {contract::segment::copy_kernel, "u8", 2},
                                                   {"copy_kernel_persistent", "u8", 2},
                                                   {"triad", "fp32", 3},
                                                   {"read_sum", "fp32", 1}}};

inline const Variant* find_variant(std::string_view name) {
  for (const Variant& v : kVariants)
    if (v.name == name) return &v;
  return nullptr;
}

struct Case {
  const Variant* variant;
  std::uint64_t bytes;
  bool cached;  // under 4x the L2: a user's size, registered skipped (a suite's is left out)
  std::string name() const { return contract::memory_name(variant->name, variant->dtype, bytes); }
  Coordinates coordinates() const { return {{"bytes", bytes_label(bytes)}, {"variant", std::string(variant->name)}}; }
};

inline axes::CaseModel model() {
  using axes::Kind;
  using enum Suite;
  static_assert(contract::kAcceptMemoryBytes == std::uint64_t{2} << 30);
  std::vector<std::string> names;
  for (const Variant& v : kVariants) names.emplace_back(v.name);
  const std::string copies = std::string(contract::segment::memcpy_d2d) + "," + std::string(contract::segment::copy_kernel);
  return {std::string(contract::family::memory),
          {{"bytes", Kind::bytes, "per array (at least 4x the L2)", {}, 1, std::int64_t{1} << 40},
           {"variant", Kind::word, "the kernel or call", names, 1, 1}},
          {{quick, {{"bytes", "2GiB"}, {"variant", copies + ",triad,read_sum"}}, {{}}},
           {full, {{"bytes", "256MiB,1GiB,2GiB,4GiB"}, {"variant", value_list(names)}}, {{}}},
           {accept, {}, {{{"bytes", "2GiB"}, {"variant", copies}}}}}};
}

// A suite's cases (or the user's points) on a device with `l2_bytes` of L2. A suite leaves
// out the sizes under 4x of it (nothing may be served from cache); a user's is a case,
// registered skipped with why.
inline std::vector<Case> cases(Suite s, const std::vector<axes::Point>* user, std::uint64_t l2_bytes) {
  std::vector<Case> out;
  for (const axes::Point& p : points_of(model(), s, user)) {
    const auto bytes = static_cast<std::uint64_t>(p.n("bytes"));
    const bool cached = bytes < 4 * l2_bytes;
    if (cached && !user) continue;
    out.push_back({find_variant(p.text("variant")), bytes, cached});
  }
  return out;
}

}  // namespace gpucheck::memory
