#include <benchmark/benchmark.h>
#include <cublasLt.h>

#include <string>

#include "gpucheck/harness/libraries.hpp"

namespace gpucheck::harness {
void record_cublas_version() {
  const std::size_t v = cublasLtGetVersion();  // 130100 -> 13.1.0
  benchmark::AddCustomContext("cublas_version", std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) +
                                                    "." + std::to_string(v % 100));
}
}  // namespace gpucheck::harness
