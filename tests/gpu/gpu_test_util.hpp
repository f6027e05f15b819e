// Shared by the GPU gtests: skip (not pass) with the reason when there is no device.
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#define GPUCHECK_REQUIRE_DEVICE()                                                          \
  do {                                                                                     \
    int n_devices_ = 0;                                                                    \
    if (cudaError_t err_ = cudaGetDeviceCount(&n_devices_); err_ != cudaSuccess || n_devices_ == 0) \
      GTEST_SKIP() << "no CUDA device found (cudaGetDeviceCount: "                          \
                   << (err_ != cudaSuccess ? cudaGetErrorString(err_) : "0 devices") << ")"; \
  } while (false)
