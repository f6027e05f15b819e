// The Hopper attention kernel's tile configurations, each a type with named fields, the block
// shape they imply (Tile), and the shared-memory layout and barrier ring of a block (Smem, Ring).
#pragma once

#include <cstdint>

#include "../attention_common.cuh"

namespace gpucheck::kernels::detail {
namespace {

// A configuration's fields:
//   consumers     consumer warpgroups of 64 query rows each (a work tile: 64 x consumers rows)
//   keys          keys per K/V tile
//   stages        the ring of K/V buffers
//   q_buffers     Q buffers (2: the next work tile's Q loads while this one runs)
//   lazy_rescale  O and the row sums are rescaled only when a row's maximum grows by more than
//                 2^8 (Consumer::softmax())
//   early_q       the consumers give the Q buffer back as soon as their last S = Q K^T is done
//                 and store O from registers instead of staging it in the Q buffer, so that
//                 with one Q buffer the producer loads the next work tile's Q under this tile's
//                 last P V and epilogue (with two it loads it a tile ahead anyway)
//   cross_tile    persistent blocks issue a tile's last P V with the next tile's first S
// The configurations each head dim runs: hopper/dispatch.cuh (why: docs/ATTENTION.md).
struct D64Rows192 {  // d64: no lazy rescale, its vote costs more than the multiplies it saves
  static constexpr int consumers = 3, keys = 128, stages = 2, q_buffers = 2;
  static constexpr bool lazy_rescale = false, early_q = false, cross_tile = true;
};
struct D64Rows128 {  // d64, the rows past the last whole 192-row tile, and short causal heads
  static constexpr int consumers = 2, keys = 128, stages = 2, q_buffers = 2;
  static constexpr bool lazy_rescale = false, early_q = false, cross_tile = true;
};
struct D128Keys128 {
  static constexpr int consumers = 2, keys = 128, stages = 2, q_buffers = 2;
  static constexpr bool lazy_rescale = true, early_q = false, cross_tile = true;
};
struct D128Keys160 {  // several rounds of work tiles, or a K/V split (wide_keys_pay())
  static constexpr int consumers = 2, keys = 160, stages = 2, q_buffers = 2;
  static constexpr bool lazy_rescale = true, early_q = false, cross_tile = true;
};
struct D128Keys176 {  // one round of whole work tiles over many keys
  static constexpr int consumers = 2, keys = 176, stages = 2, q_buffers = 1;
  static constexpr bool lazy_rescale = true, early_q = true, cross_tile = false;
};
struct D128Serial {  // the serial schedule, causal
  static constexpr int consumers = 2, keys = 128, stages = 3, q_buffers = 1;
  static constexpr bool lazy_rescale = true, early_q = false, cross_tile = false;
};
struct D256Keys80 {  // Q 64 KB + 2 x 2 x 40 KB of K/V
  static constexpr int consumers = 2, keys = 80, stages = 2, q_buffers = 1;
  static constexpr bool lazy_rescale = true, early_q = false, cross_tile = false;
};

// The block a configuration implies. setmaxnreg budgets: the producer warpgroup keeps 24
// registers, the consumers share the rest of the 64K (2 consumers: 240 each; 3: 160). Four
// consumers would get 112: setmaxnreg.inc can only hand out what the launch allocated (640
// threads x 96 registers, less the producer's 24), and 120 deadlocked.
template <class Cfg>
struct Tile {
  static constexpr bool kLazyRescale = Cfg::lazy_rescale;
  static constexpr bool kEarlyQ = Cfg::early_q;
  static constexpr bool kCrossTile = Cfg::cross_tile;
  static constexpr int kConsumers = Cfg::consumers;
  static constexpr int kBM = 64 * Cfg::consumers;
  static constexpr int kBN = Cfg::keys;
  static constexpr int kStages = Cfg::stages;
  static constexpr int kQBufs = Cfg::q_buffers;
  static constexpr int kThreads = 128 * (1 + Cfg::consumers);
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = Cfg::consumers == 2 ? 240 : 160;
  static_assert(kConsumers == 2 || kConsumers == 3, "two or three consumer warpgroups");
  static_assert(kBN % 16 == 0 && kBN <= 256, "keys per tile: a multiple of 16, at most 256 (a TMA box)");
  static_assert(128 * kProducerRegs + 128 * kConsumers * kConsumerRegs <= 65536, "register file");
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

// A block's buffers and barriers in shared memory, as the producer and the consumers both see
// them. K/V tile g of the block (counted over all its work tiles) is in ring slot stage(g)
// with phase(g); work tile i's Q is in buffer i % kQBufs with phase q_phase(i).
template <int D, class C>
struct Ring {
  using L = Smem<D, C>;
  static constexpr int kStages = C::kStages, kQBufs = C::kQBufs;
  std::uint32_t base, sK, sV, bars;

  __device__ __forceinline__ explicit Ring(const unsigned char* smem_raw)
      : base((smem_u32(smem_raw) + 1023u) & ~1023u), sK(base + L::kK), sV(base + L::kV), bars(base + L::kBar) {}

  __device__ inline std::uint32_t k_full(int s) const { return bars + 8u * s; }
  __device__ inline std::uint32_t v_full(int s) const { return bars + 8u * (kStages + s); }
  __device__ inline std::uint32_t k_empty(int s) const { return bars + 8u * (2 * kStages + s); }
  __device__ inline std::uint32_t v_empty(int s) const { return bars + 8u * (3 * kStages + s); }
  __device__ inline std::uint32_t q_full(int b) const { return bars + 8u * (4 * kStages + b); }
  __device__ inline std::uint32_t q_empty(int b) const { return bars + 8u * (4 * kStages + kQBufs + b); }
  __device__ inline std::uint32_t q_buf(int b) const {
    return base + L::kQ + static_cast<std::uint32_t>(b * L::kQBytes);
  }
  // The dynamic order: the work tile whose Q is in buffer b (the producer writes it before the
  // buffer's q_full arrival, whose completion the consumers wait for: release and acquire).
  __device__ inline std::uint32_t tile_slot(int b) const {
    return base + L::kTileSlot + 4u * static_cast<std::uint32_t>(b);
  }
  static __device__ inline int stage(int g) { return g % kStages; }
  static __device__ inline std::uint32_t phase(int g) { return static_cast<std::uint32_t>(g / kStages) & 1u; }
  static __device__ inline std::uint32_t q_phase(int i) { return static_cast<std::uint32_t>(i / kQBufs) & 1u; }
};

}  // namespace
}  // namespace gpucheck::kernels::detail
