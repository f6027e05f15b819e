// The verdict rules of gpucheck watch on timelines built from the H200's figures (2026-12-01,
// pynvml at 10 Hz beside five PyTorch workloads; docs/WATCH.md): each workload must get the
// verdict a performance engineer gives it, and the rules must not flip on the neighbours.
#include <gtest/gtest.h>

#include <cmath>

#include "watch/rules.hpp"

namespace gpucheck::watch {
namespace {

struct Figures {
  unsigned util;
  double power, sm_mhz, pcie_rx, sm_active, tensor, dram;
};
// The table: means over 4 s.
constexpr Figures kGemm{97, 691.9, 1482, 2.7, 93.7, 90.9, 17.1};
constexpr Figures kTiny{25, 121.7, 1980, 216.8, 0.0, 0.0, 0.0};
constexpr Figures kStarved{5, 165.8, 1980, 2.1, 4.2, 4.0, 0.6};
constexpr Figures kH2d{100, 128.4, 1980, 57640, 0.0, 0.0, 1.1};
constexpr Figures kD2d{98, 467.2, 1980, 34.4, 97.9, 0.0, 87.4};

GpuSample sample(const Figures& f, bool gpm, std::uint64_t reasons = 0) {
  GpuSample s;
  s.util_gpu_pct = f.util;
  s.power_W = f.power;
  s.power_limit_W = 700;
  s.sm_clock_MHz = static_cast<unsigned>(f.sm_mhz);
  s.sm_clock_max_MHz = 1980;
  s.temperature_C = 50;
  s.clock_event_reasons = reasons;
  s.pcie_rx_MBps = f.pcie_rx;
  s.pcie_tx_MBps = 0.0;
  if (gpm) {
    s.sm_active_pct = f.sm_active;
    s.tensor_active_pct = f.tensor;
    s.dram_bw_pct = f.dram;
  }
  return s;
}

// 2 s of start-up (idle: Python importing torch), 4 s of the workload, 0.5 s of exit, at 10 Hz.
GpuTimeline timeline(const Figures& f, bool gpm = true, std::uint64_t reasons = 0) {
  GpuTimeline g;
  g.gpm = gpm;
  Figures idle{0, 70, 1980, 0, 0, 0, 0};
  for (int i = 0; i < 65; ++i) {
    const double t = i * 0.1;
    g.points.push_back({t, sample(t >= 2.0 && t < 6.0 ? f : idle, gpm, t >= 2.0 && t < 6.0 ? reasons : 0)});
  }
  return g;
}

Bound bound_of(const GpuTimeline& g) { return judge_gpu(g).bound; }

TEST(WatchRules, FiveH200WorkloadsWithGpm) {
  EXPECT_EQ(bound_of(timeline(kGemm)), Bound::Compute);
  EXPECT_EQ(bound_of(timeline(kTiny)), Bound::Launch);
  EXPECT_EQ(bound_of(timeline(kStarved)), Bound::Starved);
  EXPECT_EQ(bound_of(timeline(kH2d)), Bound::Pcie);
  EXPECT_EQ(bound_of(timeline(kD2d)), Bound::Memory);
}

TEST(WatchRules, WithoutGpmPowerStandsInForSmActivity) {
  EXPECT_EQ(bound_of(timeline(kGemm, false)), Bound::Compute);
  EXPECT_EQ(bound_of(timeline(kH2d, false)), Bound::Pcie);
  EXPECT_EQ(bound_of(timeline(kStarved, false)), Bound::Starved);
  const GpuVerdict v = judge_gpu(timeline(kGemm, false));
  bool said = false;
  for (const auto& e : v.evidence) said = said || e.find("no GPM") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(WatchRules, ActiveWindowLeavesOutStartUp) {
  const GpuVerdict v = judge_gpu(timeline(kGemm));
  EXPECT_NEAR(v.f.active_from_s, 2.0, 1e-9);
  EXPECT_NEAR(v.f.active_to_s, 5.9, 1e-9);
  EXPECT_NEAR(*v.f.util_pct, 97.0, 1e-9);
  EXPECT_TRUE(v.power_capped);  // 691.9 of 700 W
  EXPECT_FALSE(v.throttled);    // power capping is not throttling
}

// A training script: 8 s of start-up that keeps the GPU partly busy (moving the model, cuDNN's
// autotuning: util 30%, SM active 20%), then 3 s of steps at the GEMM's figures, 0.5 s of exit.
Timeline training(const Figures& step_figures) {
  Timeline t;
  GpuTimeline g;
  g.gpm = true;
  const Figures setup{30, 150, 1980, 100, 20, 5, 5}, idle{0, 70, 1980, 0, 0, 0, 0};
  for (int i = 0; i < 115; ++i) {
    const double x = i * 0.1;
    g.points.push_back({x, sample(x < 8.0 ? setup : x < 11.0 ? step_figures : idle, true)});
  }
  t.gpus.push_back(g);
  t.duration_s = 11.5;
  return t;
}

TEST(WatchRules, WithStepsTheFiguresAreTheSteps) {
  // Over the whole active window the start-up dominates: starved (util 46%).
  Timeline t = training(kGemm);
  Verdict v = judge(t);
  EXPECT_EQ(v.bound, Bound::Starved);
  EXPECT_FALSE(v.gpus[0].f.over_steps);
  // Over the steps' own span: the GEMM's figures, compute-bound, and the window says so.
  t.steps = Window{8.0, 10.95};
  v = judge(t);
  EXPECT_EQ(v.bound, Bound::Compute);
  EXPECT_TRUE(v.gpus[0].f.over_steps);
  EXPECT_NEAR(v.gpus[0].f.active_from_s, 8.0, 1e-12);
  EXPECT_NEAR(v.gpus[0].f.active_to_s, 10.95, 1e-12);
  EXPECT_NEAR(*v.gpus[0].f.util_pct, 97.0, 1e-9);
  EXPECT_EQ(v.gpus[0].f.active_samples, 30);
  // Steps that starve the GPU still read starved over their span.
  Timeline s = training(kStarved);
  s.steps = Window{8.0, 10.95};
  EXPECT_EQ(judge(s).bound, Bound::Starved);
}

TEST(WatchRules, AStepsWindowWithoutSamplesIsNotUsed) {
  Timeline t = training(kGemm);
  t.steps = Window{9.01, 9.19};  // 0.18 s: one sample at 10 Hz (9.1), fewer than 3
  EXPECT_FALSE(judge(t).gpus[0].f.over_steps);
  t.steps = Window{8.95, 9.25};  // 9.0, 9.1, 9.2: enough
  EXPECT_TRUE(judge(t).gpus[0].f.over_steps);
  t.steps = Window{10.0, 9.0};  // reversed: not a window
  EXPECT_FALSE(judge(t).gpus[0].f.over_steps);
  t.steps = Window{20.0, 30.0};  // after the run
  EXPECT_FALSE(judge(t).gpus[0].f.over_steps);
  // An idle GPU stays idle over any window (its figures cover the whole run).
  Timeline idle;
  idle.gpus.push_back(timeline({0, 70, 1980, 0, 0, 0, 0}));
  idle.steps = Window{1.0, 4.0};
  const Verdict vi = judge(idle);
  EXPECT_EQ(vi.bound, Bound::Idle);
  EXPECT_FALSE(vi.gpus[0].f.over_steps);
}

TEST(WatchRules, ThrottledNeedsASlowingReason) {
  EXPECT_FALSE(judge_gpu(timeline(kGemm, true, 0x4)).throttled);  // sw_power_cap
  const GpuVerdict v = judge_gpu(timeline(kGemm, true, 0x20));    // sw_thermal_slowdown
  EXPECT_TRUE(v.throttled);
  Timeline t;
  t.gpus.push_back(timeline(kGemm, true, 0x20));
  EXPECT_NE(judge(t).headline.find("throttled"), std::string::npos);
}

TEST(WatchRules, IdleGpu) {
  GpuTimeline g = timeline({0, 70, 1980, 0, 0, 0, 0});
  EXPECT_EQ(bound_of(g), Bound::Idle);
}

TEST(WatchRules, PeriodicStallsAndTheirPeriod) {
  // A GEMM loop with a 1 s pause every 3 s (a checkpoint).
  GpuTimeline g;
  g.gpm = true;
  for (int i = 0; i < 150; ++i) {
    const double t = i * 0.1;
    const bool pause = std::fmod(t, 3.0) >= 2.0;
    g.points.push_back({t, sample(pause ? Figures{0, 90, 1980, 0, 0, 0, 0} : kGemm, true)});
  }
  const GpuVerdict v = judge_gpu(g);
  ASSERT_GE(v.stalls.count, 4);
  ASSERT_TRUE(v.stalls.period_s.has_value());
  EXPECT_NEAR(*v.stalls.period_s, 3.0, 0.11);
  EXPECT_NEAR(v.stalls.mean_s, 1.0, 0.11);
}

TEST(WatchRules, ShortGapsAreNotStalls) {
  const GpuVerdict v = judge_gpu(timeline(kStarved));  // NVML's window smooths the 30 ms naps
  EXPECT_EQ(v.stalls.count, 0);
}

TEST(WatchRules, OneGpuOfEightIdle) {
  Timeline t;
  for (unsigned i = 0; i < 8; ++i) {
    GpuTimeline g = timeline(i == 5 ? Figures{0, 70, 1980, 0, 0, 0, 0} : kGemm);
    g.index = i;
    t.gpus.push_back(g);
  }
  const Verdict v = judge(t);
  EXPECT_EQ(v.bound, Bound::Compute);
  ASSERT_TRUE(v.imbalance.has_value());
  EXPECT_EQ(*v.imbalance, "8 cards, 1 idle: GPU 5 (util 0%) while GPUs 0,1,2,3,4,6,7 work (util 97%)");
  // A GPU outside the job (nobody's) does not count as the job's idle one.
  t.gpus[5].in_job = false;
  EXPECT_FALSE(judge(t).imbalance.has_value());
}

HostPoint host(double t, double cpu, double busiest, double iowait) {
  HostPoint p;
  p.t_s = t;
  p.h.cpu_pct = cpu;
  p.h.busiest_core_pct = busiest;
  p.h.iowait_pct = iowait;
  p.h.cores = 32;
  return p;
}

TEST(WatchRules, HostSymptomsGoWithAStarvedGpu) {
  Timeline t;
  t.gpus.push_back(timeline(kStarved));
  for (int i = 0; i < 65; ++i) t.host.push_back(host(i * 0.1, 4.0, 100.0, 0.5));
  Verdict v = judge(t);
  ASSERT_EQ(v.host_symptoms.size(), 1u);
  EXPECT_EQ(v.host_symptoms[0], HostSymptom::OneCore);
  EXPECT_NE(v.headline.find("one CPU core at 100%"), std::string::npos) << v.headline;
  EXPECT_GE(v.next_steps.size(), 2u);
  // iowait and all cores
  t.host.clear();
  for (int i = 0; i < 65; ++i) t.host.push_back(host(i * 0.1, 95.0, 100.0, 20.0));
  v = judge(t);
  EXPECT_EQ(v.host_symptoms, (std::vector<HostSymptom>{HostSymptom::AllCores, HostSymptom::IoWait}));
  // A compute-bound GPU: the busy main thread is how a training loop looks, not the limit.
  t.gpus[0] = timeline(kGemm);
  EXPECT_EQ(judge(t).headline.find("CPU"), std::string::npos);
}

TEST(WatchRules, StarvedHeadlineNamesTheStep) {
  Timeline t;
  t.gpus.push_back(timeline(kStarved));
  t.step_ms = {32.1, 32.4, 31.9};
  const Verdict v = judge(t);
  EXPECT_NE(v.headline.find("a step every 32.1 ms"), std::string::npos) << v.headline;
}

TEST(WatchRules, NoGpuSampled) {
  Timeline t;
  t.host.push_back(host(0, 10, 20, 0));
  const Verdict v = judge(t);
  EXPECT_FALSE(v.gpu_sampled);
  EXPECT_NE(v.headline.find("no GPU was sampled"), std::string::npos);
}

TEST(WatchRules, EveryKindHasWordsAndANextStep) {
  for (const auto& k : bound_kinds()) {
    EXPECT_NE(std::string(k.key), "");
    EXPECT_NE(std::string(k.next_step), "");
  }
  for (const auto& k : host_symptom_kinds()) EXPECT_NE(std::string(k.next_step), "");
}

}  // namespace
}  // namespace gpucheck::watch
