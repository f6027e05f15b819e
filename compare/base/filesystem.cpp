// POSIX file access for the compare tool: errors come back as values with strerror's text.
#include "base/filesystem.hpp"

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

}  // namespace

FileSystem::Kind RealFileSystem::kind(const std::string& path) const {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Kind::Missing;
  if (S_ISREG(st.st_mode)) return Kind::File;
  if (S_ISDIR(st.st_mode)) return Kind::Directory;
  return Kind::Other;
}

Expected<std::string> RealFileSystem::read(const std::string& path, std::size_t max_bytes) const {
  Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd < 0) return sys_error(path, "cannot open");
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return sys_error(path, "cannot stat");
  if (S_ISDIR(st.st_mode)) return Error{path, "is a folder, expected a file"};
  if (!S_ISREG(st.st_mode)) return Error{path, "is not a regular file"};
  if (static_cast<std::size_t>(st.st_size) > max_bytes)
    return Error{path, "file is larger than " + std::to_string(max_bytes >> 20) + " MiB"};
  std::string out;
  out.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(f.fd, out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sys_error(path, "cannot read");
    }
    if (n == 0) break;  // file shrank while reading
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
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
  Fd f(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
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
  Fd f(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (f.fd < 0) return sys_error(path, "cannot open for appending");
  return write_all(f.fd, path, data);
}

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

Expected<std::unique_ptr<FileLock>> RealFileSystem::lock(const std::string& path, double wait_s) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return sys_error(path, "cannot open the lock file");
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

Status write_atomic(FileSystem& fs, const std::string& path, std::string_view data) {
  // Appended piece by piece: g++ 12 warns (-Wrestrict, a false positive) on "." + string.
  std::string name(1, '.');
  name.append(base_name(path)).append(".tmp-").append(std::to_string(::getpid()));
  const std::string tmp = join_path(parent_path(path), name);
  if (auto w = fs.write(tmp, data); !w) {
    (void)fs.remove(tmp);
    return w.error();
  }
  if (auto r = fs.rename(tmp, path); !r) {
    (void)fs.remove(tmp);
    return r.error();
  }
  return Done{};
}

bool is_stale_temporary(std::string_view name) {
  const std::size_t t = name.rfind(".tmp-");
  if (name.empty() || name[0] != '.' || t == std::string_view::npos || t + 5 >= name.size()) return false;
  return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(t + 5), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

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
