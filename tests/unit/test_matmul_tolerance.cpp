// bench_matmul's check (core's reduction_tolerance, 16 x 16 sampled outputs) at the reduced
// extents of the llm suite, up to Llama-3 70B's down projection (K = 28672): a right result
// passes in bf16, fp16 and fp8 e4m3 (bf16 out) under two accumulation models, and a kernel
// that drops part of K fails. Inputs are U(-1, 1) as bench_matmul fills them.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "gpucheck/core/verify.hpp"
#include "round_bits.hpp"

namespace gpucheck {
namespace {

using test::round_bits;

// How the simulated GPU sums the products: one fp32 add per product (the random walk the
// bound is built on), or blocks of 32 products summed exactly and added to an accumulator
// kept to 13 mantissa bits (a pessimistic model of Hopper's fp8 accumulation).
enum class Accumulate { fp32_serial, blocks_13_bits };

struct Simulated {
  DType in, out;
  int in_bits, out_bits;  // explicit mantissa bits
};

// 64 sampled outputs of a K-long dot product; `dropped` products at the end of K are left out
// of every result (a kernel that loses part of the reduction).
CheckReport simulate_llm_gemm(const Simulated& t, int k, Accumulate how, int dropped = 0) {
  std::mt19937 rng(40);
  std::uniform_real_distribution<double> u(-1, 1);
  SampleChecker check(reduction_tolerance(t.in, t.out, static_cast<std::size_t>(k)));
  std::vector<double> a(static_cast<std::size_t>(k)), b(a.size());
  for (std::size_t e = 0; e < 64; ++e) {
    double ref = 0, scale = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = round_bits(u(rng), t.in_bits);  // the stored inputs: the reference reads them
      b[i] = round_bits(u(rng), t.in_bits);
      ref += a[i] * b[i];
      scale += std::fabs(a[i] * b[i]);
    }
    const std::size_t used = a.size() - static_cast<std::size_t>(dropped);
    double acc = 0;
    if (how == Accumulate::fp32_serial) {
      float f = 0;
      for (std::size_t i = 0; i < used; ++i) f += static_cast<float>(a[i] * b[i]);
      acc = f;
    } else {
      for (std::size_t i = 0; i < used; i += 32) {
        double block = 0;
        for (std::size_t j = i; j < std::min(used, i + 32); ++j) block += a[j] * b[j];
        acc = round_bits(acc + block, 13);
      }
    }
    check.add(e, ref, round_bits(acc, t.out_bits), scale);
  }
  return check.report();
}

constexpr Simulated kBf16{DType::bf16, DType::bf16, 7, 7}, kFp16{DType::fp16, DType::fp16, 10, 10},
    kFp8{DType::fp8e4m3, DType::bf16, 3, 7};

TEST(MatmulTolerance, RightResultsPassAtTheLlmSuitesReductions) {
  for (int k : {4096, 8192, 14336, 28672})
    for (const Simulated& t : {kBf16, kFp16, kFp8})
      for (Accumulate how : {Accumulate::fp32_serial, Accumulate::blocks_13_bits}) {
        const CheckReport r = simulate_llm_gemm(t, k, how);
        EXPECT_TRUE(r.ok()) << to_string(t.in) << " K=" << k << ": " << r.describe();
      }
}

TEST(MatmulTolerance, ALostPartOfKFailsAtK28672) {
  for (const Simulated& t : {kBf16, kFp16, kFp8}) {
    // a split-K half never added; one 64-wide slice of K lost (under 0.3% of the products)
    EXPECT_FALSE(simulate_llm_gemm(t, 28672, Accumulate::fp32_serial, 28672 / 2).ok()) << to_string(t.in);
    EXPECT_FALSE(simulate_llm_gemm(t, 28672, Accumulate::fp32_serial, 64).ok()) << to_string(t.in);
  }
}

}  // namespace
}  // namespace gpucheck
