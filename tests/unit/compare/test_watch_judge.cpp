// gpucheck watch --judge: a recorded watch.json judged again with today's rules. The H200's
// recorded timelines (fixtures/watch/h200) keep their verdicts: the five check-up workloads and
// the ResNet-50 steps of 2026-12-01, and issue 41's of 2026-12-03 (a disk-fed loop, a loop
// checkpointing to disk, a command failing at once, the ResNet-50 step launched under watch and
// the same step attached to with --pid). A
// record this machine makes (no NVML: host only) of a command that fails at once has no verdict.
// The output folder is never the record's own, and a record that cannot be read is exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "watch/command.hpp"
#include "watch/record.hpp"
#include "watch_cli.hpp"

namespace gpucheck::compare {
namespace {

using Judged = testing::WatchCli;

Judged run(const std::vector<std::string>& tail) {
  WatchDeps deps;
  deps.nvml_error = testing::kNoNvml;
  return testing::watch_cli(tail, deps);
}

nlohmann::json read_json(const std::filesystem::path& p) { return nlohmann::json::parse(testutil::slurp(p.string())); }

struct Recorded {
  const char* name;
  const char* bound;
};

class WatchJudgeRecorded : public ::testing::TestWithParam<Recorded> {};

TEST_P(WatchJudgeRecorded, KeepsItsVerdict) {
  const std::string in = testutil::fixture(std::string("watch/h200/") + GetParam().name + ".json");
  testutil::TempDir tmp("gpucheck-watch-judge");
  const auto out = tmp.path() / "judged";
  const Judged j = run({"--judge", in, "--out", out.string()});
  ASSERT_EQ(j.status, 0) << j.err;
  const auto before = read_json(in), after = read_json(out / "watch.json");
  EXPECT_EQ(after["verdict"]["bound"], GetParam().bound);
  EXPECT_EQ(after["verdict"]["bound"], before["verdict"]["bound"]);
  EXPECT_EQ(after["verdict"]["headline"], before["verdict"]["headline"]);
  // The timeline comes through whole.
  EXPECT_EQ(after["gpus"][0]["timeline"]["util_pct"], before["gpus"][0]["timeline"]["util_pct"]);
  EXPECT_EQ(after["host"]["t_s"], before["host"]["t_s"]);
  EXPECT_EQ(after["exit_status"], before["exit_status"]);
  EXPECT_EQ(after["verdict"]["host"]["cores"], before["verdict"]["host"]["cores"]);
  EXPECT_TRUE(std::filesystem::exists(out / "results.json"));
  EXPECT_TRUE(std::filesystem::exists(out / "watch.html"));
  EXPECT_EQ(j.out.rfind("gpucheck watch: ", 0), 0u);
}

INSTANTIATE_TEST_SUITE_P(H200, WatchJudgeRecorded,
                         ::testing::Values(Recorded{"gemm", "compute_bound"}, Recorded{"tiny_kernels", "launch_bound"},
                                           Recorded{"starved", "starved"}, Recorded{"h2d", "pcie_bound"},
                                           Recorded{"hbm_copy", "memory_bound"}, Recorded{"train_starved", "starved"},
                                           Recorded{"train_step", "compute_bound"},
                                           Recorded{"train_starved_steps", "starved"},
                                           // issue 41's recordings (2026-12-03, H200, ci/watch2 workloads)
                                           Recorded{"disk_fed", "starved"}, Recorded{"checkpoint", "stalled"},
                                           Recorded{"fail_fast", "no_verdict"}, Recorded{"train_launched", "compute_bound"},
                                           Recorded{"train_attached", "compute_bound"},
                                           // a fresh H200: 5 s of set-up (util 2%, then 0%) before the first GEMM
                                           Recorded{"gemm_cold_start", "compute_bound"}),
                         [](const ::testing::TestParamInfo<Recorded>& i) { return std::string(i.param.name); });

TEST(WatchJudge, AStepsRecordKeepsItsCaseForCompare) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  const Judged j = run({"--judge", testutil::fixture("watch/h200/train_step.json"), "--out", (tmp.path() / "j").string()});
  ASSERT_EQ(j.status, 0) << j.err;
  const auto before = read_json(testutil::fixture("watch/h200/train_step.json"));
  const auto after = read_json(tmp.path() / "j" / "watch.json");
  EXPECT_EQ(after["steps"]["ms"], before["steps"]["ms"]);  // not split into warm-up again
  EXPECT_EQ(after["steps"]["warmup"], before["steps"]["warmup"]);
  EXPECT_EQ(after["verdict"]["gpus"][0]["window"], "steps");
  const auto res = read_json(tmp.path() / "j" / "results.json");
  EXPECT_EQ(res["benchmarks"].back()["run_type"], "aggregate");
}

// A record made here (no NVML) of a command that fails at once: watch's own verdict, then again.
TEST(WatchJudge, AFailedCommandHasNoVerdictLaunchedAndJudged) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  const auto rec = tmp.path() / "rec";
  const Judged launched = run({"--out", rec.string(), "--interval", "20", "--", "sh", "-c",
                               "echo \"ModuleNotFoundError: No module named 'torch'\" >&2; exit 2"});
  EXPECT_EQ(launched.status, 2);  // the command's status, passed through
  EXPECT_EQ(launched.out.rfind("gpucheck watch: no verdict: the command exited 2 after ", 0), 0u) << launched.out;
  EXPECT_NE(launched.out.find("s: ModuleNotFoundError: No module named 'torch'\n"), std::string::npos) << launched.out;
  EXPECT_NE(launched.out.find("\n  note: no GPU was sampled (cannot load NVML"), std::string::npos) << launched.out;
  const auto w = read_json(rec / "watch.json");
  EXPECT_EQ(w["verdict"]["bound"], "no_verdict");
  EXPECT_EQ(w["last_stderr_line"], "ModuleNotFoundError: No module named 'torch'");
  EXPECT_TRUE(w["verdict"]["host_symptoms"].empty());
  const Judged again = run({"--judge", (rec / "watch.json").string(), "--out", (tmp.path() / "again").string()});
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(read_json(tmp.path() / "again" / "watch.json")["verdict"]["headline"], w["verdict"]["headline"]);
}

TEST(WatchJudge, NeverWritesIntoTheRecordsFolder) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  const auto rec = tmp.path() / "rec";
  std::filesystem::create_directories(rec);
  std::filesystem::copy_file(testutil::fixture("watch/h200/gemm.json"), rec / "watch.json");
  const std::string before = testutil::slurp((rec / "watch.json").string());
  const Judged j = run({"--judge", (rec / "watch.json").string(), "--out", rec.string()});
  EXPECT_EQ(j.status, 2);
  EXPECT_EQ(std::count(j.err.begin(), j.err.end(), '\n'), 1) << j.err;  // one line
  EXPECT_NE(j.err.find("watch.json"), std::string::npos) << j.err;
  EXPECT_EQ(testutil::slurp((rec / "watch.json").string()), before);  // untouched
  EXPECT_FALSE(std::filesystem::exists(rec / "results.json"));
}

TEST(WatchJudge, AnUnreadableRecordIsExit2AndOneLine) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  const auto write = [&](const char* name, const std::string& text) {
    const auto p = tmp.path() / name;
    std::FILE* f = std::fopen(p.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return p.string();
  };
  const std::vector<std::string> bad{
      (tmp.path() / "missing.json").string(),
      write("empty.json", ""),
      write("truncated.json", "{\"gpucheck_watch_version\": 1, \"command\": [\"x\""),
      write("other.json", "{\"benchmarks\": []}"),
      write("nan.json", "{\"gpucheck_watch_version\": 1, \"duration_s\": NaN}"),
      write("types.json", "{\"gpucheck_watch_version\": 1, \"command\": \"x\", \"name\": \"w\", \"duration_s\": 1, "
                          "\"exit_status\": 0, \"gpus\": [], \"host\": {\"t_s\": []}}"),
      write("column.json", "{\"gpucheck_watch_version\": 1, \"command\": [\"x\"], \"name\": \"w\", \"duration_s\": 1, "
                           "\"exit_status\": 0, \"gpus\": [{\"index\": 0, \"timeline\": {\"t_s\": [0.1], \"util_pct\": [\"busy\"]}}], "
                           "\"host\": {\"t_s\": []}}"),
      write("negative.json", "{\"gpucheck_watch_version\": 1, \"command\": [\"x\"], \"name\": \"w\", \"duration_s\": 1, "
                             "\"exit_status\": 0, \"gpus\": [{\"index\": 0, \"timeline\": {\"t_s\": [0.1], \"util_pct\": [-5]}}], "
                             "\"host\": {\"t_s\": []}}"),
      write("fraction.json", "{\"gpucheck_watch_version\": 1, \"command\": [\"x\"], \"name\": \"w\", \"duration_s\": 1, "
                             "\"exit_status\": 0, \"gpus\": [{\"index\": 0, \"timeline\": {\"t_s\": [0.1], \"util_pct\": [9.5]}}], "
                             "\"host\": {\"t_s\": []}}"),
  };
  for (const auto& in : bad) {
    const auto out = tmp.path() / ("out-" + std::filesystem::path(in).stem().string());
    const Judged j = run({"--judge", in, "--out", out.string()});
    EXPECT_EQ(j.status, 2) << in;
    EXPECT_EQ(std::count(j.err.begin(), j.err.end(), '\n'), 1) << in << ": " << j.err;
    EXPECT_EQ(j.err.find("gpucheck: " + in), 0u) << j.err;  // the line names the file
    EXPECT_FALSE(std::filesystem::exists(out / "watch.json")) << in;
  }
}

TEST(WatchJudge, TakesNoCommandAndNoSamplingOptions) {
  const std::string in = testutil::fixture("watch/h200/gemm.json");
  EXPECT_EQ(run({"--judge", in, "--", "true"}).status, 2);
  EXPECT_EQ(run({"--judge", in, "--step", "step ([0-9]+)"}).status, 2);
  EXPECT_EQ(run({"--judge", in, "--interval", "50"}).status, 2);
}

}  // namespace
}  // namespace gpucheck::compare

namespace gpucheck::compare {
namespace {

nlohmann::json judged(const std::string& name, const testutil::TempDir& tmp) {
  const auto out = tmp.path() / name;
  const Judged j = run({"--judge", testutil::fixture("watch/h200/" + name + ".json"), "--out", out.string()});
  EXPECT_EQ(j.status, 0) << j.err;
  return read_json(out / "watch.json");
}

// The disk-fed loop (64 MiB reads out of the page cache, a small GEMM each: 158 MB/s read, SM
// active 0%, NVML listing the job): starved, the cause named from the host side, not "idle".
TEST(WatchJudgeIssue41, TheDiskFedLoopIsStarvedByDiskReads) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  const auto v = judged("disk_fed", tmp)["verdict"];
  EXPECT_EQ(v["bound"], "starved");
  const auto& s = v["host_symptoms"];
  EXPECT_NE(std::find(s.begin(), s.end(), "disk_reads"), s.end()) << s.dump();
  EXPECT_GE(v["host"]["tree_read_MBps"].get<double>(), 50.0);
}

// The checkpointing loop (2.5 s of GEMMs, 2.5 s of fsynced writes): the stalls are the verdict,
// with the GPU busy between them; the advice is not the loader's.
TEST(WatchJudgeIssue41, TheCheckpointingLoopIsStalled) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  const auto v = judged("checkpoint", tmp)["verdict"];
  EXPECT_EQ(v["bound"], "stalled");
  const auto& st = v["gpus"][0]["stalls"];
  EXPECT_GE(st["share"].get<double>(), 0.2);
  EXPECT_GE(st["util_between_pct"].get<double>(), 80.0);
  EXPECT_TRUE(v["host_symptoms"].empty()) << v["host_symptoms"].dump();
}

// The same ResNet-50 step (bs 256, bf16, channels-last) launched under watch and attached to
// with --pid while it ran: the same verdict, step medians within 5%.
TEST(WatchJudgeIssue41, AttachingGivesTheLaunchedVerdict) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  const auto launched = judged("train_launched", tmp), attached = judged("train_attached", tmp);
  EXPECT_EQ(attached["verdict"]["bound"], launched["verdict"]["bound"]);
  EXPECT_EQ(attached["attached"]["end"], "the duration passed");
  EXPECT_EQ(attached["gpus"][0]["job_process"], true);  // NVML listed the job attached to, not only its child
  const double a = attached["verdict"]["step_median_ms"].get<double>(), l = launched["verdict"]["step_median_ms"].get<double>();
  EXPECT_NEAR(a / l, 1.0, 0.05) << a << " vs " << l;
}

// A command that failed at once on the H200 (a module missing: exit 1 after 0.1 s): no verdict,
// its status kept.
TEST(WatchJudgeIssue41, TheFailedCommandHasNoVerdict) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  const auto w = judged("fail_fast", tmp);
  EXPECT_EQ(w["verdict"]["bound"], "no_verdict");
  EXPECT_EQ(w["exit_status"], 1);
  EXPECT_TRUE(w["verdict"]["host_symptoms"].empty());
  EXPECT_LE(w["verdict"]["next_steps"].size(), 1u);  // its own error, no advice about the host
}

}  // namespace
}  // namespace gpucheck::compare

// A record taken apart: the H200's GEMM loop with one field changed. Every field the verdict
// reads has a strict type and range; a record outside them is exit 2 and one line that names the
// file and the field, and nothing is written.
namespace gpucheck::compare {
namespace {

struct Broken {
  const char* case_name;
  const char* field;      // what the error line must name
  const char* pointer;    // JSON pointer into gemm.json
  const char* value;      // JSON text put there
};

std::string write_text(const testutil::TempDir& tmp, const std::string& name, const std::string& text) {
  const auto p = tmp.path() / name;
  std::FILE* f = std::fopen(p.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return p.string();
}

nlohmann::ordered_json gemm_record() {
  return nlohmann::ordered_json::parse(testutil::slurp(testutil::fixture("watch/h200/gemm.json")));
}

void expect_refused(const std::string& in, const testutil::TempDir& tmp, const std::string& field) {
  const auto out = tmp.path() / "judged";
  const Judged j = run({"--judge", in, "--out", out.string()});
  EXPECT_EQ(j.status, 2) << in;
  EXPECT_EQ(std::count(j.err.begin(), j.err.end(), '\n'), 1) << j.err;
  EXPECT_EQ(j.err.find("gpucheck: " + in + ": "), 0u) << j.err;
  EXPECT_NE(j.err.find(field), std::string::npos) << j.err;
  EXPECT_FALSE(std::filesystem::exists(out / "watch.json"));
}

class WatchJudgeStrict : public ::testing::TestWithParam<Broken> {};

TEST_P(WatchJudgeStrict, IsExit2NamingTheField) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  auto d = gemm_record();
  d[nlohmann::ordered_json::json_pointer(GetParam().pointer)] = nlohmann::ordered_json::parse(GetParam().value);
  expect_refused(write_text(tmp, "bad.json", d.dump()), tmp, GetParam().field);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, WatchJudgeStrict,
    ::testing::Values(Broken{"ExitStatusHuge", "exit_status", "/exit_status", "1e300"},
                      Broken{"ExitStatusNegative", "exit_status", "/exit_status", "-1"},
                      Broken{"ExitStatusPast255", "exit_status", "/exit_status", "256"},
                      Broken{"ExitStatusText", "exit_status", "/exit_status", "\"0\""},
                      Broken{"DurationNegative", "duration_s", "/duration_s", "-5.0"},
                      Broken{"DurationText", "duration_s", "/duration_s", "\"5\""},
                      Broken{"IntervalZero", "interval_ms", "/interval_ms", "0"},
                      Broken{"UtilPast100", "gpus[0].timeline.util_pct[3]", "/gpus/0/timeline/util_pct/3", "1000"},
                      Broken{"UtilFraction", "gpus[0].timeline.util_pct[3]", "/gpus/0/timeline/util_pct/3", "9.5"},
                      Broken{"SmActiveFar", "gpus[0].timeline.sm_active_pct[3]", "/gpus/0/timeline/sm_active_pct/3", "250"},
                      Broken{"DramNegative", "gpus[0].timeline.dram_bw_pct[3]", "/gpus/0/timeline/dram_bw_pct/3", "-1"},
                      Broken{"PowerText", "gpus[0].timeline.power_W[3]", "/gpus/0/timeline/power_W/3", "\"700\""},
                      Broken{"MemoryPastBytes", "gpus[0].timeline.mem_used_MiB[3]", "/gpus/0/timeline/mem_used_MiB/3",
                             "18446744073709551615"},
                      Broken{"ClockNegative", "gpus[0].timeline.sm_clock_MHz[3]", "/gpus/0/timeline/sm_clock_MHz/3", "-1"},
                      Broken{"TimeGoesBack", "gpus[0].timeline.t_s[3]", "/gpus/0/timeline/t_s/3", "0.0"},
                      Broken{"ColumnShort", "gpus[0].timeline.util_pct", "/gpus/0/timeline/util_pct", "[1, 2]"},
                      Broken{"ColumnNotAList", "gpus[0].timeline.power_W", "/gpus/0/timeline/power_W", "{}"},
                      Broken{"IndexNegative", "gpus[0].index", "/gpus/0/index", "-1"},
                      Broken{"IndexFloat", "gpus[0].index", "/gpus/0/index", "0.5"},
                      Broken{"InJobNumber", "gpus[0].in_job", "/gpus/0/in_job", "1"},
                      Broken{"GpusAnObject", "gpus", "/gpus", "{}"},
                      Broken{"GpuANumber", "gpus[1]", "/gpus/1", "5"},
                      Broken{"ProcessesWrongElement", "gpus[0].processes[0]", "/gpus/0/processes", "[7]"},
                      Broken{"ProcessShareFar", "gpus[0].processes[0].sm_pct", "/gpus/0/processes",
                             R"([{"pid": 42, "job": true, "sm_pct": 400}])"},
                      Broken{"ProcessesTooMany", "gpus[0].processes", "/gpus/0/processes",
                             R"([{"pid":1,"job":true},{"pid":2,"job":true},{"pid":3,"job":true},{"pid":4,"job":true},
                                 {"pid":5,"job":true},{"pid":6,"job":true},{"pid":7,"job":true},{"pid":8,"job":true},
                                 {"pid":9,"job":true},{"pid":10,"job":true},{"pid":11,"job":true},{"pid":12,"job":true},
                                 {"pid":13,"job":true},{"pid":14,"job":true},{"pid":15,"job":true},{"pid":16,"job":true},
                                 {"pid":17,"job":true}])"},
                      Broken{"OtherProcessesNumbers", "gpus[0].other_processes[0]", "/gpus/0/other_processes", "[1]"},
                      Broken{"HostCpuPast100", "host.cpu_pct[2]", "/host/cpu_pct/2", "1000"},
                      Broken{"HostTimeMissing", "host.t_s", "/host", "{}"},
                      Broken{"StepsANumber", "steps", "/steps", "3"},
                      Broken{"StepTimesText", "steps.ms[0]", "/steps", R"({"regex": "x", "ms": ["fast"]})"},
                      Broken{"StepsWindowBackwards", "steps.to_s", "/steps", R"({"regex": "x", "from_s": 5, "to_s": 2})"},
                      Broken{"AttachedPidNegative", "attached.pid", "/attached", R"({"pid": -1, "end": "x"})"},
                      Broken{"CommandNotText", "command[0]", "/command", "[1]"},
                      Broken{"CoresNegative", "verdict.host.cores", "/verdict/host/cores", "-4"}),
    [](const ::testing::TestParamInfo<Broken>& i) { return std::string(i.param.case_name); });

// "exit_status" given twice: core's one loader refuses it (a parser would keep the last).
TEST(WatchJudge, AKeyGivenTwiceIsExit2) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  std::string text = testutil::slurp(testutil::fixture("watch/h200/gemm.json"));
  const auto at = text.find("\"exit_status\": 0,");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"exit_status\": 3, ");
  expect_refused(write_text(tmp, "twice.json", text), tmp, "exit_status");
}

// A record's text (a note, the case name) is shown on the terminal: an escape sequence in it
// arrives as text, never as a control character.
TEST(WatchJudge, ARecordsTextReachesTheTerminalEscaped) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  auto d = gemm_record();
  d["notes"] = nlohmann::ordered_json::array({"red \x1b[31m here\x07"});
  const Judged j = run({"--judge", write_text(tmp, "esc.json", d.dump()), "--out", (tmp.path() / "o").string()});
  EXPECT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(j.out.find('\x1b'), std::string::npos) << j.out;
  EXPECT_EQ(j.out.find('\x07'), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("red \\x1b[31m here"), std::string::npos) << j.out;
}

// What the rules take as it is: GPM's shares a little over 100 (ratios of counters over an
// interval), a record with no GPU and no sample, an attached record's null exit status.
TEST(WatchJudge, ReadingsAtTheirEdgesAreJudged) {
  testutil::TempDir tmp("gpucheck-watch-judge");
  auto d = gemm_record();
  d["gpus"][0]["timeline"]["sm_active_pct"][3] = 100.4;
  d["gpus"][0]["timeline"]["util_pct"][3] = 100;
  const Judged over = run({"--judge", write_text(tmp, "over.json", d.dump()), "--out", (tmp.path() / "a").string()});
  EXPECT_EQ(over.status, 0) << over.err;
  EXPECT_EQ(read_json(tmp.path() / "a" / "watch.json")["verdict"]["bound"], "compute_bound");

  auto e = gemm_record();
  e["gpus"] = nlohmann::ordered_json::array();
  for (auto& [k, col] : e["host"].items()) col = nlohmann::ordered_json::array();
  const Judged empty = run({"--judge", write_text(tmp, "empty.json", e.dump()), "--out", (tmp.path() / "b").string()});
  EXPECT_EQ(empty.status, 0) << empty.err;
  EXPECT_EQ(read_json(tmp.path() / "b" / "watch.json")["gpus"].size(), 0u);
}

}  // namespace
}  // namespace gpucheck::compare
