// gpucheck fleet: the peers rule on made fleets built from the real H200 acceptance fixture (its
// figures, spread as five healthy H200 machines spread on 2026-12-02), the leave-one-out
// statistics against brute force, the gaps file's rules, Slurm host lists, node folders that are
// missing, empty, half-written or of another suite, the recheck, drain/resume scripts, pairs.
#include <gtest/gtest.h>

#include <filesystem>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "cli/cli.hpp"
#include "fake_fs.hpp"
#include "shipped.hpp"
#include "fleet/fleet.hpp"
#include "fleet/hostlist.hpp"
#include "fleet/load.hpp"
#include "fleet/pairs.hpp"
#include "fleet/peers.hpp"
#include "fleet/render.hpp"
#include "gpucheck/core/specs.hpp"

namespace gc = gpucheck::compare;
namespace gf = gpucheck::compare::fleet;
using gpucheck::compare::testing::FakeFileSystem;
using json = nlohmann::ordered_json;

namespace {

std::string source(const std::string& rel) { return gpucheck::testutil::slurp(gpucheck::testutil::source_path(rel)); }
json accept_fixture() {
  static const json j = json::parse(source("tests/unit/compare/fixtures/accept/h200_gpu0.json"));
  return j;
}

const gpucheck::SpecDb& specs() { return gpucheck::compare::testing::shipped_specs(); }
const gc::AcceptConfig& config() { return gpucheck::compare::testing::shipped_accept_config(); }
const gf::FleetGaps& gaps() {
  static const gf::FleetGaps g = [] {
    auto p = gf::parse_fleet_gaps(source("baselines/fleet_gaps.json"), "baselines/fleet_gaps.json");
    EXPECT_TRUE(p.ok()) << p.error().str();
    return p.ok() ? *p : gf::FleetGaps{};
  }();
  return g;
}

// Benchmark name prefixes of each figure, and the healthy spread (full width, a fraction) the
// made fleets draw from: the measured spread across machines.
struct Spread {
  const char* prefix;
  double width;
};
const Spread kSpread[] = {{"matmul/cublaslt/bf16/", 0.010}, {"matmul/cublaslt/fp16/", 0.010}, {"matmul/cublaslt/tf32/", 0.010},
                          {"matmul/cublaslt/fp8e4m3/", 0.010}, {"memory/copy_kernel/", 0.005}, {"memory/memcpy_d2d/", 0.005},
                          {"pcie/h2d/", 0.043}, {"pcie/d2h/", 0.006}, {"matmul/burn/", 0.010}};

void scale(json& doc, const std::string& prefix, double f) {
  for (auto& e : doc["benchmarks"])
    if (e["name"].get<std::string>().starts_with(prefix))
      for (const char* k : {"GBps", "TFLOPS"})
        if (e.contains(k)) e[k] = e[k].get<double>() * f;
}

// One GPU of a made node: the fixture renamed, each figure moved inside its healthy spread.
json made_gpu(const std::string& node, int index, std::mt19937& rng) {
  json doc = accept_fixture();
  char pci[32];
  std::snprintf(pci, sizeof pci, "0000:%02X:00.0", 0x18 + index * 0x10);
  auto& c = doc["context"];
  c["host_name"] = node;
  c["gpucheck_device_index"] = std::to_string(index);
  c["gpu_uuid"] = "GPU-" + node + "-" + std::to_string(index);
  c["gpu_pci_bus_id"] = pci;
  for (const Spread& s : kSpread) {
    std::uniform_real_distribution<double> u(-s.width / 2, s.width / 2);
    scale(doc, s.prefix, 1 + u(rng));
  }
  return doc;
}

gc::Results parsed(const json& doc, const std::string& name) {
  auto r = gc::parse_results(doc.dump(), name);
  EXPECT_TRUE(r.ok()) << r.error().str();
  return r.ok() ? *r : gc::Results{};
}

std::string node_name(int i) {
  char n[16];
  std::snprintf(n, sizeof n, "n%03d", i);
  return n;
}

// A fleet of `nodes` x `gpus`; `edit(node, gpu, doc)` makes one sick.
template <class Edit>
std::vector<gf::NodeInput> made_fleet(int nodes, int gpus, Edit edit, unsigned seed = 38) {
  std::mt19937 rng(seed);
  std::vector<gf::NodeInput> out;
  for (int n = 1; n <= nodes; ++n) {
    gf::NodeInput in{node_name(n), {}, std::nullopt};
    for (int g = 0; g < gpus; ++g) {
      json doc = made_gpu(in.name, g, rng);
      edit(n, g, doc);
      in.files.push_back(parsed(doc, in.name + "/gpu" + std::to_string(g) + ".json"));
    }
    out.push_back(std::move(in));
  }
  return out;
}
std::vector<gf::NodeInput> healthy_fleet(int nodes, int gpus, unsigned seed = 38) {
  return made_fleet(nodes, gpus, [](int, int, json&) {}, seed);
}

gf::FleetReport judged(std::vector<gf::NodeInput> nodes, gf::FleetOptions opt = {}) {
  auto r = gf::judge_fleet(std::move(nodes), specs(), config(), gaps(), opt);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? *r : gf::FleetReport{};
}

const gf::FleetNode* node(const gf::FleetReport& r, const std::string& name) {
  for (const auto& n : r.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

std::vector<std::string> flagged(const gf::FleetReport& r) {
  std::vector<std::string> out;
  for (const auto& n : r.nodes)
    if (n.flagged()) out.push_back(n.name);
  std::sort(out.begin(), out.end());
  return out;
}

// (node, gpu index, figure) of every outlier.
std::vector<std::string> outliers(const gf::FleetReport& r) {
  std::vector<std::string> out;
  for (const auto& n : r.nodes) {
    for (const auto& g : n.gpus)
      for (const auto& f : g.figures)
        if (f.outlier) out.push_back(n.name + "/" + g.index + "/" + f.key);
    for (const auto& f : n.node_figures)
      if (f.outlier) out.push_back(n.name + "/node/" + f.key);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// ---- the peers rule --------------------------------------------------------------------------

TEST(FleetPeers, SixtyFourNodesOneGpuLowInGemmOneNodeLowInHbmBothNamedNothingElse) {
  auto nodes = made_fleet(64, 8, [](int n, int g, json& doc) {
    if (n == 17 && g == 3) scale(doc, "matmul/cublaslt/bf16/", 0.95);
    if (n == 42) {
      scale(doc, "memory/copy_kernel/", 0.96);
      scale(doc, "memory/memcpy_d2d/", 0.96);
    }
  });
  const auto r = judged(std::move(nodes));
  EXPECT_EQ(flagged(r), (std::vector<std::string>{"n017", "n042"}));
  std::vector<std::string> expected{"n017/3/gemm/bf16"};
  for (int g = 0; g < 8; ++g)
    for (const char* k : {"memory/copy_kernel", "memory/memcpy_d2d"}) expected.push_back("n042/" + std::to_string(g) + "/" + k);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(outliers(r), expected);
  // Each node passed accept's own judge (5% and 4% are above the datasheet floors): only the peers see them.
  EXPECT_FALSE(node(r, "n017")->accept_failed);
  EXPECT_FALSE(node(r, "n042")->accept_failed);
  EXPECT_FALSE(node(r, "n017")->node_low);
  EXPECT_TRUE(node(r, "n042")->node_low);  // every GPU low: named as a node
  ASSERT_EQ(node(r, "n042")->outlier_lines.size(), 2u);
  EXPECT_EQ(node(r, "n042")->outlier_lines[0].rfind("node n042: all 8 GPUs low on memory/", 0), 0u);
  ASSERT_EQ(node(r, "n017")->outlier_lines.size(), 1u);
  const std::string& line = node(r, "n017")->outlier_lines[0];
  for (const char* part : {"GPU 3", "GPU-n017-3", "0000:48:00.0", "gemm/bf16"}) EXPECT_NE(line.find(part), std::string::npos) << line;
  EXPECT_TRUE(r.failed());
  EXPECT_EQ(r.nodes[0].name, "n017");  // flagged first
  EXPECT_EQ(r.nodes[1].name, "n042");
  const gf::Figure& f = node(r, "n017")->gpus[3].figures[0];
  EXPECT_EQ(f.key, "gemm/bf16");
  EXPECT_EQ(f.peers, 511);
  EXPECT_NEAR(f.deviation, -0.05, 0.008);
}

TEST(FleetPeers, HealthyFleetsWithTheMeasuredSpreadHaveNoOutlier) {
  for (unsigned seed : {1u, 2u, 3u, 38u}) {
    const auto r = judged(healthy_fleet(64, 8, seed));
    EXPECT_TRUE(outliers(r).empty()) << seed << ": " << (outliers(r).empty() ? "" : outliers(r).front());
    EXPECT_FALSE(r.failed());
  }
  // Six one-GPU machines as the H200s lent are, one tf32 run 7.6% low as one measured was: no outlier.
  auto six = made_fleet(6, 1, [](int n, int, json& doc) {
    if (n == 2) scale(doc, "matmul/cublaslt/tf32/", 382.0 / 413.0);
  });
  const auto r = judged(std::move(six));
  EXPECT_TRUE(outliers(r).empty());
  EXPECT_FALSE(r.failed());
  EXPECT_EQ(r.count_flagged(), 0);
}

TEST(FleetPeers, AGpuOverTheGapButInsideTheFleetsOwnSpreadIsNoOutlier) {
  // h2d spread wide (the gap is 9%): a GPU 10% low among peers spread +-10% is not K deviations out.
  auto nodes = made_fleet(16, 1, [](int n, int, json& doc) { scale(doc, "pcie/h2d/", 0.80 + 0.025 * n); });
  const auto r = judged(std::move(nodes));
  EXPECT_TRUE(outliers(r).empty());
}

TEST(FleetPeers, ALowFigureUnderItsGapIsNoOutlierEvenFarInDeviations) {
  // Peers identical (MAD 0), one GPU 3% low on bf16: infinitely many deviations but under its 3.4% gap.
  std::vector<gf::NodeInput> nodes;
  for (int n = 1; n <= 8; ++n) {
    json doc = accept_fixture();
    doc["context"]["host_name"] = node_name(n);
    doc["context"]["gpu_uuid"] = "GPU-" + std::to_string(n);
    if (n == 5) scale(doc, "matmul/cublaslt/bf16/", 0.97);
    if (n == 6) scale(doc, "matmul/cublaslt/fp16/", 0.96);
    nodes.push_back({node_name(n), {parsed(doc, "x.json")}, std::nullopt});
  }
  const auto r = judged(std::move(nodes));
  EXPECT_EQ(outliers(r), (std::vector<std::string>{"n006/0/gemm/fp16"}));
}

TEST(FleetPeers, TooFewPeersShowTheFigureAndJudgeNothing) {
  auto nodes = made_fleet(3, 1, [](int n, int, json& doc) {
    if (n == 1) scale(doc, "matmul/cublaslt/bf16/", 0.5);
  });
  const auto r = judged(std::move(nodes));
  EXPECT_TRUE(outliers(r).empty());
  EXPECT_FALSE(node(r, "n001")->gpus[0].figures[0].peer_median.has_value());
  EXPECT_EQ(node(r, "n001")->gpus[0].figures[0].peers, 2);
}

TEST(FleetPeers, ANodeThatFailsAcceptIsFlaggedWithItsChecks) {
  auto nodes = made_fleet(8, 2, [](int n, int g, json& doc) {
    if (n == 4 && g == 1) scale(doc, "matmul/cublaslt/bf16/", 0.5);  // under the datasheet floor too
  });
  const auto r = judged(std::move(nodes));
  EXPECT_EQ(flagged(r), (std::vector<std::string>{"n004"}));
  EXPECT_TRUE(node(r, "n004")->accept_failed);
  EXPECT_FALSE(node(r, "n004")->accept_failures.empty());
  EXPECT_EQ(node(r, "n004")->reason().rfind("accept FAIL: ", 0), 0u);
}

TEST(FleetPeers, VersionsThatDifferAreAWarningAndSaidBesideAnOutlier) {
  auto nodes = made_fleet(10, 2, [](int n, int g, json& doc) {
    if (n == 3) doc["context"]["driver_version"] = "570.86.15";
    if (n == 3 && g == 0) scale(doc, "matmul/cublaslt/fp8e4m3/", 0.9);
    if (n == 7) doc["context"]["gpucheck_commit"] = "abc1234";
  });
  const auto r = judged(std::move(nodes));
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_EQ(r.warnings[0].rfind("driver_version 570.86.15 on 1 node(s): n003", 0), 0u) << r.warnings[0];
  EXPECT_EQ(r.warnings[1].rfind("gpucheck_commit abc1234 on 1 node(s): n007", 0), 0u) << r.warnings[1];
  ASSERT_EQ(node(r, "n003")->outlier_lines.size(), 1u);
  EXPECT_NE(node(r, "n003")->outlier_lines[0].find("[versions differ: driver_version 570.86.15"), std::string::npos);
  EXPECT_EQ(flagged(r), (std::vector<std::string>{"n003"}));  // a version alone drains nothing
}

TEST(FleetPeers, VersionsWithNoMajorityAreOneWarningNamingNoNodeOdd) {
  // Three nodes on three commits (machines leased one after another): no value is the fleet's.
  const char* const commits[] = {"c1", "c2", "c3"};
  auto nodes = made_fleet(3, 1, [&](int n, int, json& doc) { doc["context"]["gpucheck_commit"] = commits[(n - 1) % 3]; });
  const auto r = judged(std::move(nodes));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].rfind("gpucheck_commit differs with no majority, 3 values", 0), 0u) << r.warnings[0];
  for (const char* name : {"n001", "n002", "n003"}) {
    ASSERT_EQ(node(r, name)->version_differences.size(), 1u);
    EXPECT_NE(node(r, name)->version_differences[0].find("(fleet: no majority)"), std::string::npos);
  }
  EXPECT_TRUE(flagged(r).empty());
}

TEST(FleetPeers, ModelsAreJudgedApart) {
  auto nodes = made_fleet(8, 1, [](int n, int, json& doc) {
    if (n > 4) {  // four H100s at H100 speed among four H200s
      doc["context"]["gpu_name"] = "NVIDIA H100 80GB HBM3";
      doc["context"]["gpu_sku"] = "nvidia-h100-sxm";
      for (const Spread& s : kSpread) scale(doc, s.prefix, 0.7);
    }
  });
  const auto r = judged(std::move(nodes));
  EXPECT_TRUE(outliers(r).empty());
  EXPECT_EQ(node(r, "n005")->gpus[0].model, "nvidia-h100-sxm");
  EXPECT_EQ(node(r, "n005")->gpus[0].figures[0].peers, 3);
}

// ---- leave-one-out statistics ----------------------------------------------------------------

TEST(FleetStats, LeaveOneOutEqualsBruteForce) {
  std::mt19937 rng(7);
  for (int n : {2, 3, 4, 5, 8, 9, 33}) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = std::round(std::uniform_real_distribution<double>(0, 10)(rng));  // duplicates on purpose
    const gf::LeaveOneOut loo(v);
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::vector<double> rest = v;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
      std::sort(rest.begin(), rest.end());
      const std::size_t m = rest.size();
      const double med = m % 2 ? rest[m / 2] : (rest[m / 2 - 1] + rest[m / 2]) / 2;
      std::vector<double> dev;
      for (double x : rest) dev.push_back(std::fabs(x - med));
      std::sort(dev.begin(), dev.end());
      const double mad = m % 2 ? dev[m / 2] : (dev[m / 2 - 1] + dev[m / 2]) / 2;
      const auto s = loo.without(v[i]);
      EXPECT_DOUBLE_EQ(s.median, med) << n << " " << i;
      EXPECT_DOUBLE_EQ(s.mad, mad) << n << " " << i;
    }
  }
}

TEST(FleetStats, LeaveOneOutRefusesAValueNotInTheSet) {
  const gf::LeaveOneOut loo({1.0, 2.0, 3.0});
  EXPECT_THROW((void)loo.without(2.5), std::logic_error);
  EXPECT_THROW(gf::LeaveOneOut({1.0}), std::logic_error);
}

// ---- the gaps file ---------------------------------------------------------------------------

TEST(FleetGaps, TheShippedFileHoldsTheRules) {
  const auto& g = gaps();
  EXPECT_EQ(g.k, 4.0);
  for (const auto& key : gf::figure_keys()) {
    const auto& f = g.gap(key);
    EXPECT_GE(f.min_gap, 0.01) << key;
    EXPECT_GE(f.min_gap, 2 * f.healthy_spread - 1e-12) << key;
  }
  EXPECT_DOUBLE_EQ(g.gap("pcie/h2d").healthy_spread, 0.043);
  EXPECT_DOUBLE_EQ(g.gap("gemm/tf32").healthy_spread, 0.076);
}

TEST(FleetGaps, BrokenFilesAreOneLineNamingTheKey) {
  json base = json::parse(source("baselines/fleet_gaps.json"));
  auto err = [](const json& j) {
    auto p = gf::parse_fleet_gaps(j.dump(), "g.json");
    return p.ok() ? std::string("ok") : p.error().str();
  };
  EXPECT_EQ(err(base), "ok");
  json a = base;
  a["figures"]["pcie/h2d"]["min_gap_pct"] = 8.0;  // under twice 4.3%
  EXPECT_EQ(err(a), "g.json: figures.pcie/h2d.min_gap_pct: under twice its healthy_spread_pct (a healthy node would be named)");
  json b = base;
  b["figures"]["burn"]["min_gap_pct"] = 0.5;
  EXPECT_EQ(err(b), "g.json: figures.burn.min_gap_pct: under 1%");
  json c = base;
  c["figures"]["gemm/fp4"] = base["figures"]["burn"];
  EXPECT_EQ(err(c).rfind("g.json: figures.gemm/fp4: unknown figure", 0), 0u);
  json d = base;
  d["figures"].erase("nccl");
  EXPECT_EQ(err(d), "g.json: figures.nccl: missing (every figure needs its gap)");
  json e = base;
  e["k"] = 0.5;
  EXPECT_EQ(err(e), "g.json: k: expected a number in [1, 20], got 0.5");
  json f = base;
  f["figures"]["burn"]["min_gap_pct"] = "10";
  EXPECT_EQ(err(f), "g.json: figures.burn.min_gap_pct: expected a number, got a string");
  json h = base;
  h["figures"]["burn"].erase("basis");
  EXPECT_EQ(err(h), "g.json: figures.burn.basis: needs the measurement behind the spread (a string)");
  EXPECT_FALSE(gf::parse_fleet_gaps("{\"k\": 4, \"k\": 5}", "g.json").ok());  // a key twice
  EXPECT_FALSE(gf::parse_fleet_gaps("", "g.json").ok());
  EXPECT_FALSE(gf::parse_fleet_gaps("[]", "g.json").ok());
}

// ---- Slurm host lists ------------------------------------------------------------------------

TEST(FleetHostlist, ExpandsRangesListsAndPadding) {
  auto a = gf::expand_hostlist("node[001-064],gpu[1-3,7]");
  ASSERT_TRUE(a.ok()) << a.error().str();
  ASSERT_EQ(a->size(), 68u);
  EXPECT_EQ(a->front(), "node001");
  EXPECT_EQ((*a)[63], "node064");
  EXPECT_EQ(std::vector<std::string>(a->begin() + 64, a->end()), (std::vector<std::string>{"gpu1", "gpu2", "gpu3", "gpu7"}));
  auto b = gf::expand_hostlist("r[1-2]-n[08-10]");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, (std::vector<std::string>{"r1-n08", "r1-n09", "r1-n10", "r2-n08", "r2-n09", "r2-n10"}));
  auto c = gf::expand_hostlist("solo");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, std::vector<std::string>{"solo"});
}

TEST(FleetHostlist, MalformedListsAreErrors) {
  for (const char* bad : {"n[3-1]", "n[1-", "n1]", "a,,b", "n[a-b]", "", "n[1-2][", "n[[1]]", "n[1--2]", "n[0-2000000]", "a b"})
    EXPECT_FALSE(gf::expand_hostlist(bad).ok()) << bad;
}

// ---- node folders ----------------------------------------------------------------------------

namespace {
// The least accept.json that reads: accept passed, recording no GPU and no check.
constexpr const char* kAcceptPass = R"({"gpucheck_accept": 1, "verdict": "pass", "gpus": [], "checks": []})";

void add_node(FakeFileSystem& fs, const std::string& dir, const std::string& name, int gpus, std::mt19937& rng) {
  for (int g = 0; g < gpus; ++g)
    fs.add(dir + "/gpu" + std::to_string(g) + "/runs/bench_all.json", made_gpu(name, g, rng).dump());
  fs.add(dir + "/accept.json", kAcceptPass);
}
}  // namespace

TEST(FleetLoad, ProblemsOfANodeAreNamedNotErrors) {
  FakeFileSystem fs;
  std::mt19937 rng(1);
  for (int n = 1; n <= 5; ++n) add_node(fs, "fleet/" + node_name(n), node_name(n), 2, rng);
  fs.dirs.insert("fleet/n006");                                                        // empty
  fs.add("fleet/n007/gpu0/runs/bench_all.json", "{\"context\": {}, \"benchmarks\": [");  // cut off
  fs.add("fleet/n007/accept.json", "{}");
  add_node(fs, "fleet/n008", "n008", 1, rng);
  fs.add("fleet/n008/gpu0/runs/.bench_all.json.tmp-123", "{");                       // a killed writer
  add_node(fs, "fleet/n009", "n009", 1, rng);
  fs.files.erase("fleet/n009/accept.json");                                             // accept did not finish
  json other = made_gpu("n010", 0, rng);
  other["context"]["gpucheck_suite"] = "quick";
  fs.add("fleet/n010/gpu0/runs/bench_all.json", other.dump());
  fs.add("fleet/n010/accept.json", kAcceptPass);
  add_node(fs, "fleet/recheck/n001", "n001", 2, rng);  // not a node of this run
  auto nodes = gf::load_nodes(fs, {"fleet"});
  ASSERT_TRUE(nodes.ok()) << nodes.error().str();
  ASSERT_EQ(nodes->size(), 10u);
  gf::FleetOptions opt;
  opt.expect = *gf::expand_hostlist("n[001-011]");
  const auto r = judged(std::move(*nodes), opt);
  auto problem = [&](const char* n) { return node(r, n) && node(r, n)->problem ? *node(r, n)->problem : std::string("none"); };
  EXPECT_EQ(problem("n001"), "none");
  EXPECT_EQ(problem("n006").rfind("empty: ", 0), 0u) << problem("n006");
  EXPECT_EQ(problem("n007").rfind("half-written: fleet/n007/gpu0/runs/bench_all.json", 0), 0u) << problem("n007");
  EXPECT_EQ(problem("n008").rfind("half-written: fleet/n008/gpu0/runs/.bench_all.json.tmp-123", 0), 0u) << problem("n008");
  EXPECT_EQ(problem("n009"), "half-written: fleet/n009 has no accept.json (gpucheck accept did not finish)");
  EXPECT_EQ(problem("n010").rfind("other suite: ", 0), 0u) << problem("n010");
  EXPECT_EQ(problem("n011"), "missing: no folder, expected by --expect");
  EXPECT_EQ(r.count_unjudged(), 6);
  EXPECT_EQ(r.count_flagged(), 0);
  EXPECT_TRUE(r.failed());
  opt.allow_missing = true;
  auto again = gf::load_nodes(fs, {"fleet"});
  EXPECT_FALSE(judged(std::move(*again), opt).failed());
}

TEST(FleetLoad, WhatTheUserTypedWrongIsAnError) {
  FakeFileSystem fs;
  std::mt19937 rng(1);
  add_node(fs, "a/n1", "n1", 1, rng);
  add_node(fs, "b/n1", "n1", 1, rng);
  fs.add("file.json", "{}");
  fs.dirs.insert("emptyparent");
  auto err = [&](std::vector<std::string> p) {
    auto r = gf::load_nodes(fs, p);
    return r.ok() ? std::string("ok") : r.error().str();
  };
  EXPECT_EQ(err({"nowhere"}), "nowhere: no such folder");
  EXPECT_EQ(err({"file.json"}), "file.json: not a folder (a node folder, or a folder of node folders)");
  EXPECT_EQ(err({"emptyparent"}), "emptyparent: holds no node folders");
  EXPECT_EQ(err({"a/n1", "b/n1"}), "fleet: two node folders are named \"n1\" (a node is its folder's name)");
  EXPECT_EQ(err({"a/n1", "emptyparent"}), "ok");  // one of several: an empty node
  EXPECT_EQ(err({}), "fleet: needs node folders, or one folder of node folders");
}

TEST(FleetLoad, NoNodeToJudgeIsAnError) {
  std::vector<gf::NodeInput> nodes{{"n1", {}, "empty: n1 holds no results"}};
  auto r = gf::judge_fleet(nodes, specs(), config(), gaps(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().str(), "fleet: none of the 1 node folders holds acceptance results (n1: empty: n1 holds no results)");
  EXPECT_FALSE(gf::judge_fleet({}, specs(), config(), gaps(), {}).ok());
}

// ---- recheck ---------------------------------------------------------------------------------

TEST(FleetRecheck, DrainedOnlyIfBothRunsFlagIt) {
  auto sick = [](int n, int g, json& doc) {
    if ((n == 2 || n == 5) && g == 0) scale(doc, "matmul/cublaslt/fp16/", 0.9);
  };
  auto first = judged(made_fleet(12, 2, sick));
  EXPECT_EQ(flagged(first), (std::vector<std::string>{"n002", "n005"}));
  // The recheck: n002 healthy now (a one-off), n005 low again; judged against the first run's peers.
  auto second = made_fleet(12, 2, [](int n, int g, json& doc) {
    if (n == 5 && g == 0) scale(doc, "matmul/cublaslt/fp16/", 0.9);
  }, 99);
  auto rep = judged(std::move(second));
  gf::apply_recheck(first, rep, "recheck");
  EXPECT_EQ(flagged(first), (std::vector<std::string>{"n005"}));
  EXPECT_TRUE(node(first, "n002")->recheck_cleared);
  EXPECT_TRUE(node(first, "n005")->rechecked);
  EXPECT_FALSE(node(first, "n005")->recheck_cleared);
  EXPECT_TRUE(first.failed());
  const std::string drain = gf::render_drain_txt(first);
  EXPECT_NE(drain.find("\nn005\t"), std::string::npos);
  EXPECT_NE(drain.find("# n002\tflagged once, its recheck passed: not drained"), std::string::npos);
  EXPECT_EQ(drain.find("\nn002\t"), std::string::npos);
}

TEST(FleetRecheck, ANodeWithoutASecondRunStaysFlagged) {
  auto first = judged(made_fleet(8, 1, [](int n, int, json& doc) {
    if (n == 3) scale(doc, "pcie/d2h/", 0.9);
  }));
  gf::FleetReport empty;
  gf::apply_recheck(first, empty, "recheck");
  EXPECT_EQ(flagged(first), (std::vector<std::string>{"n003"}));
  EXPECT_FALSE(node(first, "n003")->rechecked);
}

// ---- drain and resume ------------------------------------------------------------------------

TEST(FleetScripts, DrainLinesQuoteSafelyAndSkipUnsafeNames) {
  gf::FleetReport r;
  gf::FleetNode a;
  a.name = "n1";
  a.accept_failed = true;
  a.accept_failures = {"GPU 0: gemm bf16: \"$(rm -rf /)\" `x` \\ 50% low"};
  gf::FleetNode b = a;
  b.name = "n2;reboot";
  gf::FleetNode c;
  c.name = "n3";
  r.nodes = {a, b, c};
  const std::string sh = gf::render_drain_sh(r);
  EXPECT_NE(sh.find("scontrol update NodeName=n1 State=DRAIN Reason=\"gpucheck: accept FAIL: GPU 0: gemm bf16: ''(rm -rf /)' 'x' ' 50% low\"\n"),
            std::string::npos) << sh;
  EXPECT_EQ(sh.find("NodeName=n2"), std::string::npos);
  EXPECT_NE(sh.find("# not a Slurm node name, left out: n2;reboot"), std::string::npos);
  EXPECT_EQ(sh.find("n3"), std::string::npos);
  EXPECT_EQ(std::count(sh.begin(), sh.end(), '"'), 2);
  const std::string txt = gf::render_drain_txt(r);
  EXPECT_NE(txt.find("\nn1\taccept FAIL: "), std::string::npos);
  EXPECT_EQ(txt.find("\nn3\t"), std::string::npos);
  gf::FleetNode longer = a;
  longer.accept_failures = {std::string(500, 'x')};
  EXPECT_EQ(gf::slurm_reason(longer).size(), 200u);
}

TEST(FleetScripts, ResumeOnlyNodesGpucheckDrainedThatNowPass) {
  const std::string sinfo =
      "REASON               USER      TIMESTAMP           NODELIST\n"
      "gpucheck: outlier: n root      2026-12-03T06:00:00 n[1-2]\n"
      "bad fan              slurm     2026-12-03T05:00:00 n3\n"
      "gpucheck: accept FA  root      2026-12-03T06:00:00 n4\n";
  auto reasons = gf::parse_sinfo_reasons(sinfo, "sinfo.txt");
  ASSERT_TRUE(reasons.ok()) << reasons.error().str();
  EXPECT_EQ(reasons->size(), 4u);
  gf::FleetReport r;
  for (const char* n : {"n1", "n2", "n3", "n4"}) {
    gf::FleetNode x;
    x.name = n;
    r.nodes.push_back(x);
  }
  r.nodes[1].accept_failed = true;  // n2 still fails
  const std::string sh = gf::render_resume_sh(r, *reasons, "sinfo.txt");
  EXPECT_NE(sh.find("scontrol update NodeName=n1 State=RESUME\n"), std::string::npos);
  EXPECT_NE(sh.find("# n2 stays drained: still flagged"), std::string::npos);
  EXPECT_EQ(sh.find("NodeName=n3"), std::string::npos);  // not ours to resume
  EXPECT_NE(sh.find("scontrol update NodeName=n4 State=RESUME\n"), std::string::npos);
  EXPECT_FALSE(gf::parse_sinfo_reasons("justoneword\n", "s").ok());
  EXPECT_FALSE(gf::parse_sinfo_reasons("reason n[1-\n", "s").ok());
  EXPECT_TRUE(gf::parse_sinfo_reasons("", "s").ok());
}

// ---- pairs -----------------------------------------------------------------------------------

TEST(FleetPairs, FirstRoundPairsNeighboursAndTheOddOneWithTheFirst) {
  auto p = gf::first_round({"a", "b", "c", "d", "e"});
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].a + p[0].b + p[1].a + p[1].b + p[2].a + p[2].b, "abcdea");
  EXPECT_TRUE(gf::first_round({"a"}).empty());
  EXPECT_EQ(gf::first_round({"a", "b"}).size(), 1u);
}

TEST(FleetPairs, SecondRoundIsolatesTheBadNode) {
  const std::vector<std::string> nodes{"a", "b", "c", "d", "e", "f"};
  auto r1 = gf::parse_pair_results("a b pass\nc d fail  # slow\ne f pass\n", "r1");
  ASSERT_TRUE(r1.ok());
  auto iso = gf::isolate(nodes, *r1);
  ASSERT_TRUE(iso.ok());
  EXPECT_EQ(iso->good, (std::vector<std::string>{"a", "b", "e", "f"}));
  EXPECT_EQ(iso->suspects, (std::vector<std::string>{"c", "d"}));
  ASSERT_EQ(iso->next_round.size(), 2u);
  EXPECT_EQ(iso->next_round[0].a + iso->next_round[0].b + iso->next_round[1].a + iso->next_round[1].b, "cadb");
  // Round two: c beside a fails, d beside b passes: c is at fault.
  auto r2 = *r1;
  r2.push_back({{"c", "a"}, false});
  r2.push_back({{"d", "b"}, true});
  auto iso2 = gf::isolate(nodes, r2);
  ASSERT_TRUE(iso2.ok());
  EXPECT_EQ(iso2->bad, std::vector<std::string>{"c"});
  EXPECT_TRUE(iso2->suspects.empty());
  EXPECT_TRUE(iso2->next_round.empty());
}

TEST(FleetPairs, NoGoodNodeLeavesSuspectsAndBadResultsAreErrors) {
  auto iso = gf::isolate({"a", "b", "c"}, {{{"a", "b"}, false}});
  ASSERT_TRUE(iso.ok());
  EXPECT_EQ(iso->suspects, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(iso->untested, std::vector<std::string>{"c"});
  EXPECT_TRUE(iso->next_round.empty());
  EXPECT_FALSE(gf::isolate({"a", "b"}, {{{"a", "z"}, true}}).ok());
  EXPECT_FALSE(gf::isolate({"a", "b"}, {{{"a", "a"}, true}}).ok());
  EXPECT_FALSE(gf::parse_pair_results("a b maybe\n", "r").ok());
  EXPECT_FALSE(gf::parse_pair_results("a b\n", "r").ok());
  EXPECT_FALSE(gf::parse_pair_results("a b pass extra\n", "r").ok());
}

// ---- the command -----------------------------------------------------------------------------

namespace {
gpucheck::compare::testing::InProcessRun fleet_cli(std::vector<std::string> args, FakeFileSystem& fs) {
  return gpucheck::compare::testing::run_command("fleet", std::move(args), fs);
}
void add_baselines(FakeFileSystem& fs) {
  for (const char* f : {"specs.json", "accept.json", "fleet_gaps.json"}) fs.add(std::string("baselines/") + f, source(std::string("baselines/") + f));
}
}  // namespace

TEST(FleetCli, WritesEveryOutputAndExitsOneOnAnOutlier) {
  FakeFileSystem fs;
  add_baselines(fs);
  std::mt19937 rng(5);
  for (int n = 1; n <= 8; ++n) {
    for (int g = 0; g < 2; ++g) {
      json doc = made_gpu(node_name(n), g, rng);
      if (n == 6 && g == 1) scale(doc, "memory/copy_kernel/", 0.95);
      fs.add("runs/" + node_name(n) + "/gpu" + std::to_string(g) + "/runs/bench_all.json", doc.dump());
    }
    fs.add("runs/" + node_name(n) + "/accept.json", kAcceptPass);
  }
  fs.add("sinfo.txt", "REASON USER TIMESTAMP NODELIST\ngpucheck: old root 2026-12-01T00:00:00 n[001-002]\n");
  auto r = fleet_cli({"runs", "--out", "out", "--expect", "n[001-008]", "--reasons", "sinfo.txt"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Regression) << r.io.err;
  EXPECT_TRUE(r.io.err.empty()) << r.io.err;
  for (const char* f : {"fleet.json", "fleet.md", "fleet.html", "drain.txt", "drain.sh", "resume.sh"})
    EXPECT_TRUE(fs.files.count(std::string("out/") + f)) << f;
  const json j = json::parse(fs.files["out/fleet.json"]);
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["flagged"], 1);
  EXPECT_EQ(j["nodes"][0]["node"], "n006");
  EXPECT_EQ(j["nodes"][0]["gpus"][1]["figures"]["memory/copy_kernel"]["outlier"], true);
  EXPECT_EQ(fs.files["out/drain.txt"].find("\nn006\t") != std::string::npos, true);
  EXPECT_NE(fs.files["out/drain.sh"].find("scontrol update NodeName=n006 State=DRAIN Reason=\"gpucheck: outlier: n006 GPU 1"),
            std::string::npos);
  EXPECT_NE(fs.files["out/resume.sh"].find("NodeName=n001 State=RESUME"), std::string::npos);
  EXPECT_NE(fs.files["out/resume.sh"].find("NodeName=n002 State=RESUME"), std::string::npos);
  const std::string& html = fs.files["out/fleet.html"];
  EXPECT_NE(html.find("<details><summary>7 nodes pass (folded)</summary>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);  // self-contained
}

// --out inside a PARENT of node folders: as a folder of its own right inside it (read again, a
// subfolder holding fleet.json is skipped: `fleet PARENT --out PARENT/fleet` runs twice alike),
// never PARENT itself (its fleet.json would make it a node folder), a node folder, or a folder
// deeper inside (made by the command: read again, it would be a node). On the real disk, where
// the output check resolves folders.
TEST(FleetCli, OutInsideAParentOnlyAsAFolderOfItsOwn) {
  FakeFileSystem made;
  add_baselines(made);
  std::mt19937 rng(5);
  for (int n = 1; n <= 3; ++n) add_node(made, "runs/" + node_name(n), node_name(n), 2, rng);
  const gpucheck::testutil::TempDir d("gpucheck-fleet-out");
  for (const auto& [path, text] : made.files) {
    std::filesystem::create_directories(std::filesystem::path(d / path).parent_path());
    gpucheck::testutil::write_file(d / path, text);
  }
  gc::RealFileSystem real;
  auto fleet = [&](const std::string& out) {
    gc::CliOutput io;
    const auto status = gc::run_cli({"gpucheck", "fleet", d / "runs", "--out", out, "--specs", d / "baselines/specs.json",
                                     "--gaps", d / "baselines/fleet_gaps.json", "--config", d / "baselines/accept.json"},
                                    real, {}, io);
    return std::pair(status, io);
  };
  const auto first = fleet(d / "runs/fleet");
  ASSERT_NE(first.first, gc::ExitStatus::BadInput) << first.second.err;
  const json j1 = json::parse(gpucheck::testutil::slurp(d / "runs/fleet/fleet.json"));
  const auto again = fleet(d / "runs/fleet");
  EXPECT_EQ(again.first, first.first) << again.second.err;
  EXPECT_EQ(json::parse(gpucheck::testutil::slurp(d / "runs/fleet/fleet.json"))["nodes"].size(), j1["nodes"].size());
  for (const std::string& out : {d / "runs", d / "runs/n001", d / "runs/new/deeper"}) {
    const auto r = fleet(out);
    EXPECT_EQ(r.first, gc::ExitStatus::BadInput) << out;
    EXPECT_EQ(std::count(r.second.err.begin(), r.second.err.end(), '\n'), 1) << r.second.err;
    EXPECT_FALSE(std::filesystem::exists(out + "/fleet.json")) << out;
  }
  EXPECT_FALSE(std::filesystem::exists(d / "runs/new"));
}

TEST(FleetCli, BadInputIsOneLineExitTwo) {
  FakeFileSystem fs;
  add_baselines(fs);
  std::mt19937 rng(5);
  add_node(fs, "runs/n1", "n1", 1, rng);
  fs.add("badgaps.json", "{\"k\": 4}");
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const Case cases[] = {
      {{}, "gpucheck: fleet: needs node folders, or one folder of node folders\n"},
      {{"nowhere"}, "gpucheck: nowhere: no such folder\n"},
      {{"runs", "--expect", "n[1-"}, "gpucheck: --expect: unclosed '[' in \"n[1-\"\n"},
      {{"runs", "--gaps", "badgaps.json"}, "gpucheck: badgaps.json: figures: missing\n"},
      {{"runs", "--gaps", "none.json"}, "gpucheck: none.json: cannot open: No such file or directory\n"},
      {{"runs", "--bogus"}, ""},
      {{"pairs", "a"}, "gpucheck: fleet pairs: needs at least two nodes\n"},
      {{"pairs", "a", "a"}, "gpucheck: fleet pairs: node \"a\" given twice\n"},
  };
  for (const Case& c : cases) {
    auto r = fleet_cli(c.args, fs);
    EXPECT_EQ(r.status, gc::ExitStatus::BadInput) << (c.args.empty() ? "" : c.args[0]);
    EXPECT_EQ(std::count(r.io.err.begin(), r.io.err.end(), '\n'), 1) << r.io.err;
    if (!c.err.empty()) {
      EXPECT_EQ(r.io.err, c.err);
    }
  }
}

TEST(FleetCli, PairsPrintsRoundsAndTheNodeAtFault) {
  FakeFileSystem fs;
  auto r = fleet_cli({"pairs", "n[1-4]"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Ok);
  EXPECT_NE(r.io.out.find("\nn1 n2\nn3 n4\n"), std::string::npos) << r.io.out;
  fs.add("r.txt", "n1 n2 pass\nn3 n4 fail\nn3 n1 fail\nn4 n2 pass\n");
  r = fleet_cli({"pairs", "--results", "r.txt", "n[1-4]"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Regression);
  EXPECT_NE(r.io.out.find("# at fault: n3\n"), std::string::npos) << r.io.out;
}

TEST(FleetCli, RecheckClearsANodeWhoseSecondRunPasses) {
  FakeFileSystem fs;
  add_baselines(fs);
  std::mt19937 rng(9);
  for (int n = 1; n <= 6; ++n) {
    for (int g = 0; g < 2; ++g) {
      json doc = made_gpu(node_name(n), g, rng);
      if ((n == 2 || n == 4) && g == 0) scale(doc, "pcie/d2h/", 0.9);
      fs.add("runs/" + node_name(n) + "/gpu" + std::to_string(g) + "/runs/bench_all.json", doc.dump());
      if (n == 2 || n == 4) {  // the recheck: n002 healthy now, n004 slow again
        json again = made_gpu(node_name(n), g, rng);
        if (n == 4 && g == 0) scale(again, "pcie/d2h/", 0.9);
        fs.add("runs/recheck/" + node_name(n) + "/gpu" + std::to_string(g) + "/runs/bench_all.json", again.dump());
      }
    }
    fs.add("runs/" + node_name(n) + "/accept.json", kAcceptPass);
  }
  fs.add("runs/recheck/n002/accept.json", kAcceptPass);
  fs.add("runs/recheck/n004/accept.json", kAcceptPass);
  auto first = fleet_cli({"runs", "--out", "one"}, fs);
  EXPECT_EQ(first.status, gc::ExitStatus::Regression) << first.io.err;
  EXPECT_EQ(json::parse(fs.files["one/fleet.json"])["flagged"], 2);  // recheck/ is not a node
  auto r = fleet_cli({"runs", "--out", "two", "--recheck", "runs/recheck"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Regression) << r.io.err;
  const json j = json::parse(fs.files["two/fleet.json"]);
  EXPECT_EQ(j["flagged"], 1);
  EXPECT_EQ(j["nodes"][0]["node"], "n004");
  EXPECT_EQ(j["nodes"][0]["rechecked"], true);
  EXPECT_EQ(j["recheck"], "runs/recheck");
  const std::string& sh = fs.files["two/drain.sh"];
  EXPECT_NE(sh.find("NodeName=n004 State=DRAIN"), std::string::npos);
  EXPECT_EQ(sh.find("NodeName=n002"), std::string::npos);
  // A recheck folder that is no folder: one line, exit 2, nothing written.
  auto bad = fleet_cli({"runs", "--out", "three", "--recheck", "nowhere"}, fs);
  EXPECT_EQ(bad.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(bad.io.err, "gpucheck: nowhere: no such folder\n");
  EXPECT_FALSE(fs.files.count("three/fleet.json"));
}

TEST(FleetPeers, NonFiniteErroredAndMissingFiguresAreLeftOutNotJudged) {
  auto nodes = made_fleet(8, 1, [](int n, int, json& doc) {
    for (auto& e : doc["benchmarks"]) {
      const std::string name = e["name"];
      if (n == 3 && name.starts_with("matmul/cublaslt/fp16/")) e["error_occurred"] = true, e["error_message"] = "cuBLAS failed";
      if (n == 4 && name.starts_with("pcie/h2d/")) e["GBps"] = 0.0;
    }
    if (n == 5) {  // the d2h case lost entirely
      auto& b = doc["benchmarks"];
      b.erase(std::remove_if(b.begin(), b.end(), [](const json& e) { return e["name"].get<std::string>().starts_with("pcie/d2h/"); }),
              b.end());
    }
  });
  // Google Benchmark writes a bare NaN; the reader takes it, the figure is left out.
  std::mt19937 rng(4);
  json nan_doc = made_gpu("n002", 0, rng);
  for (auto& e : nan_doc["benchmarks"])
    if (e["name"].get<std::string>().starts_with("matmul/cublaslt/bf16/")) e["TFLOPS"] = 12345.678;
  std::string text = nan_doc.dump();
  text.replace(text.find("12345.678"), 9, "NaN");
  auto nan_file = gc::parse_results(text, "n002/gpu0.json");
  ASSERT_TRUE(nan_file.ok()) << nan_file.error().str();
  nodes[1].files[0] = std::move(*nan_file);
  const auto r = judged(std::move(nodes));
  auto keys = [&](const char* n) {
    std::vector<std::string> k;
    for (const auto& f : node(r, n)->gpus[0].figures) k.push_back(f.key);
    return k;
  };
  auto has = [&](const char* n, const char* key) {
    const auto k = keys(n);
    return std::find(k.begin(), k.end(), key) != k.end();
  };
  EXPECT_FALSE(has("n002", "gemm/bf16"));
  EXPECT_FALSE(has("n003", "gemm/fp16"));
  EXPECT_FALSE(has("n004", "pcie/h2d"));
  EXPECT_FALSE(has("n005", "pcie/d2h"));
  EXPECT_TRUE(has("n001", "gemm/bf16"));
  EXPECT_TRUE(outliers(r).empty());
  // accept's own judge still sees what is missing or errored: those nodes fail as accept says.
  EXPECT_TRUE(node(r, "n003")->accept_failed);
  EXPECT_FALSE(node(r, "n001")->flagged());
}

TEST(FleetLoad, FilesTheJudgeRefusesMakeTheNodeHalfWritten) {
  std::mt19937 rng(2);
  json a = made_gpu("n1", 0, rng), b = made_gpu("n1", 1, rng);
  b["context"]["gpu_uuid"] = a["context"]["gpu_uuid"];  // one GPU's case twice
  std::vector<gf::NodeInput> nodes = healthy_fleet(4, 1);
  nodes.push_back({"n1", {parsed(a, "n1/a.json"), parsed(b, "n1/b.json")}, std::nullopt});
  const auto r = judged(std::move(nodes));
  ASSERT_NE(node(r, "n1"), nullptr);
  ASSERT_TRUE(node(r, "n1")->problem.has_value());
  EXPECT_EQ(node(r, "n1")->problem->rfind("half-written: n1/b.json: benchmark ", 0), 0u) << *node(r, "n1")->problem;
  EXPECT_TRUE(r.failed());
}

TEST(FleetCli, ExpectTakesAFileOfHostListsAndAllowMissingPasses) {
  FakeFileSystem fs;
  add_baselines(fs);
  std::mt19937 rng(11);
  for (int n = 1; n <= 4; ++n) add_node(fs, "runs/" + node_name(n), node_name(n), 2, rng);
  fs.add("nodes.txt", "# rack 1\nn[001-004]\nn005 n006  # two more\n");
  auto r = fleet_cli({"runs", "--expect", "nodes.txt", "--out", "out"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Regression) << r.io.err;
  const json j = json::parse(fs.files["out/fleet.json"]);
  EXPECT_EQ(j["not_judged"], 2);
  EXPECT_EQ(j["flagged"], 0);
  EXPECT_NE(fs.files["out/drain.txt"].find("# n005\tnot judged: missing"), std::string::npos);
  EXPECT_EQ(fs.files["out/drain.sh"].find("NodeName=n005"), std::string::npos);  // missing: named, not drained
  r = fleet_cli({"runs", "--expect", "nodes.txt", "--allow-missing"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Ok) << r.io.err;
  fs.add("empty.txt", "# nothing\n");
  r = fleet_cli({"runs", "--expect", "empty.txt"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(r.io.err, "gpucheck: empty.txt: names no node\n");
}

// The acceptance folders of real H200 machines (tests/unit/compare/fixtures/fleet/h200, each
// `gpucheck accept --out` on a fresh lease): a healthy fleet, no outlier with the spread it has.
TEST(FleetCli, RealH200MachinesHaveNoOutlier) {
  FakeFileSystem fs;
  add_baselines(fs);
  const std::filesystem::path root = gpucheck::testutil::fixture("fleet/h200");
  int nodes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    fs.add("runs/" + std::filesystem::relative(e.path(), root).string(), gpucheck::testutil::slurp(e.path().string()));
    nodes += e.path().filename() == "accept.json";
  }
  ASSERT_GE(nodes, 2);
  auto r = fleet_cli({"runs", "--out", "out"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Ok) << r.io.out << r.io.err;
  const json j = json::parse(fs.files["out/fleet.json"]);
  EXPECT_EQ(j["verdict"], "PASS");
  EXPECT_EQ(j["flagged"], 0);
  EXPECT_EQ(j["nodes"].size(), static_cast<std::size_t>(nodes));
  EXPECT_EQ(fs.files["out/drain.txt"].find("\nh200"), std::string::npos);
}

// ---- hostile input ---------------------------------------------------------------------------

namespace {
// The real H200 nodes' folders (fixtures/fleet/h200) under `under`: how many nodes.
int add_h200_fleet(FakeFileSystem& fs, const std::string& under) {
  const std::filesystem::path root = gpucheck::testutil::fixture("fleet/h200");
  int nodes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
    fs.add(under + "/" + std::filesystem::relative(e.path(), root).string(), gpucheck::testutil::slurp(e.path().string()));
    nodes += e.path().filename() == "accept.json";
  }
  return nodes;
}
std::string node_verdict(const json& fleet, const std::string& name) {
  for (const auto& n : fleet["nodes"])
    if (n["node"] == name) return n["verdict"];
  return "absent";
}
}  // namespace

// A bound of ULONG_MAX wrapped the loop and ate memory; many ranges in one bracket were expanded
// before the cap was checked. Every count comes first now: refused at once, nothing appended.
TEST(FleetHostlist, BoundsOverflowAndTheCapAreRefusedBeforeExpanding) {
  for (const char* bad : {"n[18446744073709551615]", "n[18446744073709551616]", "n[0-18446744073709551615]",
                          "n[1000000000000000000]", "n[0-999999],x", "n[0-999999]-r[0-1]", "a[1]b[1]c[1]d[1]e[1]f[1]g[1]h[1]i[1]"})
    EXPECT_FALSE(gf::expand_hostlist(bad).ok()) << bad;
  std::string many = "n[";
  for (int i = 0; i < 120; ++i) many += "0-999999,";
  many += "0]";
  EXPECT_FALSE(gf::expand_hostlist(many).ok());
  auto top = gf::expand_hostlist("n[999999999999999998-999999999999999999]");  // 18 digits: fine
  ASSERT_TRUE(top.ok()) << top.error().str();
  EXPECT_EQ(*top, (std::vector<std::string>{"n999999999999999998", "n999999999999999999"}));
  auto million = gf::expand_hostlist("n[0-999999]");
  ASSERT_TRUE(million.ok());
  EXPECT_EQ(million->size(), 1'000'000u);
  EXPECT_EQ(million->back(), "n999999");
  // One cap over several lists: what `out` holds counts.
  std::vector<std::string> out = {"a", "b"};
  EXPECT_FALSE(gf::append_hostlist("n[0-999998]", out).ok());
  EXPECT_EQ(out.size(), 2u);  // nothing appended on an error
  EXPECT_TRUE(gf::append_hostlist("n[0-999997]", out).ok());
  EXPECT_EQ(out.size(), 1'000'000u);
}

// --expect of 100,000 nodes took minutes (each name searched in a growing list); a file of 30
// lines of a million names each had no cap over the file. Both --expect and --reasons files now
// hold one cap; the 100,000 are named missing.
TEST(FleetCli, ExpectOfAHundredThousandAndOneCapPerFile) {
  gf::FleetOptions opt;
  opt.expect = *gf::expand_hostlist("n[0-99999]");
  const auto r = judged(healthy_fleet(4, 1), opt);
  EXPECT_EQ(r.count_unjudged(), 100000);
  EXPECT_TRUE(r.failed());

  FakeFileSystem fs;
  add_baselines(fs);
  std::mt19937 rng(3);
  for (int n = 1; n <= 4; ++n) add_node(fs, "runs/" + node_name(n), node_name(n), 1, rng);
  std::string expect, reasons = "REASON USER TIMESTAMP NODELIST\n";
  for (int i = 1; i <= 30; ++i) {
    expect.append("x").append(std::to_string(i)).append("[0-999999]\n");  // (g++ 12: no "x" + string)
    reasons += "gpucheck: x root 2026-01-01T00:00:00 n[0-999999]\n";
  }
  fs.add("expect.txt", expect);
  fs.add("reasons.txt", reasons);
  auto e = fleet_cli({"runs", "--expect", "expect.txt"}, fs);
  EXPECT_EQ(e.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(e.io.err.rfind("gpucheck: expect.txt: over a million names", 0), 0u) << e.io.err;
  auto s = fleet_cli({"runs", "--reasons", "reasons.txt", "--out", "out"}, fs);
  EXPECT_EQ(s.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(s.io.err.rfind("gpucheck: reasons.txt: line 3: over a million names", 0), 0u) << s.io.err;
  EXPECT_EQ(std::count(s.io.err.begin(), s.io.err.end(), '\n'), 1);
}

// --expect names a file when something is there: a FIFO or a folder is refused as any input is,
// and a missing name that looks like a file is "no such file", not a node called nodes.txt.
TEST(FleetCli, ExpectThatIsNoRegularFileIsRefused) {
  FakeFileSystem fs;
  add_baselines(fs);
  std::mt19937 rng(3);
  for (int n = 1; n <= 4; ++n) add_node(fs, "runs/" + node_name(n), node_name(n), 1, rng);
  fs.fifos.insert("ff");
  fs.dirs.insert("ed");
  const std::pair<const char*, const char*> cases[] = {
      {"ff", "gpucheck: ff: is a FIFO"}, {"ed", "gpucheck: ed: is a folder"}, {"nodes.txt", "gpucheck: nodes.txt: no such file"},
      {"lists/nodes", "gpucheck: lists/nodes: no such file"}};
  for (const auto& [v, want] : cases)
    for (bool allow : {false, true}) {
      std::vector<std::string> args{"runs", "--expect", v};
      if (allow) args.emplace_back("--allow-missing");
      auto r = fleet_cli(args, fs);
      EXPECT_EQ(r.status, gc::ExitStatus::BadInput) << v;
      EXPECT_EQ(r.io.err.rfind(want, 0), 0u) << r.io.err;
      EXPECT_TRUE(r.io.out.empty()) << r.io.out;
    }
  // A file of host lists that is also an output is an input like the rest.
  fs.add("out/drain.txt", "n001\n");
  auto r = fleet_cli({"runs", "--expect", "out/drain.txt", "--out", "out"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(fs.files.at("out/drain.txt"), "n001\n");
}

// A node folder whose name holds a line break wrote a second drain.txt line for a healthy node.
TEST(FleetScripts, ANodeNameWithALineBreakStaysOneDrainLine) {
  FakeFileSystem fs;
  add_baselines(fs);
  ASSERT_EQ(add_h200_fleet(fs, "fx"), 5);
  fs.dirs.insert("fx/x\nh200-b");  // an empty node folder
  auto r = fleet_cli({"fx", "--allow-missing", "--out", "out"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Ok) << r.io.err;
  const std::string& txt = fs.files.at("out/drain.txt");
  std::vector<std::string> lines;
  for (std::size_t at = 0, nl; (nl = txt.find('\n', at)) != std::string::npos; at = nl + 1) lines.push_back(txt.substr(at, nl - at));
  ASSERT_EQ(lines.size(), 3u) << txt;  // two comment lines of the summary, one for the empty folder
  EXPECT_EQ(lines[2].rfind("# x h200-b\tnot judged: empty", 0), 0u) << lines[2];
  for (const auto& l : lines) EXPECT_EQ(l.rfind("h200-b", 0), std::string::npos) << l;
}

// A pair that failed between two nodes that passed elsewhere vanished (exit 0, nothing said); a
// pair given as both pass and fail was taken. The first is named and fails; the second is bad input.
TEST(FleetPairs, AFailedPairOfGoodNodesIsNamedAndTwoVerdictsAreBadInput) {
  auto iso = gf::isolate({"a", "b", "c"}, {{{"a", "b"}, false}, {{"a", "c"}, true}, {{"b", "c"}, true}});
  ASSERT_TRUE(iso.ok());
  ASSERT_EQ(iso->unexplained.size(), 1u);
  EXPECT_EQ(iso->unexplained[0].a + " " + iso->unexplained[0].b, "a b");
  EXPECT_TRUE(iso->bad.empty());
  EXPECT_FALSE(gf::isolate({"a", "b"}, {{{"a", "b"}, true}, {{"b", "a"}, false}}).ok());
  EXPECT_TRUE(gf::isolate({"a", "b"}, {{{"a", "b"}, true}, {{"b", "a"}, true}}).ok());  // the same verdict twice

  FakeFileSystem fs;
  fs.add("r1.txt", "a b fail\na c pass\nb c pass\n");
  fs.add("r2.txt", "a b pass\na b fail\n");
  auto r = fleet_cli({"pairs", "--results", "r1.txt", "a", "b", "c"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::Regression);
  EXPECT_NE(r.io.out.find(": a b\n"), std::string::npos) << r.io.out;
  r = fleet_cli({"pairs", "--results", "r2.txt", "a", "b"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(r.io.err.rfind("gpucheck: r2.txt: ", 0), 0u) << r.io.err;
  EXPECT_EQ(std::count(r.io.err.begin(), r.io.err.end(), '\n'), 1);
}

// One node's folder copied under five names passed as five nodes, each its own peer.
TEST(FleetCli, OneGpuInTwoNodeFoldersIsBadInput) {
  FakeFileSystem fs;
  add_baselines(fs);
  FakeFileSystem fixture;
  add_h200_fleet(fixture, "fx");
  for (const char* n : {"node01", "node02", "node03", "node04", "node05"})
    for (const auto& [path, text] : fixture.files)
      if (path.starts_with("fx/h200-a/")) fs.add("fleet/" + std::string(n) + path.substr(std::string("fx/h200-a").size()), text);
  auto r = fleet_cli({"fleet", "--expect", "node[01-05]", "--out", "out"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput) << r.io.out;
  EXPECT_EQ(std::count(r.io.err.begin(), r.io.err.end(), '\n'), 1);
  EXPECT_NE(r.io.err.find("GPU-0fcf2a99-efa2-4c32-6639-1d06b75ec750"), std::string::npos) << r.io.err;
  EXPECT_NE(r.io.err.find("fleet/node01"), std::string::npos) << r.io.err;
  EXPECT_NE(r.io.err.find("fleet/node02"), std::string::npos) << r.io.err;
  EXPECT_FALSE(fs.files.count("out/fleet.json"));
}

// fleet re-judged a node from its results files only: a node whose bench_matmul crashed (accept
// removed its JSON and recorded "did not run", FAIL) or that lost a results file passed without
// GEMM. Now the node's accept.json and the cases accept reads hold it: flagged, exit 1, and
// --allow-missing (about node folders) does not excuse it.
TEST(FleetCli, ANodeWhoseBinaryCrashedOrLostAResultsFileFails) {
  FakeFileSystem fs;
  add_baselines(fs);
  ASSERT_EQ(add_h200_fleet(fs, "fx"), 5);
  fs.files.erase("fx/h200-a/gpu0/runs/bench_matmul.json");
  json acc = json::parse(fs.files.at("fx/h200-a/accept.json"));
  acc["verdict"] = "fail";
  acc["checks"].push_back({{"gpu", "GPU 0"}, {"check", "run"}, {"item", "bench_matmul"}, {"verdict", "fail"}, {"value", nullptr},
                           {"limit", nullptr}, {"unit", ""}, {"measured", "did not run"}, {"floor", ""},
                           {"note", "killed by signal 11"}, {"benchmark", ""}});
  fs.add("fx/h200-a/accept.json", acc.dump());
  fs.files.erase("fx/h200-b/gpu0/runs/bench_memory.json");  // lost, its accept.json untouched
  for (bool allow : {false, true}) {
    std::vector<std::string> args{"fx", "--out", "out"};
    if (allow) args.emplace_back("--allow-missing");
    auto r = fleet_cli(args, fs);
    EXPECT_EQ(r.status, gc::ExitStatus::Regression) << r.io.err;
    const json j = json::parse(fs.files.at("out/fleet.json"));
    EXPECT_EQ(j["verdict"], "FAIL");
    EXPECT_EQ(j["flagged"], 2);
    EXPECT_EQ(node_verdict(j, "h200-a"), "FAIL");
    EXPECT_EQ(node_verdict(j, "h200-b"), "FAIL");
    EXPECT_EQ(node_verdict(j, "h200-c"), "pass");
    const std::string& drain = fs.files.at("out/drain.txt");
    EXPECT_NE(drain.find("\nh200-a\t"), std::string::npos) << drain;
    EXPECT_NE(drain.find("\nh200-b\t"), std::string::npos) << drain;
  }
  // An accept.json that does not read as accept's verdict: the node is half-written, not judged.
  for (const char* broken : {R"({"gpucheck_accept": 4294967297, "verdict": "pass", "gpus": [], "checks": []})",
                             R"({"gpucheck_accept": 1, "verdict": "maybe", "gpus": [], "checks": []})", "{}"}) {
    fs.add("fx/h200-c/accept.json", broken);
    auto r = fleet_cli({"fx", "--out", "out"}, fs);
    EXPECT_EQ(r.status, gc::ExitStatus::Regression) << r.io.err;
    EXPECT_EQ(node_verdict(json::parse(fs.files.at("out/fleet.json")), "h200-c"), "not judged") << broken;
  }
}

// A GEMM rate of NaN, Infinity or 1e308 passed the node; now accept's judge fails it.
TEST(FleetCli, ANonFiniteOrImpossibleRateFailsTheNode) {
  for (const char* v : {"NaN", "Infinity", "1e308"}) {
    FakeFileSystem fs;
    add_baselines(fs);
    add_h200_fleet(fs, "fx");
    std::string& text = fs.files.at("fx/h200-a/gpu0/runs/bench_matmul.json");
    std::size_t at = 0;
    int replaced = 0;
    while ((at = text.find("\"TFLOPS\": ", at)) != std::string::npos) {
      at += 10;
      const std::size_t end = text.find_first_of(",\n}", at);
      text.replace(at, end - at, v);
      ++replaced;
    }
    ASSERT_GT(replaced, 0);
    auto r = fleet_cli({"fx", "--out", "out"}, fs);
    EXPECT_EQ(r.status, gc::ExitStatus::Regression) << v << r.io.err;
    const json j = json::parse(fs.files.at("out/fleet.json"));
    EXPECT_EQ(node_verdict(j, "h200-a"), "FAIL") << v;
    EXPECT_EQ(j["flagged"], 1) << v;
  }
}

// A misspelt SKU id in --config dropped that SKU's rules: an ECC-disabled GPU passed.
TEST(FleetCli, AConfigSkuIdNotInSpecsIsBadInput) {
  FakeFileSystem fs;
  add_baselines(fs);
  add_h200_fleet(fs, "fx");
  std::string typo = source("baselines/accept.json");
  typo.replace(typo.find("\"nvidia-h200\": {"), 16, "\"nvidia-h20O\": {");
  fs.add("typo.json", typo);
  auto r = fleet_cli({"fx", "--config", "typo.json", "--out", "out"}, fs);
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(r.io.err.rfind("gpucheck: typo.json: skus.nvidia-h20O: unknown SKU id", 0), 0u) << r.io.err;
  EXPECT_FALSE(fs.files.count("out/fleet.json"));
}

TEST(FleetGaps, SchemaIsExactlyOne) {
  std::string text = source("baselines/fleet_gaps.json");
  const std::string one = "\"schema\": 1,";
  ASSERT_NE(text.find(one), std::string::npos);
  for (const char* v : {"4294967297", "1.0", "-1", "\"1\""}) {
    std::string t = text;
    t.replace(t.find(one), one.size(), std::string("\"schema\": ") + v + ",");
    auto g = gf::parse_fleet_gaps(t, "g.json");
    ASSERT_FALSE(g.ok()) << v;
    EXPECT_EQ(g.error().str().rfind("g.json: schema: expected 1", 0), 0u) << g.error().str();
  }
}
