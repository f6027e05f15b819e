// Threshold file parsing and glob matching.
#include <gtest/gtest.h>

#include "gpucheck/compare/thresholds.hpp"

namespace gc = gpucheck::compare;

TEST(Thresholds, Globs) {
  EXPECT_TRUE(gc::glob_match("launch/*", "launch/graph/empty/100"));
  EXPECT_TRUE(gc::glob_match("*/fp16/*", "conv/nhwc/fp16/n64c64h56w56k64r3s3"));
  EXPECT_TRUE(gc::glob_match("pcie/?2d/*", "pcie/h2d/pinned/4KiB"));
  EXPECT_TRUE(gc::glob_match("*", ""));
  EXPECT_FALSE(gc::glob_match("launch/*", "matmul/launch/x"));
  EXPECT_FALSE(gc::glob_match("pcie/h2d", "pcie/h2d/pinned"));
  EXPECT_TRUE(gc::glob_match("a*b*c*d", "aXXbYYcZZd"));
  EXPECT_FALSE(gc::glob_match("a*b*c*d", "aXXbYYcZZ"));
}

TEST(Thresholds, Percentages) {
  EXPECT_DOUBLE_EQ(*gc::parse_percent("10%"), 10.0);
  EXPECT_DOUBLE_EQ(*gc::parse_percent("12.5"), 12.5);
  EXPECT_FALSE(gc::parse_percent("0%"));
  EXPECT_FALSE(gc::parse_percent("-5%"));
  EXPECT_FALSE(gc::parse_percent("ten"));
  EXPECT_FALSE(gc::parse_percent("10%%"));
  EXPECT_FALSE(gc::parse_percent(""));
}

TEST(Thresholds, FileFirstMatchWins) {
  auto t = gc::parse_thresholds(R"({"default_pct": 8, "overrides": [
      {"glob": "launch/graph/*", "pct": "20%"}, {"glob": "launch/*", "pct": 15, "why": "latency"}]})", "t.json");
  ASSERT_TRUE(t) << t.error().str();
  EXPECT_DOUBLE_EQ(t->pct_for("launch/graph/empty/100"), 20.0);
  EXPECT_DOUBLE_EQ(t->pct_for("launch/eager/empty/100"), 15.0);
  EXPECT_DOUBLE_EQ(t->pct_for("matmul/cublas/fp32/1024x1024x1024"), 8.0);
  EXPECT_EQ(t->overrides[1].why, "latency");
}

TEST(Thresholds, BadFiles) {
  EXPECT_FALSE(gc::parse_thresholds("{", "t.json"));
  EXPECT_FALSE(gc::parse_thresholds("[]", "t.json"));
  EXPECT_FALSE(gc::parse_thresholds(R"({"overrides": {}})", "t.json"));
  EXPECT_FALSE(gc::parse_thresholds(R"({"overrides": [{"pct": 5}]})", "t.json"));
  EXPECT_FALSE(gc::parse_thresholds(R"({"overrides": [{"glob": "a/*", "pct": -5}]})", "t.json"));
  EXPECT_FALSE(gc::parse_thresholds(R"({"overrides": [{"glob": "a/*", "pct": NaN}]})", "t.json"));
  EXPECT_FALSE(gc::parse_thresholds(R"({"default_pct": "lots"})", "t.json"));
}

TEST(Thresholds, RepositoryFileParses) {
  auto text = std::string(GPUCHECK_SOURCE_DIR) + "/baselines/thresholds.json";
  FILE* f = std::fopen(text.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string s;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  std::fclose(f);
  auto t = gc::parse_thresholds(s, text);
  ASSERT_TRUE(t) << t.error().str();
  EXPECT_DOUBLE_EQ(t->default_pct, 10.0);
  EXPECT_DOUBLE_EQ(t->pct_for("launch/graph/empty/100"), 15.0);
}
