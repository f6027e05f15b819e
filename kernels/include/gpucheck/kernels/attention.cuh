// Scaled-dot-product attention forward, the kernels behind bench_attention: a fused
// FlashAttention-style kernel (mma.sync for sm_80+, and a wgmma one for sm_90a), the
// row softmax of the naive path (GEMM -> softmax -> GEMM), and a float64-accumulating
// reference that recomputes chosen output rows so big shapes are verified on samples.
//
// Layout: BHSD, contiguous. Q and O are [batch, heads, seq_q, head_dim]; K and V are
// [batch, kv_heads, seq_k, head_dim]; elements fp16 or bf16; all arithmetic accumulates in fp32.
// Grouped-query attention: kv_heads divides heads and query head h reads K/V head
// h / (heads / kv_heads) (Llama's layout); kv_heads == heads is ordinary multi-head attention.
// Causal: query i sees keys j <= i + (seq_k - seq_q), i.e. the mask is aligned to the
// bottom-right corner of the score matrix (FlashAttention >= 2.1); for seq_q == seq_k that
// is j <= i. Causal needs seq_q <= seq_k, so that every query row sees at least key 0.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpucheck/core/dtype.hpp"

namespace gpucheck::kernels {

struct AttentionProblem {
  int batch = 1;
  int heads = 1;
  int seq_q = 1;
  int seq_k = 1;
  int head_dim = 64;
  DType dtype = DType::fp16;  // of Q, K, V and O
  float scale = 0.125f;       // usually 1/sqrt(head_dim); must be finite and > 0
  bool causal = false;
  int kv_heads = 0;  // key/value heads; 0 means heads; must divide heads (last: positional initialisers stay valid)

  std::size_t q_elems() const { return rows() * static_cast<std::size_t>(head_dim); }
  int kv() const { return kv_heads > 0 ? kv_heads : heads; }
  int group() const { return heads / kv(); }  // query heads per K/V head
  std::size_t kv_elems() const {
    return static_cast<std::size_t>(batch) * kv() * static_cast<std::size_t>(seq_k) * head_dim;
  }
  // Query rows over all batches and heads (rows of O).
  std::size_t rows() const { return static_cast<std::size_t>(batch) * heads * static_cast<std::size_t>(seq_q); }
};

// Throws std::invalid_argument naming the problem: non-positive extents, kv_heads negative or
// not dividing heads, dtype other than fp16/bf16, scale not finite and > 0, causal with
// seq_q > seq_k, or tensors too large for 32-bit row counts (seq > 2^30). The fused kernels
// take head dims 64 and 128 (mma_sync, hopper) and 256 (hopper only); the reference and the
// softmax take any head_dim in [1, 1024].
void validate_attention(const AttentionProblem& p);

// The fused kernels. mma_sync: FlashAttention-2 style, sm_80 and later. hopper: FlashAttention-3
// style (TMA producer, wgmma consumers overlapping softmax with P.V, ping-pong between
// them), sm_90a. hopper_serial: the same kernel without the two overlaps (each consumer
// waits for its GEMMs), kept to measure what the schedule buys. `automatic` picks `hopper`
// on a cc 9.0 device whose build carries sm_90a code (v4, measured on the H200 2026-12-01:
// the overlapped schedule ahead of the serial one at every head dim, length and mask;
// docs/ATTENTION.md), elsewhere `mma_sync`. The hopper kernel chooses its tile configuration
// per head dim and mask (kernels/src/hopper/dispatch.cuh).
enum class AttentionKernel { automatic, mma_sync, hopper, hopper_serial };
const char* to_string(AttentionKernel k);
// Whether `k` can run on `device` (the current device) with this build (automatic and
// mma_sync: cc >= 8.0; hopper, hopper_serial: cc 9.0 and the library built with sm_90a).
bool attention_kernel_available(AttentionKernel k, int device);
// What `automatic` resolves to for problem `p` on `device` (never `automatic`); any other
// kernel is returned as it is.
AttentionKernel resolve_attention_kernel(AttentionKernel k, int device, const AttentionProblem& p);

// O = softmax(scale * Q K^T [+ causal mask]) V. q, k, v, o: device pointers, 16-byte aligned.
// lse: optional device array of batch*heads*seq_q floats receiving each row's natural-log
// sum of exp(scale * q.k) over the visible keys (nullptr: not written). Asynchronous on
// `stream`. Throws std::invalid_argument for an unsupported problem or kernel (head_dim
// not 64/128/256, 256 without the hopper kernel, a hopper request on another device),
// GpuError when a launch fails.
void flash_attention_fwd(const AttentionProblem& p, const void* q, const void* k, const void* v, void* o,
                         float* lse, cudaStream_t stream, AttentionKernel kernel = AttentionKernel::automatic);

// ---------------------------------------------------------------------------------------
// Naive path: P = softmax(scale * S [+ causal mask]) row by row.
// S is [matrices, seq_q, seq_k] (matrices = batch*heads), as a strided-batched GEMM writes
// Q K^T, in fp32 or in the input dtype (fp16/bf16); P is [matrices, seq_q, seq_k] in fp16 or
// bf16 for the P.V GEMM. The mask is the same bottom-right causal mask as above; masked
// entries of P are exactly 0 and are not read from S. Max subtraction, fp32 arithmetic.
// fp32 S is the accurate choice: a 16-bit S rounds the logits themselves (bf16 keeps 8
// bits: a logit of 40 is off by up to 0.125, i.e. 13% in its exp), see docs/ATTENTION.md.
struct SoftmaxProblem {
  long long matrices = 1;
  int seq_q = 1;
  int seq_k = 1;
  DType s_dtype = DType::fp32;  // fp32, fp16 or bf16
  DType p_dtype = DType::fp16;  // fp16 or bf16
  float scale = 1.0f;           // finite, > 0
  bool causal = false;          // needs seq_q <= seq_k
};
void validate_softmax(const SoftmaxProblem& p);
// s, p: device pointers (need not be aligned; 16-byte aligned rows of a multiple of 16
// bytes take the vector path). s and p must not overlap. Asynchronous on `stream`.
void softmax_rows(const SoftmaxProblem& p, const void* s, void* out, cudaStream_t stream);
// Bytes the softmax must move through device memory: every visible S element read once,
// every P element written once (masked S entries are never read). The kernel reads at most
// one extra 16-byte vector per causal row beyond this.
std::size_t softmax_traffic_bytes(const SoftmaxProblem& p);

// ---------------------------------------------------------------------------------------
// Verification.
struct AttentionRow {
  int batch = 0;
  int head = 0;
  int query = 0;
};
// Reference output rows: out[i * head_dim + d] for rows[i], computed from the stored
// (rounded) inputs with float64 accumulation and exp, stored as fp32; lse[i] likewise when
// lse != nullptr. rows, out, lse: device pointers. Any head_dim in [1, 1024]. Asynchronous.
void attention_reference_rows(const AttentionProblem& p, const void* q, const void* k, const void* v,
                              const AttentionRow* rows, std::size_t n_rows, float* out, float* lse,
                              cudaStream_t stream);

// Every query row of the problem, in order (for small shapes: full checks).
std::vector<AttentionRow> all_attention_rows(const AttentionProblem& p);
// n rows drawn from the problem (the first and last query of each batch/head corner
// included, then seeded random picks), for sampled checks of big shapes.
std::vector<AttentionRow> sample_attention_rows(const AttentionProblem& p, std::size_t n, std::uint64_t seed);

struct AttentionCheck {
  std::size_t elements = 0;   // compared elements (rows * head_dim)
  std::uint64_t nonfinite = 0;  // of them, NaN or Inf in O
  double max_abs_err = 0;
  double rel_l2 = 0;          // ||O - ref|| / ||ref|| over the compared rows (Inf if any NaN)
};
// Compares O (dtype p.dtype, BHSD) on `rows` against attention_reference_rows. Synchronous.
AttentionCheck check_attention_rows(const AttentionProblem& p, const void* q, const void* k, const void* v,
                                    const void* o, const std::vector<AttentionRow>& rows, cudaStream_t stream);

// Number of NaN/Inf elements among n elements of floating dtype t (synchronous): after
// poison(), a non-zero count means an output element was not written.
std::uint64_t count_nonfinite(const void* x, std::size_t n, DType t, cudaStream_t stream);

}  // namespace gpucheck::kernels
