#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "gpucheck/core/verify.hpp"
#include "round_bits.hpp"

namespace gpucheck {
namespace {

using test::round_bits;

// Simulates a dot product of length k in the given input precision with fp32 accumulation
// (rounded through float) and output rounding to `out` by rounding mantissa bits.
CheckReport simulate(DType in, DType out, int out_bits, int k, double corrupt = 0) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(-1, 1);
  SampleChecker c(reduction_tolerance(in, out, static_cast<std::size_t>(k)));
  for (int e = 0; e < 64; ++e) {
    double ref = 0, scale = 0;
    float acc = 0;
    for (int i = 0; i < k; ++i) {
      const double a = u(rng), b = u(rng);
      ref += a * b;
      scale += std::fabs(a * b);
      const double ai = in == DType::tf32 ? round_bits(a, 10) : a;
      const double bi = in == DType::tf32 ? round_bits(b, 10) : b;
      acc += static_cast<float>(ai * bi);
    }
    double got = round_bits(acc, out_bits);
    if (e == 7) got += corrupt;
    c.add(static_cast<std::size_t>(e), ref, got, scale);
  }
  return c.report();
}

TEST(Verify, CorrectGemmsPassInEveryPrecision) {
  EXPECT_TRUE(simulate(DType::fp32, DType::fp32, 23, 4096).ok()) << simulate(DType::fp32, DType::fp32, 23, 4096).describe();
  EXPECT_TRUE(simulate(DType::tf32, DType::fp32, 23, 4096).ok()) << simulate(DType::tf32, DType::fp32, 23, 4096).describe();
  EXPECT_TRUE(simulate(DType::fp16, DType::fp16, 10, 4096).ok()) << simulate(DType::fp16, DType::fp16, 10, 4096).describe();
  EXPECT_TRUE(simulate(DType::bf16, DType::bf16, 7, 4096).ok()) << simulate(DType::bf16, DType::bf16, 7, 4096).describe();
}

TEST(Verify, OneWrongElementFails) {
  // An error of the size of a typical value (a wrong index) must not pass in any precision.
  for (auto [in, out, bits] : {std::tuple{DType::fp32, DType::fp32, 23}, std::tuple{DType::tf32, DType::fp32, 23},
                               std::tuple{DType::bf16, DType::bf16, 7}, std::tuple{DType::fp8e4m3, DType::bf16, 7}}) {
    CheckReport r = simulate(in, out, bits, 4096, 20.0);
    EXPECT_FALSE(r.ok()) << to_string(in);
    EXPECT_EQ(r.failed, 1u) << to_string(in);
    EXPECT_EQ(r.worst_index, 7u);
  }
}

TEST(Verify, TruncatingFp32ToBf16IsCaughtInAnFp32Gemm) {
  // A kernel that quietly computes in bf16 must not pass as fp32.
  EXPECT_FALSE(simulate(DType::fp32, DType::fp32, 7, 4096).ok());
}

TEST(Verify, NanIsNeverClose) {
  SampleChecker c(reduction_tolerance(DType::bf16, DType::bf16, 128));
  c.add(0, 1.0, 1.0, 1.0);
  c.add(1, 1.0, NAN, 1.0);
  CheckReport r = c.report();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.nonfinite, 1u);
  EXPECT_NE(r.describe().find("non-finite"), std::string::npos);
}

TEST(Verify, EmptyCheckIsNotOk) {
  SampleChecker c(Tolerance{1, 1, 1});
  EXPECT_FALSE(c.report().ok());
  EXPECT_EQ(c.report().describe(), "nothing was checked");
}

TEST(Verify, ExactToleranceBoundary) {
  // |err| == bound passes; just over fails.
  SampleChecker ok(Tolerance{0.5, 0, 1});
  ok.add(0, 2.0, 3.0, 0);
  EXPECT_TRUE(ok.report().ok());
  SampleChecker bad(Tolerance{0.5, 0, 1});
  bad.add(0, 2.0, std::nextafter(3.0, 4.0), 0);
  EXPECT_FALSE(bad.report().ok());
}

TEST(Verify, L2BoundCatchesSmallSystematicError) {
  // Each element within its own bound, but all off the same way: the L2 bound says no.
  SampleChecker c(Tolerance{0.1, 0, 0.01});
  for (int i = 0; i < 100; ++i) c.add(static_cast<std::size_t>(i), 1.0, 1.05, 0);
  CheckReport r = c.report();
  EXPECT_EQ(r.failed, 0u);
  EXPECT_FALSE(r.l2_ok);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace gpucheck
