// Device-side comparison of two arrays (e.g. a fused path against the plain one), so that
// gigabytes are checked without a round trip through the host.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpucheck/core/dtype.hpp"

namespace gpucheck::kernels {

struct DiffStats {
  std::uint64_t count = 0;
  std::uint64_t mismatches = 0;  // |a - b| > atol + rtol * |b|
  std::uint64_t nonfinite = 0;   // a not finite where b is
  double max_abs_err = 0;
  double sum_sq_err = 0, sum_sq_ref = 0;
  double rel_l2() const;
};

// Compares `got` with `want`, both n elements of dtype t (floating types only). Synchronous:
// returns after the stream has finished the comparison.
DiffStats compare_arrays(const void* got, const void* want, std::size_t n, DType t, double rtol,
                         double atol, cudaStream_t stream);

// Counts bytes that differ from fill_pattern_u8(seed) (synchronous).
std::uint64_t count_pattern_mismatches(const void* data, std::size_t bytes, std::uint32_t seed,
                                       cudaStream_t stream);

// Adds to *count (device memory) the number of 16-byte words in which a and b differ, without
// synchronising: a check that rides along sustained load (bitwise: the same GEMM on the same
// inputs with the same algorithm gives the same bits). bytes a multiple of 16, both aligned.
void add_differing_words(const void* a, const void* b, std::size_t bytes, unsigned long long* count,
                         cudaStream_t stream);

// Copies n elements of dtype t to the host as doubles (synchronous), for host references.
std::vector<double> to_host_double(const void* src, std::size_t n, DType t, cudaStream_t stream);
// Reads selected elements only (strided gathers for sampled GEMM checks).
std::vector<double> gather_to_host_double(const void* src, const std::vector<std::size_t>& idx,
                                          DType t, cudaStream_t stream);

}  // namespace gpucheck::kernels
