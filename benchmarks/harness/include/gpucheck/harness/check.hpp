// One checking macro per library: a failing call throws gpucheck::GpuError naming the call,
// the file and the line. cuDNN and NCCL have their own headers so that a binary includes
// only the libraries it uses.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>

#include "gpucheck/check_cuda.hpp"

namespace gpucheck {
[[noreturn]] inline void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
  throw_gpu_error("cuBLAS", std::string(cublasGetStatusName(s)) + " (" + cublasGetStatusString(s) + ")", call,
                  file, line);
}
}  // namespace gpucheck

#define GPUCHECK_CUBLAS(call)                                                \
  do {                                                                       \
    if (cublasStatus_t gpucheck_status_ = (call); gpucheck_status_ != CUBLAS_STATUS_SUCCESS)             \
      ::gpucheck::throw_cublas_error(gpucheck_status_, #call, __FILE__, __LINE__);         \
  } while (false)
