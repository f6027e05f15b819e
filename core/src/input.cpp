#include "gpucheck/core/input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpucheck {
namespace {

std::string not_regular(mode_t m) {
  if (S_ISDIR(m)) return "is a folder, expected a file";
  if (S_ISFIFO(m)) return "is a FIFO, not a regular file";
  if (S_ISCHR(m)) return "is a character device, not a regular file";
  if (S_ISBLK(m)) return "is a block device, not a regular file";
  if (S_ISSOCK(m)) return "is a socket, not a regular file";
  return "is not a regular file";
}

}  // namespace

std::string input_errno_reason(int e) {
  if (e == ENOENT) return "no such file or folder";
  if (e == ELOOP) return "a symbolic link loop";
  if (e == ENOTDIR) return "a part of the path is not a folder";
  return std::strerror(e);
}

bool read_input_file(const std::string& path, std::size_t max_bytes, std::string* out, std::string* err) {
  auto fail = [&](const std::string& why) {
    *err = path + ": " + why;
    return false;
  };
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked right after.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return fail(input_errno_reason(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail(not_regular(st.st_mode));
  if (static_cast<std::size_t>(st.st_size) > max_bytes)
    return fail(max_bytes >= (std::size_t{1} << 20) ? "file is larger than " + std::to_string(max_bytes >> 20) + " MiB"
                                                    : "file is larger than " + std::to_string(max_bytes) + " bytes");
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(std::string("cannot read: ") + std::strerror(errno));
    }
    if (n == 0) break;  // it shrank while being read
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  *out = std::move(text);
  return true;
}

}  // namespace gpucheck
