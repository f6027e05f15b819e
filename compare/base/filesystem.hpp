// The disk behind a small interface (as ninja does): the baseline store and the loaders use
// it, the real one does POSIX I/O through core's one reader and one writer
// (gpucheck/core/input.hpp, gpucheck/core/output.hpp), tests use an in-memory fake that can
// fail mid-write and holds FIFOs and devices.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/expected.hpp"
#include "gpucheck/core/input.hpp"
#include "gpucheck/core/output.hpp"

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
  // Loop: a symbolic link loop (stat says ELOOP), named as such rather than as missing.
  enum class Kind { Missing, File, Directory, Other, Loop };

  FileSystem() = default;
  FileSystem(const FileSystem&) = delete;
  FileSystem& operator=(const FileSystem&) = delete;
  virtual ~FileSystem() = default;

  [[nodiscard]] virtual Kind kind(const std::string& path) const = 0;
  // Whole file; fails at once on anything but a regular file (a FIFO is never waited on), a
  // missing or unreadable path, or more than max_bytes.
  [[nodiscard]] virtual Expected<std::string> read(const std::string& path,
                                                   std::size_t max_bytes) const = 0;
  // The same for a loader that only reads the bytes and frees them early: read()'s text here,
  // the file mapped rather than copied on the real disk (gpucheck/core/input.hpp).
  [[nodiscard]] virtual Expected<InputText> read_text(const std::string& path, std::size_t max_bytes) const;
  // Entry names (not paths) of a folder, sorted.
  [[nodiscard]] virtual Expected<std::vector<std::string>> list(const std::string& dir) const = 0;
  // Creates or truncates `path`, writes all of `data` and flushes it to the disk (the runner's
  // logs and its own temps; an output of a command goes through write_output). A symbolic
  // link at `path` is refused, never followed (a child process may have made it).
  virtual Status write(const std::string& path, std::string_view data) = 0;
  // Appends to `path`, creating it if needed (GitHub's step summary file): a FIFO with no
  // reader is an error (skipped, never waited on), a folder or socket refused.
  virtual Status append(const std::string& path, std::string_view data) = 0;
  // What an output path is (core's classify_output decides from this).
  [[nodiscard]] virtual PathFacts output_facts(const std::string& path) const = 0;
  // An output, by its kind: a device or FIFO (or a link to one) written in place, a regular
  // or new file replaced atomically (temp beside it, fsync, rename; the temp removed on every
  // failure), anything else refused. Standard output is the command's (base/output.hpp).
  virtual Status write_output(const std::string& path, std::string_view data) = 0;
  // Several outputs, none changed unless all can be (core's write_outputs on the real disk).
  // This default refuses what output_facts says cannot be written, then writes them in turn.
  virtual Status write_outputs(const std::vector<std::pair<std::string, std::string_view>>& outputs);
  // Whether two paths name one file (the same inode, or the same name in one folder).
  [[nodiscard]] virtual bool same_file(const std::string& a, const std::string& b) const = 0;
  // Atomic replace of `to` by `from` (POSIX rename).
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  virtual Status remove(const std::string& path) = 0;
  virtual Status make_dirs(const std::string& path) = 0;
  // A regular file (symbolic links followed) that this user may execute.
  [[nodiscard]] virtual bool is_executable(const std::string& path) const = 0;
  // A symbolic link itself (lstat): what a child process left is never followed.
  [[nodiscard]] virtual bool is_link(const std::string& path) const = 0;
  // Takes an exclusive lock on `path` (created if missing), waiting up to `wait_s` seconds
  // for another holder; an error naming the holder when it does not come free.
  virtual Expected<std::unique_ptr<FileLock>> lock(const std::string& path, double wait_s) = 0;
};

class RealFileSystem final : public FileSystem {
 public:
  [[nodiscard]] Kind kind(const std::string& path) const override;
  [[nodiscard]] Expected<std::string> read(const std::string& path,
                                           std::size_t max_bytes) const override;
  [[nodiscard]] Expected<InputText> read_text(const std::string& path, std::size_t max_bytes) const override;
  [[nodiscard]] Expected<std::vector<std::string>> list(const std::string& dir) const override;
  Status write(const std::string& path, std::string_view data) override;
  Status append(const std::string& path, std::string_view data) override;
  [[nodiscard]] PathFacts output_facts(const std::string& path) const override;
  Status write_output(const std::string& path, std::string_view data) override;
  Status write_outputs(const std::vector<std::pair<std::string, std::string_view>>& outputs) override;
  [[nodiscard]] bool same_file(const std::string& a, const std::string& b) const override;
  Status rename(const std::string& from, const std::string& to) override;
  Status remove(const std::string& path) override;
  Status make_dirs(const std::string& path) override;
  [[nodiscard]] bool is_executable(const std::string& path) const override;
  [[nodiscard]] bool is_link(const std::string& path) const override;
  Expected<std::unique_ptr<FileLock>> lock(const std::string& path, double wait_s) override;
};

// True for the temporaries an output leaves behind when its writer is killed
// (".x.json.tmp-123", core's temp_path_for).
bool is_stale_temporary(std::string_view name);

// "a/b/c.json" -> "c.json".
std::string base_name(std::string_view path);

// "a/b" + "c" -> "a/b/c"; keeps it simple: no normalisation beyond a single separator.
std::string join_path(std::string_view dir, std::string_view name);
// "a/b/c.json" -> "a/b"; "c.json" -> ".".
std::string parent_path(std::string_view path);

}  // namespace gpucheck::compare
