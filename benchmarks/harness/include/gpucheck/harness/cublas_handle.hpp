// A cuBLAS handle as PyTorch keeps one: bound to the stream with a user workspace (cublasSetStream
// resets the workspace, so it is set again after every rebinding; 32 MiB is PyTorch's Hopper
// default), fp32 kept fp32 (no TF32), host scalars. Families keep one in the registry
// (registry.keep<CublasHandle>()), so it is destroyed before the device. Links with
// gpucheck::harness_cublas.
#pragma once
#include <cublas_v2.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "gpucheck/core/dtype.hpp"
#include "gpucheck/harness/check.hpp"
#include "gpucheck/harness/memory.hpp"

namespace gpucheck::harness {

// cuBLAS's type of a stored fp32, fp16 or bf16 element; any other dtype throws
// std::invalid_argument "<who>: unsupported dtype <t>".
inline cudaDataType_t cuda_data_type(DType t, std::string_view who) {
  switch (t) {
    case DType::fp32: return CUDA_R_32F;
    case DType::fp16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: throw std::invalid_argument(std::string(who) + ": unsupported dtype " + std::string(to_string(t)));
  }
}

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
