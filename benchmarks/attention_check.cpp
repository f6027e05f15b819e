#include "attention_check.hpp"

#include "gpucheck/kernels/fill.cuh"

namespace gpucheck::attention_check {

void fill_inputs(const kernels::AttentionProblem& p, void* q, void* k, void* v, std::uint64_t seed,
                 cudaStream_t stream) {
  kernels::fill_uniform(q, p.q_elems(), p.dtype, seed, -kLogitRange, kLogitRange, stream);
  kernels::fill_uniform(k, p.kv_elems(), p.dtype, seed + 1, -kLogitRange, kLogitRange, stream);
  kernels::fill_uniform(v, p.kv_elems(), p.dtype, seed + 2, -1.f, 1.f, stream);
}

std::string output_error(const kernels::AttentionProblem& p, const void* q, const void* k, const void* v,
                         const void* o, std::uint64_t row_seed, cudaStream_t stream) {
  if (const auto bad = kernels::count_nonfinite(o, p.q_elems(), p.dtype, stream); bad != 0)
    return std::to_string(bad) + " of " + std::to_string(p.q_elems()) +
           " output elements are NaN/Inf (not written, or overflowed)";
  const auto rows = kernels::sample_attention_rows(p, kCheckedRows, row_seed);
  const kernels::AttentionCheck c = kernels::check_attention_rows(p, q, k, v, o, rows, stream);
  if (c.nonfinite != 0 || !(c.rel_l2 < kMaxRelL2))
    return "output differs from the float64 reference on " + std::to_string(rows.size()) + " sampled rows: rel_l2 " +
           std::to_string(c.rel_l2) + " (limit " + std::to_string(kMaxRelL2) + "), max abs err " +
           std::to_string(c.max_abs_err) + ", " + std::to_string(c.nonfinite) + " non-finite";
  return "";
}

}  // namespace gpucheck::attention_check
