#include <gtest/gtest.h>

#include "gpucheck/core/specs.hpp"

namespace gpucheck {
namespace {

class CommittedSpecs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    ASSERT_TRUE(SpecDb::load(GPUCHECK_SPECS_JSON, &db_, &err)) << err;
  }
  SpecDb db_;
};

TEST_F(CommittedSpecs, CoversTheRequiredSkus) {
  for (const char* id : {"nvidia-h100-sxm", "nvidia-h100-pcie", "nvidia-h200", "nvidia-a100-sxm4-40gb",
                         "nvidia-a100-sxm4-80gb", "nvidia-l40s", "nvidia-geforce-rtx-4090", "nvidia-b200"}) {
    bool found = false;
    for (const auto& s : db_.skus()) found |= s.id == id;
    EXPECT_TRUE(found) << id;
  }
}

TEST_F(CommittedSpecs, LooksUpCudaDeviceNames) {
  struct Case { const char* device; const char* id; };
  for (auto c : {Case{"NVIDIA H200", "nvidia-h200"}, Case{"NVIDIA H200 NVL", "nvidia-h200-nvl"},
                 Case{"NVIDIA H100 80GB HBM3", "nvidia-h100-sxm"}, Case{"NVIDIA H100 PCIe", "nvidia-h100-pcie"},
                 Case{"NVIDIA H100 NVL", "nvidia-h100-nvl"}, Case{"NVIDIA A100-SXM4-80GB", "nvidia-a100-sxm4-80gb"},
                 Case{"NVIDIA A100-SXM4-40GB", "nvidia-a100-sxm4-40gb"},
                 Case{"NVIDIA A100 80GB PCIe", "nvidia-a100-pcie-80gb"},
                 Case{"NVIDIA A100-PCIE-40GB", "nvidia-a100-pcie-40gb"}, Case{"NVIDIA L40S", "nvidia-l40s"},
                 Case{"NVIDIA GeForce RTX 4090", "nvidia-geforce-rtx-4090"}, Case{"NVIDIA B200", "nvidia-b200"}}) {
    const SkuSpec* s = db_.lookup(c.device);
    ASSERT_NE(s, nullptr) << c.device;
    EXPECT_EQ(s->id, c.id) << c.device;
  }
  EXPECT_EQ(db_.lookup("NVIDIA GeForce GTX 1080"), nullptr);
  EXPECT_EQ(db_.lookup(""), nullptr);
}

TEST_F(CommittedSpecs, H200FiguresAreTheDatasheets) {
  const SkuSpec* h200 = db_.lookup("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(*h200->peak(DType::bf16), 989.4);
  EXPECT_DOUBLE_EQ(*h200->peak(DType::fp8e4m3), 1978.9);
  EXPECT_DOUBLE_EQ(*h200->peak(DType::fp32), 67);
  EXPECT_DOUBLE_EQ(h200->memory_GBps, 4800);
  EXPECT_EQ(h200->pcie.gen, 5);
  EXPECT_EQ(h200->pcie.width, 16);
  // Every SKU: dense tensor rates rise fp32 < tf32 < bf16 (fp8 above where present).
  for (const auto& s : db_.skus()) {
    ASSERT_TRUE(s.peak(DType::fp32) && s.peak(DType::tf32) && s.peak(DType::bf16)) << s.id;
    EXPECT_LE(*s.peak(DType::fp32), *s.peak(DType::tf32)) << s.id;
    EXPECT_LT(*s.peak(DType::tf32), *s.peak(DType::bf16)) << s.id;
    if (auto f8 = s.peak(DType::fp8e4m3)) {
      EXPECT_GT(*f8, *s.peak(DType::bf16)) << s.id;
    }
    EXPECT_GT(s.memory_GBps, 0) << s.id;
    EXPECT_GT(pcie_link_GBps(s.pcie), 0) << s.id;
  }
}

TEST(Specs, A100HasNoFp8) {
  SpecDb db;
  std::string err;
  ASSERT_TRUE(SpecDb::load(GPUCHECK_SPECS_JSON, &db, &err)) << err;
  EXPECT_FALSE(db.lookup("NVIDIA A100-SXM4-80GB")->peak(DType::fp8e4m3).has_value());
}

TEST(Specs, BadFilesAreOneLineErrorsNamingTheFile) {
  SpecDb db;
  std::string err;
  EXPECT_FALSE(SpecDb::load("/nonexistent/specs.json", &db, &err));
  EXPECT_NE(err.find("/nonexistent/specs.json"), std::string::npos);
  for (const char* bad : {"", "{", "[]", "{\"skus\": 3}", "{\"skus\": [1]}",
                          "{\"skus\": [{\"id\": \"x\", \"match\": [], \"peak_tflops\": {}}]}",
                          "{\"skus\": [{\"id\": \"x\", \"match\": [\"X\"], \"peak_tflops\": {\"fp32\": \"fast\"}}]}",
                          "{\"skus\": [{\"id\": \"x\", \"match\": [\"X\"], \"peak_tflops\": {\"fp32\": -1}}]}",
                          "{\"skus\": [{\"match\": [\"X\"], \"peak_tflops\": {}}]}"}) {
    err.clear();
    EXPECT_FALSE(SpecDb::parse(bad, "t.json", &db, &err)) << bad;
    EXPECT_EQ(err.rfind("t.json", 0), 0u) << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
}

TEST(Specs, FirstMatchWinsInFileOrder) {
  SpecDb db;
  std::string err;
  ASSERT_TRUE(SpecDb::parse(R"({"skus": [
      {"id": "special", "match": ["H100", "NVL"], "peak_tflops": {"bf16": 1}},
      {"id": "general", "match": ["h100"], "peak_tflops": {"bf16": 2}}]})",
                            "t.json", &db, &err))
      << err;
  EXPECT_EQ(db.lookup("NVIDIA H100 NVL")->id, "special");
  EXPECT_EQ(db.lookup("nvidia h100 80gb hbm3")->id, "general");
  EXPECT_FALSE(db.lookup("NVIDIA H100")->peak(DType::fp32).has_value());
}

TEST(Specs, GpuSlug) {
  EXPECT_EQ(gpu_slug("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(gpu_slug("NVIDIA A100-SXM4-80GB"), "nvidia-a100-sxm4-80gb");
  EXPECT_EQ(gpu_slug("  NVIDIA  GeForce RTX 4090 "), "nvidia-geforce-rtx-4090");
  EXPECT_EQ(gpu_slug(""), "unknown-gpu");
  EXPECT_EQ(gpu_slug("///"), "unknown-gpu");
}

}  // namespace
}  // namespace gpucheck
