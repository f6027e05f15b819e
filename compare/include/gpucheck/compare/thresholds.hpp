// How much slower a benchmark may get before the gate fails: a default (10%) and per-name
// overrides by glob, read from baselines/thresholds.json. First matching glob wins.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/compare/expected.hpp"

namespace gpucheck::compare {

struct ThresholdOverride {
  std::string glob;  // '*' matches any run of characters ('/' included), '?' any one
  double pct = 10.0;
  std::string why;
};

struct Thresholds {
  double default_pct = 10.0;
  std::vector<ThresholdOverride> overrides;
  std::string source;  // file the overrides came from, empty when none

  [[nodiscard]] double pct_for(std::string_view name) const;
};

bool glob_match(std::string_view pattern, std::string_view text);

// "10%", "10" or "12.5%": a percentage in (0, 1000). Anything else is an error.
Expected<double> parse_percent(std::string_view text);

// {"default_pct": 10, "overrides": [{"glob": "launch/*", "pct": 15, "why": "..."}]}
// "default_pct" is optional; "pct" may also be a string such as "15%".
Expected<Thresholds> parse_thresholds(std::string_view text, const std::string& source);

}  // namespace gpucheck::compare
