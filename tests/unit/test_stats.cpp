#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gpucheck/core/measure.hpp"
#include "gpucheck/core/stats.hpp"

namespace gpucheck {
namespace {

using V = std::vector<double>;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Stats, EmptyHasNoFigure) {
  const V e;
  EXPECT_EQ(median(e), std::nullopt);
  EXPECT_EQ(mean(e), std::nullopt);
  EXPECT_EQ(stddev(e), std::nullopt);
  EXPECT_EQ(coefficient_of_variation(e), std::nullopt);
}

TEST(Stats, OneValueHasNoSpread) {
  const V one{3.5};
  EXPECT_EQ(median(one), 3.5);
  EXPECT_EQ(mean(one), 3.5);
  EXPECT_EQ(stddev(one), std::nullopt);
  EXPECT_EQ(coefficient_of_variation(one), std::nullopt);
}

TEST(Stats, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median(V{3, 1, 2}), 2.0);
  EXPECT_EQ(median(V{4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median(V{1e308, 1.5e308}), 1.25e308);  // no overflow
}

TEST(Stats, SampleStddevAndCv) {
  const V xs{2, 4, 4, 4, 5, 5, 7, 9};  // mean 5, sum of squares 32, n - 1 = 7
  EXPECT_DOUBLE_EQ(*mean(xs), 5.0);
  EXPECT_DOUBLE_EQ(*stddev(xs), std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(*coefficient_of_variation(xs), std::sqrt(32.0 / 7.0) / 5.0);
  EXPECT_DOUBLE_EQ(*coefficient_of_variation(V{-2, -4}), *coefficient_of_variation(V{2, 4}));  // |mean|
}

TEST(Stats, ZeroMeanHasNoCv) {
  EXPECT_EQ(coefficient_of_variation(V{-1, 1}), std::nullopt);
  EXPECT_EQ(coefficient_of_variation(V{0, 0}), std::nullopt);
  EXPECT_DOUBLE_EQ(*stddev(V{-1, 1}), std::sqrt(2.0));
}

TEST(Stats, NanPropagates) {
  EXPECT_TRUE(std::isnan(*median(V{1, kNaN, 3})));
  EXPECT_TRUE(std::isnan(*mean(V{1, kNaN})));
  EXPECT_TRUE(std::isnan(*stddev(V{1, kNaN})));
  EXPECT_EQ(coefficient_of_variation(V{1, kNaN}), std::nullopt);  // a non-finite mean has no cv
}

TEST(Stats, SummarizeIsBuiltOnThem) {
  const V xs{1.0, 1.1, 0.9, 1.2};
  const SampleStats s = summarize(xs);
  EXPECT_EQ(s.n, 4);
  EXPECT_EQ(s.median, *median(xs));
  EXPECT_EQ(s.mean, *mean(xs));
  EXPECT_EQ(s.cv, *coefficient_of_variation(xs));
  EXPECT_EQ(s.min, 0.9);
  EXPECT_EQ(s.max, 1.2);
  // Where the core statistics have no cv, a case reports 0 (the counter is always written).
  EXPECT_EQ(summarize(V{2.0}).cv, 0.0);
  EXPECT_EQ(summarize(V{-1, 1}).cv, 0.0);
  EXPECT_EQ(summarize(V{}).n, 0);
}

}  // namespace
}  // namespace gpucheck
