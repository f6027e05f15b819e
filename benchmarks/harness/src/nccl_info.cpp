#include <benchmark/benchmark.h>
#include <nccl.h>

#include <string>

#include "gpucheck/harness/libraries.hpp"

namespace gpucheck::harness {
void record_nccl_version() {
  int v = 0;  // 22803 -> 2.28.3
  benchmark::AddCustomContext("nccl_version", ncclGetVersion(&v) == ncclSuccess
                                                  ? std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) +
                                                        "." + std::to_string(v % 100)
                                                  : "unknown");
}
}  // namespace gpucheck::harness
