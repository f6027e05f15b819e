// The runner contract's pure pieces: which binaries make a suite, how a case is named in a
// filter, what a binary's end means. The orchestration (gpucheck gate / run) is in gate/.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "base/filesystem.hpp"

namespace gpucheck::compare {

// The list CMake writes next to the binaries: one binary name per line.
inline constexpr std::string_view kBenchmarkList = "gpucheck-benchmarks.txt";

// DIR/gpucheck-benchmarks.txt when it exists (every binary it lists must be there: a missing
// one is an error), else every executable regular file named bench_* in DIR, sorted.
struct SuiteBinaries {
  std::vector<std::string> names;
  bool from_list = false;
};
Expected<SuiteBinaries> discover_binaries(const FileSystem& fs, const std::string& dir);

// A POSIX extended regular expression matching `s` literally.
std::string escape_regex(std::string_view s);
// `^(a|b)(/|$)`: exactly these cases, whatever suffix Google Benchmark appends (/manual_time).
std::string cases_filter(const std::vector<std::string>& names);

// Per-binary time limit of a one-repetition run: quick 300 s, anything else 3600 s.
double default_timeout_s(std::string_view suite);
// SIGTERM to SIGKILL: a tenth of the limit, between 1 and 10 s.
double kill_grace_s(double timeout_s);

// The last non-empty line of a text (a binary's stderr), trimmed and bounded.
std::string last_line(std::string_view text);
// The last `n` non-empty lines.
std::vector<std::string> last_lines(std::string_view text, std::size_t n);

// A binary's one-line reason for exit 2 says there is no GPU ("gpucheck: no CUDA device found").
bool says_no_device(std::string_view line);

}  // namespace gpucheck::compare
