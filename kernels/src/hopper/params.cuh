// What the Hopper attention kernel reads besides its tensor maps (HopperParams), filled by
// field name in hopper/launch.cuh.
#pragma once

namespace gpucheck::kernels::detail {
namespace {

// What the kernel reads besides the tensor maps. Grouped-query heads are packed: the `group`
// query heads of one K/V head are one sequence of rows = group * period rows (their rows are
// contiguous in BHSD), so a block's K/V tiles serve all of them. period = seq_q of the problem.
// A launch covers the packed rows [row_begin, row_end) of every (batch, K/V head): all of them,
// or one part of a split between two tile configurations (launch_split(), hopper/launch.cuh).
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
                    // heaviest first (Schedule::work()); 0: launch order
  // Stream-K (the kernel's kStreamK variant, launched where stream_k_blocks() finds a cut that
  // pays: unmasked persistent launches of the cross-tile schedule whose work tiles do not divide
  // evenly among the blocks): after the whole rounds, the K/V steps of the tiles left are cut
  // evenly among the first sk_blocks blocks (hopper/stream_k.hpp), so such a tile is split
  // among consecutive blocks. Each later one computes its part first and leaves O, the row maxima and sums unnormalized in its
  // slot of `part` (a lane's registers, [block][warp][D / 2 + 4][32 lanes]), then sets its
  // warp's flag to `epoch`; the first computes the head (from K/V tile 0) last, waits for the
  // flags, adds the partials to its own and stores the tile. epoch: unique per launch, so the
  // workspace needs no clearing. The whole rounds keep the launch order (a cut of all tiles
  // into ranges puts every head's K/V in use at once, more than the L2 holds).
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

}  // namespace
}  // namespace gpucheck::kernels::detail
