#include "runner/cpu_pin.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

namespace gpucheck::compare {
namespace {

// A CPU number: digits only, at most kMaxCpu.
std::optional<int> cpu_number(std::string_view s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  int v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v > kMaxCpu) return std::nullopt;
  return v;
}

std::string range_text(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out.push_back(',');
    out.append(std::to_string(cpus[i]));
    if (j > i) out.append(1, '-').append(std::to_string(cpus[j]));
    i = j + 1;
  }
  return out;
}

}  // namespace

Expected<PinRequest> parse_pin_cpu(std::string_view text) {
  if (text == "auto") return PinRequest{};
  if (text == "off") return PinRequest{PinRequest::Mode::Off, -1};
  if (const auto n = cpu_number(text)) return PinRequest{PinRequest::Mode::Core, *n};
  return Error{"--pin-cpu", "expected auto, off or a CPU number 0-" + std::to_string(kMaxCpu) + ", got \"" +
                                std::string(text) + "\""};
}

Expected<std::vector<int>> parse_cpulist(std::string_view text, const std::string& source) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  auto bad = [&](const std::string& why) { return Error{source, "not a cpulist (" + why + ")"}; };
  if (text.empty()) return bad("empty");
  std::set<int> cpus;
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = text.find(',', at);
    const std::string_view item = text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    const std::size_t dash = item.find('-');
    const auto lo = cpu_number(item.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : cpu_number(item.substr(dash + 1));
    std::string quoted(1, '"');
    quoted.append(item).push_back('"');
    if (!lo || !hi) return bad(quoted.append(" is not a CPU number 0-").append(std::to_string(kMaxCpu)).append(" or a range of them"));
    if (*hi < *lo) return bad("the range " + quoted + " ends before it starts");
    for (int c = *lo; c <= *hi; ++c) cpus.insert(c);
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

std::string local_cpulist_path(const std::string& root, std::string_view pci_bus_id) {
  return root + "/sys/bus/pci/devices/" + normalize_pci_bus_id(pci_bus_id) + "/local_cpulist";
}

Expected<std::vector<int>> read_local_cpus(const std::string& root, std::string_view pci_bus_id) {
  const std::string path = local_cpulist_path(root, pci_bus_id);
  std::ifstream in(path);
  if (!in) return Error{path, "cannot be read"};
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > 4096) return Error{path, "not a cpulist (over 4096 bytes)"};
  return parse_cpulist(text.str(), path);
}

Expected<PinDecision> decide_pin(const PinRequest& req, const Expected<std::vector<int>>& local, const std::string& gpu,
                                 const std::vector<int>& allowed) {
  const auto may_run = [&](int c) { return allowed.empty() || std::find(allowed.begin(), allowed.end(), c) != allowed.end(); };
  switch (req.mode) {
    case PinRequest::Mode::Off: return PinDecision{std::nullopt, "CPU: not pinned (--pin-cpu off)"};
    case PinRequest::Mode::Core:
      if (!may_run(req.core))
        return Error{"--pin-cpu", "CPU " + std::to_string(req.core) + " is not one this process may run on (" +
                                      range_text(allowed) + ")"};
      return PinDecision{req.core, "CPU: pinned to core " + std::to_string(req.core) + " (--pin-cpu)"};
    case PinRequest::Mode::Auto: break;
  }
  if (!local) return PinDecision{std::nullopt, "CPU: not pinned (" + local.error().str() + ")"};
  for (auto c = local->rbegin(); c != local->rend(); ++c)
    if (may_run(*c))
      return PinDecision{*c, "CPU: pinned to core " + std::to_string(*c) + " (the last of GPU " + gpu + "'s NUMA node, " +
                                 range_text(*local) + ")"};
  return PinDecision{std::nullopt, "CPU: not pinned (none of GPU " + gpu + "'s NUMA node, " + range_text(*local) +
                                       ", is a CPU this process may run on: " + range_text(allowed) + ")"};
}

Expected<std::string> gpu_bus_id(const std::vector<GpuActivity>& gpus, std::optional<std::size_t> selected, int device) {
  if (gpus.empty()) return Error{"", "NVML lists no GPU"};
  if (!selected || *selected >= gpus.size())
    return Error{"", "NVML cannot tell which GPU is CUDA device " + std::to_string(device)};
  if (gpus[*selected].pci_bus_id.empty()) return Error{"", "NVML gives no PCI bus id for GPU " + gpus[*selected].uuid};
  return gpus[*selected].pci_bus_id;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::vector<int> out;
  for (int c = 0; c <= kMaxCpu && c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

}  // namespace gpucheck::compare
