// posix_spawn rather than fork: no copy of a large parent, and glibc reports a failed exec as
// the return value. The child gets its own process group so a timeout reaches everything it
// started (an MPI launcher, a shell's children), and /dev/null as stdin.
#include "runner/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace gpucheck::compare {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Polls waitpid until the child exits or `limit_s` passes (negative: no limit). Short sleeps
// at first so quick binaries (and tests) are not slowed by the polling.
bool wait_for(pid_t pid, int* status, double limit_s, const std::atomic<int>* stop, bool* stopped) {
  const auto start = Clock::now();
  int nap_us = 500;
  for (;;) {
    const pid_t r = ::waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // ECHILD: nothing left to wait for
    if (stop != nullptr && stop->load() != 0) {
      *stopped = true;
      return false;
    }
    if (limit_s >= 0 && since(start) >= limit_s) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(nap_us));
    nap_us = std::min(nap_us * 2, 20000);
  }
}

// SIGTERM to the group, SIGKILL after the grace period; reaps the child.
bool stop_group(pid_t pid, int* status, double grace_s) {
  ::kill(-pid, SIGTERM);
  bool ignored = false;
  if (!wait_for(pid, status, grace_s, nullptr, &ignored)) {
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
    }
    return true;
  }
  return false;
}

struct SpawnSetup {
  posix_spawn_file_actions_t files{};
  posix_spawnattr_t attr{};
  SpawnSetup() {
    posix_spawn_file_actions_init(&files);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

std::string signal_name(int sig) {
  if (const char* abbrev = ::sigabbrev_np(sig); abbrev != nullptr) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

ProcessResult PosixProcessRunner::run(const ProcessSpec& spec) {
  ProcessResult res;
  SpawnSetup s;
  posix_spawn_file_actions_addopen(&s.files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&s.files, STDOUT_FILENO, spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&s.files, STDERR_FILENO, spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // Own process group; default dispositions and an empty mask, whatever the gate installed.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&s.attr, 0);
  posix_spawnattr_setsigmask(&s.attr, &none);
  posix_spawnattr_setsigdefault(&s.attr, &defaults);

  std::vector<std::string> argv_s;
  argv_s.reserve(spec.args.size() + 1);
  argv_s.push_back(spec.program);
  argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  const auto start = Clock::now();
  pid_t pid = 0;
  if (const int rc = ::posix_spawn(&pid, spec.program.c_str(), &s.files, &s.attr, argv.data(), environ); rc != 0) {
    res.end = ProcessResult::End::CouldNotStart;
    res.error = std::strerror(rc);
    return res;
  }
  int status = 0;
  bool stopped = false;
  const double limit = spec.timeout_s > 0 ? spec.timeout_s : -1.0;
  if (!wait_for(pid, &status, limit, stop_, &stopped)) {
    res.killed_hard = stop_group(pid, &status, spec.kill_grace_s);
    res.end = stopped ? ProcessResult::End::Interrupted : ProcessResult::End::TimedOut;
    res.seconds = since(start);
    return res;
  }
  res.seconds = since(start);
  // Whatever the binary left running in its group (helpers, daemons) goes with it.
  ::kill(-pid, SIGKILL);
  if (WIFEXITED(status)) {
    res.end = ProcessResult::End::Exited;
    res.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    res.end = ProcessResult::End::Signalled;
    res.signal = WTERMSIG(status);
  }
  return res;
}

}  // namespace gpucheck::compare
