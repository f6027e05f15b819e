// Shared by the GPU gtests: skip (not pass) with the reason when there is no device; a GPU
// runner sets GPUCHECK_REQUIRE_GPU=1 and then no device (or a driver the runtime cannot use)
// is a failure, not a skip.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

inline bool gpucheck_gpu_required() {
  const char* v = std::getenv("GPUCHECK_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

#define GPUCHECK_REQUIRE_DEVICE()                                                                   \
  do {                                                                                              \
    int n_devices_ = 0;                                                                             \
    if (cudaError_t err_ = cudaGetDeviceCount(&n_devices_); err_ != cudaSuccess || n_devices_ == 0) { \
      if (gpucheck_gpu_required())                                                                  \
        FAIL() << "GPUCHECK_REQUIRE_GPU=1 but no CUDA device found (cudaGetDeviceCount: "           \
               << (err_ != cudaSuccess ? cudaGetErrorString(err_) : "0 devices") << ")";            \
      GTEST_SKIP() << "no CUDA device found (cudaGetDeviceCount: "                                   \
                   << (err_ != cudaSuccess ? cudaGetErrorString(err_) : "0 devices") << ")";         \
    }                                                                                               \
  } while (false)
