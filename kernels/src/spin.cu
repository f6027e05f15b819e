#include "gpucheck/check_cuda.hpp"
#include "gpucheck/kernels/spin.cuh"

namespace gpucheck::kernels {
namespace {

__device__ inline unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(volatile int* flag, int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long start = global_ns();
  while (*flag == 0) {
    if (global_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

__global__ void busy_wait_kernel(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
}

}  // namespace

void busy_wait(unsigned long long ns, cudaStream_t s) {
  busy_wait_kernel<<<1, 1, 0, s>>>(ns);
  GPUCHECK_CUDA_LAUNCH("busy_wait_kernel");
}

void spin_until_flag(volatile int* flag, int* timed_out, unsigned long long timeout_ns, cudaStream_t s) {
  spin_kernel<<<1, 1, 0, s>>>(flag, timed_out, timeout_ns);
  GPUCHECK_CUDA_LAUNCH("spin_kernel");
}

}  // namespace gpucheck::kernels
