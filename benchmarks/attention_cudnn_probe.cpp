// One-off GPU check of attention_cudnn before bench_attention is wired: for fp16/bf16, causal
// or not, head dim 64/128, it builds the cuDNN SDPA plan, runs it once and compares a few
// output rows with an fp32 reference on the host. Prints the engine label or the skip
// reason per case; exit 1 on a wrong result or an error. Not built by CMake; on the GPU box,
// from the repository root, one line:
//   g++ -std=c++20 -O2 -I/usr/local/cuda/include -Ikernels/include -Ibenchmarks/harness/include
//     benchmarks/attention_cudnn_probe.cpp benchmarks/attention_cudnn.cpp
//     -L/usr/local/cuda/lib64 -lcudnn -lcudart -o /tmp/attn_probe && /tmp/attn_probe
// Delete once bench_attention verifies the cuDNN path against its own reference.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "attention_cudnn.hpp"
#include "gpucheck/harness/check_cudnn.hpp"

namespace {

using gpucheck::attention_cudnn::Sdpa;
using gpucheck::attention_cudnn::Spec;

// Values rounded to the storage type, as stored bits and as floats.
struct Buffer {
  std::vector<unsigned short> bits;
  std::vector<float> values;
};

Buffer random_buffer(std::size_t n, cudnnDataType_t type, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  Buffer b{std::vector<unsigned short>(n), std::vector<float>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    const float x = dist(rng);
    if (type == CUDNN_DATA_HALF) {
      const __half hx = __float2half(x);
      b.bits[i] = __half_as_ushort(hx);
      b.values[i] = __half2float(hx);
    } else {
      const __nv_bfloat16 bx = __float2bfloat16(x);
      b.bits[i] = __bfloat16_as_ushort(bx);
      b.values[i] = __bfloat162float(bx);
    }
  }
  return b;
}

float to_float(unsigned short bits, cudnnDataType_t type) {
  return type == CUDNN_DATA_HALF ? __half2float(__ushort_as_half(bits))
                                 : __bfloat162float(__ushort_as_bfloat16(bits));
}

// Largest |cuDNN - reference| over a few query rows of every (batch, head).
double max_error(const Spec& s, const Buffer& q, const Buffer& k, const Buffer& v,
                 const std::vector<unsigned short>& o) {
  const std::size_t sq = static_cast<std::size_t>(s.seq_q), skv = static_cast<std::size_t>(s.seq_kv),
                    d = static_cast<std::size_t>(s.head_dim);
  double worst = 0;
  for (std::size_t bh = 0; bh < static_cast<std::size_t>(s.batch * s.heads); ++bh) {
    for (std::size_t i : {std::size_t{0}, sq / 2, sq - 1}) {
      const float* qi = &q.values[(bh * sq + i) * d];
      const std::size_t keys = s.causal ? std::min(i + 1, skv) : skv;
      std::vector<double> p(keys);
      double mx = -INFINITY, sum = 0;
      for (std::size_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < d; ++c) dot += double(qi[c]) * k.values[(bh * skv + j) * d + c];
        p[j] = dot * s.scale;
        mx = std::max(mx, p[j]);
      }
      for (double& x : p) sum += (x = std::exp(x - mx));
      for (std::size_t c = 0; c < d; ++c) {
        double ref = 0;
        for (std::size_t j = 0; j < keys; ++j) ref += p[j] / sum * v.values[(bh * skv + j) * d + c];
        worst = std::max(worst, std::abs(ref - to_float(o[(bh * sq + i) * d + c], s.data)));
      }
    }
  }
  return worst;
}

}  // namespace

int main() {
  cudnnHandle_t h{};
  if (cudnnStatus_t st = cudnnCreate(&h); st != CUDNN_STATUS_SUCCESS) {
    std::printf("no cuDNN handle: %s\n", cudnnGetErrorString(st));
    return 2;
  }
  std::printf("cuDNN %zu (built against %d)\n", cudnnGetVersion(), CUDNN_VERSION);
  std::mt19937 rng(7);
  int bad = 0;
  for (cudnnDataType_t type : {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16})
    for (bool causal : {false, true})
      for (std::int64_t d : {64, 128}) {
        Spec s;
        s.batch = 2, s.heads = 3, s.seq_q = 1024, s.seq_kv = 1024, s.head_dim = d;
        s.data = type, s.causal = causal, s.scale = 1.f / std::sqrt(float(d));
        std::printf("%s causal=%d d=%ld: ", type == CUDNN_DATA_HALF ? "fp16" : "bf16", causal, long(d));
        try {
          Sdpa sdpa(h, s, std::size_t{1} << 30);
          const std::size_t n_q = static_cast<std::size_t>(s.batch * s.heads * s.seq_q * d);
          const std::size_t n_kv = static_cast<std::size_t>(s.batch * s.heads * s.seq_kv * d);
          const Buffer q = random_buffer(n_q, type, rng), k = random_buffer(n_kv, type, rng),
                       v = random_buffer(n_kv, type, rng);
          void *dq, *dk, *dv, *dout, *ws = nullptr;
          GPUCHECK_CUDA(cudaMalloc(&dq, n_q * 2));
          GPUCHECK_CUDA(cudaMalloc(&dk, n_kv * 2));
          GPUCHECK_CUDA(cudaMalloc(&dv, n_kv * 2));
          GPUCHECK_CUDA(cudaMalloc(&dout, n_q * 2));
          if (sdpa.workspace_bytes()) GPUCHECK_CUDA(cudaMalloc(&ws, sdpa.workspace_bytes()));
          GPUCHECK_CUDA(cudaMemcpy(dq, q.bits.data(), n_q * 2, cudaMemcpyHostToDevice));
          GPUCHECK_CUDA(cudaMemcpy(dk, k.bits.data(), n_kv * 2, cudaMemcpyHostToDevice));
          GPUCHECK_CUDA(cudaMemcpy(dv, v.bits.data(), n_kv * 2, cudaMemcpyHostToDevice));
          sdpa.execute(h, dq, dk, dv, dout, ws);
          std::vector<unsigned short> o(n_q);
          GPUCHECK_CUDA(cudaMemcpy(o.data(), dout, n_q * 2, cudaMemcpyDeviceToHost));
          const double err = max_error(s, q, k, v, o);
          const double tol = type == CUDNN_DATA_HALF ? 4e-3 : 3e-2;
          std::printf("%s ws=%zu max_err=%.2e %s\n", sdpa.engine_label().c_str(), sdpa.workspace_bytes(), err,
                      err <= tol ? "ok" : "WRONG");
          bad += err > tol;
          for (void* p : {dq, dk, dv, dout, ws}) GPUCHECK_CUDA(cudaFree(p));
        } catch (const gpucheck::attention_cudnn::Unsupported& e) {
          std::printf("SKIPPED: %s\n", e.what());
        } catch (const std::exception& e) {
          std::printf("ERROR: %s\n", e.what());
          ++bad;
        }
      }
  cudnnDestroy(h);
  return bad ? 1 : 0;
}
