// bench_pcie's table: one row per copy case with the suites it belongs to. Pure (no CUDA).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/collectives.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/options.hpp"
#include "listing.hpp"

namespace gpucheck::pcie {

enum class Dir { h2d, d2h, bidir };
enum class Mem { pinned, pageable };

struct PcieCase {
  Dir dir;
  Mem mem;
  std::size_t bytes;  // per direction
  Suites suites;
  std::string_view direction() const {
    namespace seg = contract::segment;
    return dir == Dir::h2d ? seg::h2d : dir == Dir::d2h ? seg::d2h : seg::bidir;
  }
  std::string_view memory() const { return mem == Mem::pinned ? contract::segment::pinned : contract::segment::pageable; }
  std::string name() const { return contract::pcie_name(direction(), memory(), bytes); }
  Coordinates coordinates() const {
    return {{"direction", std::string(direction())}, {"memory", std::string(memory())}, {"bytes", bytes_label(bytes)}};
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

inline std::vector<axes::Axis> axis_table() {
  using axes::Kind;
  namespace seg = contract::segment;
  return {
      {"direction", Kind::word, "host to device, device to host, both at once",
       {std::string(seg::h2d), std::string(seg::d2h), std::string(seg::bidir)}, 1, 1, "h2d,d2h,bidir", "h2d,d2h,bidir"},
      {"memory", Kind::word, "the host buffer", {std::string(seg::pinned), std::string(seg::pageable)}, 1, 1,
       "pinned,pageable", "pinned,pageable"},
      {"bytes", Kind::bytes, "per direction", {}, 1, std::int64_t{1} << 40, "256MiB", "2^[12:30:2]"},
  };
}

// A suite's rows, or the axes' points.
inline std::vector<PcieCase> cases(Suite s, const std::vector<axes::Point>* points) {
  if (!points) return in_suite(rows(), s);
  std::vector<PcieCase> out;
  namespace seg = contract::segment;
  for (const axes::Point& p : *points) {
    const std::string& d = p.text("direction");
    out.push_back({d == seg::h2d ? Dir::h2d : d == seg::d2h ? Dir::d2h : Dir::bidir,
                   p.text("memory") == seg::pinned ? Mem::pinned : Mem::pageable, static_cast<std::size_t>(p.n("bytes")), {s}});
  }
  return out;
}

}  // namespace gpucheck::pcie
