#include <benchmark/benchmark.h>
#include <cublasLt.h>

#include <string>

#include "gpucheck/core/names.hpp"
#include "gpucheck/harness/libraries.hpp"

namespace gpucheck::harness {
void record_cublas_version() { benchmark::AddCustomContext("cublas_version", dotted_version(cublasLtGetVersion())); }
}  // namespace gpucheck::harness
