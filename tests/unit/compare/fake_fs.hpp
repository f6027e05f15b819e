// In-memory FileSystem for tests (ninja's VirtualFileSystem idea): files and folders in maps,
// plus switches that make a write stop half-way or a rename fail, to prove atomic updates.
#pragma once

#include <unistd.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/filesystem.hpp"
#include "cli/cli.hpp"

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
  std::set<std::string> links;        // paths is_link() says yes to (symbolic links)
  std::set<std::string> locked;       // lock files another "process" holds
  // Nodes that are written in place, never replaced: character devices and FIFOs (a FIFO in
  // `no_reader` has nobody reading it). What was written to them is in `written_in_place`.
  std::set<std::string> char_devices, fifos, no_reader, loops;
  std::map<std::string, std::string> written_in_place;
  std::optional<std::string> stdout_file;  // the path standard output is open on (`> f`)
  // Paths whose read_text maps a real file (first) and then cuts it to `second` bytes: a file
  // truncated under the loader while it reads.
  std::map<std::string, std::pair<std::string, std::size_t>> cut_after_map;

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
    if (loops.count(path)) return Kind::Loop;
    if (char_devices.count(path) || fifos.count(path)) return Kind::Other;
    if (files.count(path)) return Kind::File;
    if (dirs.count(path)) return Kind::Directory;
    return Kind::Missing;
  }
  [[nodiscard]] Expected<std::string> read(const std::string& path, std::size_t max_bytes) const override {
    if (dirs.count(path)) return Error{path, "is a folder, expected a file"};
    if (loops.count(path)) return Error{path, "a symbolic link loop"};
    if (fifos.count(path)) return Error{path, "is a FIFO, not a regular file"};
    if (char_devices.count(path)) return Error{path, "is a character device, not a regular file"};
    const auto it = files.find(path);
    if (it == files.end()) return Error{path, "cannot open: No such file or directory"};
    if (it->second.size() > max_bytes) return Error{path, "file too large"};
    return it->second;
  }
  [[nodiscard]] Expected<InputText> read_text(const std::string& path, std::size_t max_bytes) const override {
    const auto it = cut_after_map.find(path);
    if (it == cut_after_map.end()) return FileSystem::read_text(path, max_bytes);
    InputText text;
    std::string err;
    if (!map_input_file(it->second.first, max_bytes, &text, &err)) return Error{path, err};
    if (::truncate(it->second.first.c_str(), static_cast<off_t>(it->second.second)) != 0) return Error{path, "cannot cut"};
    return text;
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
    if (dirs.count(path)) return Error{path, "is a folder"};
    if (no_reader.count(path)) return Error{path, "a FIFO with no reader: skipped"};
    if (char_devices.count(path) || fifos.count(path)) {
      written_in_place[path] += std::string(data);
      return Done{};
    }
    files[path] += std::string(data);
    return Done{};
  }
  [[nodiscard]] PathFacts output_facts(const std::string& path) const override {
    PathFacts f;
    if (char_devices.count(path)) f.type = FileType::character_device;
    else if (fifos.count(path)) f.type = FileType::fifo;
    else if (dirs.count(path)) f.type = FileType::directory;
    else if (files.count(path)) f.type = FileType::regular;
    f.target = f.type;
    if (stdout_file && same_file(*stdout_file, path)) f.std_stream = 1;
    return f;
  }
  // As the real one: in place for a device or FIFO, else a temp beside the file, renamed over
  // it, removed on failure (the fake's write and rename can fail on purpose).
  Status write_output(const std::string& path, std::string_view data) override {
    if (no_reader.count(path)) return Error{path, "cannot write: a FIFO with no reader"};
    if (char_devices.count(path) || fifos.count(path)) {
      written_in_place[path] += std::string(data);
      return Done{};
    }
    if (dirs.count(path)) return Error{path, "cannot write: is a folder"};
    if (!dirs.count(parent_path(path)))
      return Error{path, "cannot write: its folder " + parent_path(path) + " does not exist"};
    const std::string tmp = join_path(parent_path(path), "." + base_name(path) + ".tmp-4242");
    if (auto w = write(tmp, data); !w) {
      (void)remove(tmp);
      return w.error();
    }
    if (auto r = rename(tmp, path); !r) {
      (void)remove(tmp);
      return r.error();
    }
    return Done{};
  }
  [[nodiscard]] bool same_file(const std::string& a, const std::string& b) const override {
    auto norm = [](std::string p) {
      while (p.starts_with("./")) p.erase(0, 2);
      return p;
    };
    return norm(a) == norm(b);
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
  [[nodiscard]] bool is_link(const std::string& path) const override { return links.count(path) != 0; }
  Expected<std::unique_ptr<FileLock>> lock(const std::string& path, double wait_s) override {
    if (locked.count(path) != 0)
      return Error{path, "locked by another process (pid 4242) for more than " + std::to_string(static_cast<int>(wait_s)) + " s"};
    locked.insert(path);
    return std::unique_ptr<FileLock>(std::make_unique<Lock>(locked, path));
  }
};

// `gpucheck COMMAND ARGS...` run in this process over the fake disk.
struct InProcessRun {
  ExitStatus status = ExitStatus::Ok;
  CliOutput io;
};
inline InProcessRun run_command(const std::string& command, std::vector<std::string> args, FakeFileSystem& fs) {
  args.insert(args.begin(), {"gpucheck", command});
  InProcessRun r;
  r.status = run_cli(args, fs, {}, r.io);
  return r;
}

}  // namespace gpucheck::compare::testing
