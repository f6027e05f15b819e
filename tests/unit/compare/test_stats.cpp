// Statistics against reference values from scipy.stats.mannwhitneyu (scipy 1.10.1,
// alternative="two-sided", method="auto"), computed once and written down here.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "rules/stats.hpp"

namespace gc = gpucheck::compare;

struct UCase {
  const char* name;
  std::vector<double> x, y;
  double u1, p;
  bool exact;
};

class MannWhitneyScipy : public ::testing::TestWithParam<UCase> {};

TEST_P(MannWhitneyScipy, MatchesScipy) {
  const UCase& c = GetParam();
  const auto r = gc::mann_whitney_u(c.x, c.y);
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->u1, c.u1);
  EXPECT_NEAR(r->p_value, c.p, 1e-12 + 1e-9 * c.p);
  EXPECT_EQ(r->exact, c.exact);
}

INSTANTIATE_TEST_SUITE_P(
    Reference, MannWhitneyScipy,
    ::testing::Values(
        UCase{"small_exact", {1, 2, 3}, {4, 5, 6}, 0.0, 0.1, true},
        UCase{"interleaved_exact", {1.1, 2.2, 3.3, 4.4}, {1.5, 2.5, 3.6, 4.6, 5.0}, 6.0, 0.4126984126984127, true},
        UCase{"ties", {1, 2, 2, 3, 3, 3}, {2, 3, 4, 4, 5}, 5.5, 0.08871369199677616, false},
        UCase{"nine_nine", {3, 7, 11, 15, 19, 23, 27, 31, 35}, {5, 9, 13, 17, 21, 25, 29, 33, 36.5}, 36.0,
              0.7239320396139757, false},
        UCase{"three_twenty",
              {10.5, 20.5, 30.5},
              {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
              50.0,
              0.07566346696781479,
              true},
        UCase{"all_tied", {5, 5, 5}, {5, 5, 5}, 4.5, 1.0, false},
        UCase{"gbench_like", {1.01, 1.02, 0.99, 1.00, 1.03}, {1.10, 1.12, 1.09, 1.11, 1.13}, 0.0,
              0.007936507936507936, true},
        UCase{"normal_20_25",
              {100.006, 101.494, 98.629, 95.547, 97.727, 95.042, 100.301, 106.701, 97.539, 96.898,
               102.449, 101.784, 100.527, 95.348, 99.854, 103.477, 93.279, 97.712, 90.494, 93.552},
              {94.791, 102.825, 97.663, 105.356, 104.784, 103.065, 91.416, 101.307, 103.757,
               104.567, 96.349, 101.611, 99.107, 99.956, 109.304, 99.962, 103.837, 108.422,
               101.082, 103.441, 104.552, 104.319, 97.875, 104.381, 110.794},
              125.0,
              0.004458176291700363,
              false}),
    [](const ::testing::TestParamInfo<UCase>& i) { return std::string(i.param.name); });

TEST(Stats, ExactDistributionTailsAddUp) {
  // n1 = n2 = 3: 20 arrangements, U ranges 0..9, P(U >= 0) = 1, P(U >= 9) = 1/20.
  EXPECT_DOUBLE_EQ(gc::mann_whitney_exact_sf(0, 3, 3), 1.0);
  EXPECT_DOUBLE_EQ(gc::mann_whitney_exact_sf(9, 3, 3), 0.05);
  EXPECT_DOUBLE_EQ(gc::mann_whitney_exact_sf(10, 3, 3), 0.0);
  // Symmetric distribution: P(U >= 5) = P(U <= 4) = 1/2 for n1 = n2 = 3.
  EXPECT_DOUBLE_EQ(gc::mann_whitney_exact_sf(5, 3, 3), 0.5);
}

TEST(Stats, SwappingSamplesKeepsP) {
  const std::vector<double> a{1.0, 1.2, 1.4, 1.1}, b{1.3, 1.5, 1.6, 1.7, 1.8};
  const auto ab = gc::mann_whitney_u(a, b);
  const auto ba = gc::mann_whitney_u(b, a);
  ASSERT_TRUE(ab && ba);
  EXPECT_DOUBLE_EQ(ab->p_value, ba->p_value);
  EXPECT_DOUBLE_EQ(ab->u1 + ba->u1, 20.0);
}

TEST(Stats, EmptySampleHasNoTest) { EXPECT_FALSE(gc::mann_whitney_u(std::vector<double>{}, std::vector<double>{1.0})); }
