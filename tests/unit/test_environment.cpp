// The timing environment (core/environment.hpp): which variables are read, which refuse, the
// context record and its differences.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpucheck/core/environment.hpp"

namespace {

gpucheck::Environment env_of(std::vector<const char*> kv) {
  kv.push_back(nullptr);
  return gpucheck::timing_environment(kv.data());
}

}  // namespace

TEST(Environment, ReadsOnlyTimingVariablesSortedAndEveryNcclOne) {
  const auto e = env_of({"PATH=/bin", "NCCL_DEBUG=INFO", "CUDA_LAUNCH_BLOCKING=1", "NCCL_NVLS_ENABLE=0", "HOME=/root",
                         "NCCL_=x", "CUBLAS_WORKSPACE_CONFIG=:4096:8", "=odd", "NOEQUALS"});
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0], (std::pair<std::string, std::string>{"CUBLAS_WORKSPACE_CONFIG", ":4096:8"}));
  EXPECT_EQ(e[1].first, "CUDA_LAUNCH_BLOCKING");
  EXPECT_EQ(e[2].first, "NCCL_DEBUG");
  EXPECT_EQ(e[3].first, "NCCL_NVLS_ENABLE");
  EXPECT_TRUE(env_of({}).empty());
  EXPECT_TRUE(gpucheck::timing_environment(nullptr).empty());
}

TEST(Environment, LaunchBlockingAndTf32OffRefuseTheirHarmlessValuesDoNot) {
  const auto blocking = gpucheck::environment_refusal(env_of({"CUDA_LAUNCH_BLOCKING=1"}));
  ASSERT_TRUE(blocking.has_value());
  EXPECT_EQ(blocking->rfind("CUDA_LAUNCH_BLOCKING=1 ", 0), 0u) << *blocking;
  EXPECT_TRUE(gpucheck::environment_refusal(env_of({"CUDA_LAUNCH_BLOCKING=yes"})).has_value());
  EXPECT_FALSE(gpucheck::environment_refusal(env_of({"CUDA_LAUNCH_BLOCKING=0"})).has_value());
  EXPECT_FALSE(gpucheck::environment_refusal(env_of({"CUDA_LAUNCH_BLOCKING="})).has_value());
  const auto tf32 = gpucheck::environment_refusal(env_of({"NVIDIA_TF32_OVERRIDE=0"}));
  ASSERT_TRUE(tf32.has_value());
  EXPECT_EQ(tf32->rfind("NVIDIA_TF32_OVERRIDE=0 ", 0), 0u);
  EXPECT_FALSE(gpucheck::environment_refusal(env_of({"NVIDIA_TF32_OVERRIDE=1"})).has_value());
  // Recorded, never refused.
  EXPECT_FALSE(gpucheck::environment_refusal(env_of({"CUDA_DEVICE_MAX_CONNECTIONS=1", "NCCL_ALGO=Ring",
                                                     "CUBLASLT_LOG_LEVEL=5", "CUDA_MODULE_LOADING=EAGER"}))
                   .has_value());
}

TEST(Environment, TheRecordReadsBackAndItsChangesAreNamed) {
  const auto e = env_of({"NCCL_ALGO=Ring", "CUBLAS_WORKSPACE_CONFIG=:4096:8", "NCCL_IB_HCA=mlx5_0; mlx5_1"});
  const std::string rec = gpucheck::environment_record(e);
  EXPECT_EQ(rec, "CUBLAS_WORKSPACE_CONFIG=:4096:8; NCCL_ALGO=Ring; NCCL_IB_HCA=mlx5_0; mlx5_1");
  EXPECT_EQ(gpucheck::parse_environment_record(rec), e);
  EXPECT_TRUE(gpucheck::parse_environment_record("").empty());
  EXPECT_EQ(gpucheck::environment_record({}), "");

  const auto base = env_of({"NCCL_ALGO=Ring", "CUDA_MODULE_LOADING=LAZY"});
  const auto cur = env_of({"NCCL_ALGO=Tree", "CUDA_LAUNCH_BLOCKING=1", "CUDA_MODULE_LOADING=LAZY"});
  const auto ch = gpucheck::environment_changes(base, cur);
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(ch[0].name, "CUDA_LAUNCH_BLOCKING");
  EXPECT_FALSE(ch[0].base.has_value());
  EXPECT_EQ(ch[0].cur, "1");
  EXPECT_EQ(ch[1].name, "NCCL_ALGO");
  EXPECT_EQ(ch[1].base, "Ring");
  EXPECT_EQ(ch[1].cur, "Tree");
  EXPECT_TRUE(gpucheck::environment_changes(base, base).empty());
}
