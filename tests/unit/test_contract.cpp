#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/telemetry.hpp"

namespace gpucheck::contract {
namespace {

TEST(Contract, EveryCounterHasOneRow) {
  std::set<std::string_view> seen;
  for (const CounterInfo& c : kCounters) EXPECT_TRUE(seen.insert(c.name).second) << c.name;
  for (const char* n : {"TFLOPS", "GBps", "busbw_GBps", "algbw_GBps", "us_per_launch", "us_per_node", "us_total",
                        "pct_of_peak", "pct_of_link", "latency_us", "samples", "cv_pct", "batch", "throttled_samples",
                        "throttled", "clock_event_reasons", "sm_clock_MHz", "host_ref_us", "ranks", "wrong",
                        "mismatches", "burn_iterations", "sm_clock_min_MHz", "temperature_max_C", "pcie_gen_load",
                        "pcie_width_load"})
    EXPECT_NE(counter_info(n), nullptr) << n;
  EXPECT_EQ(counter_info("iterations"), nullptr);
  EXPECT_EQ(counter_info(counter::TFLOPS)->unit, "TFLOP/s");
  EXPECT_EQ(counter_info(counter::GBps)->better, Better::higher);
  EXPECT_EQ(counter_info(counter::us_per_launch)->unit, "µs");
  EXPECT_EQ(counter_info(counter::latency_us)->better, Better::lower);
  EXPECT_EQ(counter_info(counter::temperature_max_C)->unit, "°C");
  EXPECT_EQ(counter_info(counter::samples)->better, Better::none);
  for (std::string_view r : kPreferredRates) EXPECT_NE(counter_info(r), nullptr) << r;
}

TEST(Contract, SkipPrefix) { EXPECT_EQ(kUnsupportedPrefix, "unsupported: "); }

// The names acceptance and the report judge by, exactly as compare/ wrote them before the contract.
TEST(Contract, AcceptNamesAreTheJudgedOnes) {
  EXPECT_EQ(burn_name(), "matmul/burn/bf16/8192x8192x8192");
  EXPECT_EQ(accept_gemm_name("bf16"), "matmul/cublaslt/bf16/8192x8192x8192");
  EXPECT_EQ(accept_gemm_name("fp16"), "matmul/cublaslt/fp16/8192x8192x8192");
  EXPECT_EQ(accept_gemm_name("tf32"), "matmul/cublaslt/tf32/8192x8192x8192");
  EXPECT_EQ(accept_gemm_name("fp8"), "matmul/cublaslt/fp8e4m3/8192x8192x8192");
  EXPECT_EQ(accept_gemm_name("fp4"), std::nullopt);
  for (std::string_view k : kAcceptGemmPeaks) EXPECT_TRUE(accept_gemm_name(k).has_value()) << k;
  EXPECT_EQ(accept_pcie_name(segment::h2d), "pcie/h2d/pinned/256MiB");
  EXPECT_EQ(accept_pcie_name(segment::d2h), "pcie/d2h/pinned/256MiB");
  EXPECT_EQ(accept_memory_name(segment::copy_kernel), "memory/copy_kernel/u8/2GiB");
  EXPECT_EQ(accept_memory_name(segment::memcpy_d2d), "memory/memcpy_d2d/u8/2GiB");
  EXPECT_EQ(accept_nccl_prefix(), "nccl/allreduce/fp32/1GiB/g");
  EXPECT_EQ(accept_nccl_name(8), "nccl/allreduce/fp32/1GiB/g8");
  EXPECT_EQ(matmul_name(segment::cublaslt_sustained, DType::bf16, 8192, 8192, 8192),
            "matmul/cublaslt_sustained/bf16/8192x8192x8192");
  EXPECT_EQ(pcie_name(segment::bidir, segment::pageable, 4096), "pcie/bidir/pageable/4KiB");
}

TEST(Contract, ReportPairsAreTheReportsOnes) {
  const std::vector<std::pair<std::string, std::string>> before{
      {"flash", "naive"}, {"cudnn", "naive"}, {"flash", "cudnn"}, {"fused", "naive"}, {"sdpa", "naive"},
      {"nhwc", "nchw"},   {"graph", "eager"}, {"fp16", "fp32"},   {"bf16", "fp32"},   {"tf32", "fp32"},
      {"fp8", "fp16"},    {"pinned", "pageable"}, {"einsum", "bmm"}};
  ASSERT_EQ(kReportPairs.size(), before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(kReportPairs[i].candidate, before[i].first);
    EXPECT_EQ(kReportPairs[i].reference, before[i].second);
  }
}

TEST(Contract, ThrottleClassesHaveOneMeaning) {
  EXPECT_EQ(kSlowingReasons, 0x8u | 0x20u | 0x40u | 0x80u);
  EXPECT_EQ(kPowerCapReasons, 0x4u);
  EXPECT_EQ(kFaultReasons, kSlowingReasons);
  EXPECT_EQ(kSlowingReasons & kPowerCapReasons, 0u);
  EXPECT_EQ(reason_mask(ReasonClass::idle), 0x1u);
  EXPECT_FALSE(is_slowing(0x4));  // power capping alone
  EXPECT_FALSE(is_slowing(0x1 | 0x2 | 0x10 | 0x100));
  for (std::uint64_t b : {0x8u, 0x20u, 0x40u, 0x80u}) EXPECT_TRUE(is_slowing(b | 0x4));
  EXPECT_EQ(is_throttling(0x4), false);  // the counter `throttled`: slowing only
  EXPECT_EQ(is_throttling(0x24), true);
}

TEST(Contract, ReasonNamesAsResultsPrintThem) {
  EXPECT_EQ(describe_reasons(0), "none");
  EXPECT_EQ(describe_reasons(0x4), "sw_power_cap");
  EXPECT_EQ(describe_reasons(0x1ff),
            "gpu_idle,applications_clocks_setting,sw_power_cap,hw_slowdown,sync_boost,sw_thermal_slowdown,"
            "hw_thermal_slowdown,hw_power_brake_slowdown,display_clock_setting");
  EXPECT_EQ(describe_reasons(0x24 | 0x1000), "sw_power_cap,sw_thermal_slowdown,other(0x1000)");
  EXPECT_EQ(describe_clock_event_reasons(0x88), describe_reasons(0x88));
}

TEST(Contract, DTypeTable) {
  for (const DTypeInfo& r : kDTypes) {
    EXPECT_EQ(&info(r.dtype), &r);
    EXPECT_EQ(r.bytes, info(r.storage).bytes) << r.name;
    EXPECT_FALSE(info(r.storage).math_mode) << r.name;  // storage is a storage type
    EXPECT_EQ(r.math_mode, r.storage != r.dtype) << r.name;
  }
  EXPECT_EQ(storage_dtype(DType::tf32), DType::fp32);
  EXPECT_EQ(info(DType::tf32).storage_type, "float");
  EXPECT_TRUE(info(DType::tf32).math_mode);
  EXPECT_EQ(dtype_for_peak_key("fp8"), DType::fp8e4m3);
  EXPECT_EQ(dtype_for_peak_key("nope"), std::nullopt);
}

// Issue 35: with no driver at all the runtime blames the driver's version; the reason in the
// brackets says what is true. The prefix is the one the runner and the scripts key on.
TEST(Contract, NoDeviceReasonSaysWhetherADriverIsThere) {
  const std::string runtime = "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version";
  const DriverFacts none{false, false}, module_only{false, true}, loads{true, true}, lib_only{true, false};
  EXPECT_EQ(no_device_reason(none, runtime).find("no NVIDIA driver is installed on this machine"), 0u);
  EXPECT_EQ(no_device_reason(none, runtime).find("insufficient"), std::string::npos);
  EXPECT_EQ(no_device_reason(module_only, runtime).find("the NVIDIA kernel driver is loaded but libcuda.so.1"), 0u);
  EXPECT_EQ(no_device_reason(loads, runtime), runtime);     // a driver answers: its own words stand
  EXPECT_EQ(no_device_reason(lib_only, runtime), runtime);  // a container without /proc/driver/nvidia
  EXPECT_EQ(no_device_reason(loads, ""), "");
  const std::string line = no_device_text(none, runtime);
  EXPECT_EQ(line.rfind(kNoDevicePrefix, 0), 0u);
  EXPECT_EQ(line.back(), ')');
  EXPECT_EQ(no_device_text(loads, "cudaGetDeviceCount: 0 devices"), "no CUDA device found (cudaGetDeviceCount: 0 devices)");
}

TEST(Contract, NoMatchLineIsRecognisedWithOrWithoutThePrefix) {
  const std::string line = std::string(kNoMatchPrefix) + "nomatch in the matmul quick suite (list them with ...)";
  EXPECT_TRUE(says_no_match(line));
  EXPECT_TRUE(says_no_match("gpucheck: " + line));
  EXPECT_FALSE(says_no_match("gpucheck: no CUDA device found (x)"));
  EXPECT_FALSE(says_no_match(""));
  EXPECT_FALSE(says_no_match("gpucheck: "));
}

}  // namespace
}  // namespace gpucheck::contract
