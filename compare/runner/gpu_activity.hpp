// What else is using the GPUs before the gate starts: NVML's compute processes and
// utilisation, read through the harness core's NVML binding (dlopen: no NVML at build time,
// and a machine without a driver reads "unknown"). Behind an interface so tests hand in a
// fake; the text is built by pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpucheck/core/telemetry.hpp"

namespace gpucheck::compare {

struct ActivitySnapshot {
  bool known = false;
  std::string reason;  // why it is unknown (NVML not loadable)
  std::vector<gpucheck::GpuActivity> gpus;
};

class GpuActivityProbe {
 public:
  GpuActivityProbe() = default;
  GpuActivityProbe(const GpuActivityProbe&) = delete;
  GpuActivityProbe& operator=(const GpuActivityProbe&) = delete;
  virtual ~GpuActivityProbe() = default;
  virtual ActivitySnapshot snapshot() = 0;
};

class NvmlActivityProbe final : public GpuActivityProbe {
 public:
  ActivitySnapshot snapshot() override;
};

// Which of the snapshot's GPUs CUDA device `device` is: by UUID when the results named it;
// else through CUDA_VISIBLE_DEVICES (indices or UUID prefixes) and NVML's (PCI) order, which
// is CUDA's order for a node of one GPU model. nullopt when it cannot tell.
std::optional<std::size_t> select_gpu(const ActivitySnapshot& s, int device,
                                      const std::optional<std::string>& cuda_visible_devices,
                                      const std::string& gpu_uuid);

// What was seen at either of two moments (before the first pass, before the confirmation):
// every GPU of `later` with the processes of both (by pid) and the higher utilisation, so a
// neighbour that started after the gate did is still named. `later` unknown: `earlier`.
ActivitySnapshot merge_snapshots(const ActivitySnapshot& earlier, const ActivitySnapshot& later);

struct ActivityReport {
  std::vector<std::string> lines;     // one per GPU, or "GPU activity: unknown (...)"
  std::vector<std::string> warnings;  // a busy GPU
  std::optional<int> other_processes;  // on the selected GPU
};

// `self_pid` is left out of the process lists (the gate itself).
ActivityReport describe_activity(const ActivitySnapshot& s, std::optional<std::size_t> selected, int device,
                                 unsigned self_pid);

}  // namespace gpucheck::compare
