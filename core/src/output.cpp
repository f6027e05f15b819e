#include "gpucheck/core/output.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

namespace gpucheck {
namespace {

FileType type_of(mode_t m) {
  if (S_ISREG(m)) return FileType::regular;
  if (S_ISDIR(m)) return FileType::directory;
  if (S_ISCHR(m)) return FileType::character_device;
  if (S_ISBLK(m)) return FileType::block_device;
  if (S_ISFIFO(m)) return FileType::fifo;
  if (S_ISSOCK(m)) return FileType::socket;
  if (S_ISLNK(m)) return FileType::symlink;
  return FileType::other;
}

std::string errno_text(int e) { return std::strerror(e); }

bool fail(std::string* err, const std::string& path, const std::string& what) {
  if (err) *err = "cannot write " + path + ": " + what;
  return false;
}

// The temps in flight, for the signal handler: fixed slots, written before a slot is marked
// live, so the handler (async-signal-safe: unlink, sigaction, raise) reads whole paths only.
constexpr int kTempSlots = 32;
char g_temp_path[kTempSlots][PATH_MAX];
std::atomic<int> g_temp_live[kTempSlots];
constexpr int kCleanedSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];

int signal_slot(int sig) {
  for (int i = 0; i < 3; ++i)
    if (kCleanedSignals[i] == sig) return i;
  return -1;
}

extern "C" void remove_temps_on_signal(int sig, siginfo_t* info, void* uctx) {
  const int s = signal_slot(sig);
  if (s < 0) return;
  const struct sigaction& prev = g_previous[s];
  if (prev.sa_handler == SIG_DFL) {  // the process ends here: its temps go with it
    remove_registered_temps();
    ::sigaction(sig, &prev, nullptr);
    ::raise(sig);
    return;
  }
  // The program handles this signal itself (gpucheck stops its children and unwinds): the
  // temps are removed by their owners on the way out.
  if ((prev.sa_flags & SA_SIGINFO) != 0 && prev.sa_sigaction != nullptr) prev.sa_sigaction(sig, info, uctx);
  else if (prev.sa_handler != SIG_IGN) prev.sa_handler(sig);
}

}  // namespace

void remove_registered_temps() noexcept {
  for (int i = 0; i < kTempSlots; ++i)
    if (g_temp_live[i].load() == 1) ::unlink(g_temp_path[i]);
}

namespace {

// Installed once, at the first temp: a signal that was ignored stays ignored.
void install_temp_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < 3; ++i) {
      struct sigaction prev {};
      if (::sigaction(kCleanedSignals[i], nullptr, &prev) != 0 || prev.sa_handler == SIG_IGN) continue;
      g_previous[i] = prev;
      struct sigaction sa {};
      sa.sa_sigaction = remove_temps_on_signal;
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&sa.sa_mask);
      ::sigaction(kCleanedSignals[i], &sa, nullptr);
    }
  });
}

int register_temp(const std::string& path) {
  install_temp_cleanup();
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (!g_temp_live[i].compare_exchange_strong(expected, 2)) continue;  // 2: being filled
    std::memcpy(g_temp_path[i], path.c_str(), path.size() + 1);
    g_temp_live[i].store(1);
    return i;
  }
  return -1;  // more than kTempSlots at once: still removed on every other path
}

void release_temp(int slot) {
  if (slot >= 0) g_temp_live[slot].store(0);
}

// Writes all of data to fd, through partial writes and EINTR.
bool write_all(int fd, std::string_view data, int* error) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = errno;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string folder_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Flushes a folder's entries (the rename). Filesystems that cannot fsync a folder say EINVAL:
// nothing more can be done there, and it is not an error.
bool fsync_folder(const std::string& folder, int* error) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    *error = errno;
    return false;
  }
  const bool ok = ::fsync(fd) == 0 || errno == EINVAL;
  const int e = errno;
  ::close(fd);
  if (!ok) *error = e;
  return ok;
}

// The path a replacement goes to: a link to a regular file is followed (its target is the
// file that changes; the link stays a link).
std::string replacement_target(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return path;
  return buf;
}

// Writes all of data to an fd opened O_NONBLOCK (a FIFO's open must not wait), then closes it.
// Once open, a reader is there: writes may wait for it as usual.
bool write_and_close(int fd, const std::string& path, std::string_view data, std::string* err) {
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0 && (fl & O_NONBLOCK) != 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  int e = 0;
  const bool wrote = write_all(fd, data, &e);
  if (::close(fd) != 0 && wrote) e = errno;
  if (!wrote || e != 0) return fail(err, path, errno_text(e));
  return true;
}

// Opens a device or FIFO for writing without waiting (no reader: an error now); -1 on failure.
int open_in_place(const std::string& path, FileType target, std::string* err) {
  const int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | (target == FileType::fifo ? O_NONBLOCK : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    const int e = errno;
    fail(err, path, e == ENXIO ? "a FIFO with no reader" : errno_text(e));
  }
  return fd;
}

bool write_in_place(const std::string& path, FileType target, std::string_view data, std::string* err) {
  const int fd = open_in_place(path, target, err);
  return fd >= 0 && write_and_close(fd, path, data, err);
}

}  // namespace

OutputKind classify_output(std::string_view path, const PathFacts& f) {
  if (path == "-" || f.std_stream != 0) return OutputKind::standard_output;
  switch (f.type) {
    case FileType::missing:
    case FileType::regular: return OutputKind::replace;
    case FileType::character_device:
    case FileType::fifo: return OutputKind::in_place;
    case FileType::symlink:
      switch (f.target) {
        case FileType::character_device:
        case FileType::fifo: return OutputKind::in_place;
        case FileType::regular: return OutputKind::replace;
        default: return OutputKind::refuse;
      }
    default: return OutputKind::refuse;
  }
}

std::string refusal_reason(const PathFacts& f) {
  const FileType t = f.type == FileType::symlink ? f.target : f.type;
  if (f.type == FileType::symlink && t == FileType::missing)
    return f.link_loop ? "a loop of symbolic links" : "a symbolic link to nothing";
  switch (t) {
    case FileType::directory: return "is a folder";
    case FileType::block_device: return "is a block device";
    case FileType::socket: return "is a socket";
    case FileType::symlink:
    case FileType::other: return "is not a file, a FIFO or a character device";
    default: return {};
  }
}

PathFacts path_facts(const std::string& path) {
  PathFacts f;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return f;
  f.type = type_of(st.st_mode);
  f.target = f.type;
  if (f.type == FileType::symlink) {
    if (::stat(path.c_str(), &st) != 0) {
      f.target = FileType::missing;
      f.link_loop = errno == ELOOP;
      return f;
    }
    f.target = type_of(st.st_mode);
  }
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat s {};
    if (::fstat(fd, &s) == 0 && s.st_dev == st.st_dev && s.st_ino == st.st_ino) {
      f.std_stream = fd;
      break;
    }
  }
  return f;
}

bool is_temp_name(std::string_view name, long* pid) {
  const std::size_t t = name.rfind(".tmp-");
  if (name.size() < 2 || name[0] != '.' || t == std::string_view::npos || t < 2 || t + 5 >= name.size()) return false;
  long v = 0;
  for (std::size_t i = t + 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || v > 1'000'000'000L) return false;
    v = v * 10 + (name[i] - '0');
  }
  if (pid) *pid = v;
  return true;
}

std::vector<std::string> remove_stale_temps(const std::string& path) {
  std::vector<std::string> removed;
  const std::size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string folder = folder_of(path);
  const std::string prefix = "." + name + ".tmp-";
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(folder.c_str()), ::closedir);
  if (!d) return removed;
  while (const dirent* e = ::readdir(d.get())) {
    const std::string_view n(e->d_name);
    long pid = 0;
    if (!n.starts_with(prefix) || n.size() == prefix.size() || !is_temp_name(n, &pid)) continue;
    if (n.substr(prefix.size()).find_first_not_of("0123456789") != std::string_view::npos) continue;
    if (pid == static_cast<long>(::getpid()) || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // its writer may still be at work
    const std::string full = slash == std::string::npos ? std::string(n) : path.substr(0, slash + 1) + std::string(n);
    if (::unlink(full.c_str()) == 0) removed.emplace_back(n);
  }
  return removed;
}

std::string temp_path_for(const std::string& path, long pid) {
  const std::size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return folder + "." + name + ".tmp-" + std::to_string(pid);
}

AtomicReplace::AtomicReplace(std::string final_path)
    : final_(replacement_target(final_path)), temp_(temp_path_for(final_, static_cast<long>(::getpid()))) {
  (void)remove_stale_temps(final_);
  slot_ = register_temp(temp_);
}

AtomicReplace::~AtomicReplace() { abandon(); }

void AtomicReplace::abandon() {
  if (!done_) ::unlink(temp_.c_str());
  done_ = true;
  release_temp(slot_);
  slot_ = -1;
}

bool AtomicReplace::commit(std::string* err) {
  if (done_) return fail(err, final_, "already committed or abandoned");
  const int fd = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    abandon();
    return fail(err, final_, "its temp " + temp_ + ": " + errno_text(e));
  }
  const bool synced = ::fsync(fd) == 0;
  const int e = errno;
  ::close(fd);
  if (!synced) {
    abandon();
    return fail(err, final_, "fsync: " + errno_text(e));
  }
  if (::rename(temp_.c_str(), final_.c_str()) != 0) {
    const int re = errno;
    abandon();
    return fail(err, final_, errno_text(re));
  }
  done_ = true;  // in place: nothing to remove from here on
  release_temp(slot_);
  slot_ = -1;
  int fe = 0;
  if (!fsync_folder(folder_of(final_), &fe)) return fail(err, final_, "fsync of its folder: " + errno_text(fe));
  return true;
}

namespace {

// Writes `data` to a replacement's temp and flushes it; false (the temp abandoned) on failure.
bool write_temp(AtomicReplace& out, std::string_view data, std::string* err) {
  const std::string& temp = out.temp_path();
  // O_EXCL: never write through something planted under the temp's name; a stale temp of an
  // earlier process with this PID is removed once.
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST && ::unlink(temp.c_str()) == 0)
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int e = errno;
    out.abandon();
    const std::string folder = folder_of(out.final_path());
    struct stat st {};
    if (e == ENOENT && ::stat(folder.c_str(), &st) != 0)
      return fail(err, out.final_path(), "its folder " + folder + " does not exist");
    return fail(err, out.final_path(), errno_text(e) + " (creating its temp in " + folder + ")");
  }
  int e = 0;
  bool ok = write_all(fd, data, &e);
  if (ok && ::fsync(fd) != 0) {
    e = errno;
    ok = false;
  }
  if (::close(fd) != 0 && ok) {
    e = errno;
    ok = false;
  }
  if (!ok) {
    out.abandon();
    return fail(err, out.final_path(), errno_text(e));
  }
  return true;
}

}  // namespace

bool write_file_atomically(const std::string& path, std::string_view data, std::string* err) {
  AtomicReplace out(path);
  return write_temp(out, data, err) && out.commit(err);
}

bool write_outputs(const std::vector<std::pair<std::string, std::string_view>>& outputs, std::string* err) {
  struct Opened {
    int fd;
    bool close;  // false for standard output and error, which stay open
    const std::string* path;
    std::string_view data;
  };
  std::vector<Opened> opened;
  std::vector<std::unique_ptr<AtomicReplace>> staged;  // a temp left unrenamed is removed with it
  auto close_all = [&] {
    for (const Opened& o : opened)
      if (o.close) ::close(o.fd);
  };
  for (const auto& [path, data] : outputs) {
    const PathFacts f = path == "-" ? PathFacts{} : path_facts(path);
    switch (classify_output(path, f)) {
      case OutputKind::standard_output:
        opened.push_back({f.std_stream != 0 ? f.std_stream : STDOUT_FILENO, false, &path, data});
        break;
      case OutputKind::in_place: {
        const int fd = open_in_place(path, f.type == FileType::symlink ? f.target : f.type, err);
        if (fd < 0) {
          close_all();
          return false;
        }
        opened.push_back({fd, true, &path, data});
        break;
      }
      case OutputKind::replace:
        staged.push_back(std::make_unique<AtomicReplace>(path));
        if (!write_temp(*staged.back(), data, err)) {
          close_all();
          return false;
        }
        break;
      case OutputKind::refuse:
        close_all();
        return fail(err, path, refusal_reason(f));
    }
  }
  // Every file is on the disk beside its place and every stream open: only now does any move.
  for (std::size_t i = 0; i < staged.size(); ++i)
    if (!staged[i]->commit(err)) {
      close_all();
      if (i > 0 && err != nullptr) *err += " (" + std::to_string(i) + " earlier output(s) already replaced)";
      return false;
    }
  bool ok = true;
  for (const Opened& o : opened) {
    if (o.close) {
      ok = write_and_close(o.fd, *o.path, o.data, ok ? err : nullptr) && ok;
      continue;
    }
    int e = 0;
    if (!write_all(o.fd, o.data, &e) && ok) ok = fail(err, o.fd == STDERR_FILENO ? "standard error" : "standard output", errno_text(e));
  }
  return ok;
}

bool write_output(const std::string& path, std::string_view data, std::string* err) {
  const PathFacts f = path == "-" ? PathFacts{} : path_facts(path);
  switch (classify_output(path, f)) {
    case OutputKind::standard_output: {
      int e = 0;
      const int fd = f.std_stream != 0 ? f.std_stream : STDOUT_FILENO;
      if (!write_all(fd, data, &e)) return fail(err, fd == STDERR_FILENO ? "standard error" : "standard output", errno_text(e));
      return true;
    }
    case OutputKind::in_place:
      return write_in_place(path, f.type == FileType::symlink ? f.target : f.type, data, err);
    case OutputKind::replace: return write_file_atomically(path, data, err);
    case OutputKind::refuse: break;
  }
  return fail(err, path, refusal_reason(f));
}

bool append_output(const std::string& path, std::string_view data, bool* skipped, std::string* err) {
  *skipped = false;
  const PathFacts f = path_facts(path);
  const FileType t = f.type == FileType::symlink ? f.target : f.type;
  if (f.type != FileType::missing && t != FileType::regular && t != FileType::character_device && t != FileType::fifo)
    return fail(err, path, refusal_reason(f).empty() ? "is not a file" : refusal_reason(f));
  int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
  if (f.type == FileType::missing) flags |= O_CREAT;
  const int fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0) {
    if (errno == ENXIO) {  // a FIFO that nobody reads: skipped, never a hang
      *skipped = true;
      return true;
    }
    return fail(err, path, errno_text(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    ::close(fd);
    return fail(err, path, "is not a file");  // it changed between the look and the open
  }
  return write_and_close(fd, path, data, err);
}

bool same_file(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return a == b;
  struct stat sa {}, sb {};
  const bool ea = ::stat(a.c_str(), &sa) == 0, eb = ::stat(b.c_str(), &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return false;
  // Neither exists yet: the same name in the same folder.
  auto name_of = [](const std::string& p) {
    const std::size_t s = p.rfind('/');
    return s == std::string::npos ? p : p.substr(s + 1);
  };
  if (name_of(a) != name_of(b)) return false;
  struct stat fa {}, fb {};
  if (::stat(folder_of(a).c_str(), &fa) != 0 || ::stat(folder_of(b).c_str(), &fb) != 0) return folder_of(a) == folder_of(b);
  return fa.st_dev == fb.st_dev && fa.st_ino == fb.st_ino;
}

}  // namespace gpucheck
