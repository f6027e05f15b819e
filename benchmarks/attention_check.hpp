// The inputs every attention kernel is timed on, and the check it passes first, shared by
// bench_attention and attention_energy: Q and K uniform in [-4, 4] (large logits: q.k scaled
// reaches ~20, where an unstable fp16 softmax overflows), V in [-1, 1]; the output, poisoned
// before the kernel ran, must hold no NaN/Inf (every element written), and 256 sampled rows
// must match the float64-accumulating reference to a relative L2 error under 1e-2.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpucheck/kernels/attention.cuh"

namespace gpucheck::attention_check {

inline constexpr float kLogitRange = 4.0f;  // Q and K uniform in [-4, 4]; V in [-1, 1]
inline constexpr std::size_t kCheckedRows = 256;
inline constexpr double kMaxRelL2 = 1e-2;

// Q from `seed`, K from seed + 1, V from seed + 2, on `stream`.
void fill_inputs(const kernels::AttentionProblem& p, void* q, void* k, void* v, std::uint64_t seed,
                 cudaStream_t stream);

// O after a run whose output was poisoned first (the caller synchronized): "" when it passes,
// else why not (the rows sampled with `row_seed`). Synchronous on `stream`.
std::string output_error(const kernels::AttentionProblem& p, const void* q, const void* k, const void* v,
                         const void* o, std::uint64_t row_seed, cudaStream_t stream);

}  // namespace gpucheck::attention_check
