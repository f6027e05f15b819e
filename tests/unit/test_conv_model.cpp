#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "gpucheck/core/conv_model.hpp"
#include "round_bits.hpp"

namespace gpucheck {
namespace {

ConvShape shape(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t k, std::int64_t r,
                std::int64_t stride = 1, std::int64_t pad = -1) {
  ConvShape s;
  s.n = n;
  s.c = c;
  s.h = s.w = h;
  s.k = k;
  s.r = s.s = r;
  s.stride = stride;
  s.pad = pad;
  return s;
}

TEST(ConvModel, AnchorNamesAndFlops) {
  const ConvShape a = shape(64, 64, 56, 64, 3);
  EXPECT_EQ(a.name(), "n64c64h56w56k64r3s3");
  EXPECT_EQ(a.p(), 56);
  EXPECT_EQ(a.q(), 56);
  // The count ci/torch_reference.py uses: 2*n*k*c*r*r*h*h.
  EXPECT_DOUBLE_EQ(a.flops(), 2.0 * 64 * 64 * 64 * 3 * 3 * 56 * 56);
  EXPECT_EQ(shape(64, 256, 56, 64, 1).name(), "n64c256h56w56k64r1s1");
  EXPECT_EQ(shape(64, 128, 28, 128, 3).name(), "n64c128h28w28k128r3s3");
  EXPECT_EQ(conv_case_name(ConvLayout::nhwc, ConvDir::fwd, DType::fp16, a), "conv/nhwc/fp16/n64c64h56w56k64r3s3");
  EXPECT_EQ(conv_case_name(ConvLayout::nchw, ConvDir::bwd_data, DType::tf32, a),
            "conv/nchw_bwd_data/tf32/n64c64h56w56k64r3s3");
  EXPECT_EQ(conv_case_name(ConvLayout::nhwc, ConvDir::bwd_filter, DType::bf16, a),
            "conv/nhwc_bwd_filter/bf16/n64c64h56w56k64r3s3");
}

TEST(ConvModel, StrideAndPadInNameAndShape) {
  const ConvShape c1 = shape(64, 3, 224, 64, 7, 2);
  EXPECT_EQ(c1.name(), "n64c3h224w224k64r7s7u2");
  EXPECT_EQ(c1.p(), 112);
  EXPECT_EQ(c1.q(), 112);
  EXPECT_DOUBLE_EQ(c1.flops(), 2.0 * 64 * 64 * 3 * 7 * 7 * 112 * 112);
  // Explicit padding equal to r/2 is the default and does not show.
  EXPECT_EQ(shape(1, 8, 10, 8, 3, 1, 1).name(), "n1c8h10w10k8r3s3");
  const ConvShape valid = shape(1, 8, 10, 8, 3, 1, 0);
  EXPECT_EQ(valid.name(), "n1c8h10w10k8r3s3p0");
  EXPECT_EQ(valid.p(), 8);
  // Stride 2 on an odd 3x3 with pad 1: 56 -> 28; 1x1 stride 2: 56 -> 28; 7 -> 4.
  EXPECT_EQ(shape(1, 128, 56, 128, 3, 2).p(), 28);
  EXPECT_EQ(shape(1, 256, 56, 512, 1, 2).p(), 28);
  EXPECT_EQ(shape(1, 1, 7, 1, 1, 2).p(), 4);
  EXPECT_FALSE(shape(1, 1, 2, 1, 5, 1, 0).valid());
  EXPECT_FALSE(shape(0, 1, 2, 1, 1).valid());
  EXPECT_TRUE(shape(1, 1, 1, 1, 1).valid());
}

TEST(ConvModel, ResNet50Table) {
  const auto layers = resnet50_convs(64);
  ASSERT_EQ(layers.size(), 23u);
  std::set<std::string> names;
  double total = 0;
  for (const auto& l : layers) {
    EXPECT_TRUE(l.valid()) << l.name();
    EXPECT_EQ(l.n, 64);
    names.insert(l.name());
    total += l.flops();
  }
  EXPECT_EQ(names.size(), layers.size()) << "layers must be distinct";
  EXPECT_EQ(layers.front().name(), "n64c3h224w224k64r7s7u2");
  EXPECT_EQ(layers.back().name(), "n64c512h7w7k512r3s3");
  EXPECT_TRUE(names.count("n64c64h56w56k64r3s3"));
  EXPECT_TRUE(names.count("n64c256h56w56k64r1s1"));
  EXPECT_TRUE(names.count("n64c128h28w28k128r3s3"));
  // Every layer's output feeds a known spatial size: 112 (conv1), 56, 28, 14, 7.
  for (const auto& l : layers) {
    const std::int64_t p = l.p();
    EXPECT_TRUE(p == 112 || p == 56 || p == 28 || p == 14 || p == 7) << l.name();
  }
  EXPECT_EQ(resnet50_convs(256)[5].n, 256);
  EXPECT_GT(total, 0);
}

TEST(ConvModel, AlgoNames) {
  EXPECT_EQ(conv_algo_name(ConvDir::fwd, 1), "IMPLICIT_PRECOMP_GEMM");
  EXPECT_EQ(conv_algo_name(ConvDir::fwd, 7), "WINOGRAD_NONFUSED");
  EXPECT_EQ(conv_algo_name(ConvDir::fwd, 8), "algo8");
  EXPECT_EQ(conv_algo_name(ConvDir::bwd_data, 5), "WINOGRAD_NONFUSED");
  EXPECT_EQ(conv_algo_name(ConvDir::bwd_filter, 3), "ALGO_3");
  EXPECT_EQ(conv_algo_name(ConvDir::bwd_filter, 6), "FFT_TILING");
  EXPECT_EQ(conv_algo_name(ConvDir::bwd_filter, -1), "algo-1");
}

TEST(ConvModel, AlgoNamesCoverEveryDirection) {
  for (ConvDir d : kConvDirs) EXPECT_NE(conv_algo_name(d, 0), "algo0") << to_string(d);
  EXPECT_EQ(conv_algo_name(ConvDir::bwd_data, 6), "algo6");
  EXPECT_EQ(conv_algo_name(ConvDir::bwd_filter, 7), "algo7");
  EXPECT_THROW(conv_algo_name(static_cast<ConvDir>(3), 0), std::invalid_argument);
}

TEST(ConvModel, DimsAndElems) {
  const ConvShape s = shape(2, 3, 8, 5, 3, 2);  // p = q = 4
  EXPECT_EQ(conv_dims(s, ConvTensor::x), (std::array<std::int64_t, 4>{2, 3, 8, 8}));
  EXPECT_EQ(conv_dims(s, ConvTensor::w), (std::array<std::int64_t, 4>{5, 3, 3, 3}));
  EXPECT_EQ(conv_dims(s, ConvTensor::y), (std::array<std::int64_t, 4>{2, 5, 4, 4}));
  EXPECT_EQ(conv_elems(s, ConvTensor::x), conv_x_elems(s));
  EXPECT_EQ(conv_elems(s, ConvTensor::w), conv_w_elems(s));
  EXPECT_EQ(conv_elems(s, ConvTensor::y), conv_y_elems(s));
  EXPECT_EQ(conv_x_elems(s), 2u * 3 * 8 * 8);
  EXPECT_EQ(conv_y_elems(s), 2u * 5 * 4 * 4);
  EXPECT_EQ(conv_out_elems(s, ConvDir::fwd), conv_y_elems(s));
  EXPECT_EQ(conv_out_elems(s, ConvDir::bwd_data), conv_x_elems(s));
  EXPECT_EQ(conv_out_elems(s, ConvDir::bwd_filter), conv_w_elems(s));
}

// The roles must be the tensors conv_terms indexes: with stride 1 and "same" padding every
// element of both operands takes part in some output, so the largest index of each operand
// over all outputs is exactly its last element; a swapped role would overrun or fall short.
TEST(ConvModel, RolesMatchTheTermsIndexes) {
  const ConvShape s = shape(2, 3, 5, 4, 3);
  for (ConvDir d : kConvDirs) {
    SCOPED_TRACE(std::string(to_string(d)));
    const ConvRoles r = conv_roles(d);
    EXPECT_NE(r.out, r.a);
    EXPECT_NE(r.out, r.b);
    EXPECT_NE(r.a, r.b);
    std::size_t max_a = 0, max_b = 0;
    const std::size_t n_out = conv_elems(s, r.out);
    for (std::size_t i = 0; i < n_out; ++i)
      for (const auto& [ia, ib] : conv_terms(s, d, i)) {
        max_a = std::max(max_a, ia);
        max_b = std::max(max_b, ib);
      }
    EXPECT_EQ(max_a, conv_elems(s, r.a) - 1);
    EXPECT_EQ(max_b, conv_elems(s, r.b) - 1);
    EXPECT_THROW(conv_terms(s, d, n_out), std::out_of_range);
  }
  EXPECT_EQ(conv_roles(ConvDir::fwd).out, ConvTensor::y);
  EXPECT_EQ(conv_roles(ConvDir::bwd_data).out, ConvTensor::x);
  EXPECT_EQ(conv_roles(ConvDir::bwd_filter).out, ConvTensor::w);
  EXPECT_THROW(conv_roles(static_cast<ConvDir>(7)), std::invalid_argument);
}

TEST(ConvModel, LayoutStrides) {
  const std::array<std::int64_t, 4> d{2, 3, 4, 5};
  EXPECT_EQ(conv_strides(ConvLayout::nchw, d), (std::array<std::int64_t, 4>{60, 20, 5, 1}));
  EXPECT_EQ(conv_strides(ConvLayout::nhwc, d), (std::array<std::int64_t, 4>{60, 1, 15, 3}));
  // NHWC: element (n, c, h, w) at ((n H + h) W + w) C + c; the strides map the logical
  // indices one to one onto [0, count).
  std::vector<int> hits(2 * 3 * 4 * 5, 0);
  const auto st = conv_strides(ConvLayout::nhwc, d);
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t c = 0; c < 3; ++c)
      for (std::int64_t h = 0; h < 4; ++h)
        for (std::int64_t w = 0; w < 5; ++w) {
          const std::int64_t off = n * st[0] + c * st[1] + h * st[2] + w * st[3];
          ASSERT_EQ(off, ((n * 4 + h) * 5 + w) * 3 + c);
          ++hits[static_cast<std::size_t>(off)];
        }
  EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int x) { return x == 1; }));
  // A filter k c r s in NHWC is KRSC.
  EXPECT_EQ(conv_strides(ConvLayout::nhwc, {64, 16, 3, 3}), (std::array<std::int64_t, 4>{144, 1, 48, 16}));
}

ConvFound found(int algo, bool ran, float ms, std::size_t ws, bool tensor_op = false) {
  ConvFound f;
  f.algo = algo;
  f.ran = ran;
  f.status = ran ? "CUDNN_STATUS_SUCCESS" : "CUDNN_STATUS_NOT_SUPPORTED";
  f.time_ms = ms;
  f.workspace = ws;
  f.tensor_op = tensor_op;
  return f;
}

TEST(ConvModel, UsableFindResults) {
  const std::vector<ConvFound> all{found(7, true, 0.1f, 0, true),  found(6, false, -1, 0),
                                   found(1, true, 0.2f, 1 << 20),  found(5, true, 0.3f, 2u << 30),
                                   found(0, true, -1.f, 0),        found(2, true, 0.4f, 0),
                                   found(3, true, std::numeric_limits<float>::quiet_NaN(), 0)};
  auto algos = [](const std::vector<ConvFound>& v) {
    std::vector<int> out;
    for (const auto& f : v) out.push_back(f.algo);
    return out;
  };
  // Not run, negative or NaN time, over the workspace: out; Find's order kept.
  EXPECT_EQ(algos(conv_usable(all, DType::tf32, 1u << 30, 6)), (std::vector<int>{7, 1, 2}));
  EXPECT_EQ(algos(conv_usable(all, DType::fp16, 1u << 30, 2)), (std::vector<int>{7, 1}));
  // Strict fp32 leaves out the tensor-op (TF32) kernel.
  EXPECT_EQ(algos(conv_usable(all, DType::fp32, 1u << 30, 6)), (std::vector<int>{1, 2}));
  EXPECT_EQ(algos(conv_usable(all, DType::fp32, 0, 6)), (std::vector<int>{2}));
  EXPECT_TRUE(conv_usable(all, DType::fp32, 1u << 30, 0).empty());
  EXPECT_TRUE(conv_usable({}, DType::fp16, 1u << 30, 6).empty());
  EXPECT_EQ(conv_describe_found(std::vector<ConvFound>{found(7, true, 0.1f, 0), found(6, false, -1, 0)}, ConvDir::fwd),
            " WINOGRAD_NONFUSED:CUDNN_STATUS_SUCCESS WINOGRAD:CUDNN_STATUS_NOT_SUPPORTED");
  EXPECT_EQ(conv_describe_found({}, ConvDir::bwd_data), "");
}

TEST(ConvModel, FastestCandidate) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(conv_fastest(std::vector<double>{3e-4, 1e-4, 2e-4}), 1u);
  EXPECT_EQ(conv_fastest(std::vector<double>{2e-4, 1e-4, 1e-4}), 1u) << "a tie goes to the earlier";
  EXPECT_EQ(conv_fastest(std::vector<double>{inf, 5e-4, nan, 4e-4}), 3u) << "stalled ones are left out";
  EXPECT_EQ(conv_fastest(std::vector<double>{inf, nan}), std::nullopt);
  EXPECT_EQ(conv_fastest(std::vector<double>{}), std::nullopt);
  EXPECT_EQ(conv_fastest(std::vector<double>{7e-3}), 0u);
}

TEST(ConvModel, PickInBandTakesTheEarliestWithinTheBand) {
  using V = std::vector<double>;
  auto pick = [](const V& m, double band) { return conv_pick_in_band(m, band); };
  // 1.25 is exactly 25% above 1.0 in binary: the band's edge is inside, the next double out.
  ASSERT_TRUE(pick(V{1.25, 1.0, 3.0}, 0.25));
  EXPECT_EQ(pick(V{1.25, 1.0, 3.0}, 0.25)->index, 0u) << "the edge of the band is in it";
  EXPECT_EQ(pick(V{1.25, 1.0, 3.0}, 0.25)->within, 2u);
  EXPECT_EQ(pick(V{std::nextafter(1.25, 2.0), 1.0, 3.0}, 0.25)->index, 1u) << "just past the edge is out";
  EXPECT_EQ(pick(V{std::nextafter(1.25, 2.0), 1.0, 3.0}, 0.25)->within, 1u);
  // The order decides, not which of the band read fastest this time.
  EXPECT_EQ(pick(V{2.0, 1.01, 1.0, 1.02}, 0.02)->index, 1u);
  EXPECT_EQ(pick(V{2.0, 1.0, 1.01, 1.02}, 0.02)->index, 1u);
  EXPECT_EQ(pick(V{2.0, 1.01, 1.0, 1.02}, 0.02)->within, 3u);
  // Band 0: the fastest, a tie to the earlier (conv_fastest's pick).
  EXPECT_EQ(pick(V{3.0, 1.0, 1.0}, 0)->index, 1u);
  EXPECT_EQ(pick(V{3.0, 1.0, 1.0}, 0)->within, 2u);
  EXPECT_EQ(pick(V{3.0, 1.0, 1.5}, 0)->within, 1u);
}

TEST(ConvModel, PickInBandLeavesOutStalledAndRefusesABadBand) {
  using V = std::vector<double>;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // A stalled candidate earlier in the order is never picked, nor does it widen the band.
  EXPECT_EQ(conv_pick_in_band(V{inf, nan, 1.1, 1.0}, 0.05)->index, 3u);
  EXPECT_EQ(conv_pick_in_band(V{inf, nan, 1.1, 1.0}, 0.05)->within, 1u);
  EXPECT_EQ(conv_pick_in_band(V{-1.0, 1.0}, 0.05)->index, 1u) << "a negative time is not a time";
  EXPECT_EQ(conv_pick_in_band(V{inf, 1.0, inf}, 1e9)->within, 1u) << "infinity is outside any band";
  EXPECT_EQ(conv_pick_in_band(V{0.0, 0.0}, 0.5)->within, 2u);
  EXPECT_EQ(conv_pick_in_band(V{inf, nan}, 0.02), std::nullopt);
  EXPECT_EQ(conv_pick_in_band(V{}, 0.02), std::nullopt);
  EXPECT_THROW(conv_pick_in_band(V{1.0}, -0.01), std::invalid_argument);
  EXPECT_THROW(conv_pick_in_band(V{1.0}, nan), std::invalid_argument);
  EXPECT_THROW(conv_pick_in_band(V{}, nan), std::invalid_argument) << "checked before the times";
}

TEST(ConvModel, FinalistsAreTheFastestInTheBandInCandidateOrder) {
  using Idx = std::vector<std::size_t>;
  using V = std::vector<double>;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(conv_finalists(V{1.5, 1.04, 9.0, 1.0, 1.06, 1.05}, 0.06, 8), (Idx{1, 3, 4, 5}));
  EXPECT_EQ(conv_finalists(V{1.5, 1.04, 9.0, 1.0, 1.06, 1.05}, 0.06, 2), (Idx{1, 3})) << "the fastest two";
  EXPECT_EQ(conv_finalists(V{1.0, 1.01, 1.01, 1.01}, 0.06, 2), (Idx{0, 1})) << "a tie for the last place to the earlier";
  EXPECT_EQ(conv_finalists(V{1.25, 1.0}, 0.25, 8), (Idx{0, 1})) << "the edge is in";
  EXPECT_EQ(conv_finalists(V{std::nextafter(1.25, 2.0), 1.0}, 0.25, 8), (Idx{1}));
  EXPECT_EQ(conv_finalists(V{nan, 1.0, inf, 1.01}, 0.06, 8), (Idx{1, 3}));
  EXPECT_EQ(conv_finalists(V{1.0, 1.01}, 0.06, 0), Idx{});
  EXPECT_EQ(conv_finalists(V{inf, nan}, 0.06, 8), Idx{});
  EXPECT_EQ(conv_finalists(V{}, 0.06, 8), Idx{});
  EXPECT_THROW(conv_finalists(V{1.0}, -1, 8), std::invalid_argument);
}

// Brute-force convolutions over integer-valued arrays: the terms must reproduce them
// exactly, and the three directions must be adjoint (<fwd(x,w),dy> = <x,bwd_data(dy,w)> =
// <w,bwd_filter(dy,x)>), which pins down every index.
std::vector<double> apply(const ConvShape& s, ConvDir d, const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out(conv_out_elems(s, d));
  for (std::size_t i = 0; i < out.size(); ++i)
    for (auto [ia, ib] : conv_terms(s, d, i)) out[i] += a.at(ia) * b.at(ib);
  return out;
}

std::vector<double> direct_fwd(const ConvShape& s, const std::vector<double>& x, const std::vector<double>& w) {
  std::vector<double> y(conv_y_elems(s));
  const std::int64_t P = s.p(), Q = s.q();
  for (std::int64_t n = 0; n < s.n; ++n)
    for (std::int64_t k = 0; k < s.k; ++k)
      for (std::int64_t p = 0; p < P; ++p)
        for (std::int64_t q = 0; q < Q; ++q) {
          double acc = 0;
          for (std::int64_t c = 0; c < s.c; ++c)
            for (std::int64_t r = 0; r < s.r; ++r)
              for (std::int64_t t = 0; t < s.s; ++t) {
                const std::int64_t h = p * s.stride - s.pad_h() + r, ww = q * s.stride - s.pad_w() + t;
                if (h < 0 || h >= s.h || ww < 0 || ww >= s.w) continue;
                acc += x[static_cast<std::size_t>(((n * s.c + c) * s.h + h) * s.w + ww)] *
                       w[static_cast<std::size_t>(((k * s.c + c) * s.r + r) * s.s + t)];
              }
          y[static_cast<std::size_t>(((n * s.k + k) * P + p) * Q + q)] = acc;
        }
  return y;
}

std::vector<double> ints(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-4, 4);
  std::vector<double> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

TEST(ConvModel, TermsMatchDirectConvolutionAndAreAdjoint) {
  for (const ConvShape& s : {shape(2, 3, 7, 4, 3), shape(2, 3, 7, 4, 3, 2), shape(1, 2, 9, 3, 7, 2),
                             shape(2, 3, 6, 2, 1, 2), shape(1, 2, 5, 3, 3, 1, 0), shape(1, 2, 5, 2, 3, 3, 2)}) {
    SCOPED_TRACE(s.name());
    ASSERT_TRUE(s.valid());
    const auto x = ints(conv_x_elems(s), 1), w = ints(conv_w_elems(s), 2), dy = ints(conv_y_elems(s), 3);
    const auto y = apply(s, ConvDir::fwd, x, w);
    EXPECT_EQ(y, direct_fwd(s, x, w));
    const auto dx = apply(s, ConvDir::bwd_data, dy, w);
    const auto dw = apply(s, ConvDir::bwd_filter, dy, x);
    ASSERT_EQ(dx.size(), x.size());
    ASSERT_EQ(dw.size(), w.size());
    EXPECT_EQ(dot(y, dy), dot(x, dx));
    EXPECT_EQ(dot(y, dy), dot(w, dw));
    EXPECT_NE(dot(y, dy), 0.0);
  }
}

TEST(ConvModel, TermCountsAndBounds) {
  const ConvShape s = shape(2, 3, 8, 4, 3);
  // An interior output sees all C*R*S terms, a corner only (r/2+1)^2 of each channel.
  const std::size_t interior = ((0 * 4 + 1) * 8 + 4) * 8 + 4;
  EXPECT_EQ(conv_terms(s, ConvDir::fwd, interior).size(), 27u);
  EXPECT_EQ(conv_terms(s, ConvDir::fwd, 0).size(), 12u);
  EXPECT_EQ(conv_reduction_length(s, ConvDir::fwd), 27u);
  EXPECT_EQ(conv_reduction_length(s, ConvDir::bwd_filter), 2u * 8 * 8);
  EXPECT_EQ(conv_reduction_length(shape(1, 4, 8, 8, 3, 2), ConvDir::bwd_data), 8u * 2 * 2);
  EXPECT_EQ(conv_reduction_length(shape(1, 4, 8, 8, 3), ConvDir::bwd_data), 8u * 9);
  EXPECT_THROW(conv_terms(s, ConvDir::fwd, conv_y_elems(s)), std::out_of_range);
  EXPECT_NO_THROW(conv_terms(s, ConvDir::bwd_filter, conv_w_elems(s) - 1));
  EXPECT_THROW(conv_terms(shape(1, 1, 2, 1, 5, 1, 0), ConvDir::fwd, 0), std::invalid_argument);
}

// Simulated results: exact, rounded to the storage type, computed with TF32 inputs.
using test::round_bits;

CheckReport simulate(DType t, int k, int in_bits, int out_bits, double corrupt = 0) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  SampleChecker check(conv_tolerance(t, static_cast<std::size_t>(k)));
  for (int e = 0; e < 64; ++e) {
    double ref = 0, scale = 0, got = 0;
    for (int i = 0; i < k; ++i) {
      const double a = round_bits(u(rng), 23), b = round_bits(u(rng), 23);  // stored fp32
      ref += a * b;
      scale += std::fabs(a * b);
      got += round_bits(a, in_bits) * round_bits(b, in_bits);
    }
    got = round_bits(got, out_bits) + (e == 5 ? corrupt * scale : 0.0);
    check.add(static_cast<std::size_t>(e), ref, got, scale);
  }
  return check.report();
}

TEST(ConvModel, ToleranceAdmitsRoundingAndRejectsTf32InStrictFp32) {
  for (int k : {64, 576, 4608}) {
    SCOPED_TRACE(k);
    EXPECT_TRUE(simulate(DType::fp32, k, 23, 23).ok());
    EXPECT_TRUE(simulate(DType::tf32, k, 10, 23).ok());
    EXPECT_TRUE(simulate(DType::fp16, k, 23, 10).ok());
    EXPECT_TRUE(simulate(DType::bf16, k, 23, 7).ok());
    // A TF32 kernel where strict fp32 was asked for fails.
    EXPECT_FALSE(simulate(DType::fp32, k, 10, 23).ok());
    // One wrong element (off by 5% of its scale) fails every dtype.
    EXPECT_FALSE(simulate(DType::fp16, k, 23, 10, 0.05).ok());
    EXPECT_FALSE(simulate(DType::tf32, k, 10, 23, 0.05).ok());
  }
  // The bound grows with the reduction length.
  EXPECT_GT(conv_tolerance(DType::fp32, 200704).rel_acc, conv_tolerance(DType::fp32, 64).rel_acc);
  EXPECT_LE(conv_tolerance(DType::fp32, 576).rel_l2, 5e-5);
}

}  // namespace
}  // namespace gpucheck
