// Each process's share of a GPU from nvmlDeviceGetProcessUtilization's samples (core's
// apply_process_util, which the NVML sampler hands its raw samples): the mean of a process's own
// samples newer than the previous reading, 0 for a listed process that ran nothing, and the
// newest sample's time as where the next reading starts.
#include <gtest/gtest.h>

#include <vector>

#include "gpucheck/core/telemetry.hpp"

namespace {

using gpucheck::GpuProcess;
using gpucheck::ProcessUtilSample;

std::vector<GpuProcess> gpu_listing(std::vector<unsigned> pids) {
  std::vector<GpuProcess> out;
  for (unsigned p : pids) out.push_back(GpuProcess{p, "p", 0});
  return out;
}

TEST(ProcessUtil, MeanOfEachProcessesOwnSamples) {
  auto procs = gpu_listing({10, 20, 30});
  const std::vector<ProcessUtilSample> s{{10, 1001, 60, 20}, {20, 1002, 30, 5}, {10, 1003, 41, 11}, {99, 1004, 100, 100}};
  EXPECT_EQ(gpucheck::apply_process_util(s, 1000, &procs), 1004u);
  EXPECT_EQ(procs[0].sm_util_pct, 51u);  // (60 + 41) / 2, rounded
  EXPECT_EQ(procs[0].mem_util_pct, 16u);
  EXPECT_EQ(procs[1].sm_util_pct, 30u);
  EXPECT_EQ(procs[2].sm_util_pct, 0u);  // listed, no sample: it ran nothing
  EXPECT_EQ(procs[2].mem_util_pct, 0u);
}

TEST(ProcessUtil, SamplesNotNewerThanThePreviousReadingAreLeftOut) {
  auto procs = gpu_listing({10});
  const std::vector<ProcessUtilSample> s{{10, 999, 90, 90}, {10, 1000, 80, 80}, {10, 1001, 10, 10}};
  EXPECT_EQ(gpucheck::apply_process_util(s, 1000, &procs), 1001u);
  EXPECT_EQ(procs[0].sm_util_pct, 10u);
}

TEST(ProcessUtil, NoSamplesKeepsTheStartAndReadsZero) {
  auto procs = gpu_listing({10});
  EXPECT_EQ(gpucheck::apply_process_util({}, 5000, &procs), 5000u);
  ASSERT_TRUE(procs[0].sm_util_pct);
  EXPECT_EQ(*procs[0].sm_util_pct, 0u);
  std::vector<GpuProcess> none;
  EXPECT_EQ(gpucheck::apply_process_util({{10, 6000, 50, 50}}, 5000, &none), 6000u);
  EXPECT_TRUE(none.empty());
}

TEST(ProcessUtil, ASampleOverAHundredPercentIsNone) {
  auto procs = gpu_listing({10});
  const std::vector<ProcessUtilSample> s{{10, 1001, 101, 5}, {10, 1002, 40, 101}, {10, 1003, 100, 100}};
  EXPECT_EQ(gpucheck::apply_process_util(s, 1000, &procs), 1003u);
  EXPECT_EQ(procs[0].sm_util_pct, 100u);  // only the last is a reading
  EXPECT_EQ(procs[0].mem_util_pct, 100u);
}

TEST(ProcessUtil, AnUnlistedProcessIsNotAdded) {
  auto procs = gpu_listing({10});
  gpucheck::apply_process_util({{77, 1001, 50, 50}}, 1000, &procs);
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].pid, 10u);
  EXPECT_EQ(procs[0].sm_util_pct, 0u);
}

}  // namespace
