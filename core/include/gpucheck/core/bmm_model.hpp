// Pure model of the bmm family: shape labels, FLOP and byte counts, 3-D permutation shapes
// and the tolerance two GEMM paths over the same inputs may differ by.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpucheck/core/dtype.hpp"

namespace gpucheck {

struct BmmShape {
  std::int64_t b = 0, m = 0, n = 0, k = 0;
};

// "b64m512n512k512" (the key the PyTorch anchors use). Throws std::invalid_argument on a
// non-positive extent.
std::string bmm_shape_label(const BmmShape& s);

// 2*b*m*n*k: one multiply and one add per term of every output's dot product.
double bmm_flops(const BmmShape& s);

// Bytes a permuted copy of `elements` elements moves through memory: read once, written once.
double permute_traffic_bytes(std::int64_t elements, std::size_t elem_bytes);

// True when perm holds 0, 1 and 2 once each.
bool is_permutation3(const std::array<int, 3>& perm);

// Shape of in.permute(perm) (PyTorch semantics: out.shape[i] = in.shape[perm[i]]). Throws
// std::invalid_argument on a bad perm or a negative extent.
std::array<std::int64_t, 3> permuted_shape(const std::array<std::int64_t, 3>& in, const std::array<int, 3>& perm);

// Tolerance for comparing one GEMM path's output with another's (compare_arrays' rtol/atol)
// when both accumulate the same products in fp32 but perhaps in a different order (another
// kernel, split-k) and round to `out`. Inputs are uniform in [-amax, amax]: a dot product's
// scale (sum |a_i b_i|) is about k * amax^2 / 4; we allow twice that. Two roundings of one
// value differ by at most one ulp (2u|w|), allowed twice over.
struct PathTolerance {
  double rtol = 0, atol = 0;
  double rel_l2 = 0;  // bound on ||got - want|| / ||want||
};
PathTolerance bmm_path_tolerance(DType out, std::int64_t k, double amax);

}  // namespace gpucheck
