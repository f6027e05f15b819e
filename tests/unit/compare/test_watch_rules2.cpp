// The watch rules of issue 41 on made timelines: a GPU that waits with a context is starved,
// not idle, and the disk is named; pauses between busy stretches are the verdict (stalled);
// a command that failed at once gets no verdict. Each threshold is tried on both sides.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "watch/rules.hpp"

namespace gpucheck::watch {
namespace {

GpuSample at(unsigned util, double sm_active) {
  GpuSample s;
  s.util_gpu_pct = util;
  s.sm_active_pct = sm_active;
  s.power_W = 200;
  s.power_limit_W = 700;
  return s;
}

// 10 Hz for 22 s: idle before 18 s (set-up), then util 0 with SM active `sm` (a tiny GEMM per
// 64 MiB read), as the H200's disk-fed loop.
GpuTimeline disk_fed(double sm) {
  GpuTimeline g;
  g.gpm = true;
  for (int i = 0; i <= 220; ++i) {
    const double t = i / 10.0;
    g.points.push_back({t, at(0, t >= 18.0 ? sm : 0.0)});
  }
  return g;
}

HostPoint host_at(double t, std::optional<double> tree_read, std::optional<double> disk_read) {
  HostPoint p;
  p.t_s = t;
  p.h.cpu_pct = 3.0;
  p.h.busiest_core_pct = 40.0;
  p.h.iowait_pct = 1.0;
  p.h.tree_read_MBps = tree_read;
  p.h.disk_read_MBps = disk_read;
  p.h.cores = 16;
  return p;
}

TEST(WatchRules2, FaintSmActivityIsStarvedNotIdle) {
  EXPECT_EQ(judge_gpu(disk_fed(0.03)).bound, Bound::Starved);
  const GpuVerdict v = judge_gpu(disk_fed(0.03));
  EXPECT_TRUE(v.f.faint);
  EXPECT_DOUBLE_EQ(v.f.active_from_s, 18.0);  // the window is where the SMs ran, not the set-up
  EXPECT_EQ(judge_gpu(disk_fed(0.0)).bound, Bound::Idle);
}

TEST(WatchRules2, AJobProcessOnTheGpuIsStarvedNotIdle) {
  GpuTimeline g = disk_fed(0.0);
  g.job_process = true;
  EXPECT_EQ(judge_gpu(g).bound, Bound::Starved);
  g.in_job = false;  // another's process: that GPU is not the job's
  EXPECT_EQ(judge_gpu(g).bound, Bound::Idle);
}

Timeline disk_fed_run(std::optional<double> tree_read, std::optional<double> disk_read) {
  Timeline t;
  t.duration_s = 22.0;
  t.gpus.push_back(disk_fed(0.03));
  // Set-up reads nothing; the steps read at the given rate.
  for (int i = 0; i <= 220; ++i) {
    const double s = i / 10.0;
    const bool steps = s >= 18.0;
    t.host.push_back(host_at(s, tree_read ? std::optional<double>(steps ? *tree_read : 0.0) : std::nullopt,
                             disk_read ? std::optional<double>(steps ? *disk_read : 0.0) : std::nullopt));
  }
  return t;
}

bool has(const std::vector<HostSymptom>& v, HostSymptom h) { return std::find(v.begin(), v.end(), h) != v.end(); }

TEST(WatchRules2, DiskReadsAtFiftyMBpsOverTheActiveWindow) {
  Verdict v = judge(disk_fed_run(49.9, std::nullopt));
  EXPECT_EQ(v.bound, Bound::Starved);
  EXPECT_FALSE(has(v.host_symptoms, HostSymptom::DiskReads));
  v = judge(disk_fed_run(50.0, std::nullopt));
  EXPECT_TRUE(has(v.host_symptoms, HostSymptom::DiskReads));
  // Over the active window (18-22 s), not the whole run (which averages 9.3).
  ASSERT_TRUE(v.host.tree_read_MBps.has_value());
  EXPECT_DOUBLE_EQ(*v.host.tree_read_MBps, 50.0);
  EXPECT_NE(v.headline.find("disk reads"), std::string::npos) << v.headline;
  EXPECT_EQ(v.next_steps.size(), 2u);
}

TEST(WatchRules2, AnOlderRecordFallsBackToTheDisksReadRate) {
  EXPECT_TRUE(has(judge(disk_fed_run(std::nullopt, 50.0)).host_symptoms, HostSymptom::DiskReads));
  EXPECT_FALSE(has(judge(disk_fed_run(std::nullopt, 49.9)).host_symptoms, HostSymptom::DiskReads));
  // Where the tree's own rate is recorded it wins: another job reading the disk is not this one's.
  EXPECT_FALSE(has(judge(disk_fed_run(10.0, 500.0)).host_symptoms, HostSymptom::DiskReads));
}

TEST(WatchRules2, ComputeBoundJobsDoNotNameTheDisk) {
  Timeline t = disk_fed_run(900.0, std::nullopt);
  for (auto& p : t.gpus[0].points) p.s = at(98, 93.0);
  const Verdict v = judge(t);
  EXPECT_EQ(v.bound, Bound::Compute);
  EXPECT_EQ(v.headline.find("disk"), std::string::npos) << v.headline;
}

// 100 Hz from 0 to `end` s: util `between` (SM active just under it) outside the stalls, 0 in them.
GpuTimeline with_stalls(const std::vector<std::pair<double, double>>& stalls, double end, unsigned between) {
  GpuTimeline g;
  g.gpm = true;
  for (int i = 0; i <= static_cast<int>(end * 100 + 0.5); ++i) {
    const double t = i / 100.0;
    bool in = false;
    for (const auto& [a, b] : stalls) in = in || (t > a && t < b);
    g.points.push_back({t, in ? at(0, 0.0) : at(between, 0.95 * between)});
  }
  return g;
}

TEST(WatchRules2, StalledFromTwentyPercentOfTheWindow) {
  GpuVerdict v = judge_gpu(with_stalls({{2.0, 4.0}}, 10.0, 97));
  EXPECT_DOUBLE_EQ(v.stalls.share, 0.2);
  EXPECT_EQ(v.bound, Bound::Stalled);
  v = judge_gpu(with_stalls({{2.0, 3.99}}, 10.0, 97));
  EXPECT_LT(v.stalls.share, 0.2);
  EXPECT_EQ(v.bound, Bound::Starved);  // util 78% over the window: the rule before stalls
}

// Set-up before the job's first busy run of 0.5 s (context creation's blip of util, then library
// loads) is no stall and not in the figures; a pause after 0.5 s of work is one.
TEST(WatchRules2, SetUpBeforeTheFirstBusyRunIsNoStall) {
  GpuTimeline g = with_stalls({{0.1, 5.0}}, 13.0, 95);  // busy 0-0.1 s (a blip), idle to 5 s, busy after
  GpuVerdict v = judge_gpu(g);
  EXPECT_EQ(v.stalls.count, 0);
  EXPECT_NEAR(v.f.active_from_s, 5.0, 0.011);
  EXPECT_NEAR(v.f.setup_s, 5.0, 0.011);
  EXPECT_EQ(v.bound, Bound::Compute);
  // The same pause after 0.6 s of work (a busy run of 0.5 s and more) is a stall, the window whole.
  v = judge_gpu(with_stalls({{0.6, 5.5}}, 13.0, 95));
  EXPECT_EQ(v.stalls.count, 1);
  EXPECT_DOUBLE_EQ(v.f.active_from_s, 0.0);
  EXPECT_DOUBLE_EQ(v.f.setup_s, 0.0);
  EXPECT_EQ(v.bound, Bound::Stalled);
}

TEST(WatchRules2, StalledNeedsTheGpuBusyBetweenStalls) {
  GpuVerdict v = judge_gpu(with_stalls({{2.0, 4.0}}, 10.0, 80));
  ASSERT_TRUE(v.stalls.util_between_pct.has_value());
  EXPECT_DOUBLE_EQ(*v.stalls.util_between_pct, 80.0);
  EXPECT_EQ(v.bound, Bound::Stalled);
  // A loader slow every step, also stalling now and then: starved, as the numpy-fed ResNet.
  v = judge_gpu(with_stalls({{2.0, 4.0}}, 10.0, 79));
  EXPECT_EQ(v.bound, Bound::Starved);
}

TEST(WatchRules2, PeriodicStallsHeadlineAndAdvice) {
  // A GEMM loop pausing 2.5 s every 5.1 s (a checkpoint write), as on the H200.
  Timeline t;
  t.duration_s = 15.3;
  t.gpus.push_back(with_stalls({{2.6, 5.1}, {7.7, 10.2}, {12.8, 15.3}}, 15.3, 97));
  t.gpus[0].points.push_back({15.4, at(97, 92.0)});  // it goes on after the last pause
  for (int i = 0; i <= 154; ++i) {
    HostPoint p = host_at(i / 10.0, 0.0, 0.0);
    p.h.busiest_core_pct = 100.0;  // its main thread: not the limit here
    t.host.push_back(p);
  }
  const Verdict v = judge(t);
  EXPECT_EQ(v.bound, Bound::Stalled);
  EXPECT_EQ(v.headline, "periodic stalls: 2.5 s every 5.1 s, 49% of the run");
  ASSERT_EQ(v.next_steps.size(), 1u);
  EXPECT_NE(v.next_steps[0].find("checkpoint"), std::string::npos);
  EXPECT_EQ(v.next_steps[0].find("DataLoader workers"), std::string::npos);
  EXPECT_EQ(std::string(kind_of(Bound::Stalled).key), "stalled");
}

Timeline ran(int status, double seconds, bool gpu_active) {
  Timeline t;
  t.duration_s = seconds;
  t.exit_status = status;
  t.last_stderr_line = "ModuleNotFoundError: No module named 'torch'";
  GpuTimeline g;
  for (int i = 0; i <= static_cast<int>(seconds * 10); ++i) g.points.push_back({i / 10.0, at(gpu_active ? 98 : 0, gpu_active ? 93 : 0)});
  t.gpus.push_back(g);
  for (int i = 0; i <= static_cast<int>(seconds * 10); ++i) {
    HostPoint p = host_at(i / 10.0, 0.0, 0.0);
    p.h.busiest_core_pct = 100.0;
    p.h.iowait_pct = 30.0;
    t.host.push_back(p);
  }
  return t;
}

TEST(WatchRules2, AFailureInUnderFiveSecondsHasNoVerdict) {
  Verdict v = judge(ran(2, 0.2, false));
  EXPECT_EQ(v.bound, Bound::NoVerdict);
  EXPECT_EQ(v.headline, "no verdict: the command exited 2 after 0.2 s: ModuleNotFoundError: No module named 'torch'");
  EXPECT_TRUE(v.host_symptoms.empty());  // no advice about the host
  ASSERT_EQ(v.next_steps.size(), 1u);
  EXPECT_EQ(judge(ran(1, 4.9, true)).bound, Bound::NoVerdict);
  EXPECT_EQ(judge(ran(1, 5.0, true)).bound, Bound::Compute);
  EXPECT_EQ(judge(ran(125, 4.9, true)).bound, Bound::NoVerdict);
}

TEST(WatchRules2, AFailureBeforeAnyGpuActivityHasNoVerdict) {
  EXPECT_EQ(judge(ran(3, 60.0, false)).bound, Bound::NoVerdict);
  Timeline t = ran(3, 60.0, false);
  t.last_stderr_line.clear();
  EXPECT_EQ(judge(t).headline, "no verdict: the command exited 3 after 60.0 s");
}

TEST(WatchRules2, SuccessInterruptionAndNoStatusAreJudged) {
  EXPECT_NE(judge(ran(0, 0.2, false)).bound, Bound::NoVerdict);
  EXPECT_NE(judge(ran(130, 0.2, false)).bound, Bound::NoVerdict);  // Ctrl-C: 128+2
  EXPECT_NE(judge(ran(137, 1.0, true)).bound, Bound::NoVerdict);   // SIGKILL
  EXPECT_NE(judge(ran(126, 1.0, true)).bound, Bound::NoVerdict);
  Timeline t = ran(2, 0.2, false);
  t.exit_status.reset();  // still running (an attached job)
  EXPECT_NE(judge(t).bound, Bound::NoVerdict);
  EXPECT_FALSE(no_verdict(t).has_value());
}

}  // namespace
}  // namespace gpucheck::watch

namespace gpucheck::watch {
namespace {
// One GPM reading of NaN (an H200 sample of the disk-fed loop): the figure is the mean of the
// finite readings, never NaN, and no evidence line prints "nan".
TEST(WatchRules2, ANonFiniteReadingIsNotRead) {
  GpuTimeline g = disk_fed(0.0);
  for (auto& p : g.points) p.s.dram_bw_pct = 2.0;
  g.points[190].s.dram_bw_pct = std::numeric_limits<double>::quiet_NaN();
  g.points[191].s.dram_bw_pct = std::numeric_limits<double>::infinity();
  const GpuVerdict v = judge_gpu(g);
  ASSERT_TRUE(v.f.dram_bw_pct.has_value());
  EXPECT_DOUBLE_EQ(*v.f.dram_bw_pct, 2.0);
  for (const auto& e : v.evidence) EXPECT_EQ(e.find("nan"), std::string::npos) << e;
}
}  // namespace
}  // namespace gpucheck::watch
