// The kinds of verdict a compared case can get, as one table: every property of a kind (its
// name, whether it fails the gate, its colour, its place in the sort, its key and words in the
// counts) is one row, read by the rules, the renderers and the gate alike.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace gpucheck::compare {

enum class Verdict {
  Regression,   // worse than the threshold (and significant where the test could run)
  Missing,      // in the baseline, not in current (or current lacks the metric)
  Errored,      // current run errored where the baseline had a figure
  Skipped,      // skipped (or errored) run on a side, not compared
  Unconfirmed,  // past the threshold but not significant at alpha
  HostDiffers,  // a host-bound case against a baseline of another host CPU: shown, not gated
  Improvement,  // better than the threshold
  New,          // only in current (or the baseline had no figure)
  NoMetric,     // the metric counter is absent on both sides
  Same,         // within the threshold
  ReportOnly,   // on the report-only list: shown in its own section, never gated
  MethodChanged,  // the case's way of measuring (its method) differs from the baseline's: not compared
};
inline constexpr std::size_t kVerdictKinds = 12;

// Whether a kind fails the gate: always, or only while missing figures are not allowed.
enum class GateEffect { Fails, FailsUnlessMissingAllowed, Passes };

struct VerdictKind {
  Verdict verdict;
  std::string_view name;       // in tables and in compare.json's rows ("REGRESSION")
  GateEffect gate;
  std::string_view colour;     // ANSI colour of the row on a terminal ("": none)
  int rank;                    // sort order of the rows: failing kinds first
  std::string_view count_key;  // compare.json's "counts" key ("regressed")
  int count_at;                // its place among those keys (kNoisyCountAt: the noisy count's)
  // The summary line: "N <summary>". Kinds with `always` are listed even at 0, in `summary_at`
  // order, joined by ", "; the others only when N > 0, after them, with their own separator.
  std::string_view summary;
  bool always;
  int summary_at;
  std::string_view separator;
};

// Where the count of noisy rows (not a kind: a row of any kind can be noisy) stands among the
// counts of compare.json and in the summary line ("; N noisy").
inline constexpr int kNoisyCountAt = 9;
inline constexpr int kNoisySummaryAt = 10;

// One row per Verdict, in the enum's order.
const std::array<VerdictKind, kVerdictKinds>& verdict_kinds();
const VerdictKind& kind_of(Verdict v);

inline std::string_view verdict_name(Verdict v) { return kind_of(v).name; }
bool fails_gate(Verdict v, bool allow_missing);

// How many rows got each kind, and how many were noisy (any kind).
struct Counts {
  std::array<int, kVerdictKinds> of{};
  int noisy = 0;
  [[nodiscard]] int operator[](Verdict v) const { return of[static_cast<std::size_t>(v)]; }
  int& operator[](Verdict v) { return of[static_cast<std::size_t>(v)]; }
};

// What the gate's confirmation run said about a first-pass regression.
enum class Confirmation {
  None,          // not re-measured
  Confirmed,     // still past the limit (and significant where the test could run): fails
  NotConfirmed,  // back within the limit, or not significant: passes
  RerunFailed,   // the re-run gave no figure for it: the first pass stands
};
std::string_view confirmation_name(Confirmation c);

}  // namespace gpucheck::compare
