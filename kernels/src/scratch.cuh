// Scoped device allocation for a kernel wrapper's temporaries (partial sums, index lists):
// freed on every path out of the wrapper, a failed free reported on stderr.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gpucheck/check_cuda.hpp"

namespace gpucheck::kernels::detail {

struct DevMem {
  void* p = nullptr;
  explicit DevMem(std::size_t bytes) { GPUCHECK_CUDA(cudaMalloc(&p, bytes ? bytes : 1)); }
  ~DevMem() { GPUCHECK_CUDA_NOEXCEPT(cudaFree(p)); }
  DevMem(const DevMem&) = delete;
  DevMem& operator=(const DevMem&) = delete;
};

}  // namespace gpucheck::kernels::detail
