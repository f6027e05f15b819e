// Each benchmark binary defines register_benchmarks(); the shared main selects the device,
// records the context and runs Google Benchmark. Exit status: 0 all cases ran, 1 a case
// failed (error or wrong result), 2 bad usage or no CUDA device.
#pragma once
#include "gpucheck/harness/device.hpp"

namespace gpucheck::harness {
void register_benchmarks(Device& device);

// Optional: a binary that takes flags of its own (bench_nccl's --mpi) defines this; the
// shared main calls it after removing the common flags and before Google Benchmark parses.
[[gnu::weak]] void preprocess_args(int* argc, char** argv);
}
