#include "watch/child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "runner/process.hpp"

extern char** environ;

namespace gpucheck::compare::watch {

int ChildEnd::status() const {
  switch (kind) {
    case Kind::Exited: return code;
    case Kind::Signalled: return 128 + code;
    case Kind::CouldNotStart: return 127;
  }
  return 127;
}

void LineSplitter::feed(std::string_view data) {
  std::size_t pos = 0;
  while (pos < data.size()) {
    const std::size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) {
      partial_.append(data.substr(pos));
      if (partial_.size() > (1u << 20)) {  // a line without end: hand it over in pieces
        emit_(partial_);
        partial_.clear();
      }
      return;
    }
    if (partial_.empty()) {
      emit_(data.substr(pos, nl - pos));
    } else {
      partial_.append(data.substr(pos, nl - pos));
      emit_(partial_);
      partial_.clear();
    }
    pos = nl + 1;
  }
}

void LineSplitter::finish() {
  if (!partial_.empty()) emit_(partial_);
  partial_.clear();
}

namespace {

std::atomic<int> g_pending{0};  // a signal for the child, set by the handler

// A signal the kernel raised for the terminal's group (Ctrl-C: si_code SI_KERNEL) already reached
// the command, which shares the group; one sent to watch alone (kill: SI_USER, SI_QUEUE) did not.
extern "C" void on_signal(int sig, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  g_pending.store(sig);
}

struct Handlers {
  struct sigaction old[3];
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  Handlers() {
    struct sigaction sa {};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &sa, &old[i]);
  }
  ~Handlers() {
    for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &old[i], nullptr);
  }
  Handlers(const Handlers&) = delete;
  Handlers& operator=(const Handlers&) = delete;
};

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed terminal: the job goes on, its output is lost
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

ChildEnd run_child(const std::vector<std::string>& argv_s, const ChildIo& io) {
  ChildEnd end;
  if (argv_s.empty()) {
    end.kind = ChildEnd::Kind::CouldNotStart;
    end.error = "no command";
    return end;
  }
  int out_pipe[2], err_pipe[2], report[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    end.kind = ChildEnd::Kind::CouldNotStart;
    end.error = std::strerror(errno);
    return end;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    end.kind = ChildEnd::Kind::CouldNotStart;
    end.error = std::strerror(errno);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return end;
  }
  std::vector<std::string> copy = argv_s;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);

  Handlers handlers;
  g_pending.store(0);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    end.kind = ChildEnd::Kind::CouldNotStart;
    end.error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], report[0], report[1]}) ::close(fd);
    return end;
  }
  if (pid == 0) {
    // Between fork and exec: async-signal-safe calls only.
    reset_signals_for_exec();
    if (::dup2(out_pipe[1], STDOUT_FILENO) < 0 || ::dup2(err_pipe[1], STDERR_FILENO) < 0) ::_exit(127);
    ::execvp(argv[0], argv.data());
    const int e = errno;
    (void)!::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  end.pid = pid;
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(report[1]);
  int exec_errno = 0;
  ssize_t got = 0;
  while ((got = ::read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    end.kind = ChildEnd::Kind::CouldNotStart;
    end.error = std::strerror(exec_errno);
    return end;
  }
  if (io.on_start) io.on_start(pid);

  LineSplitter out_lines([&](std::string_view l) { if (io.on_line) io.on_line(l, false); });
  LineSplitter err_lines([&](std::string_view l) { if (io.on_line) io.on_line(l, true); });
  struct Src {
    int fd;
    int to;
    LineSplitter* lines;
    bool open = true;
  } srcs[2] = {{out_pipe[0], io.out_fd, &out_lines}, {err_pipe[0], io.err_fd, &err_lines}};
  auto last_tick = std::chrono::steady_clock::now();
  const int tick_ms = std::max(1, static_cast<int>(io.tick_s * 1000));
  int status = 0;
  bool exited = false;
  while (!exited || srcs[0].open || srcs[1].open) {
    if (const int sig = g_pending.exchange(0); sig != 0 && !exited) {
      ::kill(pid, sig);
      end.forwarded_signal = sig;
    }
    pollfd fds[2];
    nfds_t n = 0;
    int map[2];
    for (int i = 0; i < 2; ++i)
      if (srcs[i].open) {
        map[n] = i;
        fds[n++] = {srcs[i].fd, POLLIN, 0};
      }
    const int r = n > 0 ? ::poll(fds, n, exited ? 50 : tick_ms) : 0;
    if (r > 0)
      for (nfds_t k = 0; k < n; ++k) {
        if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        Src& s = srcs[map[k]];
        char buf[65536];
        const ssize_t got_n = ::read(s.fd, buf, sizeof buf);
        if (got_n > 0) {
          const std::string_view data(buf, static_cast<std::size_t>(got_n));
          if (io.before_output) io.before_output();
          write_all(s.to, data);
          s.lines->feed(data);
        } else if (got_n == 0 || (errno != EINTR && errno != EAGAIN)) {
          s.open = false;
        }
      }
    if (n == 0 && !exited) ::usleep(static_cast<useconds_t>(tick_ms) * 1000);
    if (!exited) {
      const pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid || (w < 0 && errno == ECHILD)) {
        exited = true;
        // Grandchildren may hold the pipes open (a daemon it left behind): stop reading soon.
      }
    }
    if (exited && (srcs[0].open || srcs[1].open)) {
      // Drain what is there without waiting on writers that outlive the command.
      bool any = false;
      for (auto& s : srcs) {
        if (!s.open) continue;
        pollfd p{s.fd, POLLIN, 0};
        if (::poll(&p, 1, 0) > 0) any = true;
      }
      if (!any) break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (io.on_tick && std::chrono::duration<double>(now - last_tick).count() >= io.tick_s) {
      last_tick = now;
      io.on_tick();
    }
  }
  for (auto& s : srcs) ::close(s.fd);
  out_lines.finish();
  err_lines.finish();
  end.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const WaitEnd w = decode_wait_status(status);
  end.kind = w.signalled ? ChildEnd::Kind::Signalled : ChildEnd::Kind::Exited;
  end.code = w.code;
  return end;
}

}  // namespace gpucheck::compare::watch
