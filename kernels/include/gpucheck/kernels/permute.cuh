// Materialises a permuted copy of a 3-D row-major tensor, the copy an einsum path makes when
// an operand's layout does not fit the GEMM (e.g. "mbk" -> "bmk" before a strided bmm).
#pragma once
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace gpucheck::kernels {

// dst = src.permute(perm) with PyTorch semantics: dst's shape is in_shape[perm[i]] and
// dst[o0][o1][o2] = src[i] where i[perm[j]] = o_j; both row-major and contiguous, elements of
// elem_bytes (1, 2, 4, 8 or 16) bytes. When the innermost dimension stays (perm[2] == 2) the
// copy moves whole rows with the widest vector that the row size and both pointers' alignment
// allow (the bandwidth-bound case the bmm benchmark times); otherwise an element-wise gather
// (correct, not tuned). dst and src must not overlap. Throws std::invalid_argument on a bad
// perm, shape or element size; GpuError on a launch failure. Asynchronous on `stream`.
void permute3d(void* dst, const void* src, const std::array<std::int64_t, 3>& in_shape,
               const std::array<int, 3>& perm, std::size_t elem_bytes, cudaStream_t stream);

}  // namespace gpucheck::kernels
