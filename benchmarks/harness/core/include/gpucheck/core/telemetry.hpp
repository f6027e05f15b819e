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

namespace gpucheck {

// File reads behind an interface so tests can hand in a fake sysfs.
class FileReader {
 public:
  virtual ~FileReader() = default;
  virtual std::optional<std::string> read(const std::string& path) const = 0;
};
class RealFileReader final : public FileReader {
 public:
  std::optional<std::string> read(const std::string& path) const override;
};

struct Telemetry {
  std::optional<std::string> driver_version;
  std::optional<std::string> uuid;
  std::optional<unsigned> sm_clock_MHz, sm_clock_max_MHz, mem_clock_MHz, mem_clock_max_MHz;
  std::optional<double> power_limit_W;
  std::optional<unsigned> temperature_C;
  std::optional<int> pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max;
  std::string pcie_source;  // "nvml", "sysfs" or "" when unknown
  std::optional<bool> ecc_enabled;
  std::optional<std::uint64_t> clock_event_reasons;  // NVML's throttle-reason bit mask
};

// The NVML calls gpucheck uses, read-only (nothing here changes a card's settings).
class NvmlApi {
 public:
  virtual ~NvmlApi() = default;
  // Fills what NVML knows for the device with that PCI bus id; leaves the rest empty.
  virtual void query(const std::string& pci_bus_id, Telemetry* t) const = 0;
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

// Names of the set bits of an NVML clocks-event (throttle) reason mask, comma-separated;
// "none" for 0. gpu_idle is listed but is not throttling (see is_throttling).
std::string describe_clock_event_reasons(std::uint64_t mask);
// True when the mask holds a reason that lowers clocks under load (power, thermal, slowdown).
bool is_throttling(std::uint64_t mask);

}  // namespace gpucheck
