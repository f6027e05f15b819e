#include "gpucheck/check_cuda.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "dtype_traits.cuh"
#include "hash.cuh"

namespace gpucheck::kernels {
namespace {

using detail::pattern_byte;
using detail::uniform01;

template <typename T>
__global__ void fill_uniform_kernel(T* dst, std::size_t n, std::uint64_t seed, float lo, float span) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    dst[i] = detail::from_float<T>(lo + span * uniform01(seed, i));
}

__global__ void fill_pattern_kernel(std::uint8_t* dst, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    dst[i] = pattern_byte(seed, i);
}

unsigned grid_for(std::size_t n) {
  const std::size_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

}  // namespace

float uniform_at(std::uint64_t seed, std::size_t i, float lo, float hi) {
  return lo + (hi - lo) * uniform01(seed, i);
}

void fill_uniform(void* dst, std::size_t n, DType t, std::uint64_t seed, float lo, float hi,
                  cudaStream_t stream) {
  if (n == 0) return;
  detail::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    fill_uniform_kernel<T><<<grid_for(n), 256, 0, stream>>>(static_cast<T*>(dst), n, seed, lo, hi - lo);
    GPUCHECK_CUDA_LAUNCH("fill_uniform_kernel");
  });
}

void fill_pattern_u8(void* dst, std::size_t bytes, std::uint32_t seed, cudaStream_t stream) {
  if (bytes == 0) return;
  fill_pattern_kernel<<<grid_for(bytes), 256, 0, stream>>>(static_cast<std::uint8_t*>(dst), bytes, seed);
  GPUCHECK_CUDA_LAUNCH("fill_pattern_kernel");
}

std::uint8_t pattern_u8_at(std::uint32_t seed, std::size_t i) { return pattern_byte(seed, i); }

void poison(void* dst, std::size_t bytes, cudaStream_t stream) {
  GPUCHECK_CUDA(cudaMemsetAsync(dst, 0xFF, bytes, stream));
}

}  // namespace gpucheck::kernels
