// gpucheck watch --pid: a job already running (here a shell loop writing a log, this machine
// having no NVML), its log followed as tail -F, until it ends, the duration passes or a stop
// signal comes; the record is written each way and the exit status is 0; a PID that does not
// exist is exit 2 and one line. The log follower on its own: new lines only, truncation,
// rotation, a file that appears later.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../test_util.hpp"
#include "watch/command.hpp"
#include "watch/follow.hpp"
#include "watch_cli.hpp"

extern char** environ;

namespace gpucheck::compare {
namespace {

namespace fs = std::filesystem;

void append(const fs::path& p, const std::string& text) {
  std::FILE* f = std::fopen(p.c_str(), "a");
  ASSERT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
}

std::vector<std::string> follow_lines(watch::FileFollower& f, std::vector<std::string>& got) {
  f.poll();
  return got;
}

TEST(WatchFollow, NewLinesOnlyThenAppendedOnes) {
  testutil::TempDir tmp("gpucheck-watch-follow");
  const fs::path log = tmp.path() / "train.log";
  append(log, "step 1 10 ms\nstep 2 11 ms\n");
  std::vector<std::string> got;
  watch::FileFollower f(log.string(), [&](std::string_view l) { got.emplace_back(l); });
  EXPECT_TRUE(f.is_open());
  EXPECT_TRUE(follow_lines(f, got).empty());  // what was there has no time to place it at
  append(log, "step 3 12 ms\nstep 4 1");
  EXPECT_EQ(follow_lines(f, got), (std::vector<std::string>{"step 3 12 ms"}));
  append(log, "3 ms\n");  // the partial line completed
  EXPECT_EQ(follow_lines(f, got), (std::vector<std::string>{"step 3 12 ms", "step 4 13 ms"}));
}

TEST(WatchFollow, TruncatedIsReadFromItsStart) {
  testutil::TempDir tmp("gpucheck-watch-follow");
  const fs::path log = tmp.path() / "train.log";
  append(log, "old line that is long enough\n");
  std::vector<std::string> got;
  watch::FileFollower f(log.string(), [&](std::string_view l) { got.emplace_back(l); });
  fs::resize_file(log, 0);
  append(log, "new\n");
  EXPECT_EQ(follow_lines(f, got), (std::vector<std::string>{"new"}));
  EXPECT_EQ(f.reopened(), 1);
}

TEST(WatchFollow, RotatedIsReadToItsEndThenTheNewFile) {
  testutil::TempDir tmp("gpucheck-watch-follow");
  const fs::path log = tmp.path() / "train.log";
  append(log, "");
  std::vector<std::string> got;
  watch::FileFollower f(log.string(), [&](std::string_view l) { got.emplace_back(l); });
  append(log, "last of the old\n");
  fs::rename(log, tmp.path() / "train.log.1");
  append(log, "first of the new\n");
  EXPECT_EQ(follow_lines(f, got), (std::vector<std::string>{"last of the old", "first of the new"}));
  EXPECT_EQ(f.reopened(), 1);
}

TEST(WatchFollow, AFileThatAppearsLaterIsReadFromItsStart) {
  testutil::TempDir tmp("gpucheck-watch-follow");
  const fs::path log = tmp.path() / "later.log";
  std::vector<std::string> got;
  watch::FileFollower f(log.string(), [&](std::string_view l) { got.emplace_back(l); });
  EXPECT_FALSE(f.is_open());
  f.poll();
  append(log, "one\ntwo\n");
  EXPECT_EQ(follow_lines(f, got), (std::vector<std::string>{"one", "two"}));
}

// A job this test starts (so it is a child: it stays a zombie until reaped, which watch reads as ended).
struct Job {
  pid_t pid = -1;
  explicit Job(const std::string& script) {
    std::vector<std::string> argv{"sh", "-c", script};
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    if (::posix_spawnp(&pid, "sh", nullptr, nullptr, a.data(), environ) != 0) pid = -1;
    // posix_spawn returns once exec has begun; the new command line is there a moment later.
    for (int i = 0; pid > 0 && i < 200 && testutil::slurp("/proc/" + std::to_string(pid) + "/cmdline").empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~Job() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    int st = 0;
    ::waitpid(pid, &st, 0);
  }
};

struct Attached : testing::WatchCli {
  nlohmann::json record;
};

Attached attach(const std::vector<std::string>& tail, const fs::path& out, const std::atomic<int>* stop = nullptr,
                const NvmlApi* nvml = nullptr) {
  std::vector<std::string> args{"--out", out.string(), "--interval", "20"};
  args.insert(args.end(), tail.begin(), tail.end());
  WatchDeps deps;
  deps.nvml = nvml;
  deps.nvml_error = testing::kNoNvml;
  deps.stop = stop;
  Attached a{testing::watch_cli(args, deps), {}};
  if (fs::exists(out / "watch.json")) a.record = nlohmann::json::parse(testutil::slurp((out / "watch.json").string()));
  return a;
}

TEST(WatchAttach, UntilTheJobEndsWithStepsFromItsLog) {
  testutil::TempDir tmp("gpucheck-watch-attach");
  const fs::path log = tmp.path() / "train.log";
  append(log, "step 0 999 ms\n");  // before watch came: not counted
  Job job("sleep 0.3; i=1; while [ $i -le 14 ]; do echo \"step $i 5$i ms\" >> '" + log.string() +
          "'; i=$((i+1)); sleep 0.05; done");
  ASSERT_GT(job.pid, 0);
  const Attached a = attach({"--pid", std::to_string(job.pid), "--log", log.string(), "--step", "step [0-9]+ ([0-9]+) ms"},
                            tmp.path() / "out");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out.rfind("gpucheck watch: no GPU was sampled", 0), 0u) << a.out;  // NVML is absent here: it says so
  EXPECT_EQ(a.record["attached"]["end"], "the job ended");
  EXPECT_EQ(a.record["attached"]["pid"], job.pid);
  EXPECT_TRUE(a.record["exit_status"].is_null());  // not watch's child: no status to pass on
  EXPECT_EQ(a.record["steps"]["seen"], 14);
  EXPECT_EQ(a.record["command"][0], "sh");
  EXPECT_GE(a.record["host"]["t_s"].size(), 5u);  // the host side still sampled
  EXPECT_EQ(a.record["host"]["tree_processes"][0].get<int>() >= 1, true);
  EXPECT_NE(a.out.find("attached): the job ended"), std::string::npos) << a.out;
}

TEST(WatchAttach, UntilTheDurationPasses) {
  testutil::TempDir tmp("gpucheck-watch-attach");
  Job job("exec sleep 30");
  ASSERT_GT(job.pid, 0);
  const auto start = std::chrono::steady_clock::now();
  const Attached a = attach({"--pid", std::to_string(job.pid), "--duration", "1"}, tmp.path() / "out");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.record["attached"]["end"], "the duration passed");
  EXPECT_GE(a.record["duration_s"].get<double>(), 1.0);
}

TEST(WatchAttach, AStopSignalWritesTheRecord) {
  testutil::TempDir tmp("gpucheck-watch-attach");
  Job job("exec sleep 30");
  ASSERT_GT(job.pid, 0);
  std::atomic<int> stop{0};
  std::thread ctrl_c([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = SIGINT;
  });
  const Attached a = attach({"--pid", std::to_string(job.pid)}, tmp.path() / "out", &stop);
  ctrl_c.join();
  ASSERT_EQ(a.status, 0) << a.err;  // main turns the stop into 128+N once the record is written
  EXPECT_EQ(a.record["attached"]["end"], "stopped (signal 2)");
  EXPECT_TRUE(fs::exists(tmp.path() / "out" / "results.json"));
  EXPECT_EQ(::kill(job.pid, 0), 0);  // the job itself is left running
}

// Two GPUs; NVML lists the job on GPU 1 only, at the starved loop's figures.
class TwoGpus final : public NvmlApi {
 public:
  explicit TwoGpus(unsigned pid) : pid_(pid) {}
  void query(const std::string&, Telemetry*) const override {}
  std::vector<GpuActivity> activity() const override {
    std::vector<GpuActivity> out(2);
    out[0].nvml_index = 0;
    out[1].nvml_index = 1;
    out[1].processes.push_back(GpuProcess{pid_, "sh", 1u << 30});
    return out;
  }
  unsigned device_count() const override { return 2; }
  std::optional<bool> gpm_supported(unsigned) const override { return true; }
  std::optional<GpuSample> sample(unsigned i) const override {
    GpuSample s;
    s.util_gpu_pct = i == 1 ? 5 : 0;
    s.sm_active_pct = i == 1 ? 4.2 : 0.0;
    s.power_W = 150;
    s.power_limit_W = 700;
    return s;
  }

 private:
  unsigned pid_;
};

TEST(WatchAttach, TheJobsGpusAreThoseNvmlListsItOn) {
  testutil::TempDir tmp("gpucheck-watch-attach");
  Job job("exec sleep 30");
  ASSERT_GT(job.pid, 0);
  const TwoGpus nvml(static_cast<unsigned>(job.pid));
  const Attached a = attach({"--pid", std::to_string(job.pid), "--duration", "2"}, tmp.path() / "out", nullptr, &nvml);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.record["gpus"][0]["in_job"], false);
  EXPECT_EQ(a.record["gpus"][1]["in_job"], true);
  EXPECT_EQ(a.record["gpus"][1]["job_process"], true);
  EXPECT_EQ(a.record["verdict"]["bound"], "starved");
}

TEST(WatchAttach, APidThatDoesNotExistIsExit2AndOneLine) {
  testutil::TempDir tmp("gpucheck-watch-attach");
  Job gone("exit 0");
  ASSERT_GT(gone.pid, 0);
  int st = 0;
  ::waitpid(gone.pid, &st, 0);  // reaped: the pid names nothing now
  const int pid = gone.pid;
  gone.pid = -1;
  for (const std::string& bad : {std::to_string(pid), std::string("0"), std::string("-3"), std::string("abc")}) {
    const Attached a = attach({"--pid", bad}, tmp.path() / "out");
    EXPECT_EQ(a.status, 2) << bad;
    EXPECT_EQ(std::count(a.err.begin(), a.err.end(), '\n'), 1) << a.err;
    EXPECT_FALSE(fs::exists(tmp.path() / "out")) << bad;  // nothing made
  }
}

TEST(WatchAttach, OptionsThatDoNotGoTogether) {
  testutil::TempDir tmp("gpucheck-watch-attach");
  const std::string self = std::to_string(::getpid());
  EXPECT_EQ(attach({"--pid", self, "--", "true"}, tmp.path() / "o").status, 2);
  EXPECT_EQ(attach({"--log", "x.log", "--", "true"}, tmp.path() / "o").status, 2);
  EXPECT_EQ(attach({"--duration", "5", "--", "true"}, tmp.path() / "o").status, 2);
  EXPECT_EQ(attach({"--pid", self, "--duration", "0"}, tmp.path() / "o").status, 2);
  EXPECT_EQ(attach({"--pid", self, "--step", "("}, tmp.path() / "o").status, 2);
  EXPECT_EQ(attach({"--pid", self, "--log", "x.log"}, tmp.path() / "o").status, 2);  // no --step: nothing to read it for
}

// A --log that exists and is not a regular file is refused at once: a folder or a device is no
// log, and a FIFO read by watch would take the lines from the job's own reader. One that does
// not exist yet is waited for (above), never refused.
TEST(WatchAttach, ALogThatIsNotARegularFileIsExit2AndOneLine) {
  testutil::TempDir tmp("gpucheck-watch-attach");
  const std::string self = std::to_string(::getpid());
  const fs::path fifo = tmp.path() / "log.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& log : {tmp.path().string(), fifo.string(), std::string("/dev/null")}) {
    const Attached a = attach({"--pid", self, "--log", log, "--step", "step ([0-9]+)"}, tmp.path() / "o");
    EXPECT_EQ(a.status, 2) << log;
    EXPECT_EQ(std::count(a.err.begin(), a.err.end(), '\n'), 1) << a.err;
    EXPECT_NE(a.err.find("--log"), std::string::npos) << a.err;
    EXPECT_NE(a.err.find(log), std::string::npos) << a.err;
    EXPECT_FALSE(fs::exists(tmp.path() / "o")) << log;  // nothing made
  }
}

TEST(WatchFollow, OnlyARegularFileIsFollowed) {
  testutil::TempDir tmp("gpucheck-watch-follow");
  const fs::path fifo = tmp.path() / "log.fifo", dir = tmp.path() / "dir", file = tmp.path() / "train.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directories(dir);
  append(file, "");
  EXPECT_FALSE(watch::log_refusal((tmp.path() / "not-yet.log").string()).has_value());  // waited for
  EXPECT_FALSE(watch::log_refusal(file.string()).has_value());
  for (const fs::path& p : {fifo, dir, fs::path("/dev/null"), file / "x"}) {
    EXPECT_TRUE(watch::log_refusal(p.string()).has_value()) << p;
    std::vector<std::string> got;
    watch::FileFollower f(p.string(), [&](std::string_view l) { got.emplace_back(l); });
    f.poll();
    EXPECT_FALSE(f.is_open()) << p;  // never opened: a FIFO's writer is not let on by watch
  }
}

}  // namespace
}  // namespace gpucheck::compare
