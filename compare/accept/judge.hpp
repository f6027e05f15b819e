// New-machine acceptance, the judging half: pure functions from result files already on disk
// (one or more per GPU), the SKU's datasheet figures and an acceptance config to pass/fail per
// check and per GPU. Nothing here touches a GPU, so a fleet can ship results home and judge
// them there; the measuring half (measure.hpp) feeds it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "accept/config.hpp"
#include "accept/health.hpp"
#include "accept/pcie_link.hpp"
#include "base/expected.hpp"
#include "results/results.hpp"

namespace gpucheck {
class SpecDb;  // gpucheck/core/specs.hpp (harness core, pure C++)
}

namespace gpucheck::compare {

enum class AcceptVerdict {
  Pass,
  Fail,
  Reported,    // a figure shown with no floor to hold it to (NCCL without a floor, burn clocks)
  NotChecked,  // the results do not hold what the check needs; `note` says why
};
std::string_view to_string(AcceptVerdict v);  // "pass", "FAIL", "reported", "not checked"

struct AcceptCheck {
  std::string gpu;       // the GPU's label ("GPU 3 00000000:4E:00.0"), or "node <host>"
  std::string check;     // pcie_link, pcie_bandwidth, memory, gemm, clocks, ecc, memory_health,
                         // alike, nccl, burn
  std::string item;      // h2d, bf16, copy_kernel, mode, ...
  AcceptVerdict verdict = AcceptVerdict::NotChecked;
  std::string measured;  // for display: "55.33 GB/s", "Gen5 x16"
  std::string floor;     // for display: ">= 50.41 GB/s (80% of Gen5 x16)"
  std::optional<double> value, limit;  // the numbers behind measured / floor, where numeric
  std::string unit;
  std::string note;      // why it failed, why it was not checked, or a remark
  std::string benchmark; // the case it read, if one
  // The structured decision behind the words, for checks that have one (pcie_link, clocks,
  // burn): what a program or a test reads instead of the note. The renderers do not show it.
  std::variant<std::monostate, PcieLinkDecision, ClockFindings, BurnFindings> basis;

  // "GPU 3 00000000:4E:00.0: pcie_link: PCIe Gen4 x16, expected Gen5 x16"
  [[nodiscard]] std::string line() const;
};

struct AcceptGpu {
  std::string label;  // "GPU 0 0000:00:06.0" (host prefixed when results span several hosts)
  std::string host, index, uuid, pci_bus_id, name, sku;  // "unknown" where the files do not say
  std::vector<std::string> files;
};

struct AcceptReport {
  std::string specs_source, config_source;
  std::vector<AcceptGpu> gpus;
  std::vector<AcceptCheck> checks;  // per GPU in GPU order, node checks after each node's GPUs

  [[nodiscard]] int count(AcceptVerdict v) const;
  [[nodiscard]] bool failed() const { return count(AcceptVerdict::Fail) > 0; }
};

// The judge. `per_file`: every results file read (several per GPU merge by the context's
// gpu_uuid, else gpu_pci_bus_id, else gpucheck_device_index, within one host_name). Errors:
// no results, a file holding several GPUs, one benchmark twice for one GPU.
Expected<AcceptReport> judge(const std::vector<Results>& per_file, const SpecDb& specs, const AcceptConfig& config);

}  // namespace gpucheck::compare
