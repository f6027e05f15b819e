// The gate in-process: run_cli with a fake disk, a fake process runner (binaries that write
// their JSON into the fake disk) and a fake NVML probe; plus the pure helpers, the GPU
// activity text, the telemetry lines beside a regression, and the real POSIX runner on
// /bin/sh (exit codes, a timeout, a signal, a stop request).
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "fake_fs.hpp"
#include "cli/cli.hpp"
#include "rules/explain.hpp"
#include "runner/suite.hpp"
#include "runner/gpu_activity.hpp"
#include "runner/process.hpp"
#include "runner/suite_runner.hpp"
#include "results/results.hpp"
#include "gpucheck/core/contract.hpp"

namespace gc = gpucheck::compare;
using gpucheck::compare::testing::FakeFileSystem;

namespace {

struct Case {
  std::string name;
  double us;
  std::string counters;  // extra JSON fields
};

// Google Benchmark JSON with `reps` repetitions of each case (jitter of a few 0.1%).
std::string gbench(const std::vector<Case>& cases, int reps, const std::string& uuid = "GPU-fake") {
  std::string s = R"({"context": {"gpu_name": "NVIDIA H200", "gpu_uuid": ")" + uuid +
                  R"(", "host_cpu": "Fake CPU"}, "benchmarks": [)";
  bool first = true;
  for (const auto& c : cases)
    for (int r = 0; r < reps; ++r) {
      const double v = c.us * (1.0 + 0.001 * (r % 3) + 0.0003 * r);
      s += std::string(first ? "" : ",") + R"({"name": ")" + c.name + R"(/manual_time", "run_name": ")" + c.name +
           R"(/manual_time", "run_type": "iteration", "repetitions": )" + std::to_string(reps) +
           R"(, "repetition_index": )" + std::to_string(r) + R"(, "real_time": )" + std::to_string(v) +
           R"(, "time_unit": "us")" + (c.counters.empty() ? "" : ", " + c.counters) + "}";
      first = false;
    }
  return s + "]}";
}

std::string arg_value(const gc::ProcessSpec& spec, const std::string& flag) {
  for (const auto& a : spec.args)
    if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
  return "";
}

int reps_of(const gc::ProcessSpec& spec) {
  const std::string r = arg_value(spec, "--benchmark_repetitions");
  return r.empty() ? 1 : std::stoi(r);
}

// Binaries as functions of (their spec, how many times they ran before): each writes what a
// real one would into the fake disk and says how it ended.
class FakeRunner final : public gc::ProcessRunner {
 public:
  using Behaviour = std::function<gc::ProcessResult(const gc::ProcessSpec&, FakeFileSystem&, int call)>;
  explicit FakeRunner(FakeFileSystem& fs) : fs_(fs) {}
  std::map<std::string, Behaviour> binaries;  // by path
  std::vector<gc::ProcessSpec> calls;

  gc::ProcessResult run(const gc::ProcessSpec& spec) override {
    calls.push_back(spec);
    const int call = count_[spec.program]++;
    fs_.add(spec.stderr_path, "");
    return binaries.at(spec.program)(spec, fs_, call);
  }

 private:
  FakeFileSystem& fs_;
  std::map<std::string, int> count_;
};

gc::ProcessResult exited(int code) {
  gc::ProcessResult r;
  r.end = gc::ProcessResult::End::Exited;
  r.exit_code = code;
  r.seconds = 0.5;
  return r;
}

class FakeProbe final : public gc::GpuActivityProbe {
 public:
  gc::ActivitySnapshot s;
  gc::ActivitySnapshot snapshot() override { return s; }
};

gpucheck::GpuActivity gpu(unsigned index, const std::string& uuid, unsigned util, std::vector<gpucheck::GpuProcess> ps = {}) {
  gpucheck::GpuActivity g;
  g.nvml_index = index;
  g.name = "NVIDIA H200";
  g.uuid = uuid;
  g.utilization_gpu_pct = util;
  g.utilization_mem_pct = 0;
  g.processes = std::move(ps);
  return g;
}

struct GateFixture {
  FakeFileSystem fs;
  FakeRunner runner{fs};
  FakeProbe probe;
  gc::CliEnvironment env;
  gc::CliOutput io;

  GateFixture() {
    env.runner = &runner;
    env.gpu_probe = &probe;
    probe.s.reason = "test: no NVML";
    fs.dirs.insert("bin");
  }
  void binary(const std::string& name, FakeRunner::Behaviour b) {
    fs.add("bin/" + name, "#!fake");
    fs.executables.insert("bin/" + name);
    runner.binaries["bin/" + name] = std::move(b);
  }
  // The base build's binary (--base-bin-dir base).
  void base_binary(const std::string& name, FakeRunner::Behaviour b) {
    fs.dirs.insert("base");
    fs.add("base/" + name, "#!fake");
    fs.executables.insert("base/" + name);
    runner.binaries["base/" + name] = std::move(b);
  }
  void baseline(const std::vector<Case>& cases) { fs.add("baselines/nvidia-h200/quick.json", gbench(cases, 5)); }
  gc::ExitStatus gate(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"gpucheck", "gate", "--bin-dir", "bin", "--baseline", "baselines", "--out", "out"};
    args.insert(args.end(), extra.begin(), extra.end());
    io = {};
    return gc::run_cli(args, fs, env, io);
  }
};

// A binary writing `cases` (with `slow` applied to the first one on the calls it says).
FakeRunner::Behaviour writes(std::vector<Case> cases, std::function<double(int call)> slow = [](int) { return 1.0; },
                             std::string uuid = "GPU-fake") {
  return [cases, slow, uuid](const gc::ProcessSpec& spec, FakeFileSystem& fs, int call) {
    std::vector<Case> out;
    const std::string filter = arg_value(spec, "--benchmark_filter");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      // As Google Benchmark matches: an extended regex searched in the full name.
      if (!filter.empty() && !std::regex_search(cases[i].name + "/manual_time", std::regex(filter, std::regex::extended)))
        continue;
      Case c = cases[i];
      if (i == 0) c.us *= slow(call);
      out.push_back(c);
    }
    fs.add(arg_value(spec, "--benchmark_out"), gbench(out, reps_of(spec), uuid));
    return exited(0);
  };
}

}  // namespace

TEST(Gate, FirstPassArgumentsFollowTheRunnerContract) {
  GateFixture g;
  g.binary("bench_x", writes({{"x/a/fp32/1", 100, ""}}));
  g.baseline({{"x/a/fp32/1", 100, ""}});
  ASSERT_EQ(g.gate({"--device", "3", "--suite", "quick"}), gc::ExitStatus::Ok) << g.io.out << g.io.err;
  ASSERT_EQ(g.runner.calls.size(), 1u);
  const auto& s = g.runner.calls[0];
  EXPECT_EQ(s.program, "bin/bench_x");
  const std::string tmp = "out/runs/.bench_x.json.tmp-" + std::to_string(::getpid());
  EXPECT_EQ(s.args, (std::vector<std::string>{"--suite", "quick", "--device", "3", "--benchmark_out=" + tmp,
                                              "--benchmark_out_format=json"}));
  EXPECT_EQ(s.stderr_path, "out/logs/bench_x.log");
  EXPECT_DOUBLE_EQ(s.timeout_s, 300.0);
  EXPECT_DOUBLE_EQ(s.kill_grace_s, 10.0);
  EXPECT_EQ(g.fs.files.count(tmp), 0u);  // renamed into place once it parsed
  EXPECT_EQ(g.fs.files.count("out/runs/bench_x.json"), 1u);
  for (const char* f : {"out/results.json", "out/compare.md", "out/compare.json", "out/junit.xml"})
    EXPECT_EQ(g.fs.files.count(f), 1u) << f;
  EXPECT_NE(g.io.out.find("[1/1] bench_x ... 0.5 s, 1 case ok\n"), std::string::npos) << g.io.out;
  EXPECT_NE(g.io.out.find("GPU activity: unknown (test: no NVML)"), std::string::npos);
}

TEST(Gate, ConfirmationRerunsExactlyTheFlaggedCasesWithRepetitions) {
  GateFixture g;
  // x/a.b is 30% slower on the first call only; its name holds a regex metacharacter.
  g.binary("bench_x", writes({{"x/a.b/fp32/1", 100, ""}, {"x/c/fp32/1", 200, ""}},
                             [](int call) { return call == 0 ? 1.3 : 1.0; }));
  g.baseline({{"x/a.b/fp32/1", 100, ""}, {"x/c/fp32/1", 200, ""}});
  ASSERT_EQ(g.gate({"--timeout", "20"}), gc::ExitStatus::Ok) << g.io.out << g.io.err;
  ASSERT_EQ(g.runner.calls.size(), 2u);
  const auto& re = g.runner.calls[1];
  EXPECT_EQ(arg_value(re, "--benchmark_filter"), "^(x/a\\.b/fp32/1)(/|$)");
  EXPECT_EQ(arg_value(re, "--benchmark_repetitions"), "5");
  EXPECT_DOUBLE_EQ(re.timeout_s, 100.0);  // 20 s per repetition
  EXPECT_EQ(re.stderr_path, "out/logs/bench_x.confirm.log");
  EXPECT_NE(g.io.out.find("confirming 1 case(s) past their limit in a fresh process, 5 repetitions:\n"), std::string::npos)
      << g.io.out;
  EXPECT_NE(g.io.out.find("not confirmed  x/a.b/fp32/1  first pass +29.83% (n=5/1), re-run +0.00% (n=5/5, p=1)"), std::string::npos) << g.io.out;
  // The record is what was judged: five repetitions of the re-measured case, one of the other.
  auto rec = gc::parse_results(g.fs.files["out/results.json"], "r");
  ASSERT_TRUE(rec) << rec.error().str();
  EXPECT_EQ(rec->find("x/a.b/fp32/1")->repetitions, 5);
  EXPECT_EQ(rec->find("x/c/fp32/1")->repetitions, 1);
}

TEST(Gate, ARegressionThatHoldsFailsWithNAndP) {
  GateFixture g;
  g.binary("bench_x", writes({{"x/a/fp32/1", 100, ""}}, [](int) { return 1.25; }));
  g.baseline({{"x/a/fp32/1", 100, ""}});
  EXPECT_EQ(g.gate(), gc::ExitStatus::Regression);
  EXPECT_NE(g.io.out.find("confirmed      x/a/fp32/1  first pass +24.84% (n=5/1), re-run +25.00%"), std::string::npos) << g.io.out;
  EXPECT_NE(g.io.out.find("(n=5/5, p=0.00794)"), std::string::npos) << g.io.out;
  EXPECT_NE(g.fs.files["out/compare.md"].find("**confirmed**"), std::string::npos);
  EXPECT_NE(g.fs.files["out/junit.xml"].find("<failure message=\"REGRESSION"), std::string::npos);
}

TEST(Gate, ARerunWithoutTheCaseKeepsTheFirstPassAndFails) {
  GateFixture g;
  g.binary("bench_x", [](const gc::ProcessSpec& spec, FakeFileSystem& fs, int call) {
    if (call > 0) return exited(2);  // the confirmation cannot run
    fs.add(arg_value(spec, "--benchmark_out"), gbench({{"x/a/fp32/1", 150, ""}}, 1));
    return exited(0);
  });
  g.baseline({{"x/a/fp32/1", 100, ""}});
  EXPECT_EQ(g.gate(), gc::ExitStatus::Regression);
  EXPECT_NE(g.io.out.find("re-run failed"), std::string::npos) << g.io.out;
  EXPECT_NE(g.io.out.find("the first pass stands"), std::string::npos) << g.io.out;
}

namespace {

const nlohmann::json& json_row(const nlohmann::json& report, const std::string& name) {
  for (const auto& r : report["rows"])
    if (r["name"] == name) return r;
  throw std::runtime_error("no row " + name);
}

// The counts of compare.json are the rows' verdicts, each row counted once.
void expect_counts_are_the_rows(const nlohmann::json& report) {
  std::map<std::string, int> seen;
  for (const auto& r : report["rows"]) ++seen[r["verdict"].get<std::string>()];
  for (const gc::VerdictKind& k : gc::verdict_kinds())
    EXPECT_EQ(report["counts"][std::string(k.count_key)].get<int>(), seen[std::string(k.name)]) << k.name;
}

}  // namespace

// thresholds.json's "processes": the gate measures such a host-bound case in that many fresh
// processes of its binary, filtered to it, and judges the fastest (rules/fresh_minimum.hpp).
// The first pass's one process is at the high level, as are three of the four fresh ones.
TEST(Gate, AHostBoundCaseWithProcessesIsMeasuredInThatManyFreshProcessesAndJudgedByTheFastest) {
  GateFixture g;
  g.fs.add("baselines/thresholds.json",
           R"({"host_bound": [{"glob": "launch/host_*", "pct": 10, "processes": 4, "why": "two levels between processes"}]})");
  g.binary("bench_launch", writes({{"launch/host_launch/empty/1", 100, ""}, {"launch/graph/empty/100", 50, ""}},
                                  [](int call) { return call == 3 ? 1.0 : 1.25; }));
  g.baseline({{"launch/host_launch/empty/1", 100, ""}, {"launch/graph/empty/100", 50, ""}});
  ASSERT_EQ(g.gate(), gc::ExitStatus::Ok) << g.io.out << g.io.err;
  ASSERT_EQ(g.runner.calls.size(), 5u);  // the first pass, then 4 fresh processes
  for (std::size_t i = 1; i < 5; ++i) {
    const auto& f = g.runner.calls[i];
    EXPECT_EQ(arg_value(f, "--benchmark_filter"), "^(launch/host_launch/empty/1)(/|$)");
    EXPECT_EQ(reps_of(f), 1);
    EXPECT_EQ(f.stderr_path, "out/logs/bench_launch.fresh.log");
  }
  EXPECT_EQ(g.fs.files.count("out/runs/bench_launch.fresh.processes.json"), 1u);
  EXPECT_EQ(g.fs.files.count("out/runs/bench_launch.json"), 1u);  // the first pass's, kept
  EXPECT_NE(g.io.out.find("1 case(s) measured in fresh processes"), std::string::npos) << g.io.out;
  EXPECT_NE(g.io.out.find("[fresh 1] (process 4/4) bench_launch (fresh processes) ... "), std::string::npos) << g.io.out;
  auto rec = gc::parse_results(g.fs.files["out/results.json"], "r");
  ASSERT_TRUE(rec) << rec.error().str();
  EXPECT_EQ(rec->find("launch/host_launch/empty/1")->repetitions, 4);  // the record is what was judged
  EXPECT_EQ(rec->find("launch/graph/empty/100")->repetitions, 1);
  const auto report = nlohmann::json::parse(g.fs.files["out/compare.json"]);
  const auto& row = json_row(report, "launch/host_launch/empty/1");
  // Without a base build run beside it: shown, not gated.
  EXPECT_EQ(row["verdict"], "report only");
  EXPECT_EQ(row["measured_verdict"], "ok");
  EXPECT_NE(row["note"].get<std::string>().find("(--base-bin-dir DIR"), std::string::npos) << row["note"];
  EXPECT_NE(g.io.out.find("fresh-process cases: shown, not gated: judged only against the base build's processes"),
            std::string::npos)
      << g.io.out;
  EXPECT_EQ(row["fresh_processes"], 4);
  EXPECT_EQ(row["baseline_processes"], 5);
  EXPECT_EQ(row["judged_by"], "fastest");
  EXPECT_NEAR(row["current"].get<double>(), 100000.0, 1e-6);  // the fastest, in ns
  EXPECT_FALSE(json_row(report, "launch/graph/empty/100").contains("fresh_processes"));
  EXPECT_NE(g.io.out.find("fastest of 4 fresh processes vs the baseline's 15.9th percentile of 5"), std::string::npos)
      << g.io.out;
}

// launch_1.15x through a gate without a base build: every process 15% slower, shown as what it
// would be (REGRESSION) in the report-only section, not gated and not confirmed: the stored
// baseline is other machines' levels and periods. Against the base build it fails, confirmed
// (below); a history's earlier runs never judge it (CTest runner_gate).
TEST(Gate, ALaunchPathFifteenPercentSlowerWithoutABaseBuildIsShownNotGated) {
  GateFixture g;
  g.fs.add("baselines/thresholds.json",
           R"({"host_bound": [{"glob": "launch/host_*", "pct": 10, "processes": 4, "why": "two levels between processes"}]})");
  g.binary("bench_launch", writes({{"launch/host_launch/empty/1", 100, ""}}, [](int) { return 1.15; }));
  g.baseline({{"launch/host_launch/empty/1", 100, ""}});
  EXPECT_EQ(g.gate(), gc::ExitStatus::Ok) << g.io.out;
  ASSERT_EQ(g.runner.calls.size(), 5u);  // first pass, 4 fresh; no confirmation
  const auto report = nlohmann::json::parse(g.fs.files["out/compare.json"]);
  const auto& row = json_row(report, "launch/host_launch/empty/1");
  EXPECT_EQ(row["verdict"], "report only");
  EXPECT_EQ(row["measured_verdict"], "REGRESSION");
  EXPECT_FALSE(row["fails_gate"].get<bool>());
  EXPECT_NEAR(row["change"].get<double>(), 0.15, 1e-9);
}

// --base-bin-dir: the base build's processes interleaved with this build's, judged by the median
// pair. Every process after the first pass runs in a slow period of the machine (1.4x, both
// builds): against the stored baseline that would read +40%; against the base build, run in the
// same period, it is no change, and the case is gated (no history needed).
TEST(Gate, AgainstTheBaseBuildAMachinesSlowPeriodCancels) {
  GateFixture g;
  g.fs.add("baselines/thresholds.json",
           R"({"host_bound": [{"glob": "launch/host_*", "pct": 10, "processes": 4, "why": "levels and periods"}]})");
  g.binary("bench_launch", writes({{"launch/host_launch/empty/1", 100, ""}}, [](int call) { return call == 0 ? 1.0 : 1.4; }));
  g.base_binary("bench_launch", writes({{"launch/host_launch/empty/1", 100, ""}}, [](int) { return 1.4; }));
  g.baseline({{"launch/host_launch/empty/1", 100, ""}});
  ASSERT_EQ(g.gate({"--base-bin-dir", "base"}), gc::ExitStatus::Ok) << g.io.out << g.io.err;
  ASSERT_EQ(g.runner.calls.size(), 9u);  // the first pass, then 4 processes of each build
  for (std::size_t i = 1; i < 9; ++i) {
    EXPECT_EQ(g.runner.calls[i].program, i % 2 == 1 ? "base/bench_launch" : "bin/bench_launch") << i;
    EXPECT_EQ(reps_of(g.runner.calls[i]), 1);
  }
  EXPECT_EQ(g.runner.calls[1].stderr_path, "out/base/logs/bench_launch.fresh.log");
  EXPECT_EQ(g.fs.files.count("out/base/runs/bench_launch.fresh.processes.json"), 1u);
  EXPECT_EQ(g.fs.files.count("out/runs/bench_launch.fresh.processes.json"), 1u);
  EXPECT_NE(g.io.out.find("[fresh 1] (base build, process 4/4) bench_launch"), std::string::npos) << g.io.out;
  EXPECT_NE(g.io.out.find("fresh-process cases: against the base build (base), by the median pair"), std::string::npos)
      << g.io.out;
  EXPECT_NE(g.io.out.find("median pair of 4 fresh processes, each run beside the base build's"), std::string::npos)
      << g.io.out;
  const auto report = nlohmann::json::parse(g.fs.files["out/compare.json"]);
  const auto& row = json_row(report, "launch/host_launch/empty/1");
  EXPECT_EQ(row["verdict"], "ok");  // judged, not shown only
  EXPECT_FALSE(row.contains("measured_verdict"));
  EXPECT_NEAR(row["change"].get<double>(), 0.0, 1e-9);
  EXPECT_EQ(row["baseline_processes"], 4);
  EXPECT_EQ(row["fresh_processes"], 4);
  EXPECT_EQ(row["judged_by"], "median_pair");
}

// One base process on a lucky level (20% faster; measured on the H200 VMs: a level lasts a few
// processes) would fail the fastest against the fastest by +25%; the median pair reads no change.
// Two pairs of this build on a slow level (1.3x) and its pairs' base members on it too: no change.
TEST(Gate, AgainstTheBaseBuildOneLuckyProcessDoesNotFailTheGate) {
  GateFixture g;
  g.fs.add("baselines/thresholds.json",
           R"({"host_bound": [{"glob": "launch/host_*", "pct": 10, "processes": 4, "why": "levels and periods"}]})");
  g.binary("bench_launch", writes({{"launch/host_launch/empty/1", 100, ""}}, [](int call) { return call >= 3 ? 1.3 : 1.0; }));
  g.base_binary("bench_launch", writes({{"launch/host_launch/empty/1", 100, ""}},
                                       [](int call) { return call == 0 ? 0.8 : call >= 2 ? 1.3 : 1.0; }));
  g.baseline({{"launch/host_launch/empty/1", 100, ""}});
  ASSERT_EQ(g.gate({"--base-bin-dir", "base"}), gc::ExitStatus::Ok) << g.io.out << g.io.err;
  ASSERT_EQ(g.runner.calls.size(), 9u);  // no confirmation: nothing past the limit
  const auto report = nlohmann::json::parse(g.fs.files["out/compare.json"]);
  const auto& row = json_row(report, "launch/host_launch/empty/1");
  EXPECT_EQ(row["verdict"], "ok");
  EXPECT_NEAR(row["change"].get<double>(), 0.0, 1e-9);
  EXPECT_DOUBLE_EQ(row["current"].get<double>(), row["baseline"].get<double>());  // the two middle pairs'
}

// launch_1.15x against the base build: every process of this build 15% slower, the base's not:
// past the limit, and the confirmation measures both builds again, interleaved, and fails it.
TEST(Gate, AgainstTheBaseBuildALaunchPathFifteenPercentSlowerFailsConfirmed) {
  GateFixture g;
  g.fs.add("baselines/thresholds.json",
           R"({"host_bound": [{"glob": "launch/host_*", "pct": 10, "processes": 4, "why": "levels and periods"}]})");
  g.binary("bench_launch", writes({{"launch/host_launch/empty/1", 100, ""}}, [](int) { return 1.15; }));
  g.base_binary("bench_launch", writes({{"launch/host_launch/empty/1", 100, ""}}));
  g.baseline({{"launch/host_launch/empty/1", 115, ""}});  // the stored baseline would see no change
  EXPECT_EQ(g.gate({"--base-bin-dir", "base"}), gc::ExitStatus::Regression) << g.io.out;
  ASSERT_EQ(g.runner.calls.size(), 17u);  // first pass, 4 + 4 paired, 4 + 4 paired to confirm
  for (std::size_t i = 9; i < 17; ++i)
    EXPECT_EQ(g.runner.calls[i].program, i % 2 == 1 ? "base/bench_launch" : "bin/bench_launch") << i;
  EXPECT_EQ(g.fs.files.count("out/base/confirm/bench_launch.processes.json"), 1u);
  EXPECT_NE(g.io.out.find("confirming 1 case(s) past their limit: 1 in 4 fresh processes of each build, in turn:\n"),
            std::string::npos)
      << g.io.out;
  const auto report = nlohmann::json::parse(g.fs.files["out/compare.json"]);
  const auto& row = json_row(report, "launch/host_launch/empty/1");
  EXPECT_EQ(row["verdict"], "REGRESSION");
  EXPECT_TRUE(row["fails_gate"].get<bool>());
  EXPECT_EQ(row["confirmation"]["status"], "confirmed");
  EXPECT_NEAR(row["change"].get<double>(), 0.15, 1e-9);
}

// The base build given but not there: one line, exit 2, nothing measured against it. A base
// build that errors leaves the case shown, not gated, and fails nothing of this build.
TEST(Gate, ABaseBuildMissingIsBadInputAndOneThatErrorsLeavesTheCaseShown) {
  GateFixture g;
  g.fs.add("baselines/thresholds.json",
           R"({"host_bound": [{"glob": "launch/host_*", "pct": 10, "processes": 4, "why": "levels and periods"}]})");
  g.binary("bench_launch", writes({{"launch/host_launch/empty/1", 100, ""}}));
  g.baseline({{"launch/host_launch/empty/1", 100, ""}});
  EXPECT_EQ(g.gate({"--base-bin-dir", "nowhere"}), gc::ExitStatus::BadInput);
  EXPECT_EQ(g.io.err, "gpucheck: nowhere: no such folder (--base-bin-dir: the base build's binaries)\n");
  EXPECT_TRUE(g.runner.calls.empty());
  g.fs.dirs.insert("base");
  EXPECT_EQ(g.gate({"--base-bin-dir", "base"}), gc::ExitStatus::BadInput);
  EXPECT_NE(g.io.err.find("gpucheck: base/bench_launch: no such binary (--base-bin-dir"), std::string::npos) << g.io.err;
  EXPECT_EQ(std::count(g.io.err.begin(), g.io.err.end(), '\n'), 1);
  g.base_binary("bench_launch", [](const gc::ProcessSpec&, FakeFileSystem&, int) { return exited(3); });
  g.runner.calls.clear();
  EXPECT_EQ(g.gate({"--base-bin-dir", "base"}), gc::ExitStatus::Ok) << g.io.out;
  ASSERT_EQ(g.runner.calls.size(), 2u);  // the first pass, then the base build's first process, which errors
  EXPECT_NE(g.io.out.find("the paired fresh-process pass gave no figure (base build: exit 3)"), std::string::npos)
      << g.io.out;
  const auto report = nlohmann::json::parse(g.fs.files["out/compare.json"]);
  EXPECT_EQ(json_row(report, "launch/host_launch/empty/1")["verdict"], "report only");
}

// A base build that errors part way (its 2nd process) leaves neither side a figure: the case is
// shown, not gated, on the first pass's one process, and this build's processes are not judged alone.
TEST(Gate, ABaseBuildThatErrorsPartWayLeavesNeitherSideAFigure) {
  GateFixture g;
  g.fs.add("baselines/thresholds.json",
           R"({"host_bound": [{"glob": "launch/host_*", "pct": 10, "processes": 4, "why": "levels and periods"}]})");
  g.binary("bench_launch", writes({{"launch/host_launch/empty/1", 100, ""}}, [](int) { return 1.3; }));
  auto ok = writes({{"launch/host_launch/empty/1", 100, ""}});
  g.base_binary("bench_launch", [ok](const gc::ProcessSpec& spec, FakeFileSystem& fs, int call) {
    return call == 0 ? ok(spec, fs, call) : exited(3);
  });
  g.baseline({{"launch/host_launch/empty/1", 100, ""}});
  EXPECT_EQ(g.gate({"--base-bin-dir", "base"}), gc::ExitStatus::Ok) << g.io.out;
  ASSERT_EQ(g.runner.calls.size(), 4u);  // first pass; base, this, base (errors)
  EXPECT_NE(g.io.out.find("the paired fresh-process pass gave no figure (base build: exit 3)"), std::string::npos)
      << g.io.out;
  const auto report = nlohmann::json::parse(g.fs.files["out/compare.json"]);
  const auto& row = json_row(report, "launch/host_launch/empty/1");
  EXPECT_EQ(row["verdict"], "report only");
  EXPECT_EQ(row["current_repetitions"], 1);  // the first pass's one process, not this build's one fresh one
}

// A fresh pass that gives no figure leaves the first pass's one process: shown, not gated; the
// binary's error fails the gate, as a confirmation run's does.
TEST(Gate, AFreshPassWithoutFiguresLeavesTheCaseShownNotGated) {
  GateFixture g;
  g.fs.add("baselines/thresholds.json",
           R"({"host_bound": [{"glob": "launch/host_*", "pct": 10, "processes": 4, "why": "two levels between processes"}]})");
  g.binary("bench_launch", [](const gc::ProcessSpec& spec, FakeFileSystem& fs, int call) {
    if (call > 0) return exited(3);
    fs.add(arg_value(spec, "--benchmark_out"), gbench({{"launch/host_launch/empty/1", 150, ""}}, 1));
    return exited(0);
  });
  g.baseline({{"launch/host_launch/empty/1", 100, ""}});
  EXPECT_EQ(g.gate(), gc::ExitStatus::Regression) << g.io.out;
  EXPECT_NE(g.io.out.find("bench_launch: the fresh-process pass gave no figure"), std::string::npos) << g.io.out;
  EXPECT_NE(g.io.out.find("ERRORED: exit 3"), std::string::npos) << g.io.out;
  const auto report = nlohmann::json::parse(g.fs.files["out/compare.json"]);
  const auto& row = json_row(report, "launch/host_launch/empty/1");
  EXPECT_EQ(row["verdict"], "report only");
  EXPECT_FALSE(row["fails_gate"].get<bool>());
  EXPECT_NE(row["note"].get<std::string>().find("this run 1"), std::string::npos) << row["note"];
}

// A binary that errors costs its family's baseline cases as Errored, with its reason; a case
// another binary lost stays Missing.
TEST(Gate, AnErroredBinarysCasesAreErroredAndAnotherFamilysLossStaysMissing) {
  GateFixture g;
  g.binary("bench_conv", writes({{"conv/x/fp32/1", 100, ""}}));
  g.binary("bench_matmul", [](const gc::ProcessSpec& spec, FakeFileSystem& fs, int) {
    fs.files[spec.stderr_path] = "gpucheck: cuBLAS could not start\n";
    return exited(2);
  });
  g.baseline({{"conv/x/fp32/1", 100, ""}, {"conv/y/fp32/1", 100, ""}, {"matmul/a/fp32/1", 100, ""},
              {"matmul/b/fp32/1", 100, ""}});
  EXPECT_EQ(g.gate(), gc::ExitStatus::Regression) << g.io.out << g.io.err;
  const auto j = nlohmann::json::parse(g.fs.files["out/compare.json"]);
  std::string reason;
  for (const auto& b : j["binaries"])
    if (b["name"] == "bench_matmul") reason = b["reason"].get<std::string>();
  ASSERT_FALSE(reason.empty()) << j["binaries"].dump();
  for (const char* n : {"matmul/a/fp32/1", "matmul/b/fp32/1"}) {
    EXPECT_EQ(json_row(j, n)["verdict"], "ERRORED") << n;
    EXPECT_EQ(json_row(j, n)["note"], "bench_matmul ERRORED: " + reason) << n;
    EXPECT_EQ(json_row(j, n)["fails_gate"], true) << n;
  }
  EXPECT_EQ(json_row(j, "conv/y/fp32/1")["verdict"], "MISSING");
  EXPECT_EQ(json_row(j, "conv/x/fp32/1")["verdict"], "ok");
  EXPECT_EQ(j["counts"]["errored"], 2);
  EXPECT_EQ(j["counts"]["missing"], 1);
  expect_counts_are_the_rows(j);
  EXPECT_EQ(j["result"], "fail");
}

// A binary that errors in the confirmation pass blames nothing: the first pass's figures stand,
// and its family's lost case stays Missing.
TEST(Gate, AConfirmationPassErrorDoesNotBlame) {
  GateFixture g;
  g.binary("bench_x", [](const gc::ProcessSpec& spec, FakeFileSystem& fs, int call) {
    if (call > 0) return exited(2);  // the confirmation cannot run
    fs.add(arg_value(spec, "--benchmark_out"), gbench({{"x/a/fp32/1", 150, ""}}, 1));
    return exited(0);
  });
  g.baseline({{"x/a/fp32/1", 100, ""}, {"x/b/fp32/1", 100, ""}});
  EXPECT_EQ(g.gate(), gc::ExitStatus::Regression) << g.io.out << g.io.err;
  const auto j = nlohmann::json::parse(g.fs.files["out/compare.json"]);
  EXPECT_EQ(json_row(j, "x/a/fp32/1")["verdict"], "REGRESSION");
  EXPECT_EQ(json_row(j, "x/a/fp32/1")["confirmation"]["status"], "re-run failed");
  EXPECT_EQ(json_row(j, "x/b/fp32/1")["verdict"], "MISSING");
  EXPECT_EQ(json_row(j, "x/b/fp32/1")["note"], "not in current results");
  EXPECT_EQ(j["counts"]["errored"], 0);
  expect_counts_are_the_rows(j);
  ASSERT_EQ(j["binaries"].size(), 2u);
  EXPECT_EQ(j["binaries"][1]["pass"], "confirm");
  EXPECT_EQ(j["binaries"][1]["status"], "ERRORED");
}

TEST(GateHelpers, ErroredFamiliesComeFromFirstPassErrorsByTheContract) {
  auto run = [](std::string name, std::string pass, gc::BinaryRun::Status st) {
    gc::BinaryRun r;
    r.name = std::move(name);
    r.pass = std::move(pass);
    r.status = st;
    r.reason = "why " + r.name;
    return r;
  };
  using S = gc::BinaryRun::Status;
  const auto f = gc::cli::errored_families({run("bench_matmul", "first", S::Errored), run("bench_conv", "confirm", S::Errored),
                                            run("bench_pcie", "first", S::CaseFailed), run("bench_launch", "first", S::Ok),
                                            run("third_party", "first", S::Errored)});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].family, "matmul");
  EXPECT_EQ(f[0].binary, "bench_matmul");
  EXPECT_EQ(f[0].reason, "why bench_matmul");
  EXPECT_EQ(gpucheck::contract::family_of_binary("bench_nccl"), "nccl");
  EXPECT_EQ(gpucheck::contract::family_of_binary("nccl"), "");
  EXPECT_EQ(gpucheck::contract::binary_of_family(gpucheck::contract::family::matmul), "bench_matmul");
  EXPECT_TRUE(gpucheck::contract::in_family("matmul/a/fp32/1", "matmul"));
  EXPECT_FALSE(gpucheck::contract::in_family("matmul_sparse/a", "matmul"));
  EXPECT_FALSE(gpucheck::contract::in_family("matmul", "matmul"));
  EXPECT_FALSE(gpucheck::contract::in_family("/a", ""));
}

TEST(Gate, BusyGpuIsAWarningAndNamedBesideTheRegression) {
  GateFixture g;
  g.probe.s.known = true;
  g.probe.s.gpus = {gpu(0, "GPU-other", 0), gpu(1, "GPU-ours", 97, {{4242, "python3", 10ull << 30}})};
  g.env.cuda_visible_devices = "1";
  g.binary("bench_x", writes({{"x/a/fp32/1", 100, R"("sm_clock_MHz": 1980, "clock_event_reasons": 0)"}},
                             [](int) { return 1.5; }, "GPU-ours"));
  g.baseline({{"x/a/fp32/1", 100, R"("sm_clock_MHz": 1980, "clock_event_reasons": 0)"}});
  EXPECT_EQ(g.gate(), gc::ExitStatus::Regression);
  const std::string warning =
      "WARNING: GPU 1 (NVIDIA H200), device 0, is busy before the gate starts: 1 other process (pid 4242 python3 "
      "10.0 GiB), utilisation 97%; a slower figure may be this neighbour, not the code";
  EXPECT_EQ(g.io.out.find(warning), g.io.out.find("WARNING"));  // before anything else is reported
  EXPECT_LT(g.io.out.find(warning), g.io.out.find("[1/1]"));
  EXPECT_NE(g.io.out.find("1 other process on the GPU"), std::string::npos) << g.io.out;
  EXPECT_NE(g.fs.files["out/compare.md"].find("> **WARNING**: GPU 1 (NVIDIA H200), device 0, is busy"), std::string::npos)
      << g.fs.files["out/compare.md"];
  EXPECT_EQ(g.io.out.find("GPU 0 (NVIDIA H200)"), std::string::npos);  // an idle GPU that is not ours: no warning
}

TEST(Gate, AllBinariesWithoutADeviceIsExitTwo) {
  GateFixture g;
  for (const char* b : {"bench_a", "bench_b"})
    g.binary(b, [](const gc::ProcessSpec& spec, FakeFileSystem& fs, int) {
      fs.files[spec.stderr_path] = "gpucheck: no CUDA device found (cudaGetDeviceCount: no driver)\n";
      return exited(2);
    });
  g.fs.dirs.insert("baselines");
  EXPECT_EQ(g.gate(), gc::ExitStatus::BadInput);
  // One prefix (issue 17: it read "gpucheck: gpucheck: no GPU").
  EXPECT_EQ(g.io.err, "gpucheck: no GPU: bench_a said \"no CUDA device found (cudaGetDeviceCount: no driver)\"; run "
                      "on a GPU machine, or judge results measured there with gpucheck compare\n");
  // The first binary's answer is the machine's: the second is not started (issue 35: one line,
  // not one per binary).
  EXPECT_EQ(g.io.out.find("bench_b"), std::string::npos) << g.io.out;
}

// CUDA_LAUNCH_BLOCKING=1 exported: every binary refuses before measuring (core/environment),
// and the gate says so in one line, exit 2, instead of 47 errored cases.
TEST(Gate, EveryBinaryRefusingForOneReasonIsExitTwoNamingIt) {
  GateFixture g;
  for (const char* b : {"bench_a", "bench_b", "bench_c"})
    g.binary(b, [](const gc::ProcessSpec& spec, FakeFileSystem& fs, int) {
      fs.files[spec.stderr_path] = "gpucheck: CUDA_LAUNCH_BLOCKING=1 makes every kernel launch wait; unset it to measure\n";
      return exited(2);
    });
  g.fs.dirs.insert("baselines");
  EXPECT_EQ(g.gate(), gc::ExitStatus::BadInput);
  EXPECT_EQ(g.io.err, "gpucheck: every benchmark binary refused: \"CUDA_LAUNCH_BLOCKING=1 makes every kernel launch "
                      "wait; unset it to measure\"\n");
  EXPECT_EQ(g.runner.calls.size(), 3u);
}

// Binaries say "no case matches --benchmark_filter=..." and exit 2 (issue 35): under the
// gate's --filter that is another family's binary with nothing asked of it, not an error.
TEST(Gate, ABinaryTheFilterLeavesNoCaseIsNotErrored) {
  GateFixture g;
  g.binary("bench_a", writes({{"x/a/fp32/1", 100, ""}}));
  g.binary("bench_b", [](const gc::ProcessSpec& spec, FakeFileSystem& fs, int) {
    fs.files[spec.stderr_path] = "gpucheck: no case matches --benchmark_filter=" + arg_value(spec, "--benchmark_filter") + "\n";
    return exited(2);
  });
  g.baseline({{"x/a/fp32/1", 100, ""}, {"y/b/fp32/1", 100, ""}});
  EXPECT_EQ(g.gate({"--filter", "^x/"}), gc::ExitStatus::Ok) << g.io.out << g.io.err;
  EXPECT_EQ(g.io.out.find("ERRORED"), std::string::npos) << g.io.out;
  EXPECT_NE(g.io.out.find("bench_b ... 0.5 s, no case matches the filter"), std::string::npos) << g.io.out;
  // Without a filter the same answer is an error: the binary was asked for every case.
  GateFixture h;
  h.binary("bench_b", [](const gc::ProcessSpec& spec, FakeFileSystem& fs, int) {
    fs.files[spec.stderr_path] = "gpucheck: no case matches --benchmark_filter=x\n";
    return exited(2);
  });
  h.baseline({{"y/b/fp32/1", 100, ""}});
  EXPECT_NE(h.gate(), gc::ExitStatus::Ok);
  EXPECT_NE(h.io.out.find("ERRORED"), std::string::npos) << h.io.out;
}

TEST(Gate, DashDIsDevice) {
  GateFixture g;
  g.binary("bench_x", writes({{"x/a/fp32/1", 100, ""}}));
  g.baseline({{"x/a/fp32/1", 100, ""}});
  EXPECT_EQ(g.gate({"-d", "3"}), gc::ExitStatus::Ok) << g.io.err;
  ASSERT_FALSE(g.runner.calls.empty());
  const auto& args = g.runner.calls.front().args;
  const auto d = std::find(args.begin(), args.end(), "--device");
  ASSERT_NE(d, args.end());
  ASSERT_NE(d + 1, args.end());
  EXPECT_EQ(*(d + 1), "3");
}

TEST(Gate, UsageErrorsBeforeAnyBinaryRuns) {
  GateFixture g;
  g.binary("bench_x", writes({{"x/a/fp32/1", 100, ""}}));
  g.baseline({{"x/a/fp32/1", 100, ""}});
  for (const auto& extra : std::vector<std::vector<std::string>>{
           {"--confirm-repetitions", "1"}, {"--timeout", "0"}, {"--device", "-1"}, {"--suite", "../x"}, {"--filter", "("},
           {"--thresholds", "nowhere.json"}, {"--metric", "TFLOPS", "--no-thresholds", "--thresholds", "x"}, {"stray"},
           {"--base-branch", "main"}}) {  // gone: the base build judges what the runner's own runs did
    EXPECT_EQ(g.gate(extra), gc::ExitStatus::BadInput) << extra[0];
    EXPECT_EQ(std::count(g.io.err.begin(), g.io.err.end(), '\n'), 1) << g.io.err;
  }
  EXPECT_TRUE(g.runner.calls.empty());
  gc::CliOutput io;
  EXPECT_EQ(gc::run_cli({"gpucheck", "gate", "--bin-dir", "bin", "--out", "o"}, g.fs, g.env, io), gc::ExitStatus::BadInput);
  EXPECT_NE(io.err.find("needs --baseline"), std::string::npos);
}

// ---- pure helpers --------------------------------------------------------------------------

TEST(GateHelpers, FiltersEscapeNames) {
  EXPECT_EQ(gc::escape_regex("a.b(c)[d]*+?|^$\\{e}"), "a\\.b\\(c\\)\\[d\\]\\*\\+\\?\\|\\^\\$\\\\\\{e\\}");
  EXPECT_EQ(gc::cases_filter({"matmul/x/fp32/1", "pcie/h2d/pinned/4KiB"}), "^(matmul/x/fp32/1|pcie/h2d/pinned/4KiB)(/|$)");
}

TEST(GateHelpers, LastLinesAndNoDevice) {
  EXPECT_EQ(gc::last_line("a\nb\n\n  \n"), "b");
  EXPECT_EQ(gc::last_line(""), "");
  EXPECT_EQ(gc::last_lines("1\n2\n3\n4\n", 2), (std::vector<std::string>{"3", "4"}));
  EXPECT_TRUE(gc::says_no_device("gpucheck: no CUDA device found (...)"));
  EXPECT_TRUE(gc::says_no_device("cudaErrorNoDevice: no CUDA-capable device is detected"));
  EXPECT_FALSE(gc::says_no_device("gpucheck: cannot create a cuBLAS handle"));
  EXPECT_DOUBLE_EQ(gc::default_timeout_s("quick"), 300.0);
  EXPECT_DOUBLE_EQ(gc::default_timeout_s("full"), 3600.0);
  EXPECT_DOUBLE_EQ(gc::kill_grace_s(2.0), 1.0);
  EXPECT_DOUBLE_EQ(gc::kill_grace_s(3600.0), 10.0);
}

TEST(GateHelpers, BinariesFromTheListOrTheFolder) {
  FakeFileSystem fs;
  fs.dirs.insert("bin");
  for (const char* b : {"bin/bench_b", "bin/bench_a", "bin/gpucheck"}) {
    fs.add(b, "x");
    fs.executables.insert(b);
  }
  fs.add("bin/bench_notes.txt", "not executable");
  auto all = gc::discover_binaries(fs, "bin");
  ASSERT_TRUE(all) << all.error().str();
  EXPECT_EQ(all->names, (std::vector<std::string>{"bench_a", "bench_b"}));
  EXPECT_FALSE(all->from_list);
  fs.add("bin/gpucheck-benchmarks.txt", "# CMake\nbench_b\n\nbench_a\n");
  auto listed = gc::discover_binaries(fs, "bin");
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->names, (std::vector<std::string>{"bench_b", "bench_a"}));
  fs.add("bin/gpucheck-benchmarks.txt", "bench_b\nbench_attention\n");
  auto missing = gc::discover_binaries(fs, "bin");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("lists bench_attention, which is not an executable in bin"), std::string::npos);
  EXPECT_FALSE(gc::discover_binaries(fs, "nowhere"));
}

TEST(GpuActivity, WhichGpuIsTheDevice) {
  gc::ActivitySnapshot s;
  s.known = true;
  s.gpus = {gpu(0, "GPU-aaa", 0), gpu(1, "GPU-bbb", 0), gpu(2, "GPU-ccc", 0)};
  EXPECT_EQ(gc::select_gpu(s, 1, std::nullopt, ""), 1u);
  EXPECT_EQ(gc::select_gpu(s, 0, std::string("2,0"), ""), 2u);
  EXPECT_EQ(gc::select_gpu(s, 1, std::string("2,0"), ""), 0u);
  EXPECT_EQ(gc::select_gpu(s, 0, std::string("GPU-bb"), ""), 1u);
  EXPECT_FALSE(gc::select_gpu(s, 2, std::string("2,0"), ""));
  EXPECT_FALSE(gc::select_gpu(s, 0, std::string("MIG-1"), ""));
  EXPECT_EQ(gc::select_gpu(s, 0, std::string("0"), "GPU-ccc"), 2u);  // the results' UUID wins
  EXPECT_FALSE(gc::select_gpu(s, 0, std::nullopt, "GPU-zzz"));
  EXPECT_FALSE(gc::select_gpu(gc::ActivitySnapshot{}, 0, std::nullopt, ""));
}

TEST(GpuActivity, ANeighbourSeenAtEitherMomentIsKept) {
  gc::ActivitySnapshot before, during;
  before.known = during.known = true;
  gpucheck::GpuActivity g;
  g.uuid = "GPU-a";
  g.utilization_gpu_pct = 0;
  before.gpus.push_back(g);
  g.utilization_gpu_pct = 100;
  g.processes.push_back({4242, "python3", 800u << 20});
  during.gpus.push_back(g);
  const gc::ActivitySnapshot m = gc::merge_snapshots(before, during);
  ASSERT_EQ(m.gpus.size(), 1u);
  ASSERT_EQ(m.gpus[0].processes.size(), 1u);
  EXPECT_EQ(m.gpus[0].processes[0].pid, 4242u);
  EXPECT_EQ(m.gpus[0].utilization_gpu_pct, 100u);
  // Gone by the second look: still named (it ran during the first pass).
  const gc::ActivitySnapshot back = gc::merge_snapshots(during, before);
  ASSERT_EQ(back.gpus[0].processes.size(), 1u);
  EXPECT_EQ(back.gpus[0].utilization_gpu_pct, 100u);
  gc::ActivitySnapshot unknown;
  EXPECT_EQ(gc::merge_snapshots(before, unknown).gpus.size(), 1u);
}

TEST(GpuActivity, LinesAndWarnings) {
  gc::ActivitySnapshot unknown;
  unknown.reason = "cannot load NVML: libnvidia-ml.so.1: not found";
  const auto u = gc::describe_activity(unknown, std::nullopt, 0, 1);
  EXPECT_EQ(u.lines, std::vector<std::string>{"GPU activity: unknown (cannot load NVML: libnvidia-ml.so.1: not found)"});
  EXPECT_TRUE(u.warnings.empty());

  gc::ActivitySnapshot s;
  s.known = true;
  s.gpus = {gpu(0, "GPU-a", 0, {{77, "gpucheck", 0}}), gpu(1, "GPU-b", 12, {{5, "", 3ull << 29}})};
  const auto r = gc::describe_activity(s, 0u, 0, 77);  // pid 77 is us
  EXPECT_EQ(r.lines[1], "  GPU 0 NVIDIA H200 (device 0): utilisation 0%, no other processes");
  EXPECT_EQ(r.lines[2], "  GPU 1 NVIDIA H200: utilisation 12%, 1 other process: pid 5 ? 1.5 GiB");
  EXPECT_TRUE(r.warnings.empty());  // our GPU is idle; GPU 1 is someone else's
  EXPECT_EQ(r.other_processes, 0);
  const auto unsure = gc::describe_activity(s, std::nullopt, 0, 77);
  ASSERT_EQ(unsure.warnings.size(), 1u);
  EXPECT_NE(unsure.warnings[0].find("GPU 1 (NVIDIA H200) (which GPU is device 0 is unknown) is busy"), std::string::npos)
      << unsure.warnings[0];
  // The tail of our own last binary in NVML's utilisation window (2%) is not a neighbour;
  // 10% with no process is.
  gc::ActivitySnapshot tail;
  tail.known = true;
  tail.gpus = {gpu(0, "GPU-a", 2, {})};
  EXPECT_TRUE(gc::describe_activity(tail, 0u, 0, 77).warnings.empty());
  tail.gpus = {gpu(0, "GPU-a", 10, {})};
  EXPECT_EQ(gc::describe_activity(tail, 0u, 0, 77).warnings.size(), 1u);
}

TEST(Explain, TelemetryThatDiffersFromTheBaseline) {
  auto one = [](const std::string& counters, const std::string& label = "") {
    auto r = gc::parse_results(R"({"benchmarks": [{"name": "m/a", "real_time": 1, "time_unit": "ms", "label": ")" + label +
                                   "\", " + counters + "}]}",
                               "x");
    if (!r) throw std::runtime_error(r.error().str());
    return r->benchmarks[0];
  };
  const auto base = one(R"("sm_clock_MHz": 1980, "clock_event_reasons": 1, "throttled_samples": 0, "samples": 200)");
  const auto hot = one(R"("sm_clock_MHz": 1545, "clock_event_reasons": 5, "throttled_samples": 40, "samples": 200, "cv_pct": 3.5)",
                       "timing=held stop=time_limit");
  EXPECT_EQ(gc::explain_case(base, hot, 2),
            (std::vector<std::string>{"SM clock 1980 -> 1545 MHz", "clock events sw_power_cap (baseline: none)",
                                      "throttled samples 0 -> 40 of 200", "noise target not reached (stop=time_limit, cv 3.5%)",
                                      "2 other processes on the GPU"}));
  // 1.5% of clock and an idle bit are not news.
  const auto calm = one(R"("sm_clock_MHz": 1950, "clock_event_reasons": 0, "throttled_samples": 0)");
  EXPECT_TRUE(gc::explain_case(base, calm, 0).empty());
}

// ---- the real runner, on /bin/sh -----------------------------------------------------------

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/gpucheck-proc-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { (void)!std::system(("rm -rf " + path).c_str()); }
};

gc::ProcessSpec sh(const TempDir& d, const std::string& script, double timeout = 10) {
  gc::ProcessSpec s;
  s.program = "/bin/sh";
  s.args = {"-c", script};
  s.stdout_path = d.path + "/out.log";
  s.stderr_path = d.path + "/err.log";
  s.timeout_s = timeout;
  s.kill_grace_s = 0.5;
  return s;
}

}  // namespace

TEST(PosixRunner, ExitCodeAndStderrFile) {
  TempDir d;
  gc::PosixProcessRunner r;
  const auto res = r.run(sh(d, "echo to-out; echo to-err >&2; exit 3"));
  EXPECT_EQ(res.end, gc::ProcessResult::End::Exited);
  EXPECT_EQ(res.exit_code, 3);
  gc::RealFileSystem fs;
  EXPECT_EQ(*fs.read(d.path + "/err.log", 100), "to-err\n");
  // The binary's stdout, then how its tree was kept.
  EXPECT_EQ(*fs.read(d.path + "/out.log", 200),
            "to-out\n[gpucheck: the binary's process tree was kept by a " + std::string(gc::containment_name(res.containment)) + "]\n");
}

TEST(PosixRunner, TimeoutStopsTheWholeGroup) {
  TempDir d;
  gc::PosixProcessRunner r;
  const auto t0 = std::chrono::steady_clock::now();
  // A child of the shell that ignores SIGTERM: only SIGKILL to the group ends it.
  const auto res = r.run(sh(d, "trap '' TERM; sleep 30 & wait; sleep 30", 0.3));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(res.end, gc::ProcessResult::End::TimedOut);
  EXPECT_TRUE(res.killed_hard);
  EXPECT_LT(took, 3.0);
}

TEST(PosixRunner, SignalAndStartFailure) {
  TempDir d;
  gc::PosixProcessRunner r;
  const auto crash = r.run(sh(d, "kill -SEGV $$"));
  EXPECT_EQ(crash.end, gc::ProcessResult::End::Signalled);
  EXPECT_EQ(gc::signal_name(crash.signal), "SIGSEGV");
  auto spec = sh(d, "");
  spec.program = d.path + "/no-such-binary";
  const auto none = r.run(spec);
  EXPECT_EQ(none.end, gc::ProcessResult::End::CouldNotStart);
  EXPECT_FALSE(none.error.empty());
  EXPECT_EQ(gc::signal_name(77), "signal 77");
}

TEST(PosixRunner, StopRequestInterrupts) {
  TempDir d;
  std::atomic<int> stop{15};
  gc::PosixProcessRunner r(&stop);
  const auto res = r.run(sh(d, "sleep 30"));
  EXPECT_EQ(res.end, gc::ProcessResult::End::Interrupted);
  EXPECT_LT(res.seconds, 3.0);
}
