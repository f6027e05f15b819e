// The Hopper attention kernel's producer: one thread of warpgroup 0 issues the TMA copies of
// Q and of the K/V tiles of the block's work items into the ring (hopper/config.cuh, Ring).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "config.cuh"
#include "schedule.cuh"
#include "sync.cuh"

namespace gpucheck::kernels::detail {
namespace {

// Every barrier of the ring, before any thread of the block uses one (tid 0). The tensor maps
// are kernel parameters, not anything the kernel before this one writes: fetched into the
// descriptor cache now, while that kernel may still run.
template <int D, class C>
__device__ __forceinline__ void init_block(const Ring<D, C>& ring, const CUtensorMap* tm_q, const CUtensorMap* tm_k,
                                           const CUtensorMap* tm_v) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(tm_q)) : "memory");
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(tm_k)) : "memory");
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(tm_v)) : "memory");
  for (int s = 0; s < C::kStages; ++s) {
    mbar_init(ring.k_full(s), 1);
    mbar_init(ring.v_full(s), 1);
    mbar_init(ring.k_empty(s), C::kConsumers * 4);  // one arrival per consumer warp
    mbar_init(ring.v_empty(s), C::kConsumers * 4);
  }
  for (int b = 0; b < C::kQBufs; ++b) {
    mbar_init(ring.q_full(b), 1);
    mbar_init(ring.q_empty(b), C::kConsumers * 4);
  }
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// The producer's thread: for each work item, its Q into the next Q buffer, then its K/V tiles
// into the ring, each once the consumers gave the slot back. The K/V ring and its phases run on
// across work tiles, so the next tile's Q and first K/V tiles load while the consumers finish
// this one. Its waits trap rather than hang: it waits at the end until the consumers have
// released the last stages, so a hang anywhere in the block ends here.
template <int D, class C, class Sched, bool kDynamic>
__device__ __forceinline__ void produce(const Ring<D, C>& ring, const Sched& sched, const CUtensorMap* tm_q,
                                        const CUtensorMap* tm_k, const CUtensorMap* tm_v) {
  using L = Smem<D, C>;
  using R = Ring<D, C>;
  constexpr int kBM = C::kBM, kBN = C::kBN, kStages = C::kStages, kQBufs = C::kQBufs;
  constexpr int kDB = D / 64;  // 64-element column blocks
  const HopperParams& p = sched.p;
  int it = 0;  // K/V tiles loaded so far: K/V tile `it` of the block (stage(), phase())
  int qi = 0;  // work tiles started
  int w_dyn = Sched::first_dynamic();  // the dynamic order: the next work tile
  auto next_item = [&](int k, Work& r) {
    if constexpr (!kDynamic) return sched.item(k, r);
    if (w_dyn >= p.n_work) return false;
    r = sched.work(w_dyn);
    return true;
  };
  for (Work wk; next_item(qi, wk); ++qi) {
    const int qb = qi % kQBufs;
    mbar_wait_or_trap(ring.q_empty(qb), R::q_phase(qi) ^ 1u);
    if constexpr (kDynamic) st_shared_s32(ring.tile_slot(qb), w_dyn);
    mbar_expect_tx(ring.q_full(qb), L::kQBytes);
    for (int db = 0; db < kDB; ++db)
      tma_load_3d(ring.q_buf(qb) + db * kBM * 128, tm_q, ring.q_full(qb), db * 64, wk.m0, wk.bh);
    // The dynamic order: the next tile is asked for as the last K/V tile of this one is about
    // to load, when the consumers are a ring's depth from this tile's end, so tiles go to blocks
    // in the order the blocks come to need one (asked with the Q load, every block took its
    // second tile at the start). The wait for the stage below hides the atomic's trip.
    // Every work tile has a K/V tile (causal needs seq_q <= seq_k: each row sees key 0).
    for (int j = 0; j < wk.n_tiles; ++j, ++it) {
      if constexpr (kDynamic) {
        if (j == wk.n_tiles - 1) w_dyn = sched.take_next();
      }
      const int s = R::stage(it);
      const std::uint32_t ph = R::phase(it);
      mbar_wait_or_trap(ring.k_empty(s), ph ^ 1u);
      mbar_expect_tx(ring.k_full(s), L::kKVBytes);
      for (int db = 0; db < kDB; ++db)
        tma_load_3d(ring.sK + s * L::kKVBytes + db * kBN * 128, tm_k, ring.k_full(s), db * 64, wk.key0 + j * kBN, wk.bh);
      mbar_wait_or_trap(ring.v_empty(s), ph ^ 1u);
      mbar_expect_tx(ring.v_full(s), L::kKVBytes);
      for (int db = 0; db < kDB; ++db)
        tma_load_3d(ring.sV + s * L::kKVBytes + db * kBN * 128, tm_v, ring.v_full(s), db * 64, wk.key0 + j * kBN, wk.bh);
    }
  }
  if constexpr (kDynamic) {  // past the end: the next Q buffer's slot says so, without a load
    const int qb = qi % kQBufs;
    mbar_wait_or_trap(ring.q_empty(qb), R::q_phase(qi) ^ 1u);
    st_shared_s32(ring.tile_slot(qb), -1);
    mbar_arrive(ring.q_full(qb));
  }
  // Tail: the consumers release the last K/V tiles and Q buffers only at their end.
  for (int i = max(0, it - kStages); i < it; ++i) {
    const std::uint32_t ph = R::phase(i);
    mbar_wait_or_trap(ring.k_empty(R::stage(i)), ph);
    mbar_wait_or_trap(ring.v_empty(R::stage(i)), ph);
  }
  for (int i = max(0, qi - kQBufs); i < qi; ++i) mbar_wait_or_trap(ring.q_empty(i % kQBufs), R::q_phase(i));
}

}  // namespace
}  // namespace gpucheck::kernels::detail
