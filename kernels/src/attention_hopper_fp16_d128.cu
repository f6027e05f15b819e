// The Hopper attention kernel for fp16, head dim 128 (attention_hopper_impl.cuh): its own
// translation unit so that the variants compile in parallel.
#include "attention_hopper_impl.cuh"

namespace gpucheck::kernels::detail {
template void launch_flash_hopper_variant<__half, 128>(const AttentionProblem&, const FlashParams&, bool, cudaStream_t);
template bool flash_hopper_variant_loadable<__half, 128>();
}  // namespace gpucheck::kernels::detail
