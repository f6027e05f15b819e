// Results files of any size for bench_tool, in the quick suite's shape: one entry per benchmark,
// or 3 repetitions plus the mean, median, stddev and cv aggregates Google Benchmark adds (7
// entries per benchmark).
#pragma once

#include <string>

namespace gpucheck::compare::bench {

// `n` matmul benchmarks whose times are `scale` times a fixed pattern (1.00x to 1.96x).
std::string synthetic_results(int n, double scale, bool repetitions);

}  // namespace gpucheck::compare::bench
