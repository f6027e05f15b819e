#include <stdexcept>
#include <string>

#include "gpucheck/check_cuda.hpp"
#include "gpucheck/core/bmm_model.hpp"
#include "gpucheck/kernels/permute.cuh"

namespace gpucheck::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;
constexpr long long kMaxBlocks = 1 << 20;  // grid-stride beyond this

// One warp per output row (grid-stride over rows), lanes over the row's vectors: a row is
// contiguous in both tensors when the innermost dimension stays, so loads and stores are
// fully coalesced. in_row_stride0/1: input rows per step of output dims 0 and 1.
template <typename V>
__global__ void __launch_bounds__(kThreads)
    permute_rows_kernel(V* __restrict__ dst, const V* __restrict__ src, long long rows, long long out_d1,
                        long long vec_per_row, long long in_row_stride0, long long in_row_stride1) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const long long warp = blockIdx.x * static_cast<long long>(kWarpsPerBlock) + threadIdx.x / 32;
  const long long warps = static_cast<long long>(gridDim.x) * kWarpsPerBlock;
  for (long long r = warp; r < rows; r += warps) {
    const long long o0 = r / out_d1, o1 = r - o0 * out_d1;
    const V* s = src + (o0 * in_row_stride0 + o1 * in_row_stride1) * vec_per_row;
    V* d = dst + r * vec_per_row;
    for (long long v = lane; v < vec_per_row; v += 32) d[v] = __ldg(s + v);
  }
}

// Element-wise gather over the output's linear index (writes coalesced, reads strided).
template <typename E>
__global__ void __launch_bounds__(kThreads)
    permute_elems_kernel(E* __restrict__ dst, const E* __restrict__ src, long long total, long long out_d1,
                         long long out_d2, long long in_stride0, long long in_stride1, long long in_stride2) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total; i += stride) {
    const long long o2 = i % out_d2;
    const long long rest = i / out_d2;
    const long long o1 = rest % out_d1;
    const long long o0 = rest / out_d1;
    dst[i] = src[o0 * in_stride0 + o1 * in_stride1 + o2 * in_stride2];
  }
}

unsigned grid_for(long long work_items, long long items_per_block) {
  long long b = (work_items + items_per_block - 1) / items_per_block;
  if (b < 1) b = 1;
  if (b > kMaxBlocks) b = kMaxBlocks;
  return static_cast<unsigned>(b);
}

template <typename V>
void launch_rows(void* dst, const void* src, long long rows, long long out_d1, long long vec_per_row,
                 long long st0, long long st1, cudaStream_t s) {
  permute_rows_kernel<V><<<grid_for(rows, kWarpsPerBlock), kThreads, 0, s>>>(
      static_cast<V*>(dst), static_cast<const V*>(src), rows, out_d1, vec_per_row, st0, st1);
  GPUCHECK_CUDA_LAUNCH("permute_rows_kernel");
}

template <typename E>
void launch_elems(void* dst, const void* src, long long total, long long out_d1, long long out_d2,
                  const long long (&st)[3], cudaStream_t s) {
  permute_elems_kernel<E><<<grid_for(total, kThreads), kThreads, 0, s>>>(
      static_cast<E*>(dst), static_cast<const E*>(src), total, out_d1, out_d2, st[0], st[1], st[2]);
  GPUCHECK_CUDA_LAUNCH("permute_elems_kernel");
}


}  // namespace

void permute3d(void* dst, const void* src, const std::array<std::int64_t, 3>& in_shape,
               const std::array<int, 3>& perm, std::size_t elem_bytes, cudaStream_t stream) {
  const std::array<std::int64_t, 3> out = permuted_shape(in_shape, perm);  // validates
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8 && elem_bytes != 16)
    throw std::invalid_argument("permute3d: element size " + std::to_string(elem_bytes) +
                                " is not 1, 2, 4, 8 or 16 bytes");
  const long long total = static_cast<long long>(out[0]) * out[1] * out[2];
  if (total == 0) return;
  if (dst == nullptr || src == nullptr) throw std::invalid_argument("permute3d: null pointer");
  const long long eb = static_cast<long long>(elem_bytes);

  if (perm[2] == 2) {
    // Row copy. Input rows are indexed i0 * in_shape[1] + i1; output dim j walks input dim perm[j].
    const long long in_row_stride[2] = {static_cast<long long>(in_shape[1]), 1};
    const long long st0 = in_row_stride[perm[0]], st1 = in_row_stride[perm[1]];
    const long long rows = static_cast<long long>(out[0]) * out[1];
    const long long row_bytes = static_cast<long long>(out[2]) * eb;
    const auto addr_bits = reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src);
    long long vb = 16;
    while (vb > 1 && ((row_bytes % vb) != 0 || (addr_bits % static_cast<std::uintptr_t>(vb)) != 0)) vb /= 2;
    const long long vpr = row_bytes / vb;
    switch (vb) {
      case 16: launch_rows<uint4>(dst, src, rows, out[1], vpr, st0, st1, stream); break;
      case 8: launch_rows<uint2>(dst, src, rows, out[1], vpr, st0, st1, stream); break;
      case 4: launch_rows<unsigned int>(dst, src, rows, out[1], vpr, st0, st1, stream); break;
      case 2: launch_rows<unsigned short>(dst, src, rows, out[1], vpr, st0, st1, stream); break;
      default: launch_rows<unsigned char>(dst, src, rows, out[1], vpr, st0, st1, stream); break;
    }
    return;
  }

  // General gather: element strides of the input, taken in output-dimension order.
  const long long in_elem_stride[3] = {static_cast<long long>(in_shape[1]) * in_shape[2],
                                       static_cast<long long>(in_shape[2]), 1};
  const long long st[3] = {in_elem_stride[perm[0]], in_elem_stride[perm[1]], in_elem_stride[perm[2]]};
  switch (elem_bytes) {
    case 1: launch_elems<unsigned char>(dst, src, total, out[1], out[2], st, stream); break;
    case 2: launch_elems<unsigned short>(dst, src, total, out[1], out[2], st, stream); break;
    case 4: launch_elems<unsigned int>(dst, src, total, out[1], out[2], st, stream); break;
    case 8: launch_elems<unsigned long long>(dst, src, total, out[1], out[2], st, stream); break;
    default: launch_elems<uint4>(dst, src, total, out[1], out[2], st, stream); break;
  }
}

}  // namespace gpucheck::kernels
