// A case measured in N fresh processes (rules/fresh_minimum.hpp): the fastest of N's quantile,
// the median pair of processes run beside the base build's, the rule's field in thresholds.json,
// and the comparison on figures shaped as the H200 VMs' launch levels (docs/GATE.md: one
// cudaLaunchKernel 3.43-3.53 us in some processes, 4.28-4.37 in the others, 5 gates of one
// machine, 2026-12-04).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "results/results.hpp"
#include "rules/compare.hpp"
#include "rules/fresh_minimum.hpp"
#include "rules/thresholds.hpp"
#include "../test_util.hpp"

namespace gc = gpucheck::compare;

namespace {

constexpr const char* kCase = "launch/host_launch/empty/1";

// One case with one figure per process (us), on a host CPU model; host_ref_us beside each when given.
gc::Results processes(const std::vector<double>& us, const std::string& cpu = "CPU A", double ref_us = 0) {
  std::string s = R"({"context": {"gpu_name": "NVIDIA H200", "host_cpu": ")" + cpu + R"("}, "benchmarks": [)";
  for (std::size_t i = 0; i < us.size(); ++i) {
    const std::string ref = ref_us > 0 ? R"(, "host_ref_us": )" + std::to_string(ref_us) + R"(, "host_ref_max_us": )" +
                                             std::to_string(ref_us * 1.05)
                                       : "";
    s += std::string(i ? "," : "") + R"({"name": ")" + kCase + R"(", "run_type": "iteration", "repetitions": )" +
         std::to_string(us.size()) + R"(, "repetition_index": )" + std::to_string(i) + R"(, "real_time": )" +
         std::to_string(us[i]) + R"(, "time_unit": "us")" + ref + "}";
  }
  auto r = gc::parse_results(s + "]}", "r.json");
  if (!r) throw std::runtime_error(r.error().str());
  return std::move(*r);
}

gc::CompareOptions ten_processes_at(double pct) {
  gc::CompareOptions o;
  auto t = gc::parse_thresholds(R"({"host_bound": [{"glob": "launch/host_*", "pct": )" + std::to_string(pct) +
                                    R"(, "processes": 10, "why": "host CPU time, two levels between processes"}]})",
                                "t.json");
  if (!t) throw std::runtime_error(t.error().str());
  o.thresholds = *t;
  return o;
}

// A baseline of 20 fresh processes: 9 at the low level, 11 at the high one.
std::vector<double> baseline_pool() {
  return {3.43, 3.53, 3.46, 3.50, 3.41, 3.55, 3.48, 3.44, 3.52, 4.28, 4.28, 4.37,
          4.31, 4.25, 4.40, 4.33, 4.29, 4.35, 4.22, 4.30};
}

gc::Row only_row(const gc::Comparison& c) {  // a copy: the comparisons here are temporaries
  if (c.rows.size() != 1) throw std::runtime_error("expected one row");
  return c.rows[0];
}

}  // namespace

TEST(FreshMinimum, TheQuantileWhereTheBestOfNLandsHalfTheTime) {
  EXPECT_DOUBLE_EQ(gc::best_of_n_quantile(1), 0.5);
  EXPECT_NEAR(gc::best_of_n_quantile(10), 0.066967, 1e-6);
  EXPECT_NEAR(std::pow(1.0 - gc::best_of_n_quantile(7), 7), 0.5, 1e-12);  // all 7 above it: half the time
  EXPECT_DOUBLE_EQ(gc::best_of_n_quantile(0), 0.5);                        // taken as 1
  EXPECT_EQ(gc::quantile_of({4.0, 1.0, 3.0, 2.0}, 0.0), 1.0);
  EXPECT_EQ(gc::quantile_of({4.0, 1.0, 3.0, 2.0}, 1.0), 4.0);
  EXPECT_EQ(gc::quantile_of({4.0, 1.0, 3.0, 2.0}, 0.5), 2.0);   // rank ceil(2) = 2: no interpolation
  EXPECT_EQ(gc::quantile_of({4.0, 1.0, 3.0, 2.0}, 0.51), 3.0);
  EXPECT_EQ(gc::quantile_of({1.0, 2.0}, 0.1), 1.0);
  // The quantile of the best of 10: a side of exactly 10 reads its fastest, of 30 its third.
  std::vector<double> thirty;
  for (int i = 30; i >= 1; --i) thirty.push_back(i);
  const double q10 = gc::best_of_n_quantile(10);
  EXPECT_EQ(gc::quantile_of(std::vector<double>(thirty.end() - 10, thirty.end()), q10), 1.0);
  EXPECT_EQ(gc::quantile_of(thirty, q10), 3.0);
  EXPECT_EQ(gc::quantile_of(thirty, 1.0 - q10), 28.0);
  EXPECT_EQ(gc::quantile_of({7.0}, 0.3), 7.0);
  EXPECT_FALSE(gc::quantile_of({}, 0.5).has_value());
  EXPECT_FALSE(gc::quantile_of({1.0, std::nan("")}, 0.5).has_value());
  EXPECT_FALSE(gc::quantile_of({1.0, INFINITY}, 0.5).has_value());
  EXPECT_FALSE(gc::quantile_of({1.0}, 1.5).has_value());
  EXPECT_FALSE(gc::quantile_of({1.0}, std::nan("")).has_value());
}

TEST(FreshMinimum, JudgementNeedsNOnEachSideAndReadsBothDirections) {
  const std::vector<double> ten{5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
  auto f = gc::judge_fresh_minimum(ten, {9, 8, 10, 11, 12, 13, 14, 15, 16, 17}, 10, true);
  ASSERT_TRUE(f.base && f.cur);
  EXPECT_EQ(*f.base, 5.0);  // ten a side: each side's fastest
  EXPECT_EQ(*f.cur, 8.0);
  f = gc::judge_fresh_minimum(ten, {9, 8, 10, 11, 12, 13, 14, 15, 16, 17}, 10, false);  // a rate: the largest
  EXPECT_EQ(*f.base, 14.0);
  EXPECT_EQ(*f.cur, 17.0);
  // Twenty now: what ten of them would read, not a luckier minimum.
  f = gc::judge_fresh_minimum(ten, {9, 8, 10, 11, 12, 13, 14, 15, 16, 17, 7, 18, 19, 20, 21, 22, 23, 24, 25, 26}, 10, true);
  EXPECT_EQ(*f.cur, 8.0);  // rank ceil(20 * 0.067) = 2
  f = gc::judge_fresh_minimum(ten, {1, 2, 3}, 10, true);
  EXPECT_FALSE(f.base || f.cur);
  EXPECT_NE(f.why_not.find("the baseline holds 10 process figures, this run 3"), std::string::npos) << f.why_not;
  f = gc::judge_fresh_minimum({1.0}, ten, 10, true);
  EXPECT_NE(f.why_not.find("holds 1 process figure, this run 10"), std::string::npos) << f.why_not;
  f = gc::judge_fresh_minimum(ten, {1, 2, 3, 4, 5, 6, 7, 8, 9, std::nan("")}, 10, true);
  EXPECT_FALSE(f.base || f.cur);
  EXPECT_EQ(f.why_not, "a process figure that is not a number");
}

TEST(FreshMinimum, ThresholdsTakeProcessesOnHostBoundAndOverrideEntries) {
  auto t = gc::parse_thresholds(
      R"({"host_bound": [{"glob": "launch/host_*", "pct": 10, "processes": 10, "why": "w"}, {"glob": "pcie/*", "pct": 10, "why": "w"}],
          "overrides": [{"glob": "launch/eager_held/*", "pct": 5, "processes": 8, "why": "device time, a level a process"},
                        {"glob": "matmul/*", "pct": 5}]})",
      "t.json");
  ASSERT_TRUE(t) << t.error().str();
  EXPECT_EQ(t->rule_for("launch/host_launch/empty/1").fresh_processes(), 10);
  EXPECT_EQ(t->rule_for("pcie/h2d/pinned/1").fresh_processes(), 0);
  const gc::Rule held = t->rule_for("launch/eager_held/empty/100");
  EXPECT_EQ(held.kind, gc::RuleKind::Override);  // device-bound: no host reference, no host CPU check
  EXPECT_EQ(held.fresh_processes(), 8);
  EXPECT_EQ(t->rule_for("matmul/x/bf16/1").fresh_processes(), 0);
  EXPECT_EQ(t->rule_for("other").fresh_processes(), 0);
  for (const char* list : {"host_bound", "overrides"}) {
    for (const char* bad : {"1", "101", "0", "-3", "10.5", "\"10\"", "null", "1e2", "18446744073709551615"}) {
      auto b = gc::parse_thresholds(std::string("{\"") + list + R"(": [{"glob": "a", "pct": 10, "why": "w", "processes": )" + bad +
                                        "}]}",
                                    "t.json");
      ASSERT_FALSE(b) << list << " " << bad;
      EXPECT_NE(b.error().message.find("\"processes\" must be a whole number from 2 to 100"), std::string::npos)
          << bad << ": " << b.error().message;
    }
  }
  auto b = gc::parse_thresholds(R"({"report_only": [{"glob": "a", "cv_pct": 5, "why": "w", "processes": 10}]})", "t.json");
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("unknown key \"processes\""), std::string::npos) << b.error().message;
}

// A device-bound case whose figure lands on a level a process (launch/eager_held: the GPU's drain
// of 100 queued launches, 1.281-1.418 us over 25 processes on 2 H200s): an override with
// "processes" is judged by the fastest, at its own limit, with neither the U test nor a host
// reference, and without the runner's own runs it is shown, not gated, as a host-bound one.
TEST(FreshMinimum, AnOverrideWithProcessesIsJudgedByTheFastestAtItsLimit) {
  gc::CompareOptions o;
  auto t = gc::parse_thresholds(
      R"({"overrides": [{"glob": "launch/host_*", "pct": 5, "processes": 10, "why": "device time, a level a process"}]})", "t.json");
  ASSERT_TRUE(t) << t.error().str();
  o.thresholds = *t;
  std::vector<double> same = baseline_pool();
  same.resize(10);
  gc::Row r = only_row(gc::compare_results(processes(baseline_pool(), "CPU A"), processes(same, "CPU B"), o));
  EXPECT_EQ(r.verdict, gc::Verdict::Same);  // another host CPU changes nothing: not host-bound
  EXPECT_EQ(r.fresh_processes, 10);
  EXPECT_FALSE(r.p_value.has_value());
  std::vector<double> slower = same;
  for (double& v : slower) v *= 1.06;
  r = only_row(gc::compare_results(processes(baseline_pool(), "CPU A", 20.0), processes(slower, "CPU A", 40.0), o));
  EXPECT_EQ(r.verdict, gc::Verdict::Regression);  // 6% past 5%; a slower host reference excuses nothing
  EXPECT_TRUE(r.fails_gate);
  o.fresh_not_gated = "shown, not gated: judged only against the base build's processes run beside this build's";
  r = only_row(gc::compare_results(processes(baseline_pool()), processes(slower), o));
  EXPECT_EQ(r.verdict, gc::Verdict::ReportOnly);
  EXPECT_EQ(r.measured, gc::Verdict::Regression);
  EXPECT_FALSE(r.fails_gate);
  EXPECT_EQ(r.note, o.fresh_not_gated);
  r = only_row(gc::compare_results(processes({1.0, 1.0, 1.0}), processes(slower), o));  // too few in the baseline
  EXPECT_EQ(r.verdict, gc::Verdict::ReportOnly);
  EXPECT_EQ(r.rule_why, "device time, a level a process");
}

// Ten fresh processes of an unchanged tree, one of them at the low level: the fastest holds.
TEST(FreshMinimum, OneProcessAtTheLowLevelHoldsTheLine) {
  const auto c = gc::compare_results(processes(baseline_pool()),
                                     processes({4.30, 4.27, 4.35, 3.47, 4.31, 4.29, 4.41, 4.26, 4.33, 4.38}),
                                     ten_processes_at(10));
  const gc::Row r = only_row(c);
  EXPECT_EQ(r.verdict, gc::Verdict::Same);
  EXPECT_FALSE(r.fails_gate);
  EXPECT_FALSE(r.p_value.has_value());  // no U test over two levels
  EXPECT_NEAR(*r.cur, 3470.0, 1e-6);    // ns
  EXPECT_EQ(*r.base, 3430.0);           // the pool's 6.7th percentile (rank 2 of 20): its low level
  EXPECT_EQ(r.fresh_processes, 10);
  EXPECT_EQ(r.base_processes, 20);
}

// launch_1.15x: 15% of a launch added to every launch moves every process, the fastest too.
TEST(FreshMinimum, ALaunchPathFifteenPercentSlowerIsARegression) {
  std::vector<double> slower{3.45, 4.30, 3.50, 4.28, 4.33, 3.48, 4.31, 4.36, 3.44, 4.29};
  for (double& v : slower) v *= 1.15;
  const gc::Row r = only_row(gc::compare_results(processes(baseline_pool()), processes(slower), ten_processes_at(10)));
  EXPECT_EQ(r.verdict, gc::Verdict::Regression);
  EXPECT_TRUE(r.fails_gate);
  EXPECT_GT(*r.change, 0.14);
  EXPECT_LT(*r.change, 0.18);
}

// All ten at the high level reads as a regression: the statistic's price, (1 - p)^10 of gates
// with p the share of processes at the low level (0.45 over 20: 0.25%); the confirmation's ten
// more processes must all land high too before the gate fails.
TEST(FreshMinimum, TenProcessesAllAtTheHighLevelReadAsARegression) {
  const gc::Row r = only_row(gc::compare_results(
      processes(baseline_pool()), processes({4.30, 4.27, 4.35, 4.24, 4.31, 4.29, 4.41, 4.26, 4.33, 4.38}),
      ten_processes_at(10)));
  EXPECT_EQ(r.verdict, gc::Verdict::Regression);
  EXPECT_NEAR(std::pow(11.0 / 20.0, 10), 0.0025, 0.0001);
}

// A host reference that ran twice as slow excuses nothing here: the fastest process already is
// the host at its best.
TEST(FreshMinimum, TheHostReferenceDoesNotExcuseTheFastest) {
  std::vector<double> slower = baseline_pool();
  slower.resize(10);
  for (double& v : slower) v *= 1.3;
  const gc::Row r = only_row(gc::compare_results(processes(baseline_pool(), "CPU A", 20.0),
                                                  processes(slower, "CPU A", 40.0), ten_processes_at(10)));
  EXPECT_EQ(r.verdict, gc::Verdict::Regression);
  EXPECT_TRUE(r.fails_gate);
}

TEST(FreshMinimum, TooFewProcessesIsShownNotGatedSayingSo) {
  // The stored baseline of 5 fresh processes, as recorded before the rule.
  const gc::Row r = only_row(gc::compare_results(processes({3.43, 4.28, 4.28, 4.37, 3.53}),
                                                  processes({4.30, 4.27, 4.35, 3.47, 4.31, 4.29, 4.41, 4.26, 4.33, 4.38}),
                                                  ten_processes_at(10)));
  EXPECT_EQ(r.verdict, gc::Verdict::ReportOnly);
  EXPECT_FALSE(r.fails_gate);
  EXPECT_EQ(r.measured, gc::Verdict::Skipped);
  EXPECT_EQ(r.fresh_processes, 10);
  EXPECT_EQ(r.base_processes, 5);
  EXPECT_FALSE(r.change.has_value());
  EXPECT_NE(r.note.find("the baseline holds 5 process figures, this run 10"), std::string::npos) << r.note;
  EXPECT_NE(r.note.find("re-record"), std::string::npos) << r.note;
  EXPECT_EQ(r.rule_why, "host CPU time, two levels between processes");
  // One process now (a gate whose fresh pass failed, or a plain run): the same.
  const gc::Row one = only_row(gc::compare_results(processes(baseline_pool()), processes({9.9}), ten_processes_at(10)));
  EXPECT_EQ(one.verdict, gc::Verdict::ReportOnly);
  EXPECT_FALSE(one.fails_gate);
  EXPECT_NE(one.note.find("measure it in N fresh processes (the gate does"), std::string::npos) << one.note;
  EXPECT_EQ(one.note.find("re-record"), std::string::npos) << one.note;
}

TEST(FreshMinimum, AnotherHostCpuIsShownNotGated) {
  std::vector<double> slower = baseline_pool();
  slower.resize(10);
  for (double& v : slower) v *= 1.5;
  const gc::Row r = only_row(gc::compare_results(processes(baseline_pool(), "CPU A"), processes(slower, "CPU B"),
                                                  ten_processes_at(10)));
  EXPECT_EQ(r.verdict, gc::Verdict::HostDiffers);
  EXPECT_FALSE(r.fails_gate);
}

// Without the base build run beside it (the gate says why in fresh_not_gated), the case is
// measured and compared as ever, and shown in the report-only section with the reason instead of
// gated: machines' levels differ by more than the limit (one process's cudaLaunchKernel 2.9-4.5 us
// on one H200 VM, 3.9-4.9 on another, 2026-12-03), and a whole machine's slower period can cover a
// gate (2026-12-05). Other host-bound rules are untouched.
TEST(FreshMinimum, WithoutTheBaseBuildItIsShownNotGated) {
  std::vector<double> slower = baseline_pool();
  slower.resize(10);
  for (double& v : slower) v *= 1.15;
  gc::CompareOptions o = ten_processes_at(10);
  o.fresh_not_gated = "shown, not gated: judged only against the base build's processes run beside this build's";
  const gc::Row r = only_row(gc::compare_results(processes(baseline_pool()), processes(slower), o));
  EXPECT_EQ(r.verdict, gc::Verdict::ReportOnly);
  EXPECT_EQ(r.measured, gc::Verdict::Regression);  // what it would have been, shown
  EXPECT_FALSE(r.fails_gate);
  ASSERT_TRUE(r.change.has_value());
  EXPECT_GT(*r.change, 0.14);
  EXPECT_EQ(r.note, o.fresh_not_gated);
  EXPECT_EQ(r.rule_why, "host CPU time, two levels between processes");
  EXPECT_EQ(r.fresh_processes, 10);
  // An unchanged one: the same section, measured as unchanged.
  std::vector<double> same = baseline_pool();
  same.resize(10);
  const gc::Row s = only_row(gc::compare_results(processes(baseline_pool()), processes(same), o));
  EXPECT_EQ(s.verdict, gc::Verdict::ReportOnly);
  EXPECT_EQ(s.measured, gc::Verdict::Same);
  // A host-bound case without "processes" is gated as before.
  auto t = gc::parse_thresholds(R"({"host_bound": [{"glob": "launch/host_*", "pct": 10, "why": "median of fresh processes"}]})",
                                "t.json");
  ASSERT_TRUE(t.ok()) << t.error().str();
  o.thresholds = *t;
  const gc::Row m = only_row(gc::compare_results(processes(baseline_pool()), processes(slower), o));
  EXPECT_NE(m.verdict, gc::Verdict::ReportOnly);
  EXPECT_EQ(m.note.find("shown, not gated"), std::string::npos) << m.note;
}

// ---- the median pair (the base build's processes run beside this build's) -------------------

TEST(MedianPair, TheMedianOfTheNeighbouringPairs) {
  // Run in the order base 10, this 12, base 20, this 19, base 10, this 10: the pairs (10, 12),
  // (20, 12), (20, 19), (10, 19), (10, 10), ratios 1.2 0.6 0.95 1.9 1.0: the middle one is 1.0,
  // shown as its own two figures.
  const auto f = gc::judge_median_pair({10, 20, 10}, {12, 19, 10}, 3, true);
  ASSERT_TRUE(f.base && f.cur) << f.why_not;
  EXPECT_DOUBLE_EQ(*f.base, 10.0);
  EXPECT_DOUBLE_EQ(*f.cur, 10.0);
  // Higher is better: worse is base/cur, 0.83 1.67 1.05 0.53 1.0: the same middle pair.
  const auto h = gc::judge_median_pair({10, 20, 10}, {12, 19, 10}, 3, false);
  ASSERT_TRUE(h.base && h.cur);
  EXPECT_DOUBLE_EQ(*h.cur / *h.base, 1.0);
  // Ratios 1.1 2.75 1.0 0.4 1.2: 1.1, base 10 and this 11.
  const auto g = gc::judge_median_pair({10, 4, 10}, {11, 4, 12}, 3, true);
  ASSERT_TRUE(g.base && g.cur);
  EXPECT_DOUBLE_EQ(*g.base, 10.0);
  EXPECT_DOUBLE_EQ(*g.cur, 11.0);
  // A lucky first base process (3.0 against 4.0 everywhere else) is one pair of 7: no change.
  const auto lucky = gc::judge_median_pair({3, 4, 4, 4}, {4, 4, 4, 4}, 4, true);
  ASSERT_TRUE(lucky.base && lucky.cur);
  EXPECT_DOUBLE_EQ(*lucky.cur / *lucky.base, 1.0);
  // More processes than n: all of them count (six pairs at 2, three at 1, of 9).
  const auto more = gc::judge_median_pair({1, 1, 1, 1, 1}, {2, 2, 2, 1, 1}, 3, true);
  ASSERT_TRUE(more.cur);
  EXPECT_DOUBLE_EQ(*more.cur, 2.0);
}

TEST(MedianPair, RefusesUnevenShortOrNonPositiveSides) {
  const auto uneven = gc::judge_median_pair({1, 1, 1}, {1, 1}, 2, true);
  EXPECT_FALSE(uneven.base || uneven.cur);
  EXPECT_NE(uneven.why_not.find("the base side holds 3 process figures, this build 2"), std::string::npos)
      << uneven.why_not;
  const auto shorter = gc::judge_median_pair({1, 1}, {1, 1}, 3, true);
  EXPECT_FALSE(shorter.base);
  EXPECT_NE(shorter.why_not.find("judged against 3 fresh processes of the base build"), std::string::npos)
      << shorter.why_not;
  const auto empty = gc::judge_median_pair({}, {}, 1, true);
  EXPECT_FALSE(empty.base);
  for (double bad : {std::nan(""), 0.0, -1.0, HUGE_VAL}) {
    const auto f = gc::judge_median_pair({1, bad, 1}, {1, 1, 1}, 3, true);
    EXPECT_FALSE(f.base || f.cur) << bad;
    EXPECT_EQ(f.why_not, "a process figure that is not a positive number") << bad;
    EXPECT_FALSE(gc::judge_median_pair({1, 1, 1}, {1, 1, bad}, 3, true).cur) << bad;
  }
}

namespace {
gc::Row paired(const std::vector<double>& base, const std::vector<double>& cur, double pct = 10) {
  gc::CompareOptions o = ten_processes_at(pct);
  o.paired_processes = true;
  return only_row(gc::compare_results(processes(base), processes(cur), o));
}
}  // namespace

// Both builds' processes on the two levels, a slow stretch covering processes 4-7 of each (1.3x,
// both builds): no change (+0.2%); the fastest against the fastest would read the base's lucky
// first process (3.0) against this build's best (3.43), +14%.
TEST(MedianPair, LevelsAndASlowStretchFallOnBothMembers) {
  const std::vector<double> base{3.00, 4.30, 3.48, 4.28 * 1.3, 3.45 * 1.3, 4.33 * 1.3, 3.50 * 1.3, 4.29, 3.47, 4.31};
  const std::vector<double> cur{3.46, 4.31, 3.43, 4.30 * 1.3, 3.47 * 1.3, 4.29 * 1.3, 3.49 * 1.3, 4.33, 3.44, 4.28};
  const gc::Row r = paired(base, cur);
  EXPECT_EQ(r.verdict, gc::Verdict::Same);
  EXPECT_FALSE(r.fails_gate);
  EXPECT_TRUE(r.paired);
  ASSERT_TRUE(r.change.has_value());
  EXPECT_LT(std::fabs(*r.change), 0.01);
  gc::CompareOptions o = ten_processes_at(10);  // not paired: the fastest of each
  const gc::Row f = only_row(gc::compare_results(processes(base), processes(cur), o));
  EXPECT_EQ(f.verdict, gc::Verdict::Regression);
  EXPECT_FALSE(f.paired);
}

// launch_1.15x: every process of this build 15% slower than its pair's base member.
TEST(MedianPair, ALaunchPathFifteenPercentSlowerFails) {
  const std::vector<double> base{3.45, 4.30, 3.50, 4.28, 4.33, 3.48, 4.31, 4.36, 3.44, 4.29};
  std::vector<double> cur = base;
  for (double& v : cur) v *= 1.15;
  cur[0] = 3.40;  // one lucky process of this build changes nothing
  const gc::Row r = paired(base, cur);
  EXPECT_EQ(r.verdict, gc::Verdict::Regression);
  EXPECT_TRUE(r.fails_gate);
  EXPECT_NEAR(*r.change, 0.15, 1e-9);
  // A base process short: shown, not gated, with no advice to re-record anything.
  std::vector<double> shorter = base;
  shorter.pop_back();
  const gc::Row s = paired(shorter, cur);
  EXPECT_EQ(s.verdict, gc::Verdict::ReportOnly);
  EXPECT_FALSE(s.fails_gate);
  EXPECT_EQ(s.note, "judged against 10 fresh processes of the base build run in turn with 10 of this one: the base "
                    "side holds 9 process figures, this build 10: shown, not gated");
}

// 15% faster than the base build: an improvement, and no "baseline stale" line (the stored
// baseline did not judge it).
TEST(MedianPair, FasterThanTheBaseBuildSaysNothingOfTheStoredBaseline) {
  const std::vector<double> base{3.45, 4.30, 3.50, 4.28, 4.33, 3.48, 4.31, 4.36, 3.44, 4.29};
  std::vector<double> cur = base;
  for (double& v : cur) v /= 1.15;
  gc::CompareOptions o = ten_processes_at(10);
  o.paired_processes = true;
  const gc::Comparison c = gc::compare_results(processes(base), processes(cur), o);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].verdict, gc::Verdict::Improvement);
  EXPECT_FALSE(c.stale.has_value());
}

// The gates of 2026-12-05 on two fresh H200 VMs, every case measured in 10 fresh processes of the
// base build and 10 of this one in turn (the same binaries: the unchanged tree against itself),
// judged again here by the median neighbouring pair: the figures thresholds.json's entries quote.
// Each A/A change stays under half its limit (10% host-bound, 5% for the held eager chain and
// the bidirectional copy); the fastest against the fastest, on the same processes, read +13.9%
// (pageable H2D) in one of them. The drill launch_1.15x (a host spin of 15% of a launch in
// every eager launch) reads past 10% on the launch path's cases, first pass and confirmation.
TEST(MedianPair, TheH200GatesOfTheUnchangedTreeAndTheLaunchDrill) {
  const auto doc = nlohmann::json::parse(
      gpucheck::testutil::slurp(std::string(GPUCHECK_COMPARE_FIXTURES) + "/paired_h200_2026-12-05.json"));
  const auto change = [](const nlohmann::json& c, bool paired) {
    const auto base = c.at("base").get<std::vector<double>>();
    const auto cur = c.at("cur").get<std::vector<double>>();
    const auto f = paired ? gc::judge_median_pair(base, cur, 10, true) : gc::judge_fresh_minimum(base, cur, 10, true);
    if (!f.base || !f.cur) throw std::runtime_error(f.why_not);
    return *f.cur / *f.base - 1.0;
  };
  const std::set<std::string> half_of_five{"launch/eager_held/empty/100", "launch/eager_held/small/100",
                                           "pcie/bidir/pinned/256MiB"};
  int gates = 0;
  double fastest_worst = 0.0;
  std::set<std::string> machines;
  for (const auto& [uuid, runs] : doc.at("machines").items()) {
    for (const auto& [run, cases] : runs.items()) {
      if (!run.starts_with("gate-")) continue;
      ++gates;
      machines.insert(uuid);
      ASSERT_EQ(cases.size(), 10u) << uuid << " " << run;
      for (const auto& [name, c] : cases.items()) {
        const double half = half_of_five.count(name) != 0 ? 0.025 : 0.05;
        EXPECT_LT(std::fabs(change(c, true)), half) << uuid << " " << run << " " << name;
        fastest_worst = std::max(fastest_worst, change(c, false));
      }
    }
    if (!runs.contains("drills/launch_1.15x")) continue;
    for (const char* run : {"drills/launch_1.15x", "drills/launch_1.15x/confirm"})
      for (const char* name : {"launch/eager/empty/100", "launch/host_launch/empty/1"})
        EXPECT_GT(change(runs.at(run).at(name), true), 0.10) << run << " " << name;
    // The drill's spin is in the empty kernel's launch only: the small kernel's chain holds.
    EXPECT_LT(std::fabs(change(runs.at("drills/launch_1.15x").at("launch/eager/small/100"), true)), 0.05);
  }
  EXPECT_EQ(gates, 8);
  EXPECT_EQ(machines.size(), 2u);
  EXPECT_GT(fastest_worst, 0.10);  // the fastest of each side would have failed an unchanged gate
}
