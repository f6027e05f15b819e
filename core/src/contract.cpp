#include "gpucheck/core/contract.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <sstream>

#include "gpucheck/core/names.hpp"

namespace gpucheck::contract {

const CounterInfo* counter_info(std::string_view name) {
  for (const CounterInfo& c : kCounters)
    if (c.name == name) return &c;
  return nullptr;
}

std::string binary_of_family(std::string_view family) { return std::string(kBinaryPrefix) + std::string(family); }

std::string_view family_of_binary(std::string_view binary) {
  return binary.starts_with(kBinaryPrefix) ? binary.substr(kBinaryPrefix.size()) : std::string_view();
}

bool in_family(std::string_view benchmark, std::string_view family) {
  return !family.empty() && benchmark.size() > family.size() && benchmark.starts_with(family) &&
         benchmark[family.size()] == '/';
}

std::string matmul_name(std::string_view variant, DType t, std::int64_t m, std::int64_t n, std::int64_t k) {
  return bench_name({family::matmul, variant, to_string(t), shape_mnk(m, n, k)});
}

std::optional<std::string> accept_gemm_name(std::string_view peak) {
  const std::optional<DType> t = dtype_for_peak_key(peak);
  if (!t) return std::nullopt;
  return matmul_name(segment::cublaslt, *t, kAcceptGemmSize, kAcceptGemmSize, kAcceptGemmSize);
}

std::string burn_name() {
  return matmul_name(segment::burn, kBurnDType, kAcceptGemmSize, kAcceptGemmSize, kAcceptGemmSize);
}

std::string pcie_name(std::string_view direction, std::string_view memory, std::uint64_t bytes) {
  return bench_name({family::pcie, direction, memory, bytes_label(bytes)});
}

std::string accept_pcie_name(std::string_view direction) {
  return pcie_name(direction, segment::pinned, kAcceptPcieBytes);
}

std::string memory_name(std::string_view variant, std::string_view dtype, std::uint64_t bytes) {
  return bench_name({family::memory, variant, dtype, bytes_label(bytes)});
}

std::string accept_memory_name(std::string_view variant) {
  return memory_name(variant, to_string(kAcceptMemoryDType), kAcceptMemoryBytes);
}

std::string nccl_name(std::string_view variant, DType t, std::uint64_t bytes, int nranks) {
  std::string g = std::to_string(nranks);
  g.insert(g.begin(), 'g');  // not "g" + to_string(): GCC 12's -Wrestrict false positive
  return bench_name({family::nccl, variant, to_string(t), bytes_label(bytes), g});
}

std::string accept_nccl_name(int nranks) {
  return nccl_name(segment::allreduce, kAcceptNcclDType, kAcceptNcclBytes, nranks);
}

std::string accept_nccl_prefix() {
  std::string n = accept_nccl_name(1);
  n.pop_back();  // "...g1" -> "...g"
  return n;
}

bool says_no_match(std::string_view line) {
  if (line.starts_with("gpucheck: ")) line.remove_prefix(10);
  return line.starts_with(kNoMatchPrefix);
}

DriverFacts probe_driver() {
  DriverFacts d;
  if (void* h = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    d.libcuda_loads = true;
    ::dlclose(h);
  }
  struct stat st{};
  d.kernel_module_loaded = ::stat("/proc/driver/nvidia", &st) == 0;
  return d;
}

std::string no_device_reason(const DriverFacts& driver, std::string_view runtime_reason) {
  if (driver.libcuda_loads) return std::string(runtime_reason);
  if (!driver.kernel_module_loaded)
    return "no NVIDIA driver is installed on this machine: libcuda.so.1 does not load, no /proc/driver/nvidia";
  return "the NVIDIA kernel driver is loaded but libcuda.so.1 does not load: install the driver's user-space "
         "library or add its folder to LD_LIBRARY_PATH";
}

std::string no_device_text(const DriverFacts& driver, std::string_view runtime_reason) {
  return std::string(kNoDevicePrefix) + no_device_reason(driver, runtime_reason) + ")";
}

std::string describe_reasons(std::uint64_t mask) {
  if (mask == 0) return "none";
  std::string out;
  for (const ClockEventReason& r : kClockEventReasons) {
    if (!(mask & r.bit)) continue;
    if (!out.empty()) out += ',';
    out += r.name;
  }
  if (const std::uint64_t other = mask & ~known_reasons()) {
    if (!out.empty()) out += ',';
    std::ostringstream ss;
    ss << "other(0x" << std::hex << other << ")";
    out += ss.str();
  }
  return out;
}

}  // namespace gpucheck::contract
