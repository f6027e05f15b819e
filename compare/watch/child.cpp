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

#include "runner/contain.hpp"
#include "gpucheck/core/text.hpp"
#include "runner/process.hpp"

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
    if (after_cr_ && data[pos] == '\n') {  // "\r\n": one end of line
      after_cr_ = false;
      ++pos;
      continue;
    }
    after_cr_ = false;
    const std::size_t end = data.find_first_of("\r\n", pos);
    const std::string_view piece = data.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (partial_.size() + piece.size() > kMaxLine) {  // keep the head, drop the rest of the line
      if (!cutting_) ++cut_lines_;
      cutting_ = true;
      partial_.append(piece.substr(0, kMaxLine - partial_.size()));
    } else {
      partial_.append(piece);
    }
    if (end == std::string_view::npos) return;
    emit_(partial_);
    partial_.clear();
    cutting_ = false;
    after_cr_ = data[end] == '\r';
    pos = end + 1;
  }
}

void LineSplitter::finish() {
  if (!partial_.empty()) emit_(partial_);
  partial_.clear();
  cutting_ = false;
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

// Copies everything, or stops at a closed destination (a reader that went away: EPIPE, with
// SIGPIPE ignored); false then.
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

Status check_containment_env(const std::optional<std::string>& value) {
  if (auto how = containment_from_env(value ? value->c_str() : nullptr); !how) return how.error();
  return Done{};
}

ChildEnd run_child(const std::vector<std::string>& argv_s, const ChildIo& io) {
  ChildEnd end;
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    end.kind = ChildEnd::Kind::CouldNotStart;
    end.error = std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) ::close(fd);
    return end;
  }
  ContainSpec cs;
  cs.argv = argv_s;
  cs.search_path = true;
  cs.stdout_fd = out_pipe[1];
  cs.stderr_fd = err_pipe[1];
  cs.own_group = false;  // the terminal's Ctrl-C reaches it as without watch
  cs.forward_signals = true;
  cs.force = io.containment;

  Handlers handlers;
  g_pending.store(0);
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  std::optional<ContainedChild> child = ContainedChild::start(cs, &why);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (!child) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    end.kind = ChildEnd::Kind::CouldNotStart;
    end.error = why;
    return end;
  }
  end.containment = containment_name(child->how());
  end.pid = child->program_host_pid() > 0 ? child->program_host_pid() : child->pid();
  if (io.on_start) io.on_start(end.pid);

  LineSplitter out_lines([&](std::string_view l) { if (io.on_line) io.on_line(l, false); });
  LineSplitter err_lines([&](std::string_view l) { if (io.on_line) io.on_line(l, true); });
  struct Src {
    int fd;
    int to;
    LineSplitter* lines;
    bool open = true;
  } srcs[2] = {{out_pipe[0], io.out_fd, &out_lines}, {err_pipe[0], io.err_fd, &err_lines}};
  bool relay = true;
  auto last_tick = std::chrono::steady_clock::now();
  const int tick_ms = std::max(1, static_cast<int>(io.tick_s * 1000));
  bool exited = false;
  while (!exited || srcs[0].open || srcs[1].open) {
    if (const int sig = g_pending.exchange(0); sig != 0 && !exited) {
      ::kill(child->pid(), sig);
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
          if (io.before_output && relay) io.before_output();
          // A closed stdout (a pager quit, `| head`) stops the copy; the command runs on.
          if (relay && !write_all(s.to, data)) {
            relay = false;
            end.relay_stopped = true;
            if (io.on_relay_stopped) io.on_relay_stopped();
          }
          s.lines->feed(data);
        } else if (got_n == 0 || (errno != EINTR && errno != EAGAIN)) {
          s.open = false;
        }
      }
    if (n == 0 && !exited) ::usleep(static_cast<useconds_t>(tick_ms) * 1000);
    // The command's end ends its whole tree (a daemon it left holds no pipe past it).
    if (!exited && child->wait(false)) {
      exited = true;
      child->kill_all();
    }
    if (exited && (srcs[0].open || srcs[1].open)) {
      // Drain what is there without waiting on a writer the fallback could not reach.
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
  end.cut_lines = out_lines.cut_lines() + err_lines.cut_lines();
  end.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const WaitEnd w = decode_wait_status(child->wait(true).value_or(0));
  end.kind = w.signalled ? ChildEnd::Kind::Signalled : ChildEnd::Kind::Exited;
  end.code = w.code;
  return end;
}

}  // namespace gpucheck::compare::watch
