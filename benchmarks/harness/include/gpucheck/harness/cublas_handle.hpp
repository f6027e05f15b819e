// A cuBLAS handle as PyTorch keeps one: bound to the stream with a user workspace (cublasSetStream
// resets the workspace, so it is set again after every rebinding; 32 MiB is PyTorch's Hopper
// default), fp32 kept fp32 (no TF32), host scalars. Families keep one in the registry
// (registry.keep<CublasHandle>()), so it is destroyed before the device. Links with
// gpucheck::harness_cublas.
#pragma once
#include <cublas_v2.h>

#include "gpucheck/harness/check.hpp"
#include "gpucheck/harness/dtype_enums.hpp"
#include "gpucheck/harness/memory.hpp"

namespace gpucheck::harness {

class CublasHandle {
 public:
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;
  CublasHandle() : ws_(kWorkspaceBytes) {
    GPUCHECK_CUBLAS(cublasCreate(&h_));
    GPUCHECK_CUBLAS(cublasSetMathMode(h_, CUBLAS_DEFAULT_MATH));
    GPUCHECK_CUBLAS(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST));
  }
  ~CublasHandle() {
    if (h_) cublasDestroy(h_);
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  // The handle, bound to `s`.
  cublasHandle_t on(cudaStream_t s) {
    if (!bound_ || stream_ != s) {
      GPUCHECK_CUBLAS(cublasSetStream(h_, s));
      GPUCHECK_CUBLAS(cublasSetWorkspace(h_, ws_.get(), ws_.bytes()));
      stream_ = s;
      bound_ = true;
    }
    return h_;
  }

 private:
  cublasHandle_t h_ = nullptr;
  DeviceBuffer ws_;
  cudaStream_t stream_ = nullptr;
  bool bound_ = false;
};

}  // namespace gpucheck::harness
