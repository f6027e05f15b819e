// Where a benchmark binary runs on the host: `gpucheck gate` and `gpucheck run` start each
// binary pinned to one core of its GPU's NUMA node (--pin-cpu auto, the default), so that a
// host-bound figure (launch costs, per-call issue, pageable copies) is not moved by the
// scheduler placing the process on a far socket or migrating it mid-case. The node's cores are
// the kernel's /sys/bus/pci/devices/<bus id>/local_cpulist for the GPU's PCI bus id (NVML's);
// the last of them that this process may run on is taken (the first cores of a node are where
// the kernel and interrupt handlers most often land). Nothing here changes a setting of the
// card or of the host: only the child's own affinity, set between fork and exec.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "gpucheck/core/telemetry.hpp"

namespace gpucheck::compare {

// --pin-cpu auto|off|N
struct PinRequest {
  enum class Mode { Auto, Off, Core };
  Mode mode = Mode::Auto;
  int core = -1;  // Mode::Core
};
Expected<PinRequest> parse_pin_cpu(std::string_view text);

// The highest CPU number a cpulist may name (the kernel's cpu_set_t holds 1024 by default).
inline constexpr int kMaxCpu = 1023;

// A kernel cpulist ("0-15,32-47", "3", "0,2,4-5", with or without a trailing newline) as the
// CPUs it names, ascending and without repeats. Refused (an Error naming `source`): empty,
// a range whose end is below its start, a number above kMaxCpu, an empty item, a sign, any
// other character.
Expected<std::vector<int>> parse_cpulist(std::string_view text, const std::string& source);

// root + "/sys/bus/pci/devices/<bus id as sysfs names it>/local_cpulist" (root "" is the real one).
std::string local_cpulist_path(const std::string& root, std::string_view pci_bus_id);
// The GPU's NUMA node's CPUs, read from that file under `root`; an Error saying why not.
Expected<std::vector<int>> read_local_cpus(const std::string& root, std::string_view pci_bus_id);

// What was decided: the core (nullopt: not pinned) and the one line that says so.
struct PinDecision {
  std::optional<int> cpu;
  std::string line;  // "CPU: pinned to core 47 (...)" or "CPU: not pinned (...)"
};

// The decision, pure: `local` is the GPU's node's CPUs or why they are unknown, `allowed` the
// CPUs this process may run on (sched_getaffinity; empty: unknown, every one allowed).
// auto: the last of local that is allowed (not pinned when none is, or local is unknown);
// off: not pinned; N: N when allowed, else an Error (--pin-cpu, exit 2).
Expected<PinDecision> decide_pin(const PinRequest& req, const Expected<std::vector<int>>& local,
                                 const std::string& gpu, const std::vector<int>& allowed);

// The GPU's PCI bus id for CUDA device `device`, from an NVML snapshot (runner/gpu_activity's
// select_gpu: CUDA_VISIBLE_DEVICES and NVML's PCI order); an Error saying why it is unknown.
Expected<std::string> gpu_bus_id(const std::vector<GpuActivity>& gpus, std::optional<std::size_t> selected, int device);

// The CPUs this process may run on (sched_getaffinity); empty when it cannot tell.
std::vector<int> allowed_cpus();

}  // namespace gpucheck::compare
