// baselines/fleet_gaps.json: per figure, the least shortfall below its peers that names a GPU
// an outlier, with the healthy spread measured behind it (each gap at least twice that spread
// and never under 1%: the reader refuses a file that breaks the rule), and K, the number of
// robust deviations a GPU must also be below its peers' median.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace gpucheck::compare::fleet {

struct FigureGap {
  double min_gap = 0;         // a fraction: 0.02 is 2% below the peers' median
  double healthy_spread = 0;  // a fraction: the largest spread measured over healthy machines
  std::string basis;          // where that spread was measured
};

struct FleetGaps {
  std::string source = "built-in";
  double k = 4.0;
  std::map<std::string, FigureGap> figures;  // by figure key (figure_keys())

  [[nodiscard]] const FigureGap& gap(const std::string& key) const;
};

// Every figure the fleet compares, in table order: gemm/<peak key>, memory/<variant>,
// pcie/<direction>, burn, nccl (over the node). The gaps file must name each.
std::vector<std::string> figure_keys();

// Strict: an unknown or missing figure, a gap under 1% or under twice its spread, K outside
// [1, 20] are errors naming the file and the key.
Expected<FleetGaps> parse_fleet_gaps(std::string_view text, const std::string& source);

}  // namespace gpucheck::compare::fleet
