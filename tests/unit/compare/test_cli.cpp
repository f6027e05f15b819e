// The gpucheck CLI end to end (in-process, on the committed fixtures): the crafted pairs of the
// issue, every kind of malformed input (exit 2, one line naming the file), usage errors,
// output formats, GITHUB_STEP_SUMMARY, threshold discovery, baseline and report commands.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fake_fs.hpp"
#include "gpucheck/compare/cli.hpp"

namespace gc = gpucheck::compare;
using gpucheck::compare::testing::FakeFileSystem;

namespace {

std::string fx(const std::string& rel) { return std::string(GPUCHECK_COMPARE_FIXTURES) + "/" + rel; }

struct Run {
  gc::ExitStatus status;
  gc::CliOutput io;
};

Run cli(std::vector<std::string> args, gc::FileSystem& fs, gc::CliEnvironment env = {}) {
  args.insert(args.begin(), "gpucheck");
  Run r{gc::ExitStatus::Ok, {}};
  r.status = gc::run_cli(args, fs, env, r.io);
  return r;
}

Run cli(std::vector<std::string> args) {
  gc::RealFileSystem fs;
  return cli(std::move(args), fs);
}

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

// ---- the crafted pairs ------------------------------------------------------------------

struct Pair {
  const char* current;
  gc::ExitStatus want;
  const char* verdict;
};

class CraftedPairs : public ::testing::TestWithParam<Pair> {};

TEST_P(CraftedPairs, ExitStatus) {
  const Pair& p = GetParam();
  auto r = cli({"compare", fx("crafted/baseline.json"), fx(std::string("crafted/") + p.current), "--no-thresholds"});
  EXPECT_EQ(r.status, p.want) << r.io.out << r.io.err;
  EXPECT_TRUE(r.io.err.empty()) << r.io.err;
  EXPECT_NE(r.io.out.find(p.verdict), std::string::npos) << r.io.out;
}

INSTANTIATE_TEST_SUITE_P(
    Issue3, CraftedPairs,
    ::testing::Values(Pair{"slower_9pct.json", gc::ExitStatus::Ok, "+9.00%  ok"},
                      Pair{"slower_11pct.json", gc::ExitStatus::Regression, "+11.00%  REGRESSION"},
                      Pair{"slower_10pct_exact.json", gc::ExitStatus::Ok, "+10.00%  ok"},
                      Pair{"slower_10.01pct.json", gc::ExitStatus::Regression, "+10.01%  REGRESSION"},
                      Pair{"same_in_us.json", gc::ExitStatus::Ok, "+0.00%  ok"},
                      Pair{"missing.json", gc::ExitStatus::Regression, "MISSING"},
                      Pair{"faster_30pct.json", gc::ExitStatus::Ok, "-30.00%  improved"}),
    [](const ::testing::TestParamInfo<Pair>& i) {
      std::string n = i.param.current;
      n = n.substr(0, n.find(".json"));
      std::replace_if(n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
      return n;
    });

TEST(Cli, AllowMissing) {
  auto r = cli({"compare", fx("crafted/baseline.json"), fx("crafted/missing.json"), "--allow-missing"});
  EXPECT_EQ(r.status, gc::ExitStatus::Ok);
}

// ---- malformed input: exit 2, one line naming the file and the problem --------------------

struct Bad {
  const char* file;
  const char* problem;
};

class MalformedInput : public ::testing::TestWithParam<Bad> {};

TEST_P(MalformedInput, ExitTwoWithOneLine) {
  const Bad& b = GetParam();
  const std::string path = fx(std::string("malformed/") + b.file);
  for (const bool as_current : {true, false}) {
    auto r = as_current ? cli({"compare", fx("crafted/baseline.json"), path})
                        : cli({"compare", path, fx("crafted/baseline.json")});
    EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
    EXPECT_TRUE(r.io.out.empty()) << r.io.out;
    EXPECT_EQ(lines(r.io.err), 1u) << r.io.err;
    EXPECT_EQ(r.io.err.rfind("gpucheck: " + path, 0), 0u) << r.io.err;
    EXPECT_NE(r.io.err.find(b.problem), std::string::npos) << r.io.err;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, MalformedInput,
    ::testing::Values(Bad{"empty.json", "empty file"},
                      Bad{"whitespace_only.json", "empty file"},
                      Bad{"truncated.json", "not valid JSON: parse error"},
                      Bad{"not_json.json", "not valid JSON"},
                      Bad{"binary.json", "binary data"},
                      Bad{"trailing_garbage.json", "expected end of input"},
                      Bad{"invalid_utf8.json", "ill-formed UTF-8"},
                      Bad{"time_overflow.json", "number overflow"},
                      Bad{"deeply_nested.json", "nested deeper than 64 levels"},
                      Bad{"top_level_array.json", "not Google Benchmark output: the top level is an array"},
                      Bad{"no_benchmarks_key.json", "no \"benchmarks\" list"},
                      Bad{"benchmarks_not_list.json", "\"benchmarks\" is an object"},
                      Bad{"empty_benchmarks.json", "\"benchmarks\" list is empty"},
                      Bad{"context_not_object.json", "\"context\" is a string"},
                      Bad{"entry_not_object.json", "benchmark #1 is a number"},
                      Bad{"missing_name.json", "benchmark #1 has no name"},
                      Bad{"name_not_string.json", "name is a number"},
                      Bad{"empty_name.json", "name is empty"},
                      Bad{"missing_real_time.json", "no real_time"},
                      Bad{"time_is_string.json", "real_time is a string"},
                      Bad{"time_is_bool.json", "real_time is a boolean"},
                      Bad{"time_negative.json", "real_time is negative"},
                      Bad{"time_zero.json", "real_time is zero"},
                      Bad{"time_nan.json", "real_time is NaN"},
                      Bad{"time_infinite.json", "real_time is infinite"},
                      Bad{"unknown_time_unit.json", "unknown time_unit \"fortnights\""},
                      Bad{"missing_time_unit.json", "no time_unit"},
                      Bad{"duplicate_name.json", "duplicate benchmark"},
                      Bad{"unknown_run_type.json", "unknown run_type \"warmup\""},
                      Bad{"folder_with_other_files", "\"notes.txt\", which is not a .json results file"},
                      Bad{"no_such_file.json", "no such file or folder"}),
    [](const ::testing::TestParamInfo<Bad>& i) {
      std::string n = i.param.file;
      std::replace_if(n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
      return n;
    });

TEST(Cli, EmptyFolderAndUnreadableFile) {
  char tmpl[] = "/tmp/gpucheck-empty-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  auto r = cli({"compare", dir, fx("crafted/baseline.json")});
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(r.io.err, "gpucheck: " + dir + ": folder holds no .json results files\n");
  ::rmdir(tmpl);
  // A folder where a file is expected by the reader of a thresholds file.
  auto t = cli({"compare", fx("crafted/baseline.json"), fx("crafted/baseline.json"), "--thresholds", fx("crafted")});
  EXPECT_EQ(t.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(lines(t.io.err), 1u);
}

TEST(Cli, UsageErrorsAreOneLine) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"frobnicate"},
      {"compare"},
      {"compare", fx("crafted/baseline.json")},
      {"compare", "a", "b", "c"},
      {"compare", fx("crafted/baseline.json"), fx("crafted/baseline.json"), "--bogus"},
      {"compare", fx("crafted/baseline.json"), fx("crafted/baseline.json"), "--threshold", "ten"},
      {"compare", fx("crafted/baseline.json"), fx("crafted/baseline.json"), "--threshold"},
      {"compare", fx("crafted/baseline.json"), fx("crafted/baseline.json"), "--format", "xml"},
      {"compare", fx("crafted/baseline.json"), fx("crafted/baseline.json"), "--metric", "wrong_elements"},
      {"compare", fx("crafted/baseline.json"), fx("crafted/baseline.json"), "--alpha", "2"},
      {"compare", fx("crafted/baseline.json"), fx("crafted/baseline.json"), "--higher-is-better", "--lower-is-better"},
      {"compare", fx("crafted/baseline.json"), fx("crafted/baseline.json"), "--thresholds", fx("malformed/truncated.json")},
      {"baseline"},
      {"baseline", "update", fx("crafted/baseline.json")},
      {"baseline", "destroy"},
      {"report"},
      {"report", fx("malformed/time_nan.json")},
  };
  for (const auto& args : bad) {
    auto r = cli(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.status, gc::ExitStatus::BadInput) << joined;
    EXPECT_EQ(lines(r.io.err), 1u) << joined << ": " << r.io.err;
    EXPECT_EQ(r.io.err.rfind("gpucheck: ", 0), 0u) << joined;
  }
}

TEST(Cli, HelpExitsZero) {
  auto r = cli({"--help"});
  EXPECT_EQ(r.status, gc::ExitStatus::Ok);
  EXPECT_NE(r.io.out.find("gpucheck compare BASELINE CURRENT"), std::string::npos);
}

TEST(Cli, MetricCounterIsHigherIsBetter) {
  auto r = cli({"compare", fx("crafted/baseline.json"), fx("crafted/slower_11pct.json"), "--metric", "TFLOPS"});
  EXPECT_EQ(r.status, gc::ExitStatus::Ok) << r.io.out;  // 1/1.11 of the rate: 9.9% lower, inside 10%
  EXPECT_NE(r.io.out.find("higher is better"), std::string::npos);
  auto strict = cli({"compare", fx("crafted/baseline.json"), fx("crafted/slower_11pct.json"), "--metric", "TFLOPS", "--threshold", "9%"});
  EXPECT_EQ(strict.status, gc::ExitStatus::Regression);
}

TEST(Cli, FormatsToFileAndStepSummary) {
  FakeFileSystem fs;
  gc::RealFileSystem real;
  for (const char* f : {"crafted/baseline.json", "crafted/slower_11pct.json"}) fs.add(f, *real.read(fx(f), 1 << 20));
  gc::CliEnvironment env;
  env.step_summary_path = "summary.md";
  fs.add("summary.md", "earlier step\n");
  for (const std::string fmt : {"json", "junit", "markdown", "terminal"}) {
    auto r = cli({"compare", "crafted/baseline.json", "crafted/slower_11pct.json", "--format", fmt, "--out", "out." + fmt}, fs, env);
    EXPECT_EQ(r.status, gc::ExitStatus::Regression);
    ASSERT_EQ(fs.files.count("out." + fmt), 1u) << fmt;
    EXPECT_NE(fs.files["out." + fmt].find("matmul/cublaslt/bf16/8192x8192x8192"), std::string::npos);
    EXPECT_NE(r.io.out.find("REGRESSION"), std::string::npos);  // the table still reaches the log
  }
  EXPECT_EQ(fs.files["out.junit"].rfind("<?xml", 0), 0u);
  EXPECT_EQ(fs.files["out.json"].front(), '{');
  EXPECT_EQ(fs.files["summary.md"].rfind("earlier step\n### gpucheck compare", 0), 0u);
  EXPECT_EQ(fs.files["out.terminal"].find('\033'), std::string::npos);
}

TEST(Cli, ColourFollowsTtyAndNoColor) {
  gc::RealFileSystem fs;
  gc::CliEnvironment tty;
  tty.stdout_is_tty = true;
  const std::vector<std::string> args{"compare", fx("crafted/baseline.json"), fx("crafted/slower_11pct.json")};
  EXPECT_NE(cli(args, fs, tty).io.out.find('\033'), std::string::npos);
  tty.no_color = true;
  EXPECT_EQ(cli(args, fs, tty).io.out.find('\033'), std::string::npos);
  EXPECT_EQ(cli(args, fs, {}).io.out.find('\033'), std::string::npos);
  auto forced = args;
  forced.push_back("--color=always");
  EXPECT_NE(cli(forced, fs, {}).io.out.find('\033'), std::string::npos);
}

TEST(Cli, ThresholdsFileFoundAboveTheBaseline) {
  FakeFileSystem fs;
  auto doc = [](double us) {
    return R"({"context": {"gpu_name": "NVIDIA H200"}, "benchmarks": [{"name": "launch/eager/empty/100", "real_time": )" +
           std::to_string(us) + R"(, "time_unit": "us", "us_per_launch": 2.6}]})";
  };
  fs.add("baselines/nvidia-h200/quick.json", doc(260.0));
  fs.add("results/quick.json", doc(260.0 * 1.12));
  auto without = cli({"compare", "baselines/nvidia-h200/quick.json", "results/quick.json"}, fs);
  EXPECT_EQ(without.status, gc::ExitStatus::Regression);
  fs.add("baselines/thresholds.json", R"({"overrides": [{"glob": "launch/*", "pct": 15}]})");
  auto with = cli({"compare", "baselines/nvidia-h200/quick.json", "results/quick.json"}, fs);
  EXPECT_EQ(with.status, gc::ExitStatus::Ok) << with.io.out;
  EXPECT_NE(with.io.out.find("per-name overrides from baselines/thresholds.json"), std::string::npos);
  auto ignored = cli({"compare", "baselines/nvidia-h200/quick.json", "results/quick.json", "--no-thresholds"}, fs);
  EXPECT_EQ(ignored.status, gc::ExitStatus::Regression);
}

TEST(Cli, BaselineUpdateShowAndCompare) {
  FakeFileSystem fs;
  gc::RealFileSystem real;
  for (const char* f : {"folder/bench_matmul.json", "folder/bench_memory.json"}) fs.add(f, *real.read(fx(f), 1 << 20));
  auto up = cli({"baseline", "update", "--suite", "quick", "folder"}, fs);
  ASSERT_EQ(up.status, gc::ExitStatus::Ok) << up.io.err;
  EXPECT_EQ(up.io.out.rfind("created baselines/nvidia-h200/quick.json: 2 benchmarks", 0), 0u) << up.io.out;
  auto again = cli({"baseline", "update", "--suite", "quick", "folder"}, fs);
  EXPECT_NE(again.io.out.find("0 added, 0 removed, 0 of 2 moved"), std::string::npos) << again.io.out;
  auto show = cli({"baseline", "show"}, fs);
  EXPECT_EQ(show.status, gc::ExitStatus::Ok);
  EXPECT_NE(show.io.out.find("baselines/nvidia-h200/quick.json: 2 benchmarks, NVIDIA H200"), std::string::npos) << show.io.out;
  auto same = cli({"compare", "baselines/nvidia-h200/quick.json", "folder"}, fs);
  EXPECT_EQ(same.status, gc::ExitStatus::Ok) << same.io.out;
}

TEST(Cli, ReportWritesHtmlAndMarkdown) {
  FakeFileSystem fs;
  gc::RealFileSystem real;
  for (const char* f : {"report/h200-node-a.json", "report/h200-node-b.json", "report/a100-node-c.json"})
    fs.add(f, *real.read(fx(f), 1 << 20));
  auto r = cli({"report", "report/h200-node-a.json", "report/h200-node-b.json", "report/a100-node-c.json", "--html", "r.html",
                "--markdown", "r.md"},
               fs);
  ASSERT_EQ(r.status, gc::ExitStatus::Ok) << r.io.err;
  EXPECT_NE(fs.files["r.html"].find("<svg"), std::string::npos);
  EXPECT_NE(fs.files["r.md"].find("# gpucheck hardware comparison"), std::string::npos);
}
