// bench_pcie's case model: the axes of a copy and the suites as values of them. Pure (no CUDA).
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

// The gate's copies at 256 MiB (and one 4 KiB latency-bound copy), acceptance's pinned ones,
// the full sweep 4 KiB-1 GiB by 4x.
inline axes::CaseModel model() {
  using axes::Kind;
  using enum Suite;
  namespace seg = contract::segment;
  const std::string q = bytes_label(contract::kAcceptPcieBytes);  // 256MiB
  const std::string h2d(seg::h2d), d2h(seg::d2h), bidir(seg::bidir), pinned(seg::pinned), pageable(seg::pageable);
  return {std::string(contract::family::pcie),
          {{"direction", Kind::word, "host to device, device to host, both at once", {h2d, d2h, bidir}, 1, 1},
           {"memory", Kind::word, "the host buffer", {pinned, pageable}, 1, 1},
           {"bytes", Kind::bytes, "per direction", {}, 1, std::int64_t{1} << 40}},
          {{quick,
            {{"direction", "h2d,d2h,bidir"}, {"memory", "pinned,pageable"}, {"bytes", q}},
            {{{"direction", "h2d,d2h"}},
             {{"direction", bidir}, {"memory", pinned}},
             {{"direction", h2d}, {"memory", pinned}, {"bytes", "4KiB"}}}},
           {full, {{"direction", "h2d,d2h,bidir"}, {"memory", "pinned,pageable"}, {"bytes", "2^[12:30:2]"}}, {{}}},
           {accept, {}, {{{"direction", "h2d,d2h,bidir"}, {"memory", pinned}, {"bytes", q}}}}}};
}

// A suite's cases (or the user's points), in order.
inline std::vector<PcieCase> cases(Suite s, const std::vector<axes::Point>* user) {
  std::vector<PcieCase> out;
  namespace seg = contract::segment;
  for (const axes::Point& p : points_of(model(), s, user)) {
    const std::string& d = p.text("direction");
    out.push_back({d == seg::h2d ? Dir::h2d : d == seg::d2h ? Dir::d2h : Dir::bidir,
                   p.text("memory") == seg::pinned ? Mem::pinned : Mem::pageable, static_cast<std::size_t>(p.n("bytes"))});
  }
  return out;
}

}  // namespace gpucheck::pcie
