// Helpers the unit tests share, once: whole files read and written, a temp folder removed at the
// end, the paths of the source tree and of the committed fixtures, and (in the compare tests) the
// gpucheck CLI run in-process. A fake disk for the tool is compare/fake_fs.hpp.
#pragma once

#include <stdlib.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#ifdef GPUCHECK_COMPARE_FIXTURES
#include "cli/cli.hpp"
#endif

namespace gpucheck::testutil {

// The whole file, bytes unchanged; a file that cannot be opened is a broken test, so it throws.
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

// A fresh folder under the system's temp folder (mkdtemp), removed with all it holds at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "gpucheck-test") {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp " + t);
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
    return out;
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(
        std::distance(std::filesystem::directory_iterator(path_), std::filesystem::directory_iterator()));
  }

 private:
  std::filesystem::path path_;
};

#ifdef GPUCHECK_SOURCE_DIR
// A path in the source tree, from its root: "baselines/thresholds.json".
inline std::string source_path(const std::string& rel) { return std::string(GPUCHECK_SOURCE_DIR) + "/" + rel; }
#endif

#ifdef GPUCHECK_COMPARE_FIXTURES
// A committed fixture of the compare tests, from tests/unit/compare/fixtures: "crafted/baseline.json".
inline std::string fixture(const std::string& rel) { return std::string(GPUCHECK_COMPARE_FIXTURES) + "/" + rel; }

// `gpucheck ARGS...` in-process: its exit status and what it printed.
struct CliRun {
  compare::ExitStatus status;
  compare::CliOutput io;
};

inline CliRun cli(std::vector<std::string> args, compare::FileSystem& fs, const compare::CliEnvironment& env = {}) {
  args.insert(args.begin(), "gpucheck");
  CliRun r{compare::ExitStatus::Ok, {}};
  r.status = compare::run_cli(args, fs, env, r.io);
  return r;
}

inline CliRun cli(std::vector<std::string> args) {
  compare::RealFileSystem fs;
  return cli(std::move(args), fs);
}
#endif

}  // namespace gpucheck::testutil
