// Row softmax of the naive attention path, P = softmax(scale * S [+ causal mask]).
//
// Memory-bound by design (the naive path's extra traffic is exactly this kernel): each row is
// read once into registers (up to 32 elements per thread: a warp per row up to 1024 vectors,
// a block of up to 512 threads per row up to 16384 vectors), reduced in registers, and P is
// written once; masked S entries are never read. 16-byte loads when the rows allow it. Rows
// longer than 16384 vectors take a two-pass kernel (reads S twice; not tuned).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "attention_common.cuh"
#include "dtype_traits.cuh"
#include "gpucheck/check_cuda.hpp"
#include "gpucheck/kernels/attention.cuh"

namespace gpucheck::kernels {
namespace {

constexpr int kPerThread = 32;      // row elements a thread holds in registers
constexpr int kWarpKernelThreads = 256;
constexpr int kMaxRowThreads = 512;
constexpr int kLongThreads = 256;

struct SoftmaxArgs {
  long long rows;  // matrices * seq_q
  int seq_q;
  int seq_k;
  int off;  // causal: row i sees keys <= i + off
  float sl2;
  bool causal;
  int items;  // vectors per thread actually used (<= kPerThread / V)
};

template <typename E, int N>
struct alignas(sizeof(E) * N) Vec {
  E v[N];
};

__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, m));
  return x;
}
__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) x += __shfl_xor_sync(0xffffffffu, x, m);
  return x;
}

// Max or sum over the block (blockDim.x a multiple of 32); every thread gets the result.
template <bool kMax>
__device__ float block_reduce(float x, float* scratch) {
  x = kMax ? warp_max(x) : warp_sum(x);
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int warps = static_cast<int>(blockDim.x >> 5);
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  float r = lane < warps ? scratch[lane] : (kMax ? -INFINITY : 0.f);
  r = kMax ? warp_max(r) : warp_sum(r);
  __syncthreads();  // scratch is reused by the next reduction
  return r;
}

__device__ __forceinline__ int visible_keys(const SoftmaxArgs& a, long long row) {
  const int qi = static_cast<int>(row % a.seq_q);
  return a.causal ? min(qi + a.off + 1, a.seq_k) : a.seq_k;
}

// kWarpRow: one warp per row, 8 rows per block; else one block per row.
template <typename TS, typename TP, int V, bool kWarpRow>
__global__ void __launch_bounds__(kMaxRowThreads)
    softmax_kernel(const TS* __restrict__ s, TP* __restrict__ out, SoftmaxArgs a) {
  constexpr int kItems = kPerThread / V;
  __shared__ float scratch[32];
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int group = kWarpRow ? 32 : static_cast<int>(blockDim.x);
  const int gtid = kWarpRow ? lane : static_cast<int>(threadIdx.x);
  const long long row = kWarpRow ? static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + (threadIdx.x >> 5)
                                 : static_cast<long long>(blockIdx.x);
  if (kWarpRow && row >= a.rows) return;  // whole warps only
  const int limit = visible_keys(a, row);
  const TS* srow = s + row * a.seq_k;
  TP* prow = out + row * a.seq_k;

  float x[kItems][V];
  float mx = -INFINITY;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int c = (i * group + gtid) * V;
    const bool load = i < a.items && c < limit;
    Vec<TS, V> in{};
    if (load) in = *reinterpret_cast<const Vec<TS, V>*>(srow + c);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      x[i][e] = (load && c + e < limit) ? detail::to_float(in.v[e]) : -INFINITY;
      mx = fmaxf(mx, x[i][e]);
    }
  }
  mx = kWarpRow ? warp_max(mx) : block_reduce<true>(mx, scratch);
  const float ms = mx * a.sl2;  // finite: every row sees key 0
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kItems; ++i)
#pragma unroll
    for (int e = 0; e < V; ++e) {
      x[i][e] = detail::fast_exp2(fmaf(x[i][e], a.sl2, -ms));  // masked: exp2(-inf) = 0
      sum += x[i][e];
    }
  sum = kWarpRow ? warp_sum(sum) : block_reduce<false>(sum, scratch);
  const float inv = 1.f / sum;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int c = (i * group + gtid) * V;
    if (i < a.items && c < a.seq_k) {
      Vec<TP, V> o;
#pragma unroll
      for (int e = 0; e < V; ++e) o.v[e] = detail::from_float<TP>(x[i][e] * inv);
      *reinterpret_cast<Vec<TP, V>*>(prow + c) = o;
    }
  }
}

// Rows too long for registers: pass 1 keeps a running (max, sum) per thread, pass 2 writes.
template <typename TS, typename TP>
__global__ void __launch_bounds__(kLongThreads)
    softmax_long_kernel(const TS* __restrict__ s, TP* __restrict__ out, SoftmaxArgs a) {
  __shared__ float scratch[32];
  const long long row = blockIdx.x;
  const int limit = visible_keys(a, row);
  const TS* srow = s + row * a.seq_k;
  TP* prow = out + row * a.seq_k;
  float m = -INFINITY, sum = 0.f;  // in log2 units: sum of exp2(v - m)
  for (int c = static_cast<int>(threadIdx.x); c < limit; c += kLongThreads) {
    const float v = detail::to_float(srow[c]) * a.sl2;
    if (v > m) {
      sum = sum * detail::fast_exp2(m - v) + 1.f;
      m = v;
    } else {
      sum += detail::fast_exp2(v - m);
    }
  }
  const float row_m = block_reduce<true>(m, scratch);
  const float own = m == -INFINITY ? 0.f : sum * detail::fast_exp2(m - row_m);
  const float inv = 1.f / block_reduce<false>(own, scratch);
  for (int c = static_cast<int>(threadIdx.x); c < a.seq_k; c += kLongThreads) {
    const float pv = c < limit ? detail::fast_exp2(fmaf(detail::to_float(srow[c]), a.sl2, -row_m)) * inv : 0.f;
    prow[c] = detail::from_float<TP>(pv);
  }
}

unsigned grid_or_throw(long long blocks) {
  if (blocks < 1 || blocks > 0x7fffffffLL)
    throw std::invalid_argument("softmax_rows: " + std::to_string(blocks) + " blocks exceed the grid limit");
  return static_cast<unsigned>(blocks);
}

template <typename TS, typename TP, int V>
void run(const TS* s, TP* out, SoftmaxArgs a, cudaStream_t stream) {
  constexpr int kItems = kPerThread / V;
  const long long vecs = (a.seq_k + V - 1) / V;
  if (vecs <= 32LL * kItems) {
    a.items = static_cast<int>((vecs + 31) / 32);
    constexpr int kRowsPerBlock = kWarpKernelThreads / 32;
    softmax_kernel<TS, TP, V, true><<<grid_or_throw((a.rows + kRowsPerBlock - 1) / kRowsPerBlock),
                                      kWarpKernelThreads, 0, stream>>>(s, out, a);
    GPUCHECK_CUDA_LAUNCH("softmax_kernel (warp per row)");
  } else if (vecs <= static_cast<long long>(kMaxRowThreads) * kItems) {
    int threads = 64;
    while (static_cast<long long>(threads) * kItems < vecs) threads *= 2;
    a.items = static_cast<int>((vecs + threads - 1) / threads);
    softmax_kernel<TS, TP, V, false><<<grid_or_throw(a.rows), threads, 0, stream>>>(s, out, a);
    GPUCHECK_CUDA_LAUNCH("softmax_kernel (block per row)");
  } else {
    softmax_long_kernel<TS, TP><<<grid_or_throw(a.rows), kLongThreads, 0, stream>>>(s, out, a);
    GPUCHECK_CUDA_LAUNCH("softmax_long_kernel");
  }
}

template <typename TS, typename TP>
void run_types(const void* s, void* out, const SoftmaxArgs& a, cudaStream_t stream) {
  constexpr int kVec = static_cast<int>(16 / sizeof(TS));
  const bool vec = a.seq_k % kVec == 0 && reinterpret_cast<std::uintptr_t>(s) % 16 == 0 &&
                   reinterpret_cast<std::uintptr_t>(out) % (kVec * sizeof(TP)) == 0;
  if (vec)
    run<TS, TP, kVec>(static_cast<const TS*>(s), static_cast<TP*>(out), a, stream);
  else
    run<TS, TP, 1>(static_cast<const TS*>(s), static_cast<TP*>(out), a, stream);
}

template <typename TS>
void run_s(const SoftmaxProblem& p, const void* s, void* out, const SoftmaxArgs& a, cudaStream_t stream) {
  if (p.p_dtype == DType::fp16)
    run_types<TS, __half>(s, out, a, stream);
  else
    run_types<TS, __nv_bfloat16>(s, out, a, stream);
}

}  // namespace

void validate_softmax(const SoftmaxProblem& p) {
  auto fail = [](const std::string& why) { throw std::invalid_argument("softmax_rows: " + why); };
  if (p.matrices < 1 || p.seq_q < 1 || p.seq_k < 1)
    fail("matrices, seq_q and seq_k must be >= 1 (got " + std::to_string(p.matrices) + ", " +
         std::to_string(p.seq_q) + ", " + std::to_string(p.seq_k) + ")");
  if (p.s_dtype != DType::fp32 && p.s_dtype != DType::fp16 && p.s_dtype != DType::bf16)
    fail("S dtype " + std::string(to_string(p.s_dtype)) + " is not fp32, fp16 or bf16");
  if (p.p_dtype != DType::fp16 && p.p_dtype != DType::bf16)
    fail("P dtype " + std::string(to_string(p.p_dtype)) + " is not fp16 or bf16");
  if (!std::isfinite(p.scale) || p.scale <= 0.f) fail("scale must be finite and > 0");
  if (p.causal && p.seq_q > p.seq_k)
    fail("causal needs seq_q <= seq_k (got " + std::to_string(p.seq_q) + " > " + std::to_string(p.seq_k) + ")");
}

void softmax_rows(const SoftmaxProblem& p, const void* s, void* out, cudaStream_t stream) {
  validate_softmax(p);
  const SoftmaxArgs a{p.matrices * p.seq_q, p.seq_q, p.seq_k, p.seq_k - p.seq_q, p.scale * detail::kLog2e,
                      p.causal, 0};
  switch (p.s_dtype) {
    case DType::fp32: run_s<float>(p, s, out, a, stream); break;
    case DType::fp16: run_s<__half>(p, s, out, a, stream); break;
    default: run_s<__nv_bfloat16>(p, s, out, a, stream); break;
  }
}

std::size_t softmax_traffic_bytes(const SoftmaxProblem& p) {
  validate_softmax(p);
  const auto sq = static_cast<std::size_t>(p.seq_q);
  const auto sk = static_cast<std::size_t>(p.seq_k);
  // Causal row i reads i + off + 1 keys (<= seq_k since seq_q <= seq_k).
  const std::size_t visible = p.causal ? sq * (sk - sq + 1) + sq * (sq - 1) / 2 : sq * sk;
  const auto m = static_cast<std::size_t>(p.matrices);
  return m * (visible * storage_bytes(p.s_dtype) + sq * sk * storage_bytes(p.p_dtype));
}

}  // namespace gpucheck::kernels
