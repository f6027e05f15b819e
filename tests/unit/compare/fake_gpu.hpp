// One fake NVML reading of a GPU for the watch tests, from the figures they vary: utilisation,
// SM activity, PCIe traffic and the link. Shared by the tests that judge timelines built in
// memory and those that hand the readings to `gpucheck watch` through a fake NVML.
#pragma once

#include <optional>

#include "gpucheck/core/telemetry.hpp"

namespace gpucheck::compare::testing {

// The PCIe link now and the most GPU and system allow; 0 is a figure NVML does not give (a
// driver without the calls), never a reading of 0.
struct Link {
  unsigned gen = 5, width = 16, gen_max = 5, width_max = 16;
};

// Power at an H200's under load while the GPU is busy, at its idle draw otherwise.
inline GpuSample reading(unsigned util, double sm_active, double pcie_rx_MBps, const Link& l) {
  GpuSample s;
  s.util_gpu_pct = util;
  s.sm_active_pct = sm_active;
  s.pcie_rx_MBps = pcie_rx_MBps;
  s.power_W = util > 0 ? 650.0 : 75.0;
  s.power_limit_W = 700.0;
  auto some = [](unsigned x) { return x > 0 ? std::optional<unsigned>(x) : std::nullopt; };
  s.pcie_gen = some(l.gen);
  s.pcie_width = some(l.width);
  s.pcie_gen_max = some(l.gen_max);
  s.pcie_width_max = some(l.width_max);
  return s;
}

}  // namespace gpucheck::compare::testing
