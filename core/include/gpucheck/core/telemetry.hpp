// What the driver says about a card: clocks, power limit, PCIe link, ECC, throttle reasons.
// NVML is loaded with dlopen at run time (no NVML header at build time, and a machine
// without the driver still runs the compare tool); sysfs fills the PCIe link when NVML
// cannot (VMs often hide it). Every field is optional: missing reads as "unknown".
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

// File reads behind an interface so tests can hand in a fake sysfs.
class FileReader {
 public:
  virtual ~FileReader() = default;
  virtual std::optional<std::string> read(const std::string& path) const = 0;
  // The path with every symbolic link resolved (realpath); nullopt when it does not exist.
  // sysfs names a PCI device by a link into the bus hierarchy: its parent is the slot's port.
  virtual std::optional<std::string> canonical(const std::string& path) const = 0;
};
class RealFileReader final : public FileReader {
 public:
  std::optional<std::string> read(const std::string& path) const override;
  std::optional<std::string> canonical(const std::string& path) const override;
};

struct Telemetry {
  std::optional<std::string> driver_version;
  std::optional<std::string> uuid;
  std::optional<unsigned> sm_clock_MHz, sm_clock_max_MHz, mem_clock_MHz, mem_clock_max_MHz;
  std::optional<double> power_limit_W;
  std::optional<unsigned> temperature_C;
  std::optional<int> pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max;
  std::string pcie_source;  // "nvml", "sysfs" or "" when unknown
  // The link the GPU itself can train (NVML's GPU max) and the one the slot's port offers
  // (sysfs, the upstream bridge): pcie_*_max above is what NVML reports for the pair.
  std::optional<int> pcie_gen_gpu_max, pcie_gen_slot_max, pcie_width_slot_max;
  std::optional<double> power_W;  // board power draw now
  // NVML's energy counter: joules since the driver loaded (Volta and newer; query_power only).
  std::optional<double> energy_J;
  std::optional<bool> ecc_enabled;
  std::optional<std::uint64_t> clock_event_reasons;  // NVML's throttle-reason bit mask
  // Memory health: uncorrectable ECC errors since the driver loaded (volatile) and over the
  // card's life (aggregate); rows remapped, pending a remap (needs a reset) or failed to remap.
  std::optional<std::uint64_t> ecc_uncorrected_volatile, ecc_uncorrected_aggregate;
  std::optional<unsigned> remapped_rows_correctable, remapped_rows_uncorrectable;
  std::optional<bool> remapped_rows_pending, remapped_rows_failure;
  std::optional<bool> retired_pages_pending;  // pre-Ampere page retirement
};

// Another process using a GPU, as NVML lists it.
struct GpuProcess {
  unsigned pid = 0;
  std::string name;            // "" when NVML and /proc cannot tell
  std::uint64_t used_bytes = 0;
  // Its share of the GPU since the previous activity() reading of that GPU (the last second on
  // the first), from nvmlDeviceGetProcessUtilization: the share of time a kernel of this process
  // ran (sm) and of memory reads/writes (mem). 0 when NVML read the GPU and this process ran
  // nothing; absent where NVML cannot tell (an older driver, MIG, an error).
  std::optional<unsigned> sm_util_pct{}, mem_util_pct{};
};

// One process's utilisation in one of the driver's sample periods (nvmlDeviceGetProcessUtilization).
struct ProcessUtilSample {
  unsigned pid = 0;
  std::uint64_t time_us = 0;  // CPU time, microseconds since the epoch
  unsigned sm_pct = 0, mem_pct = 0;
};
// Sets each listed process's share from the samples newer than `since_us`: the mean of its own,
// 0 for a listed process with none (NVML returns only processes that ran); a sample over 100% is
// none. Returns the newest sample's time (`since_us` when none): where the next reading starts.
std::uint64_t apply_process_util(const std::vector<ProcessUtilSample>& samples, std::uint64_t since_us,
                                 std::vector<GpuProcess>* procs);

// What a GPU is busy with right now: who uses it and how much.
struct GpuActivity {
  unsigned nvml_index = 0;     // NVML's order (PCI order; CUDA's may differ: match by uuid)
  std::string name, uuid;
  std::string pci_bus_id;      // NVML's "00000000:19:00.0"; "" when it did not say
  std::optional<unsigned> utilization_gpu_pct, utilization_mem_pct;
  std::vector<GpuProcess> processes;  // compute processes, this one included if it has a context
};

// One reading of one GPU while a job runs (gpucheck watch). Every field is optional: a field
// NVML or the GPU does not offer stays empty. NVML's utilisation is the share of its own
// sample period (1/6 s to 1 s, by product) in which a kernel ran; GPM's figures are averages
// over the interval since the previous reading of that GPU.
struct GpuSample {
  std::optional<unsigned> util_gpu_pct, util_mem_pct;
  std::optional<std::uint64_t> mem_used_bytes, mem_total_bytes;
  std::optional<double> power_W, power_limit_W;  // draw and enforced limit
  std::optional<unsigned> sm_clock_MHz, sm_clock_max_MHz, temperature_C;
  std::optional<std::uint64_t> clock_event_reasons;
  std::optional<double> pcie_rx_MBps, pcie_tx_MBps;  // MiB/s (NVML's KB/s / 1024, or GPM's MiB/s)
  // The PCIe link now, and the most GPU and system allow (nvmlDeviceGetCurr/MaxPcieLink*); a
  // reading of 0 is none. The generation drops at idle to save power; the width does not.
  std::optional<unsigned> pcie_gen, pcie_width, pcie_gen_max, pcie_width_max;
  // GPM (Hopper and newer): the share of SMs busy, of warps resident against the maximum, of
  // time any tensor pipe ran, and of peak DRAM bandwidth used.
  std::optional<double> sm_active_pct, sm_occupancy_pct, tensor_active_pct, dram_bw_pct;
};

// The NVML calls gpucheck uses, read-only (nothing here changes a card's settings).
class NvmlApi {
 public:
  virtual ~NvmlApi() = default;
  // Fills what NVML knows for the device with that PCI bus id; leaves the rest empty.
  virtual void query(const std::string& pci_bus_id, Telemetry* t) const = 0;
  // Every GPU NVML sees, with its utilisation and compute processes.
  virtual std::vector<GpuActivity> activity() const = 0;
  // The SM clock and throttle reasons only: cheap enough to read during a measurement.
  virtual void query_clock(const std::string& pci_bus_id, Telemetry* t) const { query(pci_bus_id, t); }
  // The SM clock, the board's power draw and its energy counter (energy_J): what a run under
  // the power limit reads between its chunks of calls (benchmarks/attention_energy.cpp).
  virtual void query_power(const std::string& pci_bus_id, Telemetry* t) const {
    (void)pci_bus_id;
    (void)t;
  }
  // The energy counter alone (energy_J): what a power plateau reads while its samples run,
  // where every NVML call is host time the queue must cover (harness GpuSource).
  virtual void query_energy(const std::string& pci_bus_id, Telemetry* t) const { query_power(pci_bus_id, t); }
  // gpucheck watch: the number of GPUs NVML sees (0 when unknown).
  virtual unsigned device_count() const { return 0; }
  // One reading of the GPU at NVML index `index`; GPM figures from the second reading on (GPM
  // needs two samples), and only where nvmlGpmQueryDeviceSupport says the GPU has it.
  // nullopt when the GPU cannot be read at all.
  virtual std::optional<GpuSample> sample(unsigned index) const {
    (void)index;
    return std::nullopt;
  }
  // Whether the GPU has GPM (nvmlGpmQueryDeviceSupport); nullopt when NVML cannot say.
  virtual std::optional<bool> gpm_supported(unsigned index) const {
    (void)index;
    return std::nullopt;
  }
};

// dlopen("libnvidia-ml.so.1"); nullptr with a reason in *err when NVML is not there.
std::unique_ptr<NvmlApi> load_nvml(std::string* err);

// NVML first, then sysfs for the PCIe link, then /proc/driver/nvidia/version for the driver.
Telemetry read_telemetry(const std::string& pci_bus_id, const NvmlApi* nvml, const FileReader& fs);

// "00000000:00:06.0" or "0000:00:06.0" -> "0000:00:06.0" (lower case, 4-digit domain) as
// /sys/bus/pci/devices names it; returns the input unchanged if it does not look like one.
std::string normalize_pci_bus_id(std::string_view id);

// From the text of /proc/driver/nvidia/version: "580.159.04".
std::optional<std::string> driver_version_from_proc(std::string_view text);

// From the text of /proc/cpuinfo: the first "model name" (x86) or "Model name"/"CPU part"
// free-form value, whitespace-collapsed: "AMD EPYC 9654 96-Core Processor". Host-bound cases
// (launch costs, pageable copies) depend on it, so compare prints it when it changes.
std::optional<std::string> cpu_model_from_proc(std::string_view cpuinfo);
// The host CPU as results record it (`host_cpu`): the model name and, where /proc/cpuinfo
// has them (x86), family, model and stepping, which tell CPU generations apart when a VM
// shows a generic name ("Intel(R) Xeon(R) Processor (family 6 model 143 stepping 8)").
std::optional<std::string> host_cpu_from_proc(std::string_view cpuinfo);

// The GPU's upstream port in sysfs, from the device's canonical path
// ("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0" -> "/sys/devices/pci0000:00/0000:00:01.0"):
// nullopt when the parent is not a PCI function (a root-complex device, as in many VMs).
std::optional<std::string> pcie_upstream_port(std::string_view canonical_device_path);

// Host-side names of GPU processes: /proc/<pid>/comm, trimmed ("" when unreadable).
std::string process_name(unsigned pid, const FileReader& fs);

// Names of the set bits of an NVML clocks-event (throttle) reason mask, comma-separated;
// "none" for 0 (contract::describe_reasons: the names and classes are the contract's table).
std::string describe_clock_event_reasons(std::uint64_t mask);
// True when the mask holds a slowing reason (contract::kSlowingReasons: hardware slowdown,
// thermal, power brake). Power capping alone (sw_power_cap) is how a card runs under load
// and is not throttling; the counter `throttled` means this.
bool is_throttling(std::uint64_t mask);

}  // namespace gpucheck
