// Stream-K's arithmetic for the hopper attention kernel (attention_hopper_impl.cuh, HopperParams):
// how the work tiles of an unmasked persistent launch are shared among its blocks when they do
// not divide evenly, and when that is worth it. Pure, so that the unit tests check it without a
// GPU (tests/unit/test_stream_k.cpp). 32-bit throughout (the launch checks the range): a 64-bit
// division is a subroutine call in the kernel, and ptxas then no longer sees the block's
// loop counters as uniform (the address arithmetic leaves the uniform datapath: +6% instructions
// in the d128 loop, measured).
#pragma once

#if defined(__CUDACC__)
#define GPUCHECK_STREAM_K_HD __host__ __device__
#else
#define GPUCHECK_STREAM_K_HD
#endif

namespace gpucheck::kernels::detail {

// The first of block b's steps when T steps are cut among G blocks in contiguous ranges:
// floor(T b / G), computed without forming T b (b = G gives T, the end of the last range).
GPUCHECK_STREAM_K_HD constexpr int stream_k_begin(int T, int G, int b) { return T / G * b + T % G * b / G; }

// The schedule: the first n_work / G rounds of whole work tiles as without stream-K (round k,
// block b: tile k G + b or, odd rounds, k G + G - 1 - b), then the R = n_work % G tiles left,
// n_kv K/V steps each (step s: K/V tile s % n_kv of tail tile s / n_kv), cut into G even
// ranges of steps, one per block. The k-th tail part of block b: K/V tiles [j0, j0 + n) of work
// tile `tile`; n == 0 past its range. A tile of the tail is cut among consecutive blocks: the
// first of them computes its head (from K/V tile 0: its range's last part) and adds the
// others' partials to it; each later one with steps computes a part as its range's first
// (j0 > 0), so a block hands over one partial at most (HopperParams::part).
struct StreamKPart {
  int tile, j0, n;
};
GPUCHECK_STREAM_K_HD constexpr StreamKPart stream_k_part(int n_work, int n_kv, int G, int b, int k) {
  const int full = n_work / G * G, T = (n_work - full) * n_kv;
  const int s0 = stream_k_begin(T, G, b), s1 = stream_k_begin(T, G, b + 1);
  const int t = s0 / n_kv + k;
  if (t * n_kv >= s1) return {full + t, 0, 0};
  const int lo = s0 > t * n_kv ? s0 : t * n_kv;
  const int hi = s1 < (t + 1) * n_kv ? s1 : (t + 1) * n_kv;
  return {full + t, lo - t * n_kv, hi - lo};
}
// The blocks after the one that computes tail tile `tile`'s head, c = b + 1, b + 2, ..., while
// stream_k_in_reach(): their ranges begin before the tile's last step. Those of them with a
// non-empty range (stream_k_shares(); with fewer tail steps than blocks some have none) each
// computed a part of the tile and handed over its partial.
GPUCHECK_STREAM_K_HD constexpr bool stream_k_in_reach(int n_work, int n_kv, int G, int c, int tile) {
  const int full = n_work / G * G, T = (n_work - full) * n_kv;
  return c < G && stream_k_begin(T, G, c) < (tile - full + 1) * n_kv;
}
GPUCHECK_STREAM_K_HD constexpr bool stream_k_shares(int n_work, int n_kv, int G, int c, int tile) {
  const int full = n_work / G * G, T = (n_work - full) * n_kv;
  return stream_k_in_reach(n_work, n_kv, G, c, tile) && stream_k_begin(T, G, c + 1) > stream_k_begin(T, G, c);
}

// The floats a warp's lane hands over per split part (HopperParams::part): its D / 2 values of
// O, then the row maxima and the row sums of its two rows. The kernel's slots and the launch's
// workspace size both come from here.
constexpr int stream_k_part_floats(int head_dim) { return head_dim / 2 + 4; }

// Whether stream-K pays: the busiest block's K/V steps with whole work tiles (ceil(n_work / G)
// tiles of n_kv steps) against whole rounds plus an even cut of the rest (n_work / G tiles and
// q = ceil(R n_kv / G) steps) must fall by at least 2% and by 8 steps, and no tile be cut in
// more than three parts (2 q >= n_kv). What a cut costs, measured on the H200 (docs/ATTENTION.md,
// v7): each part starts like a work tile and the head's block adds the later parts' partials one
// after the other; b8 h16 s1024 d64, 1 step of 48 saved, lost 6%; grouped-query b4 h32/8 s4096
// d128, 31 steps saved but 4 tiles cut into 33 parts of one step, lost 1%; b4 h16 s4096 d128
// (15 of 512 saved, tiles in two or three parts) and d64 (10 of 352) gained 1.4-2%. Never with
// n_work <= G, and not where the steps leave 32 bits.
constexpr bool stream_k_pays(long long n_work, long long n_kv, long long blocks) {
  if (blocks <= 0 || n_kv <= 0 || n_work <= blocks || n_work * n_kv > 0x7fffffffLL) return false;
  const long long whole = (n_work + blocks - 1) / blocks * n_kv;
  const long long q = (n_work % blocks * n_kv + blocks - 1) / blocks;
  const long long saved = whole - (n_work / blocks * n_kv + q);
  return saved * 50 >= whole && saved >= 8 && 2 * q >= n_kv;
}

// The causal work order's groups (HopperParams::heavy_group): the (batch, K/V head)s whose work
// tiles run heaviest first together. group > 0: that many (an experiment), at most all. Static
// persistent shares (d64): all heads, one heavy-first sequence that the snake order shares out
// evenly (in groups it becomes a saw, and the busiest block gets 66% more than the mean at s4096
// d128: a model of it, docs/ATTENTION.md v8). Tiles taken as blocks free (a block per tile, or
// the dynamic order at d128): groups whose K and V fit in 16 MB of the L2 (s4096 d128: 8 heads),
// at least one head; all heads at once would leave the last heads' heavy tiles for the end (a
// model of the block scheduler: 7% idle at s4096 d128, none in groups of 4-8).
constexpr int causal_heavy_group(int group, int bkv, long long kv_bytes_per_head, bool static_shares) {
  if (bkv <= 1) return 1;
  if (group > 0) return group < bkv ? group : bkv;
  if (static_shares || kv_bytes_per_head <= 0) return bkv;
  const long long fit = (16LL << 20) / kv_bytes_per_head;
  return fit < 1 ? 1 : fit > bkv ? bkv : static_cast<int>(fit);
}

}  // namespace gpucheck::kernels::detail
