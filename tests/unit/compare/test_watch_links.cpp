// The watch rules for a GPU's PCIe link and for a GPU shared by two jobs, on timelines built
// here: the width judged on every reading, the generation only while the GPU works or copies
// (an idle link drops it to save power), against the most GPU and system allow; each process's
// share of the GPU and the neighbour named. Also watch.json's version 2 read back (and version 1
// still read, with the new fields absent), and malformed values refused with the file named.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "fake_gpu.hpp"
#include "watch/record.hpp"
#include "watch/rules.hpp"

// A named namespace: the unity build puts this file beside others with helpers of the same names.
namespace watch_links_test {

namespace gw = gpucheck::watch;
using gpucheck::GpuProcess;
using gpucheck::LinkReadAt;
using gpucheck::LinkState;
using gpucheck::compare::testing::Link;
using gpucheck::compare::testing::reading;
using nlohmann::json;

// n readings 0.1 s apart, each made by `at(i)`.
template <typename F>
gw::GpuTimeline timeline(unsigned index, int n, F at) {
  gw::GpuTimeline g;
  g.index = index;
  g.job_process = true;
  for (int i = 0; i < n; ++i) g.points.push_back({0.1 * i, at(i)});
  return g;
}

gw::GpuTimeline gemm(unsigned index, Link l = {}) {
  return timeline(index, 20, [&](int) { return reading(97, 93.7, 2.7, l); });
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
}

TEST(WatchLinks, WidthShortWhileBusy) {
  const auto l = gw::judge_link(gemm(3, {5, 8, 5, 16}));
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->is_short());
  EXPECT_TRUE(l->width_short());
  EXPECT_FALSE(l->gen_short());
  EXPECT_EQ(l->decision.width.seen, 8);
  EXPECT_EQ(l->decision.gen.read_at, LinkReadAt::UnderLoad);
  EXPECT_EQ(l->busy_readings, 20);
  EXPECT_EQ(gw::link_words(*l), "PCIe Gen5 x8 of x16");
  EXPECT_TRUE(has(gw::judge_gpu(gemm(3, {5, 8, 5, 16})).evidence, "PCIe Gen5 x8 of x16"));
}

TEST(WatchLinks, FullLinkIsNotEvidence) {
  const auto v = gw::judge_gpu(gemm(0));
  ASSERT_TRUE(v.link);
  EXPECT_FALSE(v.link->is_short());
  EXPECT_EQ(v.link->decision.outcome, gpucheck::LinkOutcome::Ok);
  for (const auto& e : v.evidence) EXPECT_EQ(e.find("PCIe Gen"), std::string::npos) << e;
}

TEST(WatchLinks, GenerationShortOnlyWhileBusy) {
  const auto busy = gw::judge_link(gemm(0, {4, 16, 5, 16}));
  ASSERT_TRUE(busy);
  EXPECT_TRUE(busy->gen_short());
  EXPECT_EQ(gw::link_words(*busy), "PCIe Gen4 x16 of Gen5 under load");
  // The same link on an idle GPU: Gen1 at idle is power saving, not a fault.
  const auto idle = gw::judge_link(timeline(0, 20, [](int) { return reading(0, 0.0, 0.5, {1, 16, 5, 16}); }));
  ASSERT_TRUE(idle);
  EXPECT_FALSE(idle->is_short());
  EXPECT_EQ(idle->decision.gen.state, LinkState::IdleLow);
  EXPECT_EQ(idle->decision.gen.read_at, LinkReadAt::AtIdle);
  EXPECT_EQ(idle->busy_readings, 0);
}

TEST(WatchLinks, CopyTrafficCountsAsBusyAtTheThreshold) {
  const double at = gw::thresholds::kLinkBusyPcieMBps;
  const auto copying = gw::judge_link(timeline(0, 10, [&](int) { return reading(0, 0.0, at, {3, 16, 5, 16}); }));
  ASSERT_TRUE(copying);
  EXPECT_TRUE(copying->gen_short());
  const auto below = gw::judge_link(timeline(0, 10, [&](int) { return reading(0, 0.0, at - 0.1, {3, 16, 5, 16}); }));
  ASSERT_TRUE(below);
  EXPECT_FALSE(below->gen_short());
}

TEST(WatchLinks, OnlyIdleReadingsAtTheLowerGenerationAreLeftOut) {
  // Busy at Gen5, idle (before and after the work) at Gen1: the busy readings decide.
  const auto l = gw::judge_link(timeline(0, 30, [](int i) {
    return i >= 10 && i < 20 ? reading(97, 93.7, 2.7, {5, 16, 5, 16}) : reading(0, 0.0, 0.5, {1, 16, 5, 16});
  }));
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->is_short());
  EXPECT_EQ(l->decision.gen.seen, 5);
  EXPECT_EQ(l->busy_readings, 10);
}

TEST(WatchLinks, OneReadingWhileTheLinkRetrainsIsNotShort) {
  // 9 of 10 busy readings at Gen5 x16, one at Gen1 x8: the lower median is the link it ran at.
  const auto l = gw::judge_link(timeline(0, 10, [](int i) {
    return i == 0 ? reading(97, 93.7, 2.7, {1, 8, 5, 16}) : reading(97, 93.7, 2.7, {5, 16, 5, 16});
  }));
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->is_short());
  // Half the readings narrow is a narrow link.
  const auto half = gw::judge_link(timeline(0, 10, [](int i) {
    return i < 5 ? reading(97, 93.7, 2.7, {5, 8, 5, 16}) : reading(97, 93.7, 2.7, {5, 16, 5, 16});
  }));
  ASSERT_TRUE(half);
  EXPECT_TRUE(half->width_short());
}

TEST(WatchLinks, AbsentZeroAndAbsurdReadingsAreNone) {
  EXPECT_FALSE(gw::judge_link(gemm(0, {0, 0, 0, 0})));  // a driver without the calls
  EXPECT_FALSE(gw::judge_link(gw::GpuTimeline{}));        // no readings at all
  // Far past any link (a corrupted record): read as none, never as a short link.
  EXPECT_FALSE(gw::judge_link(gemm(0, {4000000000u, 4000000000u, 5, 16})));
  const unsigned most = gw::thresholds::kLinkReadingMax;
  EXPECT_FALSE(gw::judge_link(gemm(0, {0, most + 1, 0, 0})));
  ASSERT_TRUE(gw::judge_link(gemm(0, {0, most, 0, 0})));
  EXPECT_EQ(gw::judge_link(gemm(0, {0, most, 0, 0}))->decision.width.seen, static_cast<int>(most));
  // A link without its maximum: nothing to hold it to, so not short.
  const auto no_max = gw::judge_link(gemm(0, {3, 4, 0, 0}));
  ASSERT_TRUE(no_max);
  EXPECT_FALSE(no_max->is_short());
  EXPECT_EQ(no_max->gen_max, 0);
  EXPECT_EQ(no_max->decision.outcome, gpucheck::LinkOutcome::NoExpectation);
  // The width alone (no generation read): still judged.
  const auto width_only = gw::judge_link(gemm(0, {0, 8, 0, 16}));
  ASSERT_TRUE(width_only);
  EXPECT_TRUE(width_only->width_short());
  EXPECT_EQ(gw::link_words(*width_only), "PCIe x8 of x16");
}

gw::Timeline eight(gw::GpuTimeline (*make)(unsigned, Link), unsigned short_gpu, Link short_link) {
  gw::Timeline t;
  t.duration_s = 2.0;
  for (unsigned i = 0; i < 8; ++i) t.gpus.push_back(make(i, i == short_gpu ? short_link : Link{}));
  return t;
}

gw::GpuTimeline copy(unsigned index, Link l) {
  return timeline(index, 20, [&](int) { return reading(99, 0.0, 57640.0, l); });
}

TEST(WatchLinks, CopyBoundAdviceNamesTheLinkFirst) {
  const gw::Verdict v = gw::judge(eight(copy, 3, {5, 8, 5, 16}));
  EXPECT_EQ(v.bound, gw::Bound::Pcie);
  EXPECT_NE(v.headline.find("; GPU 3: PCIe Gen5 x8 of x16"), std::string::npos) << v.headline;
  ASSERT_EQ(v.next_steps.size(), 2u);
  EXPECT_EQ(v.next_steps[0].rfind("a PCIe link runs below what GPU and slot allow (GPU 3: PCIe Gen5 x8 of x16)", 0), 0u);
  EXPECT_EQ(v.next_steps[1], gw::kind_of(gw::Bound::Pcie).next_step);
  for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(v.gpus[i].link->is_short(), i == 3) << i;
}

TEST(WatchLinks, ComputeBoundLinkAdviceComesAfter) {
  const gw::Verdict v = gw::judge(eight(gemm, 6, {4, 16, 5, 16}));
  EXPECT_EQ(v.bound, gw::Bound::Compute);
  ASSERT_EQ(v.next_steps.size(), 2u);
  EXPECT_EQ(v.next_steps[0], gw::kind_of(gw::Bound::Compute).next_step);
  EXPECT_NE(v.next_steps[1].find("GPU 6: PCIe Gen4 x16 of Gen5 under load"), std::string::npos) << v.next_steps[1];
}

TEST(WatchLinks, AShortLinkOfAGpuNotInTheJobIsNotInTheHeadline) {
  gw::Timeline t = eight(gemm, 2, {5, 8, 5, 16});
  t.gpus[2].in_job = false;
  const gw::Verdict v = gw::judge(t);
  EXPECT_TRUE(v.gpus[2].link->is_short());  // its own evidence still says so
  EXPECT_TRUE(has(v.gpus[2].evidence, "PCIe Gen5 x8 of x16"));
  EXPECT_EQ(v.headline.find("GPU 2: PCIe"), std::string::npos) << v.headline;
  EXPECT_EQ(v.next_steps.size(), 1u);
}

GpuProcess listed(unsigned pid, const char* name, std::optional<unsigned> sm, std::optional<unsigned> mem = std::nullopt) {
  return GpuProcess{pid, name, 1u << 30, sm, mem};
}

TEST(WatchShares, ReadingsAddUpToEachProcessesMean) {
  std::vector<gw::ProcessShare> ps;
  const std::vector<int> tree{100, 101};  // the command's, sorted
  gw::add_process_reading(ps, {listed(101, "python", 60, 20), listed(4242, "python3", 30)}, tree);
  gw::add_process_reading(ps, {listed(101, "python", 50, 10), listed(4242, "python3", std::nullopt)}, tree);
  gw::add_process_reading(ps, {listed(101, "", 40, 0)}, tree);
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].pid, 101u);
  EXPECT_TRUE(ps[0].job);
  EXPECT_EQ(ps[0].name, "python");  // a later reading without a name keeps the first
  EXPECT_EQ(ps[0].readings, 3);
  EXPECT_EQ(ps[0].share_readings, 3);
  EXPECT_DOUBLE_EQ(*ps[0].sm_pct, 50.0);
  EXPECT_DOUBLE_EQ(*ps[0].mem_pct, 10.0);
  EXPECT_FALSE(ps[1].job);
  EXPECT_EQ(ps[1].readings, 2);
  EXPECT_EQ(ps[1].share_readings, 1);  // a reading without a share does not pull the mean to 0
  EXPECT_DOUBLE_EQ(*ps[1].sm_pct, 30.0);
  EXPECT_FALSE(ps[1].mem_pct);
}

TEST(WatchShares, NoShareEverIsAbsentNotZero) {
  std::vector<gw::ProcessShare> ps;
  gw::add_process_reading(ps, {listed(7, "a", std::nullopt)}, {});
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_FALSE(ps[0].sm_pct);
  EXPECT_EQ(ps[0].share_readings, 0);
  EXPECT_FALSE(ps[0].job);  // an empty tree: no process is the job's
}

TEST(WatchShares, BusiestFirstAndCapped) {
  std::vector<gw::ProcessShare> ps;
  for (unsigned i = 0; i < 20; ++i) {
    gw::ProcessShare s;
    s.pid = i;
    if (i % 2 == 0) s.sm_pct = static_cast<double>(i);
    ps.push_back(s);
  }
  const auto out = gw::busiest_first(ps);
  ASSERT_EQ(out.size(), gw::thresholds::kMaxProcessesPerGpu);
  EXPECT_EQ(out[0].pid, 18u);
  EXPECT_EQ(out[9].pid, 0u);   // the last with a share (0%)
  EXPECT_EQ(out[10].pid, 1u);  // then those without, in the order seen
  EXPECT_TRUE(gw::busiest_first({}).empty());
}

gw::GpuTimeline shared_gpu(std::optional<double> job_sm, std::optional<double> other_sm) {
  gw::GpuTimeline g = gemm(0);
  g.other_processes = {"4242 python3", "5151 torchrun"};
  gw::ProcessShare job{101, "python", true, 10, job_sm ? 10 : 0, job_sm, std::nullopt};
  gw::ProcessShare a{4242, "python3", false, 10, other_sm ? 10 : 0, other_sm, std::nullopt};
  gw::ProcessShare b{5151, "torchrun", false, 10, other_sm ? 10 : 0, other_sm ? std::optional<double>(3.0) : std::nullopt, std::nullopt};
  g.processes = {job, a, b};
  return g;
}

TEST(WatchShares, TheNeighbourIsAnotherJobsBusiestProcess) {
  gw::Timeline t;
  t.duration_s = 2.0;
  t.gpus.push_back(shared_gpu(55.0, 41.0));
  const gw::Verdict v = gw::judge(t);
  const auto& g = v.gpus[0];
  ASSERT_TRUE(g.neighbour);
  EXPECT_EQ(g.neighbour->pid, 4242u);
  EXPECT_DOUBLE_EQ(*g.neighbour->sm_pct, 41.0);
  EXPECT_EQ(g.processes.size(), 3u);
  EXPECT_TRUE(has(g.evidence, "SM time by process: the job 101 python 55%; another job 4242 python3 41%, 5151 torchrun 3%"));
  EXPECT_NE(v.headline.find("; GPU 0 shared with another job (4242 python3: SM 41%, the job's 55%)"), std::string::npos)
      << v.headline;
}

TEST(WatchShares, WithoutSharesTheHeadlineIsAsBefore) {
  gw::Timeline t;
  t.duration_s = 2.0;
  t.gpus.push_back(shared_gpu(std::nullopt, std::nullopt));
  const gw::Verdict v = gw::judge(t);
  ASSERT_TRUE(v.gpus[0].neighbour);
  EXPECT_EQ(v.gpus[0].neighbour->pid, 4242u);  // the first listed, with no share to rank by
  EXPECT_NE(v.headline.find("; GPU 0 shared with another job (4242 python3 and more)"), std::string::npos) << v.headline;
  for (const auto& e : v.gpus[0].evidence) EXPECT_EQ(e.rfind("SM time by process", 0), std::string::npos) << e;
}

TEST(WatchShares, NoNeighbourWhereTheJobIsNotListed) {
  gw::GpuTimeline g = shared_gpu(55.0, 41.0);
  g.job_process = false;  // NVML never listed the job here: the others are not its neighbours
  g.other_processes.clear();
  const gw::GpuVerdict v = gw::judge_gpu(g);
  EXPECT_FALSE(v.neighbour);
  EXPECT_EQ(v.processes.size(), 3u);
}

// watch.json read back: version 2 keeps the link columns and the processes; version 1 reads
// with them absent; malformed values are one error naming the file.
namespace gcw = gpucheck::compare::watch;

gcw::WatchRun run_of(gw::Timeline t) {
  gcw::WatchRun r;
  r.command = {"python3", "train.py"};
  r.name = "watch/train";
  r.timeline = std::move(t);
  r.timeline.exit_status = 0;
  r.verdict = gw::judge(r.timeline);
  return r;
}

TEST(WatchLinkRecord, VersionTwoRoundTrips) {
  gw::Timeline t = eight(gemm, 3, {5, 8, 5, 16});
  t.gpus[0] = shared_gpu(55.0, 41.0);
  const std::string text = gcw::watch_json(run_of(t));
  EXPECT_EQ(json::parse(text)["gpucheck_watch_version"], gcw::kWatchRecordVersion);
  const auto back = gcw::read_watch_json(text, "w.json");
  ASSERT_TRUE(back) << back.error().str();
  const gw::Verdict v = gw::judge(back->timeline);
  EXPECT_TRUE(v.gpus[3].link->width_short());
  ASSERT_TRUE(v.gpus[0].neighbour);
  EXPECT_EQ(v.gpus[0].neighbour->name, "python3");
  EXPECT_EQ(v.gpus[0].processes[0].share_readings, 10);
  EXPECT_EQ(v.headline, gw::judge(t).headline);
}

TEST(WatchLinkRecord, ResultsContextCarriesTheLeadGpusLink) {
  gw::Timeline t;
  t.duration_s = 2.0;
  t.gpus.push_back(gemm(0, {5, 8, 5, 16}));
  const json ctx = json::parse(gcw::results_json(run_of(t)))["context"];
  EXPECT_EQ(ctx["pcie_gen_current"], "5");
  EXPECT_EQ(ctx["pcie_width_current"], "8");
  EXPECT_EQ(ctx["pcie_gen_max"], "5");
  EXPECT_EQ(ctx["pcie_width_max"], "16");
  gw::Timeline none;
  none.duration_s = 2.0;
  none.gpus.push_back(gemm(0, {0, 0, 0, 0}));
  const json bare = json::parse(gcw::results_json(run_of(none)))["context"];
  for (const char* k : {"pcie_gen_current", "pcie_width_current", "pcie_gen_max", "pcie_width_max"})
    EXPECT_FALSE(bare.contains(k)) << k;  // absent, never "0"
}

std::string edited(const std::function<void(json&)>& edit) {
  gw::Timeline t;
  t.duration_s = 2.0;
  t.gpus.push_back(shared_gpu(55.0, 41.0));
  json j = json::parse(gcw::watch_json(run_of(t)));
  edit(j);
  return j.dump();
}

TEST(WatchLinkRecord, VersionOneReadsWithTheNewFieldsAbsent) {
  const std::string text = edited([](json& j) {
    j["gpucheck_watch_version"] = 1;
    j["gpus"][0].erase("processes");
    for (const char* k : {"pcie_gen", "pcie_width", "pcie_gen_max", "pcie_width_max"}) j["gpus"][0]["timeline"].erase(k);
  });
  const auto back = gcw::read_watch_json(text, "old.json");
  ASSERT_TRUE(back) << back.error().str();
  const gw::Verdict v = gw::judge(back->timeline);
  EXPECT_FALSE(v.gpus[0].link);
  EXPECT_TRUE(v.gpus[0].processes.empty());
  EXPECT_FALSE(v.gpus[0].neighbour);
}

TEST(WatchLinkRecord, RecordedH200RunsHaveNoLinkOrShares) {
  for (const char* name : {"gemm", "h2d", "starved", "train_step"}) {
    const auto path = gpucheck::testutil::fixture(std::string("watch/h200/") + name + ".json");
    const auto back = gcw::read_watch_json(gpucheck::testutil::slurp(path), path);
    ASSERT_TRUE(back) << name << ": " << back.error().str();
    for (const auto& g : gw::judge(back->timeline).gpus) {
      EXPECT_FALSE(g.link) << name;
      EXPECT_FALSE(g.neighbour) << name;
    }
  }
}

TEST(WatchLinkRecord, MalformedValuesAreOneErrorNamingTheFile) {
  const std::vector<std::pair<std::function<void(json&)>, const char*>> cases = {
      {[](json& j) { j["gpucheck_watch_version"] = 3; }, "gpucheck_watch_version 3"},
      {[](json& j) { j["gpucheck_watch_version"] = "2"; }, "gpucheck_watch_version \"2\""},
      {[](json& j) { j["gpucheck_watch_version"] = 0; }, "gpucheck_watch_version 0"},
      {[](json& j) { j["gpus"][0]["timeline"]["pcie_width"][0] = -8; }, "pcie_width[0] holds -8"},
      {[](json& j) { j["gpus"][0]["timeline"]["pcie_gen"][0] = "Gen5"; }, "not a readable watch record"},
      {[](json& j) { j["gpus"][0]["processes"][1]["sm_pct"] = 120; }, "sm_pct holds 120"},
      {[](json& j) { j["gpus"][0]["processes"][1]["sm_pct"] = -1; }, "sm_pct holds -1"},
      {[](json& j) { j["gpus"][0]["processes"][1]["pid"] = -5; }, "pid holds -5"},
      {[](json& j) { j["gpus"][0]["processes"][1]["job"] = "no"; }, "not a readable watch record"},
      {[](json& j) { j["gpus"][0]["processes"] = "4242"; }, "processes holds \"4242\""},
  };
  for (const auto& [edit, said] : cases) {
    const auto back = gcw::read_watch_json(edited(edit), "bad.json");
    ASSERT_FALSE(back) << said;
    EXPECT_EQ(back.error().str().rfind("bad.json", 0), 0u) << back.error().str();
    EXPECT_NE(back.error().str().find(said), std::string::npos) << back.error().str();
    EXPECT_EQ(back.error().str().find('\n'), std::string::npos);
  }
}

}  // namespace watch_links_test
