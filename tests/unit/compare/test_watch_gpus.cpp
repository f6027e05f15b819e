// gpucheck watch over several GPUs, with a fake NVML of 8 (real 8-GPU runs wait for hardware):
// a job on 8 cards of which 7 idle, one card throttled among 8 working, one card's PCIe link at
// x8, a GPU the job shares with another process (each process's share where NVML gives one). The command is a real child; the fake NVML finds its pid (as the host
// sees it: the command runs in a pid namespace where it may be contained) by a marker in its
// command line, and lists it as the GPUs' compute process, as NVML lists a job's ranks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../test_util.hpp"
#include "fake_gpu.hpp"
#include "watch/command.hpp"
#include "watch_cli.hpp"

namespace gpucheck::compare {
namespace {

namespace fs = std::filesystem;

struct Card {
  unsigned util = 0;
  double sm_active = 0.0;
  std::uint64_t reasons = 0;
  bool job = true;            // NVML lists the job's process on it
  unsigned other_pid = 0;     // another process on it, 0 for none
  double pcie_MBps = 2.7;     // rx
  testing::Link link{};       // 0 in a field: NVML gives none, as a driver without the calls
  // nvmlDeviceGetProcessUtilization's share for the job's and the other process (absent: not given).
  std::optional<unsigned> job_sm{}, other_sm{};
};

// The host's pid of the process whose command line holds `marker`, 0 if none.
unsigned pid_with(const std::string& marker) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    try {
      if (testutil::slurp((e.path() / "cmdline").string()).find(marker) != std::string::npos)
        return static_cast<unsigned>(std::stoul(name));
    } catch (const std::exception&) {  // gone meanwhile
    }
  }
  return 0;
}

// N GPUs; the job's pid is found by the marker in its command line.
class FakeCards final : public NvmlApi {
 public:
  FakeCards(std::vector<Card> cards, std::string marker) : cards_(std::move(cards)), marker_(std::move(marker)) {}
  void query(const std::string&, Telemetry*) const override {}
  std::vector<GpuActivity> activity() const override {
    const unsigned pid = pid_with(marker_);
    std::vector<GpuActivity> out;
    for (unsigned i = 0; i < cards_.size(); ++i) {
      GpuActivity a;
      a.nvml_index = i;
      a.name = "NVIDIA H200";
      a.uuid = "GPU-fake-" + std::to_string(i);
      const Card& c = cards_[i];
      if (pid != 0 && c.job) a.processes.push_back(GpuProcess{pid, "sh", 1u << 30, c.job_sm, c.job_sm});
      if (c.other_pid != 0) a.processes.push_back(GpuProcess{c.other_pid, "python3", 2u << 30, c.other_sm, c.other_sm});
      out.push_back(a);
    }
    return out;
  }
  unsigned device_count() const override { return static_cast<unsigned>(cards_.size()); }
  std::optional<bool> gpm_supported(unsigned) const override { return true; }
  std::optional<GpuSample> sample(unsigned i) const override {
    const Card& c = cards_.at(i);
    GpuSample s = testing::reading(c.util, c.sm_active, c.pcie_MBps, c.link);
    s.tensor_active_pct = c.sm_active;
    s.dram_bw_pct = 17.1;
    s.sm_clock_MHz = 1700;
    s.sm_clock_max_MHz = 1980;
    s.clock_event_reasons = c.reasons;
    s.pcie_tx_MBps = 0.0;
    return s;
  }

 private:
  std::vector<Card> cards_;
  std::string marker_;
};

constexpr Card kGemm{97, 93.7, 0, true, 0};
constexpr Card kIdle{0, 0.0, 0, true, 0};
// Pinned H2D copies: busy, SMs idle, 57640 MiB/s over PCIe (the H200's, docs/WATCH.md).
constexpr Card kCopy{99, 0.0, 0, true, 0, 57640.0};

bool has_evidence(const nlohmann::json& gpu, const std::string& text) {
  for (const auto& e : gpu["evidence"])
    if (e.get<std::string>() == text) return true;
  return false;
}

nlohmann::json watch_cards(const std::vector<Card>& cards, std::string* out) {
  testutil::TempDir tmp("gpucheck-watch-gpus");
  const std::string marker = "gpucheck-watch-gpus-" + tmp.path().filename().string();
  // NVML's process list is read once a second: the command outlives the second reading.
  const std::vector<std::string> args{"--out", (tmp.path() / "out").string(), "--interval", "100", "--", "sh", "-c", "sleep 1.5; : " + marker};
  const FakeCards nvml(cards, marker);
  WatchDeps deps;
  deps.nvml = &nvml;
  const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  deps.out_fd = deps.err_fd = fd;
  const testing::WatchCli r = testing::watch_cli(args, deps);
  ::close(fd);
  EXPECT_EQ(r.status, 0) << r.err;
  *out = r.out;
  return nlohmann::json::parse(testutil::slurp((tmp.path() / "out" / "watch.json").string()));
}

TEST(WatchGpus, EightCardsSevenIdle) {
  std::vector<Card> cards(8, kIdle);
  cards[0] = kGemm;  // every rank on cuda:0, each holding a context on its own card
  std::string out;
  const auto w = watch_cards(cards, &out);
  EXPECT_EQ(w["verdict"]["bound"], "compute_bound");
  EXPECT_EQ(w["verdict"]["imbalance"], "8 cards, 7 idle: GPUs 1,2,3,4,5,6,7 (util 0%) while GPU 0 works (util 97%)");
  for (int i = 1; i < 8; ++i) {
    EXPECT_EQ(w["gpus"][i]["in_job"], true) << i;
    EXPECT_EQ(w["verdict"]["gpus"][i]["bound"], "idle") << i;  // not "starved": another card of the job works
  }
  EXPECT_EQ(out.rfind("gpucheck watch: compute-bound", 0), 0u) << out;
  EXPECT_NE(out.find("rank-to-GPU mapping"), std::string::npos) << out;
}

TEST(WatchGpus, OneCardOfEightThrottled) {
  std::vector<Card> cards(8, kGemm);
  cards[3].reasons = 0x8;  // hardware slowdown
  std::string out;
  const auto w = watch_cards(cards, &out);
  EXPECT_EQ(w["verdict"]["bound"], "compute_bound");
  EXPECT_EQ(w["verdict"]["gpus"][3]["throttled"], true);
  EXPECT_EQ(w["verdict"]["gpus"][2]["throttled"], false);
  EXPECT_NE(w["verdict"]["headline"].get<std::string>().find("compute-bound, GPU 3 throttled"), std::string::npos)
      << w["verdict"]["headline"];
  EXPECT_TRUE(w["verdict"]["imbalance"].is_null());
  EXPECT_NE(out.find("check cooling and power delivery"), std::string::npos) << out;
}

TEST(WatchGpus, OneCardOfEightAtX8) {
  std::vector<Card> cards(8, kGemm);
  cards[3].link.width = 8;
  std::string out;
  const auto w = watch_cards(cards, &out);
  const auto& v = w["verdict"];
  EXPECT_EQ(v["bound"], "compute_bound");
  EXPECT_EQ(v["gpus"][3]["pcie_link"]["width"], 8);
  EXPECT_EQ(v["gpus"][3]["pcie_link"]["width_max"], 16);
  EXPECT_EQ(v["gpus"][3]["pcie_link"]["width_short"], true);
  EXPECT_EQ(v["gpus"][3]["pcie_link"]["gen_short"], false);
  EXPECT_EQ(v["gpus"][3]["pcie_link"]["gen_read"], "busy");
  EXPECT_TRUE(has_evidence(v["gpus"][3], "PCIe Gen5 x8 of x16")) << v["gpus"][3]["evidence"];
  for (int i : {0, 2, 7}) {
    EXPECT_EQ(v["gpus"][i]["pcie_link"]["short"], false) << i;
    EXPECT_FALSE(has_evidence(v["gpus"][i], "PCIe Gen5 x16")) << i;  // a full link is not evidence
  }
  EXPECT_NE(v["headline"].get<std::string>().find("; GPU 3: PCIe Gen5 x8 of x16"), std::string::npos) << v["headline"];
  EXPECT_EQ(v["next_steps"][0], "the SMs are the limit: lower precision (AMP bf16/fp16, fp8 where supported), "
                                "channels-last for convolutions, fewer FLOPs");  // the link's step comes after
  ASSERT_EQ(v["next_steps"].size(), 2u);
  EXPECT_EQ(v["next_steps"][1].get<std::string>().rfind("a PCIe link runs below what GPU and slot allow (GPU 3: ", 0), 0u);
  EXPECT_EQ(w["gpus"][3]["timeline"]["pcie_width"][0], 8);  // recorded per reading
  EXPECT_EQ(w["gpus"][3]["timeline"]["pcie_width_max"][0], 16);
}

TEST(WatchGpus, CopyBoundAdviceNamesTheShortLinkFirst) {
  std::vector<Card> cards(8, kCopy);
  cards[5].link.width = 8;
  cards[5].link.gen = 4;
  std::string out;
  const auto w = watch_cards(cards, &out);
  const auto& v = w["verdict"];
  EXPECT_EQ(v["bound"], "pcie_bound");
  EXPECT_EQ(v["gpus"][5]["pcie_link"]["gen_short"], true);
  EXPECT_TRUE(has_evidence(v["gpus"][5], "PCIe Gen4 x8 of Gen5 x16")) << v["gpus"][5]["evidence"];
  ASSERT_GE(v["next_steps"].size(), 2u);
  EXPECT_EQ(v["next_steps"][0].get<std::string>().rfind("a PCIe link runs below what GPU and slot allow (GPU 5: PCIe Gen4 x8 of Gen5 x16)", 0), 0u)
      << v["next_steps"];
  EXPECT_EQ(v["next_steps"][1].get<std::string>().rfind("copies over PCIe are the limit", 0), 0u);
  EXPECT_NE(out.find("GPU 5: PCIe Gen4 x8 of Gen5 x16"), std::string::npos) << out;  // the terminal's first line
}

TEST(WatchGpus, IdleCardsAtGen1AreNotShortLinks) {
  std::vector<Card> cards(8, kIdle);
  cards[0] = kGemm;
  for (int i = 1; i < 8; ++i) cards[static_cast<std::size_t>(i)].link.gen = 1;  // an idle link drops its generation
  cards[6].link.width = 4;                                                      // the width does not: short at idle too
  std::string out;
  const auto w = watch_cards(cards, &out);
  const auto& v = w["verdict"];
  EXPECT_EQ(v["gpus"][1]["pcie_link"]["gen"], 1);
  EXPECT_EQ(v["gpus"][1]["pcie_link"]["gen_read"], "idle");
  EXPECT_EQ(v["gpus"][1]["pcie_link"]["short"], false);
  EXPECT_EQ(v["gpus"][6]["pcie_link"]["width_short"], true);
  EXPECT_EQ(v["gpus"][6]["pcie_link"]["gen_short"], false);
  EXPECT_TRUE(has_evidence(v["gpus"][6], "PCIe x4 of x16")) << v["gpus"][6]["evidence"];  // Gen1 at idle left out
  EXPECT_EQ(v["imbalance"], "8 cards, 7 idle: GPUs 1,2,3,4,5,6,7 (util 0%) while GPU 0 works (util 97%)");
}

TEST(WatchGpus, ADriverWithoutTheLinkCallsLeavesItAbsent) {
  Card c = kGemm;
  c.link = {0, 0, 0, 0};
  std::string out;
  const auto w = watch_cards({c}, &out);
  EXPECT_TRUE(w["verdict"]["gpus"][0]["pcie_link"].is_null());
  EXPECT_TRUE(w["gpus"][0]["timeline"]["pcie_width"][0].is_null());  // never 0
  EXPECT_EQ(w["verdict"]["headline"], "compute-bound");
}

TEST(WatchGpus, ThreeCardsOfEightAreTheJobs) {
  std::vector<Card> cards(8, kIdle);
  for (auto& c : cards) c.job = false;
  for (unsigned i : {2u, 3u, 4u}) cards[i] = kGemm;
  std::string out;
  const auto w = watch_cards(cards, &out);
  EXPECT_EQ(w["verdict"]["bound"], "compute_bound");
  EXPECT_TRUE(w["verdict"]["imbalance"].is_null());  // the five others are not the job's
  EXPECT_EQ(w["gpus"][0]["in_job"], false);
  EXPECT_EQ(w["gpus"][3]["in_job"], true);
}

TEST(WatchGpus, TwoJobsShareAGpu) {
  Card shared = kGemm;
  shared.other_pid = 4242;
  std::string out;
  const auto w = watch_cards({shared}, &out);
  EXPECT_EQ(w["gpus"][0]["other_processes"], nlohmann::json::array({"4242 python3"}));
  const std::string headline = w["verdict"]["headline"];
  EXPECT_NE(headline.find("GPU 0 shared with another job (4242 python3)"), std::string::npos) << headline;
  bool said = false;
  for (const auto& e : w["verdict"]["gpus"][0]["evidence"]) said = said || e.get<std::string>().find("the whole GPU's") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(WatchGpus, TwoJobsShareAGpuEachProcessItsShare) {
  Card shared = kGemm;
  shared.other_pid = 4242;
  shared.job_sm = 55;
  shared.other_sm = 41;
  std::string out;
  const auto w = watch_cards({shared}, &out);
  const auto& g = w["verdict"]["gpus"][0];
  EXPECT_EQ(g["neighbour"]["pid"], 4242);
  EXPECT_EQ(g["neighbour"]["name"], "python3");
  EXPECT_EQ(g["neighbour"]["sm_pct"], 41.0);
  EXPECT_EQ(g["neighbour"]["job"], false);
  ASSERT_EQ(g["processes"].size(), 2u);
  EXPECT_EQ(g["processes"][0]["job"], true);  // the busiest first
  EXPECT_EQ(g["processes"][0]["sm_pct"], 55.0);
  EXPECT_GE(g["processes"][0]["share_readings"], 1);
  EXPECT_EQ(g["processes"][1]["pid"], 4242);
  EXPECT_EQ(w["gpus"][0]["processes"], g["processes"]);  // the record's, judged as recorded
  const std::string headline = w["verdict"]["headline"];
  EXPECT_NE(headline.find("GPU 0 shared with another job (4242 python3: SM 41%, the job's 55%)"), std::string::npos) << headline;
}

TEST(WatchGpus, ANeighbourWithoutSharesIsNamedAlone) {
  Card shared = kGemm;
  shared.other_pid = 4242;  // NVML gives no per-process utilisation
  std::string out;
  const auto w = watch_cards({shared}, &out);
  const auto& g = w["verdict"]["gpus"][0];
  EXPECT_EQ(g["neighbour"]["pid"], 4242);
  EXPECT_TRUE(g["neighbour"]["sm_pct"].is_null());
  bool said = false;
  for (const auto& e : g["evidence"]) said = said || e.get<std::string>().rfind("SM time by process", 0) == 0;
  EXPECT_FALSE(said);
}

}  // namespace
}  // namespace gpucheck::compare
