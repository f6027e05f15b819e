// A GPU is busy when another process holds a compute context on it or its utilisation is
// 10% or more (a few percent with no other process is the tail of our own last binary):
// either can slow every case that follows, and the report must say so before anyone reads a
// regression as the code's.
#include "runner/gpu_activity.hpp"

#include <algorithm>

#include "base/format.hpp"

namespace gpucheck::compare {
namespace {

std::string gib(std::uint64_t bytes) {
  return format_double("%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

std::vector<GpuProcess> others(const GpuActivity& g, unsigned self_pid) {
  std::vector<GpuProcess> out;
  for (const auto& p : g.processes)
    if (p.pid != self_pid) out.push_back(p);
  return out;
}

std::string process_list(const std::vector<GpuProcess>& ps) {
  std::string s;
  for (const auto& p : ps)
    s += std::string(s.empty() ? "" : ", ") + "pid " + std::to_string(p.pid) + " " + (p.name.empty() ? "?" : p.name) +
         " " + gib(p.used_bytes);
  return s;
}

std::string busy_text(const GpuActivity& g, const std::vector<GpuProcess>& ps) {
  std::string s;
  if (!ps.empty())
    s = std::to_string(ps.size()) + " other process" + (ps.size() == 1 ? "" : "es") + " (" + process_list(ps) + ")";
  if (g.utilization_gpu_pct && *g.utilization_gpu_pct > 0)
    s += std::string(s.empty() ? "" : ", ") + "utilisation " + std::to_string(*g.utilization_gpu_pct) + "%";
  return s;
}

}  // namespace

ActivitySnapshot NvmlActivityProbe::snapshot() {
  ActivitySnapshot s;
  std::string err;
  const auto nvml = load_nvml(&err);
  if (!nvml) {
    s.reason = err.empty() ? "NVML not available" : err;
    return s;
  }
  s.known = true;
  s.gpus = nvml->activity();
  if (s.gpus.empty()) {
    s.known = false;
    s.reason = "NVML lists no GPU";
  }
  return s;
}

ActivitySnapshot merge_snapshots(const ActivitySnapshot& earlier, const ActivitySnapshot& later) {
  if (!later.known) return earlier;
  if (!earlier.known) return later;
  ActivitySnapshot m = later;
  for (GpuActivity& g : m.gpus) {
    const auto e = std::find_if(earlier.gpus.begin(), earlier.gpus.end(),
                                [&](const GpuActivity& x) { return x.uuid == g.uuid && x.nvml_index == g.nvml_index; });
    if (e == earlier.gpus.end()) continue;
    for (const GpuProcess& p : e->processes)
      if (std::none_of(g.processes.begin(), g.processes.end(), [&](const GpuProcess& q) { return q.pid == p.pid; }))
        g.processes.push_back(p);
    if (e->utilization_gpu_pct && (!g.utilization_gpu_pct || *e->utilization_gpu_pct > *g.utilization_gpu_pct))
      g.utilization_gpu_pct = e->utilization_gpu_pct;
  }
  return m;
}

std::optional<std::size_t> select_gpu(const ActivitySnapshot& s, int device,
                                      const std::optional<std::string>& cvd, const std::string& gpu_uuid) {
  if (!s.known || device < 0) return std::nullopt;
  if (!gpu_uuid.empty() && gpu_uuid != "unknown") {
    for (std::size_t i = 0; i < s.gpus.size(); ++i)
      if (s.gpus[i].uuid == gpu_uuid) return i;
    return std::nullopt;
  }
  auto by_index = [&](unsigned idx) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < s.gpus.size(); ++i)
      if (s.gpus[i].nvml_index == idx) return i;
    return std::nullopt;
  };
  if (!cvd || cvd->empty()) return by_index(static_cast<unsigned>(device));
  std::vector<std::string> items;
  std::size_t from = 0;
  while (from <= cvd->size()) {
    const std::size_t comma = cvd->find(',', from);
    const std::size_t end = comma == std::string::npos ? cvd->size() : comma;
    items.push_back(cvd->substr(from, end - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (static_cast<std::size_t>(device) >= items.size()) return std::nullopt;
  const std::string& item = items[static_cast<std::size_t>(device)];
  if (item.rfind("GPU-", 0) == 0) {
    for (std::size_t i = 0; i < s.gpus.size(); ++i)
      if (s.gpus[i].uuid.rfind(item, 0) == 0) return i;
    return std::nullopt;
  }
  if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 4) return std::nullopt;
  return by_index(static_cast<unsigned>(std::stoul(item)));
}

constexpr unsigned kBusyUtilisationPct = 10;

ActivityReport describe_activity(const ActivitySnapshot& s, std::optional<std::size_t> selected, int device,
                                 unsigned self_pid) {
  ActivityReport r;
  if (!s.known) {
    r.lines.push_back("GPU activity: unknown (" + s.reason + ")");
    return r;
  }
  r.lines.push_back("GPU activity before the first binary (NVML):");
  for (std::size_t i = 0; i < s.gpus.size(); ++i) {
    const GpuActivity& g = s.gpus[i];
    const auto ps = others(g, self_pid);
    std::string line = "  GPU " + std::to_string(g.nvml_index) + " " + g.name;
    if (selected && *selected == i) line += " (device " + std::to_string(device) + ")";
    line += ": utilisation " +
            (g.utilization_gpu_pct ? std::to_string(*g.utilization_gpu_pct) + "%" : std::string("unknown"));
    line += ps.empty() ? ", no other processes" : ", " + std::to_string(ps.size()) + " other process" +
                                                      (ps.size() == 1 ? "" : "es") + ": " + process_list(ps);
    r.lines.push_back(line);
    // Utilisation is NVML's average over its last sample period, so the tail of the binary
    // that just finished reads a few percent (1-2% seen on the H200 between gate runs with no
    // other process): a neighbour is another process, or a GPU kept busy.
    const bool busy = !ps.empty() || (g.utilization_gpu_pct && *g.utilization_gpu_pct >= kBusyUtilisationPct);
    const bool concerns_us = !selected || *selected == i;
    if (selected && *selected == i) r.other_processes = static_cast<int>(ps.size());
    if (busy && concerns_us)
      r.warnings.push_back("GPU " + std::to_string(g.nvml_index) + " (" + g.name + ")" +
                           (selected ? ", device " + std::to_string(device) + "," : " (which GPU is device " +
                                                                                     std::to_string(device) + " is unknown)") +
                           " is busy before the gate starts: " + busy_text(g, ps) +
                           "; a slower figure may be this neighbour, not the code");
  }
  return r;
}

}  // namespace gpucheck::compare
