// PCIe link arithmetic: what a link of a given generation and width can carry. Used for
// the context, for `pct_of_link` in bench_pcie and for acceptance (a link trained at x8 or
// Gen3 shows up here first).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck {

struct PcieLink {
  int gen = 0;    // 1..6
  int width = 0;  // lanes
};

// Per-lane raw signalling rate in GT/s (Gen1 2.5 ... Gen6 64); 0 for an unknown gen.
double pcie_gt_per_s(int gen);
// Line-code efficiency: 8b/10b for Gen1-2, 128b/130b for Gen3-5, 1.0 for Gen6 (PAM4 FLIT mode;
// FLIT overhead is left to the measured pct_of_link).
double pcie_encoding_efficiency(int gen);
// Theoretical one-direction data rate in GB/s (1e9 bytes/s): GT/s x width x efficiency / 8.
// Gen5 x16 = 63.0 GB/s. 0 when gen or width is unknown.
double pcie_link_GBps(const PcieLink& link);

// Parses a sysfs link speed ("32.0 GT/s PCIe", "8 GT/s", "2.5 GT/s") into a generation.
std::optional<int> pcie_gen_from_sysfs_speed(std::string_view s);
// Parses a sysfs width ("16", "x16\n").
std::optional<int> pcie_width_from_sysfs(std::string_view s);

std::string to_string(const PcieLink& l);  // "Gen5 x16", "unknown"

}  // namespace gpucheck
