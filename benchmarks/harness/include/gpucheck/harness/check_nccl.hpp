// NCCL's checking macro (see check.hpp).
#pragma once
#include <nccl.h>

#include "gpucheck/check_cuda.hpp"

namespace gpucheck {
[[noreturn]] inline void throw_nccl_error(ncclResult_t r, const char* call, const char* file, int line) {
  throw_gpu_error("NCCL", ncclGetErrorString(r), call, file, line);
}
}  // namespace gpucheck

#define GPUCHECK_NCCL(call)                                                  \
  do {                                                                       \
    if (ncclResult_t gpucheck_status_ = (call); gpucheck_status_ != ncclSuccess)                         \
      ::gpucheck::throw_nccl_error(gpucheck_status_, #call, __FILE__, __LINE__);           \
  } while (false)
