// Stream-K's arithmetic for the hopper attention kernel (hopper/kernel.cuh, HopperParams):
// how the work tiles of an unmasked persistent launch are shared among its blocks when they do
// not divide evenly, and when that is worth it; with the other pure rules of its launch (the
// K/V tile at head dim 128, the causal order's groups). Pure, so that the unit tests check it
// without a GPU (tests/unit/test_stream_k.cpp). 32-bit throughout (the launch checks the
// range): a 64-bit division is a subroutine call in the kernel, and ptxas then no longer sees
// the block's loop counters as uniform (the address arithmetic leaves the uniform datapath).
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
// n_kv K/V steps each (step s: K/V tile s % n_kv of tail tile s / n_kv), cut into P even ranges
// of steps, one for each of the blocks 0 .. P - 1 (1 <= P <= G; the blocks from P on have no
// tail: stream_k_blocks() picks P). The k-th tail part of block b: K/V tiles [j0, j0 + n) of
// work tile `tile`; n == 0 past its range. A tile of the tail is cut among consecutive blocks:
// the first of them computes its head (from K/V tile 0: its range's last part) and adds the
// others' partials to it; each later one with steps computes a part as its range's first
// (j0 > 0), so a block hands over one partial at most (HopperParams::part).
struct StreamKPart {
  int tile, j0, n;
};
GPUCHECK_STREAM_K_HD constexpr StreamKPart stream_k_part(int n_work, int n_kv, int G, int P, int b, int k) {
  const int full = n_work / G * G, T = (n_work - full) * n_kv;
  if (b >= P) return {full, 0, 0};
  const int s0 = stream_k_begin(T, P, b), s1 = stream_k_begin(T, P, b + 1);
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
GPUCHECK_STREAM_K_HD constexpr bool stream_k_in_reach(int n_work, int n_kv, int G, int P, int c, int tile) {
  const int full = n_work / G * G, T = (n_work - full) * n_kv;
  return c < P && stream_k_begin(T, P, c) < (tile - full + 1) * n_kv;
}
GPUCHECK_STREAM_K_HD constexpr bool stream_k_shares(int n_work, int n_kv, int G, int P, int c, int tile) {
  const int full = n_work / G * G, T = (n_work - full) * n_kv;
  return stream_k_in_reach(n_work, n_kv, G, P, c, tile) && stream_k_begin(T, P, c + 1) > stream_k_begin(T, P, c);
}

// The floats a warp's lane hands over per split part (HopperParams::part): its D / 2 values of
// O, then the row maxima and the row sums of its two rows. The kernel's slots and the launch's
// workspace size both come from here.
constexpr int stream_k_part_floats(int head_dim) { return head_dim / 2 + 4; }

// The most blocks one tile of the rest is cut among when its R tiles of n_kv steps are cut into
// P even ranges (stream_k_part()): the ranges from the one holding the tile's first step to the
// one holding its last.
constexpr long long stream_k_max_parts(long long R, long long n_kv, long long P) {
  const long long T = R * n_kv;
  if (T <= 0 || P <= 0) return 0;
  auto range_of = [&](long long s) { return ((s + 1) * P + T - 1) / T - 1; };  // the b with begin(b) <= s < begin(b + 1)
  long long most = 0;
  for (long long t = 0; t < R; ++t) {
    const long long n = range_of((t + 1) * n_kv - 1) - range_of(t * n_kv) + 1;
    most = n > most ? n : most;
  }
  return most;
}

// What a part costs besides its steps, in tenths of a K/V step: the part's start (its Q, the
// first S without a P V beside it) and, for the tile's head, the wait for its partial and the
// add of it (D / 2 + 4 floats a lane, one part after another). Fitted to the H200's
// measurements (docs/ATTENTION.md).
inline constexpr long long kStreamKPartCost10 = 13;

// The blocks among which stream-K cuts the rest (stream_k_part()'s P), or 0 for none: the
// busiest block's K/V steps with whole work tiles (ceil(n_work / G) tiles of n_kv steps)
// against whole rounds plus its range of the rest and what its tiles' parts cost
// (kStreamKPartCost10 for each part after a tile's first), the cheapest of P = G (every block
// takes a range) and P = m R for m = 2, 3, ... while m R < G (R = n_work % G tiles left, each
// then in exactly m parts of n_kv / m steps: fewer partials to add for a tile than with all
// G blocks, at the price of longer ranges). Stream-K where the cheapest cut saves at least 1%
// of the busiest block's steps with the parts' cost, and 8 steps without it (the H200's
// measurements: docs/ATTENTION.md). With fewer work tiles than blocks (decode: a few rows of
// each K/V head over a long K/V) there are no whole rounds and the launch runs P blocks, each
// tile cut into m parts (the K/V split of flash-decoding: more SMs read the K/V at once); not
// with one tile per block, and not where the steps leave 32 bits.
constexpr int stream_k_blocks(long long n_work, long long n_kv, long long G) {
  if (G <= 0 || n_kv <= 0 || n_work <= 0 || n_work * n_kv > 0x7fffffffLL) return 0;
  const long long R = n_work % G;
  if (R == 0) return 0;  // whole rounds (or a tile per block): nothing to balance
  if (n_work < G && R * n_kv < G) return 0;  // fewer tiles than blocks: each launched block needs a step
  const long long whole10 = (n_work / G + 1) * n_kv * 10;
  auto range = [&](long long P) { return (R * n_kv + P - 1) / P; };  // the longest range of the rest
  auto cost10 = [&](long long P, long long parts) { return range(P) * 10 + (parts - 1) * kStreamKPartCost10; };
  long long best_p = G, best = cost10(G, stream_k_max_parts(R, n_kv, G));
  for (long long m = 2; m * R < G && m <= n_kv; ++m) {  // (a part has a step at least)
    const long long c = cost10(m * R, m);
    if (c < best) {
      best = c;
      best_p = m * R;
    }
  }
  const long long saved10 = n_kv * 10 - best;
  return n_kv - range(best_p) >= 8 && saved10 * 100 >= whole10 ? static_cast<int>(best_p) : 0;
}

// Unmasked head dim 128 over several rounds of work tiles: 160-key K/V tiles (the cross-tile
// schedule, two Q buffers: 224 KB of shared memory) rather than 128-key ones where the keys
// padded to whole 160-key tiles are at most 3% more than padded to 128-key ones: a 160-key step
// costs less per key (fewer steps: the barriers, the maximum's reduction and the rescale
// decision once per tile), which pays for that padding (docs/ATTENTION.md has the measurements).
constexpr bool prefer_160_key_tiles(long long seq_k) {
  if (seq_k <= 0) return false;
  return (seq_k + 159) / 160 * 160 * 97 <= (seq_k + 127) / 128 * 128 * 100;
}

// Unmasked d128 (launch_flash_hopper_variant): the 160-key cross-tile launch, given its n_work
// work tiles of n_kv K/V steps on `sms` SMs, where they run several rounds, or where fewer tiles
// than SMs are cut by K/V steps (stream_k_blocks(): decode over a long K/V); one round of whole
// tiles keeps the 176-key tile.
constexpr bool wide_keys_pay(long long n_work, long long n_kv, long long sms) {
  if (n_work <= 0 || n_kv <= 0 || sms <= 0) return false;
  return n_work > sms || (n_work < sms && stream_k_blocks(n_work, n_kv, sms) > 0);
}

// The causal work order's groups (HopperParams::heavy_group): the (batch, K/V head)s whose work
// tiles run heaviest first together. group > 0: that many, at most all (the launch passes 0;
// the unit tests pin the rule). Static persistent shares (d64): all heads, one heavy-first
// sequence that the snake order shares out evenly (in groups it becomes a saw, and the busiest
// block gets far more than the mean). Tiles taken as blocks free (a block per tile, or the
// dynamic order at d128): groups whose K and V fit in 16 MB of the L2, at least one head; all
// heads at once would leave the last heads' heavy tiles for the end (docs/ATTENTION.md models
// both).
constexpr int causal_heavy_group(int group, int bkv, long long kv_bytes_per_head, bool static_shares) {
  if (bkv <= 1) return 1;
  if (group > 0) return group < bkv ? group : bkv;
  if (static_shares || kv_bytes_per_head <= 0) return bkv;
  const long long fit = (16LL << 20) / kv_bytes_per_head;
  return fit < 1 ? 1 : fit > bkv ? bkv : static_cast<int>(fit);
}

}  // namespace gpucheck::kernels::detail
