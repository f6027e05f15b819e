// The watch verdict rules on timelines recorded on an H200 (2026-12-01, ci/watch_session.sh;
// tests/unit/compare/fixtures/watch/h200/README.md): each recorded watch.json read back into a
// timeline and judged again must give the verdict a performance engineer gives that workload.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "../test_util.hpp"
#include "watch/rules.hpp"

namespace {

using nlohmann::json;

template <typename T>
std::optional<T> at(const json& col, std::size_t i) {
  if (!col.is_array() || i >= col.size() || col[i].is_null()) return std::nullopt;
  return col[i].get<T>();
}

gpucheck::watch::Timeline read_timeline(const std::string& name) {
  const json d = json::parse(gpucheck::testutil::slurp(gpucheck::testutil::fixture("watch/h200/" + name + ".json")));
  gpucheck::watch::Timeline t;
  t.duration_s = d.value("duration_s", 0.0);
  // Recordings since the steps' window was written carry it (the older fixtures do not).
  if (d.contains("steps") && d["steps"].is_object() && d["steps"].value("from_s", json()).is_number() &&
      d["steps"].value("to_s", json()).is_number())
    t.steps = gpucheck::watch::Window{d["steps"]["from_s"].get<double>(), d["steps"]["to_s"].get<double>()};
  for (const json& g : d.at("gpus")) {
    gpucheck::watch::GpuTimeline gt;
    gt.index = g.value("index", 0u);
    gt.name = g.value("name", std::string());
    if (g.contains("gpm") && g["gpm"].is_boolean()) gt.gpm = g["gpm"].get<bool>();
    gt.in_job = g.value("in_job", true);
    const json& c = g.at("timeline");
    for (std::size_t i = 0; i < c.at("t_s").size(); ++i) {
      gpucheck::watch::GpuPoint p;
      p.t_s = c["t_s"][i].get<double>();
      gpucheck::GpuSample& s = p.s;
      s.util_gpu_pct = at<unsigned>(c["util_pct"], i);
      s.util_mem_pct = at<unsigned>(c["mem_util_pct"], i);
      if (const auto m = at<double>(c["mem_used_MiB"], i)) s.mem_used_bytes = static_cast<std::uint64_t>(*m * 1048576.0);
      s.power_W = at<double>(c["power_W"], i);
      s.power_limit_W = at<double>(c["power_limit_W"], i);
      s.sm_clock_MHz = at<unsigned>(c["sm_clock_MHz"], i);
      s.sm_clock_max_MHz = at<unsigned>(c["sm_clock_max_MHz"], i);
      s.temperature_C = at<unsigned>(c["temperature_C"], i);
      s.clock_event_reasons = at<std::uint64_t>(c["clock_event_reasons"], i);
      s.pcie_rx_MBps = at<double>(c["pcie_rx_MBps"], i);
      s.pcie_tx_MBps = at<double>(c["pcie_tx_MBps"], i);
      s.sm_active_pct = at<double>(c["sm_active_pct"], i);
      s.sm_occupancy_pct = at<double>(c["sm_occupancy_pct"], i);
      s.tensor_active_pct = at<double>(c["tensor_active_pct"], i);
      s.dram_bw_pct = at<double>(c["dram_bw_pct"], i);
      gt.points.push_back(p);
    }
    t.gpus.push_back(std::move(gt));
  }
  const json& h = d.at("host");
  for (std::size_t i = 0; i < h.at("t_s").size(); ++i) {
    gpucheck::watch::HostPoint p;
    p.t_s = h["t_s"][i].get<double>();
    p.h.cpu_pct = at<double>(h["cpu_pct"], i);
    p.h.busiest_core_pct = at<double>(h["busiest_core_pct"], i);
    p.h.iowait_pct = at<double>(h["iowait_pct"], i);
    p.h.disk_read_MBps = at<double>(h["disk_read_MBps"], i);
    p.h.tree_cpu_pct = at<double>(h["tree_cpu_pct"], i);
    p.h.tree_rss_MiB = at<double>(h["tree_rss_MiB"], i);
    p.h.tree_processes = at<int>(h["tree_processes"], i).value_or(0);
    t.host.push_back(p);
  }
  return t;
}

struct Recorded {
  const char* name;
  gpucheck::watch::Bound bound;
};

class WatchRecorded : public ::testing::TestWithParam<Recorded> {};

TEST_P(WatchRecorded, TheRulesGiveTheWorkloadsVerdict) {
  const Recorded& r = GetParam();
  const gpucheck::watch::Timeline t = read_timeline(r.name);
  ASSERT_FALSE(t.gpus.empty());
  ASSERT_GT(t.gpus.front().points.size(), 10u);
  const gpucheck::watch::Verdict v = gpucheck::watch::judge(t);
  EXPECT_TRUE(v.gpu_sampled);
  // A recording with the steps' window is judged over it, as on the device.
  if (t.steps) {
    EXPECT_TRUE(v.gpus.front().f.over_steps) << r.name;
  }
  EXPECT_EQ(gpucheck::watch::kind_of(v.bound).key, std::string(gpucheck::watch::kind_of(r.bound).key)) << r.name;
}

INSTANTIATE_TEST_SUITE_P(H200, WatchRecorded,
                         ::testing::Values(Recorded{"gemm", gpucheck::watch::Bound::Compute},
                                           Recorded{"tiny_kernels", gpucheck::watch::Bound::Launch},
                                           Recorded{"starved", gpucheck::watch::Bound::Starved},
                                           Recorded{"h2d", gpucheck::watch::Bound::Pcie},
                                           Recorded{"hbm_copy", gpucheck::watch::Bound::Memory},
                                           Recorded{"train_starved", gpucheck::watch::Bound::Starved},
                                           // Recorded with the steps' window (14:34 UTC): the unstarved step
                                           // read "starved" over its whole active window (start-up included)
                                           Recorded{"train_step", gpucheck::watch::Bound::Compute},
                                           Recorded{"train_starved_steps", gpucheck::watch::Bound::Starved}),
                         [](const ::testing::TestParamInfo<Recorded>& i) { return std::string(i.param.name); });

}  // namespace
