// The engine's sampling loop on a fake clock: batching, the stop rule and its reasons,
// slowed-sample accounting and lockstep agreement, all without a GPU.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "gpucheck/core/measure.hpp"

namespace gpucheck {
namespace {

class FakeClock final : public Clock {
 public:
  double t = 1000.0;
  double now_s() const override { return t; }
};

// Each call "takes" call_s of fake time (plus overhead per sample); sample k of the timed
// ones returns times[k % times.size()] per call.
class FakeSource final : public SampleSource {
 public:
  FakeClock& clock;
  std::vector<double> times;  // per-call seconds, cycled
  double overhead_s = 1e-5;
  int warmups = 0, samples = 0, betweens = 0;
  std::vector<int> batches;
  std::vector<bool> reads;
  std::optional<ClockReading> reading;
  int throw_at_sample = -1;
  explicit FakeSource(FakeClock& c, std::vector<double> t) : clock(c), times(std::move(t)) {}

  void warm_up() override {
    ++warmups;
    clock.t += times[0] + overhead_s;
  }
  Sample sample(int batch, bool read_clock) override {
    if (samples == throw_at_sample) throw std::runtime_error("work failed");
    const double per_call = times[static_cast<std::size_t>(samples) % times.size()];
    ++samples;
    batches.push_back(batch);
    reads.push_back(read_clock);
    clock.t += per_call * batch + overhead_s;
    Sample s;
    s.seconds = per_call * batch;
    if (read_clock) s.clock = reading;
    return s;
  }
  void between_samples() override { ++betweens; }
};

TEST(RunningStats, MatchesTheTwoPassFormulas) {
  RunningStats r;
  for (double x : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) r.add(x);
  EXPECT_DOUBLE_EQ(r.mean(), 5.0);
  EXPECT_NEAR(r.variance(), 32.0 / 7.0, 1e-12);
  EXPECT_NEAR(r.cv(), std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
  RunningStats one;
  one.add(3.0);
  EXPECT_EQ(one.cv(), 0.0);  // no spread from one value
}

TEST(StopRule, NeedsMinimumSamplesAndTimeThenStopsWhenQuiet) {
  StopRule rule;
  rule.min_samples = 10;
  rule.min_time_s = 0.05;
  RunningStats quiet;
  for (int i = 0; i < 9; ++i) quiet.add(1.0);
  EXPECT_FALSE(should_stop(rule, quiet, 1.0).has_value());  // 9 < 10 samples
  quiet.add(1.0);
  EXPECT_FALSE(should_stop(rule, quiet, 0.049).has_value());  // not long enough yet
  EXPECT_EQ(should_stop(rule, quiet, 0.05), StopReason::converged);
}

TEST(StopRule, NoisyCaseRunsToTheTimeLimitAndSaysSo) {
  StopRule rule;
  rule.max_time_s = 0.5;
  RunningStats noisy;
  for (int i = 0; i < 20; ++i) noisy.add(i % 2 ? 1.0 : 2.0);  // cv ~ 34%
  EXPECT_FALSE(should_stop(rule, noisy, 0.49).has_value());
  EXPECT_EQ(should_stop(rule, noisy, 0.5), StopReason::time_limit);
}

TEST(StopRule, ConfidenceOfTheMeanEndsAModeratelyNoisyCase) {
  // cv 2%: over the 0.5% cv target, but with n samples the mean's 95% half-width is
  // 1.96 * 2% / sqrt(n): under 0.5% from n = 62 on.
  StopRule rule;
  rule.min_time_s = 0;
  RunningStats r;
  int n = 0;
  std::optional<StopReason> stop;
  while (!stop) {
    r.add(n % 2 ? 0.98 : 1.02);
    ++n;
    stop = should_stop(rule, r, 0.1);
  }
  EXPECT_EQ(*stop, StopReason::converged);
  EXPECT_GE(n, 60);
  EXPECT_LE(n, 66);
}

TEST(StopRule, FixedSampleCountIsASampleLimit) {
  StopRule rule;
  rule.min_samples = 20;
  rule.max_samples = 20;
  rule.target_cv = 0;
  rule.target_rel_ci = 0;
  RunningStats r;
  for (int i = 0; i < 19; ++i) r.add(i % 2 ? 1.0 : 1.5);
  EXPECT_FALSE(should_stop(rule, r, 0.001).has_value());
  r.add(1.0);
  EXPECT_EQ(should_stop(rule, r, 0.001), StopReason::sample_limit);
}

TEST(StopRule, ALongCallStillGetsItsMinimumSamples) {
  StopRule rule;
  rule.min_samples = 5;
  rule.max_time_s = 0.5;
  RunningStats r;
  for (int i = 0; i < 3; ++i) r.add(i % 2 ? 1.0 : 3.0);
  EXPECT_FALSE(should_stop(rule, r, 10.0).has_value());  // past the limit, under the minimum
  r.add(1.0);
  r.add(3.0);
  EXPECT_EQ(should_stop(rule, r, 10.0), StopReason::time_limit);
}

TEST(Batch, SpansTheMinimumSampleTimeWithinBounds) {
  EXPECT_EQ(choose_batch(1e-3, 5e-4, 1, 64), 1);     // a long call: one per sample
  EXPECT_EQ(choose_batch(1e-4, 5e-4, 1, 64), 5);
  EXPECT_EQ(choose_batch(1.01e-4, 5e-4, 1, 64), 5);  // ceil(4.95)
  EXPECT_EQ(choose_batch(1e-6, 5e-4, 1, 64), 64);    // capped
  EXPECT_EQ(choose_batch(1e-3, 5e-4, 20, 64), 20);   // at least min_batch (nccl-tests' 20)
  EXPECT_EQ(choose_batch(0.0, 5e-4, 1, 64), 64);     // nothing measured: the most
  EXPECT_EQ(choose_batch(NAN, 5e-4, 1, 64), 64);
  EXPECT_EQ(choose_batch(1e-6, 5e-4, 1, 1), 1);      // cold mode: one call per sample
  EXPECT_EQ(choose_batch(1e-6, 5e-4, 5, 0), 1);      // nonsense bounds stay sane
}

TEST(Slowed, ClockUnderThreeQuartersOrAHardwareReason) {
  const std::optional<unsigned> max = 1980;
  EXPECT_FALSE(is_slowed({1980, 0}, max));
  EXPECT_FALSE(is_slowed({1530, 0x4}, max));  // power capped under load: normal
  EXPECT_FALSE(is_slowed({1485, 0}, max));    // exactly 75%
  EXPECT_TRUE(is_slowed({1484, 0}, max));
  EXPECT_TRUE(is_slowed({1980, 0x8}, max));   // hw_slowdown
  EXPECT_TRUE(is_slowed({1980, 0x40}, max));  // hw_thermal
  EXPECT_TRUE(is_slowed({1980, 0x80}, max));  // hw_power_brake
  EXPECT_FALSE(is_slowed({600, 0}, std::nullopt));  // no maximum known: clock alone says nothing
}

TEST(Summary, MedianMeanMinMaxCv) {
  const std::vector<double> v{3, 1, 2, 10};
  const SampleStats s = summarize(v);
  EXPECT_EQ(s.n, 4);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 4.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_GT(s.cv, 0.9);
  EXPECT_EQ(summarize(std::vector<double>{}).n, 0);
}

TEST(Sampling, QuietShortCallsAreBatchedAndStopEarly) {
  FakeClock clock;
  FakeSource src(clock, {1e-4});
  SamplingPlan plan;
  plan.stop.min_time_s = 0.01;
  const Sampled s = run_sampling(src, plan, clock);
  EXPECT_EQ(s.batch, 5);  // 0.5 ms / 0.1 ms
  EXPECT_EQ(s.reason, StopReason::converged);
  EXPECT_GE(s.stats.n, plan.stop.min_samples);
  EXPECT_GE(s.elapsed_s, plan.stop.min_time_s);
  EXPECT_LT(s.elapsed_s, 0.02);
  EXPECT_DOUBLE_EQ(s.stats.median, 1e-4);
  EXPECT_GE(src.warmups, plan.warmup_calls);
  // Calibration sample first, with one call, then every timed sample with the batch.
  ASSERT_GE(src.batches.size(), 2u);
  EXPECT_EQ(src.batches[0], 1);
  for (std::size_t i = 1; i < src.batches.size(); ++i) EXPECT_EQ(src.batches[i], 5);
  EXPECT_EQ(src.betweens, static_cast<int>(src.batches.size()));
  EXPECT_TRUE(noise_note(s).empty());
}

TEST(Sampling, NoisyCaseHitsTheTimeLimitAndReportsItsNoise) {
  FakeClock clock;
  FakeSource src(clock, {1e-3, 2e-3});
  SamplingPlan plan;
  plan.stop.max_time_s = 0.5;
  const Sampled s = run_sampling(src, plan, clock);
  EXPECT_EQ(s.reason, StopReason::time_limit);
  EXPECT_GE(s.elapsed_s, 0.5);
  EXPECT_LT(s.elapsed_s, 0.51);
  EXPECT_GT(s.stats.cv, 0.3);
  EXPECT_NE(noise_note(s).find("stop=time_limit cv="), std::string::npos);
}

TEST(Sampling, WarmUpLastsAtLeastItsTimeAndCalls) {
  FakeClock clock;
  FakeSource src(clock, {1e-3});
  SamplingPlan plan;
  plan.warmup_calls = 5;
  plan.warmup_s = 0.05;
  run_sampling(src, plan, clock);
  EXPECT_GE(src.warmups, 50);  // 50 ms of 1 ms calls
  EXPECT_LE(src.warmups, 51);
  FakeClock c2;
  FakeSource slow(c2, {1.0});  // 1 s calls: the call count decides
  run_sampling(slow, plan, c2);
  EXPECT_EQ(slow.warmups, 5);
}

TEST(Sampling, ClockIsReadAtMostEveryIntervalAndSlowedSamplesAreCounted) {
  FakeClock clock;
  FakeSource src(clock, {2e-3});
  src.reading = ClockReading{1200, 0x40};  // hw_thermal at 1200 MHz
  SamplingPlan plan;
  plan.sm_clock_max_MHz = 1980;
  plan.clock_read_interval_s = 0.01;
  plan.stop.min_samples = 20;
  plan.stop.max_samples = 20;
  const Sampled s = run_sampling(src, plan, clock);
  // 2 ms samples, a read every 10 ms: about one sample in five reads the clock.
  int reads = 0;
  for (bool r : src.reads) reads += r;
  EXPECT_GE(reads, 4);
  EXPECT_LE(reads, 6);
  EXPECT_FALSE(src.reads[0]);  // the calibration sample never reads
  EXPECT_EQ(s.slowed_samples, 20);  // every sample after the first (slowed) reading
  EXPECT_EQ(s.sm_clock_MHz, 1200u);
  EXPECT_EQ(s.clock_event_reasons, 0x40u);
  EXPECT_EQ(s.reason, StopReason::sample_limit);
}

// A plateau: the samples of the first discard_s run (the load that takes the card into its
// power limit) but are not counted, nor clock-read; the source hears once where counting
// starts; the window's end still counts from the first timed sample.
class CountingSource final : public SampleSource {
 public:
  FakeClock& clock;
  int samples = 0, starts = 0, samples_at_start = -1, reads = 0;
  explicit CountingSource(FakeClock& c) : clock(c) {}
  static constexpr double kMs = 1.0 / 1024;  // about 1 ms, exact in binary: the counts below are exact
  void warm_up() override { clock.t += kMs; }
  Sample sample(int batch, bool read_clock) override {
    // 1 "ms" a call until counting starts (the boost clock), then 2.
    const double per_call = starts == 0 ? kMs : 2 * kMs;
    ++samples;
    reads += read_clock;
    clock.t += per_call * batch;
    Sample s;
    s.seconds = per_call * batch;
    if (read_clock) s.clock = ClockReading{1500, 0};
    return s;
  }
  void counting_starts() override {
    ++starts;
    samples_at_start = samples;
  }
};

TEST(Sampling, APlateauDiscardsItsLoadAndCountsTheWindowOnly) {
  FakeClock clock;
  CountingSource src(clock);
  SamplingPlan plan;
  plan.discard_s = 0.25;
  plan.stop.min_time_s = plan.stop.max_time_s = 0.75;
  plan.stop.target_cv = plan.stop.target_rel_ci = 0;
  plan.clock_read_interval_s = 0;
  const Sampled s = run_sampling(src, plan, clock);
  EXPECT_EQ(src.starts, 1);
  // Calibration (1 call), then 0.25 s of 1-unit samples (batch 1: one call is over the 0.5 ms
  // minimum sample), then 0.5 s of 2-unit samples.
  EXPECT_EQ(s.batch, 1);
  EXPECT_EQ(s.discarded, 256);
  EXPECT_EQ(src.samples_at_start, 257);
  EXPECT_EQ(s.stats.n, 256);
  EXPECT_DOUBLE_EQ(s.stats.median, 2 * CountingSource::kMs);  // none of the load's samples
  EXPECT_DOUBLE_EQ(s.stats.min, 2 * CountingSource::kMs);
  // Identical samples meet the target cv of 0, but only at min_time_s: the window's end.
  EXPECT_EQ(s.reason, StopReason::converged);
  EXPECT_DOUBLE_EQ(s.elapsed_s, 0.75);
  EXPECT_EQ(src.reads, 256);  // only counted samples read the clock
  EXPECT_EQ(s.slowed_samples, 0);
  EXPECT_EQ(s.sm_clock_MHz, 1500u);
}

TEST(Sampling, APlateausSamplesAreFiveMillisecondsOfCallsAtMost1024) {
  // ci/torch_reference.py's PLATEAU_SAMPLE_MS and PLATEAU_MAX_BATCH pin the same figures.
  EXPECT_EQ(kPlateauSampleS, 5e-3);
  EXPECT_EQ(kPlateauMaxBatch, 1024);
  EXPECT_EQ(choose_batch(14e-6, kPlateauSampleS, 1, kPlateauMaxBatch), 358);  // 128x4096x4096: 5 ms
  EXPECT_EQ(choose_batch(2e-6, kPlateauSampleS, 1, kPlateauMaxBatch), 1024);  // capped
  EXPECT_EQ(choose_batch(11e-3, kPlateauSampleS, 1, kPlateauMaxBatch), 1);    // 8192x57344x8192
}

TEST(Batch, APlateausLoadFollowsTheSteadyCallTimeWhenItIsAQuarterAway) {
  // 5 ms samples: a 15 us call wants 334; the batch moves only when 25% or more away.
  EXPECT_EQ(follow_batch(100, 15e-6, 5e-3, 1, 1024), 334);   // calibration overstated 3.3x
  EXPECT_EQ(follow_batch(1024, 15e-6, 5e-3, 1, 1024), 334);  // understated
  EXPECT_EQ(follow_batch(300, 15e-6, 5e-3, 1, 1024), 300);   // 334 is 11% away: kept
  EXPECT_EQ(follow_batch(267, 15e-6, 5e-3, 1, 1024), 334);   // 334 >= 1.25 x 267
  EXPECT_EQ(follow_batch(268, 15e-6, 5e-3, 1, 1024), 268);
  EXPECT_EQ(follow_batch(417, 15e-6, 5e-3, 1, 1024), 417);   // 417 < 1.25 x 334
  EXPECT_EQ(follow_batch(418, 15e-6, 5e-3, 1, 1024), 334);
  EXPECT_EQ(follow_batch(1, 11e-3, 5e-3, 1, 1024), 1);       // a long call stays one a sample
  EXPECT_EQ(follow_batch(5, 0.0, 5e-3, 1, 1024), 1024);      // no time: choose_batch's cap
}

// A plateau of 5 ms samples whose calibration call reads 1 ms and every later call 0.1 ms.
struct MisjudgedPlateau {
  FakeClock clock;
  FakeSource src{clock, calls()};
  SamplingPlan plan;
  static std::vector<double> calls() {
    std::vector<double> times(2000, 1e-4);
    times[0] = 1e-3;
    return times;
  }
  explicit MisjudgedPlateau(int turns) {
    plan.min_sample_s = 5e-3;
    plan.max_batch = 1024;
    plan.discard_s = 0.05;
    plan.batch_turns = turns;
    plan.stop.min_time_s = plan.stop.max_time_s = 0.1;
    plan.stop.target_cv = plan.stop.target_rel_ci = 0;
  }
  Sampled run() { return run_sampling(src, plan, clock); }
};

TEST(Sampling, APlateausLoadResizesABatchTheCalibrationMisjudged) {
  MisjudgedPlateau p(1);
  const Sampled s = p.run();
  const FakeSource& src = p.src;
  ASSERT_GE(src.batches.size(), 3u);
  EXPECT_EQ(src.batches[0], 1);   // calibration
  EXPECT_EQ(src.batches[1], 5);   // from its 1 ms
  EXPECT_EQ(src.batches[2], 50);  // from the first discarded sample's 0.1 ms
  EXPECT_EQ(s.batch, 50);
  for (std::size_t i = 2; i < src.batches.size(); ++i) EXPECT_EQ(src.batches[i], 50) << i;
  EXPECT_DOUBLE_EQ(s.stats.median, 1e-4);
}

TEST(Batch, WholeTurnsOfTheRotatedCopies) {
  EXPECT_EQ(whole_turns(193, 1, 1024), 193);  // no copies: unchanged
  EXPECT_EQ(whole_turns(193, 0, 1024), 193);
  EXPECT_EQ(whole_turns(193, -3, 1024), 193);
  EXPECT_EQ(whole_turns(193, 4, 1024), 196);  // up to the next whole turn
  EXPECT_EQ(whole_turns(196, 4, 1024), 196);
  EXPECT_EQ(whole_turns(27, 4, 64), 28);
  EXPECT_EQ(whole_turns(1, 3, 64), 3);
  EXPECT_EQ(whole_turns(0, 3, 64), 3);
  EXPECT_EQ(whole_turns(1023, 5, 1024), 1020);  // up passes the cap: down
  EXPECT_EQ(whole_turns(64, 5, 64), 60);
  EXPECT_EQ(whole_turns(1, 8, 4), 8);  // no multiple under the cap: one turn
}

TEST(FastestGroup, PicksTheLowestMedianAndTheSpread) {
  const std::vector<double> m{234.2e-6, 213.6e-6, 234.0e-6, 213.8e-6, 213.7e-6};
  const auto p = fastest_group(m);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->index, 1u);
  EXPECT_NEAR(p->spread, 234.2 / 213.6 - 1, 1e-12);
}

TEST(FastestGroup, OneGroupHasNoSpreadAndTiesGoToTheFirst) {
  const std::vector<double> one{5e-6};
  ASSERT_TRUE(fastest_group(one).has_value());
  EXPECT_EQ(fastest_group(one)->index, 0u);
  EXPECT_EQ(fastest_group(one)->spread, 0.0);
  const std::vector<double> tie{7e-6, 5e-6, 5e-6};
  EXPECT_EQ(fastest_group(tie)->index, 1u);
}

TEST(FastestGroup, NothingMeasuredIsNoPick) {
  EXPECT_FALSE(fastest_group(std::vector<double>{}).has_value());
  for (const double bad : {0.0, -1e-6, std::nan(""), std::numeric_limits<double>::infinity()}) {
    const std::vector<double> m{5e-6, bad, 4e-6};
    EXPECT_FALSE(fastest_group(m).has_value()) << bad;
  }
}

TEST(Sampling, EveryBatchIsAWholeNumberOfTurns) {
  // As the load test above, with 3 copies: the calibration's 5 becomes 6, the load's 50 becomes 51.
  MisjudgedPlateau p(3);
  const Sampled s = p.run();
  const FakeSource& src = p.src;
  ASSERT_GE(src.batches.size(), 3u);
  EXPECT_EQ(src.batches[0], 1);  // the calibration: one call
  EXPECT_EQ(src.batches[1], 6);
  EXPECT_EQ(src.batches[2], 51);
  EXPECT_EQ(s.batch, 51);
  for (std::size_t i = 1; i < src.batches.size(); ++i) EXPECT_EQ(src.batches[i] % 3, 0) << i;
}

TEST(Sampling, WithoutADiscardEverySampleCountsAndCountingNeverAnnounces) {
  FakeClock clock;
  CountingSource src(clock);
  SamplingPlan plan;
  plan.stop.min_samples = plan.stop.max_samples = 20;
  const Sampled s = run_sampling(src, plan, clock);
  EXPECT_EQ(src.starts, 0);
  EXPECT_EQ(s.discarded, 0);
  EXPECT_EQ(s.stats.n, 20);
  EXPECT_DOUBLE_EQ(s.stats.median, CountingSource::kMs);
}

TEST(Sampling, HostReferenceIsReadWarmBeforeAndAfterTheCase) {
  FakeClock clock;
  FakeSource src(clock, {1e-3});
  SamplingPlan plan;
  plan.stop.min_samples = plan.stop.max_samples = 30;
  plan.host_reference_every = 1;
  const Sampled s = run_sampling(src, plan, clock);
  EXPECT_EQ(s.host_reference_s.size(), 2u);  // before the warm-up, after the last sample
  EXPECT_TRUE(run_sampling(src, SamplingPlan{}, clock).host_reference_s.empty());  // off by default
}

// A source with a host reference of its own (bench_pcie's host memcpy): the loop keeps what
// the source reports, not the fixed CPU work; each reading is an untimed pass, then the
// fastest of three timed ones.
class OwnReferenceSource final : public SampleSource {
 public:
  void warm_up() override { log += 'w'; }
  Sample sample(int batch, bool) override {
    log += 's';
    return Sample{1e-3 * batch, std::nullopt};
  }
  double host_reference(const Clock&) override {
    log += 'r';
    return 0.25 + 0.001 * references++;
  }
  int references = 0;
  std::string log;
};

TEST(Sampling, ASourceMayTimeItsOwnHostReference) {
  FakeClock clock;
  OwnReferenceSource src;
  SamplingPlan plan;
  plan.stop.min_samples = plan.stop.max_samples = 10;
  plan.host_reference_every = 1;
  const Sampled s = run_sampling(src, plan, clock);
  ASSERT_EQ(s.host_reference_s.size(), 2u);
  EXPECT_DOUBLE_EQ(s.host_reference_s[0], 0.251);  // 0.250 was the untimed pass
  EXPECT_DOUBLE_EQ(s.host_reference_s[1], 0.255);  // 0.254 untimed
  EXPECT_EQ(src.references, 8);
  // All four passes of a reading run together, before any of the case's work and after all of it.
  EXPECT_EQ(src.log.substr(0, 4), "rrrr");
  EXPECT_EQ(src.log.substr(src.log.size() - 4), "rrrr");
  EXPECT_EQ(std::count(src.log.begin(), src.log.end(), 'r'), 8);
}

// The old reference ran right after a sample and read how much of its table the case's own
// work had evicted (issue 17: 21.9 us warm, 182-229 us after 64 MiB of traffic). A source
// whose reference reads high once after each sample models that: the warm reading does not.
class EvictingSource final : public SampleSource {
 public:
  void warm_up() override { evicted = true; }
  Sample sample(int batch, bool) override {
    evicted = true;
    return Sample{1e-3 * batch, std::nullopt};
  }
  double host_reference(const Clock&) override {
    const double t = evicted ? 200e-6 : 22e-6;
    evicted = false;
    return t;
  }
  bool evicted = true;
};

TEST(Sampling, TheWarmHostReferenceDoesNotReadTheCasesOwnEviction) {
  FakeClock clock;
  EvictingSource src;
  SamplingPlan plan;
  plan.stop.min_samples = plan.stop.max_samples = 20;
  plan.host_reference_every = 1;
  const Sampled s = run_sampling(src, plan, clock);
  ASSERT_EQ(s.host_reference_s.size(), 2u);
  for (const double r : s.host_reference_s) EXPECT_DOUBLE_EQ(r, 22e-6);
}

// On a real clock: a cold reading after 64 MiB of unrelated memory traffic reads the eviction;
// the warm reading after the same traffic reads what an undisturbed one does (best of five
// tries each, so a busy CI host does not decide the test).
TEST(HostReference, WarmReadingIgnoresEvictionOnARealClock) {
  const SteadyClock clock;
  class Real final : public SampleSource {
   public:
    void warm_up() override {}
    Sample sample(int, bool) override { return {}; }
  } src;
  std::vector<unsigned char> traffic(std::size_t{64} << 20, 1);
  auto evict = [&] {
    unsigned sum = 0;
    for (std::size_t i = 0; i < traffic.size(); i += 64) sum += traffic[i]++;
    return sum;
  };
  double quiet = 1e9, warm = 1e9, cold = 1e9;
  volatile unsigned sink = 0;
  for (int t = 0; t < 5; ++t) {
    quiet = std::min(quiet, warm_host_reference(src, clock));
    sink = sink + evict();
    warm = std::min(warm, warm_host_reference(src, clock));
    sink = sink + evict();
    cold = std::min(cold, time_host_reference(clock));
  }
  EXPECT_GT(quiet, 1e-7);
  EXPECT_LT(warm, 1.5 * quiet) << "warm " << warm << " s, undisturbed " << quiet << " s";
  EXPECT_GT(cold, warm) << "cold " << cold << " s, warm " << warm << " s";
}

TEST(Sampling, AnExceptionFromTheWorkPropagates) {
  FakeClock clock;
  FakeSource src(clock, {1e-3});
  src.throw_at_sample = 3;
  EXPECT_THROW(run_sampling(src, SamplingPlan{}, clock), std::runtime_error);
}

// Two "ranks" in one process: rank 0 samples, the agreement also carries rank 1's view.
class FakeAgreement final : public Agreement {
 public:
  double other_time = 0;
  int other_refuses_from_call = 1 << 30;  // from this all() call on, the other rank says "not yet"
  int calls = 0;
  double max(double v) override { return std::max(v, other_time); }
  bool all(bool v) override {
    const bool other = calls++ < other_refuses_from_call;
    return v && other;
  }
};

TEST(Sampling, LockstepRanksTakeTheSlowestTimeAndStopTogether) {
  FakeClock clock;
  FakeSource src(clock, {1e-3});
  FakeAgreement agree;
  agree.other_time = 4e-3;  // the other rank is slower
  SamplingPlan plan;
  plan.warmup_s = 0;
  const Sampled s = run_sampling(src, plan, clock, &agree);
  EXPECT_DOUBLE_EQ(s.stats.median, 4e-3);  // its time, not ours
  EXPECT_GT(agree.calls, 0);

  FakeClock c2;
  FakeSource src2(c2, {1e-3});
  FakeAgreement never;
  never.other_refuses_from_call = 4;  // agrees to end the warm-up (its 4th call), never to stop: nobody stops...
  src2.throw_at_sample = 200;  // ...until the test's guard ends it
  EXPECT_THROW(run_sampling(src2, plan, c2, &never), std::runtime_error);
  EXPECT_EQ(src2.samples, 200);
}

}  // namespace
}  // namespace gpucheck
