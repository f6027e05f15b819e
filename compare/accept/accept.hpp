// New-machine acceptance, the judging half: pure functions from result files already on disk
// (one or more per GPU), the SKU's datasheet figures and an acceptance config to pass/fail per
// check and per GPU. Nothing here touches a GPU, so a fleet can ship results home and judge
// them there; the measuring half (running the bench_* binaries' accept suites) feeds it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/command.hpp"
#include "base/expected.hpp"
#include "base/filesystem.hpp"
#include "results/results.hpp"

namespace gpucheck {
class SpecDb;  // gpucheck/core/specs.hpp (harness core, pure C++)
}

namespace gpucheck::compare {

// ---- the acceptance config (baselines/accept.json) ---------------------------------------

// Floors as fractions: of the link's theoretical rate (PCIe), of the datasheet (HBM, GEMM),
// and the allowed shortfall against the other GPUs of the node (alike).
struct AcceptLimits {
  double pcie_bandwidth_fraction = 0.80;
  std::map<std::string, double> memory_fraction{{"copy_kernel", 0.80}, {"memcpy_d2d", 0.80}};
  std::map<std::string, double> gemm_fraction{{"bf16", 0.65}, {"fp16", 0.65}, {"tf32", 0.65}, {"fp8", 0.63}};
  double alike_fraction = 0.10;
};

struct AcceptSkuRules {
  AcceptLimits limits;                          // the defaults with this SKU's overrides applied
  std::optional<bool> ecc;                      // true: ECC must be enabled
  std::map<int, double> nccl_allreduce_busbw_GBps;  // GPU count -> floor (none: reported only)
};

struct AcceptConfig {
  std::string source = "built-in defaults";
  AcceptLimits defaults;
  std::map<std::string, AcceptSkuRules> skus;  // by specs.json id ("nvidia-h200")

  [[nodiscard]] const AcceptLimits& limits_for(const std::string& sku_id) const;
  [[nodiscard]] std::optional<bool> ecc_for(const std::string& sku_id) const;
  [[nodiscard]] std::optional<double> nccl_floor(const std::string& sku_id, int gpus) const;
};

// Strict: unknown keys (other than "_comment"-style keys starting with '_') and fractions
// outside their range are errors naming the file and the key.
Expected<AcceptConfig> parse_accept_config(std::string_view text, const std::string& source);

// ---- the report ---------------------------------------------------------------------------

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

std::string render_accept_terminal(const AcceptReport& r);
std::string render_accept_markdown(const AcceptReport& r);
std::string render_accept_json(const AcceptReport& r);

// ---- command line -------------------------------------------------------------------------

struct AcceptArgs {
  std::vector<std::string> results;          // --results PATH (repeatable): judge these
  std::optional<std::string> specs, config;  // --specs FILE, --config FILE
  std::optional<std::string> out;            // --out DIR: accept.json and accept.md
  std::string format = "terminal";           // --format terminal|markdown|json (stdout)
  std::optional<std::vector<int>> devices;   // --devices 0,3 (with --results: a filter)
  // Measuring run only (no --results):
  std::optional<std::string> bin_dir;  // --bin-dir DIR (the bench_* binaries)
  std::optional<double> burn_s;        // --burn SECONDS
  std::optional<double> timeout_s;     // --timeout SECONDS (per binary)
};

// args[from..] after "accept".
Expected<AcceptArgs> parse_accept_args(const std::vector<std::string>& args, std::size_t from);

// Every *.json results file under each path (a file, or a folder walked recursively; hidden
// entries, other files and the judge's own accept.json are skipped), parsed one by one.
Expected<std::vector<Results>> load_accept_results(const FileSystem& fs, const std::vector<std::string>& paths);

// The judge behind the command: specs and config (--specs / --config, else
// ./baselines/{specs,accept}.json, else the copies beside the binary), judge, render, --out
// files. `extra`: checks the judge cannot see in files (a binary that did not run), added to
// the report. Exit 0 all checks pass, 1 a check failed, 2 bad input (one line on io.err).
ExitStatus judge_and_report(const AcceptArgs& args, const std::vector<Results>& files, FileSystem& fs,
                            CliOutput& io, const std::vector<AcceptCheck>& extra = {});

// The measuring run (no --results): the accept suites per GPU through the gate's runner, NCCL
// over the node, --burn on every GPU at once. Needs env.runner (and env.gpu_probe to count
// the GPUs without --devices). Errors: no GPU, binaries not found.
struct AcceptMeasurement {
  std::string dir;                       // where the JSON is (OUT, walked by the judge)
  std::vector<AcceptCheck> failed_runs;  // binaries that crashed, hung or could not run
  std::vector<std::string> notes;        // what was not run and why
};
Expected<AcceptMeasurement> measure_accept(const AcceptArgs& args, FileSystem& fs, const CliEnvironment& env,
                                           CliOutput& io);

// `gpucheck accept ...`: args[0] is the program, args[1] "accept".
ExitStatus cmd_accept(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io);

std::string accept_usage_text();

}  // namespace gpucheck::compare
