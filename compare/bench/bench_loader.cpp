// The loader at scale (issue 36): `gpucheck compare --format json --out` of two files of
// 1,000,000 entries shaped like baselines/nvidia-h200/quick.json's rows (200,000 cases of 5
// repetitions, ~650 MB a file), and of two files of one entry with 1,000,000 counters. The
// files are written to a temporary folder the first time a case runs (never stored) and
// removed at exit. Read a figure as CPU time per compare; peak memory is /usr/bin/time's
// question (docs/COMPARE.md gives both).
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "base/filesystem.hpp"
#include "cli/cli.hpp"
#include "tool_cases.hpp"

namespace gpucheck::compare::bench {
namespace {

constexpr int kCases = 200000;  // x 5 repetitions = 1,000,000 entries
constexpr int kReps = 5;
constexpr int kCounters = 1000000;

const char* const kContext = R"({"context": {"gpu_name": "NVIDIA H200", "driver_version": "570.133.20"}, "benchmarks": [)";

// quick.json's row: the same fields, counters and label, the name and figures varied.
std::string quick_rows(double scale) {
  std::string s = kContext;
  s.reserve(static_cast<std::size_t>(kCases) * kReps * 680);
  char buf[1024];
  for (int i = 0; i < kCases; ++i) {
    const double base = (20000.0 + (i % 997)) * scale;
    for (int r = 0; r < kReps; ++r) {
      const double t = base * (1.0 + 0.001 * r);
      std::snprintf(buf, sizeof buf,
                    R"(%s{"name": "matmul/cublaslt/fp32/%dx8192x8192/iterations:1/manual_time", "family_index": 0, "per_family_instance_index": %d, "run_name": "matmul/cublaslt/fp32/%dx8192x8192/iterations:1/manual_time", "run_type": "iteration", "repetitions": %d, "repetition_index": %d, "threads": 1, "iterations": 1, "real_time": %.17g, "cpu_time": 704183.478, "time_unit": "us", "TFLOPS": %.17g, "batch": 1.0, "clock_event_reasons": 0.0, "cv_pct": 0.1333054414586275, "pct_of_peak": 76.49395646959266, "samples": 20.0, "sm_clock_MHz": 1980.0, "throttled": 0.0, "throttled_samples": 0.0, "label": "algo=55 tile=20 stages=31 splitk=1 ws=0"})",
                    (i == 0 && r == 0) ? "" : ",", 1024 + i, i, 1024 + i, kReps, r, t, 1.1e12 / t);
      s += buf;
    }
  }
  return s + "]}";
}

std::string one_entry_counters(double scale) {
  std::string s = kContext;
  s += R"({"name": "wide/counters", "run_type": "iteration", "iterations": 1, "real_time": )" + std::to_string(100.0 * scale) +
       R"(, "time_unit": "us")";
  s.reserve(static_cast<std::size_t>(kCounters) * 24);
  for (int i = 0; i < kCounters; ++i) s += ", \"c" + std::to_string(i) + "\": " + std::to_string(1 + i % 89);
  return s + "}]}";
}

// Two files in a folder removed at exit.
struct Pair {
  std::string dir;
  explicit Pair(std::string (*make)(double)) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpucheck-bench-loader-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return;
    RealFileSystem fs;
    if (fs.write(tmpl + "/base.json", make(1.0)) && fs.write(tmpl + "/cur.json", make(1.03))) dir = tmpl;
  }
  ~Pair() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;
};

void compare_pair(benchmark::State& state, const Pair& files) {
  if (files.dir.empty()) state.SkipWithError("cannot write the inputs to a temporary folder");
  RealFileSystem fs;
  time_each(state, [&] {
    CliOutput io;
    const ExitStatus status = run_cli({"gpucheck", "compare", files.dir + "/base.json", files.dir + "/cur.json", "--format",
                                       "json", "--out", files.dir + "/out.json"},
                                      fs, {}, io);
    if (status == ExitStatus::Ok) return true;
    state.SkipWithError(("gpucheck compare exited " + std::to_string(static_cast<int>(status)) + ": " + io.err).c_str());
    return false;
  });
}

void compare_million_entries(benchmark::State& state) {
  static const Pair files(quick_rows);
  compare_pair(state, files);
}

void compare_million_counters(benchmark::State& state) {
  static const Pair files(one_entry_counters);
  compare_pair(state, files);
}

[[maybe_unused]] const bool registered = register_tool_cases({
    // One repetition: a run of ~30 s, and bench_tool is report-only (ci/test.sh --all).
    {"tool/cli/compare_json/1000000x1_quick_rows", compare_million_entries, 1},
    {"tool/cli/compare_json/1x1000000_counters", compare_million_counters},
});

}  // namespace
}  // namespace gpucheck::compare::bench
