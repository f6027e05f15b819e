#include "gpucheck/core/conv_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <stdexcept>

#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"

namespace gpucheck {

std::int64_t ConvShape::p() const { return (h + 2 * pad_h() - r) / stride + 1; }
std::int64_t ConvShape::q() const { return (w + 2 * pad_w() - s) / stride + 1; }

bool ConvShape::valid() const {
  return n > 0 && c > 0 && h > 0 && w > 0 && k > 0 && r > 0 && s > 0 && stride > 0 &&
         h + 2 * pad_h() >= r && w + 2 * pad_w() >= s && p() > 0 && q() > 0;
}

double ConvShape::flops() const {
  double f = 2.0;
  for (std::int64_t v : {n, k, c, r, s, p(), q()}) f *= static_cast<double>(v);
  return f;
}

std::string ConvShape::name() const {
  // Appends piecewise: GCC 12 warns (-Wrestrict, a false positive) on "x" + std::string.
  std::string out;
  auto field = [&out](char tag, std::int64_t v) {
    out.push_back(tag);
    out.append(std::to_string(v));
  };
  field('n', n);
  field('c', c);
  field('h', h);
  field('w', w);
  field('k', k);
  field('r', r);
  field('s', s);
  if (stride != 1) field('u', stride);
  if (pad >= 0 && (pad != r / 2 || pad != s / 2)) field('p', pad);
  return out;
}

std::vector<ConvShape> resnet50_convs(std::int64_t batch) {
  // {c, h, k, r, stride}; square images and filters, padding r / 2.
  static constexpr std::array<std::array<std::int64_t, 5>, 23> kLayers{{
      {3, 224, 64, 7, 2},      // conv1
      {64, 56, 64, 1, 1},      // layer1: reduce (block 1)
      {64, 56, 64, 3, 1},      //         3x3
      {64, 56, 256, 1, 1},     //         expand, and the downsample of block 1
      {256, 56, 64, 1, 1},     //         reduce (blocks 2, 3)
      {256, 56, 128, 1, 1},    // layer2: reduce (block 1)
      {128, 56, 128, 3, 2},    //         3x3 stride 2
      {128, 28, 512, 1, 1},    //         expand
      {256, 56, 512, 1, 2},    //         downsample
      {512, 28, 128, 1, 1},    //         reduce (blocks 2-4)
      {128, 28, 128, 3, 1},    //         3x3
      {512, 28, 256, 1, 1},    // layer3: reduce (block 1)
      {256, 28, 256, 3, 2},    //         3x3 stride 2
      {256, 14, 1024, 1, 1},   //         expand
      {512, 28, 1024, 1, 2},   //         downsample
      {1024, 14, 256, 1, 1},   //         reduce (blocks 2-6)
      {256, 14, 256, 3, 1},    //         3x3
      {1024, 14, 512, 1, 1},   // layer4: reduce (block 1)
      {512, 14, 512, 3, 2},    //         3x3 stride 2
      {512, 7, 2048, 1, 1},    //         expand
      {1024, 14, 2048, 1, 2},  //         downsample
      {2048, 7, 512, 1, 1},    //         reduce (blocks 2, 3)
      {512, 7, 512, 3, 1},     //         3x3
  }};
  std::vector<ConvShape> out;
  out.reserve(kLayers.size());
  for (const auto& l : kLayers) {
    ConvShape s;
    s.n = batch;
    s.c = l[0];
    s.h = s.w = l[1];
    s.k = l[2];
    s.r = s.s = l[3];
    s.stride = l[4];
    out.push_back(s);
  }
  return out;
}

std::string_view to_string(ConvDir d) {
  switch (d) {
    case ConvDir::fwd: return "fwd";
    case ConvDir::bwd_data: return "bwd_data";
    case ConvDir::bwd_filter: return "bwd_filter";
  }
  return "?";
}

std::string_view to_string(ConvLayout l) { return l == ConvLayout::nchw ? contract::segment::nchw : contract::segment::nhwc; }

std::string conv_variant(ConvLayout l, ConvDir d) {
  std::string v(to_string(l));
  if (d != ConvDir::fwd) {
    v.push_back('_');
    v.append(to_string(d));
  }
  return v;
}

std::string conv_case_name(ConvLayout l, ConvDir d, DType t, const ConvShape& shape) {
  return bench_name({contract::family::conv, conv_variant(l, d), to_string(t), shape.name()});
}

namespace {
// Rows in kConvDirs order (checked where a row is looked up).
template <typename Row, std::size_t N>
const Row& row_of(const std::array<Row, N>& table, ConvDir d) {
  static_assert(N == kConvDirs.size(), "one row per direction");
  const auto i = static_cast<std::size_t>(d);
  if (i >= N || table[i].dir != d) throw std::invalid_argument("conv: no table row for the direction");
  return table[i];
}

struct AlgoNames {
  ConvDir dir;
  std::span<const std::string_view> names;
};
constexpr std::array<std::string_view, 8> kFwdAlgos{
    "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
constexpr std::array<std::string_view, 6> kBwdDataAlgos{"ALGO_0",   "ALGO_1",   "FFT",
                                                        "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
constexpr std::array<std::string_view, 7> kBwdFilterAlgos{"ALGO_0",   "ALGO_1",           "FFT",       "ALGO_3",
                                                          "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
constexpr std::array<AlgoNames, 3> kAlgoNames{{
    {ConvDir::fwd, kFwdAlgos},
    {ConvDir::bwd_data, kBwdDataAlgos},
    {ConvDir::bwd_filter, kBwdFilterAlgos},
}};

struct RolesRow {
  ConvDir dir;
  ConvRoles roles;
};
constexpr std::array<RolesRow, 3> kRoles{{
    {ConvDir::fwd, {ConvTensor::y, ConvTensor::x, ConvTensor::w}},
    {ConvDir::bwd_data, {ConvTensor::x, ConvTensor::y, ConvTensor::w}},
    {ConvDir::bwd_filter, {ConvTensor::w, ConvTensor::y, ConvTensor::x}},
}};
}  // namespace

std::string conv_algo_name(ConvDir d, int algo) {
  const auto names = row_of(kAlgoNames, d).names;
  if (algo >= 0 && static_cast<std::size_t>(algo) < names.size())
    return std::string(names[static_cast<std::size_t>(algo)]);
  std::string fallback("algo");
  fallback.append(std::to_string(algo));
  return fallback;
}

ConvRoles conv_roles(ConvDir d) { return row_of(kRoles, d).roles; }

namespace {
std::size_t prod(std::initializer_list<std::int64_t> v) {
  std::size_t p = 1;
  for (std::int64_t x : v) p *= static_cast<std::size_t>(x);
  return p;
}
}  // namespace

std::size_t conv_x_elems(const ConvShape& s) { return conv_elems(s, ConvTensor::x); }
std::size_t conv_w_elems(const ConvShape& s) { return conv_elems(s, ConvTensor::w); }
std::size_t conv_y_elems(const ConvShape& s) { return conv_elems(s, ConvTensor::y); }

std::array<std::int64_t, 4> conv_dims(const ConvShape& s, ConvTensor t) {
  switch (t) {
    case ConvTensor::x: return {s.n, s.c, s.h, s.w};
    case ConvTensor::w: return {s.k, s.c, s.r, s.s};
    case ConvTensor::y: return {s.n, s.k, s.p(), s.q()};
  }
  throw std::invalid_argument("conv_dims: unknown tensor");
}

std::size_t conv_elems(const ConvShape& s, ConvTensor t) {
  const auto d = conv_dims(s, t);
  return prod({d[0], d[1], d[2], d[3]});
}

std::size_t conv_out_elems(const ConvShape& s, ConvDir d) { return conv_elems(s, conv_roles(d).out); }

std::array<std::int64_t, 4> conv_strides(ConvLayout l, const std::array<std::int64_t, 4>& dims) {
  const std::int64_t c = dims[1], h = dims[2], w = dims[3];
  if (l == ConvLayout::nchw) return {c * h * w, h * w, w, 1};
  return {h * w * c, 1, w * c, c};
}

std::vector<ConvFound> conv_usable(std::span<const ConvFound> found, DType t, std::size_t max_workspace,
                                   std::size_t max_n) {
  std::vector<ConvFound> out;
  for (const ConvFound& f : found) {
    if (out.size() >= max_n) break;
    if (!f.ran || !(f.time_ms >= 0) || f.workspace > max_workspace) continue;
    if (t == DType::fp32 && f.tensor_op) continue;  // strict fp32: no TF32 kernels
    out.push_back(f);
  }
  return out;
}

std::string conv_describe_found(std::span<const ConvFound> found, ConvDir d) {
  std::string out;
  for (const ConvFound& f : found) {
    out.push_back(' ');
    out.append(conv_algo_name(d, f.algo));
    out.push_back(':');
    out.append(f.status);
  }
  return out;
}

std::optional<std::size_t> conv_fastest(std::span<const double> median_s) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < median_s.size(); ++i) {
    if (!std::isfinite(median_s[i])) continue;  // stalled
    if (!best || median_s[i] < median_s[*best]) best = i;
  }
  return best;
}

namespace {
bool has_time(double t) { return std::isfinite(t) && t >= 0; }

// The indices within `band` of the lowest time, in candidate order.
std::vector<std::size_t> in_band(std::span<const double> median_s, double band) {
  if (!(band >= 0)) throw std::invalid_argument("conv pick: the tie band must be a fraction >= 0");
  std::optional<double> best;
  for (double t : median_s)
    if (has_time(t) && (!best || t < *best)) best = t;
  std::vector<std::size_t> out;
  if (!best) return out;
  const double limit = *best * (1 + band);
  for (std::size_t i = 0; i < median_s.size(); ++i)
    if (has_time(median_s[i]) && median_s[i] <= limit) out.push_back(i);
  return out;
}
}  // namespace

std::vector<std::size_t> conv_finalists(std::span<const double> median_s, double band, std::size_t max_n) {
  std::vector<std::size_t> out = in_band(median_s, band);
  if (out.size() > max_n) {
    std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) { return median_s[a] < median_s[b]; });
    out.resize(max_n);
    std::sort(out.begin(), out.end());
  }
  return out;
}

std::optional<ConvPick> conv_pick_in_band(std::span<const double> median_s, double band) {
  const std::vector<std::size_t> band_members = in_band(median_s, band);
  if (band_members.empty()) return std::nullopt;
  return ConvPick{.index = band_members.front(), .within = band_members.size()};
}

std::vector<std::pair<std::size_t, std::size_t>> conv_terms(const ConvShape& s, ConvDir d,
                                                            std::size_t out_index) {
  if (!s.valid()) throw std::invalid_argument("conv_terms: invalid shape " + s.name());
  if (out_index >= conv_out_elems(s, d)) throw std::out_of_range("conv_terms: index past the output");
  const std::int64_t P = s.p(), Q = s.q(), ph = s.pad_h(), pw = s.pad_w(), u = s.stride;
  auto xi = [&](std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
    return static_cast<std::size_t>(((n * s.c + c) * s.h + h) * s.w + w);
  };
  auto wi = [&](std::int64_t k, std::int64_t c, std::int64_t r, std::int64_t t) {
    return static_cast<std::size_t>(((k * s.c + c) * s.r + r) * s.s + t);
  };
  auto yi = [&](std::int64_t n, std::int64_t k, std::int64_t p, std::int64_t q) {
    return static_cast<std::size_t>(((n * s.k + k) * P + p) * Q + q);
  };
  // Splits a linear index of an a x b x c x d tensor.
  auto split = [](std::size_t i, std::int64_t b, std::int64_t c, std::int64_t dd) {
    std::array<std::int64_t, 4> out{};
    auto v = static_cast<std::int64_t>(i);
    out[3] = v % dd;
    v /= dd;
    out[2] = v % c;
    v /= c;
    out[1] = v % b;
    out[0] = v / b;
    return out;
  };
  std::vector<std::pair<std::size_t, std::size_t>> terms;
  switch (d) {
    case ConvDir::fwd: {  // y[n,k,p,q] = sum_{c,r,s} x[n,c,p*u-ph+r,q*u-pw+s] w[k,c,r,s]
      const auto [n, k, p, q] = split(out_index, s.k, P, Q);
      terms.reserve(prod({s.c, s.r, s.s}));
      for (std::int64_t c = 0; c < s.c; ++c)
        for (std::int64_t r = 0; r < s.r; ++r)
          for (std::int64_t t = 0; t < s.s; ++t) {
            const std::int64_t h = p * u - ph + r, w = q * u - pw + t;
            if (h < 0 || h >= s.h || w < 0 || w >= s.w) continue;
            terms.emplace_back(xi(n, c, h, w), wi(k, c, r, t));
          }
      break;
    }
    case ConvDir::bwd_data: {  // dx[n,c,h,w] = sum_{k,r,s: h = p*u-ph+r, w = q*u-pw+s} dy w
      const auto [n, c, h, w] = split(out_index, s.c, s.h, s.w);
      for (std::int64_t k = 0; k < s.k; ++k)
        for (std::int64_t r = 0; r < s.r; ++r)
          for (std::int64_t t = 0; t < s.s; ++t) {
            const std::int64_t ph_ = h + ph - r, pw_ = w + pw - t;
            if (ph_ < 0 || pw_ < 0 || ph_ % u != 0 || pw_ % u != 0) continue;
            const std::int64_t p = ph_ / u, q = pw_ / u;
            if (p >= P || q >= Q) continue;
            terms.emplace_back(yi(n, k, p, q), wi(k, c, r, t));
          }
      break;
    }
    case ConvDir::bwd_filter: {  // dw[k,c,r,s] = sum_{n,p,q} dy[n,k,p,q] x[n,c,p*u-ph+r,q*u-pw+s]
      const auto [k, c, r, t] = split(out_index, s.c, s.r, s.s);
      terms.reserve(prod({s.n, P, Q}));
      for (std::int64_t n = 0; n < s.n; ++n)
        for (std::int64_t p = 0; p < P; ++p)
          for (std::int64_t q = 0; q < Q; ++q) {
            const std::int64_t h = p * u - ph + r, w = q * u - pw + t;
            if (h < 0 || h >= s.h || w < 0 || w >= s.w) continue;
            terms.emplace_back(yi(n, k, p, q), xi(n, c, h, w));
          }
      break;
    }
  }
  return terms;
}

std::size_t conv_reduction_length(const ConvShape& s, ConvDir d) {
  switch (d) {
    case ConvDir::fwd: return prod({s.c, s.r, s.s});
    case ConvDir::bwd_data: {  // taps of the filter that land on the output grid
      const std::int64_t u = s.stride;
      return prod({s.k, (s.r + u - 1) / u, (s.s + u - 1) / u});
    }
    case ConvDir::bwd_filter: return prod({s.n, s.p(), s.q()});
  }
  return 1;
}

Tolerance conv_tolerance(DType t, std::size_t reduction_length) {
  const DType in = t;
  const DType out = storage_dtype(t);
  Tolerance tol = reduction_tolerance(in, out, reduction_length);
  // Winograd and FFT round transformed operands: to fp32 (a few tens of fp32 ulps, 2^-20),
  // to TF32, or for fp16/bf16 possibly to the input type. Those errors are random, so over
  // a reduction of length k they grow like sqrt(k) * u times the typical term, which in units
  // of scale = sum |a b| is about u / sqrt(k); 8x that is far out in the tail.
  const double u_alg = t == DType::fp32 ? 0x1p-20 : unit_roundoff(t);
  const double k = static_cast<double>(std::max<std::size_t>(reduction_length, 1));
  tol.rel_acc += 8.0 * u_alg / std::sqrt(k);
  // fp32: 3e-5 admits Winograd/FFT (~1e-6..1e-5) yet fails TF32 (~3e-4 for random data).
  tol.rel_l2 = std::max(tol.rel_l2, t == DType::fp32 ? 32.0 * u_alg : 8.0 * u_alg);
  return tol;
}

}  // namespace gpucheck
