#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "dtype_traits.cuh"
#include "gpucheck/check_cuda.hpp"
#include "scratch.cuh"
#include "gpucheck/kernels/verify.cuh"
#include "hash.cuh"

namespace gpucheck::kernels {
namespace {

constexpr int kThreads = 256;

struct Partial {
  unsigned long long mismatches, nonfinite;
  double max_abs, sse, ssr;
};

template <typename T>
__global__ void compare_kernel(const T* got, const T* want, std::size_t n, double rtol, double atol,
                               Partial* out) {
  __shared__ Partial sh[kThreads];
  Partial p{0, 0, 0, 0, 0};
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const double g = detail::to_double(got[i]);
    const double w = detail::to_double(want[i]);
    if (!isfinite(g) && isfinite(w)) {
      ++p.nonfinite;
      continue;
    }
    if (!isfinite(w)) continue;  // reference overflowed: nothing to compare against
    const double e = fabs(g - w);
    if (e > atol + rtol * fabs(w)) ++p.mismatches;
    p.max_abs = fmax(p.max_abs, e);
    p.sse += e * e;
    p.ssr += w * w;
  }
  sh[threadIdx.x] = p;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      Partial& a = sh[threadIdx.x];
      const Partial& b = sh[threadIdx.x + s];
      a.mismatches += b.mismatches;
      a.nonfinite += b.nonfinite;
      a.max_abs = fmax(a.max_abs, b.max_abs);
      a.sse += b.sse;
      a.ssr += b.ssr;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}

__global__ void pattern_kernel(const std::uint8_t* data, std::size_t n, std::uint32_t seed,
                               unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    local += data[i] != detail::pattern_byte(seed, i);
  if (local) atomicAdd(bad, local);
}

__global__ void differing_words_kernel(const uint4* a, const uint4* b, std::size_t words, unsigned long long* count) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < words;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const uint4 x = a[i], y = b[i];
    local += (x.x != y.x) | (x.y != y.y) | (x.z != y.z) | (x.w != y.w);
  }
  if (local) atomicAdd(count, local);
}

template <typename T>
__global__ void gather_kernel(const T* src, const std::size_t* idx, std::size_t n, double* out) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = detail::to_double(src[idx[i]]);
}

template <typename T>
__global__ void widen_kernel(const T* src, std::size_t n, double* out) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = detail::to_double(src[i]);
}

unsigned blocks_for(std::size_t n, unsigned cap) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b == 0 ? 1 : (b < cap ? b : cap));
}

using detail::DevMem;

}  // namespace

double DiffStats::rel_l2() const {
  if (sum_sq_ref > 0) return std::sqrt(sum_sq_err / sum_sq_ref);
  return sum_sq_err > 0 ? INFINITY : 0.0;
}

DiffStats compare_arrays(const void* got, const void* want, std::size_t n, DType t, double rtol,
                         double atol, cudaStream_t stream) {
  DiffStats r;
  r.count = n;
  if (n == 0) return r;
  const unsigned blocks = blocks_for(n, 1024);
  DevMem partial(sizeof(Partial) * blocks);
  detail::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    compare_kernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(got), static_cast<const T*>(want),
                                                       n, rtol, atol, static_cast<Partial*>(partial.p));
    GPUCHECK_CUDA_LAUNCH("compare_kernel");
  });
  std::vector<Partial> host(blocks);
  GPUCHECK_CUDA(cudaMemcpyAsync(host.data(), partial.p, sizeof(Partial) * blocks, cudaMemcpyDeviceToHost, stream));
  GPUCHECK_CUDA(cudaStreamSynchronize(stream));
  for (const Partial& p : host) {
    r.mismatches += p.mismatches;
    r.nonfinite += p.nonfinite;
    r.max_abs_err = std::fmax(r.max_abs_err, p.max_abs);
    r.sum_sq_err += p.sse;
    r.sum_sq_ref += p.ssr;
  }
  return r;
}

std::uint64_t count_pattern_mismatches(const void* data, std::size_t bytes, std::uint32_t seed,
                                       cudaStream_t stream) {
  DevMem bad(sizeof(unsigned long long));
  GPUCHECK_CUDA(cudaMemsetAsync(bad.p, 0, sizeof(unsigned long long), stream));
  if (bytes > 0) {
    pattern_kernel<<<blocks_for(bytes, 4096), kThreads, 0, stream>>>(
        static_cast<const std::uint8_t*>(data), bytes, seed, static_cast<unsigned long long*>(bad.p));
    GPUCHECK_CUDA_LAUNCH("pattern_kernel");
  }
  unsigned long long host = 0;
  GPUCHECK_CUDA(cudaMemcpyAsync(&host, bad.p, sizeof host, cudaMemcpyDeviceToHost, stream));
  GPUCHECK_CUDA(cudaStreamSynchronize(stream));
  return host;
}

void add_differing_words(const void* a, const void* b, std::size_t bytes, unsigned long long* count,
                         cudaStream_t stream) {
  if (bytes % 16 != 0 || reinterpret_cast<std::uintptr_t>(a) % 16 != 0 || reinterpret_cast<std::uintptr_t>(b) % 16 != 0)
    throw std::invalid_argument("add_differing_words: buffers must be 16-byte aligned and sized");
  if (bytes == 0) return;
  differing_words_kernel<<<blocks_for(bytes / 16, 2048), kThreads, 0, stream>>>(
      static_cast<const uint4*>(a), static_cast<const uint4*>(b), bytes / 16, count);
  GPUCHECK_CUDA_LAUNCH("differing_words_kernel");
}

std::vector<double> to_host_double(const void* src, std::size_t n, DType t, cudaStream_t stream) {
  std::vector<double> out(n);
  if (n == 0) return out;
  DevMem tmp(n * sizeof(double));
  detail::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    widen_kernel<T><<<blocks_for(n, 4096), kThreads, 0, stream>>>(static_cast<const T*>(src), n,
                                                                  static_cast<double*>(tmp.p));
    GPUCHECK_CUDA_LAUNCH("widen_kernel");
  });
  GPUCHECK_CUDA(cudaMemcpyAsync(out.data(), tmp.p, n * sizeof(double), cudaMemcpyDeviceToHost, stream));
  GPUCHECK_CUDA(cudaStreamSynchronize(stream));
  return out;
}

std::vector<double> gather_to_host_double(const void* src, const std::vector<std::size_t>& idx, DType t,
                                          cudaStream_t stream) {
  const std::size_t n = idx.size();
  std::vector<double> out(n);
  if (n == 0) return out;
  DevMem d_idx(n * sizeof(std::size_t));
  DevMem d_out(n * sizeof(double));
  GPUCHECK_CUDA(cudaMemcpyAsync(d_idx.p, idx.data(), n * sizeof(std::size_t), cudaMemcpyHostToDevice, stream));
  detail::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    gather_kernel<T><<<blocks_for(n, 4096), kThreads, 0, stream>>>(
        static_cast<const T*>(src), static_cast<const std::size_t*>(d_idx.p), n, static_cast<double*>(d_out.p));
    GPUCHECK_CUDA_LAUNCH("gather_kernel");
  });
  GPUCHECK_CUDA(cudaMemcpyAsync(out.data(), d_out.p, n * sizeof(double), cudaMemcpyDeviceToHost, stream));
  GPUCHECK_CUDA(cudaStreamSynchronize(stream));
  return out;
}

}  // namespace gpucheck::kernels
