#include "gpucheck/core/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

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

bool write_in_place(const std::string& path, FileType target, std::string_view data, std::string* err) {
  // A FIFO without a reader: O_NONBLOCK makes open fail at once (ENXIO) instead of waiting.
  const int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | (target == FileType::fifo ? O_NONBLOCK : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    const int e = errno;
    return fail(err, path, e == ENXIO ? "a FIFO with no reader" : errno_text(e));
  }
  if (target == FileType::fifo) {  // a reader is there: writes may now wait for it as usual
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl >= 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  }
  int e = 0;
  const bool wrote = write_all(fd, data, &e);
  if (::close(fd) != 0 && wrote) e = errno;
  if (!wrote || e != 0) return fail(err, path, errno_text(e));
  return true;
}

}  // namespace

OutputKind classify_output(std::string_view path, const PathFacts& f) {
  if (path == "-") return OutputKind::standard_output;
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
  if (f.type == FileType::symlink && t == FileType::missing) return "a symbolic link to nothing";
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
  if (f.type == FileType::symlink) f.target = ::stat(path.c_str(), &st) == 0 ? type_of(st.st_mode) : FileType::missing;
  return f;
}

std::string temp_path_for(const std::string& path, long pid) {
  const std::size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return folder + "." + name + ".tmp-" + std::to_string(pid);
}

AtomicReplace::AtomicReplace(std::string final_path)
    : final_(replacement_target(final_path)), temp_(temp_path_for(final_, static_cast<long>(::getpid()))) {}

AtomicReplace::~AtomicReplace() { abandon(); }

void AtomicReplace::abandon() {
  if (!done_) ::unlink(temp_.c_str());
  done_ = true;
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
  int fe = 0;
  if (!fsync_folder(folder_of(final_), &fe)) return fail(err, final_, "fsync of its folder: " + errno_text(fe));
  return true;
}

bool write_file_atomically(const std::string& path, std::string_view data, std::string* err) {
  AtomicReplace out(path);
  const std::string& temp = out.temp_path();
  // O_EXCL: never write through something planted under the temp's name; a stale temp of an
  // earlier process with this PID is removed once.
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST && ::unlink(temp.c_str()) == 0)
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int e = errno;
    out.abandon();
    return fail(err, out.final_path(), "cannot create " + temp + ": " + errno_text(e));
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
  return out.commit(err);
}

bool write_output(const std::string& path, std::string_view data, std::string* err) {
  const PathFacts f = path == "-" ? PathFacts{} : path_facts(path);
  switch (classify_output(path, f)) {
    case OutputKind::standard_output: {
      int e = 0;
      if (!write_all(STDOUT_FILENO, data, &e)) return fail(err, "standard output", errno_text(e));
      return true;
    }
    case OutputKind::in_place:
      return write_in_place(path, f.type == FileType::symlink ? f.target : f.type, data, err);
    case OutputKind::replace: return write_file_atomically(path, data, err);
    case OutputKind::refuse: break;
  }
  return fail(err, path, refusal_reason(f));
}

}  // namespace gpucheck
