// Reader: Google Benchmark 1.7 and 1.8 shapes, repetitions and aggregates, bare NaN and
// Infinity tokens, unit normalisation, names, merge of folders.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "fake_fs.hpp"
#include "base/filesystem.hpp"
#include "results/results.hpp"

namespace gc = gpucheck::compare;
using gpucheck::testutil::fixture;

namespace {

std::string one(const std::string& fields, const std::string& ctx = R"("gpu_name": "NVIDIA H200")") {
  return R"({"context": {)" + ctx + R"(}, "benchmarks": [{"name": "matmul/cublaslt/bf16/8x8x8/manual_time", )" + fields + "}]}";
}

}  // namespace

TEST(Reader, SingleRunAndUnits) {
  for (const auto& [unit, factor] : std::vector<std::pair<std::string, double>>{{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}) {
    auto r = gc::parse_results(one(R"("real_time": 2.5, "time_unit": ")" + unit + "\""), "t.json");
    ASSERT_TRUE(r) << r.error().str();
    ASSERT_EQ(r->benchmarks.size(), 1u);
    EXPECT_DOUBLE_EQ(r->benchmarks[0].real_time_ns, 2.5 * factor) << unit;
    EXPECT_EQ(r->benchmarks[0].time_unit, unit);
  }
}

TEST(Reader, ControlCharactersInNamesAreMadeVisible) {
  auto r = gc::parse_results(R"({"benchmarks": [
      {"name": "x/evil\u001b[31mred\u0007/a", "real_time": 1, "time_unit": "us"},
      {"name": "x/plain/a", "real_time": 2, "time_unit": "us"}]})",
                             "ctl.json");
  ASSERT_TRUE(r) << r.error().str();
  ASSERT_EQ(r->benchmarks.size(), 2u);
  EXPECT_EQ(r->benchmarks[0].name, "x/evil\\x1b[31mred\\x07/a");
  for (const char c : r->benchmarks[0].name) EXPECT_GE(static_cast<unsigned char>(c), 0x20);
  EXPECT_NE(r->find("x/evil\\x1b[31mred\\x07/a"), nullptr);  // the same on every side
  EXPECT_EQ(r->benchmarks[1].name, "x/plain/a");
}

TEST(Reader, KeyDropsGbenchSuffixes) {
  EXPECT_EQ(gc::benchmark_key("matmul/cublaslt/bf16/8192x8192x8192/manual_time"), "matmul/cublaslt/bf16/8192x8192x8192");
  EXPECT_EQ(gc::benchmark_key("pcie/h2d/pinned/256MiB/min_time:0.500/repeats:5/real_time"), "pcie/h2d/pinned/256MiB");
  EXPECT_EQ(gc::benchmark_key("launch/graph/empty/100/threads:2"), "launch/graph/empty/100/threads:2");
  EXPECT_EQ(gc::benchmark_key("manual_time"), "manual_time");
  EXPECT_EQ(gc::benchmark_key("/manual_time"), "/manual_time");
}

TEST(Reader, BareNaNAndInfinityTokens) {
  auto r = gc::parse_results(one(R"("real_time": 1.0, "time_unit": "ms", "TFLOPS": NaN, "GBps": Infinity, "x": -Infinity, "pct_of_peak": 50)"), "t.json");
  ASSERT_TRUE(r) << r.error().str();
  const auto& c = r->benchmarks[0].counters;
  EXPECT_EQ(c.count("TFLOPS"), 0u);  // a NaN counter is no value
  EXPECT_EQ(c.count("GBps"), 0u);
  EXPECT_EQ(c.count("x"), 0u);
  EXPECT_DOUBLE_EQ(c.at("pct_of_peak"), 50.0);
}

TEST(Reader, SanitizerLeavesStringsAlone) {
  const auto s = gc::sanitize_nonfinite(R"({"a": "NaN Infinity", "b": NaN, "c": [-Infinity], "NaNx": 1, "d": "\"NaN"})");
  EXPECT_NE(s.text.find(R"("a": "NaN Infinity")"), std::string::npos);
  EXPECT_NE(s.text.find(R"("NaNx": 1)"), std::string::npos);
  EXPECT_NE(s.text.find(R"("d": "\"NaN")"), std::string::npos);
  EXPECT_EQ(s.text.find(": NaN"), std::string::npos);
  EXPECT_EQ(s.max_depth, 2);
}

TEST(Reader, NaNTimeIsAnError) {
  auto r = gc::parse_results(one(R"("real_time": NaN, "time_unit": "ms")"), "t.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "t.json");
  EXPECT_NE(r.error().message.find("real_time is NaN"), std::string::npos);
}

TEST(Reader, RepetitionsUseMedianAggregateAndKeepSamples) {
  auto r = gc::load_results(gc::RealFileSystem{}, fixture("interop/ours_run1.json"));
  ASSERT_TRUE(r) << r.error().str();
  const gc::Benchmark* m = r->find("matmul/cublaslt/bf16/8192x8192x8192");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->samples_ns.size(), 5u);
  EXPECT_EQ(m->repetitions, 5);
  EXPECT_DOUBLE_EQ(m->real_time_ns, 1.001e6);  // the median aggregate, in ns
  ASSERT_TRUE(m->cv.has_value());
  EXPECT_GT(*m->cv, 0.0);
  EXPECT_LT(*m->cv, 0.01);
  EXPECT_EQ(m->counter_samples.at("TFLOPS").size(), 5u);
  EXPECT_NEAR(m->counters.at("TFLOPS"), 1099.5 / 1.001, 1e-9);
  EXPECT_EQ(r->benchmarks.size(), 4u);
  EXPECT_EQ(r->context_value("gpu_name"), "NVIDIA H200");
  EXPECT_EQ(r->context_value("no_such_key"), "unknown");
  EXPECT_EQ(r->context_value("num_cpus"), "128");
}

TEST(Reader, RepetitionsWithoutAggregatesFoldToMedian) {
  const std::string text = R"({"benchmarks": [
    {"name": "a/b/c/d", "run_name": "a/b/c/d", "run_type": "iteration", "repetitions": 3, "repetition_index": 0, "real_time": 3, "time_unit": "us", "GBps": 10},
    {"name": "a/b/c/d", "run_name": "a/b/c/d", "run_type": "iteration", "repetitions": 3, "repetition_index": 1, "real_time": 1, "time_unit": "us", "GBps": 30},
    {"name": "a/b/c/d", "run_name": "a/b/c/d", "run_type": "iteration", "repetitions": 3, "repetition_index": 2, "real_time": 2, "time_unit": "us", "GBps": 20}]})";
  auto r = gc::parse_results(text, "t.json");
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_DOUBLE_EQ(r->benchmarks[0].real_time_ns, 2000.0);
  EXPECT_DOUBLE_EQ(r->benchmarks[0].counters.at("GBps"), 20.0);
  EXPECT_DOUBLE_EQ(*r->benchmarks[0].cv, 0.5);
}

TEST(Reader, AggregatesOnlyUseMedianAndIgnoreComplexity) {
  const std::string text = R"({"benchmarks": [
    {"name": "x/y_median", "run_name": "x/y", "run_type": "aggregate", "aggregate_name": "median", "real_time": 4, "time_unit": "ms"},
    {"name": "x/y_cv", "run_name": "x/y", "run_type": "aggregate", "aggregate_name": "cv", "aggregate_unit": "percentage", "real_time": 0.02, "time_unit": "ms"},
    {"name": "x/y_BigO", "run_name": "x/y", "run_type": "aggregate", "aggregate_name": "BigO", "cpu_coefficient": 1.0, "big_o": "N"}]})";
  auto r = gc::parse_results(text, "t.json");
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_DOUBLE_EQ(r->benchmarks[0].real_time_ns, 4e6);
  EXPECT_DOUBLE_EQ(*r->benchmarks[0].cv, 0.02);
}

TEST(Reader, Gbench18SkippedAndErrored) {
  auto r = gc::load_results(gc::RealFileSystem{}, fixture("gbench18.json"));
  ASSERT_TRUE(r) << r.error().str();
  const auto* skipped = r->find("matmul/cublaslt/fp8/8192x8192x8192");
  const auto* errored = r->find("nccl/allreduce/fp32/1GiB/g8");
  ASSERT_TRUE(skipped && errored);
  EXPECT_EQ(skipped->state, gc::RunState::Skipped);
  EXPECT_EQ(skipped->message, "fp8 needs compute capability 8.9");
  EXPECT_EQ(errored->state, gc::RunState::Errored);
  EXPECT_EQ(errored->message, "only 1 GPU visible");
  EXPECT_EQ(r->context_value("json_schema_version"), "1");
}

TEST(Reader, Gbench17UnsupportedPrefixIsSkippedNotErrored) {
  // Google Benchmark 1.7 has no SkipWithMessage: our binaries write the reason as an error
  // message starting "unsupported: ", which reads as skipped; any other error stays an error.
  const std::string text = R"json({"benchmarks": [
    {"name": "matmul/cublaslt/fp8e4m3/8192x8192x8192/iterations:1/manual_time", "run_type": "iteration", "error_occurred": true,
     "error_message": "unsupported: fp8 GEMMs need compute capability 8.9 or newer (this GPU is 8.0)"},
    {"name": "matmul/cublaslt/bf16/8192x8192x8192/iterations:1/manual_time", "run_type": "iteration", "error_occurred": true,
     "error_message": "matmul: wrong result: unsupported: not a prefix here"}]})json";
  auto r = gc::parse_results(text, "t.json");
  ASSERT_TRUE(r) << r.error().str();
  const auto* fp8 = r->find("matmul/cublaslt/fp8e4m3/8192x8192x8192");
  const auto* bf16 = r->find("matmul/cublaslt/bf16/8192x8192x8192");
  ASSERT_TRUE(fp8 && bf16);
  EXPECT_EQ(fp8->state, gc::RunState::Skipped);
  EXPECT_EQ(fp8->message, "fp8 GEMMs need compute capability 8.9 or newer (this GPU is 8.0)");
  EXPECT_EQ(bf16->state, gc::RunState::Errored);
}

TEST(Reader, FolderIsMergedWithContexts) {
  auto r = gc::load_results(gc::RealFileSystem{}, fixture("folder"));
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ(r->benchmarks.size(), 2u);
  EXPECT_NE(r->find("matmul/cublaslt/bf16/8192x8192x8192"), nullptr);
  EXPECT_NE(r->find("memory/copy_kernel/fp32/4GiB"), nullptr);
  EXPECT_EQ(r->context_value("gpu_name"), "NVIDIA H200");
  EXPECT_EQ(r->context_value("executable"), "./bench_matmul | ./bench_memory");
}

TEST(Reader, FolderWithTheSameNameTwiceFails) {
  auto r = gc::load_results(gc::RealFileSystem{}, fixture("folder_dup"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("duplicate benchmark \"matmul/cublaslt/bf16/8192x8192x8192\""), std::string::npos);
  EXPECT_NE(r.error().message.find("a.json"), std::string::npos);
  EXPECT_NE(r.error().message.find("b.json"), std::string::npos);
}

TEST(Reader, FakeFolderIgnoresHiddenFiles) {
  gpucheck::compare::testing::FakeFileSystem fs;
  fs.add("res/a.json", one(R"("real_time": 1, "time_unit": "ms")"));
  fs.add("res/.DS_Store", "junk");
  auto r = gc::load_results(fs, "res");
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ(r->benchmarks.size(), 1u);
}

TEST(Reader, RawRoundTripKeepsAggregatesAndDropsNonFinite) {
  gc::ReadOptions keep;
  keep.keep_raw = true;
  auto r = gc::load_results(gc::RealFileSystem{}, fixture("interop/ours_run1.json"), keep);
  ASSERT_TRUE(r) << r.error().str();
  const std::string text = gc::to_gbench_json(*r);
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_NE(text.find("\"aggregate_name\":\"median\""), std::string::npos);
  EXPECT_NE(text.find("\"caches\""), std::string::npos);  // context kept whole, not just strings
  auto again = gc::parse_results(text, "again.json");
  ASSERT_TRUE(again) << again.error().str();
  ASSERT_EQ(again->benchmarks.size(), r->benchmarks.size());
  for (std::size_t i = 0; i < r->benchmarks.size(); ++i) {
    EXPECT_EQ(again->benchmarks[i].name, r->benchmarks[i].name);
    EXPECT_DOUBLE_EQ(again->benchmarks[i].real_time_ns, r->benchmarks[i].real_time_ns);
    EXPECT_EQ(again->benchmarks[i].samples_ns, r->benchmarks[i].samples_ns);
  }
}

TEST(Reader, DuplicateRepetitionIndex) {
  const std::string text = R"({"benchmarks": [
    {"name": "a/b", "run_type": "iteration", "repetition_index": 0, "real_time": 3, "time_unit": "us"},
    {"name": "a/b", "run_type": "iteration", "repetition_index": 0, "real_time": 1, "time_unit": "us"}]})";
  auto r = gc::parse_results(text, "t.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("duplicate benchmark \"a/b\""), std::string::npos);
}

TEST(Reader, CounterOfTheWrongTypeIsAnError) {
  // Treating these as absent would let a broken benchmark pass unseen.
  for (const auto& [value, kind] : std::vector<std::pair<std::string, std::string>>{
           {R"("12")", "a string"}, {"true", "a boolean"}, {R"({"a": 1})", "an object"}, {"null", "null"}, {"[1]", "an array"}}) {
    auto r = gc::parse_results(one(R"("real_time": 1.0, "time_unit": "ms", "TFLOPS": )" + value), "t.json");
    ASSERT_FALSE(r) << value;
    EXPECT_EQ(r.error().str(), "t.json: benchmark #1 \"matmul/cublaslt/bf16/8x8x8/manual_time\": counter \"TFLOPS\" is " + kind +
                                   ", expected a number");
  }
}

TEST(Reader, NegativeCounterIsAnError) {
  auto r = gc::parse_results(one(R"("real_time": 1.0, "time_unit": "ms", "GBps": -3.5)"), "t.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("counter \"GBps\" is negative (-3.5)"), std::string::npos) << r.error().message;
  // Zero is a value (throttled_samples, clock_event_reasons), and NaN stays "no value".
  EXPECT_TRUE(gc::parse_results(one(R"("real_time": 1.0, "time_unit": "ms", "throttled_samples": 0, "x": NaN)"), "t.json"));
}

TEST(Reader, LabelAndRawKeysAreKept) {
  gc::ReadOptions keep;
  keep.keep_raw = true;
  auto r = gc::parse_results(one(R"("real_time": 1.0, "time_unit": "ms", "label": "timing=held stop=time_limit")"), "t.json", keep);
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ(r->benchmarks[0].label, "timing=held stop=time_limit");
  ASSERT_EQ(r->raw_keys.size(), 1u);
  EXPECT_EQ(r->raw_keys[0], "matmul/cublaslt/bf16/8x8x8");
}

TEST(Reader, ReplaceBenchmarksTakesTheRerunsEntries) {
  gc::ReadOptions keep;
  keep.keep_raw = true;
  auto first = gc::parse_results(R"({"context": {"gpu_name": "G"}, "benchmarks": [
      {"name": "a/x/manual_time", "real_time": 1, "time_unit": "ms"},
      {"name": "b/x/manual_time", "real_time": 2, "time_unit": "ms"},
      {"name": "c/x/manual_time", "real_time": 3, "time_unit": "ms"}]})", "first.json", keep);
  auto rerun = gc::parse_results(R"({"context": {"gpu_name": "G"}, "benchmarks": [
      {"name": "b/x/manual_time", "run_name": "b/x/manual_time", "repetition_index": 0, "real_time": 2.1, "time_unit": "ms"},
      {"name": "b/x/manual_time", "run_name": "b/x/manual_time", "repetition_index": 1, "real_time": 2.2, "time_unit": "ms"},
      {"name": "b/x/manual_time_median", "run_name": "b/x/manual_time", "run_type": "aggregate", "aggregate_name": "median", "real_time": 2.15, "time_unit": "ms"}]})",
                                 "rerun.json", keep);
  ASSERT_TRUE(first && rerun);
  const auto out = gc::replace_benchmarks(*first, *rerun, {"b/x", "c/x"});  // c/x is not in the re-run: kept
  ASSERT_EQ(out.benchmarks.size(), 3u);
  EXPECT_EQ(out.benchmarks[1].name, "b/x");
  EXPECT_EQ(out.benchmarks[1].repetitions, 2);
  EXPECT_DOUBLE_EQ(out.find("b/x")->real_time_ns, 2.15e6);
  EXPECT_DOUBLE_EQ(out.find("c/x")->real_time_ns, 3e6);
  ASSERT_EQ(out.raw_entries.size(), 5u);
  auto back = gc::parse_results(gc::to_gbench_json(out), "back.json");
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(back->benchmarks[0].name, "a/x");
  EXPECT_EQ(back->benchmarks[1].samples_ns.size(), 2u);
  EXPECT_DOUBLE_EQ(back->find("b/x")->real_time_ns, 2.15e6);
}

// Issue 36: entries are read as they stream past, but a refusal is reported in the order a
// whole document gave: the text's own errors, then the envelope's, then the first entry's.
TEST(Reader, StreamedEntriesKeepTheOrderOfRefusals) {
  const std::string no_name = R"({"real_time": 1, "time_unit": "ns"})";
  auto syntax = gc::parse_results(R"({"benchmarks": [)" + no_name + R"(, {"name": "a", "real_time": 1,]})", "s.json");
  ASSERT_FALSE(syntax);
  EXPECT_EQ(syntax.error().message.rfind("not valid JSON: ", 0), 0u) << syntax.error().message;
  auto dup = gc::parse_results(R"({"benchmarks": [)" + no_name + R"(, {"name": "a", "name": "b"}]})", "d.json");
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().message.rfind("key \"name\" given twice in benchmarks[1]", 0), 0u) << dup.error().message;
  auto ctx = gc::parse_results(R"({"benchmarks": [)" + no_name + R"(], "context": {"gpu_name": "a\u0000b"}})", "c.json");
  ASSERT_FALSE(ctx);
  EXPECT_EQ(ctx.error().message, "context \"gpu_name\" holds a NUL (\\u0000): text is taken whole, never cut");
  auto entry = gc::parse_results(R"({"benchmarks": [{"name": "ok", "real_time": 1, "time_unit": "ns"}, )" + no_name +
                                     R"(, 7], "context": {}})",
                                 "e.json");
  ASSERT_FALSE(entry);
  EXPECT_EQ(entry.error().message, "benchmark #2 has no name");
  auto scalar = gc::parse_results(R"({"benchmarks": [{"name": "ok", "real_time": 1, "time_unit": "ns"}, NaN]})", "n.json");
  ASSERT_FALSE(scalar);
  EXPECT_EQ(scalar.error().message, "benchmark #2 is NaN, expected an object");
  auto empty = gc::parse_results(R"({"benchmarks": [], "context": {}})", "m.json");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message, "the \"benchmarks\" list is empty");
}

// Repetitions of several benchmarks interleaved, as a --benchmark_enable_random_interleaving run
// writes them: each folds into its own benchmark, in first-seen order.
TEST(Reader, InterleavedRepetitionsFoldIntoTheirBenchmarks) {
  std::string list;
  const double a[] = {10, 30, 20}, b[] = {5, 7, 6};
  for (int r = 0; r < 3; ++r) {
    list += (r ? ", " : "") + std::string(R"({"name": "a", "run_type": "iteration", "repetition_index": )") + std::to_string(r) +
            R"(, "real_time": )" + std::to_string(a[r]) + R"(, "time_unit": "ns", "GBps": )" + std::to_string(a[r] * 2) + "}";
    list += std::string(R"(, {"name": "b", "run_type": "iteration", "repetition_index": )") + std::to_string(r) +
            R"(, "real_time": )" + std::to_string(b[r]) + R"(, "time_unit": "us", "label": "L)" + std::to_string(r) + "\"" +
            (r == 1 ? "" : R"(, "x": 1)") + "}";
  }
  auto res = gc::parse_results(R"({"benchmarks": [)" + list + "]}", "i.json");
  ASSERT_TRUE(res) << res.error().str();
  ASSERT_EQ(res->benchmarks.size(), 2u);
  const gc::Benchmark& A = res->benchmarks[0];
  const gc::Benchmark& B = res->benchmarks[1];
  EXPECT_EQ(A.name, "a");
  EXPECT_EQ(A.samples_ns, (std::vector<double>{10, 30, 20}));
  EXPECT_DOUBLE_EQ(A.real_time_ns, 20);
  EXPECT_EQ(A.repetitions, 3);
  EXPECT_DOUBLE_EQ(A.counters.at("GBps"), 40);
  EXPECT_EQ(A.counter_samples.at("GBps"), (std::vector<double>{20, 60, 40}));
  EXPECT_EQ(B.samples_ns, (std::vector<double>{5000, 7000, 6000}));
  EXPECT_EQ(B.time_unit, "us");
  EXPECT_EQ(B.label, "L0");
  EXPECT_EQ(B.counter_samples.at("x").size(), 2u);  // the second repetition has no x
}

// Repetitions that announce their count append each counter in the first one's order without a
// search; one whose counters come in another order, lack one, hold a NaN or add a new one still
// puts every value under its own name.
TEST(Reader, RepetitionsCountersInAnyOrderFoldUnderTheirNames) {
  const char* reps[] = {
      R"("a": 1, "b": 10, "c": 100)", R"("a": 2, "b": 20, "c": 200)", R"("c": 300, "a": 3, "b": 30)",
      R"("a": 4, "c": 400)",          R"("a": NaN, "b": 50, "c": 500, "d": 7)"};
  std::string list;
  for (int r = 0; r < 5; ++r)
    list += (r ? ", " : "") + std::string(R"({"name": "k", "run_type": "iteration", "repetitions": 5, "repetition_index": )") +
            std::to_string(r) + R"(, "real_time": )" + std::to_string(10 + r) + R"(, "time_unit": "ns", )" + reps[r] + "}";
  auto res = gc::parse_results(R"({"benchmarks": [)" + list + "]}", "o.json");
  ASSERT_TRUE(res) << res.error().str();
  ASSERT_EQ(res->benchmarks.size(), 1u);
  const gc::Benchmark& k = res->benchmarks[0];
  EXPECT_EQ(k.counter_samples.at("a"), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(k.counter_samples.at("b"), (std::vector<double>{10, 20, 30, 50}));
  EXPECT_EQ(k.counter_samples.at("c"), (std::vector<double>{100, 200, 300, 400, 500}));
  EXPECT_EQ(k.counter_samples.at("d"), (std::vector<double>{7}));
  EXPECT_EQ(k.counter_samples.size(), 4u);
  EXPECT_DOUBLE_EQ(k.counters.at("c"), 300);
}

// A refused time in a repetition is reported only when the benchmark is read as run; an entry
// later marking it errored wins, as it did when the fold came after the whole list.
TEST(Reader, ARefusedTimeYieldsToALaterErrorMark) {
  const std::string bad_time = R"({"name": "a", "repetition_index": 0, "real_time": -1, "time_unit": "ns"})";
  auto refused = gc::parse_results(R"({"benchmarks": [)" + bad_time + "]}", "t.json");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "benchmark #1 \"a\": real_time is negative");
  auto errored = gc::parse_results(R"({"benchmarks": [)" + bad_time +
                                       R"(, {"name": "a", "repetition_index": 1, "error_occurred": true, "error_message": "boom"}]})",
                                   "t.json");
  ASSERT_TRUE(errored) << errored.error().str();
  ASSERT_EQ(errored->benchmarks.size(), 1u);
  EXPECT_EQ(errored->benchmarks[0].state, gc::RunState::Errored);
  EXPECT_EQ(errored->benchmarks[0].message, "boom");
}

// Aggregates only: the figure, counters, label and unit come from the median; the cv aggregate
// gives the spread and the repetition count; keep_raw keeps every entry as written.
TEST(Reader, AggregatesOnlyAndRawEntriesStreamed) {
  const std::string text = R"({"benchmarks": [
      {"name": "k_mean", "run_name": "k", "run_type": "aggregate", "aggregate_name": "mean", "real_time": 11, "time_unit": "ms", "c": 3},
      {"name": "k_median", "run_name": "k", "run_type": "aggregate", "aggregate_name": "median", "real_time": 10, "time_unit": "ms", "c": 2, "label": "lm"},
      {"name": "k_stddev", "run_name": "k", "run_type": "aggregate", "aggregate_name": "stddev", "real_time": 1, "time_unit": "ms"},
      {"name": "k_cv", "run_name": "k", "run_type": "aggregate", "aggregate_name": "cv", "repetitions": 9, "real_time": 0.05, "time_unit": "ms", "c": 0.5, "n": NaN}]})";
  gc::ReadOptions keep;
  keep.keep_raw = true;
  auto r = gc::parse_results(text, "agg.json", keep);
  ASSERT_TRUE(r) << r.error().str();
  ASSERT_EQ(r->benchmarks.size(), 1u);
  const gc::Benchmark& k = r->benchmarks[0];
  EXPECT_DOUBLE_EQ(k.real_time_ns, 10e6);
  EXPECT_DOUBLE_EQ(k.counters.at("c"), 2);
  EXPECT_EQ(k.label, "lm");
  EXPECT_EQ(k.time_unit, "ms");
  EXPECT_EQ(k.repetitions, 9);
  ASSERT_TRUE(k.cv.has_value());
  EXPECT_DOUBLE_EQ(*k.cv, 0.05);
  EXPECT_DOUBLE_EQ(k.counter_cv.at("c"), 0.5);
  ASSERT_EQ(r->raw_entries.size(), 4u);
  EXPECT_EQ(r->raw_keys, (std::vector<std::string>{"k", "k", "k", "k"}));
  EXPECT_EQ(r->raw_entries[2],
            R"({"name":"k_stddev","run_name":"k","run_type":"aggregate","aggregate_name":"stddev","real_time":1,"time_unit":"ms"})");
  EXPECT_EQ(r->raw_entries[3].find("NaN"), std::string::npos) << r->raw_entries[3];  // a NaN counter is dropped
  EXPECT_NE(r->raw_entries[3].find("\"c\":0.5"), std::string::npos) << r->raw_entries[3];
}

// The counter "method" is the case's way of measuring, not a figure: it leaves the counters
// (so no comparison gates it) and becomes Benchmark::method; an odd value reads "?".
TEST(Reader, MethodCounterBecomesTheCasesMethod) {
  auto r = gc::parse_results(one(R"("real_time": 2.5, "time_unit": "us", "method": 2, "TFLOP/s": 700)"), "m.json");
  ASSERT_TRUE(r) << r.error().str();
  const auto& b = r->benchmarks.at(0);
  EXPECT_EQ(b.method, "2");
  EXPECT_EQ(b.counters.count("method"), 0u);
  EXPECT_EQ(b.counters.count("TFLOP/s"), 1u);
  auto none = gc::parse_results(one(R"("real_time": 2.5, "time_unit": "us")"), "n.json");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->benchmarks.at(0).method, "");
  auto odd = gc::parse_results(one(R"("real_time": 2.5, "time_unit": "us", "method": 1.5)"), "o.json");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->benchmarks.at(0).method, "?");
  EXPECT_EQ(odd->benchmarks.at(0).counters.count("method"), 0u);
}

// Issue 36: a file past the scanner's release step (64 MB) has its passed pages handed back
// as it is read; a refusal at its end reads the file again and is worded as nlohmann words it,
// and a good one reads every entry.
TEST(Reader, LargeFileRefusedAtItsEndIsWordedFromTheFileReadAgain) {
  std::string big = R"({"context": {}, "benchmarks": [)";
  big.reserve(std::size_t{72} << 20);
  int entries = 0;
  while (big.size() < (std::size_t{70} << 20)) {
    big.append(entries ? "," : "").append(R"({"name": "case/)").append(std::to_string(entries));
    big.append(R"(", "real_time": 1.5, "time_unit": "ns", "label": ")").append(300, 'x').append("\"}");
    ++entries;
  }
  gc::testing::FakeFileSystem fs;
  fs.add("good.json", big + "]}");
  fs.add("bad.json", big + ",]}");
  auto good = gc::load_results(fs, "good.json");
  ASSERT_TRUE(good) << good.error().str();
  EXPECT_EQ(good->benchmarks.size(), static_cast<std::size_t>(entries));
  EXPECT_EQ(good->benchmarks.back().name, "case/" + std::to_string(entries - 1));
  auto bad = gc::load_results(fs, "bad.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().str(), "bad.json: not valid JSON: parse error at line 1, column " + std::to_string(big.size() + 2) +
                                   ": syntax error while parsing value - unexpected ']'; expected '[', '{', or a literal");
}
