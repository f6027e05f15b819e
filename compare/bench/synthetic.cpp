#include "synthetic.hpp"

#include <cstdio>
#include <string>

namespace gpucheck::compare::bench {

namespace {
// What Google Benchmark would write for the aggregate: the repetitions' own mean and median.
double aggregate_time(const std::string& agg, const double (&reps)[3], double median) {
  if (agg == "mean") return (reps[0] + reps[1] + reps[2]) / 3.0;
  if (agg == "cv") return 0.001;
  if (agg == "stddev") return 0.0015 * median;
  return median;
}
}  // namespace

std::string synthetic_results(int n, double scale, bool repetitions) {
  std::string s = R"({"context": {"gpu_name": "NVIDIA H200", "driver_version": "560.35.03"}, "benchmarks": [)";
  s.reserve(static_cast<std::size_t>(n) * (repetitions ? 2600 : 420));
  char buf[512];
  for (int i = 0; i < n; ++i) {
    const std::string name = "matmul/cublaslt/bf16/" + std::to_string(1024 + i) + "x4096x4096/manual_time";
    const double base = (1.0 + (i % 97) * 0.01) * scale;
    const double reps[3] = {base, base * 0.999, base * 1.002};
    const int n_reps = repetitions ? 3 : 1;
    for (int r = 0; r < n_reps; ++r) {
      std::snprintf(buf, sizeof buf,
                    R"(%s{"name": "%s", "family_index": %d, "per_family_instance_index": 0, "run_name": "%s", "run_type": "iteration", "repetitions": %d, "repetition_index": %d, "threads": 1, "iterations": 100, "real_time": %.17g, "cpu_time": 0.01, "time_unit": "ms", "TFLOPS": %.6f, "pct_of_peak": NaN})",
                    (i == 0 && r == 0) ? "" : ",", name.c_str(), i, name.c_str(), n_reps, r, reps[r], 700.0 / reps[r]);
      s += buf;
    }
    if (!repetitions) continue;
    for (const char* agg : {"mean", "median", "stddev", "cv"}) {
      std::snprintf(buf, sizeof buf,
                    R"(,{"name": "%s_%s", "family_index": %d, "per_family_instance_index": 0, "run_name": "%s", "run_type": "aggregate", "repetitions": 3, "threads": 1, "aggregate_name": "%s", "iterations": 3, "real_time": %.17g, "cpu_time": 0.01, "time_unit": "ms", "TFLOPS": %.6f})",
                    name.c_str(), agg, i, name.c_str(), agg, aggregate_time(agg, reps, base), 700.0 / base);
      s += buf;
    }
  }
  return s + "]}";
}

}  // namespace gpucheck::compare::bench
