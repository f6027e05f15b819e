#include <gtest/gtest.h>

#include <stdexcept>

#include "gpucheck/core/bmm_model.hpp"

namespace gpucheck {
namespace {

TEST(BmmModel, ShapeLabelMatchesAnchorKey) {
  EXPECT_EQ(bmm_shape_label({64, 512, 512, 512}), "b64m512n512k512");
  EXPECT_EQ(bmm_shape_label({512, 128, 128, 64}), "b512m128n128k64");
  EXPECT_EQ(bmm_shape_label({1, 1, 1, 1}), "b1m1n1k1");
  EXPECT_THROW(bmm_shape_label({0, 1, 1, 1}), std::invalid_argument);
  EXPECT_THROW(bmm_shape_label({1, 1, 1, -3}), std::invalid_argument);
}

TEST(BmmModel, Flops) {
  EXPECT_DOUBLE_EQ(bmm_flops({64, 512, 512, 512}), 2.0 * 64 * 512.0 * 512 * 512);
  EXPECT_DOUBLE_EQ(bmm_flops({1, 1, 1, 1}), 2.0);
  // No int overflow for large shapes: 16 * 2048 * 2048 * 128 * 2 > 2^31.
  EXPECT_DOUBLE_EQ(bmm_flops({16, 2048, 2048, 128}), 17179869184.0);
}

TEST(BmmModel, PermuteTraffic) {
  EXPECT_DOUBLE_EQ(permute_traffic_bytes(64 * 512 * 512, 2), 2.0 * 64 * 512 * 512 * 2);
  EXPECT_DOUBLE_EQ(permute_traffic_bytes(0, 4), 0.0);
}

TEST(BmmModel, Permutations) {
  EXPECT_TRUE(is_permutation3({0, 1, 2}));
  EXPECT_TRUE(is_permutation3({2, 0, 1}));
  EXPECT_FALSE(is_permutation3({0, 0, 2}));
  EXPECT_FALSE(is_permutation3({0, 1, 3}));
  EXPECT_FALSE(is_permutation3({-1, 1, 2}));
  const std::array<std::int64_t, 3> in{3, 5, 7};
  EXPECT_EQ(permuted_shape(in, {1, 0, 2}), (std::array<std::int64_t, 3>{5, 3, 7}));
  EXPECT_EQ(permuted_shape(in, {2, 0, 1}), (std::array<std::int64_t, 3>{7, 3, 5}));
  EXPECT_EQ(permuted_shape(in, {0, 1, 2}), in);
  EXPECT_THROW(permuted_shape(in, {1, 1, 2}), std::invalid_argument);
  EXPECT_THROW(permuted_shape({3, -1, 2}, {0, 1, 2}), std::invalid_argument);
}

TEST(BmmModel, PathToleranceIsTightButAboveRounding) {
  const PathTolerance h = bmm_path_tolerance(DType::fp16, 512, 1.0);
  EXPECT_DOUBLE_EQ(h.rtol, 4.0 * 0x1p-11);
  // Far below the values themselves (|c| ~ sqrt(k)/3 ~ 7.5): a wrong index shows.
  EXPECT_GT(h.atol, 0.0);
  EXPECT_LT(h.atol, 1e-2);
  EXPECT_LE(h.rel_l2, 1e-2);
  const PathTolerance f = bmm_path_tolerance(DType::fp32, 512, 1.0);
  EXPECT_DOUBLE_EQ(f.rtol, 4.0 * 0x1p-24);
  EXPECT_DOUBLE_EQ(f.rel_l2, 1e-5);
  // bf16 output rounds more coarsely than fp16.
  EXPECT_GT(bmm_path_tolerance(DType::bf16, 512, 1.0).rtol, h.rtol);
  // Longer reductions and larger inputs allow more accumulation difference.
  EXPECT_GT(bmm_path_tolerance(DType::fp16, 2048, 1.0).atol, h.atol);
  EXPECT_GT(bmm_path_tolerance(DType::fp16, 512, 2.0).atol, h.atol);
  // k <= 0 is treated as 1, not as a NaN.
  EXPECT_GT(bmm_path_tolerance(DType::fp32, 0, 1.0).atol, 0.0);
}

}  // namespace
}  // namespace gpucheck
