// The compare rules: match by name, one figure per side, a directional threshold, noise and
// significance, missing and new benchmarks, and the context that explains a change.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/compare/results.hpp"
#include "gpucheck/compare/thresholds.hpp"

namespace gpucheck::compare {

enum class Direction { LowerIsBetter, HigherIsBetter };

// real_time / cpu_time and latency-like counters (us_per_launch, *_us, *_ms, *_ns) are lower
// is better; rates (TFLOPS, GBps, *ps, *_per_second, pct_of_*) higher. nullopt: unknown.
std::optional<Direction> direction_for(std::string_view metric);

// The counter a person reads for a benchmark (TFLOPS, GBps, ...), empty when it has none.
std::string rate_counter(const Benchmark& b);

enum class Verdict {
  Regression,   // worse than the threshold (and significant where the test could run)
  Missing,      // in the baseline, not in current
  Errored,      // current run errored where the baseline had a figure
  Skipped,      // skipped (or errored) run on a side, not compared
  Unconfirmed,  // past the threshold but not significant at alpha
  Improvement,  // better than the threshold
  New,          // only in current (or the baseline had no figure)
  NoMetric,     // the metric counter is absent on a side
  Same,         // within the threshold
};
std::string_view verdict_name(Verdict v);

struct Row {
  std::string name;
  Verdict verdict = Verdict::Same;
  bool noisy = false;
  bool fails_gate = false;
  std::optional<double> base;    // metric value: ns for times, counter units otherwise
  std::optional<double> cur;
  std::optional<double> change;  // (cur - base) / base
  double threshold_pct = 10.0;
  std::optional<double> p_value;
  bool exact_test = false;
  std::optional<double> base_cv, cur_cv;
  int base_reps = 0, cur_reps = 0;
  std::string rate;  // rate counter shown beside the metric
  std::optional<double> base_rate, cur_rate;
  std::string note;  // error / skip message, or why not compared
};

struct ContextDiff {
  std::string key;
  std::string label;
  std::string base;
  std::string cur;
};

// Context keys compared and labelled, in display order.
const std::vector<std::pair<std::string, std::string>>& context_keys();
std::vector<ContextDiff> diff_context(const Results& base, const Results& cur);

struct CompareOptions {
  std::string metric = "real_time";
  Direction direction = Direction::LowerIsBetter;
  Thresholds thresholds;
  double alpha = 0.05;
  int min_repetitions_for_test = 3;
  bool allow_missing = false;
};

struct Counts {
  int regressions = 0, missing = 0, errored = 0, skipped = 0, unconfirmed = 0, improvements = 0,
      fresh = 0, no_metric = 0, same = 0, noisy = 0;
};

struct Comparison {
  std::string baseline_source, current_source;
  std::string metric;
  Direction direction = Direction::LowerIsBetter;
  double alpha = 0.05;
  bool allow_missing = false;
  std::string thresholds_source;
  double default_threshold_pct = 10.0;
  std::vector<ContextDiff> context;
  std::string gpu_base, gpu_cur;
  std::vector<Row> rows;  // regressions first
  Counts counts;

  [[nodiscard]] bool failed() const;
};

// Relative slack on the threshold so that "exactly 10%" stays a pass after decimal-to-binary
// rounding (1.1 against 1.0 is a change of 0.10000000000000009 in doubles).
inline constexpr double kThresholdSlack = 1e-9;

Comparison compare_results(const Results& baseline, const Results& current, const CompareOptions& options);

}  // namespace gpucheck::compare
