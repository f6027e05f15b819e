// In-memory FileSystem for tests (ninja's VirtualFileSystem idea): files and folders in maps,
// plus switches that make a write stop half-way or a rename fail, to prove atomic updates.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "base/filesystem.hpp"

namespace gpucheck::compare::testing {

class FakeFileSystem final : public FileSystem {
 public:
  std::map<std::string, std::string> files;
  std::set<std::string> dirs{"."};
  std::optional<std::size_t> fail_write_after;  // write only this many bytes, then fail
  bool fail_rename = false;
  bool fail_append = false;
  int writes = 0, renames = 0;
  std::set<std::string> executables;  // paths is_executable() says yes to
  std::set<std::string> locked;       // lock files another "process" holds

  class Lock final : public FileLock {
   public:
    Lock(std::set<std::string>& held, std::string path) : held_(held), path_(std::move(path)) {}
    ~Lock() override { held_.erase(path_); }
    [[nodiscard]] double waited_s() const override { return 0.0; }

   private:
    std::set<std::string>& held_;
    std::string path_;
  };

  void add(const std::string& path, const std::string& text) {
    files[path] = text;
    for (std::string p = parent_path(path); p != "." && p != "/"; p = parent_path(p)) dirs.insert(p);
  }

  [[nodiscard]] Kind kind(const std::string& path) const override {
    if (files.count(path)) return Kind::File;
    if (dirs.count(path)) return Kind::Directory;
    return Kind::Missing;
  }
  [[nodiscard]] Expected<std::string> read(const std::string& path, std::size_t max_bytes) const override {
    if (dirs.count(path)) return Error{path, "is a folder, expected a file"};
    const auto it = files.find(path);
    if (it == files.end()) return Error{path, "cannot open: No such file or directory"};
    if (it->second.size() > max_bytes) return Error{path, "file too large"};
    return it->second;
  }
  [[nodiscard]] Expected<std::vector<std::string>> list(const std::string& dir) const override {
    if (!dirs.count(dir)) return Error{dir, "cannot open folder"};
    std::set<std::string> names;
    const std::string prefix = dir == "." ? "" : dir + "/";
    auto take = [&](const std::string& p) {
      if (!p.starts_with(prefix) || p.size() == prefix.size()) return;
      const std::string rest = p.substr(prefix.size());
      names.insert(rest.substr(0, rest.find('/')));
    };
    for (const auto& [p, _] : files) take(p);
    for (const auto& p : dirs) take(p);
    return std::vector<std::string>(names.begin(), names.end());
  }
  Status write(const std::string& path, std::string_view data) override {
    ++writes;
    if (!dirs.count(parent_path(path))) return Error{path, "cannot create: No such file or directory"};
    if (fail_write_after && *fail_write_after < data.size()) {
      files[path] = std::string(data.substr(0, *fail_write_after));  // the torn write stays behind
      return Error{path, "cannot write: No space left on device"};
    }
    files[path] = std::string(data);
    return Done{};
  }
  Status append(const std::string& path, std::string_view data) override {
    if (fail_append) return Error{path, "cannot open for appending: Permission denied"};
    files[path] += std::string(data);
    return Done{};
  }
  Status rename(const std::string& from, const std::string& to) override {
    ++renames;
    if (fail_rename) return Error{to, "cannot rename into place: Input/output error"};
    const auto it = files.find(from);
    if (it == files.end()) return Error{from, "cannot rename: No such file or directory"};
    files[to] = it->second;
    files.erase(it);
    return Done{};
  }
  Status remove(const std::string& path) override {
    files.erase(path);
    return Done{};
  }
  Status make_dirs(const std::string& path) override {
    for (std::string p = path; p != "." && p != "/"; p = parent_path(p)) dirs.insert(p);
    return Done{};
  }
  [[nodiscard]] bool is_executable(const std::string& path) const override {
    return files.count(path) != 0 && executables.count(path) != 0;
  }
  Expected<std::unique_ptr<FileLock>> lock(const std::string& path, double wait_s) override {
    if (locked.count(path) != 0)
      return Error{path, "locked by another process (pid 4242) for more than " + std::to_string(static_cast<int>(wait_s)) + " s"};
    locked.insert(path);
    return std::unique_ptr<FileLock>(std::make_unique<Lock>(locked, path));
  }
};

}  // namespace gpucheck::compare::testing
