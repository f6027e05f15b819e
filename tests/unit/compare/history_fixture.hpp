// Results files for the history tests: Google Benchmark's JSON with the context a binary
// records (GPU, commit, branch, host, date) and a few cases, each with its repetitions.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../test_util.hpp"
#include "base/filesystem.hpp"
#include "results/results.hpp"

namespace gpucheck::testutil {

struct RunSpec {
  std::string commit = "aaaa1111", branch = "main", date = "2026-12-01T10:00:00+00:00";
  std::string gpu = "NVIDIA H200", host = "node-1", host_cpu = "Xeon 8480";
  std::vector<std::pair<std::string, std::vector<double>>> cases;  // name, real_time (ns) per repetition
  int method = 0;  // the counter "method" on every entry; 0: none (a file written before binaries wrote it)
  std::map<std::string, int> case_method;  // a case's own method, where it differs from `method`
};

// Day `day` (1-9) of December 2026 at 10:00 UTC, as a results file dates a run.
inline std::string december(int day) { return "2026-12-0" + std::to_string(day) + "T10:00:00+00:00"; }

inline std::string results_text(const RunSpec& s) {
  std::string j = "{\"context\": {\"date\": \"" + s.date + "\", \"host_name\": \"" + s.host + "\", \"gpu_name\": \"" +
                  s.gpu + "\", \"gpu_uuid\": \"GPU-1\", \"driver_version\": \"580.1\", \"host_cpu\": \"" + s.host_cpu +
                  "\", \"gpucheck_commit\": \"" + s.commit + "\", \"git_branch\": \"" + s.branch +
                  "\", \"gpucheck_suite\": \"quick\", \"library_build_type\": \"release\"},\n\"benchmarks\": [";
  bool first = true;
  for (const auto& [name, reps] : s.cases) {
    for (std::size_t i = 0; i < reps.size(); ++i) {
      char buf[512];
      std::snprintf(buf, sizeof buf,
                    "%s{\"name\": \"%s/manual_time\", \"run_name\": \"%s/manual_time\", \"run_type\": \"iteration\", "
                    "\"repetitions\": %zu, \"repetition_index\": %zu, \"threads\": 1, \"iterations\": 10, "
                    "\"real_time\": %.17g, \"cpu_time\": %.17g, \"time_unit\": \"ns\", \"TFLOPS\": %.17g}",
                    first ? "" : ",\n", name.c_str(), name.c_str(), reps.size(), i, reps[i], reps[i], 1e6 / reps[i]);
      j += buf;
      const auto own = s.case_method.find(name);
      const int method = own != s.case_method.end() ? own->second : s.method;
      if (method > 0) j.insert(j.size() - 1, ", \"method\": " + std::to_string(method));
      first = false;
    }
  }
  return j + "]}\n";
}

// Each run written as DIR/COMMIT.json and added to the history `db` by `gpucheck history add`,
// in order (so the runs' ids follow the list).
inline void add_by_cli(const TempDir& dir, const std::string& db, const std::vector<RunSpec>& runs) {
  for (const RunSpec& s : runs) {
    const std::string file = dir / (s.commit + ".json");
    write_file(file, results_text(s));
    const auto added = cli({"history", "add", "--db", db, file});
    ASSERT_EQ(added.status, compare::ExitStatus::Ok) << added.io.err;
  }
}

// `gpucheck baseline update --suite quick --from-history DB --branch main --last N` into DIR/bl,
// read back: the baseline the history gives, or the command's error.
inline compare::Expected<compare::Results> baseline_from_history(const TempDir& dir, const std::string& db, int last) {
  const auto u = cli({"baseline", "update", "--suite", "quick", "--from-history", db, "--branch", "main", "--last",
                      std::to_string(last), "--root", dir / "bl"});
  if (u.status != compare::ExitStatus::Ok) return compare::Error{"baseline update", u.io.err};
  const compare::RealFileSystem fs;
  return compare::load_results(fs, dir / "bl/nvidia-h200/quick.json");
}

}  // namespace gpucheck::testutil
