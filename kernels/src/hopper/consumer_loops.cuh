// The Hopper attention kernel's consumer loops over the block's work items: the cross-tile
// loop (persistent, overlapped), its twin for a consumer without rows, and the per-tile loop
// (overlapped or serial).
#pragma once

#include <cstdint>

#include "consumer.cuh"

namespace gpucheck::kernels::detail {
namespace {

// Across work tiles (two Q buffers): the last P V of one work tile is issued with the first S
// of the next, so the next tile's first softmax runs under that P V and the epilogue comes
// after, instead of the tensor cores idling from the last P V to the next tile's first
// softmax. O of the finished tile stays in o until its epilogue; its row statistics move to
// fin_sum/fin_max.
template <class Cons>
__device__ __forceinline__ void cross_tile_loop(Cons& c) {
  using R = typename Cons::R;
  constexpr int kQBufs = R::kQBufs;
  static_assert(kQBufs == 2 && !Cons::kEarlyQ, "the cross-tile schedule holds two work tiles' Q");
  int qi = 0;
  Work wk;
  (void)c.sched.item(0, wk);  // every block has one (the launch has no more blocks than work tiles)
  int g0 = 0;  // the work item's first K/V tile (counted over the block's)
  c.grant_first();
  c.start_tile();
  mbar_wait(c.ring.q_full(0), 0u);
  c.first_s(c.ring.q_buf(0), wk, 0);
  while (true) {
    for (int j = 1; j < wk.n_tiles; ++j) {
      if (c.step(c.ring.q_buf(qi % kQBufs), wk, j, g0 + j, false)) c.rescale_o();
      c.make_p();
    }
    const int gl = g0 + wk.n_tiles - 1;  // this tile's last K/V tile
    const int qb2 = (qi + 1) % kQBufs;
    Work wk2;
    if constexpr (Cons::kDynamicOrder) {  // the next work tile is the one the producer put in its Q buffer
      mbar_wait(c.ring.q_full(qb2), R::q_phase(qi + 1));
      const int w2 = ld_shared_s32(c.ring.tile_slot(qb2));
      if (w2 < 0) {  // the block's last work item: its last P V alone
        c.last_pv(gl, true);
        break;
      }
      wk2 = c.sched.work(w2);
    } else {
      if (!c.sched.item(qi + 1, wk2)) {  // the block's last work item: its last P V alone
        c.last_pv(gl, true);
        break;
      }
      mbar_wait(c.ring.q_full(qb2), R::q_phase(qi + 1));
    }
    const float fin_sum[2] = {c.row_sum[0], c.row_sum[1]}, fin_max[2] = {c.row_max[0], c.row_max[1]};
    (void)c.step(c.ring.q_buf(qb2), wk2, 0, gl + 1, true);  // the next tile's S[0] with this tile's last P V
    c.epilogue(wk, qi % kQBufs, fin_sum, fin_max);
    c.zero_o();
    c.make_p();
    wk = wk2;
    g0 = gl + 1;
    ++qi;
  }
  c.take_partials(wk, c.row_sum, c.row_max);
  c.epilogue(wk, qi % kQBufs, c.row_sum, c.row_max);
}

// The cross-tile loop of a consumer whose 64 rows are past every work tile's rows
// (Consumer::idle()): no GEMM, no softmax, no store, but cross_tile_loop()'s waits, turns and
// releases, phase for phase, so the producer and the consumers with rows see the same
// arrivals. Its warps neither leave stream-K partials nor take them, since the same consumer
// idles in every block. Why: its GEMMs on empty rows took tensor-pipe time from the consumer
// with rows. A loop of its own, not conditions round the GEMMs (with those ptxas serialised
// every wgmma of the kernel, C7514), and not cross_tile_loop() templated on its phases either:
// that changed the working loop's SASS.
template <class Cons>
__device__ __forceinline__ void idle_cross_tile_loop(Cons& c) {
  using R = typename Cons::R;
  constexpr int kQBufs = R::kQBufs;
  int qi = 0;
  Work wk;
  (void)c.sched.item(0, wk);
  int g0 = 0;
  // One phase of cross_tile_loop(): the K stage gk and the V stage gv it waits for (-1: none).
  auto idle_phase = [&](int gk, int gv, bool last) {
    if (gk >= 0) mbar_wait(c.ring.k_full(R::stage(gk)), R::phase(gk));
    if (gv >= 0) mbar_wait(c.ring.v_full(R::stage(gv)), R::phase(gv));
    c.turn_begin();
    c.turn_end(last);
    if (gk >= 0) c.release(c.ring.k_empty(R::stage(gk)));
    if (gv >= 0) c.release(c.ring.v_empty(R::stage(gv)));
  };
  c.grant_first();
  mbar_wait(c.ring.q_full(0), 0u);
  idle_phase(0, -1, false);  // first_s()
  while (true) {
    for (int j = 1; j < wk.n_tiles; ++j) idle_phase(g0 + j, g0 + j - 1, false);  // step()
    const int gl = g0 + wk.n_tiles - 1;
    const int qb2 = (qi + 1) % kQBufs;
    Work wk2;
    if (!c.sched.item(qi + 1, wk2)) {
      idle_phase(-1, gl, true);  // last_pv()
      break;
    }
    mbar_wait(c.ring.q_full(qb2), R::q_phase(qi + 1));
    idle_phase(gl + 1, gl, false);  // the next tile's S[0] beside this tile's last P V
    c.release(c.ring.q_empty(qi % kQBufs));  // epilogue()
    wk = wk2;
    g0 = gl + 1;
    ++qi;
  }
  c.release(c.ring.q_empty(qi % kQBufs));
}

// One work tile after another, each from its first K/V tile (no cross-tile overlap).
// kOverlap: per work tile n_tiles + 1 issue phases; the last consumer grants consumer 0 the
// first turn of each tile and skips its arrival after the tile's last phase (its grant for the
// next tile comes after consumer 0's last sync of this one: it waited for it round the ring).
// Serial: Consumer::serial_step() for each K/V tile.
template <bool kOverlap, class Cons>
__device__ __forceinline__ void per_tile_loop(Cons& c) {
  using R = typename Cons::R;
  constexpr int kQBufs = R::kQBufs;
  constexpr bool kEarlyQ = Cons::kEarlyQ;
  int it0 = 0;  // K/V tiles consumed before this work tile
  int qi = 0;
  for (int w = c.sched.nth(0); w >= 0; w = c.sched.nth(++qi)) {
    const Work wk = c.sched.work(w);
    const int qb = qi % kQBufs;
    const std::uint32_t sQ = c.ring.q_buf(qb);
    c.start_tile();
    const int n_tiles = wk.n_tiles;
    mbar_wait(c.ring.q_full(qb), R::q_phase(qi));
    if constexpr (!kOverlap) {
      for (int j = 0; j < n_tiles; ++j) c.serial_step(sQ, wk, j, it0 + j, qb);
    } else {
      c.grant_first();
      c.first_s(sQ, wk, it0);
      for (int j = 1; j < n_tiles; ++j) {
        if (c.step(sQ, wk, j, it0 + j, false)) c.rescale_o();
        c.make_p();
      }
      if constexpr (kEarlyQ) c.release(c.ring.q_empty(qb));  // every S = Q K^T of this tile is done
      c.last_pv(it0 + n_tiles - 1, true);
    }
    it0 += n_tiles;
    c.epilogue(wk, qb, c.row_sum, c.row_max);
  }
}

}  // namespace
}  // namespace gpucheck::kernels::detail
