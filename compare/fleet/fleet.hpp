// The fleet judge (`gpucheck fleet`): many nodes' acceptance folders, each node judged by
// accept's own judge, and every GPU held against its peers of the same model, figure by figure
// (median and MAD of the peers, the judged GPU left out). Pure: node folders come in already
// read (load.hpp reads them), the verdict goes out as values; render.hpp writes the files.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "accept/config.hpp"
#include "accept/judge.hpp"
#include "base/expected.hpp"
#include "fleet/gaps.hpp"
#include "results/results.hpp"

namespace gpucheck {
class SpecDb;
}

namespace gpucheck::compare::fleet {

// What the node's own accept.json recorded when accept ran there: what the results files alone
// cannot show (a binary that crashed, its JSON removed and a "run ... did not run" FAIL written).
struct RecordedAccept {
  std::vector<AcceptCheck> failures;    // its failed checks (gpu, check, item, note)
  std::vector<std::string> benchmarks;  // the cases its checks read
  std::vector<std::string> gpu_uuids;   // its GPUs' UUIDs, where known
};

// What a node folder held, as load.hpp found it. `problem` set: the node is named as missing,
// empty, half-written or of another suite, and not judged.
struct NodeInput {
  std::string name;                    // the folder's name: the node
  std::vector<Results> files;
  std::optional<std::string> problem;  // "missing", "empty: ...", "half-written: ...", "other suite: ..."
  std::optional<RecordedAccept> recorded = std::nullopt;  // its accept.json (none: made in memory)
  std::string dir = {};                // the folder as found (errors name it; "" in memory)
};

// One figure of one GPU (or of one node, for NCCL) against its peers.
struct Figure {
  std::string key;            // fleet_gaps.json's key: "gemm/bf16", "memory/copy_kernel", "pcie/h2d", "burn", "nccl"
  double value = 0;
  std::optional<double> peer_median, peer_mad;  // none: too few peers
  int peers = 0;
  double deviation = 0;       // value / peer median - 1 (0 without peers)
  double robust_z = 0;        // (value - median) / (1.4826 MAD); -inf..: how many robust deviations
  bool outlier = false;
};

struct FleetGpu {
  std::string node, host, index, uuid, pci_bus_id, serial, model;  // "unknown" where not recorded
  std::vector<Figure> figures;
  [[nodiscard]] bool outlier() const;
};

struct FleetNode {
  std::string name, host;              // folder name; host_name recorded inside ("unknown")
  std::optional<std::string> problem;  // not judged: missing, empty, half-written, other suite
  bool accept_failed = false;          // accept's own judge failed a check
  std::vector<std::string> accept_failures;  // its failed checks, one line each
  std::vector<FleetGpu> gpus;
  std::vector<Figure> node_figures;    // NCCL over the node
  std::map<std::string, std::string> versions;  // driver, cuda, cublas, cudnn, nccl, commit
  std::vector<std::string> version_differences;  // "driver 580.1 (fleet: 580.159.04)"
  std::vector<std::string> outlier_lines;        // each outlier named, with its figures
  bool node_low = false;               // every GPU low on one figure: named as a node
  bool recheck_cleared = false;        // flagged, but its recheck run did not flag it
  bool rechecked = false;

  [[nodiscard]] bool flagged() const;  // failed, holds an outlier, or not judged
  [[nodiscard]] std::string reason() const;  // one line, for drain.txt / drain.sh
};

struct FleetOptions {
  bool allow_missing = false;
  std::vector<std::string> expect;  // node names from --expect (empty: none expected)
  double k = 0;                     // robust deviations (0: the gaps file's)
};

struct FleetReport {
  std::string specs_source, gaps_source, config_source;
  double k = 0;
  std::vector<FleetNode> nodes;     // flagged first, then by name
  std::vector<std::string> warnings;  // version differences, above the figures
  std::vector<std::string> figure_keys;  // columns, in table order
  std::map<std::string, std::map<std::string, double>> fleet_median;  // model -> figure -> median
  std::map<std::string, double> min_gap;  // figure -> its gap (the heat map's full colour)
  bool allow_missing = false;
  std::optional<std::string> recheck_source;

  [[nodiscard]] int count_flagged() const;
  [[nodiscard]] int count_unjudged() const;
  [[nodiscard]] bool failed() const;  // a judged node flagged, or a node not judged without --allow-missing
};

// Judges the nodes. Errors: none of the nodes holds anything to judge; a node's files that
// accept's judge refuses (several GPUs in one file) make that node half-written, not an error.
Expected<FleetReport> judge_fleet(std::vector<NodeInput> nodes, const SpecDb& specs, const AcceptConfig& config,
                                  const FleetGaps& gaps, const FleetOptions& options);

// --recheck: a node flagged in `first` that has a run in `recheck` stays flagged only if the
// recheck flags it too (a node with no second run stays as it was).
void apply_recheck(FleetReport& first, const FleetReport& recheck, const std::string& source);

}  // namespace gpucheck::compare::fleet
