// Inside the judge: the checks, each a function of one GpuView (or of a node's GPUs) to the
// report's rows. judge.cpp composes them; check_*.cpp define them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "accept/config.hpp"
#include "accept/gpus.hpp"
#include "accept/judge.hpp"

namespace gpucheck::compare::accept_detail {

// check_pcie.cpp: the link (its row carries the PcieLinkDecision in `basis`), and H2D/D2H
// against the link that decision names as the reference.
AcceptCheck check_pcie_link(const GpuView& g);
std::vector<AcceptCheck> check_pcie_bandwidth(const GpuView& g, const PcieLinkDecision& link, const AcceptLimits& lim);

// check_rates.cpp: a case's rate against a fraction of a reference (a link, the datasheet).
struct Rate {
  std::string check, item, benchmark, counter, unit;
  std::optional<double> reference;  // 100%: the link's rate, the datasheet figure
  std::string reference_short;      // in the floor: "Gen5 x16", "datasheet 4800"
  std::string reference_text;       // in notes: "Gen5 x16 (63.02 GB/s, read under load)"
  double fraction = 0;
  std::string no_reference_why;
  bool datasheet = false;  // the reference is a datasheet peak: over 1.5x of it is no measurement
};
AcceptCheck check_rate(const GpuView& g, const Rate& r);
// The case's counter, or nothing with the check saying why (missing, errored: FAIL, skipped).
std::optional<double> counter_or_why(const Benchmark* b, const std::string& name, const std::string& counter,
                                     AcceptCheck& c);
std::vector<AcceptCheck> check_memory(const GpuView& g, const AcceptLimits& lim);
std::vector<AcceptCheck> check_gemm(const GpuView& g, const AcceptLimits& lim);

// check_health.cpp: throttling, ECC, row remapping, the burn.
AcceptCheck check_clocks(const GpuView& g);
std::vector<AcceptCheck> check_ecc(const GpuView& g, const AcceptConfig& cfg);
std::vector<AcceptCheck> check_memory_health(const GpuView& g);
AcceptCheck check_burn(const GpuView& g);

// check_node.cpp: every GPU of one model in a node against the others; NCCL over the node.
std::map<const GpuView*, std::vector<AcceptCheck>> check_alike(const std::vector<const GpuView*>& group, double allowed);
std::vector<AcceptCheck> check_nccl(const std::vector<const GpuView*>& node, const AcceptConfig& cfg);

}  // namespace gpucheck::compare::accept_detail
