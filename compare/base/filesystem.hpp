// The disk behind a small interface (as ninja does): the baseline store and the loaders use
// it, the real one does POSIX I/O, tests use an in-memory fake that can fail mid-write.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace gpucheck::compare {

// An exclusive lock held until the handle is destroyed.
class FileLock {
 public:
  FileLock() = default;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  virtual ~FileLock() = default;
  [[nodiscard]] virtual double waited_s() const = 0;  // how long it waited for another holder
};

class FileSystem {
 public:
  enum class Kind { Missing, File, Directory, Other };

  FileSystem() = default;
  FileSystem(const FileSystem&) = delete;
  FileSystem& operator=(const FileSystem&) = delete;
  virtual ~FileSystem() = default;

  [[nodiscard]] virtual Kind kind(const std::string& path) const = 0;
  // Whole file; fails on a folder, a missing or unreadable path, or more than max_bytes.
  [[nodiscard]] virtual Expected<std::string> read(const std::string& path,
                                                   std::size_t max_bytes) const = 0;
  // Entry names (not paths) of a folder, sorted.
  [[nodiscard]] virtual Expected<std::vector<std::string>> list(const std::string& dir) const = 0;
  // Creates or truncates `path`, writes all of `data` and flushes it to the disk.
  virtual Status write(const std::string& path, std::string_view data) = 0;
  // Appends to `path`, creating it if needed (GitHub's step summary file).
  virtual Status append(const std::string& path, std::string_view data) = 0;
  // Atomic replace of `to` by `from` (POSIX rename).
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  virtual Status remove(const std::string& path) = 0;
  virtual Status make_dirs(const std::string& path) = 0;
  // A regular file (symbolic links followed) that this user may execute.
  [[nodiscard]] virtual bool is_executable(const std::string& path) const = 0;
  // Takes an exclusive lock on `path` (created if missing), waiting up to `wait_s` seconds
  // for another holder; an error naming the holder when it does not come free.
  virtual Expected<std::unique_ptr<FileLock>> lock(const std::string& path, double wait_s) = 0;
};

class RealFileSystem final : public FileSystem {
 public:
  [[nodiscard]] Kind kind(const std::string& path) const override;
  [[nodiscard]] Expected<std::string> read(const std::string& path,
                                           std::size_t max_bytes) const override;
  [[nodiscard]] Expected<std::vector<std::string>> list(const std::string& dir) const override;
  Status write(const std::string& path, std::string_view data) override;
  Status append(const std::string& path, std::string_view data) override;
  Status rename(const std::string& from, const std::string& to) override;
  Status remove(const std::string& path) override;
  Status make_dirs(const std::string& path) override;
  [[nodiscard]] bool is_executable(const std::string& path) const override;
  Expected<std::unique_ptr<FileLock>> lock(const std::string& path, double wait_s) override;
};

// Writes `data` to a hidden temporary file beside `path` (".name.tmp-PID"), flushed, then
// renamed over `path`: a reader sees the old file or the new one, never half of one. On
// failure the temporary is removed and `path` is untouched.
Status write_atomic(FileSystem& fs, const std::string& path, std::string_view data);

// True for the temporaries write_atomic leaves behind when killed (".x.json.tmp-123").
bool is_stale_temporary(std::string_view name);

// "a/b/c.json" -> "c.json".
std::string base_name(std::string_view path);

// "a/b" + "c" -> "a/b/c"; keeps it simple: no normalisation beyond a single separator.
std::string join_path(std::string_view dir, std::string_view name);
// "a/b/c.json" -> "a/b"; "c.json" -> ".".
std::string parent_path(std::string_view path);

}  // namespace gpucheck::compare
