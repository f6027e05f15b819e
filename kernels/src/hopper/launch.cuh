// The Hopper attention kernel's host side: its tensor maps, one launch over a range of packed
// rows (launch()), with the workspace of its persistent orders, and the split of a head's rows
// between two tile configurations (launch_split()).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "../attention_launch.hpp"
#include "gpucheck/check_cuda.hpp"
#include "config.cuh"
#include "kernel.cuh"
#include "params.cuh"
#include "stream_k.hpp"

namespace gpucheck::kernels::detail {
namespace {

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

// The current device's SMs: a persistent launch runs a block per SM.
int sm_count() {
  int device = 0, n = 0;
  GPUCHECK_CUDA(cudaGetDevice(&device));
  GPUCHECK_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  return n;
}

// The persistent launch's orders and their workspace (HopperParams::tile_ctr, part, flags):
// which kernel variant runs, and how many blocks.
struct HopperOrder {
  long long blocks;
  bool dynamic;
  bool stream_k;
};

// The dynamic order (HopperParams::tile_ctr), causal head dim 128, with its counter: 4 bytes
// from the library's stream-ordered pool, zeroed on the stream (none to be had, a stream being
// captured: a block per tile instead, the hardware's order, without the loads under the
// previous tile). Only with at least three work tiles per SM: the counter's allocation and
// memset cost a fixed time that the order gains back only over many tiles (docs/ATTENTION.md).
// False where the launch is not persistent after all (persistent is then cleared).
inline bool acquire_dynamic(HopperWorkspace& ws, long long n_work, int sms, bool& persistent, cudaStream_t stream) {
  if (!persistent) return false;
  const bool dynamic = n_work >= 3LL * sms && ws.acquire(sizeof(int), stream);
  if (dynamic) GPUCHECK_CUDA(cudaMemsetAsync(ws.ptr, 0, sizeof(int), stream));
  else persistent = false;
  return dynamic;
}

// Stream-K (HopperParams; the kernel's kStreamK variant) where stream_k_blocks() pays, with its
// workspace: a partial per block and warp, stream-ordered from the library's pool
// (HopperWorkspace). None to be had (a stream being captured, no memory): without stream-K.
// Fewer work tiles than SMs (decode): no whole rounds; the launch is the blocks of the cut,
// each tile split into parts by K/V steps (stream_k_blocks() leaves every block a step).
// Returns the launch's blocks.
template <int D, class C>
long long acquire_stream_k(HopperWorkspace& ws, HopperParams& hp, const AttentionProblem& pr, long long n_work,
                           long long blocks, int sms, cudaStream_t stream) {
  const long long n_kv = (pr.seq_k + C::kBN - 1) / C::kBN;
  const int sk_blocks = stream_k_blocks(n_work, n_kv, sms);  // 0: none (also: n_work n_kv < 2^31)
  if (sk_blocks == 0) return blocks;
  const long long sk_grid = n_work < sms ? sk_blocks : blocks;
  constexpr long long kWarps = C::kConsumers * 4;
  const std::size_t part_bytes = static_cast<std::size_t>(sk_grid * kWarps * stream_k_part_floats(D) * 32) * sizeof(float);
  const std::size_t bytes = part_bytes + static_cast<std::size_t>(sk_grid * kWarps) * sizeof(unsigned long long);
  if (!ws.acquire(bytes, stream)) return blocks;
  hp.part = static_cast<float*>(ws.ptr);
  hp.flags = reinterpret_cast<unsigned long long*>(static_cast<char*>(ws.ptr) + part_bytes);
  hp.epoch = next_hopper_epoch();
  hp.sk_blocks = sk_blocks;
  return sk_grid;
}

// Launches the kernel over the packed rows [begin, end) of every (batch, K/V head), always
// with programmatic stream serialization (programmatic dependent launch): its blocks may start
// while the kernel before it in the stream still runs its last blocks, so that block launch,
// shared-memory carve-out, barrier set-up and the tensor-map fetch come off the gap between
// the two kernels. It then waits for that kernel to finish before it touches memory
// (HopperParams::wait_prior), whatever that kernel is (a kernel that never signals lets this
// one launch only at its end; a memset or copy before it, plain stream order). after_pdl: the
// second part of a split (launch_split()), which waits for the first part at its exit instead.
// Persistent: stream-K where stream_k_blocks() finds a cut that pays; causal head dim 128 the
// dynamic order (at d64 static shares beat it). hold: if not null (empty), the launch's
// workspace moves there instead of going back to the pool when launch() returns (launch_split()).
template <typename T, int D, bool CAUSAL, bool kOverlap, class C>
void launch(const AttentionProblem& pr, const FlashParams& fp, cudaStream_t stream, bool persistent, long long begin,
            long long end, bool after_pdl, HopperWorkspace* hold) {
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
  HopperWorkspace ws;
  bool dynamic = false;
  const int sms = persistent ? sm_count() : 0;  // (a block per tile needs no SM count)
  if constexpr (kOverlap && C::kCrossTile && CAUSAL && D == 128) dynamic = acquire_dynamic(ws, n_work, sms, persistent, stream);
  // Causal work order: heaviest first, in groups of heads (causal_heavy_group()): all heads for
  // static persistent shares, as many as fit in 16 MB of L2 where tiles are taken as blocks free.
  const int heavy_group = causal_heavy_group(0, bkv, 2LL * pr.seq_k * D * 2, persistent && !dynamic);
  // Persistent: one block per SM walks the work tiles (stream-K with fewer tiles than SMs: the
  // blocks of the cut); otherwise one block per work tile.
  long long blocks = persistent ? std::min<long long>(n_work, sms) : n_work;
  HopperParams hp{};
  hp.o = fp.o;
  hp.lse = fp.lse;
  hp.rows = static_cast<int>(rows);
  hp.period = pr.seq_q;
  hp.seq_k = pr.seq_k;
  hp.scale_log2 = fp.scale_log2;
  hp.row_begin = static_cast<int>(begin);
  hp.row_end = static_cast<int>(end);
  hp.m_blocks = static_cast<int>(m_blocks);
  hp.n_work = static_cast<int>(n_work);
  hp.heavy_group = CAUSAL ? heavy_group : 0;
  hp.part = nullptr;
  hp.flags = nullptr;
  hp.epoch = 0;
  hp.sk_blocks = 0;
  hp.tile_ctr = nullptr;
  hp.wait_prior = after_pdl ? 0 : 1;
  auto* kernel = flash_fwd_hopper_kernel<T, D, CAUSAL, kOverlap, C>;
  if constexpr (kOverlap && C::kCrossTile && CAUSAL && D == 128) {
    if (dynamic) {
      hp.tile_ctr = static_cast<int*>(ws.ptr);
      kernel = flash_fwd_hopper_kernel<T, D, CAUSAL, kOverlap, C, false, true>;
    }
  }
  if constexpr (kOverlap && C::kCrossTile && !CAUSAL) {
    if (persistent) {
      const long long sk_grid = acquire_stream_k<D, C>(ws, hp, pr, n_work, blocks, sms, stream);
      if (hp.sk_blocks > 0) {
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
  cfg.numAttrs = 1;
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
    launch<T, D, CAUSAL, kOverlap, CB>(pr, fp, stream, persistent_b, split, rows, false, &first);
  if (split > 0) launch<T, D, CAUSAL, kOverlap, CA>(pr, fp, stream, persistent_a, 0, split, split < rows, nullptr);
}

}  // namespace
}  // namespace gpucheck::kernels::detail
