#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <string>

#include "gpucheck/core/options.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"

int main(int argc, char** argv) {
  using namespace gpucheck;
  Options options;
  std::string err;
  if (!parse_options(&argc, argv, &options, &err)) {
    std::fprintf(stderr, "gpucheck: %s\n", err.c_str());
    return 2;
  }
  if (options.help) std::fputs(options_help(argv[0]).c_str(), stdout);  // gbench adds its own
  if (harness::preprocess_args) harness::preprocess_args(&argc, argv);

  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    if (options.help) return 0;
    std::fprintf(stderr, "gpucheck: no CUDA device found (cudaGetDeviceCount: %s)\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 2;
  }
  if (options.device >= count) {
    std::fprintf(stderr, "gpucheck: --device %d out of range (%d device%s)\n", options.device, count,
                 count == 1 ? "" : "s");
    return 2;
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  try {
    harness::Device& device = harness::Device::init(options);
    for (const auto& [key, value] : device.context()) benchmark::AddCustomContext(key, value);
    harness::register_benchmarks(device);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpucheck: %s\n", e.what());
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const int failed = harness::failed_cases();
  if (failed > 0) {
    std::fprintf(stderr, "gpucheck: %d case%s failed (see error_message in the output)\n", failed,
                 failed == 1 ? "" : "s");
    return 1;
  }
  return 0;
}
