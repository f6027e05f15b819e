// Results files for the history tests: Google Benchmark's JSON with the context a binary
// records (GPU, commit, branch, host, date) and a few cases, each with its repetitions.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace gpucheck::testutil {

struct RunSpec {
  std::string commit = "aaaa1111", branch = "main", date = "2026-12-01T10:00:00+00:00";
  std::string gpu = "NVIDIA H200", host = "node-1", host_cpu = "Xeon 8480";
  std::vector<std::pair<std::string, std::vector<double>>> cases;  // name, real_time (ns) per repetition
  int method = 0;  // the counter "method" on every entry; 0: none (a file written before binaries wrote it)
};

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
      if (s.method > 0) j.insert(j.size() - 1, ", \"method\": " + std::to_string(s.method));
      first = false;
    }
  }
  return j + "]}\n";
}

}  // namespace gpucheck::testutil
