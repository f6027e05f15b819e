// bench_pcie's table: one row per copy case with the suites it belongs to. Pure (no CUDA).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpucheck/core/collectives.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/options.hpp"

namespace gpucheck::pcie {

enum class Dir { h2d, d2h, bidir };
enum class Mem { pinned, pageable };

struct PcieCase {
  Dir dir;
  Mem mem;
  std::size_t bytes;  // per direction
  Suites suites;
  std::string name() const {
    namespace seg = contract::segment;
    const std::string_view d = dir == Dir::h2d ? seg::h2d : dir == Dir::d2h ? seg::d2h : seg::bidir;
    return contract::pcie_name(d, mem == Mem::pinned ? seg::pinned : seg::pageable, bytes);
  }
};

inline std::vector<PcieCase> rows() {
  using enum Suite;
  constexpr std::size_t q = contract::kAcceptPcieBytes;  // 256 MiB
  std::vector<PcieCase> r{{Dir::h2d, Mem::pinned, q, {quick, accept}},  {Dir::h2d, Mem::pageable, q, {quick}},
                          {Dir::d2h, Mem::pinned, q, {quick, accept}},  {Dir::d2h, Mem::pageable, q, {quick}},
                          {Dir::bidir, Mem::pinned, q, {quick, accept}}, {Dir::h2d, Mem::pinned, 4096, {quick}}};
  for (Dir d : {Dir::h2d, Dir::d2h, Dir::bidir})
    for (Mem m : {Mem::pinned, Mem::pageable})
      for (std::uint64_t b : geometric_sizes(std::uint64_t{4} << 10, std::uint64_t{1} << 30, 4))
        r.push_back({d, m, static_cast<std::size_t>(b), {full}});
  return r;
}

}  // namespace gpucheck::pcie
