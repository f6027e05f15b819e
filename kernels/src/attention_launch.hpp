// Launchers of the fused attention kernels, one per translation unit, called by the host
// API (attention_api.cu) after it has validated the problem.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "attention_common.cuh"
#include "gpucheck/kernels/attention.cuh"

namespace gpucheck::kernels::detail {

// mma.sync (sm_80+) FlashAttention-2 style kernel; head_dim 64 or 128.
void launch_flash_mma(const AttentionProblem& p, const FlashParams& fp, cudaStream_t stream);

// wgmma (sm_90a) kernel; defined only when the build carries sm_90a code
// (GPUCHECK_ATTENTION_SM90A), head_dim 64, 128 or 256; grouped-query heads packed per K/V head. overlap: the FlashAttention-3 schedule
// (AttentionKernel::hopper); false: the serial one (AttentionKernel::hopper_serial).
void launch_flash_hopper(const AttentionProblem& p, const FlashParams& fp, bool overlap, cudaStream_t stream);
// Whether the hopper kernel has machine code loadable on `device` (cc 9.0 and sm_90a built).
bool hopper_kernel_loadable(int device);
// Its instantiations, one translation unit per dtype (__half, __nv_bfloat16) and head dim
// (64, 128, 256): hopper/instance_<dtype>_d<D>.cu. loadable: fp16 d128 only.
template <typename T, int D>
void launch_flash_hopper_variant(const AttentionProblem& p, const FlashParams& fp, bool overlap, cudaStream_t stream);
template <typename T, int D>
bool flash_hopper_variant_loadable();
// Stream-K's workspace for one launch of the hopper kernel (hopper/launch.cuh): device
// memory from the library's stream-ordered pool of the current device, given back on the same
// stream when this object goes, so launches on other streams never share it. acquire() is false
// (and the launch runs without stream-K) while the stream is being captured or when the pool
// has no memory to give.
struct HopperWorkspace {
  void* ptr = nullptr;
  cudaStream_t stream = nullptr;
  bool acquire(std::size_t bytes, cudaStream_t s);
  HopperWorkspace() = default;
  HopperWorkspace(const HopperWorkspace&) = delete;
  HopperWorkspace& operator=(const HopperWorkspace&) = delete;
  ~HopperWorkspace();
};
// A value no earlier launch of this process used (stream-K's flags; HopperParams::epoch).
unsigned long long next_hopper_epoch();

}  // namespace gpucheck::kernels::detail
