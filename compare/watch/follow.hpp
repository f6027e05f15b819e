// A log file followed as `tail -F` does, for `gpucheck watch --pid --log FILE`: from its end when
// it starts (the lines already there have no time to place them at), each complete line as it
// is appended; a file that is truncated is read again from its start, one that is replaced
// (rotated: a new file at the name) is read from the new file's start, and one that does not
// exist yet is waited for. Only a regular file is followed: a FIFO read here would take the
// lines from its own reader (and, once watch stops, leave its writer without one), a folder or
// a device is no log. Memory stays bounded: lines are cut at LineSplitter::kMaxLine.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "watch/child.hpp"

namespace gpucheck::compare::watch {

// Why `path` cannot be followed as a log: it exists and is not a regular file ("is a folder"),
// or cannot be read (a permission, a part of the path that is a file); nullopt when it is a
// readable regular file or does not exist (yet: it is waited for).
std::optional<std::string> log_refusal(const std::string& path);

class FileFollower {
 public:
  FileFollower(std::string path, std::function<void(std::string_view)> on_line);
  ~FileFollower();
  FileFollower(const FileFollower&) = delete;
  FileFollower& operator=(const FileFollower&) = delete;
  // Reads what was appended since the last call (at most `max_bytes`), handing each complete line on.
  void poll(std::size_t max_bytes = std::size_t{16} << 20);
  // The last partial line, at the end.
  void finish() { split_.finish(); }
  [[nodiscard]] bool is_open() const { return fd_ >= 0; }
  [[nodiscard]] int reopened() const { return reopened_; }
  [[nodiscard]] int cut_lines() const { return split_.cut_lines(); }

 private:
  bool open_file(bool from_end);
  std::string path_;
  LineSplitter split_;
  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  off_t offset_ = 0;
  int reopened_ = 0;
};

}  // namespace gpucheck::compare::watch
