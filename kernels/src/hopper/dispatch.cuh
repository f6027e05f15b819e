// Which configuration (hopper/config.cuh), schedule and launch each head dim runs, as one table
// per head dim: the first row whose mask, schedule and condition hold runs. Why each row wins
// (measured on the H200): docs/ATTENTION.md.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "../attention_launch.hpp"
#include "config.cuh"
#include "launch.cuh"
#include "stream_k.hpp"

namespace gpucheck::kernels::detail {
namespace {

// One call of launch_flash_hopper_variant. rows: the packed query rows of a (batch, K/V head).
struct HopperCase {
  const AttentionProblem& pr;
  const FlashParams& fp;
  bool overlap;  // the FlashAttention-3 schedule; false: the serial one
  cudaStream_t stream;
  long long rows;
};

enum class Mask { any, causal, none };
// overlapped or serial: that schedule only (the row matches only that request); as_asked: the
// one the caller asked for (both are instantiated).
enum class Sched { overlapped, serial, as_asked };
enum class Blocks { per_tile, persistent };

// A launch of all rows with configuration C.
template <typename T, int D, bool kCausal, Sched S, class Cfg, Blocks B>
void whole(const HopperCase& c) {
  using C = Tile<Cfg>;
  constexpr bool kPersistent = B == Blocks::persistent;
  if constexpr (S == Sched::as_asked) {
    if (c.overlap)
      launch<T, D, kCausal, true, C>(c.pr, c.fp, c.stream, kPersistent, 0, c.rows, false, nullptr);
    else
      launch<T, D, kCausal, false, C>(c.pr, c.fp, c.stream, kPersistent, 0, c.rows, false, nullptr);
  } else {
    launch<T, D, kCausal, S == Sched::overlapped, C>(c.pr, c.fp, c.stream, kPersistent, 0, c.rows, false, nullptr);
  }
}
// The rows split between configurations A and B (launch_split()).
template <typename T, int D, bool kCausal, Sched S, class A, class B, Blocks BA, Blocks BB>
void split(const HopperCase& c) {
  constexpr bool kPa = BA == Blocks::persistent, kPb = BB == Blocks::persistent;
  if constexpr (S == Sched::as_asked) {
    if (c.overlap)
      launch_split<T, D, kCausal, true, Tile<A>, Tile<B>>(c.pr, c.fp, c.stream, kPa, kPb);
    else
      launch_split<T, D, kCausal, false, Tile<A>, Tile<B>>(c.pr, c.fp, c.stream, kPa, kPb);
  } else {
    launch_split<T, D, kCausal, S == Sched::overlapped, Tile<A>, Tile<B>>(c.pr, c.fp, c.stream, kPa, kPb);
  }
}

// The conditions beyond mask and schedule (nullptr in a row: always).
inline bool more_than_2048_rows(const HopperCase& c) { return c.rows > 2048; }
inline bool at_most_1024_rows(const HopperCase& c) { return c.rows <= 1024; }
inline bool at_most_4096_keys(const HopperCase& c) { return c.pr.seq_k <= 4096; }
// 160-key tiles where the keys pad to them with at most 3% more than to 128-key ones, and the
// launch runs several rounds of work tiles or a K/V split (wide_keys_pay()).
inline bool wide_keys(const HopperCase& c) {
  using W = Tile<D128Keys160>;
  return prefer_160_key_tiles(c.pr.seq_k) &&
         wide_keys_pay((c.rows + W::kBM - 1) / W::kBM * (c.pr.batch * (c.pr.heads / c.fp.kv_group)),
                       (c.pr.seq_k + W::kBN - 1) / W::kBN, sm_count());
}

struct HopperRoute {
  Mask mask;
  Sched sched;
  bool (*when)(const HopperCase&);
  void (*run)(const HopperCase&);
};

template <typename T, int D>
struct HopperRoutes;

// d64: 3 consumers (192 rows) where the rows fill them, the rest of the rows in 128-row tiles
// launched first; short causal heads in 128-row tiles (less masked work on the diagonal, more
// tiles to balance). Persistent causal blocks take static shares, heaviest first (nth()).
template <typename T>
struct HopperRoutes<T, 64> {
  static constexpr Blocks P = Blocks::persistent, N = Blocks::per_tile;
  static constexpr HopperRoute table[4] = {
      {Mask::none, Sched::overlapped, more_than_2048_rows, split<T, 64, false, Sched::overlapped, D64Rows192, D64Rows128, P, P>},
      {Mask::none, Sched::as_asked, nullptr, whole<T, 64, false, Sched::as_asked, D64Rows192, P>},
      {Mask::causal, Sched::as_asked, at_most_1024_rows, whole<T, 64, true, Sched::as_asked, D64Rows128, P>},
      {Mask::causal, Sched::as_asked, nullptr, split<T, 64, true, Sched::as_asked, D64Rows192, D64Rows128, P, N>},
  };
};

// d128: causal overlapped in the dynamic order (launch(); too few tiles, or a stream being
// captured: a block per tile), causal serial a block per tile with 3 stages; unmasked 160-key
// tiles where they pay, else 128-key tiles up to 4096 keys, then 176-key tiles (one round).
template <typename T>
struct HopperRoutes<T, 128> {
  static constexpr Blocks P = Blocks::persistent, N = Blocks::per_tile;
  static constexpr HopperRoute table[5] = {
      {Mask::causal, Sched::overlapped, nullptr, whole<T, 128, true, Sched::overlapped, D128Keys128, P>},
      {Mask::causal, Sched::serial, nullptr, whole<T, 128, true, Sched::serial, D128Serial, N>},
      {Mask::none, Sched::as_asked, wide_keys, whole<T, 128, false, Sched::as_asked, D128Keys160, P>},
      {Mask::none, Sched::as_asked, at_most_4096_keys, whole<T, 128, false, Sched::as_asked, D128Keys128, P>},
      {Mask::none, Sched::as_asked, nullptr, whole<T, 128, false, Sched::as_asked, D128Keys176, P>},
  };
};

// d256: 80-key tiles, one Q buffer, a block per tile.
template <typename T>
struct HopperRoutes<T, 256> {
  static constexpr Blocks N = Blocks::per_tile;
  static constexpr HopperRoute table[2] = {
      {Mask::causal, Sched::as_asked, nullptr, whole<T, 256, true, Sched::as_asked, D256Keys80, N>},
      {Mask::none, Sched::as_asked, nullptr, whole<T, 256, false, Sched::as_asked, D256Keys80, N>},
  };
};

inline bool route_matches(const HopperRoute& r, const HopperCase& c) {
  if (r.mask != Mask::any && (r.mask == Mask::causal) != c.pr.causal) return false;
  if (r.sched != Sched::as_asked && (r.sched == Sched::overlapped) != c.overlap) return false;
  return r.when == nullptr || r.when(c);
}

}  // namespace

// Every variant of one dtype and head dim: the first row of its table that matches. Only the
// configurations and masks the rows run are instantiated.
template <typename T, int D>
void launch_flash_hopper_variant(const AttentionProblem& pr, const FlashParams& fp, bool overlap, cudaStream_t stream) {
  const HopperCase c{pr, fp, overlap, stream, static_cast<long long>(fp.kv_group) * pr.seq_q};
  for (const HopperRoute& r : HopperRoutes<T, D>::table)
    if (route_matches(r, c)) return r.run(c);
}

// Whether the variant's machine code loads on the current device (an sm_90a image exists).
template <typename T, int D>
bool flash_hopper_variant_loadable() {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, flash_fwd_hopper_kernel<T, D, true, false, Tile<D128Serial>>) != cudaSuccess) {
    (void)cudaGetLastError();  // clear: a missing image is an answer here, not an error
    return false;
  }
  return true;
}

}  // namespace gpucheck::kernels::detail
