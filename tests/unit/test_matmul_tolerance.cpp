// bench_matmul's check (core's reduction_tolerance, 16 x 16 sampled outputs, plus
// matmul::split_k_allowance where cuBLASLt splits K and reduces in the output type) at the
// reduced extents of the llm suite, up to Llama-3 70B's down projection (K = 28672): a right
// result passes in bf16, fp16 and fp8 e4m3 (bf16 out) under each accumulation model, and a
// kernel that drops part of K, or one wrong element, fails. Inputs are U(-1, 1) as
// bench_matmul fills them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "cases/matmul.hpp"
#include "gpucheck/core/verify.hpp"
#include "round_bits.hpp"

namespace gpucheck {
namespace {

using test::round_bits;

// How the simulated GPU sums the products: one fp32 add per product (the random walk the
// bound is built on); blocks of 32 products summed exactly and added to an accumulator kept
// to 13 mantissa bits (a pessimistic model of Hopper's fp8 accumulation); split-K into 16
// ranges of K on 128-element tiles (not the equal ranges the allowance assumes), each range's
// fp32 sum rounded to the output type and the roundings added (OUTPUT_TYPE), or the running
// sum rounded to the output type after each range (INPLACE). bench_matmul, like PyTorch,
// leaves cuBLASLt every reduction scheme.
enum class Accumulate { fp32_serial, blocks_13_bits, split_k_output_type, split_k_inplace };

struct Simulated {
  DType in, out;
  int in_bits, out_bits;  // explicit mantissa bits
};

constexpr std::int64_t kSplits = 16;

double accumulate(const std::vector<double>& a, const std::vector<double>& b, std::size_t used, Accumulate how,
                  int out_bits) {
  double acc = 0;
  if (how == Accumulate::fp32_serial) {
    float f = 0;
    for (std::size_t i = 0; i < used; ++i) f += static_cast<float>(a[i] * b[i]);
    return f;
  }
  if (how == Accumulate::blocks_13_bits) {
    for (std::size_t i = 0; i < used; i += 32) {
      double block = 0;
      for (std::size_t j = i; j < std::min(used, i + 32); ++j) block += a[j] * b[j];
      acc = round_bits(acc + block, 13);
    }
    return acc;
  }
  const std::size_t tiles = (a.size() + 127) / 128, part = (tiles + kSplits - 1) / kSplits * 128;
  for (std::size_t i = 0; i < used; i += part) {
    float f = 0;
    for (std::size_t j = i; j < std::min(used, i + part); ++j) f += static_cast<float>(a[j] * b[j]);
    acc = how == Accumulate::split_k_inplace ? round_bits(acc + f, out_bits) : acc + round_bits(f, out_bits);
  }
  return acc;
}

// One sampled output's K inputs (rounded to the input type: the reference reads the stored
// values), its exact value and its scale (sum |a_i b_i|).
struct Sample {
  std::vector<double> a, b;
  double ref = 0, scale = 0;
};

// 48 samples per input type and K, made once (the tests run several models on the same ones).
const std::vector<Sample>& samples(int in_bits, int k) {
  static std::map<std::pair<int, int>, std::vector<Sample>> made;
  std::vector<Sample>& out = made[{in_bits, k}];
  if (!out.empty()) return out;
  std::mt19937 rng(40);
  std::uniform_real_distribution<double> u(-1, 1);
  out.resize(48);
  for (Sample& s : out) {
    s.a.resize(static_cast<std::size_t>(k));
    s.b.resize(s.a.size());
    for (std::size_t i = 0; i < s.a.size(); ++i) {
      s.a[i] = round_bits(u(rng), in_bits);
      s.b[i] = round_bits(u(rng), in_bits);
      s.ref += s.a[i] * s.b[i];
      s.scale += std::fabs(s.a[i] * s.b[i]);
    }
  }
  return out;
}

// The check over the samples as `how` computes them; `dropped` products at the end of K are
// left out of every result (a kernel that loses part of the reduction), `wrong` is added to
// sample 7.
CheckReport simulate_llm_gemm(const Simulated& t, int k, Accumulate how, int dropped = 0, double wrong = 0) {
  SampleChecker check(reduction_tolerance(t.in, t.out, static_cast<std::size_t>(k)));
  const bool split = how == Accumulate::split_k_output_type || how == Accumulate::split_k_inplace;
  const std::vector<Sample>& ss = samples(t.in_bits, k);
  for (std::size_t e = 0; e < ss.size(); ++e) {
    const Sample& s = ss[e];
    double got = round_bits(accumulate(s.a, s.b, s.a.size() - static_cast<std::size_t>(dropped), how, t.out_bits),
                            t.out_bits);
    if (e == 7) got += wrong;
    const double allowance = split ? matmul::split_k_allowance(s.a.data(), s.b.data(), k, kSplits, unit_roundoff(t.out)) : 0;
    check.add(e, s.ref, got, s.scale, allowance);
  }
  return check.report();
}

constexpr Simulated kBf16{DType::bf16, DType::bf16, 7, 7}, kFp16{DType::fp16, DType::fp16, 10, 10},
    kFp8{DType::fp8e4m3, DType::bf16, 3, 7};

TEST(MatmulTolerance, RightResultsPassAtTheLlmSuitesReductions) {
  for (int k : {4096, 8192, 14336, 28672})
    for (const Simulated& t : {kBf16, kFp16, kFp8})
      for (Accumulate how : {Accumulate::fp32_serial, Accumulate::blocks_13_bits, Accumulate::split_k_output_type,
                             Accumulate::split_k_inplace}) {
        const CheckReport r = simulate_llm_gemm(t, k, how);
        EXPECT_TRUE(r.ok()) << to_string(t.in) << " K=" << k << " model " << static_cast<int>(how) << ": "
                            << r.describe();
      }
}

TEST(MatmulTolerance, ALostPartOfKOrOneWrongElementFailsAtK28672) {
  for (const Simulated& t : {kBf16, kFp16, kFp8})
    for (Accumulate how : {Accumulate::fp32_serial, Accumulate::split_k_output_type, Accumulate::split_k_inplace}) {
      // a split-K half never added; one 64-wide slice of K lost (under 0.3% of the products);
      // one element off by a third of a typical output's magnitude (~sqrt(K / 9) = 56)
      EXPECT_FALSE(simulate_llm_gemm(t, 28672, how, 28672 / 2).ok()) << to_string(t.in);
      EXPECT_FALSE(simulate_llm_gemm(t, 28672, how, 64).ok()) << to_string(t.in);
      const CheckReport one = simulate_llm_gemm(t, 28672, how, 0, 20.0);
      EXPECT_EQ(one.failed, 1u) << to_string(t.in) << " model " << static_cast<int>(how);
    }
}

// The allowance: zero without a split; 2 u_out (sum |p_j| + sum |r_j|) over equal ranges.
TEST(MatmulTolerance, SplitKAllowanceIsTheRoundingsOfPartialAndRunningSums) {
  const std::vector<double> a{1, 1, 1, 1}, b{1, -2, 3, 0.5};
  EXPECT_EQ(matmul::split_k_allowance(a.data(), b.data(), 4, 1, 0x1p-8), 0.0);
  // ranges {1, -2} and {3, 0.5}: partials -1 and 3.5, running -1 and 2.5
  EXPECT_DOUBLE_EQ(matmul::split_k_allowance(a.data(), b.data(), 4, 2, 0x1p-8), 2.0 * 0x1p-8 * (1 + 3.5 + 1 + 2.5));
  // four ranges of one: partials 1, -2, 3, 0.5; running 1, -1, 2, 2.5
  EXPECT_DOUBLE_EQ(matmul::split_k_allowance(a.data(), b.data(), 4, 4, 0x1p-11), 2.0 * 0x1p-11 * (6.5 + 6.5));
}

// Without the allowance, a right split-K result reduced in bf16 fails core's tolerance: why
// bench_matmul adds it for such algorithms.
TEST(MatmulTolerance, SplitKInTheOutputTypeNeedsTheAllowance) {
  SampleChecker plain(reduction_tolerance(DType::bf16, DType::bf16, 4096));
  const std::vector<Sample>& ss = samples(7, 4096);
  for (std::size_t e = 0; e < ss.size(); ++e)
    plain.add(e, ss[e].ref, round_bits(accumulate(ss[e].a, ss[e].b, 4096, Accumulate::split_k_output_type, 7), 7),
              ss[e].scale);
  EXPECT_FALSE(plain.report().ok()) << plain.report().describe();
}

}  // namespace
}  // namespace gpucheck
