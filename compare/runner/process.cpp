// fork + exec rather than posix_spawn: the child must ask for a parent-death signal
// (prctl), which posix_spawn cannot, so that a gpucheck killed with SIGKILL takes its running
// binary with it. gpucheck is small, so the fork copies little. The child gets its own process
// group, so a timeout reaches everything it started (an MPI launcher, a shell's children),
// /dev/null as stdin, and pipes for stdout and stderr that the parent writes to the log files
// with a cap.
#include "runner/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <utility>

extern char** environ;

namespace gpucheck::compare {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A file descriptor closed when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    reset(o.release());
    return *this;
  }
  ~Fd() { reset(); }
  [[nodiscard]] int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// One of the child's output streams: its pipe, its log file, its cap.
struct Stream {
  Fd pipe;
  std::FILE* file = nullptr;
  CappedLog log;
  explicit Stream(std::size_t cap) : log(cap) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (file != nullptr) std::fclose(file);
  }
  // Reads what the pipe holds now; false at end of file.
  bool drain() {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(pipe.get(), buf, sizeof buf);
      if (n > 0) {
        const std::string_view now = log.add(std::string_view(buf, static_cast<std::size_t>(n)));
        if (file != nullptr && !now.empty()) std::fwrite(now.data(), 1, now.size(), file);
        continue;
      }
      if (n == 0) return false;
      return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK;
    }
  }
  void finish() {
    if (file == nullptr) return;
    const std::string end = log.finish();
    std::fwrite(end.data(), 1, end.size(), file);
    std::fflush(file);
  }
};

// Waits for the child while copying its output, until it exits or `limit_s` passes (negative:
// no limit) or `stop` is set. Polls the pipes, so a chatty binary never blocks on a full pipe.
bool wait_for(pid_t pid, int* status, double limit_s, const std::atomic<int>* stop, bool* stopped, Stream* out,
              Stream* err) {
  const auto start = Clock::now();
  int nap_ms = 1;
  bool open_out = out != nullptr && out->pipe.get() >= 0, open_err = err != nullptr && err->pipe.get() >= 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // ECHILD: nothing left to wait for
    if (stop != nullptr && stop->load() != 0) {
      *stopped = true;
      return false;
    }
    if (limit_s >= 0 && since(start) >= limit_s) return false;
    pollfd fds[2];
    nfds_t n = 0;
    if (open_out) fds[n++] = {out->pipe.get(), POLLIN, 0};
    if (open_err) fds[n++] = {err->pipe.get(), POLLIN, 0};
    if (n == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(nap_ms));
    } else if (::poll(fds, n, nap_ms) > 0) {
      if (open_out) open_out = out->drain();
      if (open_err) open_err = err->drain();
      continue;
    }
    nap_ms = std::min(nap_ms * 2, 20);
  }
}

// SIGTERM to the group, then (after the grace period, or at once when the binary has gone)
// SIGKILL to what is left of it; reaps the child. True when the binary itself needed SIGKILL.
bool stop_group(pid_t pid, int* status, double grace_s, Stream* out, Stream* err) {
  ::kill(-pid, SIGTERM);
  bool ignored = false;
  const bool exited = wait_for(pid, status, grace_s, nullptr, &ignored, out, err);
  // Members of the group that ignore SIGTERM outlive a binary that obeyed it: never leave them.
  ::kill(-pid, SIGKILL);
  if (!exited)
    while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
    }
  return !exited;
}

// The child's side, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(const ProcessSpec& spec, char* const* argv, int out_fd, int err_fd, int report_fd,
                             pid_t parent) {
  ::setpgid(0, 0);
  // SIGKILL when gpucheck dies (even by SIGKILL): a binary must not run on unattended.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  auto fail = [report_fd](int e) {
    (void)!::write(report_fd, &e, sizeof e);
    ::_exit(127);
  };
  if (::getppid() != parent) fail(ESRCH);  // the parent died before the signal was armed
  const int in = ::open("/dev/null", O_RDONLY);
  if (in < 0 || ::dup2(in, STDIN_FILENO) < 0 || ::dup2(out_fd, STDOUT_FILENO) < 0 || ::dup2(err_fd, STDERR_FILENO) < 0)
    fail(errno);
  reset_signals_for_exec();
  ::execve(spec.program.c_str(), argv, environ);
  fail(errno);
  ::_exit(127);  // not reached: fail() exits
}

}  // namespace

std::string_view CappedLog::add(std::string_view data) {
  const std::size_t room = head_cap_ > written_ ? head_cap_ - written_ : 0;
  const std::string_view now = data.substr(0, std::min(room, data.size()));
  written_ += now.size();
  std::string_view rest = data.substr(now.size());
  if (!rest.empty()) {
    tail_.append(rest);
    if (tail_.size() > 2 * tail_cap_ + 1) {  // trim in bulk: appends stay amortised O(1)
      const std::size_t cut = tail_.size() - tail_cap_;
      dropped_ += cut;
      tail_.erase(0, cut);
    }
  }
  return now;
}

std::string CappedLog::finish() const {
  std::size_t dropped = dropped_;
  std::string_view tail = tail_;
  if (tail.size() > tail_cap_) {
    dropped += tail.size() - tail_cap_;
    tail.remove_prefix(tail.size() - tail_cap_);
  }
  if (dropped == 0) return std::string(tail);
  return "\n[gpucheck: " + std::to_string(dropped) + " bytes of output dropped here; the log keeps the first " +
         std::to_string(head_cap_) + " and the last " + std::to_string(tail_cap_) + "]\n" + std::string(tail);
}

int kill_orphans() {
  int killed = 0;
  const pid_t self = ::getpid();
  // A few rounds: an orphan's own children are reparented here when it dies.
  for (int round = 0; round < 20; ++round) {
    std::vector<pid_t> children;
    if (DIR* d = ::opendir("/proc"); d != nullptr) {
      while (const dirent* e = ::readdir(d)) {
        char* end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end != '\0') continue;
        std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
        const std::size_t close = line.rfind(')');
        if (close == std::string::npos) continue;
        char state = 0;
        long ppid = 0;
        if (std::sscanf(line.c_str() + close + 1, " %c %ld", &state, &ppid) == 2 && ppid == self)
          children.push_back(static_cast<pid_t>(pid));
      }
      ::closedir(d);
    }
    if (children.empty()) break;
    for (const pid_t c : children) {
      ::kill(-c, SIGKILL);  // its group, when it leads one (setsid made it a leader)
      ::kill(c, SIGKILL);
      int st = 0;
      while (::waitpid(c, &st, 0) < 0 && errno == EINTR) {
      }
      ++killed;
    }
  }
  return killed;
}

PosixProcessRunner::PosixProcessRunner(const std::atomic<int>* stop) : stop_(stop) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

std::string signal_name(int sig) {
  if (const char* abbrev = ::sigabbrev_np(sig); abbrev != nullptr) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

ProcessResult PosixProcessRunner::run(const ProcessSpec& spec) {
  ProcessResult res;
  Stream out(spec.log_cap_bytes), err(spec.log_cap_bytes);
  out.file = std::fopen(spec.stdout_path.c_str(), "wb");
  err.file = std::fopen(spec.stderr_path.c_str(), "wb");
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, report[2] = {-1, -1};
  if (out.file == nullptr || err.file == nullptr || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(err_pipe, O_CLOEXEC) != 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    res.end = ProcessResult::End::CouldNotStart;
    res.error = std::string("cannot set up its output: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], report[0], report[1]})
      if (fd >= 0) ::close(fd);
    return res;
  }
  out.pipe.reset(out_pipe[0]);
  err.pipe.reset(err_pipe[0]);
  Fd out_w(out_pipe[1]), err_w(err_pipe[1]), report_r(report[0]), report_w(report[1]);

  std::vector<std::string> argv_s;
  argv_s.reserve(spec.args.size() + 1);
  argv_s.push_back(spec.program);
  argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t parent = ::getpid();
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    res.end = ProcessResult::End::CouldNotStart;
    res.error = std::string("fork: ") + std::strerror(errno);
    return res;
  }
  if (pid == 0) exec_child(spec, argv.data(), out_w.get(), err_w.get(), report_w.get(), parent);
  ::setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before a kill
  res.pid = pid;
  out_w.reset();
  err_w.reset();
  report_w.reset();
  for (const Stream* s : {&out, &err}) ::fcntl(s->pipe.get(), F_SETFL, O_NONBLOCK);
  int exec_errno = 0;
  ssize_t got = 0;
  while ((got = ::read(report_r.get(), &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {  // exec failed: the child said why
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    res.end = ProcessResult::End::CouldNotStart;
    res.error = std::strerror(exec_errno);
    return res;
  }

  int status = 0;
  bool stopped = false;
  const double limit = spec.timeout_s > 0 ? spec.timeout_s : -1.0;
  const bool exited = wait_for(pid, &status, limit, stop_, &stopped, &out, &err);
  if (!exited) res.killed_hard = stop_group(pid, &status, spec.kill_grace_s, &out, &err);
  res.seconds = since(start);
  // Whatever the binary left running (helpers in its group, daemons that left it) goes with it.
  ::kill(-pid, SIGKILL);
  kill_orphans();
  // What the pipes still hold, now that every writer is gone.
  while (out.drain() || err.drain()) {
  }
  out.finish();
  err.finish();
  res.dropped_bytes = out.log.dropped() + err.log.dropped();
  if (!exited) {
    res.end = stopped ? ProcessResult::End::Interrupted : ProcessResult::End::TimedOut;
    return res;
  }
  const WaitEnd w = decode_wait_status(status);
  res.end = w.signalled ? ProcessResult::End::Signalled : ProcessResult::End::Exited;
  (w.signalled ? res.signal : res.exit_code) = w.code;
  return res;
}

void reset_signals_for_exec() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

WaitEnd decode_wait_status(int status) {
  if (WIFSIGNALED(status)) return {true, WTERMSIG(status)};
  return {false, WIFEXITED(status) ? WEXITSTATUS(status) : 0};
}

}  // namespace gpucheck::compare
