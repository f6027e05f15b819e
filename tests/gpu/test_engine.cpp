// The measurement engine on the device: each mode measures work of a known duration (a plateau
// its window only); a work that throws mid-batch releases the held stream at once (not after
// the spin kernel's 2 s timeout) and fails that case only; every case reports samples and cv_pct.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/engine.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/kernels/spin.cuh"

namespace gpucheck {
namespace {

constexpr unsigned long long kWorkNs = 200'000;  // 200 us per call

harness::MeasureOptions quick_plan(const harness::Device& dev, TimingMode mode) {
  harness::MeasureOptions o = harness::default_measure(dev);
  o.mode = mode;
  o.plan.warmup_calls = 2;
  o.plan.warmup_s = 0;
  o.plan.stop.max_time_s = 0.2;
  return o;
}

TEST(Engine, HeldPerCallAndColdMeasureWorkOfKnownDuration) {
  GPUCHECK_REQUIRE_DEVICE();
  harness::Device dev(Options{});
  const harness::Work work = [](cudaStream_t s) { kernels::busy_wait(kWorkNs, s); };
  for (TimingMode mode : {TimingMode::held, TimingMode::per_call, TimingMode::cold, TimingMode::queued}) {
    const harness::Measurement m = harness::measure(dev, work, quick_plan(dev, mode));
    SCOPED_TRACE(std::string(to_string(mode)));
    EXPECT_GE(m.per_call_s, 0.95 * kWorkNs * 1e-9);
    EXPECT_LE(m.per_call_s, 1.20 * kWorkNs * 1e-9);
    EXPECT_GE(m.sampled.stats.n, 10);
    EXPECT_LT(m.sampled.stats.cv, 0.05);
    if (mode == TimingMode::cold) EXPECT_EQ(m.sampled.batch, 1);
    else EXPECT_EQ(m.sampled.batch, 3);  // 0.5 ms of 0.2 ms calls
  }
}

TEST(Engine, APlateauQueuesFiveMillisecondSamplesAndCountsOnlyItsWindow) {
  GPUCHECK_REQUIRE_DEVICE();
  harness::Device dev(Options{});
  const harness::Work work = [](cudaStream_t s) { kernels::busy_wait(kWorkNs, s); };
  const harness::Measurement m = harness::measure(dev, work, harness::power_plateau(harness::default_measure(dev), 0.05, 0.1));
  EXPECT_EQ(m.mode, TimingMode::queued);
  EXPECT_TRUE(m.graph);  // each sample one graph replay of its calls
  EXPECT_GE(m.sampled.batch, 23);  // 5 ms of calls of 0.2 ms or a little more (24 and 25 seen)
  EXPECT_LE(m.sampled.batch, 25);
  EXPECT_GE(m.sampled.discarded, 7);  // 50 ms of 5 ms samples
  EXPECT_LE(m.sampled.discarded, 12);
  EXPECT_GE(m.sampled.stats.n, 16);  // then 100 ms of them
  EXPECT_LE(m.sampled.stats.n, 24);
  EXPECT_GE(m.per_call_s, 0.95 * kWorkNs * 1e-9);
  EXPECT_LE(m.per_call_s, 1.05 * kWorkNs * 1e-9);
  EXPECT_FALSE(m.cooldown_s.has_value());  // a plateau waits for no cool-down
  EXPECT_GE(m.sampled.elapsed_s, 0.15);
  EXPECT_EQ(cudaStreamQuery(dev.stream()), cudaSuccess);  // drained: nothing of the case still runs
}

// The energy counter moves in steps (every ~100 ms on an H200): a plateau of 0.5 s gives a power
// between the readings where it moved, inside the card's limit (a plain difference over a
// 0.4 s window read up to 922 W on a 700 W card); a burst sees at most one step between its
// two readings and gives none (1,755 W before, 2026-12-04).
TEST(Engine, PowerIsTakenOverTheCountersWholeStepsAndAShortBurstHasNone) {
  GPUCHECK_REQUIRE_DEVICE();
  harness::Device dev(Options{});
  if (!dev.read_energy_J()) GTEST_SKIP() << "NVML gives no energy counter here: " << dev.nvml_note();
  const harness::Work work = [](cudaStream_t s) { kernels::busy_wait(kWorkNs, s); };
  const harness::Measurement m = harness::measure(dev, work, harness::power_plateau(harness::default_measure(dev), 0.05, 0.5));
  ASSERT_TRUE(m.power_W.has_value()) << "0.5 s of paced readings (about every 11 ms): at least two moves";
  EXPECT_GT(*m.power_W, 10.0);
  const double limit = dev.telemetry().power_limit_W.value_or(1000.0);
  EXPECT_LT(*m.power_W, 1.05 * limit) << "limit " << limit << " W";
  // The readings are paced (energy::ReadPacer), so the queue stays ahead of the card: the
  // counted samples fill the window. Read every sample (about 6 ms of host against 5 ms
  // samples on an H200) they filled about 85% of it, the card idle in between.
  const double busy_s = static_cast<double>(m.sampled.stats.n) * m.sampled.batch * m.per_call_s;
  EXPECT_GE(busy_s, 0.95 * 0.5) << m.sampled.stats.n << " samples of " << m.sampled.batch << " calls";
  // 20 held samples: the counter is read at their ends only (a reading's ~4 ms would idle the
  // card between held samples), so it moves at most once in between: no figure.
  const harness::Measurement b = harness::measure(dev, work, harness::power_burst(quick_plan(dev, TimingMode::held)));
  EXPECT_FALSE(b.power_W.has_value()) << *b.power_W << " W";
}

// A call whose host side is slow (100 us, half its device time): captured into a graph, that
// host time must never be timed. Timed (the capture after the sample's start event, as before
// 2026-12-03), the plateau's load read each new batch's calls 1.5x slower and shrank the batch.
harness::Work host_slow_work() {
  return [](cudaStream_t s) {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(100)) {
    }
    kernels::busy_wait(kWorkNs, s);
  };
}

TEST(Engine, AGraphsCaptureIsNeverTimed) {
  GPUCHECK_REQUIRE_DEVICE();
  harness::Device dev(Options{});
  const harness::Work work = host_slow_work();
  const harness::Measurement p = harness::measure(dev, work, harness::power_plateau(harness::default_measure(dev), 0.05, 0.1));
  EXPECT_TRUE(p.graph);
  EXPECT_GE(p.sampled.batch, 23);  // 5 ms of 0.2 ms calls, as without the host's cost (17 when timed)
  EXPECT_LE(p.sampled.batch, 25);
  EXPECT_LE(p.sampled.stats.max, 1.10 * kWorkNs * 1e-9);  // no sample holds a capture (1.5x)
  harness::MeasureOptions o = quick_plan(dev, TimingMode::held);
  o.graph = true;
  o.plan.batch_turns = 2;
  const harness::Measurement h = harness::measure(dev, work, o);
  EXPECT_TRUE(h.graph);
  EXPECT_EQ(h.sampled.batch, 4);  // 0.5 ms of 0.2 ms calls is 3: up to whole turns of 2
  EXPECT_GE(h.per_call_s, 0.95 * kWorkNs * 1e-9);
  EXPECT_LE(h.sampled.stats.max, 1.10 * kWorkNs * 1e-9);
  EXPECT_NE(harness::engine_note(h).find("timing=held_graph"), std::string::npos) << harness::engine_note(h);
}

TEST(Engine, GroupsRedrawTheMemoryStateAndReportTheFastest) {
  GPUCHECK_REQUIRE_DEVICE();
  harness::Device dev(Options{});
  const harness::Work work = [](cudaStream_t s) { kernels::busy_wait(kWorkNs, s); };
  harness::MeasureOptions o = quick_plan(dev, TimingMode::held);
  o.graph = true;
  o.groups = 3;
  std::size_t free_before = 0, free_after = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  const harness::Measurement m = harness::measure(dev, work, o);
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(m.groups, 3);
  EXPECT_GE(m.group_spread, 0.0);
  EXPECT_LT(m.group_spread, 0.05);  // a spin of known length reads alike in every group
  EXPECT_GE(m.per_call_s, 0.95 * kWorkNs * 1e-9);
  EXPECT_LE(m.per_call_s, 1.20 * kWorkNs * 1e-9);
  EXPECT_GE(m.sampled.stats.n, 10);  // the chosen group's own samples
  EXPECT_NE(harness::engine_note(m).find("groups=3"), std::string::npos) << harness::engine_note(m);
  EXPECT_GE(free_after + harness::kRedrawBytes / 2, free_before);  // the redraws' memory is freed again
  o.groups = 1;
  const harness::Measurement one = harness::measure(dev, work, o);
  EXPECT_EQ(one.groups, 1);
  EXPECT_EQ(harness::engine_note(one).find("groups="), std::string::npos);
}

TEST(Engine, HostModeTimesTheCallsNotTheDevice) {
  GPUCHECK_REQUIRE_DEVICE();
  harness::Device dev(Options{});
  const harness::Work work = [](cudaStream_t s) { kernels::busy_wait(kWorkNs, s); };
  const harness::Measurement m = harness::measure(dev, work, quick_plan(dev, TimingMode::host));
  EXPECT_LT(m.per_call_s, 50e-6);  // a launch, not the 200 us the kernel runs
  EXPECT_GT(m.per_call_s, 0.0);
}

TEST(Engine, WorkThatThrowsMidBatchReleasesTheHeldStream) {
  GPUCHECK_REQUIRE_DEVICE();
  harness::Device dev(Options{});
  harness::MeasureOptions o = quick_plan(dev, TimingMode::held);
  o.plan.min_batch = o.plan.max_batch = 8;
  int calls = 0;
  const int throw_at = 2 /*warm-up*/ + 1 /*calibration*/ + 3;  // the 4th call of the first held batch
  const harness::Work work = [&](cudaStream_t s) {
    if (++calls == throw_at) throw std::runtime_error("work failed mid-batch");
    kernels::busy_wait(1000, s);
  };
  EXPECT_THROW(harness::measure(dev, work, o), std::runtime_error);
  EXPECT_EQ(*dev.hold_flags().host, 1) << "the hold flag was left set";
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(cudaStreamSynchronize(dev.stream()), cudaSuccess);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(waited, 0.5) << "the stream stayed held (the spin kernel's timeout is 2 s)";
  EXPECT_EQ(*dev.hold_flags().host_timed_out, 0);
  // The device is usable: the next measurement works.
  const harness::Measurement m = harness::measure(dev, [](cudaStream_t s) { kernels::busy_wait(kWorkNs, s); }, o);
  EXPECT_GT(m.per_call_s, 0.0);
}

// Google Benchmark 1.7 marks errors with error_occurred; 1.8 replaced it with `skipped`.
#ifdef GPUCHECK_HAVE_SKIP_WITH_MESSAGE
bool errored(const benchmark::BenchmarkReporter::Run& r) { return r.skipped == benchmark::internal::SkippedWithError; }
const std::string& message(const benchmark::BenchmarkReporter::Run& r) { return r.skip_message; }
#else
bool errored(const benchmark::BenchmarkReporter::Run& r) { return r.error_occurred; }
const std::string& message(const benchmark::BenchmarkReporter::Run& r) { return r.error_message; }
#endif

class Collect final : public benchmark::BenchmarkReporter {
 public:
  std::vector<Run> runs;
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& r) override { runs.insert(runs.end(), r.begin(), r.end()); }
};

class WaitOp final : public harness::Op {
 public:
  explicit WaitOp(int throw_at) : throw_at_(throw_at) {}
  void run(cudaStream_t s) override {
    if (++calls_ == throw_at_) throw std::runtime_error("case failed on purpose");
    kernels::busy_wait(kWorkNs, s);
  }
  void verify() override {}

 private:
  int throw_at_, calls_ = 0;
};

TEST(Engine, RegistryCountsOneFailedCaseAndTheOthersStillRun) {
  GPUCHECK_REQUIRE_DEVICE();
  int argc = 1;
  char name[] = "gpu_tests";
  char* argv[] = {name, nullptr};
  benchmark::Initialize(&argc, argv);
  harness::Device dev(Options{});
  Collect rep;
  {
    harness::Registry r(dev);
    for (int throw_at : {-1, 4, -1}) {
      harness::Case c;
      c.name = "engine/test/fp32/case" + std::to_string(r.size());
      c.measure = quick_plan(dev, TimingMode::held);
      c.rates = {harness::gbps(1e6)};
      c.setup = [throw_at] { return std::make_unique<WaitOp>(throw_at); };
      r.add(std::move(c));
    }
    r.add_unsupported("engine/test/fp32/unsupported", "not on this device");
    benchmark::RunSpecifiedBenchmarks(&rep);
    benchmark::ClearRegisteredBenchmarks();
    EXPECT_EQ(r.failed(), 1);
  }
  ASSERT_EQ(rep.runs.size(), 4u);
  EXPECT_FALSE(errored(rep.runs[0]));
  EXPECT_TRUE(errored(rep.runs[1]));
  EXPECT_NE(message(rep.runs[1]).find("case failed on purpose"), std::string::npos);
  EXPECT_FALSE(errored(rep.runs[2]));
  for (int i : {0, 2}) {
    const auto& run = rep.runs[static_cast<std::size_t>(i)];
    EXPECT_GE(run.counters.at(contract::counter::samples).value, 10);
    EXPECT_GE(run.counters.at(contract::counter::cv_pct).value, 0);
    EXPECT_NEAR(run.GetAdjustedRealTime(), kWorkNs / 1000.0, 0.2 * kWorkNs / 1000.0);  // microseconds
    EXPECT_GT(run.counters.at(contract::counter::GBps).value, 0);
  }
  // Skipped, not failed: 1.7 marks it an error with the "unsupported: " prefix, 1.8 skips it.
  EXPECT_NE(message(rep.runs[3]).find("not on this device"), std::string::npos);
#ifdef GPUCHECK_HAVE_SKIP_WITH_MESSAGE
  EXPECT_EQ(rep.runs[3].skipped, benchmark::internal::SkippedWithMessage);
#endif
}

}  // namespace
}  // namespace gpucheck

namespace gpucheck {
namespace {

// Blocking launches (CUDA_LAUNCH_BLOCKING=1 reaching the driver) are found by a 50 ms probe
// before a held case is timed: the case errors saying why, instead of stalling 2 s a sample
// (issue 17: 47 errored cases with the wrong reason, bench_conv timed out). CTest runs this
// test twice: as it is, and with CUDA_LAUNCH_BLOCKING=1 (gpu_engine_launch_blocking).
TEST(Engine, BlockingLaunchesAreFoundBeforeAHeldCaseIsTimed) {
  GPUCHECK_REQUIRE_DEVICE();
  harness::Device dev(Options{});
  const char* env = std::getenv("CUDA_LAUNCH_BLOCKING");
  const bool blocking = env != nullptr && std::string(env) == "1";
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(harness::launches_block(dev), blocking);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
  const harness::Work work = [](cudaStream_t s) { kernels::busy_wait(kWorkNs, s); };
  if (blocking) {
    try {
      (void)harness::measure(dev, work, quick_plan(dev, TimingMode::held));
      ADD_FAILURE() << "a held case was timed under blocking launches";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("kernel launches block"), std::string::npos) << e.what();
    }
  } else {
    EXPECT_GT(harness::measure(dev, work, quick_plan(dev, TimingMode::held)).per_call_s, 0.0);
  }
}

}  // namespace
}  // namespace gpucheck
