// FlashAttention-2 style forward kernel on mma.sync m16n8k16 (sm_80 and later).
//
// One block of 4 warps per (128-query tile, head, batch); each warp owns 32 query rows (two
// m16 tiles). Q stays in shared memory and is read with ldmatrix per K tile; K and V tiles
// stream through one shared buffer each with cp.async, overlapped FlashAttention-2 style:
// V[j] loads during S = Q K[j]^T and the softmax, K[j+1] loads during O += P V[j]. Shared
// rows are 16-byte chunks XOR-swizzled by (row % 8), so ldmatrix and the cp.async stores are
// free of bank conflicts. The online softmax works in log2 units (scale*log2e folded into one
// FFMA before ex2), and P goes from the S accumulators straight into the A operand of P.V:
// the m16n8 accumulator layout of two adjacent n-tiles is the m16n8k16 A layout.
// Causal: tiles right of the diagonal are never loaded, only tiles that cross the diagonal
// (or the sequence end) are masked, and the blocks with the most tiles start first.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "attention_launch.hpp"
#include "gpucheck/check_cuda.hpp"

namespace gpucheck::kernels::detail {
namespace {

constexpr int kThreads = 128;  // 4 warps
constexpr int kBlockM = 128;   // query rows per block, 32 per warp
constexpr int kWarpM = 32;
constexpr int kMTiles = kWarpM / 16;

// Tile of kRows rows x D columns from global rows [0, rows_valid) into swizzled shared
// memory; rows past rows_valid are zero-filled (finite garbage for tails never reaches O).
template <int D, int kRows>
__device__ __forceinline__ void load_tile(std::uint32_t s_base, const void* g_base, int rows_valid, int tid) {
  constexpr int kChunks = D / 8;                  // 16-byte chunks per row
  constexpr int kRowsPerPass = kThreads / kChunks;  // a multiple of 8: the swizzle is per-thread constant
  static_assert(kRows % kRowsPerPass == 0 && kRowsPerPass % 8 == 0, "tile must split evenly over the block");
  const int r0 = tid / kChunks;
  const int c = tid % kChunks;
  const std::uint32_t s0 = s_base + static_cast<std::uint32_t>((r0 * D + ((c ^ (r0 & 7)) << 3)) * 2);
  const auto* g0 = static_cast<const unsigned char*>(g_base) + (static_cast<std::size_t>(r0) * D + c * 8) * 2;
#pragma unroll
  for (int i = 0; i < kRows / kRowsPerPass; ++i) {
    const bool ok = r0 + i * kRowsPerPass < rows_valid;
    const unsigned char* src = ok ? g0 + static_cast<std::size_t>(i) * kRowsPerPass * D * 2 : g0;
    cp_async_16(s0 + static_cast<std::uint32_t>(i * kRowsPerPass * D * 2), src, ok);
  }
}

// kQRegs: Q fragments live in registers for the whole block (d64: 32 registers) instead
// of being re-read from shared memory for every K tile.
template <typename T, int D, int BN, bool CAUSAL, bool kQRegs>
__global__ void __launch_bounds__(kThreads, 2) flash_fwd_mma_kernel(FlashParams p) {
  constexpr int kNT = BN / 8;    // n-tiles of S per warp row block
  constexpr int kKD = D / 16;    // k-steps of Q K^T
  constexpr int kKN = BN / 16;   // k-steps of P V
  constexpr int kDT = D / 8;     // n-tiles of O
  constexpr int kRowBytes = D * 2;

  extern __shared__ __align__(128) unsigned char smem[];
  const std::uint32_t sQ = smem_u32(smem);
  const std::uint32_t sK = sQ + kBlockM * kRowBytes;
  const std::uint32_t sV = sK + BN * kRowBytes;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int g = lane >> 2;  // mma group id: accumulator rows g and g+8
  const int t = lane & 3;   // accumulator columns 2t, 2t+1

  // Causal blocks differ in work: start the ones with the most key tiles first.
  const int m_block = CAUSAL ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  const int m0 = m_block * kBlockM;
  const std::size_t bh = static_cast<std::size_t>(blockIdx.z) * p.heads + blockIdx.y;
  // Grouped-query: query head h reads K/V head h / kv_group of the same batch.
  const std::size_t bkv = static_cast<std::size_t>(blockIdx.z) * (p.heads / p.kv_group) + blockIdx.y / p.kv_group;
  const T* gQ = static_cast<const T*>(p.q) + (bh * p.seq_q + m0) * D;
  const T* gK = static_cast<const T*>(p.k) + bkv * p.seq_k * D;
  const T* gV = static_cast<const T*>(p.v) + bkv * p.seq_k * D;
  const int off = p.seq_k - p.seq_q;  // causal: row i sees keys <= i + off
  const int q_rows = min(kBlockM, p.seq_q - m0);

  int n_tiles = (p.seq_k + BN - 1) / BN;
  if (CAUSAL) n_tiles = min(n_tiles, (m0 + q_rows - 1 + off) / BN + 1);

  load_tile<D, kBlockM>(sQ, gQ, q_rows, tid);
  load_tile<D, BN>(sK, gK, p.seq_k, tid);
  cp_async_commit();

  // Per-lane ldmatrix addresses. Rows used by a lane are all congruent to lane mod 8, so the
  // swizzle is an XOR of the chunk index with a per-lane constant.
  const int row16 = lane & 15;
  const int hi16 = lane >> 4;
  const std::uint32_t q_addr = sQ + static_cast<std::uint32_t>((warp * kWarpM + row16) * kRowBytes);
  const int q_x = hi16 ^ (lane & 7);
  const std::uint32_t k_addr = sK + static_cast<std::uint32_t>(((lane & 7) + (hi16 << 3)) * kRowBytes);
  const int k_x = ((lane >> 3) & 1) ^ (lane & 7);
  const std::uint32_t v_addr = sV + static_cast<std::uint32_t>(row16 * kRowBytes);
  const int v_x = q_x;

  float o[kMTiles][kDT][4];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[mt][dt][e] = 0.f;
  float row_max[kMTiles][2];  // running max of scale*log2e*s, per accumulator row
  float row_sum[kMTiles][2];  // this lane's share of the row's sum of exp2 (quad-reduced at the end)
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      row_max[mt][h] = -INFINITY;
      row_sum[mt][h] = 0.f;
    }

  std::uint32_t qf[kMTiles][kQRegs ? kKD : 1][4];
  const float sl2 = p.scale_log2;
  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait<0>();
    __syncthreads();  // K[j] (and Q) landed; every warp is done with V[j-1]
    if (kQRegs && j == 0) {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int kt = 0; kt < (kQRegs ? kKD : 1); ++kt)
          ldsm_x4(q_addr + static_cast<std::uint32_t>(mt * 16 * kRowBytes + (((2 * kt) ^ q_x) << 4)), qf[mt][kt]);
    }
    load_tile<D, BN>(sV, gV + static_cast<std::size_t>(j) * BN * D, p.seq_k - j * BN, tid);
    cp_async_commit();

    // S = Q K[j]^T
    float s[kMTiles][kNT][4];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.f;
#pragma unroll
    for (int kt = 0; kt < kKD; ++kt) {
      std::uint32_t a[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        if constexpr (kQRegs) {
#pragma unroll
          for (int e = 0; e < 4; ++e) a[mt][e] = qf[mt][kQRegs ? kt : 0][e];
        } else {
          ldsm_x4(q_addr + static_cast<std::uint32_t>(mt * 16 * kRowBytes + (((2 * kt) ^ q_x) << 4)), a[mt]);
        }
      }
#pragma unroll
      for (int np = 0; np < kNT / 2; ++np) {
        std::uint32_t b[4];
        ldsm_x4(k_addr + static_cast<std::uint32_t>(np * 16 * kRowBytes + (((2 * kt) ^ k_x) << 4)), b);
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          mma_16816<T>(s[mt][2 * np], a[mt], b[0], b[1]);
          mma_16816<T>(s[mt][2 * np + 1], a[mt], b[2], b[3]);
        }
      }
    }

    // Mask keys past the sequence end and, on tiles crossing the diagonal, above it.
    const int key_end = (j + 1) * BN;
    const bool mask = key_end > p.seq_k || (CAUSAL && key_end - 1 > m0 + off);
    if (mask) {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + warp * kWarpM + mt * 16 + g + 8 * h;
          const int limit = CAUSAL ? min(row + off + 1, p.seq_k) : p.seq_k;  // keys < limit visible
#pragma unroll
          for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              if (j * BN + nt * 8 + 2 * t + e >= limit) s[mt][nt][2 * h + e] = -INFINITY;
        }
    }

    // Online softmax: new running max, rescale O and the sum, P = exp2(s*sl2 - max).
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(row_max[mt][h], mx * sl2);
        // A row with no visible key so far keeps max -inf; use 0 so that no inf - inf appears.
        const float m_use = m_new == -INFINITY ? 0.f : m_new;
        const float corr = fast_exp2(row_max[mt][h] - m_use);
        row_max[mt][h] = m_new;
        float sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float pv = fast_exp2(fmaf(s[mt][nt][2 * h + e], sl2, -m_use));
            s[mt][nt][2 * h + e] = pv;
            sum += pv;
          }
        row_sum[mt][h] = row_sum[mt][h] * corr + sum;
#pragma unroll
        for (int dt = 0; dt < kDT; ++dt) {
          o[mt][dt][2 * h] *= corr;
          o[mt][dt][2 * h + 1] *= corr;
        }
      }

    cp_async_wait<0>();
    __syncthreads();  // V[j] landed; every warp is done with K[j]
    if (j + 1 < n_tiles) {
      load_tile<D, BN>(sK, gK + static_cast<std::size_t>(j + 1) * BN * D, p.seq_k - (j + 1) * BN, tid);
      cp_async_commit();
    }

    // O += P V[j]; P from the S accumulators, rounded to T.
#pragma unroll
    for (int kk = 0; kk < kKN; ++kk) {
      std::uint32_t a[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        a[mt][0] = pack2<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        a[mt][1] = pack2<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        a[mt][2] = pack2<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        a[mt][3] = pack2<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < kDT / 2; ++dp) {
        std::uint32_t b[4];
        ldsm_x4_trans(v_addr + static_cast<std::uint32_t>(kk * 16 * kRowBytes + (((2 * dp) ^ v_x) << 4)), b);
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          mma_16816<T>(o[mt][2 * dp], a[mt], b[0], b[1]);
          mma_16816<T>(o[mt][2 * dp + 1], a[mt], b[2], b[3]);
        }
      }
    }
  }

  // Epilogue: O /= sum, staged through this warp's own Q rows (no other warp reads them) so
  // that the global stores are whole 16-byte chunks of whole rows.
  __syncwarp();
  const std::size_t row0 = bh * p.seq_q + m0;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float sum = row_sum[mt][h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
      const int r = warp * kWarpM + mt * 16 + g + 8 * h;
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
        const std::uint32_t addr = sQ + static_cast<std::uint32_t>(r * kRowBytes + ((dt ^ (r & 7)) << 4) + t * 4);
        const std::uint32_t val = pack2<T>(o[mt][dt][2 * h] * inv, o[mt][dt][2 * h + 1] * inv);
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(val));
      }
      if (p.lse != nullptr && t == 0 && r < q_rows)
        p.lse[row0 + r] = (row_max[mt][h] + log2f(sum)) * kLn2;
    }
  __syncwarp();
  constexpr int kChunks = D / 8;
  T* gO = static_cast<T*>(p.o) + row0 * D;
#pragma unroll
  for (int i = 0; i < kWarpM * kChunks / 32; ++i) {
    const int idx = lane + i * 32;
    const int r = warp * kWarpM + idx / kChunks;
    const int c = idx % kChunks;
    if (r < q_rows) {
      uint4 val;
      const std::uint32_t addr = sQ + static_cast<std::uint32_t>(r * kRowBytes + ((c ^ (r & 7)) << 4));
      asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(val.x), "=r"(val.y), "=r"(val.z), "=r"(val.w)
                   : "r"(addr));
      *reinterpret_cast<uint4*>(gO + static_cast<std::size_t>(r) * D + c * 8) = val;
    }
  }
}

template <typename T, int D, int BN, bool CAUSAL, bool kQRegs>
void launch(const AttentionProblem& pr, const FlashParams& fp, cudaStream_t stream) {
  constexpr int kSmem = (kBlockM + 2 * BN) * D * 2;
  auto* kernel = flash_fwd_mma_kernel<T, D, BN, CAUSAL, kQRegs>;
  GPUCHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const dim3 grid(static_cast<unsigned>((pr.seq_q + kBlockM - 1) / kBlockM), static_cast<unsigned>(pr.heads),
                  static_cast<unsigned>(pr.batch));
  kernel<<<grid, kThreads, kSmem, stream>>>(fp);
  GPUCHECK_CUDA_LAUNCH("flash_fwd_mma_kernel");
}

template <typename T>
void launch_dtype(const AttentionProblem& pr, const FlashParams& fp, cudaStream_t stream) {
  // d128: 128 x 64 tiles as FlashAttention-2 picks them for sm_80/sm_90 (64 KB of shared
  // memory, Q re-read from shared memory per tile). d64: 128 x 64 with Q held in registers
  // (32 KB; 128 x 128 as in FlashAttention-2 spills at 255 registers here).
  if (pr.head_dim == 64) {
    pr.causal ? launch<T, 64, 64, true, true>(pr, fp, stream) : launch<T, 64, 64, false, true>(pr, fp, stream);
  } else {
    pr.causal ? launch<T, 128, 64, true, false>(pr, fp, stream) : launch<T, 128, 64, false, false>(pr, fp, stream);
  }
}

}  // namespace

void launch_flash_mma(const AttentionProblem& pr, const FlashParams& fp, cudaStream_t stream) {
  if (pr.head_dim != 64 && pr.head_dim != 128)
    throw std::invalid_argument("flash_attention_fwd: head_dim " + std::to_string(pr.head_dim) +
                                " is not supported by the mma_sync kernel (64 or 128)");
  if (pr.dtype == DType::fp16)
    launch_dtype<__half>(pr, fp, stream);
  else
    launch_dtype<__nv_bfloat16>(pr, fp, stream);
}

}  // namespace gpucheck::kernels::detail
