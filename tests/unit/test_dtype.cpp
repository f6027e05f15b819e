#include <gtest/gtest.h>

#include "gpucheck/core/dtype.hpp"

namespace gpucheck {
namespace {

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::fp64, DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8e4m3,
                  DType::fp8e5m2, DType::i8, DType::u8, DType::i32}) {
    auto back = parse_dtype(to_string(t));
    ASSERT_TRUE(back.has_value()) << to_string(t);
    EXPECT_EQ(*back, t);
  }
  EXPECT_FALSE(parse_dtype("float").has_value());
  EXPECT_FALSE(parse_dtype("").has_value());
}

TEST(DType, StorageAndRoundoff) {
  EXPECT_EQ(storage_bytes(DType::tf32), 4u);  // tf32 is a math mode over fp32 storage
  EXPECT_EQ(storage_bytes(DType::bf16), 2u);
  EXPECT_EQ(storage_bytes(DType::fp8e4m3), 1u);
  EXPECT_DOUBLE_EQ(unit_roundoff(DType::fp32), 0x1p-24);
  EXPECT_DOUBLE_EQ(unit_roundoff(DType::bf16), 0x1p-8);
  EXPECT_GT(unit_roundoff(DType::bf16), unit_roundoff(DType::fp16));
  EXPECT_GT(unit_roundoff(DType::tf32), unit_roundoff(DType::fp32));
}

TEST(DType, PeakKeyFoldsFp8) {
  EXPECT_EQ(peak_key(DType::fp8e4m3), "fp8");
  EXPECT_EQ(peak_key(DType::fp8e5m2), "fp8");
  EXPECT_EQ(peak_key(DType::bf16), "bf16");
}

}  // namespace
}  // namespace gpucheck
