#include "gpucheck/core/bmm_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpucheck {

std::string bmm_shape_label(const BmmShape& s) {
  if (s.b <= 0 || s.m <= 0 || s.n <= 0 || s.k <= 0)
    throw std::invalid_argument("bmm shape extents must be positive");
  // Appended piece by piece (GCC 12's -Wrestrict misfires on "literal" + std::string).
  std::string out = "b";
  out += std::to_string(s.b);
  out += 'm';
  out += std::to_string(s.m);
  out += 'n';
  out += std::to_string(s.n);
  out += 'k';
  out += std::to_string(s.k);
  return out;
}

double bmm_flops(const BmmShape& s) {
  return 2.0 * static_cast<double>(s.b) * static_cast<double>(s.m) * static_cast<double>(s.n) *
         static_cast<double>(s.k);
}

double permute_traffic_bytes(std::int64_t elements, std::size_t elem_bytes) {
  return 2.0 * static_cast<double>(elements) * static_cast<double>(elem_bytes);
}

bool is_permutation3(const std::array<int, 3>& perm) {
  bool seen[3] = {false, false, false};
  for (int p : perm) {
    if (p < 0 || p > 2 || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

std::array<std::int64_t, 3> permuted_shape(const std::array<std::int64_t, 3>& in, const std::array<int, 3>& perm) {
  if (!is_permutation3(perm)) throw std::invalid_argument("permute: perm is not a permutation of {0, 1, 2}");
  for (std::int64_t e : in)
    if (e < 0) throw std::invalid_argument("permute: negative extent");
  std::array<std::int64_t, 3> out{};
  for (std::size_t i = 0; i < 3; ++i) out[i] = in[static_cast<std::size_t>(perm[i])];
  return out;
}

PathTolerance bmm_path_tolerance(DType out, std::int64_t k, double amax) {
  const double kk = static_cast<double>(std::max<std::int64_t>(k, 1));
  const double u_out = unit_roundoff(storage_dtype(out));
  const double u32 = unit_roundoff(DType::fp32);
  // fp32 accumulation error per unit of scale (random-sign growth ~ sqrt(k)), as in
  // reduction_tolerance; two paths may each carry it.
  const double rel_acc = 2.0 * u32 * std::sqrt(kk) + 4.0 * u32;
  const double scale = 2.0 * kk * amax * amax / 4.0;
  PathTolerance t;
  t.rtol = 4.0 * u_out;
  t.atol = 2.0 * rel_acc * scale;
  t.rel_l2 = std::max(1e-5, 8.0 * u_out);
  return t;
}

}  // namespace gpucheck
