// Issue 36 (reliability2), its data half: nothing lost, nothing silently wrong. One test (or
// more) per item, each failing on the code before the fix: outputs against input files by
// identity (folders expanded; the gate's runs/ logs/ confirm/; baseline update's stored
// file), strings taken whole (NUL, blank), a figure from its repetitions, the loader's
// duplicate keys at any size, the smaller ones, and the one Markdown and HTML escaper.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "base/format.hpp"
#include "base/output.hpp"
#include "cli/cli.hpp"
#include "fake_fs.hpp"
#include "results/results.hpp"
#include "rules/thresholds.hpp"
#include "runner/process.hpp"

namespace gc = gpucheck::compare;
using gpucheck::compare::testing::FakeFileSystem;
using gpucheck::testutil::cli;
using gpucheck::testutil::CliRun;
using gpucheck::testutil::slurp;
using gpucheck::testutil::TempDir;

namespace {

// One case per name, one run each, in microseconds; `context` is extra context JSON.
std::string results(const std::vector<std::pair<std::string, double>>& cases, const std::string& context = "") {
  std::string s = R"({"context": {"gpu_name": "NVIDIA H200")" + (context.empty() ? "" : ", " + context) +
                  R"(}, "benchmarks": [)";
  bool first = true;
  for (const auto& [name, us] : cases) {
    s += std::string(first ? "" : ",") + R"({"name": ")" + name + R"(", "run_type": "iteration", "real_time": )" +
         gc::format_double("%.17g", us) + R"(, "time_unit": "us"})";
    first = false;
  }
  return s + "]}";
}

// Repetitions of one case plus aggregate entries (name, real_time in us, as printed).
std::string with_aggregates(const std::vector<double>& reps, const std::vector<std::pair<std::string, std::string>>& aggs) {
  std::string s = R"({"context": {"gpu_name": "NVIDIA H200"}, "benchmarks": [)";
  for (std::size_t i = 0; i < reps.size(); ++i)
    s += std::string(i ? "," : "") + R"({"name": "k/a", "run_name": "k/a", "run_type": "iteration", "repetitions": )" +
         std::to_string(reps.size()) + R"(, "repetition_index": )" + std::to_string(i) +
         R"(, "real_time": )" + gc::format_double("%.17g", reps[i]) + R"(, "time_unit": "us"})";
  for (const auto& [agg, text] : aggs)
    s += std::string(s.back() == '[' ? "" : ",") + R"({"name": "k/a_)" + agg + R"(", "run_name": "k/a", "run_type": "aggregate", "aggregate_name": ")" + agg +
         R"(", "repetitions": )" + std::to_string(reps.size()) + R"(, "real_time": )" + text + R"(, "time_unit": "us"})";
  return s + "]}";
}

// Whether `token` occurs in Markdown `text` without a backslash before it (raw, live syntax).
bool raw_in_markdown(const std::string& text, const std::string& token) {
  for (std::size_t at = text.find(token); at != std::string::npos; at = text.find(token, at + 1))
    if (at == 0 || text[at - 1] != '\\') return true;
  return false;
}

void write_file(const std::string& path, const std::string& text) {
  gc::RealFileSystem real;
  ASSERT_TRUE(real.write(path, text).ok());
}

// ---- 1: an output against every input file, by identity --------------------------------

// Repro: `gpucheck compare base.json cd1 --format json --out cd1/a.json` replaced a.json.
TEST(Reliability2Outputs, CompareOutOntoAFileInsideTheInputFolderIsExitTwo) {
  TempDir d("gpucheck-r2");
  std::filesystem::create_directory(d / "cd1");
  const std::string a = results({{"k/a", 100.0}});
  write_file(d / "base.json", a);
  write_file(d / "cd1/a.json", a);
  const CliRun r = cli({"compare", d / "base.json", d / "cd1", "--format", "json", "--out", d / "cd1/a.json"});
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_NE(r.io.err.find(d / "cd1/a.json"), std::string::npos) << r.io.err;
  EXPECT_EQ(slurp(d / "cd1/a.json"), a);
}

// The output through a link to the input's file: still the input (links resolved).
TEST(Reliability2Outputs, AnOutputLinkToAFileInsideTheInputFolderIsExitTwo) {
  TempDir d("gpucheck-r2");
  std::filesystem::create_directories(d / "cd1/deeper");
  const std::string a = results({{"k/a", 100.0}});
  write_file(d / "base.json", a);
  write_file(d / "cd1/deeper/a.json", a);
  ASSERT_EQ(::symlink((d / "cd1/deeper/a.json").c_str(), (d / "out.json").c_str()), 0);
  const CliRun r = cli({"report", d / "base.json", d / "cd1", "--markdown", d / "out.json"});
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(slurp(d / "cd1/deeper/a.json"), a);
}

TEST(Reliability2Outputs, ReportMarkdownAndStepSummaryOntoAnInputFolderFileAreExitTwo) {
  FakeFileSystem f;
  const std::string a = results({{"k/a", 100.0}});
  f.add("runs/a.json", a);
  f.add("runs/b.json", a);
  EXPECT_EQ(cli({"report", "runs", "--markdown", "runs/b.json"}, f).status, gc::ExitStatus::BadInput);
  gc::CliEnvironment env;
  env.step_summary_path = "runs/a.json";
  EXPECT_EQ(cli({"compare", "runs/b.json", "runs", "--format", "markdown"}, f, env).status, gc::ExitStatus::BadInput);
  EXPECT_EQ(f.files.at("runs/a.json"), a);
  EXPECT_EQ(f.files.at("runs/b.json"), a);
}

// input_files expands folders at any depth; a file is itself.
TEST(Reliability2Outputs, InputFilesExpandsFolders) {
  FakeFileSystem f;
  f.add("r/a.json", "{}");
  f.add("r/sub/b.json", "{}");
  f.add("c.json", "{}");
  const auto files = gc::input_files(f, {{"CURRENT", "r"}, {"BASELINE", "c.json"}, {"--thresholds", ""}});
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].path, "r/a.json");
  EXPECT_EQ(files[1].path, "r/sub/b.json");
  EXPECT_EQ(files[2].path, "c.json");
}

// Repro: `baseline update --suite quick baselines/nvidia-h200` read the stored file as part of
// its results and replaced it.
TEST(Reliability2Outputs, BaselineUpdateFromAFolderHoldingTheStoredFileIsExitTwo) {
  FakeFileSystem f;
  const std::string a = results({{"k/a", 100.0}});
  f.add("baselines/nvidia-h200/quick.json", a);
  const CliRun r = cli({"baseline", "update", "--suite", "quick", "baselines/nvidia-h200", "--root", "baselines"}, f);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput) << r.io.out;
  EXPECT_EQ(f.files.at("baselines/nvidia-h200/quick.json"), a);
}

// ---- the gate's folders, its temporaries and the links a binary makes ------------------

class OneBinary final : public gc::ProcessRunner {
 public:
  explicit OneBinary(FakeFileSystem& fs) : fs_(fs) {}
  int calls = 0;
  bool link = false;          // the binary leaves its output as a symbolic link
  std::string text;           // what it writes
  gc::ProcessResult run(const gc::ProcessSpec& spec) override {
    ++calls;
    fs_.add(spec.stderr_path, "");
    for (const auto& arg : spec.args)
      if (arg.starts_with("--benchmark_out=")) {
        const std::string out = arg.substr(16);
        fs_.add(out, text);
        if (link) fs_.links.insert(out);
      }
    gc::ProcessResult r;
    r.end = gc::ProcessResult::End::Exited;
    r.exit_code = 0;
    r.seconds = 0.1;
    return r;
  }

 private:
  FakeFileSystem& fs_;
};

struct Gate {
  FakeFileSystem fs;
  OneBinary bin{fs};
  gc::CliEnvironment env;
  Gate() {
    env.runner = &bin;
    fs.add("bin/bench_a", "#!fake");
    fs.executables.insert("bin/bench_a");
    bin.text = results({{"k/a", 100.0}});
  }
  CliRun gate(const std::string& baseline) {
    return cli({"gate", "--bin-dir", "bin", "--baseline", baseline, "--out", "o4"}, fs, env);
  }
};

// Repro: `gpucheck gate --baseline o4/runs/bench_steady.json --out o4` overwrote its baseline.
TEST(Reliability2Gate, ABaselineInsideTheRunsFolderIsExitTwoBeforeAnyBinaryRuns) {
  Gate g;
  const std::string a = results({{"k/a", 50.0}});
  g.fs.add("o4/runs/bench_a.json", a);
  const CliRun r = g.gate("o4/runs/bench_a.json");
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_NE(r.io.err.find("o4/runs"), std::string::npos) << r.io.err;
  EXPECT_EQ(g.bin.calls, 0);
  EXPECT_EQ(g.fs.files.at("o4/runs/bench_a.json"), a);
}

// A gate killed by SIGKILL left `.X.json.tmp-PID.partial-PID`: the next run removes it.
TEST(Reliability2Gate, TemporariesOfAKilledGateAreRemovedByTheNextRun) {
  Gate g;
  g.fs.add("baselines/nvidia-h200/quick.json", results({{"k/a", 100.0}}));
  g.fs.add("o4/runs/.bench_a.json.tmp-999999999.partial-999999998", "{");
  g.fs.add("o4/runs/.bench_a.json.tmp-999999999", "{");
  g.fs.add("o4/runs/keep.txt", "mine");
  EXPECT_EQ(g.gate("baselines").status, gc::ExitStatus::Ok);
  EXPECT_EQ(g.fs.files.count("o4/runs/.bench_a.json.tmp-999999999.partial-999999998"), 0u);
  EXPECT_EQ(g.fs.files.count("o4/runs/.bench_a.json.tmp-999999999"), 0u);
  EXPECT_EQ(g.fs.files.count("o4/runs/keep.txt"), 1u);
}

// A binary whose output is a link (to a secret, say): never read, never kept, removed.
TEST(Reliability2Gate, AResultsFileThatIsALinkIsRemovedNotKept) {
  Gate g;
  g.fs.add("baselines/nvidia-h200/quick.json", results({{"k/a", 100.0}}));
  g.bin.link = true;
  g.bin.text = "secret";
  const CliRun r = g.gate("baselines");
  EXPECT_NE(r.status, gc::ExitStatus::Ok);
  EXPECT_NE(r.io.out.find("symbolic link"), std::string::npos) << r.io.out;
  for (const auto& [path, text] : g.fs.files) {
    EXPECT_FALSE(path.ends_with(".unreadable")) << path;
    EXPECT_NE(text, "secret") << path;
  }
}

// Unreadable output: a copy of its bytes is kept in logs/, the temporary is gone.
TEST(Reliability2Gate, AnUnreadableResultsFileIsKeptAsACopy) {
  Gate g;
  g.fs.add("baselines/nvidia-h200/quick.json", results({{"k/a", 100.0}}));
  g.bin.text = "{not json";
  (void)g.gate("baselines");
  ASSERT_EQ(g.fs.files.count("o4/logs/bench_a.json.unreadable"), 1u);
  EXPECT_EQ(g.fs.files.at("o4/logs/bench_a.json.unreadable"), "{not json");
}

// The real disk: a log or a runner temp is never written through a link a binary left.
TEST(Reliability2Gate, LogsAndRunnerFilesNeverFollowALink) {
  TempDir d("gpucheck-r2");
  write_file(d / "secret", "keep");
  ASSERT_EQ(::symlink((d / "secret").c_str(), (d / "x.log").c_str()), 0);
  gc::RealFileSystem real;
  EXPECT_FALSE(real.write(d / "x.log", "overwritten").ok());
  EXPECT_TRUE(real.is_link(d / "x.log"));
  gc::PosixProcessRunner runner;
  gc::ProcessSpec spec;
  spec.program = "/bin/sh";
  spec.args = {"-c", "echo overwritten >&2"};
  spec.stdout_path = d / "out.log";
  spec.stderr_path = d / "x.log";
  spec.timeout_s = 10;
  EXPECT_EQ(runner.run(spec).end, gc::ProcessResult::End::CouldNotStart);
  EXPECT_EQ(slurp(d / "secret"), "keep");
}

// ---- 2: strings taken whole -------------------------------------------------------------

TEST(Reliability2Strings, ANulInANameIsRefusedNamingIt) {
  const auto r = gc::parse_results(results({{"k/a\\u0000pcie", 100.0}}), "n.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().where, "n.json");
  EXPECT_NE(r.error().message.find("NUL"), std::string::npos) << r.error().message;
  const auto rn = gc::parse_results(
      R"({"benchmarks": [{"name": "k", "run_name": "k\u0000x", "real_time": 1, "time_unit": "us"}]})", "n.json");
  EXPECT_FALSE(rn.ok());
}

TEST(Reliability2Strings, ABlankNameIsRefused) {
  for (const char* name : {"   ", "\\t", " \\n "}) {
    const auto r = gc::parse_results(results({{name, 100.0}}), "n.json");
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_NE(r.error().message.find("whitespace"), std::string::npos) << r.error().message;
  }
}

TEST(Reliability2Strings, ANulInAContextLabelIsRefused) {
  const auto r = gc::parse_results(results({{"k/a", 100.0}}, R"("gpu_label": "H200\u0000 spoof")"), "c.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("NUL"), std::string::npos);
}

// Repro: "*\u0000pcie/..." was cut to "*": every case report-only, any regression passed.
TEST(Reliability2Strings, ANulInAThresholdsGlobIsExitTwo) {
  const auto t = gc::parse_thresholds(
      R"({"report_only": [{"glob": "*\u0000pcie/*", "cv_pct": 5, "why": "x"}]})", "thresholds.json");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().where, "thresholds.json");
  EXPECT_NE(t.error().message.find("NUL"), std::string::npos) << t.error().message;
  EXPECT_FALSE(gc::parse_thresholds(R"({"overrides": [{"glob": "  ", "pct": 5}]})", "t.json").ok());
}

// ---- 3: the figure from the repetitions ---------------------------------------------------

// Repro: five at ~130 us plus a median entry of 100 read "+0.00% ok" against a baseline of 100.
TEST(Reliability2Aggregates, AMedianThatContradictsItsRepetitionsIsRefused) {
  const auto r = gc::parse_results(with_aggregates({130.1, 129.8, 130.4, 130.0, 129.9}, {{"median", "100"}}), "m.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("median"), std::string::npos) << r.error().message;
  const auto mean = gc::parse_results(with_aggregates({130.0, 132.0}, {{"mean", "131.5"}}), "m.json");
  EXPECT_FALSE(mean.ok());
}

// Within the printed precision the aggregate agrees; the figure is still the repetitions'.
TEST(Reliability2Aggregates, TheFigureIsTheRepetitionsMedian) {
  const auto r = gc::parse_results(with_aggregates({130.1, 130.2, 130.4}, {{"median", "130"}, {"mean", "130.2"}, {"cv", "0.001"}}),
                                   "m.json");
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_EQ(r->benchmarks.size(), 1u);
  EXPECT_DOUBLE_EQ(r->benchmarks[0].real_time_ns, 130200.0);
  // Printed to two decimals, 130.23 is 130.2333... rounded: agrees.
  EXPECT_TRUE(gc::parse_results(with_aggregates({130.1, 130.2, 130.4}, {{"mean", "130.23"}}), "m.json").ok());
  // One step past the precision does not.
  EXPECT_FALSE(gc::parse_results(with_aggregates({130.1, 130.2, 130.4}, {{"median", "130.3"}}), "m.json").ok());
  // Aggregates alone (report_aggregates_only): the median is the figure.
  const auto only = gc::parse_results(with_aggregates({}, {{"median", "90"}, {"mean", "91"}}), "m.json");
  ASSERT_TRUE(only.ok()) << only.error().str();
  EXPECT_DOUBLE_EQ(only->benchmarks[0].real_time_ns, 90000.0);
}

// ---- 4: the loader keeps refusing duplicate keys at any size -----------------------------

TEST(Reliability2Loader, ADuplicateKeyInALargeObjectIsFoundAndPlaced) {
  std::string e = R"({"name": "k/a", "real_time": 1, "time_unit": "us")";
  for (int i = 0; i < 5000; ++i) e += ", \"c" + std::to_string(i) + "\": 1";
  const std::string ok = R"({"benchmarks": [{"name": "k/b", "real_time": 1, "time_unit": "us"}, )" + e + "}]}";
  const auto fine = gc::parse_results(ok, "big.json");
  ASSERT_TRUE(fine.ok()) << fine.error().str();
  EXPECT_EQ(fine->find("k/a")->counters.size(), 5000u);
  const auto dup = gc::parse_results(R"({"benchmarks": [{"name": "k/b", "real_time": 1, "time_unit": "us"}, )" + e +
                                         R"(, "c17": 2}]})",
                                     "big.json");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().message.find("\"c17\" given twice in benchmarks[1]"), std::string::npos) << dup.error().message;
  const auto nested = gc::parse_results(R"({"context": {"a": 1, "b": 2, "a": 3}, "benchmarks": []})", "n.json");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.error().message.find("given twice in context"), std::string::npos) << nested.error().message;
}

// ---- 5: the smaller ones ------------------------------------------------------------------

// Repro: `--threshold 25.0000001` said "25% is above the ceiling".
TEST(Reliability2Smaller, AThresholdAboveTheCeilingIsSaidAsGiven) {
  FakeFileSystem f;
  f.add("a.json", results({{"k/a", 100.0}}));
  f.add("b.json", results({{"k/a", 100.0}}));
  const CliRun r = cli({"compare", "a.json", "b.json", "--threshold", "25.0000001", "--no-thresholds"}, f);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_NE(r.io.err.find("25.0000001%"), std::string::npos) << r.io.err;
  const auto t = gc::parse_thresholds(R"({"default_pct": 25.0000001})", "t.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("25.0000001"), std::string::npos) << t.error().message;
}

// Repro: a FIFO or a link loop inside a results folder read "not a .json results file".
TEST(Reliability2Smaller, AFifoOrALinkLoopInAResultsFolderIsNamedForWhatItIs) {
  TempDir d("gpucheck-r2");
  std::filesystem::create_directory(d / "r");
  write_file(d / "r/a.json", results({{"k/a", 100.0}}));
  ASSERT_EQ(::mkfifo((d / "r/b.json").c_str(), 0600), 0);
  gc::RealFileSystem real;
  auto fifo = gc::load_results(real, d / "r");
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.error().where, d / "r/b.json");
  EXPECT_NE(fifo.error().message.find("FIFO"), std::string::npos) << fifo.error().message;
  ASSERT_EQ(::unlink((d / "r/b.json").c_str()), 0);
  ASSERT_EQ(::symlink("c.json", (d / "r/c.json").c_str()), 0);
  auto loop = gc::load_results(real, d / "r");
  ASSERT_FALSE(loop.ok());
  EXPECT_EQ(loop.error().where, d / "r/c.json");
  EXPECT_NE(loop.error().message.find("link loop"), std::string::npos) << loop.error().message;
}

// ---- 6: one Markdown escaper, one HTML escaper ---------------------------------------------

TEST(Reliability2Escaping, MarkdownEscaperDisarmsHtmlLinksBarsAndUnicodeBreaks) {
  const std::string md = gc::escape_markdown_cell("<img onerror=x> [l](u) | a\xC2\x85" "b\xE2\x80\xA8" "c\n");
  EXPECT_FALSE(raw_in_markdown(md, "<img")) << md;
  EXPECT_FALSE(raw_in_markdown(md, "[l]")) << md;
  EXPECT_FALSE(raw_in_markdown(md, "|")) << md;
  EXPECT_EQ(md.find("\xC2\x85"), std::string::npos) << md;
  EXPECT_EQ(md.find("\xE2\x80\xA8"), std::string::npos) << md;
  EXPECT_EQ(md.find('\n'), std::string::npos) << md;
  EXPECT_EQ(md, "\\<img onerror=x\\> \\[l\\](u) \\| a b c ");
  EXPECT_EQ(gc::escape_html("<img onerror=x>\xC2\x85&\""), "&lt;img onerror=x&gt; &amp;&quot;");
  EXPECT_EQ(gc::markdown_code("a`b\xC2\x85"), "`a'b `");
}

// A hostile gpu_name as a report's column label: escaped in every line of Markdown and HTML.
TEST(Reliability2Escaping, AReportLabelIsEscapedInMarkdownAndHtml) {
  FakeFileSystem f;
  const std::string hostile = R"("gpu_name": "<img onerror=x> [l](u) | \u0085")";
  f.add("a.json", results({{"k/a", 100.0}}));
  std::string b = results({{"k/a", 120.0}});
  b.replace(b.find(R"("gpu_name": "NVIDIA H200")"), std::string(R"("gpu_name": "NVIDIA H200")").size(), hostile);
  f.add("b.json", b);
  f.add("c.json", b);
  const CliRun r = cli({"report", "b.json", "a.json", "c.json", "--markdown", "r.md", "--html", "r.html"}, f);
  ASSERT_EQ(r.status, gc::ExitStatus::Ok) << r.io.err;
  const std::string& md = f.files.at("r.md");
  EXPECT_FALSE(raw_in_markdown(md, "<img")) << md;
  EXPECT_FALSE(raw_in_markdown(md, "[l]")) << md;
  EXPECT_EQ(md.find("\xC2\x85"), std::string::npos);
  const std::string& html = f.files.at("r.html");
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("&lt;img onerror=x&gt;"), std::string::npos);
  EXPECT_EQ(html.find("\xC2\x85"), std::string::npos);
}

}  // namespace
