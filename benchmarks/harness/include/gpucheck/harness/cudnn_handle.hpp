// A cuDNN handle, created on first use: creating one loads cuDNN, which a binary whose cuDNN
// cases are all filtered out should not pay for. Families keep one in the registry
// (registry.keep<...>()), so it is destroyed before the device; whatever was made with it (plans,
// graphs) must be destroyed first. Links with gpucheck::harness_cudnn.
#pragma once
#include <cudnn.h>

#include "gpucheck/harness/check_cudnn.hpp"

namespace gpucheck::harness {

class CudnnHandle {
 public:
  CudnnHandle() = default;
  ~CudnnHandle() {
    if (h_) cudnnDestroy(h_);
  }
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;
  cudnnHandle_t get() {
    if (!h_) GPUCHECK_CUDNN(cudnnCreate(&h_));
    return h_;
  }

 private:
  cudnnHandle_t h_ = nullptr;
};

}  // namespace gpucheck::harness
