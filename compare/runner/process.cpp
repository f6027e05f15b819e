// The binary starts contained (runner/contain.hpp: a PID namespace, else a cgroup, else the
// subreaper walk) in a process group of its own, so a timeout's SIGTERM reaches everything it
// started (an MPI launcher, a shell's children), with /dev/null as stdin and pipes for stdout
// and stderr that the parent writes to the log files with a cap.
#include "runner/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
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

#include "gpucheck/core/input.hpp"
#include "gpucheck/core/stop.hpp"

extern char** environ;

namespace gpucheck::compare {
namespace {

using Clock = std::chrono::steady_clock;

// After the binary's end, how long its pipes may still be read (every writer is dead by then
// unless a process escaped the subreaper fallback).
constexpr double kDrainAfterEnd_s = 1.0;

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
  bool open = true;  // not at end of file yet
  // Reads what the pipe holds now; false (and closed) at end of file.
  bool drain() {
    if (!open) return false;
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(pipe.get(), buf, sizeof buf);
      if (n > 0) {
        const std::string_view now = log.add(std::string_view(buf, static_cast<std::size_t>(n)));
        if (file != nullptr && !now.empty()) std::fwrite(now.data(), 1, now.size(), file);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      open = false;
      return false;
    }
  }
  void finish() {
    if (file == nullptr) return;
    const std::string end = log.finish();
    std::fwrite(end.data(), 1, end.size(), file);
    std::fflush(file);
  }
};

// Waits up to `ms` for output on the open streams and copies it; true when something came.
bool poll_streams(Stream* out, Stream* err, int ms) {
  pollfd fds[2];
  Stream* of[2];
  nfds_t n = 0;
  for (Stream* s : {out, err})
    if (s != nullptr && s->open && s->pipe.get() >= 0) {
      of[n] = s;
      fds[n++] = {s->pipe.get(), POLLIN, 0};
    }
  if (n == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return false;
  }
  if (::poll(fds, n, ms) <= 0) return false;
  for (nfds_t k = 0; k < n; ++k)
    if (fds[k].revents != 0) of[k]->drain();
  return true;
}

// Waits for the program while copying its output, until it ends or `limit_s` passes (negative:
// no limit) or `stop` is set. Polls the pipes, so a chatty binary never blocks on a full pipe;
// a pipe at its end (or held open by nobody) is dropped from the poll, so nothing spins.
bool wait_for(ContainedChild& child, double limit_s, const std::atomic<int>* stop, bool* stopped, Stream* out,
              Stream* err) {
  const auto start = Clock::now();
  int nap_ms = 1;
  for (;;) {
    if (child.wait(false)) return true;
    if (stop != nullptr && stop->load() != 0) {
      *stopped = true;
      return false;
    }
    if (limit_s >= 0 && since(start) >= limit_s) return false;
    if (poll_streams(out, err, nap_ms)) continue;
    nap_ms = std::min(nap_ms * 2, 20);
  }
}

// SIGTERM to the group, then (after the grace period, or at once when the binary has gone)
// SIGKILL to everything it started. True when the binary itself needed SIGKILL.
bool stop_group(ContainedChild& child, double grace_s, Stream* out, Stream* err) {
  ::kill(-child.pid(), SIGTERM);
  bool ignored = false;
  const bool exited = wait_for(child, grace_s, nullptr, &ignored, out, err);
  child.kill_all();
  return !exited;
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

PosixProcessRunner::PosixProcessRunner(const std::atomic<int>* stop) : stop_(stop) {}

std::string signal_name(int sig) {
  if (const char* abbrev = ::sigabbrev_np(sig); abbrev != nullptr) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

namespace {
// A log under --out: created or truncated, never through a symbolic link an earlier binary left,
// and only a regular file: a FIFO there (opened without O_NONBLOCK, it waited for a reader
// forever, before the binary and its --timeout started) or a device is refused with why.
std::FILE* open_log(const std::string& path, std::string* why) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) {
    *why = path + ": " + (errno == ENXIO ? std::string("a FIFO with no reader, not a log file") : std::strerror(errno));
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || ::fcntl(fd, F_SETFL, 0) != 0) {
    *why = path + ": " + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = path + ": " + non_regular_kind(st.st_mode) + ", not a log file";
    ::close(fd);
    return nullptr;
  }
  std::FILE* f = ::fdopen(fd, "wb");
  if (f == nullptr) {
    *why = path + ": " + std::strerror(errno);
    ::close(fd);
  }
  return f;
}
}  // namespace

ProcessResult PosixProcessRunner::run(const ProcessSpec& spec) {
  ProcessResult res;
  Stream out(spec.log_cap_bytes), err(spec.log_cap_bytes);
  std::string log_error;
  out.file = open_log(spec.stdout_path, &log_error);
  if (out.file != nullptr) err.file = open_log(spec.stderr_path, &log_error);
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  Fd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (out.file == nullptr || err.file == nullptr || null_in.get() < 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    res.end = ProcessResult::End::CouldNotStart;
    res.error = "cannot set up its output: " + (log_error.empty() ? std::string(std::strerror(errno)) : log_error);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) ::close(fd);
    return res;
  }
  out.pipe.reset(out_pipe[0]);
  err.pipe.reset(err_pipe[0]);
  Fd out_w(out_pipe[1]), err_w(err_pipe[1]);

  ContainSpec cs;
  cs.argv.push_back(spec.program);
  cs.argv.insert(cs.argv.end(), spec.args.begin(), spec.args.end());
  cs.stdin_fd = null_in.get();
  cs.stdout_fd = out_w.get();
  cs.stderr_fd = err_w.get();
  cs.force = spec.containment;
  cs.cpu = spec.cpu;
  const auto start = Clock::now();
  std::string why;
  std::optional<ContainedChild> child = ContainedChild::start(cs, &why);
  out_w.reset();
  err_w.reset();
  if (!child) {
    res.end = ProcessResult::End::CouldNotStart;
    res.error = why;
    return res;
  }
  res.pid = child->program_own_pid();
  res.containment = child->how();
  for (const Stream* s : {&out, &err}) ::fcntl(s->pipe.get(), F_SETFL, O_NONBLOCK);

  // A stop signal now only sets the flag: this loop stops the binary's tree and returns.
  std::optional<gpucheck::StopPolled> polled;
  if (stop_ != nullptr) polled.emplace();
  bool stopped = false;
  const double limit = spec.timeout_s > 0 ? spec.timeout_s : -1.0;
  const bool exited = wait_for(*child, limit, stop_, &stopped, &out, &err);
  if (!exited) res.killed_hard = stop_group(*child, spec.kill_grace_s, &out, &err);
  res.seconds = since(start);
  // Whatever the binary left running (helpers in its group, daemons that left it) goes with it.
  child->kill_all();
  // What the pipes still hold, now that every writer is gone; bounded, should a writer the
  // fallback could not reach still hold one open.
  const auto drained = Clock::now();
  while ((out.open || err.open) && since(drained) < kDrainAfterEnd_s) poll_streams(&out, &err, 20);
  out.finish();
  err.finish();
  // The stdout log says how the binary's tree was kept (its stderr's last line is its message).
  if (out.file != nullptr) {
    std::fprintf(out.file, "[gpucheck: the binary's process tree was kept by a %s]\n", containment_name(res.containment));
    std::fflush(out.file);
  }
  res.dropped_bytes = out.log.dropped() + err.log.dropped();
  if (!exited) {
    res.end = stopped ? ProcessResult::End::Interrupted : ProcessResult::End::TimedOut;
    return res;
  }
  const WaitEnd w = decode_wait_status(child->wait(true).value_or(0));
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
