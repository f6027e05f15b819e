// gpucheck watch: the step parser, and the command end to end on real child processes with a
// fake NVML (a GEMM-like GPU) and the real /proc: exit status passed through, 128+N for a
// signal, 127 and one line for a command that does not exist, SIGINT forwarded with the record
// still written, and results.json read by the compare tool as any results file.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "../test_util.hpp"
#include "base/filesystem.hpp"
#include "results/results.hpp"
#include "rules/compare.hpp"
#include "watch/child.hpp"
#include "watch/command.hpp"
#include "watch/record.hpp"
#include "watch/steps.hpp"
#include "watch_cli.hpp"

namespace gpucheck::compare {
namespace {

using watch::StepLine;
using watch::StepParser;

StepLine parse(const std::string& re, const std::string& line) {
  auto p = StepParser::make(re);
  EXPECT_TRUE(p.ok());
  return p->parse(line);
}

TEST(WatchSteps, UnitsAfterTheNumber) {
  const std::string re = "step";
  EXPECT_DOUBLE_EQ(parse(re, "step 3 41.5 ms").ms, 3.0);  // the first number, no unit: ms
  EXPECT_DOUBLE_EQ(parse("step [0-9]+ ([0-9.]+)", "step 3 41.5 ms").ms, 41.5);
  EXPECT_DOUBLE_EQ(parse("time", "time 0.25 s").ms, 250.0);
  EXPECT_DOUBLE_EQ(parse("time", "time 0.25s").ms, 250.0);
  EXPECT_DOUBLE_EQ(parse("time", "time 250us").ms, 0.25);
  EXPECT_DOUBLE_EQ(parse("time", "time 250 \xc2\xb5s").ms, 0.25);
  EXPECT_DOUBLE_EQ(parse("time", "time 5e2 ns").ms, 5e-4);
  EXPECT_DOUBLE_EQ(parse("it", "it 1.5s/it").ms, 1500.0);   // tqdm's seconds per iteration
  EXPECT_DOUBLE_EQ(parse("t", "t 12 ms/step").ms, 12.0);    // "/step" is not "/s"
  EXPECT_DOUBLE_EQ(parse("t", "t 7 steps").ms, 7.0);        // "steps" is not seconds
  EXPECT_EQ(parse("it", "it 3.2it/s").kind, StepLine::Kind::Rate);  // a rate is not a time
  EXPECT_EQ(parse("it", "it 800 img/s").kind, StepLine::Kind::Rate);
}

TEST(WatchSteps, JunkAndNoMatch) {
  EXPECT_EQ(parse("step ([0-9.]+) ms", "loss 0.5").kind, StepLine::Kind::NoMatch);
  EXPECT_EQ(parse("step", "step done").kind, StepLine::Kind::NoNumber);
  EXPECT_EQ(parse("step", "").kind, StepLine::Kind::NoMatch);
  EXPECT_FALSE(StepParser::make("step (").ok());
}

TEST(WatchSteps, WarmUpAndDistribution) {
  EXPECT_EQ(watch::warmup_steps(2), 0);
  EXPECT_EQ(watch::warmup_steps(3), 1);
  EXPECT_EQ(watch::warmup_steps(50), 5);
  EXPECT_EQ(watch::warmup_steps(1000), 10);
  std::vector<double> ms{100, 90, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};  // 12 steps: 2 warm-up
  const auto s = watch::step_stats(ms);
  EXPECT_EQ(s.warmup, 2);
  ASSERT_EQ(s.ms.size(), 10u);
  EXPECT_DOUBLE_EQ(*s.median_ms, 14.5);
  EXPECT_NEAR(*s.p10_ms, 10.9, 1e-9);
  EXPECT_NEAR(*s.p90_ms, 18.1, 1e-9);
}

TEST(WatchSteps, TheStepsWindowFromTheLinesTimes) {
  // Lines at 1.0, 1.1, ... s; 2 warm-up steps: the first counted step began with the second line.
  const std::vector<double> at{1.0, 1.1, 1.2, 1.3, 1.4}, ms{100, 100, 100, 100, 100};
  auto w = watch::steps_window(at, ms, 2);
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->from_s, 1.1);
  EXPECT_DOUBLE_EQ(w->to_s, 1.4);
  // No warm-up: from the first step's own start, its line less its time (never before 0).
  w = watch::steps_window(at, ms, 0);
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->from_s, 0.9);
  w = watch::steps_window({0.05, 0.1}, {100, 50}, 0);
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->from_s, 0.0);
  // Fewer than two counted steps, mismatched lists, NaN, times that do not move: none.
  EXPECT_FALSE(watch::steps_window(at, ms, 4).has_value());
  EXPECT_FALSE(watch::steps_window({}, {}, 0).has_value());
  EXPECT_FALSE(watch::steps_window({1.0, 1.1}, {100}, 0).has_value());
  EXPECT_FALSE(watch::steps_window({1.0, std::nan("")}, {100, 100}, 0).has_value());
  EXPECT_FALSE(watch::steps_window({1.0, 1.0, 1.0}, {100, 100, 100}, 1).has_value());
  EXPECT_FALSE(watch::steps_window(at, ms, -1).has_value());
}

TEST(WatchSteps, DefaultCaseName) {
  EXPECT_EQ(watch::default_case_name({"python3", "-u", "ci/examples/train_step.py", "--amp"}), "watch/train_step");
  EXPECT_EQ(watch::default_case_name({"python", "-m", "torch.utils.bottleneck"}), "watch/torch.utils.bottleneck");
  EXPECT_EQ(watch::default_case_name({"./bin/train"}), "watch/train");
}

// A GPU at the GEMM loop's figures once the command runs.
class FakeNvml final : public NvmlApi {
 public:
  void query(const std::string&, Telemetry*) const override {}
  std::vector<GpuActivity> activity() const override {
    GpuActivity a;
    a.name = "NVIDIA H200";
    a.uuid = "GPU-fake-0";
    return {a};
  }
  unsigned device_count() const override { return 1; }
  std::optional<bool> gpm_supported(unsigned) const override { return true; }
  std::optional<GpuSample> sample(unsigned) const override {
    GpuSample s;
    s.util_gpu_pct = 97;
    s.power_W = 691.9;
    s.power_limit_W = 700;
    s.sm_clock_MHz = 1482;
    s.sm_clock_max_MHz = 1980;
    s.sm_active_pct = 93.7;
    s.tensor_active_pct = 90.9;
    s.dram_bw_pct = 17.1;
    s.pcie_rx_MBps = 2.7;
    s.pcie_tx_MBps = 1.0;
    s.clock_event_reasons = 0x4;
    return s;
  }
};

struct Ran {
  int status = 0;
  std::string out, err, passed;  // watch's text; what the command printed (through a file)
  std::shared_ptr<testutil::TempDir> tmp;  // holds dir and the passed-through text; removed with the last copy
  std::filesystem::path dir;
};

Ran watch_run(const std::vector<std::string>& extra, const std::vector<std::string>& command, bool with_gpu = true,
              std::function<void()> during = nullptr) {
  Ran r;
  r.tmp = std::make_shared<testutil::TempDir>("gpucheck-watch-test");
  r.dir = r.tmp->path() / "out";
  const std::string passed = *r.tmp / "passed";
  std::FILE* f = std::fopen(passed.c_str(), "w+");
  std::vector<std::string> args{"--out", r.dir.string(), "--interval", "20"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  FakeNvml nvml;
  WatchDeps deps;
  deps.nvml = with_gpu ? &nvml : nullptr;
  deps.nvml_error = testing::kNoNvml;
  deps.out_fd = ::fileno(f);
  deps.err_fd = ::fileno(f);
  std::thread t;
  if (during) t = std::thread(during);
  const testing::WatchCli w = testing::watch_cli(args, deps);
  if (t.joinable()) t.join();
  std::fflush(f);
  std::fclose(f);
  r.passed = testutil::slurp(passed);
  r.status = w.status;
  r.out = w.out;
  r.err = w.err;
  return r;
}

nlohmann::json read_json(const std::filesystem::path& p) {
  return nlohmann::json::parse(testutil::slurp(p.string()));
}

TEST(WatchCommand, StepsGiveACaseThatCompareReads) {
  const Ran r = watch_run({"--step", "step [0-9]+ ([0-9.]+) ms", "--name", "watch/fake"},
                          {"sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo \"step $i 4$i.5 ms\"; sleep 0.03; done; echo done"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.passed.find("step 12 412.5 ms\ndone\n"), std::string::npos);  // passed through unchanged
  EXPECT_EQ(r.out.rfind("gpucheck watch: compute-bound", 0), 0u) << r.out;  // the verdict first
  EXPECT_NE(r.out.find("steps: 10 after 2 warm-up"), std::string::npos) << r.out;
  const auto w = read_json(r.dir / "watch.json");
  EXPECT_EQ(w["verdict"]["bound"], "compute_bound");
  EXPECT_EQ(w["steps"]["warmup"], 2);
  ASSERT_TRUE(w["steps"]["from_s"].is_number());  // when the counted steps ran
  EXPECT_LT(w["steps"]["from_s"].get<double>(), w["steps"]["to_s"].get<double>());
  EXPECT_EQ(w["verdict"]["gpus"][0]["window"], "steps");  // the figures are over the steps
  EXPECT_GE(w["gpus"][0]["timeline"]["util_pct"].size(), 3u);
  {
    const std::string html = testutil::slurp((r.dir / "watch.html").string());
    EXPECT_NE(html.find("<b>compute-bound"), std::string::npos);  // the verdict first
    EXPECT_NE(html.find("utilisation beside SM active"), std::string::npos);
    EXPECT_NE(html.find("power against the enforced limit"), std::string::npos);
    EXPECT_NE(html.find("step time after 2 warm-up steps"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);  // self-contained, no scripts
  }

  RealFileSystem fs;
  auto res = load_results(fs, (r.dir / "results.json").string());
  ASSERT_TRUE(res.ok()) << res.error().str();
  const Benchmark* b = res->find("watch/fake");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->repetitions, 10);
  EXPECT_DOUBLE_EQ(b->real_time_ns, 48.0e6);  // the median of 43.5..49.5, 410.5..412.5
  EXPECT_EQ(res->context_value("gpu_name"), "NVIDIA H200");
  EXPECT_TRUE(b->counters.count("util_pct"));
  EXPECT_TRUE(b->counters.count("sm_active_pct"));
  // Against itself: no regression.
  const Comparison c = compare_results(*res, *res, CompareOptions{});
  EXPECT_FALSE(c.failed());
}

// Issue 36: every step was an entry of results.json (20 MB of step lines: a 774 MB file, 7.1 GB
// RSS). Past 10,000 steps the records keep the summary over every step, not each one.
TEST(WatchCommand, ManyStepsKeepTheRecordsBounded) {
  const Ran r = watch_run({"--step", "step ([0-9.]+) ms", "--name", "watch/many"},
                          {"awk", "BEGIN { for (i = 0; i < 12010; i++) print \"step\", 5 + i % 3, \"ms\" }"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto w = read_json(r.dir / "watch.json");
  EXPECT_EQ(w["steps"]["seen"], 12010);
  EXPECT_EQ(w["steps"]["ms"].size(), 10000u);
  EXPECT_EQ(w["steps"]["ms_sampled"], true);
  EXPECT_EQ(w["steps"]["median_ms"], 6.0);
  RealFileSystem fs;
  auto res = load_results(fs, (r.dir / "results.json").string());
  ASSERT_TRUE(res.ok()) << res.error().str();
  const auto j = read_json(r.dir / "results.json");
  int iterations = 0;
  for (const auto& b : j["benchmarks"]) iterations += b["run_type"] == "iteration";
  EXPECT_EQ(iterations, 0);  // the aggregates alone
  const Benchmark* b = res->find("watch/many");
  ASSERT_NE(b, nullptr);
  EXPECT_DOUBLE_EQ(b->real_time_ns, 6.0e6);  // the median over every counted step
}

TEST(WatchCommand, ExitStatusPassesThrough) {
  const Ran r = watch_run({}, {"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.passed.find("out\n"), std::string::npos);
  EXPECT_NE(r.passed.find("err\n"), std::string::npos);
  auto res = read_json(r.dir / "results.json");
  EXPECT_EQ(res["benchmarks"][0]["error_occurred"], true);  // the wall time of a failed run is no figure
}

TEST(WatchCommand, ASignalIs128PlusN) {
  const Ran r = watch_run({}, {"sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(r.status, 128 + SIGTERM);
}

TEST(WatchCommand, NotFoundIs127AndOneLine) {
  const Ran r = watch_run({}, {"gpucheck-no-such-command-xyz"});
  EXPECT_EQ(r.status, 127);
  EXPECT_EQ(r.err, "gpucheck watch: gpucheck-no-such-command-xyz: No such file or directory\n");
}

TEST(WatchCommand, SigintReachesTheCommandAndTheRecordIsComplete) {
  const auto start = std::chrono::steady_clock::now();
  const Ran r = watch_run({}, {"sh", "-c", "echo started; exec sleep 20"}, true, [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    ::kill(::getpid(), SIGINT);  // as `kill -INT` of watch alone: forwarded to the command
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(r.status, 128 + SIGINT);
  const auto w = read_json(r.dir / "watch.json");
  EXPECT_EQ(w["exit_status"], 130);
  EXPECT_EQ(w["verdict"]["bound"], "compute_bound");
  EXPECT_TRUE(std::filesystem::exists(r.dir / "results.json"));
}

TEST(WatchCommand, WithoutNvmlTheHostSideStill) {
  const Ran r = watch_run({}, {"sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"}, false);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("gpucheck watch: no GPU was sampled", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("host: CPU"), std::string::npos);
  const auto w = read_json(r.dir / "watch.json");
  EXPECT_EQ(w["gpu_sampled"], false);
}

TEST(WatchCommand, BadOptionsAreExit2) {
  EXPECT_EQ(watch_run({"--step", "("}, {"true"}).status, 2);
  EXPECT_EQ(watch_run({"--interval", "5"}, {"true"}).status, 2);
  EXPECT_EQ(watch_run({"--devices", "3"}, {"true"}).status, 2);  // the fake has one GPU
}

// A GPUCHECK_CONTAINMENT the runner does not know is the user's mistake: exit 2 and one line
// naming the variable and its words, before the command starts (not 127, "cannot start").
TEST(WatchCommand, ABadContainmentIsExit2BeforeTheCommandStarts) {
  testutil::TempDir tmp("gpucheck-watch-test");
  const auto marker = tmp.path() / "started";
  WatchDeps deps;
  deps.nvml_error = testing::kNoNvml;
  deps.containment_env = "bogus";
  const auto w = testing::watch_cli({"--out", (tmp.path() / "out").string(), "--", "sh", "-c", "touch '" + marker.string() + "'"}, deps);
  EXPECT_EQ(w.status, 2);
  EXPECT_EQ(std::count(w.err.begin(), w.err.end(), '\n'), 1) << w.err;
  EXPECT_NE(w.err.find("GPUCHECK_CONTAINMENT"), std::string::npos) << w.err;
  for (const char* word : {"pid-namespace", "cgroup", "subreaper"}) EXPECT_NE(w.err.find(word), std::string::npos) << w.err;
  EXPECT_FALSE(std::filesystem::exists(marker));  // the command never ran
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "out"));
  for (const char* word : {"pid-namespace", "cgroup", "subreaper"}) EXPECT_TRUE(watch::check_containment_env(std::string(word)).ok()) << word;
  EXPECT_TRUE(watch::check_containment_env(std::string()).ok());  // empty: the default order
  EXPECT_TRUE(watch::check_containment_env(std::nullopt).ok());
}

}  // namespace
}  // namespace gpucheck::compare
