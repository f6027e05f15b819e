// cuDNN's fused scaled-dot-product attention (forward, inference) driven through the graph
// (backend) API: the op graph cuDNN's flash-attention engines recognise (Q·K^T, scale,
// optional causal mask, softmax, ·V), the first execution plan the heuristics offer that
// builds and fits the workspace, and its execution. bench_attention times it against the
// naive GEMM-softmax-GEMM path and our own fused kernel; its figure is what PyTorch's cuDNN
// attention backend would get from the same engine.
#pragma once
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "gpucheck/check_cuda.hpp"
#include "gpucheck/kernels/attention.cuh"

namespace gpucheck::attention_cudnn {

// A configuration this cuDNN or this GPU cannot run (old cuDNN, compute capability below
// 8.0, head dim or data type outside the fused engine's range, no engine plan finalizes)
// throws gpucheck::Unsupported (check_cuda.hpp): the benchmark reports the case as SKIPPED
// with what() as the reason; it is not an error. An error cuDNN returns once a plan is
// built (execution) stays a GpuError.
using gpucheck::Unsupported;

// One attention problem. Q, O: [batch, heads, seq_q, head_dim]; K, V: [batch, kv_heads, seq_kv,
// head_dim] (grouped-query attention when kv_heads < heads: query head h reads K/V head
// h / (heads / kv_heads), as cuDNN's SDPA broadcasts them); all four BHSD and contiguous
// (strides {h*s*d, s*d, d, 1}), device pointers 16-byte aligned (cudaMalloc gives 256).
struct Spec {
  std::int64_t batch = 1, heads = 1, seq_q = 0, seq_kv = 0, head_dim = 0;
  std::int64_t kv_heads = 0;               // 0: heads; else must divide heads
  cudnnDataType_t data = CUDNN_DATA_HALF;  // CUDNN_DATA_HALF or CUDNN_DATA_BFLOAT16
  // Bottom-right aligned, as kernels/attention.cuh: query i attends to keys 0..i + seq_kv - seq_q
  // (top-left, keys 0..i, where seq_q == seq_kv); needs seq_q <= seq_kv.
  bool causal = false;
  float scale = 1.f;                       // multiplies Q·K^T before the softmax (1/sqrt(d) usually)
  std::int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
};

// The spec of one of our problems (kernels/attention.cuh): the same layout, grouped-query
// heads, bottom-right causal mask and scale. Throws gpucheck::Unsupported for a dtype cuDNN's
// SDPA has no type for.
Spec spec_for(const kernels::AttentionProblem& p);

// The lowest cuDNN this file builds graphs for (cudnnGetVersion() encoding).
inline constexpr std::size_t kMinCudnnVersion = 90000;

// Reason the spec cannot run on this cuDNN (version as cudnnGetVersion() gives it) and this
// compute capability (major, minor), or "" when it may: the checks cudnn-frontend makes
// before it builds the graph, so that a skip names the rule rather than a bare
// CUDNN_STATUS_NOT_SUPPORTED. Pure: testable without a GPU.
std::string unsupported_reason(const Spec& s, std::size_t cudnn_version, int cc_major, int cc_minor);

// One fused SDPA: op graph, engine choice and finalized plan, built once.
class Sdpa {
 public:
  // Throws Unsupported (see above), std::invalid_argument on a malformed spec (a dimension
  // < 1, a scale not finite), GpuError on a failing CUDA call. Plan finalization compiles
  // kernels at run time (NVRTC): this can take a second or more.
  Sdpa(cudnnHandle_t h, const Spec& spec, std::size_t max_workspace);
  ~Sdpa();
  Sdpa(Sdpa&&) noexcept;
  Sdpa& operator=(Sdpa&&) noexcept;
  Sdpa(const Sdpa&) = delete;
  Sdpa& operator=(const Sdpa&) = delete;

  // Bytes of device workspace execute() needs (the plan's own, plus the softmax statistics
  // when only the graph form that writes them finalized); 0 is possible. The workspace must
  // be 256-byte aligned (cudaMalloc's).
  std::size_t workspace_bytes() const;
  // For the benchmark label: "engine=<global index> knobs=<type>:<value>,...
  // notes=<numerical notes> graph=<form>", knob types as cudnnBackendKnobType_t numbers and
  // the graph forms as attention_cudnn.cpp names them (lse_virtual when all goes as planned).
  const std::string& engine_label() const;

  // Enqueues one attention on the handle's stream (cudnnSetStream). The variant pack is
  // rebuilt only when a pointer changes, so a timing loop pays one cudnnBackendExecute.
  void execute(cudnnHandle_t h, const void* q, const void* k, const void* v, void* o, void* workspace);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpucheck::attention_cudnn
