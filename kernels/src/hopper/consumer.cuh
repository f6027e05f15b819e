// The Hopper attention kernel's consumer warpgroup: its registers (O, S, P, the row statistics)
// and the phases of a K/V tile (S = Q K^T, the online softmax, O += P V) and of a work tile's
// end (stream-K partials, the epilogue). The loops that call them: hopper/consumer_loops.cuh.
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.cuh"
#include "schedule.cuh"
#include "stream_k.hpp"
#include "sync.cuh"
#include "wgmma.cuh"

namespace gpucheck::kernels::detail {
namespace {

// One consumer warpgroup: rows [64 cw, 64 cw + 64) of each work tile. S = Q K^T with wgmma from
// shared memory (both K-major, 128-byte swizzle as TMA writes it), the online softmax in
// registers (exp2, scale*log2e folded into one FFMA), and O += P V with P straight from the S
// accumulators as the register A operand (the m64nN accumulator layout is the A fragment
// layout) and V read MN-major (transposed) by wgmma. issue_*() only issue; the phases
// (first_s(), step(), last_pv()) fence, commit, wait and release.
template <typename T, int D, bool CAUSAL, class C, bool kStreamK, bool kDynamic>
struct Consumer {
  using L = Smem<D, C>;
  using R = Ring<D, C>;
  using Sched = Schedule<CAUSAL, C::kBM, C::kBN, kStreamK, kDynamic>;
  static constexpr int kBM = C::kBM, kBN = C::kBN, kConsumers = C::kConsumers;
  static constexpr bool kEarlyQ = C::kEarlyQ, kDynamicOrder = kDynamic;
  // A stream-K slot's registers: o[D / 2], then the row maxima, then the row sums (two rows a lane).
  static constexpr int kWarps = kConsumers * 4, kPartRegs = stream_k_part_floats(D), kMaxAt = D / 2,
                       kSumAt = D / 2 + 2;

  const HopperParams& p;
  const R& ring;
  const Sched& sched;
  // The consumer index, broadcast from lane 0 (as CUTLASS does), so that ptxas knows it is the
  // same in every lane: more of the K/V loop's address arithmetic then stays on the uniform
  // datapath.
  const int cw;
  const int wq;    // warp in the warpgroup: 16 rows each
  const int lane;
  const int lrow;  // this lane's row in its warp's 8 (lane / 4): lrow and lrow + 8 of its 16
  const int t;
  const int row_base;  // this lane's rows: row_base and row_base + 8
  const float sl2;
  const int next;  // the consumer after this one round the ring (turn_end())

  // The row statistics first, the sums before the maxima: the order of these members is the
  // order of their values in the loops' phi nodes (the copies at each back edge), and ptxas
  // schedules by it; this order gives the single-file kernel's order (measured in SASS).
  float row_sum[2], row_max[2], corr[2];
  float o[D / 2];
  float sc[kBN / 2];
  std::uint32_t pa[kBN / 16][4];

  __device__ __forceinline__ Consumer(const R& ring_, const Sched& sched_, int tid, int wg)
      : p(sched_.p),
        ring(ring_),
        sched(sched_),
        cw(__shfl_sync(0xffffffffu, wg - 1, 0)),
        wq((tid % 128) >> 5),
        lane(tid & 31),
        lrow(lane >> 2),
        t(lane & 3),
        row_base(cw * 64 + wq * 16 + lrow),
        sl2(sched_.p.scale_log2),
        next(cw + 1 == kConsumers ? 0 : cw + 1) {}

  // Whether this consumer's 64 rows are past every work tile's rows (decode: a few packed rows
  // of a 128- or 192-row tile; the same consumers of every block).
  __device__ __forceinline__ bool idle() const { return cw * 64 >= p.row_end - p.row_begin; }

  __device__ inline void zero_o() {
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
  }
  __device__ inline void reset_stats() {  // the row statistics of a new work tile: no key seen yet
    row_max[0] = row_max[1] = -INFINITY;
    row_sum[0] = row_sum[1] = 0.f;
  }
  __device__ inline void start_tile() {  // O, S and the row statistics of a new work tile
    zero_o();
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) sc[i] = 0.f;
    reset_stats();
  }

  // S = Q K[g]^T (sQ: the work tile's Q): m64 nBN, k over the head dim in 32-byte steps.
  __device__ inline void issue_s(std::uint32_t sQ, int g) {
    const int s = R::stage(g);
    const std::uint32_t q_lo = smem_desc_lo(sQ + cw * 64 * 128, 16);
    const std::uint32_t k_lo = smem_desc_lo(ring.sK + s * L::kKVBytes, 16);
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      const int db = ks / 4;
      const std::uint32_t kin = static_cast<std::uint32_t>(ks % 4) * 32u;
      const std::uint64_t da = smem_desc_join(q_lo + ((db * kBM * 128 + kin) >> 4), 1024);
      const std::uint64_t dk = smem_desc_join(k_lo + ((db * kBN * 128 + kin) >> 4), 1024);
      wgmma_ss<T, kBN>(sc, da, dk, ks > 0 ? 1 : 0);
    }
  }
  // O += P V[g]: m64 nD, k over the keys in 16-row (2048-byte) steps.
  __device__ inline void issue_pv(int g) {
    const int s = R::stage(g);
    const std::uint32_t v_lo = smem_desc_lo(ring.sV + s * L::kKVBytes, kBN * 128);
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) wgmma_rs<T, D>(o, pa[kk], smem_desc_join(v_lo + ((kk * 16 * 128) >> 4), 1024));
  }

  // S of the work item's K/V tile j: mask, new running max, P = exp2(...) in sc, corr for O.
  // True where the maximum moved (O must be rescaled by corr).
  __device__ inline bool softmax(const Work& wk, int j) {
    const int key_begin = (kStreamK ? wk.key0 : 0) + j * kBN;
    const int key_end = key_begin + kBN;
    if (key_end > p.seq_k || (CAUSAL && key_end - 1 > wk.causal_lo + sched.off)) {  // tail or diagonal tile
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = wk.m0 + row_base + 8 * h;
        const int limit = CAUSAL ? min(row % p.period + sched.off + 1, p.seq_k) : p.seq_k;
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
  }
  __device__ inline void rescale_o() {
#pragma unroll
    for (int i = 0; i < D / 8; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        o[4 * i + 2 * h] *= corr[h];
        o[4 * i + 2 * h + 1] *= corr[h];
      }
  }
  __device__ inline void make_p() {  // P as the register A operand: k-step kk takes S n-blocks 2kk, 2kk+1
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) {
      pa[kk][0] = pack2<T>(sc[8 * kk + 0], sc[8 * kk + 1]);
      pa[kk][1] = pack2<T>(sc[8 * kk + 2], sc[8 * kk + 3]);
      pa[kk][2] = pack2<T>(sc[8 * kk + 4], sc[8 * kk + 5]);
      pa[kk][3] = pack2<T>(sc[8 * kk + 6], sc[8 * kk + 7]);
    }
  }
  __device__ inline void release(std::uint32_t bar) const {  // this warp is done reading a K or V stage (or Q)
    __syncwarp();
    if (lane == 0) mbar_arrive(bar);
  }

  // The FlashAttention-3 schedule's ping-pong: named barriers pass the right to issue GEMMs
  // round the ring of consumers, so one warpgroup's softmax hides behind the others' GEMMs.
  // Consumer c syncs on barrier 1 + c (its turn) and arrives on the next one's; the last
  // consumer grants consumer 0 the first turn (grant_first()) and skips its arrival after its
  // last phase, so every barrier sees as many arrivals as syncs (all consumers of a block run
  // the same work tiles, hence the same number of phases).
  __device__ __forceinline__ void grant_first() const {
    if (cw == kConsumers - 1) bar_arrive(1);
  }
  __device__ inline void turn_begin() const { bar_sync(1 + cw); }
  __device__ inline void turn_end(bool last) const {
    if (!(last && cw == kConsumers - 1)) bar_arrive(1 + next);
  }

  // The first phase of a work tile that follows none: S[g] alone, then its softmax.
  __device__ inline void first_s(std::uint32_t sQ, const Work& wk, int g) {
    mbar_wait(ring.k_full(R::stage(g)), R::phase(g));
    turn_begin();
    pin(sc);
    wgmma_fence();
    issue_s(sQ, g);
    wgmma_commit();
    turn_end(false);
    wgmma_wait<0>();
    pin(sc);
    release(ring.k_empty(R::stage(g)));
    (void)softmax(wk, 0);  // O is still 0: no rescale
    make_p();
  }
  // One overlapped phase: S[g] = Q K[g]^T (sQ: its work tile's Q) and O += P V[g - 1] issued
  // together, the softmax of S[g] (K/V tile j of wk) while P V is still on the tensor cores
  // (wait_group 1), then (wait_group 0) O and the P registers, which the GEMM read, are touched
  // again. fresh: S[g] is the first of the next work tile (the cross-tile schedule): its row
  // statistics start anew (the finished tile's were saved by the caller) and O is not
  // rescaled (the caller stores it and starts the next tile's at 0). True where O needs rescaling.
  __device__ inline bool step(std::uint32_t sQ, const Work& wk, int j, int g, bool fresh) {
    mbar_wait(ring.k_full(R::stage(g)), R::phase(g));
    mbar_wait(ring.v_full(R::stage(g - 1)), R::phase(g - 1));
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
    release(ring.k_empty(R::stage(g)));
    if (fresh) reset_stats();
    const bool moved = softmax(wk, j);
    wgmma_wait<0>();
    pin(o);
    release(ring.v_empty(R::stage(g - 1)));
    return moved && !fresh;
  }
  // The block's last phase of a work tile: its last P V alone (last: of the block's last tile).
  __device__ inline void last_pv(int g, bool last) {
    mbar_wait(ring.v_full(R::stage(g)), R::phase(g));
    turn_begin();
    pin(o);
    pin(pa);
    wgmma_fence();
    issue_pv(g);
    wgmma_commit();
    turn_end(last);
    wgmma_wait<0>();
    pin(o);
    release(ring.v_empty(R::stage(g)));
  }
  // The serial schedule's K/V tile j of wk (K/V tile g of the block): each warpgroup waits for
  // its GEMM before the softmax; overlap comes only from the other warpgroups.
  __device__ __forceinline__ void serial_step(std::uint32_t sQ, const Work& wk, int j, int g, int qb) {
    mbar_wait(ring.k_full(R::stage(g)), R::phase(g));
    pin(sc);
    wgmma_fence();
    issue_s(sQ, g);
    wgmma_commit();
    wgmma_wait<0>();
    pin(sc);
    release(ring.k_empty(R::stage(g)));
    if (C::kEarlyQ && j == wk.n_tiles - 1) release(ring.q_empty(qb));
    if (softmax(wk, j)) rescale_o();
    make_p();
    mbar_wait(ring.v_full(R::stage(g)), R::phase(g));
    pin(o);
    pin(pa);
    wgmma_fence();
    issue_pv(g);
    wgmma_commit();
    wgmma_wait<0>();
    pin(o);
    release(ring.v_empty(R::stage(g)));
  }

  // Stream-K (HopperParams::part): the slot (a lane's column of it) and flag of warp `warp`
  // (cw 4 + wq) in block blk's partial. The callers pass the warp and lane as locals read once.
  __device__ inline float* part_slot(int blk, int warp, int lane) const {
    return p.part + (static_cast<std::size_t>(blk) * kWarps + warp) * kPartRegs * 32 + lane;
  }
  __device__ inline unsigned long long* part_flag(int blk, int warp) const {
    return p.flags + static_cast<std::size_t>(blk) * kWarps + warp;
  }
  // Stream-K, the block's last work item: the head of a split tile (from K/V tile 0, fewer than
  // all) takes the later parts' partials into o, sum and mx (rescaled to the larger maximum).
  // Only ever the block's last item, so called after the loop: inside it, its spin on another
  // block's flag made ptxas give up the uniform datapath for the whole consumer loop.
  __device__ inline void take_partials(const Work& wk, float (&sum_c)[2], float (&mx)[2]) {
    if (!kStreamK || wk.key0 != 0 || wk.n_tiles >= sched.n_kv) return;
    const int tile = wk.bh * p.m_blocks + (wk.m0 - p.row_begin) / kBM;
    // The slot's indices read once, before the loop: read inside it, ptxas rebuilt them from
    // tid there and spilled one more register than the single-file kernel.
    const int lane = this->lane, warp = cw * 4 + wq;
    for (int c = static_cast<int>(blockIdx.x) + 1; sched.part_in_reach(c, tile); ++c) {
      if (!sched.part_shared(c, tile)) continue;  // a block without tail steps
      if (lane == 0) wait_flag_or_trap(part_flag(c, warp), p.epoch);
      __syncwarp();
      const float* src = part_slot(c, warp, lane);
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
  }
  // Epilogue of a work tile: O /= sum (sum, mx: its row statistics). Staged (two Q buffers):
  // through this warp's own 16 rows of the tile's Q buffer (swizzled like the tile; no other
  // warp reads them) so that global stores are whole 16-byte chunks, then the Q buffer goes
  // back to the producer. Early Q (the buffer already given back): each lane stores its pairs
  // of O straight from registers.
  //
  // Stream-K (HopperParams): a later part of a split work tile leaves its partial (O, maxima,
  // sums unnormalized) for the block with the tile's head, sets its flag, and stores nothing.
  __device__ inline void epilogue(const Work& wk, int qb, const float (&sum_in)[2], const float (&mx_in)[2]) {
    float sum_c[2] = {sum_in[0], sum_in[1]}, mx[2] = {mx_in[0], mx_in[1]};
    if constexpr (kStreamK) {
      if (wk.key0 > 0) {  // tail part: the partial, then the Q buffer back
        const int blk = static_cast<int>(blockIdx.x), warp = cw * 4 + wq;
        float* dst = part_slot(blk, warp, lane);
#pragma unroll
        for (int i = 0; i < D / 2; ++i) __stcg(dst + 32 * i, o[i]);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          __stcg(dst + 32 * (kMaxAt + h), mx[h]);
          __stcg(dst + 32 * (kSumAt + h), sum_c[h]);
        }
        __threadfence();
        __syncwarp();
        if (lane == 0) st_release_gpu(part_flag(blk, warp), p.epoch);
        release(ring.q_empty(qb));
        return;
      }
    }
    // This lane's indices as values, read once: the stores below are asm volatile, after which
    // members would be read again (and their arithmetic associated otherwise; cw and wq make
    // the staged copy's rows). lane & 31 (a no-op) tells the compiler, before this function is
    // inlined, that lane + 32 i2 below has lane's low bits, so the copy loop's chunk column
    // folds to lane & 7 as in the single-file kernel instead of adding 32, 64, 96 per chunk.
    const int t = this->t, row_base = this->row_base, lane = this->lane & 31, cw = this->cw, wq = this->wq;
    const std::uint32_t sQ = ring.q_buf(qb);
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
      release(ring.q_empty(qb));
    }
  }
};

}  // namespace
}  // namespace gpucheck::kernels::detail
