#include "gpucheck/kernels/launch.cuh"

namespace gpucheck::kernels {
namespace {

__global__ void empty_kernel() {}

__global__ void __launch_bounds__(kAddOneThreads) add_one_kernel(std::uint32_t* __restrict__ x, int n) {
  for (int i = static_cast<int>(threadIdx.x); i < n; i += kAddOneThreads) x[i] += 1u;
}

}  // namespace

const void* empty_kernel_fn() { return reinterpret_cast<const void*>(&empty_kernel); }

cudaError_t launch_empty(cudaStream_t s) {
  return cudaLaunchKernel(reinterpret_cast<const void*>(&empty_kernel), dim3(1), dim3(1), nullptr, 0, s);
}

cudaError_t launch_add_one(std::uint32_t* x, int n, cudaStream_t s) {
  if (x == nullptr || n < 1 || n > kAddOneMaxElems) return cudaErrorInvalidValue;
  void* args[] = {&x, &n};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&add_one_kernel), dim3(1), dim3(kAddOneThreads), args, 0,
                          s);
}

}  // namespace gpucheck::kernels
