// cuDNN's checking macro (see check.hpp).
#pragma once
#include <cudnn.h>

#include "gpucheck/check_cuda.hpp"

namespace gpucheck {
[[noreturn]] inline void throw_cudnn_error(cudnnStatus_t s, const char* call, const char* file, int line) {
  throw_gpu_error("cuDNN", cudnnGetErrorString(s), call, file, line);
}
}  // namespace gpucheck

#define GPUCHECK_CUDNN(call)                                                 \
  do {                                                                       \
    if (cudnnStatus_t gpucheck_status_ = (call); gpucheck_status_ != CUDNN_STATUS_SUCCESS)               \
      ::gpucheck::throw_cudnn_error(gpucheck_status_, #call, __FILE__, __LINE__);          \
  } while (false)
