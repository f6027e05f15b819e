// The init is a fork of gpucheck, not a program of its own: nothing to install or find, and
// between clone and _exit it makes only async-signal-safe calls (gpucheck may have threads).
// It reports to the parent over a pipe (PID 1 cannot die of a signal it sends itself, so the
// program's wait status travels as data): {0, errno} exec failed, {1, pid} started, {2,
// status} ended, {3, errno} the namespace's own /proc could not be mounted (the runner then
// falls back to a cgroup). The namespace has its own mount namespace and /proc: CUDA's
// driver refuses to start (cuInit: "OS call failed or operation not supported on this OS")
// in a PID namespace that sees the host's /proc, where its getpid() names another process. Default signal dispositions make PID 1 deaf to signals from outside its
// namespace, so the runner's SIGTERM to the group reaches the program and leaves the init
// waiting for it; watch asks the init to pass signals sent to it on to the program.
#include "runner/contain.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "runner/process.hpp"

extern char** environ;

namespace gpucheck::compare {
namespace {

struct Msg {
  int tag;  // 0 exec failed, 1 started, 2 ended, 3 no /proc of its own
  int value;
};

// What the child needs between fork and exec, built before the fork (no allocation after it).
struct ExecPlan {
  std::vector<std::string> storage;
  std::vector<char*> argv;
  const ContainSpec* spec = nullptr;
};

void send(int fd, Msg m) { (void)!::write(fd, &m, sizeof m); }

// The program's side, between fork and exec: async-signal-safe calls only. On failure the
// errno goes to `report_fd` and the child exits 127.
[[noreturn]] void exec_program(const ExecPlan& p, int report_fd) {
  auto fail = [report_fd](int e) {
    (void)!::write(report_fd, &e, sizeof e);
    ::_exit(127);
  };
  const ContainSpec& s = *p.spec;
  if ((s.stdin_fd >= 0 && ::dup2(s.stdin_fd, STDIN_FILENO) < 0) || (s.stdout_fd >= 0 && ::dup2(s.stdout_fd, STDOUT_FILENO) < 0) ||
      (s.stderr_fd >= 0 && ::dup2(s.stderr_fd, STDERR_FILENO) < 0))
    fail(errno);
  reset_signals_for_exec();
  if (s.cpu >= 0 && s.cpu < CPU_SETSIZE) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(static_cast<std::size_t>(s.cpu), &one);
    if (::sched_setaffinity(0, sizeof one, &one) != 0) fail(errno);
  }
  if (s.search_path) ::execvp(p.argv[0], p.argv.data());
  else ::execve(p.argv[0], p.argv.data(), environ);
  fail(errno);
  ::_exit(127);
}

std::atomic<pid_t> g_program{0};  // the init's program, for its signal handler

extern "C" void init_forward(int sig, siginfo_t* info, void*) {
  // A signal the terminal raised for the group already reached the program, which shares it.
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  if (const pid_t p = g_program.load(); p > 0) ::kill(p, sig);
}

// PID 1 of the new namespace. Ends (and the kernel with it every process of the namespace)
// as soon as the program does, or when gpucheck dies (parent-death signal).
[[noreturn]] void init_main(const ExecPlan& p, int msg_fd, int alive_fd) {
  reset_signals_for_exec();
  // The namespace's own /proc, in a mount namespace of its own (so the host's stays as it is):
  // the program's getpid() and /proc/self then agree.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    send(msg_fd, {3, errno});
    ::_exit(0);
  }
  if (p.spec->own_group) ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  pollfd alive{alive_fd, POLLIN, 0};
  if (::poll(&alive, 1, 0) != 0) ::_exit(0);  // gpucheck died before the signal was armed
  if (p.spec->forward_signals) {
    struct sigaction sa {};
    sa.sa_sigaction = init_forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  }
  int ex[2];
  if (::pipe2(ex, O_CLOEXEC) != 0) {
    send(msg_fd, {0, errno});
    ::_exit(0);
  }
  // A raw clone, not fork(): glibc's fork runs its atfork handlers, which take locks another
  // thread of gpucheck may have held at the moment the init was cloned.
  const auto prog = static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  if (prog < 0) {
    send(msg_fd, {0, errno});
    ::_exit(0);
  }
  if (prog == 0) exec_program(p, ex[1]);
  g_program.store(prog);
  ::close(ex[1]);
  int e = 0;
  ssize_t got = 0;
  while ((got = ::read(ex[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  if (got == static_cast<ssize_t>(sizeof e)) {
    send(msg_fd, {0, e});
    ::_exit(0);
  }
  send(msg_fd, {1, prog});
  for (;;) {
    int st = 0;
    const pid_t w = ::waitpid(-1, &st, 0);
    if (w == prog) {
      send(msg_fd, {2, st});
      ::_exit(0);
    }
    if (w < 0 && errno != EINTR) ::_exit(0);
  }
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Every process's pid, as /proc lists them now (empty when /proc cannot be read).
std::vector<pid_t> all_pids() {
  std::vector<pid_t> pids;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return pids;
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid > 0 && *end == '\0') pids.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(d);
  return pids;
}

// The host pid of the child of `parent` whose innermost pid is `own` (NSpid's last field).
pid_t host_pid_of(pid_t parent, pid_t own) {
  const std::string want = "PPid:\t" + std::to_string(parent) + "\n";
  for (const pid_t pid : all_pids()) {
    const std::string text = read_text("/proc/" + std::to_string(pid) + "/status");
    if (text.find(want) == std::string::npos) continue;
    const std::vector<int> ns = parse_nspid(text);
    if (!ns.empty() && ns.back() == own) return pid;
  }
  return -1;
}

bool write_text(const std::string& path, const char* text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::size_t n = std::strlen(text);
  const bool ok = ::write(fd, text, n) == static_cast<ssize_t>(n);
  ::close(fd);
  return ok;
}

// A fresh cgroup v2 folder under ours; "" when there is no writable one.
std::string make_cgroup() {
  const std::string base = cgroup2_folder_from(read_text("/proc/self/cgroup"), read_text("/proc/self/mountinfo"));
  if (base.empty()) return "";
  static std::atomic<int> serial{0};
  const std::string dir = base + "/gpucheck-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
  if (::mkdir(dir.c_str(), 0755) != 0) return "";
  if (::access((dir + "/cgroup.procs").c_str(), W_OK) != 0) {
    ::rmdir(dir.c_str());
    return "";
  }
  return dir;
}

void reap(pid_t pid, int* st) {
  while (::waitpid(pid, st, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

const char* containment_name(Containment c) {
  switch (c) {
    case Containment::PidNamespace: return "pid namespace";
    case Containment::Cgroup: return "cgroup";
    case Containment::Subreaper: return "subreaper";
  }
  return "subreaper";
}

Expected<std::optional<Containment>> containment_from_env(const char* value) {
  if (value == nullptr || *value == '\0') return std::optional<Containment>();
  const std::string_view v = value;
  if (v == "pid-namespace") return std::optional<Containment>(Containment::PidNamespace);
  if (v == "cgroup") return std::optional<Containment>(Containment::Cgroup);
  if (v == "subreaper") return std::optional<Containment>(Containment::Subreaper);
  // Built up in steps: "\"" + std::string(v) + ... trips GCC 12's -Wrestrict false positive at -O3.
  std::string why = "\"";
  why += v;
  why += "\" is none of pid-namespace, cgroup, subreaper";
  return Error{"GPUCHECK_CONTAINMENT", why};
}

std::optional<ContainedChild> ContainedChild::start(const ContainSpec& spec, std::string* error) {
  if (const char* e = std::getenv("GPUCHECK_CONTAINMENT"); !spec.force && e != nullptr && *e != '\0') {
    auto how = containment_from_env(e);
    if (!how) {
      *error = how.error().str();
      return std::nullopt;
    }
    ContainSpec forced = spec;
    forced.force = *how;
    return start(forced, error);
  }
  ExecPlan plan;
  plan.spec = &spec;
  plan.storage = spec.argv;
  if (plan.storage.empty()) {
    *error = "no command";
    return std::nullopt;
  }
  for (auto& a : plan.storage) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  // Make this process the reaper of its orphans first: whatever the mechanism, nothing a
  // child leaves is reparented past us.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);

  ContainedChild c;
  const bool try_ns = !spec.force || *spec.force == Containment::PidNamespace;
  if (try_ns) {
    int msg[2], alive[2];
    if (::pipe2(msg, O_CLOEXEC) != 0) {
      *error = std::string("pipe: ") + std::strerror(errno);
      return std::nullopt;
    }
    if (::pipe2(alive, O_CLOEXEC) != 0) {
      *error = std::string("pipe: ") + std::strerror(errno);
      ::close(msg[0]);
      ::close(msg[1]);
      return std::nullopt;
    }
    const long r = ::syscall(SYS_clone, SIGCHLD | CLONE_NEWPID | CLONE_NEWNS, nullptr, nullptr, nullptr, nullptr);
    int why = errno;  // clone's, when it failed
    if (r == 0) {
      ::close(msg[0]);
      ::close(alive[1]);
      init_main(plan, msg[1], alive[0]);
    }
    ::close(msg[1]);
    ::close(alive[0]);
    if (r > 0) {
      c.pid_ = static_cast<pid_t>(r);
      c.how_ = Containment::PidNamespace;
      c.msg_fd_ = msg[0];
      c.alive_fd_ = alive[1];
      if (spec.own_group) ::setpgid(c.pid_, c.pid_);
      Msg m{};
      ssize_t got = 0;
      while ((got = ::read(c.msg_fd_, &m, sizeof m)) < 0 && errno == EINTR) {
      }
      const bool full = got == static_cast<ssize_t>(sizeof m);
      if (full && m.tag == 1) {
        c.own_pid_ = m.value;
        c.host_pid_ = host_pid_of(c.pid_, c.own_pid_);
        return c;
      }
      if (!(full && m.tag == 3) || spec.force) {
        *error = !full ? "its init ended before the program started"
                 : m.tag == 3 ? std::string("no /proc of its own: ") + std::strerror(m.value)
                              : std::string(std::strerror(m.value));
        c.kill_all();
        return std::nullopt;
      }
      // Its init could not mount the namespace's own /proc: on to a cgroup (below).
      int st = 0;
      reap(c.pid_, &st);
      ::close(c.msg_fd_);
      ::close(c.alive_fd_);
      c.pid_ = -1;
      c.msg_fd_ = c.alive_fd_ = -1;
      why = EPERM;
    } else {
      ::close(msg[0]);
      ::close(alive[1]);
    }
    if (why != EPERM && why != EINVAL && why != ENOSYS && why != EUSERS && why != ENOSPC) {
      *error = std::string("clone: ") + std::strerror(why);
      return std::nullopt;
    }
  }

  // No namespace: the program is the child, in a cgroup of its own when one can be made.
  if (!spec.force || *spec.force == Containment::Cgroup) c.cgroup_ = make_cgroup();
  c.how_ = c.cgroup_.empty() ? Containment::Subreaper : Containment::Cgroup;
  const std::string procs = c.cgroup_.empty() ? std::string() : c.cgroup_ + "/cgroup.procs";
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    ::close(report[0]);
    ::close(report[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    if (spec.own_group) ::setpgid(0, 0);
    // SIGKILL when gpucheck dies (even by SIGKILL): a program must not run on unattended.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before the signal was armed
    if (!procs.empty()) {
      const int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd >= 0) {
        (void)!::write(fd, "0", 1);
        ::close(fd);
      }
    }
    exec_program(plan, report[1]);
  }
  ::close(report[1]);
  if (spec.own_group) ::setpgid(pid, pid);  // as the child does: the group exists before any kill
  c.pid_ = c.host_pid_ = c.own_pid_ = pid;
  int e = 0;
  ssize_t got = 0;
  while ((got = ::read(report[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof e)) {
    *error = std::strerror(e);
    c.kill_all();
    return std::nullopt;
  }
  return c;
}

ContainedChild::ContainedChild(ContainedChild&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      host_pid_(o.host_pid_),
      own_pid_(o.own_pid_),
      how_(o.how_),
      msg_fd_(std::exchange(o.msg_fd_, -1)),
      alive_fd_(std::exchange(o.alive_fd_, -1)),
      cgroup_(std::exchange(o.cgroup_, std::string())),
      status_(o.status_),
      reaped_(std::exchange(o.reaped_, true)) {}

ContainedChild::~ContainedChild() {
  if (pid_ > 0) kill_all();
  for (const int fd : {msg_fd_, alive_fd_})
    if (fd >= 0) ::close(fd);
}

std::optional<int> ContainedChild::wait(bool block) {
  if (status_ || reaped_) return status_;
  int st = 0;
  pid_t w = 0;
  while ((w = ::waitpid(pid_, &st, block ? 0 : WNOHANG)) < 0 && errno == EINTR) {
  }
  if (w == 0) return std::nullopt;
  reaped_ = true;
  if (w < 0) st = 0;  // ECHILD: someone else reaped it
  status_ = st;
  if (how_ == Containment::PidNamespace) {
    // The init wrote the program's status before it exited; without it the init was killed.
    ::fcntl(msg_fd_, F_SETFL, O_NONBLOCK);
    Msg m{};
    while (::read(msg_fd_, &m, sizeof m) == static_cast<ssize_t>(sizeof m))
      if (m.tag == 2) status_ = m.value;
  }
  return status_;
}

void ContainedChild::kill_all() {
  if (pid_ <= 0) return;
  switch (how_) {
    case Containment::PidNamespace:
      // The init's end is the namespace's: the kernel kills every member and the init's exit
      // waits for them.
      if (!reaped_) ::kill(pid_, SIGKILL);
      break;
    case Containment::Cgroup:
      if (!write_text(cgroup_ + "/cgroup.kill", "1")) {  // before Linux 5.14: one by one
        for (int round = 0; round < 1000; ++round) {
          std::istringstream procs(read_text(cgroup_ + "/cgroup.procs"));
          long p = 0;
          bool any = false;
          while (procs >> p) {
            ::kill(static_cast<pid_t>(p), SIGKILL);
            any = true;
          }
          if (!any) break;
          kill_orphans();
        }
      }
      [[fallthrough]];
    case Containment::Subreaper:
      if (!reaped_) {
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
      }
      break;
  }
  (void)wait(true);
  kill_orphans();
  if (!cgroup_.empty()) {
    // Members the kill reached are gone once reaped; the folder goes when it is empty.
    for (int i = 0; i < 200 && ::rmdir(cgroup_.c_str()) != 0 && errno == EBUSY; ++i) {
      kill_orphans();
      ::usleep(5000);
    }
    cgroup_.clear();
  }
}

int kill_orphans() {
  int killed = 0;
  const pid_t self = ::getpid();
  // Round after round: an orphan's own children are reparented here when it dies, so a chain
  // of any depth ends one link a round.
  for (;;) {
    std::vector<pid_t> children;
    for (const pid_t pid : all_pids()) {
      std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
      std::string line;
      if (!std::getline(stat, line)) continue;
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
      const std::size_t close = line.rfind(')');
      if (close == std::string::npos) continue;
      char state = 0;
      long ppid = 0;
      if (std::sscanf(line.c_str() + close + 1, " %c %ld", &state, &ppid) == 2 && ppid == self)
        children.push_back(pid);
    }
    if (children.empty()) return killed;
    for (const pid_t c : children) {
      ::kill(-c, SIGKILL);  // its group, when it leads one (setsid made it a leader)
      ::kill(c, SIGKILL);
      int st = 0;
      reap(c, &st);
      ++killed;
    }
  }
}

std::vector<int> parse_nspid(std::string_view text) {
  std::vector<int> out;
  const std::size_t at = text.find("NSpid:");
  if (at == std::string_view::npos || (at > 0 && text[at - 1] != '\n')) return out;
  std::size_t i = at + 6;
  const std::size_t eol = std::min(text.find('\n', i), text.size());
  while (i < eol) {
    while (i < eol && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= eol) break;
    long v = 0;
    std::size_t j = i;
    while (j < eol && text[j] >= '0' && text[j] <= '9' && v < 1'000'000'000) v = v * 10 + (text[j++] - '0');
    if (j == i || (j < eol && text[j] != ' ' && text[j] != '\t') || v <= 0) return {};
    out.push_back(static_cast<int>(v));
    i = j;
  }
  return out;
}

std::string cgroup2_folder_from(std::string_view cgroup, std::string_view mountinfo) {
  std::string path;
  for (std::size_t from = 0; from < cgroup.size();) {
    const std::size_t eol = std::min(cgroup.find('\n', from), cgroup.size());
    const std::string_view line = cgroup.substr(from, eol - from);
    if (line.substr(0, 3) == "0::") path = std::string(line.substr(3));
    from = eol + 1;
  }
  if (path.empty() || path[0] != '/') return "";
  for (std::size_t from = 0; from < mountinfo.size();) {
    const std::size_t eol = std::min(mountinfo.find('\n', from), mountinfo.size());
    const std::string line(mountinfo.substr(from, eol - from));
    from = eol + 1;
    const std::size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream f(line.substr(0, dash));
    std::string id, parent, dev, root, mount;
    if (!(f >> id >> parent >> dev >> root >> mount)) continue;
    // The mount shows the hierarchy from `root`; our path is relative to the hierarchy's top.
    if (root != "/" && path.compare(0, root.size(), root) != 0) continue;
    const std::string rest = root == "/" ? path : path.substr(root.size());
    std::string dir = mount + (rest == "/" ? "" : rest);
    return dir;
  }
  return "";
}

}  // namespace gpucheck::compare
