#include "gpucheck/check_cuda.hpp"
#include "gpucheck/kernels/stream.cuh"

namespace gpucheck::kernels {
namespace {

// Four independent 16-byte loads in flight per thread before the stores: enough memory
// parallelism to saturate HBM with one resident wave of blocks.
constexpr int kUnroll = 4;

// Grid-stride copy: each thread's unrolled accesses are a whole grid apart.
__global__ void __launch_bounds__(512) copy_strided_kernel(int4* __restrict__ dst, const int4* __restrict__ src,
                                                           std::size_t n) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) __stcs(dst + i + u * stride, v[u]);
  }
  for (; i < n; i += stride) __stcs(dst + i, __ldcs(src + i));
}

// Tiled copy: a block moves one contiguous tile of blockDim x 8 vectors per step (64 KiB for
// 512 threads), so DRAM sees long runs from each block, with 8 loads in flight per thread.
constexpr int kTileUnroll = 8;
__global__ void __launch_bounds__(512) copy_tiled_kernel(int4* __restrict__ dst, const int4* __restrict__ src,
                                                         std::size_t n) {
  const std::size_t tile = std::size_t{blockDim.x} * kTileUnroll;
  for (std::size_t base = blockIdx.x * tile; base < n; base += std::size_t{gridDim.x} * tile) {
    if (base + tile <= n) {
      int4 v[kTileUnroll];
#pragma unroll
      for (int u = 0; u < kTileUnroll; ++u) v[u] = src[base + u * blockDim.x + threadIdx.x];
#pragma unroll
      for (int u = 0; u < kTileUnroll; ++u) dst[base + u * blockDim.x + threadIdx.x] = v[u];
    } else {
      for (std::size_t i = base + threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
    }
  }
}

__global__ void __launch_bounds__(512) triad_kernel(float4* __restrict__ a, const float4* __restrict__ b,
                                                    const float4* __restrict__ c, float s, std::size_t n) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    float4 x[kUnroll], y[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      x[u] = __ldcs(b + i + u * stride);
      y[u] = __ldcs(c + i + u * stride);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      __stcs(a + i + u * stride, make_float4(x[u].x + s * y[u].x, x[u].y + s * y[u].y, x[u].z + s * y[u].z,
                                             x[u].w + s * y[u].w));
  }
  for (; i < n; i += stride) {
    const float4 x = __ldcs(b + i), y = __ldcs(c + i);
    __stcs(a + i, make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w));
  }
}

__global__ void __launch_bounds__(512) read_sum_kernel(const float4* __restrict__ src, std::size_t n,
                                                       double* __restrict__ partial) {
  __shared__ double sh[512 / 32];
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  float acc[kUnroll] = {};
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; i < n; i += stride) {
    const float4 v = __ldcs(src + i);
    acc[0] += (v.x + v.y) + (v.z + v.w);
  }
  double t = 0;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) t += acc[u];
  for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x / 32] = t;
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) s += sh[w];
    partial[blockIdx.x] = s;
  }
}

}  // namespace

StreamLaunch stream_launch_for_device(int device) {
  int sms = 0, max_threads_per_sm = 0;
  GPUCHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GPUCHECK_CUDA(cudaDeviceGetAttribute(&max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  // One full wave: as many 512-thread blocks as fit on every SM at once.
  StreamLaunch l;
  l.threads = 512;
  l.blocks = sms * (max_threads_per_sm / l.threads);
  if (l.blocks <= 0) l.blocks = sms > 0 ? sms : 1;
  return l;
}

void copy_vec16(void* dst, const void* src, std::size_t bytes, StreamLaunch l, cudaStream_t s, CopyVariant v) {
  if (v == CopyVariant::tiled) {
    copy_tiled_kernel<<<l.blocks, l.threads, 0, s>>>(static_cast<int4*>(dst), static_cast<const int4*>(src),
                                                     bytes / 16);
    GPUCHECK_CUDA_LAUNCH("copy_tiled_kernel");
  } else {
    copy_strided_kernel<<<l.blocks, l.threads, 0, s>>>(static_cast<int4*>(dst), static_cast<const int4*>(src),
                                                       bytes / 16);
    GPUCHECK_CUDA_LAUNCH("copy_strided_kernel");
  }
}

void triad_f32(float* a, const float* b, const float* c, float scalar, std::size_t n, StreamLaunch l,
               cudaStream_t s) {
  triad_kernel<<<l.blocks, l.threads, 0, s>>>(reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b),
                                              reinterpret_cast<const float4*>(c), scalar, n / 4);
  GPUCHECK_CUDA_LAUNCH("triad_kernel");
}

void read_sum_f32(const float* src, std::size_t n, double* partial, StreamLaunch l, cudaStream_t s) {
  read_sum_kernel<<<l.blocks, l.threads, 0, s>>>(reinterpret_cast<const float4*>(src), n / 4, partial);
  GPUCHECK_CUDA_LAUNCH("read_sum_kernel");
}

}  // namespace gpucheck::kernels
