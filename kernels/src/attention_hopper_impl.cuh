// The Hopper attention kernel itself, included by the four attention_hopper_<dtype>_d<D>.cu
// files, each instantiating one dtype and head dim (four variants: causal or not, overlapped
// or serial schedule): the 16 variants in one file took 14 s to compile on the GPU machine,
// the gate build's critical path. attention_hopper.cu dispatches.
//
// FlashAttention-3 style forward kernel for Hopper (sm_90a only: wgmma, setmaxnreg, TMA).
//
// One block of three warpgroups per (128-query tile, head, batch). Warpgroup 0 is the
// producer: one thread issues TMA copies of the Q tile and of K/V tiles (128 keys) into a
// two-stage ring of shared buffers, each guarded by a full/empty mbarrier pair; its
// registers are given back with setmaxnreg. Warpgroups 1 and 2 are consumers, 64 query rows
// each: S = Q K^T with wgmma from shared memory (both K-major, 128-byte swizzle as TMA
// writes it), the online softmax in registers (exp2, scale*log2e folded into one FFMA), and
// O += P V with P straight from the S accumulators as the register A operand (the m64nN
// accumulator layout is the A fragment layout) and V read MN-major (transposed) by wgmma.
// Causal: tiles right of the diagonal are never loaded; only diagonal and tail tiles are
// masked; blocks with the most tiles start first. The files that include this one are
// compiled for sm_90a alone (kernels/CMakeLists.txt), so none of these instructions can
// reach another target.
#pragma once

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "attention_hopper.cu must be compiled for sm_90a only (wgmma, setmaxnreg)"
#endif

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "attention_launch.hpp"
#include "attention_wgmma.cuh"
#include "gpucheck/check_cuda.hpp"

namespace gpucheck::kernels::detail {
namespace {

// A tile configuration: NC consumer warpgroups of 64 query rows each (BM = 64 NC rows per
// work tile), BN keys per K/V tile, a ring of STAGES K/V buffers, QBUF Q buffers (2: the next
// work tile's Q loads while this one runs), LAZY: O and the row sums are rescaled only when
// a row's maximum grows by more than 2^8 (below). setmaxnreg budgets: the producer warpgroup keeps
// 24 registers, the consumers share the rest of the 64K (2 consumers: 240 each; 3: 160).
template <int NC_, int BN_, int STAGES_ = 2, int QBUF_ = 2, bool LAZY_ = true>
struct Tile {
  static constexpr bool kLazyRescale = LAZY_;
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
struct HopperParams {
  void* o;
  float* lse;     // nullable
  int kv_heads;   // grid y
  int rows;       // group * seq_q: query rows per (batch, K/V head)
  int period;     // seq_q: the causal mask repeats every `period` rows
  int seq_k;
  float scale_log2;
  int m_blocks;  // work tiles per (batch, K/V head): ceil(rows / BM)
  int n_work;    // m_blocks * batch * kv_heads
  int heavy_first;  // 1: persistent blocks take the work tiles heaviest first (below), 0: launch order
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
  static constexpr int kBytes = kBar + kBars * 8 + 1024;  // + alignment slack
  static_assert(kBytes <= 227 * 1024, "shared memory per block");
};

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
// The producer's waits give up after ~4 s, which only a protocol bug can take: trap, so the
// launch fails with an error instead of hanging the process. The producer waits until the
// consumers have released the last stages, so a hang anywhere in the block ends here.
__device__ __forceinline__ void mbar_wait_or_trap(std::uint32_t bar, std::uint32_t parity) {
  if (mbar_try_wait(bar, parity)) return;
  std::uint64_t t0;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t0));
  while (!mbar_try_wait(bar, parity)) {
    std::uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now));
    if (now - t0 > 4000000000ull) __trap();
  }
}

__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar, int c0,
                                            int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// wgmma shared-memory descriptor, 128-byte swizzle. K-major: sbo = 1024 (8-row groups),
// lbo unused (16). MN-major: lbo = bytes between 64-element column blocks, sbo = 1024.
__device__ __forceinline__ std::uint64_t smem_desc_sw128(std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo) {
  return static_cast<std::uint64_t>((addr & 0x3FFFFu) >> 4) | (static_cast<std::uint64_t>((lbo >> 4) & 0x3FFFu) << 16) |
         (static_cast<std::uint64_t>((sbo >> 4) & 0x3FFFu) << 32) | (1ull << 62);
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
template <typename T, int D, bool CAUSAL, bool kOverlap, class C>
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

  // One work tile: its first query row, (batch, K/V head), rows, K/V tiles, and (causal) the
  // lowest row modulo the period (packed heads: a tile spanning two heads' rows holds a row 0).
  struct Work {
    int m0, bh, q_rows, n_tiles, causal_lo;
  };
  // Work tile w: in launch order, the query tiles of one (batch, K/V head) are neighbours
  // (concurrent tiles share K/V in L2), causal ones heaviest first within the head; heavy
  // first (causal, persistent), all heads' last query tile first, then the one before.
  auto work = [&](int w) {
    Work r;
    int mb;
    if (p.heavy_first) {
      const int bkv = p.n_work / p.m_blocks;
      mb = p.m_blocks - 1 - w / bkv;
      r.bh = w % bkv;
    } else {
      mb = w % p.m_blocks;
      r.bh = w / p.m_blocks;
      if (CAUSAL) mb = p.m_blocks - 1 - mb;
    }
    r.m0 = mb * kBM;
    r.q_rows = min(kBM, p.rows - r.m0);
    r.n_tiles = (p.seq_k + kBN - 1) / kBN;
    r.causal_lo = 0;
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

  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  if (tid == 0) {
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

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(C::kProducerRegs));
    if (tid == 0) {
      int it = 0;  // K/V tiles loaded so far: ring slot it % kStages, phase (it / kStages) & 1
      int qi = 0;  // work tiles started
      for (int w = nth(0); w >= 0; w = nth(++qi)) {
        const Work wk = work(w);
        const int qb = qi % kQBufs;
        mbar_wait_or_trap(q_empty(qb), (static_cast<std::uint32_t>(qi / kQBufs) & 1u) ^ 1u);
        mbar_expect_tx(q_full(qb), L::kQBytes);
        for (int db = 0; db < kDB; ++db)
          tma_load_3d(q_buf(qb) + db * kBM * 128, &tm_q, q_full(qb), db * 64, wk.m0, wk.bh);
        for (int j = 0; j < wk.n_tiles; ++j, ++it) {
          const int s = it % kStages;
          const std::uint32_t ph = static_cast<std::uint32_t>(it / kStages) & 1u;
          mbar_wait_or_trap(k_empty(s), ph ^ 1u);
          mbar_expect_tx(k_full(s), L::kKVBytes);
          for (int db = 0; db < kDB; ++db)
            tma_load_3d(sK + s * L::kKVBytes + db * kBN * 128, &tm_k, k_full(s), db * 64, j * kBN, wk.bh);
          mbar_wait_or_trap(v_empty(s), ph ^ 1u);
          mbar_expect_tx(v_full(s), L::kKVBytes);
          for (int db = 0; db < kDB; ++db)
            tma_load_3d(sV + s * L::kKVBytes + db * kBN * 128, &tm_v, v_full(s), db * 64, j * kBN, wk.bh);
        }
      }
      // Tail: the consumers release the last K/V tiles and Q buffers only at their end.
      for (int i = max(0, it - kStages); i < it; ++i) {
        const std::uint32_t ph = static_cast<std::uint32_t>(i / kStages) & 1u;
        mbar_wait_or_trap(k_empty(i % kStages), ph);
        mbar_wait_or_trap(v_empty(i % kStages), ph);
      }
      for (int i = max(0, qi - kQBufs); i < qi; ++i)
        mbar_wait_or_trap(q_empty(i % kQBufs), static_cast<std::uint32_t>(i / kQBufs) & 1u);
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(C::kConsumerRegs));
  const int cw = wg - 1;  // consumer index: rows [64 cw, 64 cw + 64) of the tile
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
  int it0 = 0;  // K/V tiles consumed before this work tile
  int qi = 0;
  for (int w = nth(0); w >= 0; w = nth(++qi)) {
    const Work wk = work(w);
    const int qb = qi % kQBufs;
    const std::uint32_t sQ = q_buf(qb);
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) sc[i] = 0.f;
    row_max[0] = row_max[1] = -INFINITY;
    row_sum[0] = row_sum[1] = 0.f;
    auto stage = [&](int j) { return (it0 + j) % kStages; };
    auto phase = [&](int j) { return static_cast<std::uint32_t>((it0 + j) / kStages) & 1u; };

    // The steps of one K/V tile. issue_*: wgmma into sc (S) or o (O); the caller fences,
    // commits and waits. softmax(): mask, new running max, P = exp2(...) in sc, corr for O.
    auto issue_s = [&](int j) {  // S = Q K[j]^T: m64 nBN, k over the head dim in 32-byte steps
      const int s = stage(j);
#pragma unroll
      for (int ks = 0; ks < D / 16; ++ks) {
        const int db = ks / 4;
        const std::uint32_t kin = static_cast<std::uint32_t>(ks % 4) * 32u;
        const std::uint64_t da = smem_desc_sw128(sQ + db * kBM * 128 + cw * 64 * 128 + kin, 16, 1024);
        const std::uint64_t dk = smem_desc_sw128(sK + s * L::kKVBytes + db * kBN * 128 + kin, 16, 1024);
        wgmma_ss<T, kBN>(sc, da, dk, ks > 0 ? 1 : 0);
      }
    };
    auto issue_pv = [&](int j) {  // O += P V[j]: m64 nD, k over the keys in 16-row (2048-byte) steps
      const int s = stage(j);
#pragma unroll
      for (int kk = 0; kk < kBN / 16; ++kk) {
        const std::uint64_t dv = smem_desc_sw128(sV + s * L::kKVBytes + kk * 16 * 128, kBN * 128, 1024);
        wgmma_rs<T, D>(o, pa[kk], dv);
      }
    };
    auto softmax = [&](int j) {
      const int key_end = (j + 1) * kBN;
      if (key_end > p.seq_k || (CAUSAL && key_end - 1 > wk.causal_lo + off)) {  // tail or diagonal tile
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = wk.m0 + row_base + 8 * h;
          const int limit = CAUSAL ? min(row % p.period + off + 1, p.seq_k) : p.seq_k;
#pragma unroll
          for (int i = 0; i < kBN / 8; ++i)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              if (j * kBN + i * 8 + 2 * t + e >= limit) sc[4 * i + 2 * h + e] = -INFINITY;
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

    const int n_tiles = wk.n_tiles;
    mbar_wait(q_full(qb), static_cast<std::uint32_t>(qi / kQBufs) & 1u);
    if constexpr (!kOverlap) {
      // Serial: each warpgroup waits for its GEMM before the softmax; overlap comes only from
      // the other warpgroups.
      for (int j = 0; j < n_tiles; ++j) {
        const int s = stage(j);
        mbar_wait(k_full(s), phase(j));
        pin(sc);
        wgmma_fence();
        issue_s(j);
        wgmma_commit();
        wgmma_wait<0>();
        pin(sc);
        release(k_empty(s));
        if (softmax(j)) rescale_o();
        make_p();
        mbar_wait(v_full(s), phase(j));
        pin(o);
        pin(pa);
        wgmma_fence();
        issue_pv(j);
        wgmma_commit();
        wgmma_wait<0>();
        pin(o);
        release(v_empty(s));
      }
    } else {
      // FlashAttention-3 schedule. Within a warpgroup: S[j] = Q K[j]^T and O += P[j-1] V[j-1]
      // are issued together and the softmax of S[j] runs while P V is on the tensor cores.
      // Between the warpgroups: named barriers pass the right to issue GEMMs round the ring
      // (ping-pong for two), so one warpgroup's softmax hides behind the others' GEMMs.
      // Issue phases per warpgroup and work tile: n_tiles + 1. Consumer c syncs on barrier
      // 1 + c (its turn) and arrives on the next one's; the last consumer grants consumer 0
      // the first turn and skips its arrival after its last phase, so every barrier sees as
      // many arrivals as syncs within each work tile (the last consumer's grant for the next
      // tile comes after consumer 0's last sync of this one: it waited for it round the ring).
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
      if (cw == kConsumers - 1) bar_arrive(1);

      mbar_wait(k_full(stage(0)), phase(0));
      turn_begin();
      pin(sc);
      wgmma_fence();
      issue_s(0);
      wgmma_commit();
      turn_end(false);
      wgmma_wait<0>();
      pin(sc);
      release(k_empty(stage(0)));
      (void)softmax(0);  // O is still 0: no rescale
      make_p();
      for (int j = 1; j < n_tiles; ++j) {
        mbar_wait(k_full(stage(j)), phase(j));
        mbar_wait(v_full(stage(j - 1)), phase(j - 1));
        turn_begin();
        pin(sc);
        pin(o);
        pin(pa);
        wgmma_fence();
        issue_s(j);
        wgmma_commit();
        issue_pv(j - 1);
        wgmma_commit();
        turn_end(false);
        wgmma_wait<1>();  // S[j] done; P[j-1] V[j-1] may still run: leave o and pa alone
        pin(sc);
        release(k_empty(stage(j)));
        const bool moved = softmax(j);
        wgmma_wait<0>();
        pin(o);
        release(v_empty(stage(j - 1)));
        if (moved) rescale_o();
        make_p();
      }
      const int last = n_tiles - 1;
      mbar_wait(v_full(stage(last)), phase(last));
      turn_begin();
      pin(o);
      pin(pa);
      wgmma_fence();
      issue_pv(last);
      wgmma_commit();
      turn_end(true);
      wgmma_wait<0>();
      pin(o);
      release(v_empty(stage(last)));
    }
    it0 += n_tiles;

    // Epilogue: O /= sum, staged through this warp's own 16 rows of the Q tile (swizzled like
    // the tile; no other warp reads them) so that global stores are whole 16-byte chunks; then
    // the Q buffer goes back to the producer.
    const std::size_t row0 = static_cast<std::size_t>(wk.bh) * p.rows + wk.m0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float sum = row_sum[h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
      const int r = row_base + 8 * h;
#pragma unroll
      for (int i = 0; i < D / 8; ++i) {
        const std::uint32_t addr = sQ + static_cast<std::uint32_t>((i / 8) * kBM * 128 + r * 128 +
                                                                   (((i % 8) ^ (r & 7)) << 4) + t * 4);
        const std::uint32_t val = pack2<T>(o[4 * i + 2 * h] * inv, o[4 * i + 2 * h + 1] * inv);
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(val));
      }
      if (p.lse != nullptr && t == 0 && r < wk.q_rows) p.lse[row0 + r] = (row_max[h] + log2f(sum)) * kLn2;
    }
    __syncwarp();
    constexpr int kChunks = D / 8;
    T* gO = static_cast<T*>(p.o) + row0 * D;
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

template <typename T, int D, bool CAUSAL, bool kOverlap, class C>
void launch(const AttentionProblem& pr, const FlashParams& fp, cudaStream_t stream, bool persistent) {
  const int kv = pr.heads / fp.kv_group;
  const long long rows = static_cast<long long>(fp.kv_group) * pr.seq_q;
  if (rows > 0x7fffffffLL - C::kBM)
    throw std::invalid_argument("flash_attention_fwd: heads / kv_heads * seq_q too large for the hopper kernel");
  const int bkv = pr.batch * kv;
  const CUtensorMap tq = make_map(fp.q, pr.dtype, D, static_cast<int>(rows), bkv, C::kBM);
  const CUtensorMap tk = make_map(fp.k, pr.dtype, D, pr.seq_k, bkv, C::kBN);
  const CUtensorMap tv = make_map(fp.v, pr.dtype, D, pr.seq_k, bkv, C::kBN);
  const long long m_blocks = (rows + C::kBM - 1) / C::kBM;
  const long long n_work = m_blocks * bkv;
  if (n_work > 0x7fffffffLL) throw std::invalid_argument("flash_attention_fwd: too many query tiles for the hopper kernel");
  const HopperParams hp{fp.o,        fp.lse, kv, static_cast<int>(rows), pr.seq_q, pr.seq_k, fp.scale_log2,
                        static_cast<int>(m_blocks), static_cast<int>(n_work), CAUSAL && persistent ? 1 : 0};
  auto* kernel = flash_fwd_hopper_kernel<T, D, CAUSAL, kOverlap, C>;
  constexpr int kSmem = Smem<D, C>::kBytes;
  GPUCHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  // Persistent: one block per SM walks the work tiles; otherwise one block per work tile.
  const long long blocks = persistent ? std::min<long long>(n_work, sm_count()) : n_work;
  const dim3 grid(static_cast<unsigned>(blocks));
  kernel<<<grid, C::kThreads, kSmem, stream>>>(tq, tk, tv, hp);
  GPUCHECK_CUDA_LAUNCH("flash_fwd_hopper_kernel");
}

}  // namespace

// Every variant of one dtype and head dim: causal or not, overlapped (hopper) or serial, in the
// tile configuration measured best for it on the H200 (docs/ATTENTION.md, v4):
//   d64   3 consumers (192 query rows), 128-key tiles, persistent, no lazy rescale; causal
//         with a packed query sequence <= 1024 rows: 2 consumers (fewer rows per tile: less
//         masked work on the diagonal, more tiles to balance);
//   d128  no mask: 176-key tiles, persistent; causal: 128-key tiles, 3 stages, a block per tile;
//   d256  80-key tiles, one Q buffer (Q 64 KB + 2 x 2 x 40 KB of K/V), a block per tile.
// Persistent causal blocks take the work tiles heaviest first in snake order (nth(), work());
// at d128/d256 that lost to the hardware's block scheduler (L2: the heaviest tiles of every
// head at once), at d64 it won by 10-29%.
template <typename T, int D>
void launch_flash_hopper_variant(const AttentionProblem& pr, const FlashParams& fp, bool overlap, cudaStream_t stream) {
  auto go = [&](auto tile, bool persistent) {
    using C = decltype(tile);
    if (overlap)
      pr.causal ? launch<T, D, true, true, C>(pr, fp, stream, persistent)
                : launch<T, D, false, true, C>(pr, fp, stream, persistent);
    else
      pr.causal ? launch<T, D, true, false, C>(pr, fp, stream, persistent)
                : launch<T, D, false, false, C>(pr, fp, stream, persistent);
  };
  const long long rows = static_cast<long long>(fp.kv_group) * pr.seq_q;
  if constexpr (D == 64) {  // lazy rescale off: at d64 its vote costs more than the FMULs it saves
    if (pr.causal && rows <= 1024)
      go(Tile<2, 128, 2, 2, false>{}, true);
    else
      go(Tile<3, 128, 2, 2, false>{}, true);
  } else if constexpr (D == 128) {
    if (pr.causal)
      go(Tile<2, 128, 3, 1>{}, false);
    else
      go(Tile<2, 176, 2, 1>{}, true);
  } else {
    static_assert(D == 256, "head dims 64, 128, 256");
    go(Tile<2, 80, 2, 1>{}, false);
  }
}

// Whether the variant's machine code loads on the current device (an sm_90a image exists).
template <typename T, int D>
bool flash_hopper_variant_loadable() {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, flash_fwd_hopper_kernel<T, D, true, true, Tile<2, 128, 3, 1>>) != cudaSuccess) {
    (void)cudaGetLastError();  // clear: a missing image is an answer here, not an error
    return false;
  }
  return true;
}

}  // namespace gpucheck::kernels::detail
