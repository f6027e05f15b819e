#include "watch/follow.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "gpucheck/core/input.hpp"

namespace gpucheck::compare::watch {

std::optional<std::string> log_refusal(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;  // not yet: waited for
    return errno == ENOTDIR ? std::string("cannot be a file: a part of the path is not a folder")
                            : std::string("cannot be read: ") + std::strerror(errno);
  }
  if (!S_ISREG(st.st_mode)) {
    const std::string why = "is " + non_regular_kind(st.st_mode) + ", not a log file";
    return S_ISFIFO(st.st_mode) ? why + " (reading it would take the lines from its reader)" : why;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::string("cannot be read: ") + std::strerror(errno);
  ::close(fd);
  return std::nullopt;
}

FileFollower::FileFollower(std::string path, std::function<void(std::string_view)> on_line)
    : path_(std::move(path)), split_(std::move(on_line)) {
  (void)open_file(true);  // one that comes later is new: read from its start
}

FileFollower::~FileFollower() {
  if (fd_ >= 0) ::close(fd_);
}

bool FileFollower::open_file(bool from_end) {
  // The name's type before it is opened: opening a FIFO would already let a blocked writer on.
  struct stat named {};
  if (::stat(path_.c_str(), &named) != 0 || !S_ISREG(named.st_mode)) return false;
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced in between
    ::close(fd);
    return false;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    ++reopened_;
  }
  fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  offset_ = from_end ? st.st_size : 0;
  (void)::lseek(fd_, offset_, SEEK_SET);
  return true;
}

void FileFollower::poll(std::size_t max_bytes) {
  if (fd_ < 0 && !open_file(false)) return;
  std::vector<char> buf(64 << 10);
  auto drain = [&] {
    std::size_t total = 0;
    while (total < max_bytes) {
      const ssize_t n = ::read(fd_, buf.data(), std::min(buf.size(), max_bytes - total));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      split_.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      offset_ += n;
      total += static_cast<std::size_t>(n);
    }
  };
  drain();
  struct stat open_st {}, name_st {};
  if (::fstat(fd_, &open_st) == 0 && open_st.st_size < offset_) {
    // Truncated (a logger that reopens with O_TRUNC, `> log`): from its start again.
    offset_ = 0;
    (void)::lseek(fd_, 0, SEEK_SET);
    ++reopened_;
    drain();
    return;
  }
  if (::stat(path_.c_str(), &name_st) == 0 && S_ISREG(name_st.st_mode) && (name_st.st_dev != dev_ || name_st.st_ino != ino_)) {
    // Rotated: the old file is read to its end above; the new one from its start.
    split_.finish();
    if (open_file(false)) drain();
  }
}

}  // namespace gpucheck::compare::watch
