// A case's method (its way of measuring, the counter "method" the binaries write per case): two
// sides that measured a case differently are not compared (verdict MethodChanged), never a pass
// or a fail, and a file without the field is method 1. And the precision counters beside a
// regression (explain_case).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "history_fixture.hpp"
#include "history/command.hpp"
#include "report/render.hpp"
#include "rules/explain.hpp"
#include "results/results.hpp"
#include "rules/compare.hpp"

namespace gc = gpucheck::compare;

namespace method_test {

// One case: its name, its time per repetition (us) and its method (nullopt: no counter).
struct Case {
  std::string name;
  std::vector<double> us;
  std::optional<std::string> method;  // the counter's JSON value text: "1", "2", "1.5"
};

gc::Results results_of(const std::vector<Case>& cases, const std::string& src) {
  std::string s = R"({"context": {"gpu_name": "NVIDIA H200", "host_cpu": "Xeon"}, "benchmarks": [)";
  bool first = true;
  for (const Case& c : cases)
    for (std::size_t i = 0; i < c.us.size(); ++i) {
      s += std::string(first ? "" : ",") + R"({"name": ")" + c.name + R"(/manual_time", "run_name": ")" + c.name +
           R"(/manual_time", "run_type": "iteration", "repetitions": )" + std::to_string(c.us.size()) +
           R"(, "repetition_index": )" + std::to_string(i) + R"(, "real_time": )" + std::to_string(c.us[i]) +
           R"(, "time_unit": "us", "TFLOPS": 100)" + (c.method ? R"(, "method": )" + *c.method : std::string()) + "}";
      first = false;
    }
  auto r = gc::parse_results(s + "]}", src);
  if (!r) throw std::runtime_error(r.error().str());
  return std::move(*r);
}

gc::Comparison compare(const std::vector<Case>& base, const std::vector<Case>& cur, gc::CompareOptions o = {}) {
  return gc::compare_results(results_of(base, "base.json"), results_of(cur, "cur.json"), o);
}

const gc::Row& row(const gc::Comparison& c, const std::string& name) {
  for (const gc::Row& r : c.rows)
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}

const std::vector<double> kBase{100, 100, 100}, kSlow{150, 150, 150}, kFast{50, 50, 50}, kElevenPct{111, 111, 111};

}  // namespace method_test

using method_test::compare;
using method_test::kBase;
using method_test::row;

TEST(Method, TheSameMethodIsJudgedAsEver) {
  const auto c = compare({{"a", kBase, "2"}}, {{"a", method_test::kSlow, "2"}});
  EXPECT_EQ(row(c, "a").verdict, gc::Verdict::Regression);
  EXPECT_TRUE(row(c, "a").fails_gate);
  EXPECT_EQ(row(c, "a").base_method, "2");
  EXPECT_EQ(row(c, "a").cur_method, "2");
}

TEST(Method, ADifferentMethodIsNotComparedAndNeverFails) {
  const auto c = compare({{"a", kBase, "1"}, {"b", kBase, "1"}}, {{"a", method_test::kSlow, "2"}, {"b", kBase, "1"}});
  const gc::Row a = row(c, "a");
  EXPECT_EQ(a.verdict, gc::Verdict::MethodChanged);
  EXPECT_FALSE(a.fails_gate);
  EXPECT_FALSE(a.change.has_value());  // no ratio across two ways of measuring
  EXPECT_FALSE(a.p_value.has_value());
  ASSERT_TRUE(a.base && a.cur);
  EXPECT_DOUBLE_EQ(*a.base, 100e3);  // the figures are still shown (ns)
  EXPECT_DOUBLE_EQ(*a.cur, 150e3);
  EXPECT_EQ(a.base_method, "1");
  EXPECT_EQ(a.cur_method, "2");
  EXPECT_EQ(a.note, "method 1 -> 2: not compared, re-record the baseline");
  EXPECT_EQ(row(c, "b").verdict, gc::Verdict::Same);
  EXPECT_EQ(c.counts[gc::Verdict::MethodChanged], 1);
  EXPECT_EQ(c.counts[gc::Verdict::Same], 1);
  EXPECT_FALSE(c.failed());
}

TEST(Method, AFasterCaseOfAnotherMethodMakesNoStaleLine) {
  const auto c = compare({{"a", kBase, "1"}}, {{"a", method_test::kFast, "2"}});
  EXPECT_EQ(row(c, "a").verdict, gc::Verdict::MethodChanged);
  EXPECT_FALSE(c.stale.has_value());
  EXPECT_EQ(c.counts[gc::Verdict::Improvement], 0);
}

TEST(Method, ABaselineWithoutTheFieldIsMethodOne) {
  const auto one = compare({{"a", kBase, std::nullopt}}, {{"a", method_test::kElevenPct, "1"}});
  EXPECT_EQ(row(one, "a").verdict, gc::Verdict::Regression);
  EXPECT_EQ(row(one, "a").base_method, "1");
  const auto back = compare({{"a", kBase, "1"}, {"b", kBase, std::nullopt}},
                            {{"a", kBase, std::nullopt}, {"b", kBase, std::nullopt}});
  EXPECT_EQ(row(back, "a").verdict, gc::Verdict::Same);
  EXPECT_EQ(row(back, "b").verdict, gc::Verdict::Same);
  const auto two = compare({{"a", kBase, std::nullopt}}, {{"a", kBase, "2"}});
  EXPECT_EQ(row(two, "a").verdict, gc::Verdict::MethodChanged);
  EXPECT_EQ(row(two, "a").note, "method 1 -> 2: not compared, re-record the baseline");
}

TEST(Method, AMethodThatIsNotAWholeNumberMatchesNothing) {
  const auto c = compare({{"a", kBase, "1.5"}, {"b", kBase, "1e12"}}, {{"a", kBase, "1.5"}, {"b", kBase, "1"}});
  EXPECT_EQ(row(c, "a").verdict, gc::Verdict::MethodChanged);
  EXPECT_EQ(row(c, "a").cur_method, "?");
  EXPECT_EQ(row(c, "b").verdict, gc::Verdict::MethodChanged);
  EXPECT_EQ(row(c, "b").base_method, "?");
  EXPECT_FALSE(c.failed());
}

TEST(Method, TheListsDoNotApplyToACaseNotCompared) {
  gc::CompareOptions o;
  o.thresholds.report_only.push_back({"r", 30.0, "noisy"});
  o.thresholds.host_bound.push_back({"h", 10.0, "host time", 0});
  const auto c = compare({{"r", kBase, "1"}, {"h", kBase, "1"}}, {{"r", kBase, "3"}, {"h", method_test::kSlow, "2"}}, o);
  EXPECT_EQ(row(c, "r").verdict, gc::Verdict::MethodChanged);
  EXPECT_EQ(row(c, "h").verdict, gc::Verdict::MethodChanged);
  EXPECT_FALSE(row(c, "h").fails_gate);
  EXPECT_EQ(c.counts[gc::Verdict::ReportOnly], 0);
}

TEST(Method, ACaseMissingOrSkippedNowIsStillMissingWhateverItsMethod) {
  const auto c = compare({{"a", kBase, "1"}, {"b", kBase, "1"}}, {{"b", kBase, "2"}});
  EXPECT_EQ(row(c, "a").verdict, gc::Verdict::Missing);
  EXPECT_TRUE(c.failed());
}

TEST(Method, TheMethodIsNotAFigure) {
  const auto base = method_test::results_of({{"a", kBase, "1"}}, "base.json");
  const auto cur = method_test::results_of({{"a", kBase, "2"}}, "cur.json");
  EXPECT_EQ(base.benchmarks[0].counters.count("method"), 0u);
  EXPECT_FALSE(gc::check_metric(base, cur, "method"));  // no counter of that name to compare
}

TEST(Method, CompareJsonCarriesTheVerdictTheCountAndBothMethods) {
  const auto c = compare({{"a", kBase, "1"}, {"b", kBase, "1"}}, {{"a", kBase, "2"}, {"b", kBase, "1"}});
  const auto j = nlohmann::json::parse(gc::render_json(gc::CompareReport(c)));
  EXPECT_EQ(j["result"], "pass");
  EXPECT_EQ(j["counts"]["method_changed"], 1);
  EXPECT_EQ(j["counts"]["unchanged"], 1);
  for (const auto& r : j["rows"]) {
    if (r["name"] == "a") {
      EXPECT_EQ(r["verdict"], "method changed");
      EXPECT_EQ(r["fails_gate"], false);
      EXPECT_EQ(r["method"]["baseline"], "1");
      EXPECT_EQ(r["method"]["current"], "2");
      EXPECT_TRUE(r["change"].is_null());
    } else {
      EXPECT_FALSE(r.contains("method"));
    }
  }
}

TEST(Method, JUnitSaysACaseNotComparedIsSkippedNotFailed) {
  const auto c = compare({{"a", kBase, "1"}, {"b", kBase, "1"}}, {{"a", method_test::kSlow, "2"}, {"b", kBase, "1"}});
  const std::string x = gc::render_junit(gc::CompareReport(c));
  EXPECT_NE(x.find(R"(tests="2" failures="0" skipped="1")"), std::string::npos) << x;
  EXPECT_NE(x.find("<skipped message=\"method changed: method 1 -&gt; 2"), std::string::npos) << x;
}

TEST(Method, EffectiveMethodAndSameMethod) {
  EXPECT_EQ(gc::effective_method(""), "1");
  EXPECT_EQ(gc::effective_method("7"), "7");
  EXPECT_TRUE(gc::same_method("", "1"));
  EXPECT_TRUE(gc::same_method("2", "2"));
  EXPECT_FALSE(gc::same_method("", "2"));
  EXPECT_FALSE(gc::same_method("?", "?"));
}

// `baseline update --from-history` keeps each case's newest method and only the runs measured
// that way, and writes the method into the baseline, so the next gate compares like with like.
TEST(Method, ABaselineFromTheHistoryNeverMixesTwoMethods) {
  namespace tu = gpucheck::testutil;
  const tu::TempDir d("gpucheck-method");
  std::vector<tu::RunSpec> runs(3);
  for (int i = 0; i < 3; ++i) {
    runs[i].commit = std::vector<std::string>{"c1", "c2", "c3"}[i];
    runs[i].date = tu::december(i + 1);
    runs[i].cases = {{"matmul/x/bf16/1", {i == 0 ? 2000.0 : 1000.0}}, {"memory/copy/1GiB", {50.0}}};
    if (i > 0) runs[i].case_method = {{"matmul/x/bf16/1", 2}};  // its way of measuring changed at c2
  }
  tu::add_by_cli(d, d / "h.db", runs);
  auto b = tu::baseline_from_history(d, d / "h.db", 3);
  ASSERT_TRUE(b.ok()) << b.error().str();
  const gc::Benchmark* m = b->find("matmul/x/bf16/1");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->repetitions, 2);  // c2 and c3; c1 measured it another way
  EXPECT_DOUBLE_EQ(m->real_time_ns, 1000.0);
  EXPECT_EQ(m->method, "2");
  const gc::Benchmark* c = b->find("memory/copy/1GiB");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->repetitions, 3);
  EXPECT_EQ(c->method, "");  // method 1 stays unwritten, as old files have it
  const auto same = gc::compare_results(*b, method_test::results_of({{"matmul/x/bf16/1", {1.0}, "2"}}, "cur.json"), {});
  EXPECT_EQ(row(same, "matmul/x/bf16/1").verdict, gc::Verdict::Same);
  const auto old = gc::compare_results(*b, method_test::results_of({{"matmul/x/bf16/1", {1.0}, "1"}}, "cur.json"), {});
  EXPECT_EQ(row(old, "matmul/x/bf16/1").verdict, gc::Verdict::MethodChanged);
}

// The history's series: runs recorded before the binaries wrote a method (none) and runs of
// method 1 are one series; method 2 starts another.
TEST(Method, AHistorySeriesTakesAnAbsentMethodAsMethodOne) {
  std::vector<gpucheck::compare::history::Point> points;
  for (int i = 0; i < 9; ++i) {
    gpucheck::compare::history::Point p;
    p.name = "launch/eager/1";
    p.metric = "real_time";
    static const char* const kMethods[] = {"", "1", "2"};  // three runs each
    p.method = kMethods[i / 3];
    p.median = 100;
    points.push_back(p);
  }
  const auto series = gpucheck::compare::history::series_of(points);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].points.size(), 6u);
  EXPECT_EQ(series[1].points.size(), 3u);
  EXPECT_EQ(series[1].method, "2");
}

// Beside a regression of a power-burst case: its mean clock and mean power when they moved by
// more than 2% (report-only counters, never the verdict).
TEST(BurstWhy, TheMeanClockAndPowerAreShownWhenTheyMoved) {
  gc::Benchmark b, k;
  b.counters = {{"sm_clock_mean_MHz", 1980}, {"power_W", 640}};
  k.counters = {{"sm_clock_mean_MHz", 1760}, {"power_W", 650}};
  const auto why = gc::explain_case(b, k, std::nullopt);
  EXPECT_NE(std::find(why.begin(), why.end(), "SM clock mean 1980 -> 1760 MHz"), why.end());
  EXPECT_EQ(std::count_if(why.begin(), why.end(), [](const std::string& w) { return w.find("power") != std::string::npos; }),
            0);  // 1.6%: not a move
  k.counters["power_W"] = 700;
  const auto why2 = gc::explain_case(b, k, std::nullopt);
  EXPECT_NE(std::find(why2.begin(), why2.end(), "mean power 640 -> 700 W"), why2.end());
  k.counters.erase("power_W");  // absent on one side: nothing said
  const auto why3 = gc::explain_case(b, k, std::nullopt);
  EXPECT_EQ(std::count_if(why3.begin(), why3.end(), [](const std::string& w) { return w.find("power") != std::string::npos; }),
            0);
}
