// The Hopper attention kernel's variants for bf16, head dim 128 (hopper/dispatch.cuh): a
// translation unit of their own so that the six compile in parallel.
#include "dispatch.cuh"

namespace gpucheck::kernels::detail {
template void launch_flash_hopper_variant<__nv_bfloat16, 128>(const AttentionProblem&, const FlashParams&, bool, cudaStream_t);
}  // namespace gpucheck::kernels::detail
