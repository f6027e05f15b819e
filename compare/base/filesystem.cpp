// POSIX file access for the compare tool: errors come back as values with strerror's text.
#include "base/filesystem.hpp"

#include "gpucheck/core/input.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

namespace gpucheck::compare {
namespace {

Error sys_error(const std::string& path, const char* what) {
  return Error{path, std::string(what) + ": " + std::strerror(errno)};
}

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Writes all of `data` to `fd`, retrying short writes and EINTR.
Status write_all(int fd, const std::string& path, std::string_view data) {
  std::size_t put = 0;
  while (put < data.size()) {
    const ssize_t n = ::write(fd, data.data() + put, data.size() - put);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sys_error(path, "cannot write");
    }
    put += static_cast<std::size_t>(n);
  }
  return Done{};
}

class FlockLock final : public FileLock {
 public:
  FlockLock(int fd, double waited) : fd_(fd), waited_(waited) {}
  ~FlockLock() override {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  [[nodiscard]] double waited_s() const override { return waited_; }

 private:
  int fd_;
  double waited_;
};

// Core's messages are "PATH: reason" and "cannot write PATH: reason": the path goes to `where`.
Error core_error(const std::string& path, const std::string& text) {
  const std::string prefix = path + ": ";
  if (text.starts_with(prefix)) return Error{path, text.substr(prefix.size())};
  const std::string wprefix = "cannot write " + path + ": ";
  if (text.starts_with(wprefix)) return Error{path, "cannot write: " + text.substr(wprefix.size())};
  return Error{path, text};
}

}  // namespace

FileSystem::Kind RealFileSystem::kind(const std::string& path) const {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno == ELOOP ? Kind::Loop : Kind::Missing;
  if (S_ISREG(st.st_mode)) return Kind::File;
  if (S_ISDIR(st.st_mode)) return Kind::Directory;
  return Kind::Other;
}

Expected<std::string> RealFileSystem::read(const std::string& path, std::size_t max_bytes) const {
  std::string text, err;
  if (!read_input_file(path, max_bytes, &text, &err)) return core_error(path, err);
  return text;
}

Expected<InputText> FileSystem::read_text(const std::string& path, std::size_t max_bytes) const {
  auto text = read(path, max_bytes);
  if (!text) return text.error();
  return InputText(std::move(*text));
}

Expected<InputText> RealFileSystem::read_text(const std::string& path, std::size_t max_bytes) const {
  InputText text;
  std::string err;
  if (!map_input_file(path, max_bytes, &text, &err)) return core_error(path, err);
  return text;
}

Expected<std::vector<std::string>> RealFileSystem::list(const std::string& dir) const {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return sys_error(dir, "cannot open folder");
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d.get())) {
    const std::string_view n(e->d_name);
    if (n == "." || n == "..") continue;
    names.emplace_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Status RealFileSystem::write(const std::string& path, std::string_view data) {
  Fd f(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (f.fd < 0) return sys_error(path, "cannot create");
  if (Status st = write_all(f.fd, path, data); !st) return st;
  // The rename that follows must never expose a file whose bytes are not on the disk yet.
  if (::fsync(f.fd) != 0) return sys_error(path, "cannot flush");
  const int fd = f.fd;
  f.fd = -1;
  if (::close(fd) != 0) return sys_error(path, "cannot close");
  return Done{};
}

Status RealFileSystem::append(const std::string& path, std::string_view data) {
  bool skipped = false;
  std::string err;
  if (!append_output(path, data, &skipped, &err)) return core_error(path, err);
  if (skipped) return Error{path, "a FIFO with no reader: skipped"};
  return Done{};
}

PathFacts RealFileSystem::output_facts(const std::string& path) const { return path_facts(path); }

Status RealFileSystem::write_output(const std::string& path, std::string_view data) {
  std::string err;
  if (!gpucheck::write_output(path, data, &err)) return core_error(path, err);
  return Done{};
}

Status RealFileSystem::write_outputs(const std::vector<std::pair<std::string, std::string_view>>& outputs) {
  std::string err;
  if (gpucheck::write_outputs(outputs, &err)) return Done{};
  for (const auto& [path, data] : outputs)  // the error names the output that failed
    if (err.starts_with("cannot write " + path + ": ")) return core_error(path, err);
  return Error{"output", err};
}

Status FileSystem::write_outputs(const std::vector<std::pair<std::string, std::string_view>>& outputs) {
  for (const auto& [path, data] : outputs)
    if (path != "-")
      if (const PathFacts f = output_facts(path); classify_output(path, f) == OutputKind::refuse)
        return Error{path, "cannot write: " + refusal_reason(f)};
  for (const auto& [path, data] : outputs)
    if (auto w = write_output(path, data); !w) return w;
  return Done{};
}

bool RealFileSystem::same_file(const std::string& a, const std::string& b) const { return gpucheck::same_file(a, b); }

Status RealFileSystem::rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return sys_error(to, "cannot rename into place");
  return Done{};
}

Status RealFileSystem::remove(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return sys_error(path, "cannot remove");
  return Done{};
}

Status RealFileSystem::make_dirs(const std::string& path) {
  std::string partial;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    const std::size_t next = path.find('/', pos);
    const std::size_t end = next == std::string::npos ? path.size() : next;
    partial = path.substr(0, end);
    if (!partial.empty() && ::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return sys_error(partial, "cannot create folder");
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  if (kind(path) != Kind::Directory) return Error{path, "is not a folder"};
  return Done{};
}

bool RealFileSystem::is_executable(const std::string& path) const {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

bool RealFileSystem::is_link(const std::string& path) const {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

Expected<std::unique_ptr<FileLock>> RealFileSystem::lock(const std::string& path, double wait_s) {
  // Never through a link (its target would be truncated with the holder's pid written in) and
  // only a regular file: a check before the call cannot close the window up to this open.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0)
    return errno == ELOOP ? Error{path, "the lock file is a symbolic link: refused (remove it)"}
                          : sys_error(path, "cannot open the lock file");
  struct stat lst {};
  if (::fstat(fd, &lst) != 0 || !S_ISREG(lst.st_mode)) {
    ::close(fd);
    return Error{path, "the lock file is not a regular file: refused (remove it)"};
  }
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {
      const Error e = sys_error(path, "cannot lock");
      ::close(fd);
      return e;
    }
    if (elapsed() >= wait_s) {
      char buf[32] = {};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      std::string holder = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("?");
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      ::close(fd);
      return Error{path, "locked by another process (pid " + holder + ") for more than " +
                             std::to_string(static_cast<int>(wait_s)) + " s"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Who holds it, for the message a waiting process prints.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  return std::unique_ptr<FileLock>(std::make_unique<FlockLock>(fd, elapsed()));
}

bool is_stale_temporary(std::string_view name) { return is_temp_name(name); }

std::string base_name(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string join_path(std::string_view dir, std::string_view name) {
  if (dir.empty() || dir == ".") return std::string(name);
  std::string out(dir);
  if (out.back() != '/') out += '/';
  out += name;
  return out;
}

std::string parent_path(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

}  // namespace gpucheck::compare
