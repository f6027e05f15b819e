// The Hopper attention kernel itself, included by the four attention_hopper_<dtype>_d<D>.cu
// files, each instantiating one dtype and head dim (four variants: causal or not, overlapped
// or serial schedule): the 16 variants in one file took 14 s to compile on the GPU machine,
// the gate build's critical path. attention_hopper.cu dispatches.
//
// FlashAttention-3 style forward kernel for Hopper (sm_90a only: wgmma, setmaxnreg, TMA).
//
// A block is one producer warpgroup and 2 or 3 consumer warpgroups of 64 query rows each (a
// work tile: 128 or 192 rows of one (batch, K/V head)). The producer's one thread issues TMA
// copies of Q (one or two buffers) and of K/V tiles into a ring of shared buffers, each
// guarded by a full/empty mbarrier pair; its registers are given back with setmaxnreg. The
// consumers: S = Q K^T with wgmma from shared memory (both K-major, 128-byte swizzle as TMA
// writes it), the online softmax in registers (exp2, scale*log2e folded into one FFMA), and
// O += P V with P straight from the S accumulators as the register A operand (the m64nN
// accumulator layout is the A fragment layout) and V read MN-major (transposed) by wgmma;
// S of one K/V tile and P V of the one before are issued together, and named barriers pass
// the right to issue round the consumers (ping-pong). Persistent launches walk several work
// tiles per block, the last P V of one issued with the first S of the next (cross-tile); where
// the tiles do not divide evenly among the blocks, the last round's are cut among all of them
// by K/V steps (stream-K, HopperParams). Launched as programmatic dependent launches: a
// block's set-up overlaps the end of the kernel before it, and it waits for that kernel before
// it touches memory (launch()).
// Causal: tiles right of the diagonal are never loaded; only diagonal and tail tiles are
// masked; the heaviest work tiles start first. The files that include this one are compiled
// for sm_90a alone (kernels/CMakeLists.txt), so none of these instructions can reach another
// target. The version log with every measurement: docs/ATTENTION.md.
#pragma once

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "attention_hopper.cu must be compiled for sm_90a only (wgmma, setmaxnreg)"
#endif

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "attention_launch.hpp"
#include "attention_stream_k.hpp"
#include "attention_wgmma.cuh"
#include "gpucheck/check_cuda.hpp"

namespace gpucheck::kernels::detail {
namespace {

// A tile configuration: NC consumer warpgroups of 64 query rows each (BM = 64 NC rows per
// work tile), BN keys per K/V tile, a ring of STAGES K/V buffers, QBUF Q buffers (2: the next
// work tile's Q loads while this one runs), LAZY: O and the row sums are rescaled only when
// a row's maximum grows by more than 2^8 (below). EARLY_Q: the consumers give the Q buffer
// back as soon as their last S = Q K^T is done, and store O from registers instead of staging
// it in the Q buffer, so that with one Q buffer the producer loads the next work tile's Q
// under this tile's last P V and epilogue (with two it loads it a tile ahead anyway).
// setmaxnreg budgets: the producer warpgroup keeps 24 registers, the consumers share the rest
// of the 64K (2 consumers: 240 each; 3: 160).
template <int NC_, int BN_, int STAGES_ = 2, int QBUF_ = 2, bool LAZY_ = true, bool EARLY_Q_ = false,
          bool CROSS_ = false>
struct Tile {
  static constexpr bool kLazyRescale = LAZY_;
  static constexpr bool kEarlyQ = EARLY_Q_;
  static constexpr bool kCrossTile = CROSS_;
  static constexpr int kConsumers = NC_;
  static constexpr int kBM = 64 * NC_;
  static constexpr int kBN = BN_;
  static constexpr int kStages = STAGES_;
  static constexpr int kQBufs = QBUF_;
  static constexpr int kThreads = 128 * (1 + NC_);
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = NC_ == 2 ? 240 : 160;
  // (Four consumers would get 112: setmaxnreg.inc can only hand out what the launch allocated,
  // 640 threads x 96 registers, less the producer's 24; 120 deadlocked in the experiment.)
  static_assert(NC_ == 2 || NC_ == 3, "two or three consumer warpgroups");
  static_assert(BN_ % 16 == 0 && BN_ <= 256, "keys per tile: a multiple of 16, at most 256 (a TMA box)");
  static_assert(128 * kProducerRegs + 128 * NC_ * kConsumerRegs <= 65536, "register file");
};

// The configurations each head dim runs are chosen in launch_flash_hopper_variant (below;
// measured: docs/ATTENTION.md, version log v4).

// What the kernel reads besides the tensor maps. Grouped-query heads are packed: the `group`
// query heads of one K/V head are one sequence of rows = group * period rows (their rows are
// contiguous in BHSD), so a block's K/V tiles serve all of them. period = seq_q of the problem.
// A launch covers the packed rows [row_begin, row_end) of every (batch, K/V head): all of them,
// or one part of a split between two tile configurations (launch_split, below).
struct HopperParams {
  void* o;
  float* lse;     // nullable
  int rows;       // group * seq_q: query rows per (batch, K/V head)
  int period;     // seq_q: the causal mask repeats every `period` rows
  int seq_k;
  float scale_log2;
  int row_begin;  // the rows this launch covers
  int row_end;
  int m_blocks;  // work tiles per (batch, K/V head): ceil((row_end - row_begin) / BM)
  int n_work;    // m_blocks * batch * kv_heads
  int heavy_group;  // causal: > 0, the work tiles of each group of this many (batch, K/V head)s
                    // heaviest first (below); 0: launch order
  // Stream-K (the kernel's kStreamK variant, launched where stream_k_blocks() finds a cut that
  // pays: unmasked persistent launches of the cross-tile schedule whose work tiles do not divide
  // evenly among the blocks): after the whole rounds, the K/V steps of the tiles left are cut
  // evenly among the first sk_blocks blocks (attention_stream_k.hpp), so such a tile is split
  // among consecutive blocks. Each
  // later one computes its part first and leaves O, the row maxima and sums unnormalized in its
  // slot of `part` (a lane's registers, [block][warp][D / 2 + 4][32 lanes]), then sets its
  // warp's flag to `epoch`; the first computes the head (from K/V tile 0) last, waits for the
  // flags, adds the partials to its own and stores the tile. epoch: unique per launch, so the
  // workspace needs no clearing. The whole rounds keep the launch order (a cut of all tiles
  // into ranges put every head's K/V in use at once: -24% at s4096 d128, L2).
  float* part;
  unsigned long long* flags;  // [block][warp]
  unsigned long long epoch;
  int sk_blocks;  // the blocks that share the tiles left (stream_k_part()'s P), <= gridDim.x
  // The dynamic order (the kernel's kDynamic variant: causal persistent launches of the
  // cross-tile schedule): block b's first work tile is tile b, each later one the next of the
  // launch order not yet taken, gridDim.x + atomicAdd(tile_ctr, 1) (zero at the launch), as the
  // hardware hands blocks to SMs, but with the next tile's Q and K/V loaded under this one.
  int* tile_ctr;
  // Chained onto the kernel before it in the stream (programmatic dependent launch, launch()):
  // 1, every thread waits for that kernel to have finished (its writes visible) before this
  // one reads an input or writes an output, and only then lets the kernel after it launch; 0,
  // the second part of a split (launch_split), which reads nothing its first part writes and
  // waits for it at its exit instead.
  int wait_prior;
};

// Shared memory, from a 1024-byte aligned base (the 128-byte swizzle repeats every 1024
// bytes and TMA and wgmma both apply it to absolute address bits). Each tile is stored as
// D/64 column blocks of [rows][64 elements], 128-byte rows.
template <int D, class C>
struct Smem {
  static constexpr int kBM = C::kBM, kBN = C::kBN, kStages = C::kStages, kQBufs = C::kQBufs;
  static constexpr int kQBytes = kBM * D * 2;
  static constexpr int kKVBytes = kBN * D * 2;
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kQBufs * kQBytes;
  static constexpr int kV = kK + kStages * kKVBytes;
  static constexpr int kBar = kV + kStages * kKVBytes;
  // k_full[], v_full[], k_empty[], v_empty[], q_full[], q_empty[]
  static constexpr int kBars = 4 * kStages + 2 * kQBufs;
  // The dynamic order (HopperParams::tile_ctr): the work tile of each Q buffer, -1 past the end.
  static constexpr int kTileSlot = kBar + kBars * 8;
  static constexpr int kBytes = kTileSlot + 4 * kQBufs + 1024;  // + alignment slack
  static_assert(kBytes <= 227 * 1024, "shared memory per block");
};

__device__ __forceinline__ void st_shared_s32(std::uint32_t addr, int v) {
  asm volatile("st.shared.s32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ int ld_shared_s32(std::uint32_t addr) {
  int v;
  asm volatile("ld.shared.s32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Waits until the phase of `bar` with this parity has completed (a fresh barrier counts its
// phase "-1", parity 1, as completed). The consumers' waits are bare: their registers are
// all taken (any clock or counter here makes ptxas spill and serialize the wgmma, C7512).
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}
// Spins until done() holds, or traps after ~4 s, which only a protocol bug (or a lost block)
// can take, so the launch fails with an error instead of hanging the process. The clock is
// read only once the first test failed.
template <class Done>
__device__ __forceinline__ void spin_or_trap(Done done) {
  if (done()) return;
  std::uint64_t t0;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t0));
  while (!done()) {
    std::uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now));
    if (now - t0 > 4000000000ull) __trap();
  }
}
// The producer's waits trap rather than hang: the producer waits until the consumers have
// released the last stages, so a hang anywhere in the block ends here.
__device__ __forceinline__ void mbar_wait_or_trap(std::uint32_t bar, std::uint32_t parity) {
  spin_or_trap([&] { return mbar_try_wait(bar, parity); });
}

// Stream-K's hand-over of a partial between blocks (HopperParams): a release store of the
// flag after the data, an acquire load before reading it, at GPU scope.
__device__ __forceinline__ void st_release_gpu(unsigned long long* a, unsigned long long v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;\n" ::"l"(a), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long ld_acquire_gpu(const unsigned long long* a) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(a) : "memory");
  return v;
}
// Waits until *a == v (only a lost block takes long: its part is the first thing it computes).
__device__ __forceinline__ void wait_flag_or_trap(const unsigned long long* a, unsigned long long v) {
  spin_or_trap([&] { return ld_acquire_gpu(a) == v; });
}

__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar, int c0,
                                            int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// wgmma shared-memory descriptor, 128-byte swizzle (bits 0-13 address / 16, 16-29 lbo / 16,
// 32-45 sbo / 16, 62-63 the swizzle mode). K-major: sbo = 1024 (8-row groups), lbo unused
// (16). MN-major: lbo = bytes between 64-element column blocks, sbo = 1024. Built as two
// halves, so that the GEMM loops add each k-step's offset (bytes / 16) to the low word of one
// base instead of masking and shifting every address (ptxas does not fold
// `(base + c) & 0x3FFFF`: 4-5 uniform instructions per wgmma, a fifth of the d64 loop).
// Adding is exact while the address stays below 256 KB (shared memory is 228 KB).
__device__ __forceinline__ std::uint32_t smem_desc_lo(std::uint32_t addr, std::uint32_t lbo) {
  return ((addr & 0x3FFFFu) >> 4) | (((lbo >> 4) & 0x3FFFu) << 16);
}
__device__ __forceinline__ std::uint64_t smem_desc_join(std::uint32_t lo, std::uint32_t sbo) {
  return static_cast<std::uint64_t>(lo) | (static_cast<std::uint64_t>(((sbo >> 4) & 0x3FFFu) | (1u << 30)) << 32);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Pins register values in program order around the asynchronous wgmma (no read of an
// accumulator may move above its wait, no write of an operand below the fence).
template <int N>
__device__ __forceinline__ void pin(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void pin(std::uint32_t (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(r[i][e])::"memory");
}

// kOverlap: the FlashAttention-3 schedule (intra-warpgroup overlap of softmax and P V,
// ping-pong between the consumers); false: each warpgroup runs its steps serially.
// Persistent when launched with fewer blocks than work tiles: each block walks work tiles
// round by round (nth(), below), in launch order or heaviest first (work()). The K/V ring and
// its phases run on across work tiles, so the producer loads the next tile's Q and first K/V
// tiles while the consumers finish this one.
template <typename T, int D, bool CAUSAL, bool kOverlap, class C, bool kStreamK = false, bool kDynamic = false>
__global__ void __launch_bounds__(C::kThreads, 1)
    flash_fwd_hopper_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                            const __grid_constant__ CUtensorMap tm_v, HopperParams p) {
  using L = Smem<D, C>;
  constexpr int kBM = C::kBM, kBN = C::kBN, kStages = C::kStages, kConsumers = C::kConsumers, kQBufs = C::kQBufs;
  constexpr int kDB = D / 64;  // 64-element column blocks
  extern __shared__ unsigned char smem_raw[];
  const std::uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const std::uint32_t sK = base + L::kK;
  const std::uint32_t sV = base + L::kV;
  const std::uint32_t bars = base + L::kBar;
  auto k_full = [&](int s) { return bars + 8u * s; };
  auto v_full = [&](int s) { return bars + 8u * (kStages + s); };
  auto k_empty = [&](int s) { return bars + 8u * (2 * kStages + s); };
  auto v_empty = [&](int s) { return bars + 8u * (3 * kStages + s); };
  auto q_full = [&](int b) { return bars + 8u * (4 * kStages + b); };
  auto q_empty = [&](int b) { return bars + 8u * (4 * kStages + kQBufs + b); };
  auto q_buf = [&](int b) { return base + L::kQ + static_cast<std::uint32_t>(b * L::kQBytes); };
  const int off = p.seq_k - p.period;  // causal: row r sees keys <= r % period + off
  const int n_kv = (p.seq_k + kBN - 1) / kBN;  // K/V tiles of an unmasked work tile
  static_assert(!kStreamK || (kOverlap && C::kCrossTile && !CAUSAL), "stream-K (HopperParams): unmasked, cross-tile");
  static_assert(!kDynamic || (kOverlap && C::kCrossTile && CAUSAL), "the dynamic order (HopperParams): causal, cross-tile");
  // The dynamic order: the work tile whose Q is in buffer b (the producer writes it before the
  // buffer's q_full arrival, whose completion the consumers wait for: release and acquire).
  auto tile_slot = [&](int b) { return base + L::kTileSlot + 4u * static_cast<std::uint32_t>(b); };

  // One work tile: its first query row, (batch, K/V head), rows, K/V tiles, and (causal) the
  // lowest row modulo the period (packed heads: a tile spanning two heads' rows holds a row 0).
  // key0: the first key of its K/V tiles (a stream-K part may start inside the work tile).
  struct Work {
    int m0, bh, q_rows, n_tiles, causal_lo, key0;
  };
  // Work tile w: in launch order, the query tiles of one (batch, K/V head) are neighbours
  // (concurrent tiles share K/V in L2), causal ones heaviest first within the head; heavy
  // first in groups (causal), the last query tile of every head of a group of heavy_group
  // heads first, then the one before, then the next group: the heaviest tiles start first,
  // so the light ones fill the end, while the K/V tiles in use stay those of one group.
  auto work = [&](int w) {
    Work r;
    int mb;
    if (CAUSAL && p.heavy_group > 0) {
      const int bkv = p.n_work / p.m_blocks;
      const int span = p.heavy_group * p.m_blocks;  // work tiles per whole group
      const int g0 = w / span * p.heavy_group;     // the group's first head
      const int gs = min(p.heavy_group, bkv - g0);
      const int in = w - g0 * p.m_blocks;
      mb = p.m_blocks - 1 - in / gs;
      r.bh = g0 + in % gs;
    } else {
      mb = w % p.m_blocks;
      r.bh = w / p.m_blocks;
      if (CAUSAL) mb = p.m_blocks - 1 - mb;
    }
    r.m0 = p.row_begin + mb * kBM;
    r.q_rows = min(kBM, p.row_end - r.m0);
    r.n_tiles = n_kv;
    r.causal_lo = 0;
    r.key0 = 0;
    if (CAUSAL) {
      const int first = r.m0 % p.period, last = (r.m0 + r.q_rows - 1) % p.period;
      const bool wraps = r.m0 / p.period != (r.m0 + r.q_rows - 1) / p.period;
      r.causal_lo = wraps ? 0 : first;
      r.n_tiles = min(r.n_tiles, ((wraps ? p.period - 1 : last) + off) / kBN + 1);
    }
    return r;
  };
  // The k-th work tile of this block, or -1 past the end: round k of gridDim.x tiles, taken in
  // snake order (block b gets position b in even rounds and gridDim.x - 1 - b in odd ones), so
  // with heavy-first tiles every block's sum of work comes out nearly equal.
  auto nth = [&](int k) {
    const int G = static_cast<int>(gridDim.x), b = static_cast<int>(blockIdx.x);
    const long long w = static_cast<long long>(k) * G + ((k & 1) ? G - 1 - b : b);
    return w < p.n_work ? static_cast<int>(w) : -1;
  };
  // The k-th work item of this block into r: a work tile (nth(), work()) or, stream-K past the
  // whole rounds, a part of a tile of the rest (stream_k_part()); false past the end.
  auto item = [&](int k, Work& r) {
    const int rounds = p.n_work / static_cast<int>(gridDim.x);
    if (!kStreamK || k < rounds) {
      const int w = nth(k);
      if (w >= 0) r = work(w);
      return w >= 0;
    }
    const StreamKPart sp =
        stream_k_part(p.n_work, n_kv, static_cast<int>(gridDim.x), p.sk_blocks, static_cast<int>(blockIdx.x), k - rounds);
    if (sp.n == 0) return false;
    r = work(sp.tile);
    r.key0 = sp.j0 * kBN;
    r.n_tiles = sp.n;
    return true;
  };

  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  if (tid == 0) {
    // The tensor maps are kernel parameters, not anything the kernel before this one writes:
    // fetched into the descriptor cache now, while that kernel may still run (below).
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&tm_q)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&tm_k)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&tm_v)) : "memory");
    for (int s = 0; s < kStages; ++s) {
      mbar_init(k_full(s), 1);
      mbar_init(v_full(s), 1);
      mbar_init(k_empty(s), kConsumers * 4);  // one arrival per consumer warp
      mbar_init(v_empty(s), kConsumers * 4);
    }
    for (int b = 0; b < kQBufs; ++b) {
      mbar_init(q_full(b), 1);
      mbar_init(q_empty(b), kConsumers * 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();  // the last block-wide barrier: the producer's idle warps leave below
  // Programmatic dependent launch (launch()): this block may have started while the kernel
  // before it in the stream still ran its last blocks, so its set-up above overlapped their
  // end. Chained (p.wait_prior), it waits here for that kernel to have finished before it
  // touches memory; the second part of a split waits at its exit instead (griddep_exit), so
  // that what follows in the stream sees both parts done. Then the kernel launched after
  // this one may take SMs as this one's blocks leave (no-ops without programmatic launches).
  if (p.wait_prior) asm volatile("griddepcontrol.wait;\n" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  auto griddep_exit = [] { asm volatile("griddepcontrol.wait;\n" ::: "memory"); };

  // K/V tile g of this block (counted over all its work tiles): ring slot and phase, for the
  // producer and the consumers alike.
  auto stage = [](int g) { return g % kStages; };
  auto phase = [](int g) { return static_cast<std::uint32_t>(g / kStages) & 1u; };
  // Work tile i of this block: its Q buffer's phase (the buffer is i % kQBufs).
  auto q_phase = [](int i) { return static_cast<std::uint32_t>(i / kQBufs) & 1u; };

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(C::kProducerRegs));
    if (tid == 0) {
      int it = 0;  // K/V tiles loaded so far: K/V tile `it` of the block (stage(), phase())
      int qi = 0;  // work tiles started
      int w_dyn = static_cast<int>(blockIdx.x);  // the dynamic order: the next work tile
      auto next_item = [&](int k, Work& r) {
        if constexpr (!kDynamic) return item(k, r);
        if (w_dyn >= p.n_work) return false;
        r = work(w_dyn);
        return true;
      };
      for (Work wk; next_item(qi, wk); ++qi) {
        const int qb = qi % kQBufs;
        mbar_wait_or_trap(q_empty(qb), q_phase(qi) ^ 1u);
        if constexpr (kDynamic) st_shared_s32(tile_slot(qb), w_dyn);
        mbar_expect_tx(q_full(qb), L::kQBytes);
        for (int db = 0; db < kDB; ++db)
          tma_load_3d(q_buf(qb) + db * kBM * 128, &tm_q, q_full(qb), db * 64, wk.m0, wk.bh);
        // The dynamic order: the next tile is asked for as the last K/V tile of this one is
        // about to load, when the consumers are a ring's depth from this tile's end, so tiles go
        // to blocks in the order the blocks come to need one (asked with the Q load, every block
        // took its second tile at the start: b1 h16 s2048 causal, 256 tiles on 132 blocks,
        // lost 25% to a block per tile). The wait for the stage below hides the atomic's trip.
        // Every work tile has a K/V tile (causal needs seq_q <= seq_k: each row sees key 0).
        for (int j = 0; j < wk.n_tiles; ++j, ++it) {
          if constexpr (kDynamic) {
            if (j == wk.n_tiles - 1) w_dyn = static_cast<int>(gridDim.x) + atomicAdd(p.tile_ctr, 1);
          }
          const int s = stage(it);
          const std::uint32_t ph = phase(it);
          mbar_wait_or_trap(k_empty(s), ph ^ 1u);
          mbar_expect_tx(k_full(s), L::kKVBytes);
          for (int db = 0; db < kDB; ++db)
            tma_load_3d(sK + s * L::kKVBytes + db * kBN * 128, &tm_k, k_full(s), db * 64, wk.key0 + j * kBN, wk.bh);
          mbar_wait_or_trap(v_empty(s), ph ^ 1u);
          mbar_expect_tx(v_full(s), L::kKVBytes);
          for (int db = 0; db < kDB; ++db)
            tma_load_3d(sV + s * L::kKVBytes + db * kBN * 128, &tm_v, v_full(s), db * 64, wk.key0 + j * kBN, wk.bh);
        }
      }
      if constexpr (kDynamic) {  // past the end: the next Q buffer's slot says so, without a load
        const int qb = qi % kQBufs;
        mbar_wait_or_trap(q_empty(qb), q_phase(qi) ^ 1u);
        st_shared_s32(tile_slot(qb), -1);
        mbar_arrive(q_full(qb));
      }
      // Tail: the consumers release the last K/V tiles and Q buffers only at their end.
      for (int i = max(0, it - kStages); i < it; ++i) {
        const std::uint32_t ph = phase(i);
        mbar_wait_or_trap(k_empty(stage(i)), ph);
        mbar_wait_or_trap(v_empty(stage(i)), ph);
      }
      for (int i = max(0, qi - kQBufs); i < qi; ++i)
        mbar_wait_or_trap(q_empty(i % kQBufs), q_phase(i));
    }
    griddep_exit();
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(C::kConsumerRegs));
  // The consumer index: rows [64 cw, 64 cw + 64) of the tile. Broadcast from lane 0 (as CUTLASS
  // does), so that ptxas knows it is the same in every lane: more of the K/V loop's address
  // arithmetic then stays on the uniform datapath (d64 loop 598 -> 589 instructions, d128 665 ->
  // 652; measured +0.6-2.1% at d64, level at d128: v8).
  const int cw = __shfl_sync(0xffffffffu, wg - 1, 0);
  const int wt = tid % 128;
  const int wq = wt >> 5;  // warp in the warpgroup: 16 rows each
  const int lane = tid & 31;
  const int g = lane >> 2;
  const int t = lane & 3;
  const int row_base = cw * 64 + wq * 16 + g;  // this lane's rows: row_base and row_base + 8
  const float sl2 = p.scale_log2;

  float o[D / 2];
  float sc[kBN / 2];
  std::uint32_t pa[kBN / 16][4];
  float row_max[2], row_sum[2], corr[2];
  auto zero_o = [&] {
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
  };
  auto reset_stats = [&] {  // the row statistics of a new work tile: no key seen yet
    row_max[0] = row_max[1] = -INFINITY;
    row_sum[0] = row_sum[1] = 0.f;
  };
  auto start_tile = [&] {  // O, S and the row statistics of a new work tile
    zero_o();
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) sc[i] = 0.f;
    reset_stats();
  };

  // The steps of one K/V tile. issue_*: wgmma into sc (S) or o (O); the caller fences,
  // commits and waits. softmax(): mask, new running max, P = exp2(...) in sc, corr for O.
  auto issue_s = [&](std::uint32_t sQ, int g) {  // S = Q K[g]^T: m64 nBN, k over the head dim in 32-byte steps
    const int s = stage(g);
    const std::uint32_t q_lo = smem_desc_lo(sQ + cw * 64 * 128, 16);
    const std::uint32_t k_lo = smem_desc_lo(sK + s * L::kKVBytes, 16);
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      const int db = ks / 4;
      const std::uint32_t kin = static_cast<std::uint32_t>(ks % 4) * 32u;
      const std::uint64_t da = smem_desc_join(q_lo + ((db * kBM * 128 + kin) >> 4), 1024);
      const std::uint64_t dk = smem_desc_join(k_lo + ((db * kBN * 128 + kin) >> 4), 1024);
      wgmma_ss<T, kBN>(sc, da, dk, ks > 0 ? 1 : 0);
    }
  };
  auto issue_pv = [&](int g) {  // O += P V[g]: m64 nD, k over the keys in 16-row (2048-byte) steps
    const int s = stage(g);
    const std::uint32_t v_lo = smem_desc_lo(sV + s * L::kKVBytes, kBN * 128);
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) wgmma_rs<T, D>(o, pa[kk], smem_desc_join(v_lo + ((kk * 16 * 128) >> 4), 1024));
  };
  auto softmax = [&](const Work& wk, int j) {  // S of the work item's K/V tile j
    const int key_begin = (kStreamK ? wk.key0 : 0) + j * kBN;
    const int key_end = key_begin + kBN;
    if (key_end > p.seq_k || (CAUSAL && key_end - 1 > wk.causal_lo + off)) {  // tail or diagonal tile
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = wk.m0 + row_base + 8 * h;
        const int limit = CAUSAL ? min(row % p.period + off + 1, p.seq_k) : p.seq_k;
#pragma unroll
        for (int i = 0; i < kBN / 8; ++i)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            if (key_begin + i * 8 + 2 * t + e >= limit) sc[4 * i + 2 * h + e] = -INFINITY;
      }
    }
    // Row maxima (quad-reduced; the sums stay per lane until the end), in log2 units.
    float mx[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float m = -INFINITY;
#pragma unroll
      for (int i = 0; i < kBN / 8; ++i) m = fmaxf(m, fmaxf(sc[4 * i + 2 * h], sc[4 * i + 2 * h + 1]));
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
      mx[h] = m * sl2;
    }
    // Lazy rescale: the running maximum moves only when some row of the warp grows by more
    // than 8 (a factor 2^8), so P = exp2(s - m) <= 256 (no overflow in fp32 sums nor fp16 P)
    // and O is rescaled on few tiles; every sum and O stay relative to the same m, which the
    // epilogue and lse use, so the result is the same softmax.
    bool moved = true;
    if constexpr (C::kLazyRescale)
      moved = __any_sync(0xffffffffu, mx[0] > row_max[0] + 8.f || mx[1] > row_max[1] + 8.f);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (moved) {
        const float m_new = fmaxf(row_max[h], mx[h]);
        corr[h] = m_new == -INFINITY ? 1.f : fast_exp2(row_max[h] - m_new);
        row_max[h] = m_new;
      }
      const float m_use = row_max[h] == -INFINITY ? 0.f : row_max[h];  // no key seen yet: avoid inf - inf
      float sum = 0.f;
#pragma unroll
      for (int i = 0; i < kBN / 8; ++i)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float pv = fast_exp2(fmaf(sc[4 * i + 2 * h + e], sl2, -m_use));
          sc[4 * i + 2 * h + e] = pv;
          sum += pv;
        }
      row_sum[h] = moved ? row_sum[h] * corr[h] + sum : row_sum[h] + sum;
    }
    return moved;
  };
  auto rescale_o = [&] {
#pragma unroll
    for (int i = 0; i < D / 8; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        o[4 * i + 2 * h] *= corr[h];
        o[4 * i + 2 * h + 1] *= corr[h];
      }
  };
  auto make_p = [&] {  // P as the register A operand: k-step kk takes S n-blocks 2kk, 2kk+1
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) {
      pa[kk][0] = pack2<T>(sc[8 * kk + 0], sc[8 * kk + 1]);
      pa[kk][1] = pack2<T>(sc[8 * kk + 2], sc[8 * kk + 3]);
      pa[kk][2] = pack2<T>(sc[8 * kk + 4], sc[8 * kk + 5]);
      pa[kk][3] = pack2<T>(sc[8 * kk + 6], sc[8 * kk + 7]);
    }
  };
  auto release = [&](std::uint32_t bar) {  // this warp is done reading a K or V stage (or Q)
    __syncwarp();
    if (lane == 0) mbar_arrive(bar);
  };

  // Epilogue of a work tile: O /= sum (sum, mx: its row statistics). Staged (two Q buffers):
  // through this warp's own 16 rows of the tile's Q buffer (swizzled like the tile; no other
  // warp reads them) so that global stores are whole 16-byte chunks, then the Q buffer goes
  // back to the producer. Early Q (the buffer already given back): each lane stores its pairs
  // of O straight from registers.
  //
  // Stream-K (HopperParams): a later part of a split work tile leaves its partial for the block
  // with the tile's head and stores nothing; the head, after take_partials() added the later
  // parts' partials to its own (O, sums and maxima rescaled to the larger maximum), stores the
  // tile like a whole one.
  // A slot's registers: o[D / 2], then the row maxima, then the row sums (two rows a lane).
  constexpr int kWarps = kConsumers * 4, kPartRegs = stream_k_part_floats(D), kMaxAt = D / 2, kSumAt = D / 2 + 2;
  auto part_slot = [&](int blk) {
    return p.part + (static_cast<std::size_t>(blk) * kWarps + cw * 4 + wq) * kPartRegs * 32 + lane;
  };
  auto part_flag = [&](int blk) { return p.flags + static_cast<std::size_t>(blk) * kWarps + cw * 4 + wq; };
  // Stream-K, the block's last work item: the head of a split tile (from K/V tile 0, fewer than
  // all) takes the later parts' partials into o, sum and mx. Only ever the block's last item, so
  // called after the loop: inside it, its spin on another block's flag made ptxas give up the
  // uniform datapath for the whole consumer loop (+6% instructions at d128, measured in SASS).
  auto take_partials = [&](const Work& wk, float (&sum_c)[2], float (&mx)[2]) {
    if (!kStreamK || wk.key0 != 0 || wk.n_tiles >= n_kv) return;
    const int tile = wk.bh * p.m_blocks + (wk.m0 - p.row_begin) / kBM;
    const int G = static_cast<int>(gridDim.x);
    for (int c = static_cast<int>(blockIdx.x) + 1; stream_k_in_reach(p.n_work, n_kv, G, p.sk_blocks, c, tile); ++c) {
      if (!stream_k_shares(p.n_work, n_kv, G, p.sk_blocks, c, tile)) continue;  // a block without tail steps
      if (lane == 0) wait_flag_or_trap(part_flag(c), p.epoch);
      __syncwarp();
      const float* src = part_slot(c);
      float a[2], b[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float m2 = __ldcg(src + 32 * (kMaxAt + h)), l2 = __ldcg(src + 32 * (kSumAt + h));
        const float m = fmaxf(mx[h], m2);
        a[h] = m == -INFINITY ? 0.f : fast_exp2(mx[h] - m);
        b[h] = m == -INFINITY ? 0.f : fast_exp2(m2 - m);
        sum_c[h] = sum_c[h] * a[h] + l2 * b[h];
        mx[h] = m;
      }
#pragma unroll
      for (int i = 0; i < D / 2; ++i) o[i] = o[i] * a[(i >> 1) & 1] + __ldcg(src + 32 * i) * b[(i >> 1) & 1];
    }
  };
  auto epilogue = [&](const Work& wk, int qb, const float (&sum_in)[2], const float (&mx_in)[2]) {
    float sum_c[2] = {sum_in[0], sum_in[1]}, mx[2] = {mx_in[0], mx_in[1]};
    if constexpr (kStreamK) {
      if (wk.key0 > 0) {  // tail part: the partial, then the Q buffer back
        float* dst = part_slot(static_cast<int>(blockIdx.x));
#pragma unroll
        for (int i = 0; i < D / 2; ++i) __stcg(dst + 32 * i, o[i]);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          __stcg(dst + 32 * (kMaxAt + h), mx[h]);
          __stcg(dst + 32 * (kSumAt + h), sum_c[h]);
        }
        __threadfence();
        __syncwarp();
        if (lane == 0) st_release_gpu(part_flag(static_cast<int>(blockIdx.x)), p.epoch);
        release(q_empty(qb));
        return;
      }
    }
    const std::uint32_t sQ = q_buf(qb);
    const std::size_t row0 = static_cast<std::size_t>(wk.bh) * p.rows + wk.m0;
    T* gO = static_cast<T*>(p.o) + row0 * D;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float sum = sum_c[h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
      const int r = row_base + 8 * h;
      if constexpr (C::kEarlyQ) {
        if (r < wk.q_rows) {
          std::uint32_t* dst = reinterpret_cast<std::uint32_t*>(gO + static_cast<std::size_t>(r) * D + 2 * t);
#pragma unroll
          for (int i = 0; i < D / 8; ++i) dst[4 * i] = pack2<T>(o[4 * i + 2 * h] * inv, o[4 * i + 2 * h + 1] * inv);
        }
      } else {
#pragma unroll
        for (int i = 0; i < D / 8; ++i) {
          const std::uint32_t addr = sQ + static_cast<std::uint32_t>((i / 8) * kBM * 128 + r * 128 +
                                                                     (((i % 8) ^ (r & 7)) << 4) + t * 4);
          const std::uint32_t val = pack2<T>(o[4 * i + 2 * h] * inv, o[4 * i + 2 * h + 1] * inv);
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(val));
        }
      }
      if (p.lse != nullptr && t == 0 && r < wk.q_rows) p.lse[row0 + r] = (mx[h] + log2f(sum)) * kLn2;
    }
    if constexpr (!C::kEarlyQ) {
      __syncwarp();
      constexpr int kChunks = D / 8;
#pragma unroll
      for (int i2 = 0; i2 < 16 * kChunks / 32; ++i2) {
        const int idx = lane + i2 * 32;
        const int r = cw * 64 + wq * 16 + idx / kChunks;
        const int c = idx % kChunks;
        if (r < wk.q_rows) {
          uint4 val;
          const std::uint32_t addr =
              sQ + static_cast<std::uint32_t>((c / 8) * kBM * 128 + r * 128 + (((c % 8) ^ (r & 7)) << 4));
          asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                       : "=r"(val.x), "=r"(val.y), "=r"(val.z), "=r"(val.w)
                       : "r"(addr));
          *reinterpret_cast<uint4*>(gO + static_cast<std::size_t>(r) * D + c * 8) = val;
        }
      }
      release(q_empty(qb));
    }
  };

  // FlashAttention-3 schedule, the ping-pong between the warpgroups: named barriers pass the
  // right to issue GEMMs round the ring (ping-pong for two), so one warpgroup's softmax hides
  // behind the others' GEMMs. Consumer c syncs on barrier 1 + c (its turn) and arrives on the
  // next one's; the last consumer grants consumer 0 the first turn and skips its arrival after
  // its last phase, so every barrier sees as many arrivals as syncs (all consumers of a block
  // run the same work tiles, hence the same number of phases).
  // (Immediate barrier ids: a register id makes ptxas reserve all 16.)
  auto bar_sync = [](int id) {
    if (id == 1) asm volatile("bar.sync 1, 256;\n" ::: "memory");
    else if (id == 2) asm volatile("bar.sync 2, 256;\n" ::: "memory");
    else asm volatile("bar.sync 3, 256;\n" ::: "memory");
  };
  auto bar_arrive = [](int id) {
    if (id == 1) asm volatile("bar.arrive 1, 256;\n" ::: "memory");
    else if (id == 2) asm volatile("bar.arrive 2, 256;\n" ::: "memory");
    else asm volatile("bar.arrive 3, 256;\n" ::: "memory");
  };
  const int next = cw + 1 == kConsumers ? 0 : cw + 1;
  auto turn_begin = [&] { bar_sync(1 + cw); };
  auto turn_end = [&](bool last) {
    if (!(last && cw == kConsumers - 1)) bar_arrive(1 + next);
  };
  // The first phase of a work tile that follows none: S[g] alone, then its softmax.
  auto first_s = [&](std::uint32_t sQ, const Work& wk, int g) {
    mbar_wait(k_full(stage(g)), phase(g));
    turn_begin();
    pin(sc);
    wgmma_fence();
    issue_s(sQ, g);
    wgmma_commit();
    turn_end(false);
    wgmma_wait<0>();
    pin(sc);
    release(k_empty(stage(g)));
    (void)softmax(wk, 0);  // O is still 0: no rescale
    make_p();
  };
  // One overlapped phase: S[g] = Q K[g]^T (sQ: its work tile's Q) and O += P V[g - 1] issued
  // together, the softmax of S[g] (K/V tile j of wk) while P V is still on the tensor cores
  // (wait_group 1), then (wait_group 0) O and the P registers, which the GEMM read, are touched
  // again. fresh: S[g] is the first of the next work tile (the cross-tile schedule): its row
  // statistics start anew (the finished tile's were saved by the caller) and O is not
  // rescaled (the caller stores it and starts the next tile's at 0).
  auto step = [&](std::uint32_t sQ, const Work& wk, int j, int g, bool fresh) {
    mbar_wait(k_full(stage(g)), phase(g));
    mbar_wait(v_full(stage(g - 1)), phase(g - 1));
    turn_begin();
    pin(sc);
    pin(o);
    pin(pa);
    wgmma_fence();
    issue_s(sQ, g);
    wgmma_commit();
    issue_pv(g - 1);
    wgmma_commit();
    turn_end(false);
    wgmma_wait<1>();  // S[g] done; P[g-1] V[g-1] may still run: leave o and pa alone
    pin(sc);
    release(k_empty(stage(g)));
    if (fresh) reset_stats();
    const bool moved = softmax(wk, j);
    wgmma_wait<0>();
    pin(o);
    release(v_empty(stage(g - 1)));
    return moved && !fresh;
  };
  // The block's last phase of a work tile: its last P V alone (last: of the block's last tile).
  auto last_pv = [&](int g, bool last) {
    mbar_wait(v_full(stage(g)), phase(g));
    turn_begin();
    pin(o);
    pin(pa);
    wgmma_fence();
    issue_pv(g);
    wgmma_commit();
    turn_end(last);
    wgmma_wait<0>();
    pin(o);
    release(v_empty(stage(g)));
  };

  // A consumer whose 64 rows are past every work tile's rows (decode: 4 packed rows of a
  // 128- or 192-row tile; p.row_end - p.row_begin rows per (batch, K/V head), so the same
  // consumers of every block) runs this loop instead of the one below: no GEMM, no softmax, no
  // store. It keeps the other loop's waits, turns and releases, phase for phase, so the producer
  // and the consumers with rows see the same arrivals; its warps neither leave stream-K
  // partials nor take them, since the same consumer idles in every block. Why: its GEMMs on
  // empty rows took tensor-pipe time from the consumer with rows (v11: b8 h32/8 s1 over 8192
  // keys, d128 13.9 -> 14.4 TFLOP/s, d64 9.4 -> 13.1). A loop of its own, not conditions round
  // the GEMMs below: with those, ptxas serialised every wgmma of the kernel (C7514).
  if constexpr (kOverlap && C::kCrossTile && !kDynamic) {
    if (cw * 64 >= p.row_end - p.row_begin) {
      int qi = 0;
      Work wk;
      (void)item(0, wk);
      int g0 = 0;
      // One phase of the loop below: the K stage gk and the V stage gv it waits for (-1: none).
      auto idle_phase = [&](int gk, int gv, bool last) {
        if (gk >= 0) mbar_wait(k_full(stage(gk)), phase(gk));
        if (gv >= 0) mbar_wait(v_full(stage(gv)), phase(gv));
        turn_begin();
        turn_end(last);
        if (gk >= 0) release(k_empty(stage(gk)));
        if (gv >= 0) release(v_empty(stage(gv)));
      };
      if (cw == kConsumers - 1) bar_arrive(1);
      mbar_wait(q_full(0), 0u);
      idle_phase(0, -1, false);  // first_s()
      while (true) {
        for (int j = 1; j < wk.n_tiles; ++j) idle_phase(g0 + j, g0 + j - 1, false);  // step()
        const int gl = g0 + wk.n_tiles - 1;
        const int qb2 = (qi + 1) % kQBufs;
        Work wk2;
        if (!item(qi + 1, wk2)) {
          idle_phase(-1, gl, true);  // last_pv()
          break;
        }
        mbar_wait(q_full(qb2), q_phase(qi + 1));
        idle_phase(gl + 1, gl, false);  // the next tile's S[0] beside this tile's last P V
        release(q_empty(qi % kQBufs));  // epilogue()
        wk = wk2;
        g0 = gl + 1;
        ++qi;
      }
      release(q_empty(qi % kQBufs));
      griddep_exit();
      return;
    }
  }
  if constexpr (kOverlap && C::kCrossTile) {
    // Across work tiles (two Q buffers): the last P V of one work tile is issued with the
    // first S of the next, so the next tile's first softmax runs under that P V and the
    // epilogue comes after, instead of the tensor cores idling from the last P V to the next
    // tile's first softmax. O of the finished tile stays in o until its epilogue; its row
    // statistics move to fin_sum/fin_max.
    static_assert(kQBufs == 2 && !C::kEarlyQ, "the cross-tile schedule holds two work tiles' Q");
    int qi = 0;
    Work wk;
    (void)item(0, wk);  // every block has one (the launch has no more blocks than work tiles)
    int g0 = 0;  // the work item's first K/V tile (counted over the block's)
    if (cw == kConsumers - 1) bar_arrive(1);
    start_tile();
    mbar_wait(q_full(0), 0u);
    first_s(q_buf(0), wk, 0);
    while (true) {
      for (int j = 1; j < wk.n_tiles; ++j) {
        if (step(q_buf(qi % kQBufs), wk, j, g0 + j, false)) rescale_o();
        make_p();
      }
      const int gl = g0 + wk.n_tiles - 1;  // this tile's last K/V tile
      const int qb2 = (qi + 1) % kQBufs;
      Work wk2;
      if constexpr (kDynamic) {  // the next work tile is the one the producer put in its Q buffer
        mbar_wait(q_full(qb2), q_phase(qi + 1));
        const int w2 = ld_shared_s32(tile_slot(qb2));
        if (w2 < 0) {  // the block's last work item: its last P V alone
          last_pv(gl, true);
          break;
        }
        wk2 = work(w2);
      } else {
        if (!item(qi + 1, wk2)) {  // the block's last work item: its last P V alone
          last_pv(gl, true);
          break;
        }
        mbar_wait(q_full(qb2), q_phase(qi + 1));
      }
      const float fin_sum[2] = {row_sum[0], row_sum[1]}, fin_max[2] = {row_max[0], row_max[1]};
      (void)step(q_buf(qb2), wk2, 0, gl + 1, true);  // the next tile's S[0] with this tile's last P V
      epilogue(wk, qi % kQBufs, fin_sum, fin_max);
      zero_o();
      make_p();
      wk = wk2;
      g0 = gl + 1;
      ++qi;
    }
    take_partials(wk, row_sum, row_max);
    epilogue(wk, qi % kQBufs, row_sum, row_max);
  } else {
    int it0 = 0;  // K/V tiles consumed before this work tile
    int qi = 0;
    for (int w = nth(0); w >= 0; w = nth(++qi)) {
      const Work wk = work(w);
      const int qb = qi % kQBufs;
      const std::uint32_t sQ = q_buf(qb);
      start_tile();
      const int n_tiles = wk.n_tiles;
      mbar_wait(q_full(qb), q_phase(qi));
      if constexpr (!kOverlap) {
        // Serial: each warpgroup waits for its GEMM before the softmax; overlap comes only from
        // the other warpgroups.
        for (int j = 0; j < n_tiles; ++j) {
          const int g = it0 + j;
          mbar_wait(k_full(stage(g)), phase(g));
          pin(sc);
          wgmma_fence();
          issue_s(sQ, g);
          wgmma_commit();
          wgmma_wait<0>();
          pin(sc);
          release(k_empty(stage(g)));
          if (C::kEarlyQ && j == n_tiles - 1) release(q_empty(qb));
          if (softmax(wk, j)) rescale_o();
          make_p();
          mbar_wait(v_full(stage(g)), phase(g));
          pin(o);
          pin(pa);
          wgmma_fence();
          issue_pv(g);
          wgmma_commit();
          wgmma_wait<0>();
          pin(o);
          release(v_empty(stage(g)));
        }
      } else {
        // Per work tile: n_tiles + 1 issue phases; the last consumer grants consumer 0 the first
        // turn of each tile and skips its arrival after the tile's last phase (its grant for the
        // next tile comes after consumer 0's last sync of this one: it waited for it round the
        // ring).
        if (cw == kConsumers - 1) bar_arrive(1);
        first_s(sQ, wk, it0);
        for (int j = 1; j < n_tiles; ++j) {
          if (step(sQ, wk, j, it0 + j, false)) rescale_o();
          make_p();
        }
        if constexpr (C::kEarlyQ) release(q_empty(qb));  // every S = Q K^T of this tile is done
        last_pv(it0 + n_tiles - 1, true);
      }
      it0 += n_tiles;
      epilogue(wk, qb, row_sum, row_max);
    }
  }
  griddep_exit();
}

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    GPUCHECK_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || f == nullptr)
      throw GpuError("attention: the driver has no cuTensorMapEncodeTiled (needed by the hopper kernel)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// [batch*heads, seq, D] tensor, boxes of 64 elements x `rows` rows, 128-byte swizzle; rows
// past `seq` in a box read as zeros.
CUtensorMap make_map(const void* ptr, DType t, int d, int seq, int bh, int rows) {
  CUtensorMap map;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(seq), static_cast<cuuint64_t>(bh)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(d) * 2, static_cast<cuuint64_t>(seq) * d * 2};
  const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(rows), 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult r = tensor_map_encoder()(
      &map, t == DType::fp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3,
      const_cast<void*>(ptr), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw GpuError("attention: cuTensorMapEncodeTiled failed with CUresult " + std::to_string(static_cast<int>(r)));
  return map;
}

// The grouped-query heads of a K/V head packed into one sequence of rows (HopperParams).
int sm_count() {
  int device = 0, n = 0;
  GPUCHECK_CUDA(cudaGetDevice(&device));
  GPUCHECK_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  return n;
}

// Launches the kernel over the packed rows [begin, end) of every (batch, K/V head), always
// with programmatic stream serialization (programmatic dependent launch): its blocks may start
// while the kernel before it in the stream still runs its last blocks, so that block launch,
// shared-memory carve-out, barrier set-up and the tensor-map fetch come off the gap between
// the two kernels. chain (HopperParams::wait_prior): it then waits for that kernel to finish
// before it touches memory, whatever that kernel is (a kernel that never signals lets this one
// launch only at its end; a memset or copy before it, plain stream order). after_pdl: the
// second part of a split (launch_split), which waits for the first part at its exit instead
// (griddep_exit); chain false (an experiment compares): launched in plain stream order.
// hold: if given (empty), the launch's workspace moves there instead of going back to the pool
// when launch() returns (launch_split).
// group: heads per heavy-first group of the causal work order, 0 for the rule below (an
// experiment sets it). balance: how a persistent launch shares unequal work: -1 the rule below
// (stream-K where stream_k_blocks() finds a cut that pays; causal head dim 128: the dynamic
// order, which at d64 lost 1-5% to static shares: v8), 0 neither (static shares; an
// experiment compares), > 0 (an experiment) stream-K among that many blocks wherever the
// kernel has it.
template <typename T, int D, bool CAUSAL, bool kOverlap, class C>
void launch(const AttentionProblem& pr, const FlashParams& fp, cudaStream_t stream, bool persistent, long long begin,
            long long end, bool after_pdl, int group = 0, int balance = -1, bool chain = true,
            HopperWorkspace* hold = nullptr) {
  const int bkv = pr.batch * (pr.heads / fp.kv_group);  // (batch, K/V head)s
  const long long rows = static_cast<long long>(fp.kv_group) * pr.seq_q;
  if (rows > 0x7fffffffLL - C::kBM)
    throw std::invalid_argument("flash_attention_fwd: heads / kv_heads * seq_q too large for the hopper kernel");
  const CUtensorMap tq = make_map(fp.q, pr.dtype, D, static_cast<int>(rows), bkv, C::kBM);
  const CUtensorMap tk = make_map(fp.k, pr.dtype, D, pr.seq_k, bkv, C::kBN);
  const CUtensorMap tv = make_map(fp.v, pr.dtype, D, pr.seq_k, bkv, C::kBN);
  const long long m_blocks = (end - begin + C::kBM - 1) / C::kBM;
  const long long n_work = m_blocks * bkv;
  if (n_work > 0x7fffffffLL) throw std::invalid_argument("flash_attention_fwd: too many query tiles for the hopper kernel");
  // The dynamic order (HopperParams::tile_ctr), with its counter: 4 bytes from the library's
  // stream-ordered pool, zeroed on the stream (none to be had, a stream being captured: a block
  // per tile instead, the hardware's order, without the loads under the previous tile). Only
  // with at least three work tiles per SM: the counter's allocation and memset cost a fixed
  // ~2 us (measured 1.9-2.0 us at three shapes of 256 tiles, where a block per tile won by
  // 3-8%), which the order gains back from about 512 tiles on 132 SMs (-0.4 to +2.5% there;
  // 1024 tiles +2 to +5%, 2048 +3%: v9).
  HopperWorkspace ws;
  bool dynamic = false;
  const int sms = persistent ? sm_count() : 0;  // (a block per tile needs no SM count)
  if constexpr (kOverlap && C::kCrossTile && CAUSAL && D == 128) {
    if (persistent && balance != 0) {
      dynamic = n_work >= 3LL * sms && ws.acquire(sizeof(int), stream);
      if (dynamic) GPUCHECK_CUDA(cudaMemsetAsync(ws.ptr, 0, sizeof(int), stream));
      else persistent = false;
    }
  }
  // Causal work order: heaviest first, in groups of heads (causal_heavy_group()): all heads for
  // static persistent shares, as many as fit in 16 MB of L2 where tiles are taken as blocks free.
  const int heavy_group = causal_heavy_group(group, bkv, 2LL * pr.seq_k * D * 2, persistent && !dynamic);
  // Persistent: one block per SM walks the work tiles (stream-K with fewer tiles than SMs, below:
  // the blocks of the cut); otherwise one block per work tile.
  long long blocks = persistent ? std::min<long long>(n_work, sms) : n_work;
  HopperParams hp{fp.o,
                  fp.lse,
                  static_cast<int>(rows),
                  pr.seq_q,
                  pr.seq_k,
                  fp.scale_log2,
                  static_cast<int>(begin),
                  static_cast<int>(end),
                  static_cast<int>(m_blocks),
                  static_cast<int>(n_work),
                  CAUSAL ? heavy_group : 0,
                  nullptr,
                  nullptr,
                  0,
                  0,
                  nullptr,
                  after_pdl ? 0 : 1};
  auto* kernel = flash_fwd_hopper_kernel<T, D, CAUSAL, kOverlap, C>;
  if constexpr (kOverlap && C::kCrossTile && CAUSAL && D == 128) {
    if (dynamic) {
      hp.tile_ctr = static_cast<int*>(ws.ptr);
      kernel = flash_fwd_hopper_kernel<T, D, CAUSAL, kOverlap, C, false, true>;
    }
  }
  // Stream-K (HopperParams; the kernel's kStreamK variant) where stream_k_blocks() pays, with its
  // workspace: a partial per block and warp, stream-ordered from the library's pool
  // (HopperWorkspace). None to be had (a stream being captured, no memory): without stream-K.
  if constexpr (kOverlap && C::kCrossTile && !CAUSAL) {
    const long long n_kv = (pr.seq_k + C::kBN - 1) / C::kBN;
    int sk_blocks = 0;  // none (also: n_work n_kv < 2^31)
    if (balance != 0 && persistent)
      sk_blocks = balance < 0 ? stream_k_blocks(n_work, n_kv, sms)
                  : n_work > blocks && n_work * n_kv <= 0x7fffffffLL ? static_cast<int>(std::min<long long>(balance, blocks))
                                                                    : 0;
    // Fewer work tiles than SMs (decode): no whole rounds; the launch is the blocks of the cut,
    // each tile split into parts by K/V steps (stream_k_blocks() leaves every block a step).
    const long long sk_grid = n_work < sms ? sk_blocks : blocks;
    if (sk_blocks > 0) {
      constexpr long long kWarps = C::kConsumers * 4;
      const std::size_t part_bytes =
          static_cast<std::size_t>(sk_grid * kWarps * stream_k_part_floats(D) * 32) * sizeof(float);
      const std::size_t bytes = part_bytes + static_cast<std::size_t>(sk_grid * kWarps) * sizeof(unsigned long long);
      if (ws.acquire(bytes, stream)) {
        hp.part = static_cast<float*>(ws.ptr);
        hp.flags = reinterpret_cast<unsigned long long*>(static_cast<char*>(ws.ptr) + part_bytes);
        hp.epoch = next_hopper_epoch();
        hp.sk_blocks = sk_blocks;
        blocks = sk_grid;
        kernel = flash_fwd_hopper_kernel<T, D, CAUSAL, kOverlap, C, true>;
      }
    }
  }
  constexpr int kSmem = Smem<D, C>::kBytes;
  GPUCHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(blocks));
  cfg.blockDim = dim3(C::kThreads);
  cfg.dynamicSmemBytes = kSmem;
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = after_pdl || chain ? 1 : 0;
  GPUCHECK_CUDA(cudaLaunchKernelEx(&cfg, kernel, tq, tk, tv, hp));
  GPUCHECK_CUDA_LAUNCH("flash_fwd_hopper_kernel");
  if (hold != nullptr && ws.ptr != nullptr) {  // the caller frees it, later in the stream (launch_split)
    hold->ptr = std::exchange(ws.ptr, nullptr);
    hold->stream = ws.stream;
  }
}

// The packed rows of a head split between two tile configurations so that no tile computes
// rows past the end: A (BM_A rows per tile) covers [0, split), B (BM_B) [split, rows), with
// split a multiple of BM_A chosen to leave B the fewest rows that make the sum come out in
// whole 64-row blocks (d64: 192 and 128, so s512 = 2 x 192 + 128, s1024 = 4 x 192 + 2 x 128).
// split 0: B alone (also where one B tile holds every row); split == rows: A alone.
constexpr long long split_rows(long long rows, int bm_a, int bm_b) {
  const long long n = (rows + 63) / 64;  // 64-row blocks (the last may be partial)
  const long long a = bm_a / 64, b = bm_b / 64;
  if (n <= b) return 0;  // one B tile holds them all
  for (long long nb = 0; nb * b <= n; ++nb)
    if ((n - nb * b) % a == 0) return std::min(rows, (n - nb * b) * 64);
  return rows;  // no exact split: A alone, its last tile partly empty
}
static_assert(split_rows(512, 192, 128) == 384 && split_rows(1024, 192, 128) == 768);
static_assert(split_rows(4096, 192, 128) == 3840 && split_rows(576, 192, 128) == 576);
static_assert(split_rows(1000, 192, 128) == 768 && split_rows(200, 192, 128) == 0 && split_rows(64, 192, 128) == 0);

// B first, a block per tile (the hardware hands its short tiles to SMs as they free), then A
// launched behind it with programmatic stream serialization: A's blocks take SMs as B's
// leave instead of after B's last block ends.
template <typename T, int D, bool CAUSAL, bool kOverlap, class CA, class CB>
void launch_split(const AttentionProblem& pr, const FlashParams& fp, cudaStream_t stream, bool persistent_a,
                  bool persistent_b) {
  const long long rows = static_cast<long long>(fp.kv_group) * pr.seq_q;
  const long long split = split_rows(rows, CA::kBM, CB::kBM);
  // B's workspace (stream-K's partials and flags) stays out of the pool until A is launched: A
  // runs beside B (it waits for B only at its exit), and the pool would hand a freed block to
  // the next allocation on the stream, A's, while B still uses it (both parts run stream-K, for
  // example b1 h18 s2200 over 2047 keys at d64: B's 18 tiles cut among 72 blocks, A's 198 among 132).
  HopperWorkspace first;
  if (split < rows)
    launch<T, D, CAUSAL, kOverlap, CB>(pr, fp, stream, persistent_b, split, rows, false, 0, -1, true, &first);
  if (split > 0) launch<T, D, CAUSAL, kOverlap, CA>(pr, fp, stream, persistent_a, 0, split, split < rows);
}

}  // namespace

// Every variant of one dtype and head dim: causal or not, overlapped (hopper) or serial, in the
// tile configuration measured best for it on the H200 (docs/ATTENTION.md, v4 and v5):
//   d64   3 consumers (192 query rows), 128-key tiles, no lazy rescale, persistent with the
//         cross-tile schedule (and stream-K where it pays: s4096, not s512 or s1024); more
//         than 2048 packed rows: the rows past the last whole 192-row tile in 128-row tiles of
//         2 consumers, persistent, launched first (launch_split; s4096 +1.4%, s1024 level);
//         causal with a packed query sequence <= 1024 rows: 2 consumers
//         (fewer rows per tile: less masked work on the diagonal, more tiles to balance);
//         longer causal: the rows past the last whole 192-row tile (the heaviest) in 128-row
//         tiles of 2 consumers, launched first (launch_split);
//   d128  no mask, more work tiles than SMs and keys that pad to whole 160-key tiles with at
//         most 3% more than to 128-key ones (prefer_160_key_tiles(): 2048, 3000, 4096, 16384
//         keys, not 1024): 160-key tiles, two Q buffers, persistent, cross-tile, stream-K
//         where it pays (s4096 among all blocks; grouped-query s4096 and s16384, 4 tiles left,
//         among 16 and 32 blocks; fewer tiles than SMs, decode over a long K/V: each tile cut
//         into parts by K/V steps, wide_keys_pay()); otherwise up to 4096 keys: 128-key tiles,
//         the same schedule; more keys (one round of whole tiles): 176-key tiles, one Q buffer
//         given back early, persistent; causal: 128-key
//         tiles, two Q buffers, persistent, cross-tile, in the dynamic order from three work
//         tiles per SM, a block per tile below (the serial schedule: 3 stages, a block per
//         tile);
//   d256  80-key tiles, one Q buffer (Q 64 KB + 2 x 2 x 40 KB of K/V), a block per tile.
// Persistent causal blocks at d64 take the work tiles heaviest first in snake order (nth(),
// work()): static shares won there by 10-29% over a block per tile, and the dynamic order
// lost 1-5% to them (v8). At d128 static shares lost to the hardware's block scheduler (L2:
// the heaviest tiles of every head at once; in groups of heads the shares come out unequal),
// and the dynamic order (grouped, heaviest first, taken as blocks free) beat both: +3% at
// s4096, +3% grouped-query, +2-5% at 1024 tiles (v8, v9). Every launch is a programmatic
// dependent launch (launch()). Only the configurations and masks each case runs are
// instantiated.
template <typename T, int D>
void launch_flash_hopper_variant(const AttentionProblem& pr, const FlashParams& fp, bool overlap, cudaStream_t stream) {
  const long long rows = static_cast<long long>(fp.kv_group) * pr.seq_q;
  auto one = [&](auto tile, auto causal, bool persistent) {
    using C = decltype(tile);
    constexpr bool kCausal = decltype(causal)::value;
    overlap ? launch<T, D, kCausal, true, C>(pr, fp, stream, persistent, 0, rows, false)
            : launch<T, D, kCausal, false, C>(pr, fp, stream, persistent, 0, rows, false);
  };
  if constexpr (D == 64) {  // lazy rescale off: at d64 its vote costs more than the FMULs it saves
    using A = Tile<3, 128, 2, 2, false, false, true>;
    using B = Tile<2, 128, 2, 2, false, false, true>;
    if (!pr.causal && overlap && rows > 2048)
      launch_split<T, D, false, true, A, B>(pr, fp, stream, true, true);
    else if (!pr.causal)
      one(A{}, std::false_type{}, true);
    else if (rows <= 1024)
      one(B{}, std::true_type{}, true);
    else
      overlap ? launch_split<T, D, true, true, A, B>(pr, fp, stream, true, false)
              : launch_split<T, D, true, false, A, B>(pr, fp, stream, true, false);
  } else if constexpr (D == 128) {
    using Wide = Tile<2, 160, 2, 2, true, false, true>;  // 160-key tiles (wide_keys_pay())
    if (pr.causal && overlap)  // the dynamic order (launch(); fewer tiles or a stream being captured: a block per tile)
      launch<T, D, true, true, Tile<2, 128, 2, 2, true, false, true>>(pr, fp, stream, true, 0, rows, false);
    else if (pr.causal)
      launch<T, D, true, false, Tile<2, 128, 3, 1>>(pr, fp, stream, false, 0, rows, false);
    else if (prefer_160_key_tiles(pr.seq_k) &&
             wide_keys_pay((rows + Wide::kBM - 1) / Wide::kBM * (pr.batch * (pr.heads / fp.kv_group)),
                           (pr.seq_k + Wide::kBN - 1) / Wide::kBN, sm_count()))
      one(Wide{}, std::false_type{}, true);  // several rounds, or a K/V split
    else if (pr.seq_k <= 4096)
      one(Tile<2, 128, 2, 2, true, false, true>{}, std::false_type{}, true);
    else
      one(Tile<2, 176, 2, 1, true, true>{}, std::false_type{}, true);
  } else {
    static_assert(D == 256, "head dims 64, 128, 256");
    if (pr.causal)
      one(Tile<2, 80, 2, 1>{}, std::true_type{}, false);
    else
      one(Tile<2, 80, 2, 1>{}, std::false_type{}, false);
  }
}

// Whether the variant's machine code loads on the current device (an sm_90a image exists).
template <typename T, int D>
bool flash_hopper_variant_loadable() {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, flash_fwd_hopper_kernel<T, D, true, false, Tile<2, 128, 3, 1>>) != cudaSuccess) {
    (void)cudaGetLastError();  // clear: a missing image is an answer here, not an error
    return false;
  }
  return true;
}

}  // namespace gpucheck::kernels::detail
