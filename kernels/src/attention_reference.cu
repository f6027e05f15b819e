// Reference attention for verification: chosen output rows recomputed from the stored inputs
// with float64 dot products, exp and sums (one block per row; cost ~3 * seq_k * head_dim per
// row), so a 16k-token problem is checked on a few hundred rows in milliseconds.
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "attention_common.cuh"
#include "dtype_traits.cuh"
#include "gpucheck/check_cuda.hpp"
#include "scratch.cuh"
#include "gpucheck/kernels/attention.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck::kernels {
namespace {

constexpr int kRefThreads = 256;
constexpr int kMaxRefHeadDim = 1024;
constexpr int kDimsPerThread = kMaxRefHeadDim / kRefThreads;

struct RefArgs {
  int heads, kv_group, seq_q, seq_k, d;
  double scale;
  bool causal;
};

__device__ double block_reduce_d(double x, bool is_max, double* scratch) {
  for (int m = 16; m > 0; m >>= 1) {
    const double y = __shfl_xor_sync(0xffffffffu, x, m);
    x = is_max ? fmax(x, y) : x + y;
  }
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  double r = lane < kRefThreads / 32 ? scratch[lane] : (is_max ? -INFINITY : 0.0);
  for (int m = 16; m > 0; m >>= 1) {
    const double y = __shfl_xor_sync(0xffffffffu, r, m);
    r = is_max ? fmax(r, y) : r + y;
  }
  __syncthreads();
  return r;
}

template <typename T>
__global__ void __launch_bounds__(kRefThreads)
    reference_rows_kernel(RefArgs a, const T* q, const T* k, const T* v, const AttentionRow* rows, float* out,
                          float* lse) {
  __shared__ double q_row[kMaxRefHeadDim];
  __shared__ double p_chunk[kRefThreads];
  __shared__ double scratch[32];
  const AttentionRow r = rows[blockIdx.x];
  const int tid = static_cast<int>(threadIdx.x);
  const std::size_t bh = static_cast<std::size_t>(r.batch) * a.heads + r.head;
  const std::size_t bkv = static_cast<std::size_t>(r.batch) * (a.heads / a.kv_group) + r.head / a.kv_group;
  const T* qp = q + (bh * a.seq_q + r.query) * a.d;
  const T* kb = k + bkv * a.seq_k * a.d;
  const T* vb = v + bkv * a.seq_k * a.d;
  const int limit = a.causal ? min(r.query + (a.seq_k - a.seq_q) + 1, a.seq_k) : a.seq_k;

  for (int i = tid; i < a.d; i += kRefThreads) q_row[i] = detail::to_double(qp[i]);
  __syncthreads();
  auto logit = [&](int j) {
    const T* kr = kb + static_cast<std::size_t>(j) * a.d;
    double acc = 0.0;
    for (int i = 0; i < a.d; ++i) acc += q_row[i] * detail::to_double(kr[i]);
    return acc * a.scale;
  };

  double mx = -INFINITY;
  for (int j = tid; j < limit; j += kRefThreads) mx = fmax(mx, logit(j));
  mx = block_reduce_d(mx, true, scratch);

  double acc[kDimsPerThread] = {};
  double sum = 0.0;
  for (int c0 = 0; c0 < limit; c0 += kRefThreads) {
    const int j = c0 + tid;
    const double pj = j < limit ? exp(logit(j) - mx) : 0.0;
    sum += pj;
    p_chunk[tid] = pj;
    __syncthreads();
    const int n = min(kRefThreads, limit - c0);
#pragma unroll
    for (int e = 0; e < kDimsPerThread; ++e) {
      const int dim = tid + e * kRefThreads;
      if (dim < a.d)
        for (int jj = 0; jj < n; ++jj)
          acc[e] += p_chunk[jj] * detail::to_double(vb[static_cast<std::size_t>(c0 + jj) * a.d + dim]);
    }
    __syncthreads();
  }
  sum = block_reduce_d(sum, false, scratch);
#pragma unroll
  for (int e = 0; e < kDimsPerThread; ++e) {
    const int dim = tid + e * kRefThreads;
    if (dim < a.d) out[static_cast<std::size_t>(blockIdx.x) * a.d + dim] = static_cast<float>(acc[e] / sum);
  }
  if (lse != nullptr && tid == 0) lse[blockIdx.x] = static_cast<float>(mx + log(sum));
}

template <typename T>
__global__ void nonfinite_kernel(const T* x, std::size_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    local += !isfinite(detail::to_double(x[i]));
  if (local) atomicAdd(count, local);
}

using detail::DevMem;

void validate_rows(const AttentionProblem& p, const std::vector<AttentionRow>& rows) {
  for (const AttentionRow& r : rows)
    if (r.batch < 0 || r.batch >= p.batch || r.head < 0 || r.head >= p.heads || r.query < 0 || r.query >= p.seq_q)
      throw std::invalid_argument("attention row (" + std::to_string(r.batch) + ", " + std::to_string(r.head) +
                                  ", " + std::to_string(r.query) + ") is outside the problem");
}

}  // namespace

void attention_reference_rows(const AttentionProblem& p, const void* q, const void* k, const void* v,
                              const AttentionRow* rows, std::size_t n_rows, float* out, float* lse,
                              cudaStream_t stream) {
  validate_attention(p);
  if (p.head_dim > kMaxRefHeadDim)
    throw std::invalid_argument("attention_reference_rows: head_dim " + std::to_string(p.head_dim) + " > " +
                                std::to_string(kMaxRefHeadDim));
  if (n_rows == 0) return;
  if (n_rows > 0x7fffffffu) throw std::invalid_argument("attention_reference_rows: too many rows");
  const RefArgs a{p.heads, p.group(), p.seq_q, p.seq_k, p.head_dim, static_cast<double>(p.scale), p.causal};
  auto run = [&](auto tag) {
    using T = decltype(tag);
    reference_rows_kernel<T><<<static_cast<unsigned>(n_rows), kRefThreads, 0, stream>>>(
        a, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), rows, out, lse);
    GPUCHECK_CUDA_LAUNCH("reference_rows_kernel");
  };
  if (p.dtype == DType::fp16)
    run(__half{});
  else
    run(__nv_bfloat16{});
}

std::vector<AttentionRow> all_attention_rows(const AttentionProblem& p) {
  validate_attention(p);
  std::vector<AttentionRow> rows;
  rows.reserve(p.rows());
  for (int b = 0; b < p.batch; ++b)
    for (int h = 0; h < p.heads; ++h)
      for (int i = 0; i < p.seq_q; ++i) rows.push_back({b, h, i});
  return rows;
}

std::vector<AttentionRow> sample_attention_rows(const AttentionProblem& p, std::size_t n, std::uint64_t seed) {
  validate_attention(p);
  // The corners first: the first and last query rows of the first and last (batch, head),
  // where causal masking and tile tails differ most.
  std::vector<AttentionRow> rows;
  for (int b : {0, p.batch - 1})
    for (int h : {0, p.heads - 1})
      for (int i : {0, p.seq_q - 1}) {
        const AttentionRow r{b, h, i};
        const bool seen = std::any_of(rows.begin(), rows.end(), [&](const AttentionRow& x) {
          return x.batch == r.batch && x.head == r.head && x.query == r.query;
        });
        if (!seen && rows.size() < n) rows.push_back(r);
      }
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> db(0, p.batch - 1), dh(0, p.heads - 1), dq(0, p.seq_q - 1);
  while (rows.size() < n) rows.push_back({db(rng), dh(rng), dq(rng)});
  return rows;
}

AttentionCheck check_attention_rows(const AttentionProblem& p, const void* q, const void* k, const void* v,
                                    const void* o, const std::vector<AttentionRow>& rows, cudaStream_t stream) {
  validate_attention(p);
  validate_rows(p, rows);
  AttentionCheck c;
  if (rows.empty()) return c;
  const std::size_t d = static_cast<std::size_t>(p.head_dim);
  DevMem d_rows(rows.size() * sizeof(AttentionRow));
  DevMem d_ref(rows.size() * d * sizeof(float));
  GPUCHECK_CUDA(cudaMemcpyAsync(d_rows.p, rows.data(), rows.size() * sizeof(AttentionRow), cudaMemcpyHostToDevice,
                                stream));
  attention_reference_rows(p, q, k, v, static_cast<const AttentionRow*>(d_rows.p), rows.size(),
                           static_cast<float*>(d_ref.p), nullptr, stream);
  std::vector<float> ref(rows.size() * d);
  GPUCHECK_CUDA(cudaMemcpyAsync(ref.data(), d_ref.p, ref.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
  std::vector<std::size_t> idx;
  idx.reserve(ref.size());
  for (const AttentionRow& r : rows) {
    const std::size_t base = ((static_cast<std::size_t>(r.batch) * p.heads + r.head) * p.seq_q + r.query) * d;
    for (std::size_t i = 0; i < d; ++i) idx.push_back(base + i);
  }
  const std::vector<double> got = gather_to_host_double(o, idx, p.dtype, stream);  // synchronises
  double sse = 0.0, ssr = 0.0;
  c.elements = got.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) {
      ++c.nonfinite;
      continue;
    }
    const double e = std::fabs(got[i] - static_cast<double>(ref[i]));
    c.max_abs_err = std::max(c.max_abs_err, e);
    sse += e * e;
    ssr += static_cast<double>(ref[i]) * ref[i];
  }
  c.rel_l2 = c.nonfinite > 0 ? INFINITY : (ssr > 0 ? std::sqrt(sse / ssr) : (sse > 0 ? INFINITY : 0.0));
  return c;
}

std::uint64_t count_nonfinite(const void* x, std::size_t n, DType t, cudaStream_t stream) {
  DevMem count(sizeof(unsigned long long));
  GPUCHECK_CUDA(cudaMemsetAsync(count.p, 0, sizeof(unsigned long long), stream));
  if (n > 0) {
    const std::size_t blocks = std::min<std::size_t>((n + 255) / 256, 4096);
    detail::dispatch_float(t, [&](auto tag) {
      using T = decltype(tag);
      nonfinite_kernel<T><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
          static_cast<const T*>(x), n, static_cast<unsigned long long*>(count.p));
      GPUCHECK_CUDA_LAUNCH("nonfinite_kernel");
    });
  }
  unsigned long long host = 0;
  GPUCHECK_CUDA(cudaMemcpyAsync(&host, count.p, sizeof host, cudaMemcpyDeviceToHost, stream));
  GPUCHECK_CUDA(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace gpucheck::kernels
