// Issue 18: nothing lost, nothing silently wrong. One test (or more) per numbered item of the
// issue, its repro in the name or the comment: on the fake file system where the command has
// one, on the real one (a temp folder, mknod, mkfifo, symbolic links) where the kind of the
// node is the point. Devices are only ever made with mknod inside the temp folder.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "base/output.hpp"
#include "cli/cli.hpp"
#include "fake_fs.hpp"
#include "results/json_text.hpp"
#include "results/results.hpp"
#include "rules/thresholds.hpp"

namespace gc = gpucheck::compare;
namespace fs = std::filesystem;
using gpucheck::compare::testing::FakeFileSystem;
using gpucheck::testutil::cli;
using gpucheck::testutil::CliRun;
using gpucheck::testutil::fixture;
using gpucheck::testutil::slurp;
using gpucheck::testutil::TempDir;

namespace {

// A fake disk holding the crafted pair as base.json and cur.json.
void add_pair(FakeFileSystem& f) {
  f.add("base.json", slurp(fixture("crafted/baseline.json")));
  f.add("cur.json", slurp(fixture("crafted/slower_11pct.json")));
}

// ---- item 1: an output path is replaced whatever it is ------------------------------------

// Repro: `mknod /tmp/x/mynull c 1 3; gpucheck compare A B --format json --out /tmp/x/mynull`
// left a regular file there. A character device is written in place and stays one.
TEST(Issue18Outputs, CharacterDeviceAsOutStaysACharacterDevice) {
  TempDir d("gpucheck-io");
  const std::string node = d / "mynull";
  if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "mknod needs root";
  gc::RealFileSystem real;
  const CliRun r = cli({"compare", fixture("crafted/baseline.json"), fixture("crafted/slower_11pct.json"), "--format", "json", "--out", node},
                    real);
  EXPECT_EQ(r.status, gc::ExitStatus::Regression) << r.io.err;
  struct stat st {};
  ASSERT_EQ(::lstat(node.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(d.names(), std::vector<std::string>{"mynull"});  // no temp left beside it
}

// The same through a link: `ln -s /proc/self/fd/1 /tmp/x/o` is written as standard output.
TEST(Issue18Outputs, LinkToStandardOutputIsStandardOutput) {
  TempDir d("gpucheck-io");
  const std::string link = d / "o";
  ASSERT_EQ(::symlink("/proc/self/fd/1", link.c_str()), 0);
  gc::RealFileSystem real;
  EXPECT_TRUE(gc::is_standard_output(real, link));
  const CliRun r = cli({"compare", fixture("crafted/baseline.json"), fixture("crafted/slower_11pct.json"), "--format", "json", "--out", link},
                    real);
  EXPECT_EQ(r.status, gc::ExitStatus::Regression) << r.io.err;
  // stdout holds exactly the JSON; the terminal table went to stderr.
  EXPECT_TRUE(nlohmann::json::accept(r.io.out)) << r.io.out.substr(0, 200);
  EXPECT_NE(r.io.err.find("REGRESSION"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST(Issue18Outputs, DashIsStandardOutputAndTheTableGoesToStderr) {
  FakeFileSystem f;
  add_pair(f);
  const CliRun r = cli({"compare", "base.json", "cur.json", "--format", "json", "--out", "-"}, f);
  EXPECT_TRUE(nlohmann::json::accept(r.io.out));
  EXPECT_FALSE(r.io.err.empty());
  EXPECT_EQ(f.files.count("-"), 0U);
}

TEST(Issue18Outputs, FifoAndDeviceOnTheFakeAreWrittenInPlace) {
  FakeFileSystem f;
  add_pair(f);
  f.fifos.insert("pipe");
  const CliRun r = cli({"report", "base.json", "--markdown", "pipe"}, f);
  EXPECT_EQ(r.status, gc::ExitStatus::Ok) << r.io.err;
  EXPECT_EQ(f.files.count("pipe"), 0U);
  EXPECT_NE(f.written_in_place["pipe"].find("|"), std::string::npos);
}

// A FIFO with no reader: exit 2, one line, never a hang.
TEST(Issue18Outputs, FifoWithNoReaderIsExit2NotAHang) {
  TempDir d("gpucheck-io");
  const std::string fifo = d / "f";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  gc::RealFileSystem real;
  const CliRun r = cli({"report", fixture("crafted/baseline.json"), "--markdown", fifo}, real);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_NE(r.io.err.find("no reader"), std::string::npos) << r.io.err;
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(Issue18Outputs, FolderAsOutputIsRefusedBeforeReading) {
  FakeFileSystem f;
  add_pair(f);
  f.dirs.insert("out");
  const CliRun r = cli({"compare", "base.json", "cur.json", "--out", "out"}, f);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_NE(r.io.err.find("is a folder"), std::string::npos) << r.io.err;
}

// ---- item 2: an output that is also an input ----------------------------------------------

// Repro: `compare base.json cur.json --format markdown --out base.json` turned the baseline
// into Markdown.
TEST(Issue18Outputs, OutputNamingAnInputIsExit2AndTheInputIsUntouched) {
  FakeFileSystem f;
  add_pair(f);
  const std::string before = f.files["base.json"];
  const CliRun r = cli({"compare", "base.json", "cur.json", "--format", "markdown", "--out", "./base.json"}, f);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_NE(r.io.err.find("names an input"), std::string::npos) << r.io.err;
  EXPECT_EQ(f.files["base.json"], before);
  EXPECT_EQ(f.writes, 0);
}

TEST(Issue18Outputs, ReportOutputNamingAnInputIsExit2) {
  FakeFileSystem f;
  add_pair(f);
  const CliRun r = cli({"report", "base.json", "cur.json", "--html", "cur.json"}, f);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(f.writes, 0);
}

// Repro: `report ... --html F --markdown F` kept the last one.
TEST(Issue18Outputs, TwoOutputsNamingOneFileIsExit2) {
  FakeFileSystem f;
  add_pair(f);
  const CliRun r = cli({"report", "base.json", "--html", "r.out", "--markdown", "r.out"}, f);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_NE(r.io.err.find("name one file"), std::string::npos) << r.io.err;
  const CliRun two = cli({"report", "base.json", "--html", "-", "--markdown", "-"}, f);
  EXPECT_EQ(two.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(f.writes, 0);
}

TEST(Issue18Outputs, OutputAndInputThroughALinkAreOneFile) {
  TempDir d("gpucheck-io");
  fs::copy_file(fixture("crafted/baseline.json"), d / "base.json");
  ASSERT_EQ(::symlink((d / "base.json").c_str(), (d / "alias.json").c_str()), 0);
  gc::RealFileSystem real;
  const CliRun r = cli({"compare", d / "base.json", fixture("crafted/slower_11pct.json"), "--out", d / "alias.json"}, real);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput) << r.io.err;
  EXPECT_EQ(slurp(d / "base.json"), slurp(fixture("crafted/baseline.json")));
}

TEST(Issue18Outputs, StepSummaryNamingAnInputIsExit2) {
  FakeFileSystem f;
  add_pair(f);
  gc::CliEnvironment env;
  env.step_summary_path = "base.json";
  const CliRun r = cli({"compare", "base.json", "cur.json"}, f, env);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(f.files["base.json"], slurp(fixture("crafted/baseline.json")));
}

// ---- item 3: duplicate keys ---------------------------------------------------------------

// Repro: a second "real_time" key in a results entry overrode the first (a user counter named
// real_time would do it without anyone noticing).
TEST(Issue18Inputs, DuplicateRealTimeInAResultsEntryIsAnError) {
  const std::string text = R"({"benchmarks": [{"name": "a", "run_type": "iteration", "iterations": 1,
    "real_time": 10, "cpu_time": 10, "time_unit": "ns", "real_time": 1}]})";
  auto r = gc::parse_results(text, "dup.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().str().find("dup.json: key \"real_time\" given twice in benchmarks[0]"), std::string::npos)
      << r.error().str();
}

TEST(Issue18Inputs, DuplicateKeysInThresholdsAreStillAnError) {
  auto t = gc::parse_thresholds(R"({"default_pct": 10, "default_pct": 50})", "t.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().str().find("\"default_pct\" given twice"), std::string::npos) << t.error().str();
}

// ---- item 4: a FIFO as a configuration file ------------------------------------------------

// Repro: `mkfifo f; timeout 5 gpucheck compare A B --thresholds f` exited 124.
TEST(Issue18Inputs, FifoAsThresholdsConfigOrSpecsIsRefusedAtOnce) {
  TempDir d("gpucheck-io");
  const std::string fifo = d / "f";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  gc::RealFileSystem real;
  const CliRun t = cli({"compare", fixture("crafted/baseline.json"), fixture("crafted/slower_9pct.json"), "--thresholds", fifo}, real);
  EXPECT_EQ(t.status, gc::ExitStatus::BadInput);
  EXPECT_NE(t.io.err.find("is a FIFO"), std::string::npos) << t.io.err;
  for (const char* opt : {"--config", "--specs"}) {
    const CliRun a = cli({"accept", "--results", fixture("accept/h200_gpu0.json"), opt, fifo}, real);
    EXPECT_EQ(a.status, gc::ExitStatus::BadInput) << opt;
    EXPECT_NE(a.io.err.find("is a FIFO"), std::string::npos) << a.io.err;
  }
}

// GITHUB_STEP_SUMMARY is an output that is appended to: a FIFO with no reader is skipped with
// a warning, the verdict stands.
TEST(Issue18Outputs, FifoAsStepSummaryIsSkippedWithAWarning) {
  TempDir d("gpucheck-io");
  const std::string fifo = d / "summary";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  gc::RealFileSystem real;
  gc::CliEnvironment env;
  env.step_summary_path = fifo;
  const CliRun r = cli({"compare", fixture("crafted/baseline.json"), fixture("crafted/slower_9pct.json")}, real, env);
  EXPECT_EQ(r.status, gc::ExitStatus::Ok);
  EXPECT_NE(r.io.err.find("warning: GITHUB_STEP_SUMMARY not written"), std::string::npos) << r.io.err;
}

// ---- item 5: lenient fields ---------------------------------------------------------------

std::string entry(const std::string& fields) {
  return R"({"benchmarks": [{"name": "a", "run_type": "iteration", "iterations": 1, "real_time": 10,
    "cpu_time": 10, "time_unit": "ns")" +
         fields + "}]}";
}

// Repro: `error_occurred: "yes"` was read as not errored and the case passed.
TEST(Issue18Inputs, VerdictFieldsHaveStrictTypes) {
  const std::vector<std::pair<std::string, std::string>> bad{
      {R"(, "error_occurred": "yes")", "error_occurred is a string"},
      {R"(, "skipped": "true")", "skipped is a string"},
      {R"(, "error_occurred": 1)", "error_occurred is a number"},
      {R"(, "threads": "1")", "threads is a string"},
      {R"(, "repetitions": 1.5)", "repetitions is not a whole number"},
      {R"(, "repetitions": 1, "repetition_index": 5)", "repetition_index 5 is not below repetitions 1"},
  };
  for (const auto& [fields, want] : bad) {
    auto r = gc::parse_results(entry(fields), "x.json");
    ASSERT_FALSE(r.ok()) << fields;
    EXPECT_NE(r.error().str().find(want), std::string::npos) << r.error().str();
  }
  auto s = gc::parse_results(R"({"benchmarks": [{"name": "a", "iterations": "1000", "real_time": 10, "time_unit": "ns"}]})", "x.json");
  EXPECT_FALSE(s.ok());
  auto c = gc::parse_results(R"({"benchmarks": [{"name": "a", "cpu_time": "10", "real_time": 10, "time_unit": "ns"}]})", "x.json");
  EXPECT_FALSE(c.ok());
  EXPECT_TRUE(gc::parse_results(entry(R"(, "error_occurred": false, "skipped": false, "repetitions": 2, "repetition_index": 1)"),
                                "ok.json")
                  .ok());
}

// ---- item 6: unclear messages -------------------------------------------------------------

TEST(Issue18Messages, MetricTypoSuggestsTheCounter) {
  FakeFileSystem f;
  add_pair(f);
  for (const char* m : {"TFLOP", "tflops"}) {
    const CliRun r = cli({"compare", "base.json", "cur.json", "--metric", m}, f);
    EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
    EXPECT_NE(r.io.err.find("did you mean TFLOPS?"), std::string::npos) << r.io.err;
  }
}

// Repro: `report --metric nosuch` exited 0 with "no nosuch" in every cell.
TEST(Issue18Messages, ReportMetricNobodyHasIsExit2NamingTheCounters) {
  FakeFileSystem f;
  f.add("a.json", slurp(fixture("accept/h200_gpu0.json")));
  const CliRun r = cli({"report", "a.json", "--metric", "nosuch"}, f);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_NE(r.io.err.find("counters there: "), std::string::npos) << r.io.err;
  EXPECT_NE(r.io.err.find("GBps"), std::string::npos) << r.io.err;
}

// Repro: a symlink loop read "no such file or folder".
TEST(Issue18Messages, SymlinkLoopIsNamedAsOne) {
  TempDir d("gpucheck-io");
  ASSERT_EQ(::symlink((d / "b").c_str(), (d / "a").c_str()), 0);
  ASSERT_EQ(::symlink((d / "a").c_str(), (d / "b").c_str()), 0);
  gc::RealFileSystem real;
  const CliRun r = cli({"compare", d / "a", fixture("crafted/baseline.json")}, real);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_NE(r.io.err.find("symbolic link loop"), std::string::npos) << r.io.err;
}

// Issue 36: a results file is mapped, not copied; one truncated under the loader would raise
// SIGBUS. It reads zeros past its new end and is refused for what happened, one line, exit 2.
TEST(Issue36Inputs, FileCutWhileLoadingIsRefusedNotACrash) {
  TempDir d("gpucheck-io");
  const std::string text = slurp(fixture("crafted/baseline.json"));
  ASSERT_EQ(text.front(), '{');
  const std::string padded = "{" + std::string(std::size_t{1} << 16, ' ') + text.substr(1);  // pages past the cut
  std::ofstream(d / "r.json") << padded;
  FakeFileSystem f;
  f.add("cur.json", text);
  f.add("base.json", "");
  f.cut_after_map["base.json"] = {d / "r.json", 100};
  const auto r = gc::load_results(f, "base.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().where, "base.json");
  EXPECT_EQ(r.error().message, "the file shrank while it was being read");
  std::ofstream(d / "r.json") << padded;
  const CliRun c = cli({"compare", "base.json", "cur.json"}, f);
  EXPECT_EQ(c.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(std::count(c.io.err.begin(), c.io.err.end(), '\n'), 1) << c.io.err;
  std::ofstream(d / "r.json") << padded;
  f.cut_after_map["base.json"].second = padded.size();  // not cut: the mapped file loads whole
  const auto whole = gc::load_results(f, "base.json");
  ASSERT_TRUE(whole.ok()) << whole.error().str();
  EXPECT_EQ(whole->benchmarks.size(), gc::parse_results(text, "x").value().benchmarks.size());
}

// Repro: `--out missing/x.md` named the temporary file, not x.md.
TEST(Issue18Messages, MissingFolderOfAnOutputNamesTheOutput) {
  TempDir d("gpucheck-io");
  gc::RealFileSystem real;
  const std::string out = d / "missing/x.md";
  const CliRun r = cli({"compare", fixture("crafted/baseline.json"), fixture("crafted/slower_9pct.json"), "--format", "markdown", "--out", out},
                    real);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_NE(r.io.err.find(out + ": cannot write: its folder"), std::string::npos) << r.io.err;
  EXPECT_EQ(r.io.err.find(".tmp-"), std::string::npos) << r.io.err;
}

// Repro: `report` and `accept --results` on a gate --out folder exited 2 on compare.json.
TEST(Issue18Messages, GateOutFolderReadsAsItsResults) {
  FakeFileSystem f;
  const std::string results = slurp(fixture("accept/h200_gpu0.json"));
  f.add("gate/results.json", results);
  f.add("gate/compare.json", R"({"rows": []})");
  f.add("gate/compare.md", "| x |");
  f.add("gate/junit.xml", "<x/>");
  f.add("gate/runs/bench_pcie.json", results);
  f.add("gate/logs/bench_pcie.log", "log");
  const CliRun rep = cli({"report", "gate"}, f);
  EXPECT_EQ(rep.status, gc::ExitStatus::Ok) << rep.io.err;
  const CliRun acc = cli({"accept", "--results", "gate"}, f);
  EXPECT_NE(acc.status, gc::ExitStatus::BadInput) << acc.io.err;
}

// Repro: U+202E in a name reached the terminal and the Markdown raw.
TEST(Issue18Messages, BidirectionalControlsAreMadeVisible) {
  const std::string text = "{\"benchmarks\": [{\"name\": \"evil\xE2\x80\xAEgnp.exe\", \"real_time\": 10, \"time_unit\": \"ns\"}]}";
  auto r = gc::parse_results(text, "bidi.json");
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->benchmarks[0].name, "evil\\u202egnp.exe");
  EXPECT_EQ(gc::visible_text("a\xE2\x81\xA6z"), "a\\u2066z");
  EXPECT_EQ(gc::visible_text("caf\xC3\xA9"), "caf\xC3\xA9");  // other UTF-8 stays
}

// Repro: a baseline real_time of 1e-320 printed "0.000 ns, +inf%".
TEST(Issue18Messages, SubnormalTimeIsRefused) {
  auto r = gc::parse_results(R"({"benchmarks": [{"name": "a", "real_time": 1e-320, "time_unit": "ns"}]})", "tiny.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().str().find("too small to be a measured time"), std::string::npos) << r.error().str();
}

// ---- item 7: litter -----------------------------------------------------------------------

// Repro: compare killed mid-write left `.NAME.tmp-PID`. A temp of a writer that is gone is
// removed when the same output is next written; the output itself is then in place.
TEST(Issue18Litter, StaleTempOfADeadWriterIsRemovedOnTheNextWrite) {
  TempDir d("gpucheck-io");
  const std::string out = d / "c.md";
  // A PID that does not exist: above the kernel's pid_max.
  std::ofstream(d / ".c.md.tmp-2147483000") << "half";
  std::ofstream(d / ".other.md.tmp-2147483000") << "not ours";
  gc::RealFileSystem real;
  const CliRun r = cli({"compare", fixture("crafted/baseline.json"), fixture("crafted/slower_9pct.json"), "--format", "markdown", "--out", out},
                    real);
  EXPECT_EQ(r.status, gc::ExitStatus::Ok) << r.io.err;
  std::vector<std::string> names = d.names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{".other.md.tmp-2147483000", "c.md"}));
}

}  // namespace

// Issue 35: report run where no specs.json is found says so in one line (a warning: the report
// stands, without % of spec); one found in a checkout's baselines/ is used silently.
TEST(Issue35Specs, ReportWithoutSpecsSaysPercentOfSpecIsLeftOut) {
  FakeFileSystem f;
  add_pair(f);
  const CliRun none = cli({"report", "base.json", "cur.json"}, f);
  EXPECT_EQ(none.status, gc::ExitStatus::Ok) << none.io.err;
  EXPECT_EQ(std::count(none.io.err.begin(), none.io.err.end(), '\n'), 1) << none.io.err;
  EXPECT_NE(none.io.err.find("% of spec is left out; pass --specs FILE"), std::string::npos) << none.io.err;
  EXPECT_NE(none.io.err.find("baselines/specs.json"), std::string::npos) << none.io.err;  // where it looked
  f.add("baselines/specs.json", slurp(gpucheck::testutil::source_path("baselines/specs.json")));
  const CliRun found = cli({"report", "base.json", "cur.json"}, f);
  EXPECT_EQ(found.status, gc::ExitStatus::Ok) << found.io.err;
  EXPECT_TRUE(found.io.err.empty()) << found.io.err;
  const CliRun bad = cli({"report", "base.json", "cur.json", "--specs", "nosuch.json"}, f);
  EXPECT_EQ(bad.status, gc::ExitStatus::BadInput);  // named and missing: an error, not a warning
}
