#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gpucheck/core/json_text.hpp"
#include "gpucheck/core/specs.hpp"
#include "smoke_ranges.hpp"

namespace gpucheck::smoke {
namespace {

SkuSpec h200() {
  SkuSpec s;
  s.id = "nvidia-h200";
  s.peak_tflops = {{"fp32", 67}, {"tf32", 494.7}, {"fp16", 989.4}, {"bf16", 989.4}, {"fp8", 1978.9}};
  s.memory_GBps = 4800;
  return s;
}

const RangeCheck& only(const std::vector<RangeCheck>& v) {
  EXPECT_EQ(v.size(), 1u);
  return v.front();
}

TEST(SmokeRanges, RegisteredNameDropsGoogleBenchmarksSuffixes) {
  EXPECT_EQ(registered_name("matmul/cublaslt/bf16/8192x8192x8192/iterations:1/manual_time"),
            "matmul/cublaslt/bf16/8192x8192x8192");
  EXPECT_EQ(registered_name("launch/host_launch/empty/1/manual_time"), "launch/host_launch/empty/1");
  EXPECT_EQ(registered_name("memory/copy_kernel/u8/2GiB"), "memory/copy_kernel/u8/2GiB");
}

TEST(SmokeRanges, AGemmAHundredTimesSlowFails) {
  const SkuSpec s = h200();
  // The recorded H200 figure passes; the same case 100x slower does not.
  EXPECT_EQ(only(check_ranges({{"matmul/cublaslt/bf16/8192x8192x8192/iterations:1/manual_time", {{"TFLOPS", 799.5}}}}, &s, "NVIDIA H200")).verdict,
            Verdict::pass);
  const RangeCheck c = only(check_ranges({{"matmul/cublaslt/bf16/8192x8192x8192", {{"TFLOPS", 7.995}}}}, &s, "NVIDIA H200"));
  EXPECT_EQ(c.verdict, Verdict::fail);
  EXPECT_DOUBLE_EQ(c.bound, 0.5 * 989.4);
  EXPECT_TRUE(c.at_least);
  // The boundary: exactly half the peak is not above it.
  EXPECT_EQ(only(check_ranges({{"matmul/cublaslt/fp8e4m3/8192x8192x8192", {{"TFLOPS", 0.5 * 1978.9}}}}, &s, "x")).verdict,
            Verdict::fail);
  EXPECT_EQ(only(check_ranges({{"matmul/cublaslt_sustained/bf16/8192x8192x8192", {{"TFLOPS", 663.5}}}}, &s, "x")).verdict,
            Verdict::pass);
  // Other shapes and the burn are not held to the datasheet here.
  EXPECT_TRUE(check_ranges({{"matmul/cublaslt/bf16/4096x14336x4096", {{"TFLOPS", 1}}}}, &s, "x").empty());
  EXPECT_TRUE(check_ranges({{"matmul/burn/bf16/8192x8192x8192", {{"TFLOPS", 1}}}}, &s, "x").empty());
}

TEST(SmokeRanges, TheCopiesAgainstHbm) {
  const SkuSpec s = h200();
  EXPECT_EQ(only(check_ranges({{"memory/copy_kernel/u8/2GiB", {{"GBps", 4276}}}}, &s, "x")).verdict, Verdict::pass);
  EXPECT_EQ(only(check_ranges({{"memory/memcpy_d2d/u8/2GiB", {{"GBps", 42.7}}}}, &s, "x")).verdict, Verdict::fail);
  EXPECT_TRUE(check_ranges({{"memory/triad/fp32/2GiB", {{"GBps", 1}}}}, &s, "x").empty());
}

TEST(SmokeRanges, EmptyLaunchesUnder50us) {
  EXPECT_EQ(only(check_ranges({{"launch/host_launch/empty/1", {{"us_per_launch", 3.7}}}}, nullptr, "x")).verdict,
            Verdict::pass);  // no datasheet needed
  const RangeCheck c = only(check_ranges({{"launch/eager/empty/100", {{"us_per_launch", 380}}}}, nullptr, "x"));
  EXPECT_EQ(c.verdict, Verdict::fail);
  EXPECT_FALSE(c.at_least);
  EXPECT_EQ(only(check_ranges({{"launch/eager/empty/100", {{"us_per_launch", 50}}}}, nullptr, "x")).verdict, Verdict::fail);
  EXPECT_TRUE(check_ranges({{"launch/eager/small/100", {{"us_per_launch", 380}}}}, nullptr, "x").empty());
}

TEST(SmokeRanges, UnknownSpecIsSkippedWithTheReason) {
  const RangeCheck c = only(check_ranges({{"matmul/cublaslt/bf16/8192x8192x8192", {{"TFLOPS", 1}}}}, nullptr, "NVIDIA X1"));
  EXPECT_EQ(c.verdict, Verdict::skipped);
  EXPECT_NE(c.why.find("NVIDIA X1"), std::string::npos);
  SkuSpec a100 = h200();
  a100.id = "nvidia-a100";
  a100.peak_tflops.erase("fp8");
  a100.memory_GBps = 0;
  EXPECT_EQ(only(check_ranges({{"matmul/cublaslt/fp8e4m3/8192x8192x8192", {{"TFLOPS", 1}}}}, &a100, "x")).verdict,
            Verdict::skipped);
  EXPECT_EQ(only(check_ranges({{"memory/copy_kernel/u8/2GiB", {{"GBps", 1}}}}, &a100, "x")).verdict, Verdict::skipped);
}

TEST(SmokeRanges, AMissingOrNanFigureFails) {
  const SkuSpec s = h200();
  EXPECT_EQ(only(check_ranges({{"memory/copy_kernel/u8/2GiB", {}}}, &s, "x")).verdict, Verdict::fail);
  EXPECT_EQ(only(check_ranges({{"memory/copy_kernel/u8/2GiB", {{"GBps", std::nan("")}}}}, &s, "x")).verdict, Verdict::fail);
  EXPECT_EQ(only(check_ranges({{"launch/graph/empty/100", {{"us_per_launch", std::nan("")}}}}, &s, "x")).verdict,
            Verdict::fail);
}

TEST(JsonText, NonFiniteTokensBecomeStringsWhole) {
  EXPECT_EQ(quote_non_finite(R"({"a": NaN, "b": -Infinity, "c": Infinity})"),
            R"({"a": "NaN", "b": "-Infinity", "c": "Infinity"})");
  // Inside strings nothing changes, escapes included.
  EXPECT_EQ(quote_non_finite(R"({"n": "NaN and -Infinity \" Infinity"})"), R"({"n": "NaN and -Infinity \" Infinity"})");
  EXPECT_EQ(quote_non_finite(R"(["NaN",[NaN,-Infinity]])"), R"(["NaN",["NaN","-Infinity"]])");
  EXPECT_EQ(quote_non_finite("[1e5, -2, true]"), "[1e5, -2, true]");
}

}  // namespace
}  // namespace gpucheck::smoke
