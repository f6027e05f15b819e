// How much slower a benchmark may get before the gate fails, read from baselines/thresholds.json:
// a default (10%), per-name overrides by glob, a report-only list (shown, never gated) and a
// host-bound list (gated at a tight limit only against a baseline of the same host CPU).
// Within each list the first matching glob wins; report_only is consulted first, then
// host_bound, then overrides, then the default.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace gpucheck::compare {

// No case is gated at a limit above this: a case that noisy belongs in report_only.
inline constexpr double kMaxGatedPct = 25.0;

struct ThresholdOverride {
  std::string glob;  // fnmatch(3): '*' any run of characters ('/' included), '?' any one, [a-z] a set
  double pct = 10.0;
  std::string why;
  int processes = 0;  // as HostBound's: a device figure that lands on a level a process
};

// Shown in every report, never fails the gate; cv_pct is the noise measured on the case.
struct ReportOnly {
  std::string glob;
  double cv_pct = 0.0;
  std::string why;
};

// Host time: gated at `pct` when baseline and current ran on the same host CPU model. With
// `processes` (kMinFreshProcesses..kMaxFreshProcesses; 0: not set), the case is measured in that
// many fresh processes, judged against the base build's by the median neighbouring pair
// (fresh_minimum.hpp).
struct HostBound {
  std::string glob;
  double pct = 10.0;
  std::string why;
  int processes = 0;
};
inline constexpr int kMinFreshProcesses = 2, kMaxFreshProcesses = 100;

enum class RuleKind { Default, Override, ReportOnly, HostBound };

struct Rule {
  RuleKind kind = RuleKind::Default;
  double pct = 10.0;     // the gated limit (Default, Override, HostBound)
  double cv_pct = 0.0;   // ReportOnly: the noise measured on the case
  std::string glob, why;
  int processes = 0;     // HostBound, Override: measured in this many fresh processes (0: not)
  // How many fresh processes the case is measured in; 0 when it is not so measured.
  [[nodiscard]] int fresh_processes() const {
    return kind == RuleKind::HostBound || kind == RuleKind::Override ? processes : 0;
  }
};

struct Thresholds {
  double default_pct = 10.0;
  std::vector<ThresholdOverride> overrides;
  std::vector<ReportOnly> report_only;
  std::vector<HostBound> host_bound;
  std::string source;  // file the lists came from, empty when none

  // The limit a case is gated at (report-only cases get the default, for display).
  [[nodiscard]] double pct_for(std::string_view name) const;
  [[nodiscard]] Rule rule_for(std::string_view name) const;
  // "overrides glob \"x/*\"" for every glob that matches none of `names`.
  [[nodiscard]] std::vector<std::string> unmatched_globs(const std::vector<std::string>& names) const;
};

bool glob_match(std::string_view pattern, std::string_view text);

// "10%", "10" or "12.5%": a percentage in (0, 1000). Anything else is an error.
Expected<double> parse_percent(std::string_view text);

// {"default_pct": 10,
//  "overrides":   [{"glob": "launch/*", "pct": 15, "why": "..."}],
//  "report_only": [{"glob": "launch/graph_instantiate/*", "cv_pct": 26, "why": "..."}],
//  "host_bound":  [{"glob": "launch/eager/*", "pct": 8, "processes": 10, "why": "..."}]}
// ("processes", host_bound and overrides, optional: a whole number in [2, 100]).
// Every key is optional ("comment" is allowed at the top level); "pct" may be a string such
// as "15%". Unknown keys and duplicate keys are errors (the reading: read_thresholds_json), and
// so is a gated limit above kMaxGatedPct (the rule: check_gated_limits, which applies to a
// limit from the command line too).
Expected<Thresholds> parse_thresholds(std::string_view text, const std::string& source);
Expected<Thresholds> read_thresholds_json(std::string_view text, const std::string& source);
std::optional<Error> check_gated_limits(const Thresholds& t, const std::string& source);

}  // namespace gpucheck::compare
