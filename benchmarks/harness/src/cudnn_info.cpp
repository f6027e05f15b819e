#include <benchmark/benchmark.h>
#include <cudnn.h>

#include <string>

#include "gpucheck/core/names.hpp"
#include "gpucheck/harness/libraries.hpp"

namespace gpucheck::harness {
void record_cudnn_version() { benchmark::AddCustomContext("cudnn_version", dotted_version(cudnnGetVersion())); }
}  // namespace gpucheck::harness
