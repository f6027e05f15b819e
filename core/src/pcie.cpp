#include "gpucheck/core/pcie.hpp"

#include <charconv>
#include <cmath>

#include "gpucheck/core/text.hpp"

namespace gpucheck {

double pcie_gt_per_s(int gen) {
  switch (gen) {
    case 1: return 2.5;
    case 2: return 5.0;
    case 3: return 8.0;
    case 4: return 16.0;
    case 5: return 32.0;
    case 6: return 64.0;
    default: return 0.0;
  }
}

double pcie_encoding_efficiency(int gen) {
  if (gen == 1 || gen == 2) return 8.0 / 10.0;
  if (gen >= 3 && gen <= 5) return 128.0 / 130.0;
  if (gen == 6) return 1.0;
  return 0.0;
}

double pcie_link_GBps(const PcieLink& link) {
  if (link.width <= 0) return 0.0;
  return pcie_gt_per_s(link.gen) * link.width * pcie_encoding_efficiency(link.gen) / 8.0;
}

std::optional<int> pcie_gen_from_sysfs_speed(std::string_view s) {
  s = trim(s);
  std::size_t end = 0;
  while (end < s.size() && ((s[end] >= '0' && s[end] <= '9') || s[end] == '.')) ++end;
  if (end == 0) return std::nullopt;
  double gt = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + end, gt);
  if (ec != std::errc() || p != s.data() + end) return std::nullopt;
  if (s.substr(end).find("GT/s") == std::string_view::npos) return std::nullopt;
  for (int gen = 1; gen <= 6; ++gen)
    if (std::fabs(pcie_gt_per_s(gen) - gt) < 1e-6) return gen;
  return std::nullopt;
}

std::optional<int> pcie_width_from_sysfs(std::string_view s) {
  s = trim(s);
  if (!s.empty() && (s.front() == 'x' || s.front() == 'X')) s.remove_prefix(1);
  int w = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), w);
  if (ec != std::errc() || p != s.data() + s.size() || w <= 0 || w > 32) return std::nullopt;
  return w;
}

std::string to_string(const PcieLink& l) {
  if (l.gen <= 0 || l.width <= 0) return "unknown";
  return "Gen" + std::to_string(l.gen) + " x" + std::to_string(l.width);
}

}  // namespace gpucheck
