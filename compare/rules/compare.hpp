// The compare rules: match by name, one figure per side, a directional threshold, noise and
// significance, missing and new benchmarks, and the context that explains a change.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/results.hpp"
#include "rules/thresholds.hpp"
#include "rules/verdict.hpp"

namespace gpucheck::compare {

enum class Direction { LowerIsBetter, HigherIsBetter };

// real_time / cpu_time and latency-like counters (us_per_launch, *_us, *_ms, *_ns) are lower
// is better; rates (TFLOPS, GBps, *ps, *_per_second, pct_of_*) higher. nullopt: unknown.
std::optional<Direction> direction_for(std::string_view metric);

// The counter a person reads for a benchmark (TFLOPS, GBps, ...), empty when it has none.
// A collective of one rank reads algbw_GBps: its busbw is 0 by nccl-tests' definition.
std::string rate_counter(const Benchmark& b);
// Whether b is a collective over one rank (counter ranks = 1) that reports algbw_GBps.
bool one_rank_collective(const Benchmark& b);

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
  // Report-only rows: the cv measured for the list, why, and what the rules would have said.
  std::optional<double> listed_cv_pct;
  std::string rule_why;
  Verdict measured = Verdict::Same;
  // Each side's method (its way of measuring: the counter "method", "1" where a file has none).
  std::string base_method, cur_method;
  // The engine's own noise figure (the cv_pct counter) on each side, when reported.
  std::optional<double> base_noise_pct, cur_noise_pct;
  // Gate: confirmation of a first-pass regression.
  Confirmation confirmation = Confirmation::None;
  std::optional<double> first_change;
  int first_cur_reps = 0;
  // Telemetry that differs from the baseline's ("SM clock 1980 -> 1545 MHz"), and the like.
  std::vector<std::string> why;
  // A case measured in fresh processes (rules/fresh_minimum.hpp): how many the rule asks (0: not
  // so measured) and how many figures the baseline held.
  int fresh_processes = 0, base_processes = 0;
  // Judged by the median pair of processes run beside the base build's (fresh_minimum.hpp).
  bool paired = false;
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

// A family whose binary errored, and why ("bench_matmul", "crashed (signal 11)").
struct ErroredFamily {
  std::string family;
  std::string binary;
  std::string reason;
};

struct CompareOptions {
  std::string metric = "real_time";
  Direction direction = Direction::LowerIsBetter;
  Thresholds thresholds;
  double alpha = 0.05;
  int min_repetitions_for_test = 3;
  bool allow_missing = false;
  // Warn about globs of the thresholds file that match no benchmark (off when a filter chose
  // a subset of the suite: the other globs are not stale).
  bool warn_unmatched_globs = true;
  // Families whose binary errored in the first pass (the gate's runner says which: a family
  // from its binary's name, core's contract): a baseline case of theirs with no figure now is
  // that binary's error, not a missing case.
  std::vector<ErroredFamily> errored_families;
  // Other processes seen on the measured GPU (the gate's NVML look): a host-bound case is
  // then gated at its limit even when the host reference ran slower, since a neighbour on
  // the GPU slows the host reference too (a process streaming pinned H2D copies: 2.5x).
  int gpu_other_processes = 0;
  // Set by the gate when the base side's fresh processes ran one by one beside the current
  // side's (--base-bin-dir): process i of each side together. A case measured in fresh
  // processes is then judged by its median pair (rules/fresh_minimum.hpp).
  bool paired_processes = false;
  // Set by the gate when there is no base build to judge the cases measured in fresh processes
  // (thresholds' "processes"): why they are shown, not gated.
  std::string fresh_not_gated;
};

// Cases better than their limit: the baseline no longer guards them (a regression of up to that
// size passes unseen), so every report says so in one line and compare.json in a field.
struct StaleBaseline {
  std::size_t cases = 0;
  double least = 0.0, most = 0.0;  // the improvements, as fractions of the baseline's figure
  std::string since_date, since_commit, suite;  // the baseline's first date, commit and suite
};
// "baseline stale: N cases better than their limit by A% to B% since ... ; re-record: ..."
std::string stale_line(const StaleBaseline& s);
// The re-recording commands, from a results file and from a history.
std::string stale_command(const StaleBaseline& s);

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
  std::string host_base, host_cur;  // host_cpu of each side
  std::vector<Row> rows;  // regressions first
  Counts counts;          // of the rows' verdicts, taken once when the rules built them
  // Lines shown above the table in every format (an environment that differs, globs of
  // thresholds.json that match no benchmark).
  std::vector<std::string> warnings;
  std::optional<StaleBaseline> stale;  // set when a gated case is better than its limit

  [[nodiscard]] bool failed() const;  // a row fails the gate
};

// How many rows got each verdict, and how many were noisy.
Counts counts_of(const std::vector<Row>& rows);

// Relative slack on the threshold so that "exactly 10%" stays a pass after decimal-to-binary
// rounding (1.1 against 1.0 is a change of 0.10000000000000009 in doubles).
inline constexpr double kThresholdSlack = 1e-9;

// A counter that no benchmark on either side carries cannot be compared: an error naming the
// nearest counter that exists ("did you mean TFLOPS?"). real_time always exists.
Status check_metric(const Results& baseline, const Results& current, const std::string& metric);

Comparison compare_results(const Results& baseline, const Results& current, const CompareOptions& options);

// Whether any case of `r` is measured in fresh processes under `t` ("processes").
bool measures_any_in_fresh_processes(const Thresholds& t, const Results& r);

// A case's method as compared: "1" where the file wrote none (results recorded before cases
// carried one), else as read ("2", or "?" for a value that is not a whole number).
std::string_view effective_method(std::string_view method);
// Whether two sides measured a case the same way (an absent method is method 1; "?" is
// never the same as anything).
bool same_method(std::string_view a, std::string_view b);
// "method 1 -> 2: not compared, re-record the baseline"
std::string method_note(std::string_view base, std::string_view cur);

// True when the row's change is in the worse direction.
bool worse_direction(const Row& r, Direction d);

}  // namespace gpucheck::compare
