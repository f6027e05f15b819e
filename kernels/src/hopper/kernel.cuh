// FlashAttention-3 style forward kernel for Hopper (sm_90a only: wgmma, setmaxnreg, TMA): the
// __global__ that splits a block into its producer and consumers. docs/ATTENTION.md has the design.
//
// A block is one producer warpgroup and 2 or 3 consumer warpgroups of 64 query rows each (a
// work tile: 128 or 192 rows of one (batch, K/V head)). The producer's one thread issues TMA
// copies of Q (one or two buffers) and of K/V tiles into a ring of shared buffers, each
// guarded by a full/empty mbarrier pair; its registers are given back with setmaxnreg
// (hopper/producer.cuh). The consumers (hopper/consumer.cuh) issue S of one K/V tile and P V
// of the one before together, and named barriers pass the right to issue round the consumers
// (ping-pong). Persistent launches walk several work tiles per block (hopper/schedule.cuh),
// the last P V of one issued with the first S of the next (cross-tile); where the tiles do not
// divide evenly among the blocks, the last round's are cut among all of them by K/V steps
// (stream-K, HopperParams). Causal: tiles right of the diagonal are never loaded; only diagonal
// and tail tiles are masked; the heaviest work tiles start first.
#pragma once

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "the hopper attention kernel must be compiled for sm_90a only (wgmma, setmaxnreg)"
#endif

#include <cuda.h>

#include "config.cuh"
#include "consumer.cuh"
#include "consumer_loops.cuh"
#include "params.cuh"
#include "producer.cuh"
#include "schedule.cuh"
#include "sync.cuh"

namespace gpucheck::kernels::detail {
namespace {

// kOverlap: the FlashAttention-3 schedule (intra-warpgroup overlap of softmax and P V,
// ping-pong between the consumers); false: each warpgroup runs its steps serially.
// kStreamK, kDynamic: the persistent launch's orders of hopper/schedule.cuh.
template <typename T, int D, bool CAUSAL, bool kOverlap, class C, bool kStreamK = false, bool kDynamic = false>
__global__ void __launch_bounds__(C::kThreads, 1)
    flash_fwd_hopper_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                            const __grid_constant__ CUtensorMap tm_v, HopperParams p) {
  static_assert(!kStreamK || (kOverlap && C::kCrossTile && !CAUSAL), "stream-K (HopperParams): unmasked, cross-tile");
  static_assert(!kDynamic || (kOverlap && C::kCrossTile && CAUSAL), "the dynamic order (HopperParams): causal, cross-tile");
  using Sched = Schedule<CAUSAL, C::kBM, C::kBN, kStreamK, kDynamic>;
  extern __shared__ unsigned char smem_raw[];
  const Ring<D, C> ring(smem_raw);
  const Sched sched(p);
  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  if (tid == 0) init_block(ring, &tm_q, &tm_k, &tm_v);
  __syncthreads();  // the last block-wide barrier: the producer's idle warps leave below
  // Programmatic dependent launch (hopper/launch.cuh): this block may have started while the
  // kernel before it in the stream still ran its last blocks, so its set-up above overlapped
  // their end. Chained (p.wait_prior), it waits here for that kernel to have finished before
  // it touches memory; the second part of a split waits at its exit instead (griddep_wait()
  // below), so that what follows in the stream sees both parts done. Then the kernel launched
  // after this one may take SMs as this one's blocks leave (no-ops without programmatic launches).
  if (p.wait_prior) griddep_wait();
  griddep_launch_dependents();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(C::kProducerRegs));
    if (tid == 0) produce<D, C, Sched, kDynamic>(ring, sched, &tm_q, &tm_k, &tm_v);
    griddep_wait();
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(C::kConsumerRegs));
  Consumer<T, D, CAUSAL, C, kStreamK, kDynamic> c(ring, sched, tid, wg);
  if constexpr (kOverlap && C::kCrossTile && !kDynamic) {
    if (c.idle()) {
      idle_cross_tile_loop(c);
      griddep_wait();
      return;
    }
  }
  if constexpr (kOverlap && C::kCrossTile)
    cross_tile_loop(c);
  else
    per_tile_loop<kOverlap>(c);
  griddep_wait();
}

}  // namespace
}  // namespace gpucheck::kernels::detail
