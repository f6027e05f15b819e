// gpucheck fleet at scale: 1,000 nodes x 8 GPUs (8,000 acceptance files, each the recorded H200
// accept run renamed and its figures spread by up to +-0.5%), judged in memory (`judge`: accept's
// judge per node, the peers of 8,000 GPUs per figure) and as a user runs it (`cli`: read every
// folder, judge, write the six outputs). Read a figure as CPU time per call; the issue's bound is
// 5 s wall and 500 MB for the whole command (docs/PERFORMANCE.md).
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <system_error>

#include "base/filesystem.hpp"
#include "cli/cli.hpp"
#include "fleet/fleet.hpp"
#include "fleet/gaps.hpp"
#include "fleet/load.hpp"
#include "gpucheck/core/specs.hpp"
#include "tool_cases.hpp"

namespace gpucheck::compare::bench {
namespace {

using json = nlohmann::ordered_json;

constexpr int kNodes = 1000, kGpus = 8;

// The folder of node folders, written once, removed at exit.
struct Fleet {
  std::string dir, why;
  Fleet() {
    RealFileSystem fs;
    auto text = fs.read(GPUCHECK_ACCEPT_FIXTURE, std::size_t{1} << 20);
    if (!text) {
      why = text.error().str();
      return;
    }
    const json base = json::parse(*text);
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpucheck-fleet-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      why = "cannot make a temporary folder";
      return;
    }
    dir = tmpl;
    std::mt19937 rng(38);
    std::uniform_real_distribution<double> spread(-0.005, 0.005);
    for (int n = 0; n < kNodes; ++n) {
      const std::string node = "node" + std::to_string(1000 + n);
      for (int g = 0; g < kGpus; ++g) {
        json doc = base;
        doc["context"]["host_name"] = node;
        doc["context"]["gpucheck_device_index"] = std::to_string(g);
        doc["context"]["gpu_uuid"] = "GPU-" + node + "-" + std::to_string(g);
        doc["context"]["gpu_pci_bus_id"] = "0000:" + std::to_string(18 + 10 * g) + ":00.0";
        for (auto& e : doc["benchmarks"])
          for (const char* k : {"GBps", "TFLOPS"})
            if (e.contains(k)) e[k] = e[k].get<double>() * (1 + spread(rng));
        const std::string gpu_dir = dir + "/" + node + "/gpu" + std::to_string(g) + "/runs";
        std::error_code ec;
        std::filesystem::create_directories(gpu_dir, ec);
        std::ofstream f(gpu_dir + "/bench_all.json", std::ios::binary);  // no fsync: inputs, not outputs
        if (ec || !(f << doc.dump()) || !f.flush()) {
          why = "cannot write " + gpu_dir;
          return;
        }
      }
      std::ofstream a(dir + "/" + node + "/accept.json", std::ios::binary);
      if (!(a << R"({"gpucheck_accept": 1, "verdict": "pass", "gpus": [], "checks": []})" "\n") || !a.flush()) {
        why = "cannot write " + node + "/accept.json";
        return;
      }
    }
  }
  ~Fleet() {
    std::error_code ec;
    if (!dir.empty()) {
      std::filesystem::remove_all(dir, ec);
      std::filesystem::remove_all(dir + "-verdict", ec);
    }
  }
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;
};

const Fleet& fleet() {
  static const Fleet f;
  return f;
}

void judge(benchmark::State& state) {
  if (!fleet().why.empty()) state.SkipWithError(fleet().why.c_str());
  RealFileSystem fs;
  auto nodes = fleet::load_nodes(fs, {fleet().dir});
  if (!nodes) state.SkipWithError(nodes.error().str().c_str());
  const SpecDb specs;
  const AcceptConfig config;
  fleet::FleetGaps gaps;
  for (const auto& k : fleet::figure_keys()) gaps.figures[k] = {0.02, 0.01, "bench"};
  time_each(state, [&] {
    auto r = fleet::judge_fleet(*nodes, specs, config, gaps, {});
    if (!r) state.SkipWithError(r.error().str().c_str());
    benchmark::DoNotOptimize(r);
    return r.ok();
  });
}

void cli(benchmark::State& state) {
  if (!fleet().why.empty()) state.SkipWithError(fleet().why.c_str());
  RealFileSystem fs;
  // Beside the fleet, not in it: a verdict under the nodes' folder is an input the next run
  // refuses to overwrite (and a node folder it would read).
  const std::string out = fleet().dir + "-verdict";
  time_each(state, [&] {
    CliOutput io;
    const ExitStatus status = run_cli({"gpucheck", "fleet", fleet().dir, "--out", out}, fs, {}, io);
    if (status == ExitStatus::Ok) return true;
    state.SkipWithError(("gpucheck fleet exited " + std::to_string(static_cast<int>(status)) + ": " + io.err).c_str());
    return false;
  });
}

[[maybe_unused]] const bool registered = register_tool_cases({
    {"tool/fleet/judge/1000x8", judge},
    {"tool/fleet/cli/1000x8", cli},
});

}  // namespace
}  // namespace gpucheck::compare::bench
