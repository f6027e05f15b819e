// The acceptance judge: result files grouped into GPUs (gpus.cpp), each GPU held to its SKU's
// datasheet and link (check_pcie, check_rates, check_health), and every GPU of a node to the
// others (check_node). It reads only what the files hold and says "not checked" (with the
// reason) for what they do not: an old or a quick-suite file is judged as far as it goes and
// never fails for lack of data. The report lists each GPU's rows, then its node's.
#include <algorithm>
#include <map>
#include <variant>

#include "accept/checks.hpp"
#include "accept/gpus.hpp"

namespace gpucheck::compare {

std::string_view to_string(AcceptVerdict v) {
  switch (v) {
    case AcceptVerdict::Pass: return "pass";
    case AcceptVerdict::Fail: return "FAIL";
    case AcceptVerdict::Reported: return "reported";
    case AcceptVerdict::NotChecked: return "not checked";
  }
  return "?";
}

std::string AcceptCheck::line() const {
  return gpu + ": " + check + (item.empty() ? "" : " " + item) + ": " + note;
}

int AcceptReport::count(AcceptVerdict v) const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [v](const AcceptCheck& c) { return c.verdict == v; }));
}

Expected<AcceptReport> judge(const std::vector<Results>& per_file, const SpecDb& specs, const AcceptConfig& config) {
  if (per_file.empty()) return Error{"", "no results to judge"};
  using namespace accept_detail;
  auto grouped = group_by_gpu(per_file, specs);
  if (!grouped) return grouped.error();
  const std::vector<GpuView>& gpus = *grouped;

  AcceptReport rep;
  rep.config_source = config.source;
  // Nodes in GPU order (sorted by host); alike compares GPUs of one model within a node.
  std::vector<std::string> nodes;
  for (const GpuView& g : gpus)
    if (std::find(nodes.begin(), nodes.end(), g.node) == nodes.end()) nodes.push_back(g.node);
  for (const std::string& node : nodes) {
    std::vector<const GpuView*> in_node;
    std::map<std::string, std::vector<const GpuView*>> models;
    for (const GpuView& g : gpus)
      if (g.node == node) {
        in_node.push_back(&g);
        models[g.sku ? g.sku->id : "name " + g.info.name].push_back(&g);
      }
    std::map<const GpuView*, std::vector<AcceptCheck>> alike;
    for (const auto& [model, group] : models) {
      const double allowed = config.limits_for(group.front()->sku_id()).alike_fraction;
      alike.merge(check_alike(group, allowed));
    }
    for (const GpuView* g : in_node) {
      rep.gpus.push_back(g->info);
      const std::size_t first = rep.checks.size();
      const std::string sku = g->sku_id();
      const AcceptLimits& lim = config.limits_for(sku);
      auto add = [&rep](std::vector<AcceptCheck> cs) {
        for (auto& c : cs) rep.checks.push_back(std::move(c));
      };
      AcceptCheck link = check_pcie_link(*g);
      const PcieLinkDecision decision = std::get<PcieLinkDecision>(link.basis);
      rep.checks.push_back(std::move(link));
      add(check_pcie_bandwidth(*g, decision, lim));
      add(check_memory(*g, lim));
      add(check_gemm(*g, lim));
      rep.checks.push_back(check_clocks(*g));
      add(check_ecc(*g, config));
      add(check_memory_health(*g));
      rep.checks.push_back(check_burn(*g));
      add(alike[g]);
      // A GPU whose results hold none of the accept suite's cases was not measured: its
      // context alone (link, ECC) must not make a PASS of an accept run that produced nothing.
      const bool measured = std::any_of(rep.checks.begin() + static_cast<std::ptrdiff_t>(first), rep.checks.end(),
                                        [](const AcceptCheck& c) { return !c.benchmark.empty(); });
      if (!measured) {
        AcceptCheck none = make_check(*g, "cases", "");
        none.verdict = AcceptVerdict::Fail;
        none.measured = std::to_string(g->bench.size()) + " other cases";
        none.floor = "the accept suite's cases";
        none.note = "none of the accept suite's cases is in the results (" + std::to_string(g->bench.size()) +
                    " other cases): nothing was measured, so nothing passed";
        rep.checks.push_back(std::move(none));
      }
    }
    for (auto& c : check_nccl(in_node, config)) rep.checks.push_back(std::move(c));
  }
  return rep;
}

}  // namespace gpucheck::compare
