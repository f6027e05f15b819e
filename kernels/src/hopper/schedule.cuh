// The Hopper attention kernel's schedule: which work tiles (or stream-K parts of them) a block
// runs, in which order. The producer and the consumers of a block both walk it, item for item.
#pragma once

#include "params.cuh"
#include "stream_k.hpp"
#include "sync.cuh"

namespace gpucheck::kernels::detail {
namespace {

// One work item: its first query row, (batch, K/V head), rows, K/V tiles, and (causal) the
// lowest row modulo the period (packed heads: a tile spanning two heads' rows holds a row 0).
// key0: the first key of its K/V tiles (a stream-K part may start inside the work tile).
struct Work {
  int m0, bh, q_rows, n_tiles, causal_lo, key0;
};

// Persistent when launched with fewer blocks than work tiles: each block walks work tiles
// round by round (nth()), in launch order or heaviest first (work()). kStreamK: past the whole
// rounds, the tiles left are cut among the blocks by K/V steps (HopperParams::part). kDynamic:
// after its first, a block takes the next work tile not yet taken (HopperParams::tile_ctr).
template <bool CAUSAL, int kBM, int kBN, bool kStreamK, bool kDynamic>
struct Schedule {
  const HopperParams& p;
  int off;   // causal: row r sees keys <= r % period + off
  int n_kv;  // K/V tiles of an unmasked work tile

  __device__ __forceinline__ explicit Schedule(const HopperParams& params)
      : p(params), off(params.seq_k - params.period), n_kv((params.seq_k + kBN - 1) / kBN) {}

  // Work tile w: in launch order, the query tiles of one (batch, K/V head) are neighbours
  // (concurrent tiles share K/V in L2), causal ones heaviest first within the head; heavy
  // first in groups (causal), the last query tile of every head of a group of heavy_group
  // heads first, then the one before, then the next group: the heaviest tiles start first,
  // so the light ones fill the end, while the K/V tiles in use stay those of one group.
  __device__ inline Work work(int w) const {
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
  }

  // The k-th work tile of this block, or -1 past the end: round k of gridDim.x tiles, taken in
  // snake order (block b gets position b in even rounds and gridDim.x - 1 - b in odd ones), so
  // with heavy-first tiles every block's sum of work comes out nearly equal.
  __device__ inline int nth(int k) const {
    const int G = static_cast<int>(gridDim.x), b = static_cast<int>(blockIdx.x);
    const long long w = static_cast<long long>(k) * G + ((k & 1) ? G - 1 - b : b);
    return w < p.n_work ? static_cast<int>(w) : -1;
  }

  // The k-th work item of this block into r: a work tile (nth(), work()) or, stream-K past the
  // whole rounds, a part of a tile of the rest (stream_k_part()); false past the end.
  __device__ inline bool item(int k, Work& r) const {
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
  }

  // The dynamic order: block b's first work tile is tile b; the next one the producer takes
  // (take_next()) and hands to the consumers in its Q buffer's slot (Ring::tile_slot()).
  __device__ __forceinline__ static int first_dynamic() { return static_cast<int>(blockIdx.x); }
  __device__ __forceinline__ int take_next() const { return static_cast<int>(gridDim.x) + atomicAdd(p.tile_ctr, 1); }

  // Stream-K: whether the head of split tile `tile` waits for block c's partial (the blocks
  // after this one, while in reach; those without tail steps have none).
  __device__ __forceinline__ bool part_in_reach(int c, int tile) const {
    return stream_k_in_reach(p.n_work, n_kv, static_cast<int>(gridDim.x), p.sk_blocks, c, tile);
  }
  __device__ __forceinline__ bool part_shared(int c, int tile) const {
    return stream_k_shares(p.n_work, n_kv, static_cast<int>(gridDim.x), p.sk_blocks, c, tile);
  }
};

}  // namespace
}  // namespace gpucheck::kernels::detail
