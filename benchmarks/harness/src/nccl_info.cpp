#include <benchmark/benchmark.h>
#include <nccl.h>

#include <string>

#include "gpucheck/core/names.hpp"
#include "gpucheck/harness/libraries.hpp"

namespace gpucheck::harness {
void record_nccl_version() {
  int v = 0;
  benchmark::AddCustomContext("nccl_version",
                              ncclGetVersion(&v) == ncclSuccess ? dotted_version(static_cast<std::uint64_t>(v)) : "unknown");
}
}  // namespace gpucheck::harness
