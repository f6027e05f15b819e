// The pure helpers behind the report-only figures of issue 39: the samples' low percentile
// (p10_us, host-bound modes), the SM clock's mean and the mean power from the energy counter
// over a power burst's timed samples (sm_clock_mean_MHz, power_W).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/energy.hpp"
#include "gpucheck/core/stats.hpp"

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST(Percentile, NothingToTakeOneFromIsNoValue) {
  EXPECT_FALSE(gpucheck::percentile(std::vector<double>{}, 10).has_value());
}

TEST(Percentile, APOutsideZeroToHundredIsRefused) {
  const std::vector<double> xs{1, 2, 3};
  EXPECT_FALSE(gpucheck::percentile(xs, -0.001).has_value());
  EXPECT_FALSE(gpucheck::percentile(xs, 100.001).has_value());
  EXPECT_FALSE(gpucheck::percentile(xs, kNaN).has_value());
  EXPECT_FALSE(gpucheck::percentile(xs, kInf).has_value());
}

TEST(Percentile, TheEndsAreTheMinimumAndTheMaximumAndFiftyIsTheMedian) {
  const std::vector<double> odd{9, 1, 5, 3, 7}, even{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*gpucheck::percentile(odd, 0), 1);
  EXPECT_DOUBLE_EQ(*gpucheck::percentile(odd, 100), 9);
  EXPECT_DOUBLE_EQ(*gpucheck::percentile(odd, 50), *gpucheck::median(odd));
  EXPECT_DOUBLE_EQ(*gpucheck::percentile(even, 50), *gpucheck::median(even));
}

TEST(Percentile, TheTenthInterpolatesBetweenRanksAsNumPyDoes) {
  std::vector<double> eleven;
  for (int i = 11; i >= 1; --i) eleven.push_back(i);  // unsorted on purpose
  EXPECT_DOUBLE_EQ(*gpucheck::percentile(eleven, 10), 2.0);  // rank 1.0 exactly
  EXPECT_DOUBLE_EQ(*gpucheck::percentile(std::vector<double>{1, 2, 3, 4}, 10), 1.3);  // numpy.percentile: 1.3
  EXPECT_DOUBLE_EQ(*gpucheck::percentile(std::vector<double>{5}, 10), 5.0);
  EXPECT_DOUBLE_EQ(*gpucheck::percentile(std::vector<double>{2, 2, 2}, 10), 2.0);
}

TEST(Percentile, ANaNSampleGivesNaN) {
  EXPECT_TRUE(std::isnan(*gpucheck::percentile(std::vector<double>{1, kNaN, 3}, 10)));
}

TEST(BurstClock, TheMeanOfTheReadingsThatHaveOne) {
  EXPECT_FALSE(gpucheck::energy::mean_clock_MHz({}).has_value());
  EXPECT_FALSE(gpucheck::energy::mean_clock_MHz({0, 0}).has_value());  // NVML said nothing
  EXPECT_DOUBLE_EQ(*gpucheck::energy::mean_clock_MHz({1980, 0, 1760}), 1870.0);
  EXPECT_DOUBLE_EQ(*gpucheck::energy::mean_clock_MHz({1980}), 1980.0);
}

TEST(BurstPower, TheCountersDeltaOverTheTime) {
  EXPECT_DOUBLE_EQ(*gpucheck::energy::mean_power_W(1000.0, 1014.0, 0.02), 700.0);
  EXPECT_DOUBLE_EQ(*gpucheck::energy::mean_power_W(0.0, 0.001, 1e-3), 1.0);
}

TEST(BurstPower, NoCounterAtEitherEndIsNoFigureNeverZero) {
  EXPECT_FALSE(gpucheck::energy::mean_power_W(std::nullopt, 10.0, 0.1).has_value());
  EXPECT_FALSE(gpucheck::energy::mean_power_W(10.0, std::nullopt, 0.1).has_value());
  EXPECT_FALSE(gpucheck::energy::mean_power_W(std::nullopt, std::nullopt, 0.1).has_value());
}

TEST(BurstPower, ACounterThatWentBackOrDidNotMoveIsNoFigure) {
  EXPECT_FALSE(gpucheck::energy::mean_power_W(5000.0, 12.0, 0.1).has_value());   // a driver reload (or a wrap)
  EXPECT_FALSE(gpucheck::energy::mean_power_W(5000.0, 5000.0, 0.1).has_value());  // updates slower than the stretch
}

TEST(BurstPower, AStretchThatIsNotAPositiveTimeOrAValueNotFiniteIsNoFigure) {
  for (const double s : {0.0, -0.1, kNaN, kInf})
    EXPECT_FALSE(gpucheck::energy::mean_power_W(1.0, 2.0, s).has_value()) << s;
  EXPECT_FALSE(gpucheck::energy::mean_power_W(kNaN, 2.0, 0.1).has_value());
  EXPECT_FALSE(gpucheck::energy::mean_power_W(1.0, kInf, 0.1).has_value());
}

TEST(PrecisionCounters, AreOursAndNeverTheRatesAPersonReads) {
  namespace c = gpucheck::contract;
  for (const char* name : {c::counter::method, c::counter::sm_clock_mean_MHz, c::counter::power_W, c::counter::p10_us}) {
    ASSERT_NE(c::counter_info(name), nullptr) << name;
    for (const auto r : c::kPreferredRates) EXPECT_NE(r, name);
  }
  EXPECT_EQ(c::counter_info(c::counter::power_W)->better, c::Better::none);
  EXPECT_EQ(c::unit_of(c::counter::sm_clock_mean_MHz), "MHz");
}
