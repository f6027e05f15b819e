// Shared by the GPU gtests: skip (not pass) with the reason when there is no device; a GPU
// runner sets GPUCHECK_REQUIRE_GPU=1 and then no device (or a driver the runtime cannot use)
// is a failure, not a skip.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "gpucheck/check_cuda.hpp"

inline bool gpucheck_gpu_required() {
  const char* v = std::getenv("GPUCHECK_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// The one probe and its line (gpucheck/check_cuda.hpp), as a skip or, when required, a failure.
#define GPUCHECK_REQUIRE_DEVICE()                                                         \
  do {                                                                                    \
    if (const ::gpucheck::DeviceCount devices_ = ::gpucheck::cuda_device_count(); devices_.count == 0) { \
      if (gpucheck_gpu_required()) FAIL() << "GPUCHECK_REQUIRE_GPU=1 but " << devices_.none;  \
      GTEST_SKIP() << devices_.none;                                                      \
    }                                                                                     \
  } while (false)
