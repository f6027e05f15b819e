#include <benchmark/benchmark.h>
#include <cudnn.h>

#include <string>

#include "gpucheck/harness/libraries.hpp"

namespace gpucheck::harness {
void record_cudnn_version() {
  const std::size_t v = cudnnGetVersion();  // 91400 -> 9.14.0
  benchmark::AddCustomContext("cudnn_version", std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) +
                                                   "." + std::to_string(v % 100));
}
}  // namespace gpucheck::harness
