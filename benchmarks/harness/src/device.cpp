#include "gpucheck/harness/device.hpp"

#include <sched.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#ifndef GPUCHECK_GIT_COMMIT
#define GPUCHECK_GIT_COMMIT "unknown"
#endif

namespace gpucheck::harness {
namespace {
// The CPU this process is pinned to ("47": its affinity is that one CPU, as `gpucheck gate`
// and `gpucheck run` start a binary by default, or taskset did), else "no".
std::string pinned_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) return "no";
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) return std::to_string(c);
  return "no";
}

std::string version_triplet(int v, int major_div, int minor_div) {
  // CUDA encodes 13000 as 13.0 (major*1000 + minor*10); cuDNN 91400 as 9.14.0.
  return std::to_string(v / major_div) + "." + std::to_string((v % major_div) / minor_div);
}

template <typename T>
std::string or_unknown(const std::optional<T>& v) {
  if (!v) return "unknown";
  if constexpr (std::is_same_v<T, std::string>) return *v;
  else return std::to_string(*v);
}
}  // namespace

Device::Device(const Options& options) : index_(options.device), options_(options) {
  GPUCHECK_CUDA(cudaSetDevice(index_));
  GPUCHECK_CUDA(cudaGetDeviceProperties(&props_, index_));
  stream_ = Stream();

  std::array<char, 32> bus{};
  GPUCHECK_CUDA(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), index_));
  pci_bus_id_ = normalize_pci_bus_id(bus.data());

  std::string err;
  const std::string specs_path = resolve_specs_path(options);
  if (SpecDb::load(specs_path, &specs_, &err)) {
    spec_ = specs_.lookup(props_.name);
    if (!spec_) spec_note_ = std::string("no entry for '") + props_.name + "' in " + specs_path;
  } else if (!options.specs_path.empty()) {
    throw std::invalid_argument(err);  // asked for by name: a typo must not pass silently
  } else {
    spec_note_ = err;
  }
  if (!spec_) std::fprintf(stderr, "gpucheck: pct_of_peak unavailable: %s\n", spec_note_.c_str());

  nvml_ = load_nvml(&nvml_note_);
  telemetry_ = read_telemetry(pci_bus_id_, nvml_.get(), RealFileReader());

  // Portable and mapped: spin kernels on every device of the process poll the same flag.
  flag_buffer_ = PinnedBuffer(2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable);
  int* flags = flag_buffer_.as<int>();
  flags[0] = 1;  // released
  flags[1] = 0;  // no timeout
  void* dev_ptr = nullptr;
  GPUCHECK_CUDA(cudaHostGetDevicePointer(&dev_ptr, flag_buffer_.get(), 0));
  hold_.host = flags;
  hold_.host_timed_out = flags + 1;
  hold_.device_view = static_cast<volatile int*>(dev_ptr);
  hold_.device_timed_out = static_cast<int*>(dev_ptr) + 1;
}

std::optional<double> Device::peak_tflops(DType t) const {
  if (!spec_) return std::nullopt;
  return spec_->peak(t);
}

Telemetry Device::refresh_telemetry() const {
  return read_telemetry(pci_bus_id_, nvml_.get(), RealFileReader());
}

std::optional<ClockReading> Device::read_clock() const {
  if (!nvml_) return std::nullopt;
  Telemetry t;
  nvml_->query_clock(pci_bus_id_, &t);
  if (!t.sm_clock_MHz && !t.clock_event_reasons) return std::nullopt;
  return ClockReading{t.sm_clock_MHz.value_or(0), t.clock_event_reasons.value_or(0)};
}

Telemetry Device::read_power() const {
  Telemetry t;
  if (nvml_) nvml_->query_power(pci_bus_id_, &t);
  return t;
}

std::optional<double> Device::read_energy_J() const {
  Telemetry t;
  if (nvml_) nvml_->query_energy(pci_bus_id_, &t);
  return t.energy_J;
}

void Device::flush_l2(cudaStream_t s) {
  if (!l2_buffer_.get()) {
    const std::size_t l2 = props_.l2CacheSize > 0 ? static_cast<std::size_t>(props_.l2CacheSize) : (64u << 20);
    l2_buffer_ = DeviceBuffer(2 * l2);
  }
  // Alternate the value so that no write can be elided as a no-op.
  GPUCHECK_CUDA(cudaMemsetAsync(l2_buffer_.get(), (l2_flushes_++ & 1) ? 0x5A : 0xA5, l2_buffer_.bytes(), s));
}

std::map<std::string, std::string> Device::context() const {
  std::map<std::string, std::string> c;
  const Telemetry& t = telemetry_;
  c["gpu_name"] = props_.name;
  char uuid[64];
  const auto& u = props_.uuid.bytes;
  std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                u[0] & 0xff, u[1] & 0xff, u[2] & 0xff, u[3] & 0xff, u[4] & 0xff, u[5] & 0xff, u[6] & 0xff,
                u[7] & 0xff, u[8] & 0xff, u[9] & 0xff, u[10] & 0xff, u[11] & 0xff, u[12] & 0xff, u[13] & 0xff,
                u[14] & 0xff, u[15] & 0xff);
  c["gpu_uuid"] = t.uuid ? *t.uuid : uuid;
  c["gpu_cc"] = std::to_string(props_.major) + "." + std::to_string(props_.minor);
  c["gpu_sms"] = std::to_string(props_.multiProcessorCount);
  c["gpu_memory_MiB"] = std::to_string(props_.totalGlobalMem >> 20);
  char l2[32];
  std::snprintf(l2, sizeof l2, "%.1f", props_.l2CacheSize / (1024.0 * 1024.0));
  c["gpu_l2_MiB"] = l2;
  c["gpu_pci_bus_id"] = pci_bus_id_;
  c["gpu_sku"] = spec_ ? spec_->id : "unknown";
  c["driver_version"] = or_unknown(t.driver_version);
  int v = 0;
  c["cuda_driver_api"] = cudaDriverGetVersion(&v) == cudaSuccess ? version_triplet(v, 1000, 10) : "unknown";
  c["cuda_runtime"] = cudaRuntimeGetVersion(&v) == cudaSuccess ? version_triplet(v, 1000, 10) : "unknown";
  c["sm_clock_MHz"] = or_unknown(t.sm_clock_MHz);
  c["sm_clock_max_MHz"] = or_unknown(t.sm_clock_max_MHz);
  c["mem_clock_MHz"] = or_unknown(t.mem_clock_MHz);
  c["mem_clock_max_MHz"] = or_unknown(t.mem_clock_max_MHz);
  c["power_limit_W"] = t.power_limit_W ? std::to_string(static_cast<int>(*t.power_limit_W + 0.5)) : "unknown";
  c["temperature_C"] = or_unknown(t.temperature_C);
  c["pcie_gen_current"] = or_unknown(t.pcie_gen_current);
  c["pcie_gen_max"] = or_unknown(t.pcie_gen_max);
  c["pcie_width_current"] = or_unknown(t.pcie_width_current);
  c["pcie_width_max"] = or_unknown(t.pcie_width_max);
  c["pcie_source"] = t.pcie_source.empty() ? "unknown" : t.pcie_source;
  c["pcie_gen_gpu_max"] = or_unknown(t.pcie_gen_gpu_max);
  c["pcie_gen_slot_max"] = or_unknown(t.pcie_gen_slot_max);
  c["pcie_width_slot_max"] = or_unknown(t.pcie_width_slot_max);
  c["ecc_uncorrected_volatile"] = or_unknown(t.ecc_uncorrected_volatile);
  c["ecc_uncorrected_aggregate"] = or_unknown(t.ecc_uncorrected_aggregate);
  c["remapped_rows_correctable"] = or_unknown(t.remapped_rows_correctable);
  c["remapped_rows_uncorrectable"] = or_unknown(t.remapped_rows_uncorrectable);
  auto yes_no = [](const std::optional<bool>& b) -> std::string { return b ? (*b ? "yes" : "no") : "unknown"; };
  c["remapped_rows_pending"] = yes_no(t.remapped_rows_pending);
  c["remapped_rows_failure"] = yes_no(t.remapped_rows_failure);
  c["retired_pages_pending"] = yes_no(t.retired_pages_pending);
  c["ecc"] = t.ecc_enabled ? (*t.ecc_enabled ? "enabled" : "disabled") : "unknown";
  c["throttle_reasons"] = t.clock_event_reasons ? describe_clock_event_reasons(*t.clock_event_reasons) : "unknown";
  const std::optional<std::string> cpuinfo = RealFileReader().read("/proc/cpuinfo");
  c["host_cpu"] = or_unknown(cpuinfo ? host_cpu_from_proc(*cpuinfo) : std::nullopt);
  c["gpucheck_commit"] = GPUCHECK_GIT_COMMIT;
  const char* branch = std::getenv("GPUCHECK_GIT_BRANCH");  // CI names it where the checkout is detached
  c["git_branch"] = branch != nullptr && *branch != '\0' ? branch : GPUCHECK_GIT_BRANCH;
  c["gpucheck_suite"] = std::string(to_string(options_.suite));
  c["gpucheck_device_index"] = std::to_string(index_);
  c["nvml"] = nvml_ ? "loaded" : "unavailable: " + nvml_note_;
  c["cpu_pinned"] = pinned_cpu();
  return c;
}

}  // namespace gpucheck::harness
