// The Hopper attention kernel for bf16, head dim 256 (attention_hopper_impl.cuh): its own
// translation unit so that the variants compile in parallel.
#include "attention_hopper_impl.cuh"

namespace gpucheck::kernels::detail {
template void launch_flash_hopper_variant<__nv_bfloat16, 256>(const AttentionProblem&, const FlashParams&, bool, cudaStream_t);
}  // namespace gpucheck::kernels::detail
