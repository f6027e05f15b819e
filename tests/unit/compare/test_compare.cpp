// Compare rules: the threshold boundary, direction, units, noise and significance, missing,
// new and errored benchmarks, glob overrides, context differences, ordering.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules/compare.hpp"
#include "results/results.hpp"

namespace gc = gpucheck::compare;

namespace {

struct B {
  B(std::string n, std::vector<double> t, std::string u = "ms", std::string c = "", std::string s = "")
      : name(std::move(n)), times(std::move(t)), unit(std::move(u)), counters(std::move(c)), state(std::move(s)) {}
  std::string name;
  std::vector<double> times;  // one entry: a single run; more: repetitions
  std::string unit;
  std::string counters;       // extra JSON fields, e.g. R"("TFLOPS": 10)"
  std::string state;          // "", "error", "skip"
};

std::string doc(const std::vector<B>& bs, const std::string& ctx = R"("gpu_name": "NVIDIA H200", "driver_version": "560.35.03")") {
  std::string s = "{\"context\": {" + ctx + "}, \"benchmarks\": [";
  bool first = true;
  auto add = [&](const std::string& e) {
    s += (first ? "" : ",") + e;
    first = false;
  };
  for (const B& b : bs) {
    const std::string extra = b.counters.empty() ? "" : ", " + b.counters;
    if (b.state == "error") {
      add("{\"name\": \"" + b.name + "\", \"error_occurred\": true, \"error_message\": \"boom\", \"real_time\": 0, \"time_unit\": \"ns\"}");
      continue;
    }
    if (b.state == "skip") {
      add("{\"name\": \"" + b.name + "\", \"skipped\": true, \"skip_message\": \"unsupported\", \"real_time\": 0, \"time_unit\": \"ns\"}");
      continue;
    }
    for (std::size_t i = 0; i < b.times.size(); ++i) {
      add("{\"name\": \"" + b.name + "/manual_time\", \"run_name\": \"" + b.name + "/manual_time\", \"run_type\": \"iteration\", " +
          "\"repetitions\": " + std::to_string(b.times.size()) + ", \"repetition_index\": " + std::to_string(i) +
          ", \"real_time\": " + std::to_string(b.times[i]) + ", \"time_unit\": \"" + b.unit + "\"" + extra + "}");
    }
  }
  return s + "]}";
}

gc::Results res(const std::vector<B>& bs, const std::string& src = "x.json") {
  auto r = gc::parse_results(doc(bs), src);
  if (!r) throw std::runtime_error(r.error().str());
  return std::move(*r);
}

gc::Comparison cmp(const std::vector<B>& base, const std::vector<B>& cur, gc::CompareOptions o = {}) {
  return gc::compare_results(res(base, "base.json"), res(cur, "cur.json"), o);
}

const gc::Row& row(const gc::Comparison& c, const std::string& name) {
  for (const auto& r : c.rows)
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}

}  // namespace

TEST(Compare, NinePercentSlowerPasses) {
  auto c = cmp({{"m/a/fp32/1", {1.0}}}, {{"m/a/fp32/1", {1.09}}});
  EXPECT_EQ(row(c, "m/a/fp32/1").verdict, gc::Verdict::Same);
  EXPECT_FALSE(c.failed());
}

TEST(Compare, ElevenPercentSlowerFails) {
  auto c = cmp({{"m/a/fp32/1", {1.0}}}, {{"m/a/fp32/1", {1.11}}});
  EXPECT_EQ(row(c, "m/a/fp32/1").verdict, gc::Verdict::Regression);
  EXPECT_NEAR(*row(c, "m/a/fp32/1").change, 0.11, 1e-12);
  EXPECT_TRUE(c.failed());
}

TEST(Compare, ExactlyAtTheThresholdPasses) {
  // 0.33 / 0.30 and 1.1 / 1.0 are not exactly 1.1 in binary; the rule still reads "exactly 10%".
  for (const auto& [b, k] : std::vector<std::pair<double, double>>{{0.30, 0.33}, {1.0, 1.1}, {3.0, 3.3}, {0.7, 0.77}}) {
    auto c = cmp({{"m/a/fp32/1", {b}}}, {{"m/a/fp32/1", {k}}});
    EXPECT_EQ(row(c, "m/a/fp32/1").verdict, gc::Verdict::Same) << b << " -> " << k;
    EXPECT_FALSE(c.failed());
  }
}

TEST(Compare, JustPastTheThresholdFails) {
  auto c = cmp({{"m/a/fp32/1", {1.0}}}, {{"m/a/fp32/1", {1.1001}}});
  EXPECT_EQ(row(c, "m/a/fp32/1").verdict, gc::Verdict::Regression);
}

TEST(Compare, MillisecondsAgainstMicrosecondsIsNoChange) {
  auto c = cmp({{"m/a/fp32/1", {1.5}, "ms"}}, {{"m/a/fp32/1", {1500.0}, "us"}});
  EXPECT_EQ(row(c, "m/a/fp32/1").verdict, gc::Verdict::Same);
  EXPECT_DOUBLE_EQ(*row(c, "m/a/fp32/1").change, 0.0);
  auto s = cmp({{"m/a/fp32/1", {2.0}, "s"}}, {{"m/a/fp32/1", {2e9}, "ns"}});
  EXPECT_DOUBLE_EQ(*row(s, "m/a/fp32/1").change, 0.0);
}

TEST(Compare, ImprovementsNeverFail) {
  auto c = cmp({{"m/a/fp32/1", {1.0}}}, {{"m/a/fp32/1", {0.5}}});
  EXPECT_EQ(row(c, "m/a/fp32/1").verdict, gc::Verdict::Improvement);
  EXPECT_FALSE(c.failed());
}

TEST(Compare, RateCounterHigherIsBetter) {
  gc::CompareOptions o;
  o.metric = "TFLOPS";
  o.direction = *gc::direction_for("TFLOPS");
  auto worse = cmp({{"m/a/fp32/1", {1.0}, "ms", R"("TFLOPS": 100)"}}, {{"m/a/fp32/1", {1.0}, "ms", R"("TFLOPS": 89)"}}, o);
  EXPECT_EQ(row(worse, "m/a/fp32/1").verdict, gc::Verdict::Regression);
  auto better = cmp({{"m/a/fp32/1", {1.0}, "ms", R"("TFLOPS": 100)"}}, {{"m/a/fp32/1", {1.0}, "ms", R"("TFLOPS": 130)"}}, o);
  EXPECT_EQ(row(better, "m/a/fp32/1").verdict, gc::Verdict::Improvement);
}

TEST(Compare, CurrentLosingTheMetricIsMissing) {
  // The baseline carries TFLOPS and current does not: no figure to compare is not a pass.
  gc::CompareOptions o;
  o.metric = "TFLOPS";
  o.direction = *gc::direction_for("TFLOPS");
  auto lost = cmp({{"m/a/fp32/1", {1.0}, "ms", R"("TFLOPS": 100)"}}, {{"m/a/fp32/1", {1.0}, "ms", R"("GBps": 1)"}}, o);
  EXPECT_EQ(row(lost, "m/a/fp32/1").verdict, gc::Verdict::Missing);
  EXPECT_TRUE(lost.failed());
  o.allow_missing = true;
  auto allowed = cmp({{"m/a/fp32/1", {1.0}, "ms", R"("TFLOPS": 100)"}}, {{"m/a/fp32/1", {1.0}, "ms", R"("GBps": 1)"}}, o);
  EXPECT_FALSE(allowed.failed());
  // Neither side has it (a launch case in a TFLOPS compare): not compared, not failed.
  auto neither = cmp({{"m/a/fp32/1", {1.0}, "ms", R"("TFLOPS": 100)"}, {"l/a/x/1", {1.0}, "ms", R"("GBps": 1)"}},
                     {{"m/a/fp32/1", {1.0}, "ms", R"("TFLOPS": 100)"}, {"l/a/x/1", {1.0}, "ms", R"("GBps": 1)"}}, o);
  EXPECT_EQ(row(neither, "l/a/x/1").verdict, gc::Verdict::NoMetric);
  EXPECT_FALSE(neither.failed());
  // Only current has it: new, not a failure.
  auto gained = cmp({{"m/a/fp32/1", {1.0}, "ms", R"("GBps": 1)"}}, {{"m/a/fp32/1", {1.0}, "ms", R"("TFLOPS": 100)"}}, o);
  EXPECT_EQ(row(gained, "m/a/fp32/1").verdict, gc::Verdict::New);
  EXPECT_FALSE(gained.failed());
}

TEST(Compare, MetricNoBenchmarkCarriesIsAnError) {
  const auto base = res({{"m/a/fp32/1", {1.0}, "ms", R"("TFLOPS": 100)"}});
  const auto cur = res({{"m/a/fp32/1", {1.0}, "ms", R"("TFLOPS": 90)"}});
  EXPECT_TRUE(gc::check_metric(base, cur, "TFLOPS"));
  EXPECT_TRUE(gc::check_metric(base, cur, "real_time"));
  const auto bad = gc::check_metric(base, cur, "TFLOP");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where, "--metric");
  EXPECT_NE(bad.error().message.find("did you mean TFLOPS?"), std::string::npos) << bad.error().message;
  const auto far = gc::check_metric(base, cur, "wrong_elements");
  ASSERT_FALSE(far);
  EXPECT_NE(far.error().message.find("counters there: TFLOPS"), std::string::npos) << far.error().message;
}

TEST(Compare, LatencyCounterLowerIsBetter) {
  gc::CompareOptions o;
  o.metric = "us_per_launch";
  o.direction = *gc::direction_for(o.metric);
  auto c = cmp({{"launch/graph/empty/100", {1.0}, "ms", R"("us_per_launch": 2.0)"}},
               {{"launch/graph/empty/100", {1.0}, "ms", R"("us_per_launch": 2.3)"}}, o);
  EXPECT_EQ(row(c, "launch/graph/empty/100").verdict, gc::Verdict::Regression);
}

TEST(Compare, DirectionByName) {
  using gc::Direction;
  EXPECT_EQ(gc::direction_for("real_time"), Direction::LowerIsBetter);
  EXPECT_EQ(gc::direction_for("us_per_launch"), Direction::LowerIsBetter);
  EXPECT_EQ(gc::direction_for("TFLOPS"), Direction::HigherIsBetter);
  EXPECT_EQ(gc::direction_for("GBps"), Direction::HigherIsBetter);
  EXPECT_EQ(gc::direction_for("busbw_GBps"), Direction::HigherIsBetter);
  EXPECT_EQ(gc::direction_for("pct_of_peak"), Direction::HigherIsBetter);
  EXPECT_EQ(gc::direction_for("items_per_second"), Direction::HigherIsBetter);
  EXPECT_FALSE(gc::direction_for("wrong_elements").has_value());
}

TEST(Compare, GlobOverrideLoosensLaunch) {
  gc::CompareOptions o;
  o.thresholds.overrides.push_back({"launch/*", 15.0, "launch latency is noisy"});
  auto c = cmp({{"launch/eager/empty/100", {1.0}}, {"matmul/a/fp32/1", {1.0}}},
               {{"launch/eager/empty/100", {1.12}}, {"matmul/a/fp32/1", {1.12}}}, o);
  EXPECT_EQ(row(c, "launch/eager/empty/100").verdict, gc::Verdict::Same);
  EXPECT_DOUBLE_EQ(row(c, "launch/eager/empty/100").threshold_pct, 15.0);
  EXPECT_EQ(row(c, "matmul/a/fp32/1").verdict, gc::Verdict::Regression);
}

TEST(Compare, SignificantRepeatsRegress) {
  auto c = cmp({{"m/a/fp32/1", {1.00, 1.01, 0.99, 1.00, 1.02}}}, {{"m/a/fp32/1", {1.20, 1.21, 1.19, 1.22, 1.20}}});
  const gc::Row r = row(c, "m/a/fp32/1");  // a copy: g++ 13 flags a reference here (-Wdangling-reference)
  EXPECT_EQ(r.verdict, gc::Verdict::Regression);
  ASSERT_TRUE(r.p_value);
  EXPECT_LT(*r.p_value, 0.05);
}

TEST(Compare, ChangeInsideTheNoiseIsUnconfirmedAndNoisy) {
  // Medians 1.0 -> 1.2 but the samples overlap completely: not a regression, flagged noisy.
  auto c = cmp({{"m/a/fp32/1", {0.6, 1.0, 1.4, 0.8, 1.6}}}, {{"m/a/fp32/1", {0.7, 1.2, 1.5, 0.9, 1.3}}});
  const gc::Row r = row(c, "m/a/fp32/1");
  EXPECT_EQ(r.verdict, gc::Verdict::Unconfirmed);
  EXPECT_TRUE(r.noisy);
  ASSERT_TRUE(r.p_value);
  EXPECT_GE(*r.p_value, 0.05);
  EXPECT_FALSE(c.failed());
}

TEST(Compare, TwoRepetitionsAreTooFewForTheTest) {
  auto c = cmp({{"m/a/fp32/1", {1.0, 1.01}}}, {{"m/a/fp32/1", {1.2, 1.21}}});
  EXPECT_FALSE(row(c, "m/a/fp32/1").p_value.has_value());
  EXPECT_EQ(row(c, "m/a/fp32/1").verdict, gc::Verdict::Regression);
}

TEST(Compare, NoisyFlagAtHalfTheThreshold) {
  // cv of {1, 1.1, 0.9} is 10% > 5% (half of 10%).
  auto c = cmp({{"m/a/fp32/1", {1.0, 1.1, 0.9}}}, {{"m/a/fp32/1", {1.0, 1.0, 1.0}}});
  EXPECT_TRUE(row(c, "m/a/fp32/1").noisy);
  auto quiet = cmp({{"m/a/fp32/1", {1.0, 1.01, 0.99}}}, {{"m/a/fp32/1", {1.0, 1.0, 1.0}}});
  EXPECT_FALSE(row(quiet, "m/a/fp32/1").noisy);
}

TEST(Compare, MissingFailsUnlessAllowed) {
  auto c = cmp({{"a/a/fp32/1", {1.0}}, {"b/b/fp32/1", {1.0}}}, {{"a/a/fp32/1", {1.0}}});
  EXPECT_EQ(row(c, "b/b/fp32/1").verdict, gc::Verdict::Missing);
  EXPECT_TRUE(c.failed());
  gc::CompareOptions o;
  o.allow_missing = true;
  auto allowed = cmp({{"a/a/fp32/1", {1.0}}, {"b/b/fp32/1", {1.0}}}, {{"a/a/fp32/1", {1.0}}}, o);
  EXPECT_EQ(row(allowed, "b/b/fp32/1").verdict, gc::Verdict::Missing);
  EXPECT_FALSE(allowed.failed());
}

TEST(Compare, NewIsListedAndPasses) {
  auto c = cmp({{"a/a/fp32/1", {1.0}}}, {{"a/a/fp32/1", {1.0}}, {"n/n/fp32/1", {1.0}}});
  EXPECT_EQ(row(c, "n/n/fp32/1").verdict, gc::Verdict::New);
  EXPECT_EQ(c.counts[gc::Verdict::New], 1);
  EXPECT_FALSE(c.failed());
}

TEST(Compare, ErroredOrSkippedRunsAreNotCompared) {
  auto c = cmp({{"a/a/fp32/1", {1.0}}, {"s/s/fp8/1", {}, "ms", "", "skip"}, {"k/k/fp32/1", {1.0}}},
               {{"a/a/fp32/1", {}, "ms", "", "error"}, {"s/s/fp8/1", {}, "ms", "", "skip"}, {"k/k/fp32/1", {}, "ms", "", "skip"}});
  EXPECT_EQ(row(c, "a/a/fp32/1").verdict, gc::Verdict::Errored);
  EXPECT_TRUE(row(c, "a/a/fp32/1").fails_gate);
  EXPECT_EQ(row(c, "s/s/fp8/1").verdict, gc::Verdict::Skipped);
  EXPECT_FALSE(row(c, "s/s/fp8/1").fails_gate);
  EXPECT_EQ(row(c, "k/k/fp32/1").verdict, gc::Verdict::Missing);  // the baseline had a figure
  EXPECT_NE(row(c, "k/k/fp32/1").note.find("unsupported"), std::string::npos);
}

TEST(Compare, RegressionsSortFirstWorstFirst) {
  auto c = cmp({{"a/a/fp32/1", {1.0}}, {"b/b/fp32/1", {1.0}}, {"c/c/fp32/1", {1.0}}, {"d/d/fp32/1", {1.0}}},
               {{"a/a/fp32/1", {0.5}}, {"b/b/fp32/1", {1.2}}, {"c/c/fp32/1", {1.5}}});
  ASSERT_EQ(c.rows.size(), 4u);
  EXPECT_EQ(c.rows[0].name, "c/c/fp32/1");
  EXPECT_EQ(c.rows[1].name, "b/b/fp32/1");
  EXPECT_EQ(c.rows[2].verdict, gc::Verdict::Missing);
  EXPECT_EQ(c.rows[3].verdict, gc::Verdict::Improvement);
  EXPECT_EQ(c.counts[gc::Verdict::Regression], 2);
}

TEST(Compare, ContextDifferencesAreListed) {
  auto a = gc::parse_results(doc({{"a/a/fp32/1", {1.0}}}, R"("gpu_name": "NVIDIA H200", "driver_version": "550.54", "host_name": "n1", "throttle_reasons": "none")"), "a");
  auto b = gc::parse_results(doc({{"a/a/fp32/1", {1.0}}}, R"("gpu_name": "NVIDIA H200", "driver_version": "560.35", "host_name": "n1", "throttle_reasons": "sw_thermal", "cudnn_version": "9.5.1")"), "b");
  ASSERT_TRUE(a && b);
  const auto d = gc::diff_context(*a, *b);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].key, "driver_version");
  EXPECT_EQ(d[0].label, "driver");
  EXPECT_EQ(d[0].base, "550.54");
  EXPECT_EQ(d[0].cur, "560.35");
  EXPECT_EQ(d[1].key, "cudnn_version");
  EXPECT_EQ(d[1].base, "unknown");
  EXPECT_EQ(d[2].key, "throttle_reasons");
}

// The timing environment each side recorded (gpucheck_environment): shown, never failed on.
TEST(Compare, EnvironmentThatDiffersFromTheBaselineIsShownNotFailed) {
  auto doc = [](const char* env) {
    std::string ctx = R"("gpu_name": "NVIDIA H200")";
    if (env != nullptr) ctx += std::string(R"(, "gpucheck_environment": ")") + env + "\"";
    return gc::parse_results(R"({"context": {)" + ctx + R"(}, "benchmarks": [
        {"name": "memory/copy_kernel/u8/2GiB", "real_time": 1.0, "time_unit": "ms"}]})", "r.json");
  };
  const auto none = doc(""), blocking = doc("CUDA_LAUNCH_BLOCKING=1; NCCL_ALGO=Ring"), old = doc(nullptr);
  const auto ring = doc("NCCL_ALGO=Tree");
  ASSERT_TRUE(none && blocking && old && ring);
  gc::CompareOptions o;
  const auto c = gc::compare_results(*none, *blocking, o);
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_NE(c.warnings[0].find("CUDA_LAUNCH_BLOCKING unset -> =1"), std::string::npos) << c.warnings[0];
  EXPECT_NE(c.warnings[1].find("NCCL_ALGO unset -> =Ring"), std::string::npos) << c.warnings[1];
  EXPECT_FALSE(c.failed());
  EXPECT_EQ(gc::compare_results(*ring, *blocking, o).warnings.size(), 2u);  // CUDA_LAUNCH_BLOCKING, NCCL_ALGO
  EXPECT_TRUE(gc::compare_results(*blocking, *blocking, o).warnings.empty());
  // A baseline from before the record: said, not failed on; nothing when this run had none set.
  const auto unrecorded = gc::compare_results(*old, *blocking, o);
  ASSERT_EQ(unrecorded.warnings.size(), 1u);
  EXPECT_NE(unrecorded.warnings[0].find("the baseline records no environment"), std::string::npos);
  EXPECT_FALSE(unrecorded.failed());
  EXPECT_TRUE(gc::compare_results(*old, *none, o).warnings.empty());
  EXPECT_TRUE(gc::compare_results(*old, *old, o).warnings.empty());
}

// The gate says which families lost their binary; the rules judge those cases Errored with the
// binary's reason, and nothing else: another family's lost case stays Missing, a family whose
// name merely starts the same is not blamed, and the counts are the rows' verdicts.
TEST(Compare, ACaseOfAnErroredFamilyIsErroredWithItsBinarysReason) {
  gc::CompareOptions o;
  o.errored_families = {{"matmul", "bench_matmul", "crashed (signal 11)"}};
  const std::vector<B> base{{"matmul/a/fp32/1", {1.0}}, {"matmul/b/fp32/1", {1.0}}, {"matmul_sparse/a/fp32/1", {1.0}},
                            {"conv/x/fp32/1", {1.0}}, {"conv/y/fp32/1", {1.0}}};
  const auto c = cmp(base, {{"conv/x/fp32/1", {1.0}}}, o);
  for (const char* n : {"matmul/a/fp32/1", "matmul/b/fp32/1"}) {
    EXPECT_EQ(row(c, n).verdict, gc::Verdict::Errored) << n;
    EXPECT_EQ(row(c, n).note, "bench_matmul ERRORED: crashed (signal 11)") << n;
    EXPECT_TRUE(row(c, n).fails_gate) << n;
    EXPECT_FALSE(row(c, n).cur) << n;
  }
  EXPECT_EQ(row(c, "matmul_sparse/a/fp32/1").verdict, gc::Verdict::Missing);
  EXPECT_EQ(row(c, "conv/y/fp32/1").verdict, gc::Verdict::Missing);
  EXPECT_EQ(row(c, "conv/y/fp32/1").note, "not in current results");
  EXPECT_EQ(row(c, "conv/x/fp32/1").verdict, gc::Verdict::Same);
  EXPECT_EQ(c.counts[gc::Verdict::Errored], 2);
  EXPECT_EQ(c.counts[gc::Verdict::Missing], 2);
  EXPECT_EQ(c.counts[gc::Verdict::Same], 1);
  EXPECT_EQ(c.counts.of, gc::counts_of(c.rows).of);
  int tally = 0;
  for (const auto& r : c.rows) tally += r.verdict == gc::Verdict::Errored ? 1 : 0;
  EXPECT_EQ(tally, c.counts[gc::Verdict::Errored]);
  EXPECT_TRUE(c.failed());

  // Allowed missing figures: an errored family's cases no longer fail either (same gate effect).
  o.allow_missing = true;
  const auto allowed = cmp(base, {{"conv/x/fp32/1", {1.0}}}, o);
  EXPECT_EQ(row(allowed, "matmul/a/fp32/1").verdict, gc::Verdict::Errored);
  EXPECT_FALSE(row(allowed, "matmul/a/fp32/1").fails_gate);
  EXPECT_FALSE(allowed.failed());

  // Without the gate's word, the same cases are only missing.
  const auto plain = cmp(base, {{"conv/x/fp32/1", {1.0}}});
  EXPECT_EQ(row(plain, "matmul/a/fp32/1").verdict, gc::Verdict::Missing);
  EXPECT_EQ(plain.counts[gc::Verdict::Errored], 0);
  EXPECT_EQ(plain.counts[gc::Verdict::Missing], 4);
}

// A case the errored family still reported (another binary's, or a figure that exists) is
// judged on its figure: only a case with no figure is the binary's error.
TEST(Compare, AnErroredFamilyBlamesOnlyCasesWithoutAFigure) {
  gc::CompareOptions o;
  o.errored_families = {{"matmul", "bench_matmul", "timed out after 300 s"}};
  const auto c = cmp({{"matmul/a/fp32/1", {1.0}}, {"matmul/b/fp32/1", {1.0}}},
                     {{"matmul/a/fp32/1", {1.5}}}, o);
  EXPECT_EQ(row(c, "matmul/a/fp32/1").verdict, gc::Verdict::Regression);
  EXPECT_EQ(row(c, "matmul/b/fp32/1").verdict, gc::Verdict::Errored);
  EXPECT_EQ(c.counts[gc::Verdict::Regression], 1);
  EXPECT_EQ(c.counts[gc::Verdict::Errored], 1);
}

// 30,000 rows are judged on two threads (compare.cpp's kParallelRows): every row lands at its own
// name with its own verdict, in both halves, and the order is the serial one's.
TEST(Compare, ALargeComparisonJudgedOnTwoThreadsKeepsEveryRow) {
  std::vector<B> base, cur;
  constexpr int n = 30000;
  for (int i = 0; i < n; ++i) {
    const std::string name = "m/a/fp32/" + std::to_string(i);
    base.push_back({name, {100.0}});
    // a 20% regression at each thousandth row, a new case at the end, one case missing
    if (i != 7) cur.push_back({name, {i % 1000 == 0 ? 120.0 : 100.0}});
  }
  cur.push_back({"m/a/fp32/new", {1.0}});
  const auto c = cmp(base, cur);
  ASSERT_EQ(c.rows.size(), static_cast<std::size_t>(n + 1));
  EXPECT_EQ(c.counts[gc::Verdict::Regression], n / 1000);
  EXPECT_EQ(row(c, "m/a/fp32/0").verdict, gc::Verdict::Regression);
  EXPECT_EQ(row(c, "m/a/fp32/29000").verdict, gc::Verdict::Regression);
  EXPECT_EQ(row(c, "m/a/fp32/7").verdict, gc::Verdict::Missing);
  EXPECT_EQ(row(c, "m/a/fp32/new").verdict, gc::Verdict::New);
  EXPECT_EQ(row(c, "m/a/fp32/29999").verdict, gc::Verdict::Same);
  EXPECT_EQ(c.rows.front().verdict, gc::Verdict::Regression);  // worst first, as before
}
