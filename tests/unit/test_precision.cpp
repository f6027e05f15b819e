// The pure helpers behind the report-only figures of issue 39: the samples' low percentile
// (p10_us, host-bound modes), the SM clock's mean and the mean power from the energy counter
// over a power burst's timed samples (sm_clock_mean_MHz, power_W).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <utility>
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

// NVML's energy counter on an H200 moves every ~100 ms (72 J at ~700 W): the power is taken
// between its first and last moves, not between the window's ends.
gpucheck::energy::EnergySteps steps(std::initializer_list<std::pair<double, std::optional<double>>> readings) {
  gpucheck::energy::EnergySteps e;
  for (const auto& [t, J] : readings) e.add(t, J);
  return e;
}

TEST(BurstPower, WholeStepsOverTheTimeBetweenTheReadingsThatSawThemMove) {
  // 0.4 s read every 5 ms would be 81 readings; these are the ones that matter. The window's
  // ends (0.000 and 0.400) hold 3 steps of 70 J, read as +-25% by a plain difference.
  const auto e = steps({{0.000, 1000.0}, {0.095, 1000.0}, {0.100, 1070.0}, {0.195, 1070.0}, {0.200, 1140.0},
                        {0.295, 1140.0}, {0.300, 1210.0}, {0.400, 1210.0}});
  EXPECT_EQ(e.moves(), 3);
  ASSERT_TRUE(e.power_W().has_value());
  EXPECT_DOUBLE_EQ(*e.power_W(), 140.0 / 0.2);  // 700 W, where (1210 - 1000) / 0.4 reads 525
}

TEST(BurstPower, FewerThanTwoMovesIsNoFigureNeverZero) {
  EXPECT_FALSE(steps({}).power_W().has_value());
  EXPECT_FALSE(steps({{0.0, 5.0}, {0.01, 5.0}}).power_W().has_value());               // a 10 ms burst: no step
  EXPECT_FALSE(steps({{0.0, 5.0}, {0.005, 5.0}, {0.01, 77.0}}).power_W().has_value());  // one step: 14,400 W
  EXPECT_FALSE(steps({{0.0, std::nullopt}, {0.1, std::nullopt}, {0.2, std::nullopt}}).power_W().has_value());
}

TEST(BurstPower, AMoveTimedLooselyAgainstTheStretchIsNoFigure) {
  // The readings 30 ms apart around moves 100 ms apart: up to 60% off; 5 ms apart: within 10%.
  EXPECT_FALSE(steps({{0.00, 0.0}, {0.03, 70.0}, {0.10, 70.0}, {0.13, 140.0}}).power_W().has_value());
  const auto tight = steps({{0.000, 0.0}, {0.005, 70.0}, {0.100, 70.0}, {0.105, 140.0}});
  ASSERT_TRUE(tight.power_W().has_value());
  EXPECT_DOUBLE_EQ(*tight.power_W(), 700.0);
  // Each move timed at the middle of its gap: gaps of 6 + 6 ms around moves 100 ms apart are
  // 6% of the stretch (the figure's worst error), within the 10%; 11 + 11 ms are past it.
  const auto six = steps({{0.000, 0.0}, {0.006, 70.0}, {0.100, 70.0}, {0.106, 140.0}});
  ASSERT_TRUE(six.power_W().has_value());
  EXPECT_DOUBLE_EQ(*six.power_W(), 700.0);
  EXPECT_FALSE(steps({{0.000, 0.0}, {0.011, 70.0}, {0.100, 70.0}, {0.111, 140.0}}).power_W().has_value());
  // Unequal gaps move the midpoints apart: 2 ms and 18 ms read 70 J over 0.108 - 0.001 s.
  const auto uneven = steps({{0.000, 0.0}, {0.002, 70.0}, {0.099, 70.0}, {0.117, 140.0}});
  ASSERT_TRUE(uneven.power_W().has_value());
  EXPECT_DOUBLE_EQ(*uneven.power_W(), 70.0 / (0.108 - 0.001));
}

TEST(BurstPower, ACounterThatWentBackOrAValueNotFiniteOrOutOfOrder) {
  // A driver reload within the window: no figure for it, whatever moves follow.
  EXPECT_FALSE(steps({{0.0, 5000.0}, {0.005, 5070.0}, {0.1, 12.0}, {0.105, 82.0}, {0.2, 152.0}}).power_W().has_value());
  // NaN and infinite readings, and a reading not later than the last, are skipped.
  const auto e = steps({{0.000, 0.0}, {0.005, 70.0}, {0.05, kNaN}, {0.06, kInf}, {kNaN, 500.0},
                        {0.004, 900.0}, {0.100, 70.0}, {0.105, 140.0}});
  ASSERT_TRUE(e.power_W().has_value());
  EXPECT_DOUBLE_EQ(*e.power_W(), 700.0);
}

TEST(PlateauReadings, DueOnceTheHostSpentAsLongAsTheLastReadingTook) {
  gpucheck::energy::ReadPacer p;
  EXPECT_TRUE(p.due(0.0));  // the first
  p.took(0.000, 0.006);
  EXPECT_FALSE(p.due(0.006));
  EXPECT_FALSE(p.due(0.0119));
  EXPECT_TRUE(p.due(0.012));  // the boundary: as long again
  p.took(0.012, 0.013);       // a short one: due soon after
  EXPECT_FALSE(p.due(0.0135));
  EXPECT_TRUE(p.due(0.014));
  p.reset();
  EXPECT_TRUE(p.due(0.0131));
}

TEST(PlateauReadings, ATimeNotFiniteOrAnEndBeforeItsStartForgetsTheLastReading) {
  for (const auto& [start, end] : {std::pair{0.0, kNaN}, std::pair{kNaN, 0.1}, std::pair{0.0, kInf}, std::pair{0.2, 0.1}}) {
    gpucheck::energy::ReadPacer p;
    p.took(0.0, 0.05);
    EXPECT_FALSE(p.due(0.06));
    p.took(start, end);
    EXPECT_TRUE(p.due(0.06)) << start << " " << end;
  }
  gpucheck::energy::ReadPacer p;
  p.took(0.0, 0.05);
  EXPECT_TRUE(p.due(kNaN));  // a clock that says nothing reads rather than never again
}

TEST(PlateauReadings, TheClockAtEverySecondReadingFromTheFirst) {
  EXPECT_TRUE(gpucheck::energy::plateau_reads_clock(0));
  EXPECT_FALSE(gpucheck::energy::plateau_reads_clock(1));
  EXPECT_TRUE(gpucheck::energy::plateau_reads_clock(2));
  EXPECT_FALSE(gpucheck::energy::plateau_reads_clock(81));
}

// The engine's queued mode as a model: two samples in flight; each turn queues one, takes the
// readings when due (read_s of host, times jitter() when given), then waits for the oldest. The
// fraction of the window the card was busy, paced or read every sample; *reads, when given,
// the times the readings ended.
double queue_busy(double sample_s, double read_s, bool paced, double window_s = 0.4,
                  std::vector<double>* reads = nullptr, const std::function<double()>& jitter = {}) {
  gpucheck::energy::ReadPacer pacer;
  double host = 0, gpu_free = 0, busy = 0;
  std::vector<double> stops;
  auto enqueue = [&] {
    const double start = std::max(host, gpu_free);
    gpu_free = start + sample_s;
    busy += sample_s;
    stops.push_back(gpu_free);
  };
  enqueue();
  std::size_t oldest = 0;
  while (host < window_s) {
    enqueue();
    host += 20e-6;  // the replay's launch and the events
    if (!paced || pacer.due(host)) {
      const double t0 = host;
      host += read_s * (jitter ? jitter() : 1.0);
      pacer.took(t0, host);
      if (reads) reads->push_back(host);
    }
    host = std::max(host, stops[oldest++]);
  }
  return busy / gpu_free;
}

TEST(PlateauReadings, PacedTheQueueKeepsTheCardBusyWhereReadingEverySampleIdlesIt) {
  // 5.4 ms samples (1024x4096x4096 bf16 on an H200) against readings of 4-10 ms of host.
  EXPECT_GT(queue_busy(5.4e-3, 4e-3, false), 0.99);   // shorter than a sample: no harm either way
  EXPECT_LT(queue_busy(5.4e-3, 6.3e-3, false), 0.90);  // the median an H200 took: idle
  EXPECT_LT(queue_busy(5.4e-3, 9e-3, false), 0.65);
  for (double read_s : {4e-3, 6.3e-3, 9e-3, 10e-3}) EXPECT_GT(queue_busy(5.4e-3, read_s, true), 0.98) << read_s;
}

TEST(PlateauReadings, PacedTheyTimeTheCountersStepsInEveryWindow) {
  // The model above with readings of 6.3 ms +-20% (an H200's median, reading every sample),
  // against a counter that steps 72 J every 100 ms (720 W) at a random phase: 400 windows.
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;
  auto uniform = [&state] {  // [0, 1), the same on every platform
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  };
  int figures = 0;
  std::vector<double> errors;
  for (int w = 0; w < 400; ++w) {
    std::vector<double> reads;
    queue_busy(5.4e-3, 6.3e-3, true, 0.4, &reads, [&uniform] { return 0.8 + 0.4 * uniform(); });
    const double phase = 0.1 * uniform();
    gpucheck::energy::EnergySteps e;
    for (double t : reads) e.add(t, 72.0 * std::floor((t - phase) / 0.1));
    if (const auto p = e.power_W()) {
      ++figures;
      errors.push_back(std::abs(*p / 720.0 - 1));
    }
  }
  EXPECT_EQ(figures, 400);  // the whole gaps as the rule's error: 103
  std::sort(errors.begin(), errors.end());
  ASSERT_FALSE(errors.empty());
  // The model's figures: 1.2% off the power (median), 4.8% (95th percentile), 7.1% at most,
  // within the rule's bound of 10%.
  EXPECT_LT(errors[errors.size() / 2], 0.02);
  EXPECT_LT(errors[errors.size() * 95 / 100], 0.06);
  EXPECT_LE(errors.back(), gpucheck::energy::kMaxStepTimingFraction);
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
