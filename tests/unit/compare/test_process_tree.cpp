// The end of a child's whole process tree (runner/contain.hpp), with real processes: chains of
// nested setsid sleepers that hold the binary's stderr, counted by a mark in their environment
// after each end (the binary's own, a timeout, a SIGKILL of the gate); watch's command tree
// likewise; the NSpid map from the namespace's pids to the host's; the line splitter's bounds
// and PCRE2's limits; and the stop signals. Where this machine refuses a mechanism (no PID
// namespace, no writable cgroup v2), its tests skip with the reason.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../test_util.hpp"
#include "gpucheck/core/stop.hpp"
#include "runner/contain.hpp"
#include "runner/process.hpp"
#include "watch/child.hpp"
#include "watch/steps.hpp"

namespace gpucheck::compare {
namespace {

using Clock = std::chrono::steady_clock;

// How many live processes carry `mark` in their environment (zombies have none left).
int count_marked(const std::string& mark) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (env.find("GPUCHECK_TREE_MARK=" + mark) != std::string::npos) ++n;
  }
  return n;
}

// Waits (up to 5 s: the stop must be honoured, not timed) until none carries the mark.
int survivors_after_settling(const std::string& mark) {
  const auto until = Clock::now() + std::chrono::seconds(5);
  int n = count_marked(mark);
  while (n > 0 && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    n = count_marked(mark);
  }
  return n;
}

// A binary that builds a chain of `depth` nested setsid shells, each holding its stderr and
// sleeping, waits until the deepest is up, then exits `code` (or, hang: sleeps).
struct Chain {
  testutil::TempDir tmp{"gpucheck-tree"};
  std::string mark = std::to_string(::getpid()) + "-" + std::to_string(Clock::now().time_since_epoch().count());
  std::string script = (tmp.path() / "chain.sh").string();
  std::string ready = (tmp.path() / "ready").string();
  Chain() {
    testutil::write_file(script,
                         "#!/bin/sh\n"
                         "export GPUCHECK_TREE_MARK=" + mark + "\n"
                         "n=$1; top=$2; hang=$3\n"
                         "if [ \"$n\" -gt 0 ]; then setsid /bin/sh \"$0\" $((n-1)) 0 0 & else : > " + ready + "; fi\n"
                         "if [ \"$top\" = 1 ]; then\n"
                         "  while [ ! -e " + ready + " ]; do sleep 0.02; done\n"
                         "  echo chain up >&2\n"
                         "  if [ \"$hang\" = 1 ]; then sleep 300; fi\n"
                         "  exit 0\n"
                         "fi\n"
                         "sleep 300\n");
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  }
  ProcessSpec spec(int depth, bool hang) const {
    ProcessSpec s;
    s.program = script;
    s.args = {std::to_string(depth), "1", hang ? "1" : "0"};
    s.stdout_path = (tmp.path() / "out.log").string();
    s.stderr_path = (tmp.path() / "err.log").string();
    s.kill_grace_s = 0.5;
    return s;
  }
};

class ProcessTree : public ::testing::TestWithParam<Containment> {};

ProcessResult run_chain(const Chain& c, int depth, bool hang, double timeout_s, Containment how) {
  ProcessSpec s = c.spec(depth, hang);
  s.timeout_s = timeout_s;
  s.containment = how;
  PosixProcessRunner runner;
  return runner.run(s);
}

// Issue 36: chains of 25 and 100 left 5 and 81 processes alive after PASS (20 rounds of the
// orphan walk), and the final drain spun while they held stderr.
TEST_P(ProcessTree, AChainOfSetsidSleepersEndsWithTheBinary) {
  for (const int depth : {25, 100}) {
    Chain c;
    const ProcessResult r = run_chain(c, depth, false, 60, GetParam());
    if (r.containment != GetParam()) GTEST_SKIP() << containment_name(GetParam()) << " is refused here";
    EXPECT_EQ(r.end, ProcessResult::End::Exited);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(survivors_after_settling(c.mark), 0) << "depth " << depth;
    EXPECT_NE(testutil::slurp(c.spec(0, false).stderr_path).find("chain up"), std::string::npos);
  }
}

// The timeout counts from the start, whatever holds the pipes: a hanging binary whose chain
// holds stderr ends within the timeout and the grace.
TEST_P(ProcessTree, ATimeoutEndsTheTreeWithinTheGrace) {
  Chain c;
  const auto start = Clock::now();
  const ProcessResult r = run_chain(c, 30, true, 1.5, GetParam());
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  if (r.containment != GetParam()) GTEST_SKIP() << containment_name(GetParam()) << " is refused here";
  EXPECT_EQ(r.end, ProcessResult::End::TimedOut);
  EXPECT_LT(took, 1.5 + 0.5 + 3.0);  // the limit, the grace, and the drain's bound (1 s) with slack
  EXPECT_EQ(survivors_after_settling(c.mark), 0);
}

INSTANTIATE_TEST_SUITE_P(Mechanisms, ProcessTree,
                         ::testing::Values(Containment::PidNamespace, Containment::Cgroup, Containment::Subreaper),
                         [](const auto& param_info) {
                           switch (param_info.param) {
                             case Containment::PidNamespace: return std::string("PidNamespace");
                             case Containment::Cgroup: return std::string("Cgroup");
                             case Containment::Subreaper: return std::string("Subreaper");
                           }
                           return std::string("x");
                         });

// kill -9 of the gate: the init's parent-death signal ends the namespace, and the kernel every
// process in it (a parent-death signal alone reaches direct children only).
TEST(ProcessTreeNamespace, AKilledGateLeavesNothing) {
  Chain c;
  const pid_t gate = ::fork();
  ASSERT_GE(gate, 0);
  if (gate == 0) {
    ProcessSpec s = c.spec(20, true);
    s.timeout_s = 120;
    s.containment = Containment::PidNamespace;
    PosixProcessRunner runner;
    const ProcessResult r = runner.run(s);
    ::_exit(r.containment == Containment::PidNamespace ? 0 : 77);
  }
  const auto until = Clock::now() + std::chrono::seconds(20);
  while (!std::filesystem::exists(c.ready) && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  int st = 0;
  if (!std::filesystem::exists(c.ready)) {
    ::waitpid(gate, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) GTEST_SKIP() << "no PID namespace here";
    FAIL() << "the chain never came up";
  }
  EXPECT_GT(count_marked(c.mark), 20);
  ::kill(gate, SIGKILL);
  ::waitpid(gate, &st, 0);
  EXPECT_EQ(survivors_after_settling(c.mark), 0);
}

// NVML lists host pids: a program in its own namespace is known by its host pid, whose NSpid
// line ends with the pid the program sees.
TEST(ProcessTreeNamespace, TheProgramsHostPidMapsToItsOwn) {
  ContainSpec s;
  s.argv = {"sleep", "30"};
  s.search_path = true;
  std::string err;
  auto child = ContainedChild::start(s, &err);
  ASSERT_TRUE(child.has_value()) << err;
  if (child->how() != Containment::PidNamespace) GTEST_SKIP() << "no PID namespace here";
  EXPECT_EQ(child->program_own_pid(), 2);  // the init is 1
  ASSERT_GT(child->program_host_pid(), 0);
  EXPECT_NE(child->program_host_pid(), child->program_own_pid());
  const std::string status = testutil::slurp("/proc/" + std::to_string(child->program_host_pid()) + "/status");
  const std::vector<int> ns = parse_nspid(status);
  ASSERT_GE(ns.size(), 2u);
  EXPECT_EQ(ns.front(), child->program_host_pid());
  EXPECT_EQ(ns.back(), 2);
  const pid_t host = child->program_host_pid();
  child->kill_all();
  EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(host)));
}

// CUDA's driver refuses to start (cuInit: "OS call failed or operation not supported on this
// OS", seen on an H200 machine) in a PID namespace that sees the host's /proc: the program's
// /proc/self must be itself, as its getpid() says.
TEST(ProcessTreeNamespace, TheProgramsProcSelfIsItself) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpucheck-procself-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "pids").string();
  ContainSpec s;
  s.argv = {"sh", "-c", "read pid rest < /proc/self/stat; echo \"$$ $pid\" > " + out};
  s.search_path = true;
  std::string err;
  auto child = ContainedChild::start(s, &err);
  ASSERT_TRUE(child.has_value()) << err;
  const auto how = child->how();
  const auto st = child->wait(true);
  ASSERT_TRUE(st.has_value());
  EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0);
  std::istringstream pids(testutil::slurp(out));
  std::filesystem::remove_all(dir);
  if (how != Containment::PidNamespace) GTEST_SKIP() << "no PID namespace here";
  int own = 0, proc_self = 0;
  pids >> own >> proc_self;
  EXPECT_EQ(own, 2);
  EXPECT_EQ(proc_self, own);
}

// GPUCHECK_CONTAINMENT picks one mechanism; a word it does not know is an error, not a guess.
TEST(ProcessTreeNamespace, TheEnvironmentPicksTheMechanism) {
  ContainSpec s;
  s.argv = {"true"};
  s.search_path = true;
  std::string err;
  ::setenv("GPUCHECK_CONTAINMENT", "subreaper", 1);
  auto a = ContainedChild::start(s, &err);
  ::setenv("GPUCHECK_CONTAINMENT", "namespaces", 1);
  std::string err2;
  auto b = ContainedChild::start(s, &err2);
  ::unsetenv("GPUCHECK_CONTAINMENT");
  ASSERT_TRUE(a.has_value()) << err;
  EXPECT_EQ(a->how(), Containment::Subreaper);
  (void)a->wait(true);
  EXPECT_FALSE(b.has_value());
  EXPECT_EQ(err2.rfind("GPUCHECK_CONTAINMENT: \"namespaces\"", 0), 0u) << err2;
  // gate, run and watch read it before starting anything: a typo is a usage error.
  EXPECT_FALSE(containment_from_env("namespaces"));
  EXPECT_FALSE(containment_from_env("cgroup "));
  EXPECT_EQ(*containment_from_env(nullptr), std::nullopt);
  EXPECT_EQ(*containment_from_env(""), std::nullopt);
  EXPECT_EQ(*containment_from_env("pid-namespace"), Containment::PidNamespace);
  EXPECT_EQ(*containment_from_env("cgroup"), Containment::Cgroup);
  EXPECT_EQ(*containment_from_env("subreaper"), Containment::Subreaper);
}

TEST(ProcessTreePure, NspidLines) {
  EXPECT_EQ(parse_nspid("Name:\tsleep\nNSpid:\t4242\t2\nNSpgid:\t1\n"), (std::vector<int>{4242, 2}));
  EXPECT_EQ(parse_nspid("Name:\tsleep\nNSpid:\t77\n"), (std::vector<int>{77}));
  EXPECT_TRUE(parse_nspid("Name:\tsleep\nPid:\t77\n").empty());        // an old kernel: no line
  EXPECT_TRUE(parse_nspid("NSpid:\t77x\t2\n").empty());               // malformed
  EXPECT_TRUE(parse_nspid("NSpid:\t0\n").empty());                    // no pid is 0
  EXPECT_TRUE(parse_nspid("XNSpid:\t5\n").empty());                   // not at a line's start
  EXPECT_TRUE(parse_nspid("").empty());
}

TEST(ProcessTreePure, TheCgroup2Folder) {
  const std::string hybrid =
      "35 25 0:30 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
      "36 25 0:31 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw\n";
  EXPECT_EQ(cgroup2_folder_from("4:memory:/x\n0::/\n", hybrid), "/sys/fs/cgroup/unified");
  EXPECT_EQ(cgroup2_folder_from("0::/user.slice/job\n", hybrid), "/sys/fs/cgroup/unified/user.slice/job");
  // A container that sees its own part of the hierarchy, mounted at the top.
  const std::string nested = "40 30 0:28 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
  EXPECT_EQ(cgroup2_folder_from("0::/kubepods/pod1/c\n", nested), "/sys/fs/cgroup/c");
  EXPECT_EQ(cgroup2_folder_from("4:memory:/x\n", hybrid), "");  // no v2 line
  EXPECT_EQ(cgroup2_folder_from("0::/\n", "35 25 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw\n"), "");
  EXPECT_EQ(cgroup2_folder_from("", ""), "");
}

// watch: a command's setsid daemon ends with the command (it ran on before).
TEST(ProcessTreeWatch, TheCommandsDaemonEndsWithIt) {
  const std::string mark = "watch-" + std::to_string(::getpid());
  watch::ChildIo io;
  testutil::TempDir tmp("gpucheck-tree-watch");
  const std::string passed = (tmp.path() / "passed").string();
  std::FILE* f = std::fopen(passed.c_str(), "w");
  ASSERT_NE(f, nullptr);
  io.out_fd = io.err_fd = ::fileno(f);
  const watch::ChildEnd end = watch::run_child(
      {"sh", "-c", "export GPUCHECK_TREE_MARK=" + mark + "; setsid sleep 300 & setsid sh -c 'sleep 300' & sleep 0.2; echo up; exit 4"},
      io);
  std::fclose(f);
  EXPECT_EQ(end.status(), 4);
  EXPECT_EQ(survivors_after_settling(mark), 0);
  EXPECT_EQ(testutil::slurp(passed), "up\n");
}

// watch: a closed stdout stops the copy (said once through the callback); the command runs on
// and its status is kept.
TEST(ProcessTreeWatch, AClosedOutputStopsTheRelayNotTheCommand) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ::close(p[0]);  // nobody reads: a write is EPIPE
  struct sigaction ign {}, old {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  watch::ChildIo io;
  io.out_fd = io.err_fd = p[1];
  int said = 0, lines = 0;
  io.on_relay_stopped = [&] { ++said; };
  io.on_line = [&](std::string_view, bool) { ++lines; };
  const watch::ChildEnd end = watch::run_child({"sh", "-c", "for i in 1 2 3 4 5; do echo line $i; sleep 0.02; done; exit 3"}, io);
  ::sigaction(SIGPIPE, &old, nullptr);
  ::close(p[1]);
  EXPECT_EQ(end.status(), 3);
  EXPECT_TRUE(end.relay_stopped);
  EXPECT_EQ(said, 1);
  EXPECT_EQ(lines, 5);  // the step parser still saw every line
}

std::vector<std::string> split_all(const std::vector<std::string>& chunks, int* cut = nullptr) {
  std::vector<std::string> out;
  watch::LineSplitter s([&](std::string_view l) { out.emplace_back(l); });
  for (const auto& c : chunks) s.feed(c);
  s.finish();
  if (cut != nullptr) *cut = s.cut_lines();
  return out;
}

// tqdm redraws with \r: each update is a line; \r\n is one end of line.
TEST(WatchLines, CarriageReturnEndsALine) {
  EXPECT_EQ(split_all({"a 1\rb 2\rc 3\n"}), (std::vector<std::string>{"a 1", "b 2", "c 3"}));
  EXPECT_EQ(split_all({"x\r\ny\r\n"}), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(split_all({"x\r", "\ny\n"}), (std::vector<std::string>{"x", "y"}));  // split across reads
  EXPECT_EQ(split_all({"x\n\ny"}), (std::vector<std::string>{"x", "", "y"}));
}

// A line past 64 KiB is cut there and counted; the next line is whole.
TEST(WatchLines, ALongLineIsCutAndCounted) {
  const std::string big(200 * 1024, '7');
  int cut = 0;
  const auto lines = split_all({big.substr(0, 70000), big.substr(70000), "\nnext 5 ms\n"}, &cut);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].size(), watch::LineSplitter::kMaxLine);
  EXPECT_EQ(lines[1], "next 5 ms");
  EXPECT_EQ(cut, 1);
  int none = 0;
  (void)split_all({std::string(watch::LineSplitter::kMaxLine, 'a') + "\n"}, &none);
  EXPECT_EQ(none, 0);  // exactly at the bound: whole
}

// PCRE2: a 100 KB digit run (std::regex recursed per character and crashed) and a catastrophic
// pattern (bounded by the match limit: the line is counted, not waited on).
TEST(WatchLines, TheStepPatternIsBounded) {
  auto p = watch::StepParser::make("step ([0-9]+)");
  auto tail = watch::StepParser::make("x ([0-9]+)");
  if (!p.ok() && p.error().str().find("libpcre2-8.so.0") != std::string::npos) GTEST_SKIP() << p.error().str();
  ASSERT_TRUE(p.ok()) << p.error().str();
  ASSERT_TRUE(tail.ok());
  const auto digits = tail->parse(std::string(100 * 1024, '9') + " x 7 ms");
  EXPECT_EQ(digits.kind, watch::StepLine::Kind::Time);
  EXPECT_DOUBLE_EQ(digits.ms, 7.0);
  auto bad = watch::StepParser::make("(a+)+$");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->parse(std::string(40, 'a') + "b").kind, watch::StepLine::Kind::Limit);
  EXPECT_EQ(p->parse("step 12 ms\r").kind, watch::StepLine::Kind::Time);
  auto err = watch::StepParser::make("step (");
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().str().find("not a regular expression"), std::string::npos);
}

// A stop signal outside a polled scope ends the process at once with 128+N; inside one it only
// sets the flag. SIGPIPE is ignored: a closed pipe is EPIPE.
TEST(StopSignals, OutsideAPolledScopeTheProcessEnds) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(STDERR_FILENO);
      gpucheck::install_stop_handlers();
      ::raise(sig);
      ::_exit(0);  // not reached
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 128 + sig);
  }
}

TEST(StopSignals, InsideAPolledScopeTheFlagIsSet) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    gpucheck::install_stop_handlers();
    int code = 1;
    {
      gpucheck::StopPolled polled;
      ::raise(SIGTERM);
      if (gpucheck::stop_signal() == SIGTERM) code = 0;
    }
    int p[2];
    if (::pipe(p) != 0) ::_exit(3);
    ::close(p[0]);
    if (!(::write(p[1], "x", 1) < 0 && errno == EPIPE)) code = 2;  // alive, and told
    ::_exit(code);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st)) << "ended by signal " << WTERMSIG(st);
  EXPECT_EQ(WEXITSTATUS(st), 0);
}

}  // namespace
}  // namespace gpucheck::compare
