// The node's checks: every GPU of one model in a node held to the median of the others
// (leave-one-out, so with two GPUs the slow one is named; only the slow side fails), and the
// NCCL all-reduce bus bandwidth over the node against accept.json's floor, where one is set.
#include <algorithm>
#include <limits>
#include <cmath>

#include "accept/checks.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/stats.hpp"
#include "accept/names.hpp"
#include "rules/stats.hpp"

namespace gpucheck::compare::accept_detail {
namespace {

struct Figure {
  std::string label, benchmark, counter, unit;
};

std::vector<Figure> alike_figures() {
  std::vector<Figure> f;
  for (const std::string_view dir : accept_names::kPcieDirections)
    f.push_back({"pcie " + std::string(dir), accept_names::pcie(dir), contract::counter::GBps, std::string(contract::unit_of(contract::counter::GBps))});
  for (const std::string_view variant : accept_names::kMemoryVariants)
    f.push_back({"memory " + std::string(variant), accept_names::memory(variant), contract::counter::GBps, std::string(contract::unit_of(contract::counter::GBps))});
  for (const std::string_view key : accept_names::kGemmKeys)
    f.push_back({"gemm " + std::string(key), accept_names::gemm(key), contract::counter::TFLOPS, std::string(contract::unit_of(contract::counter::TFLOPS))});
  f.push_back({"burn bf16", accept_names::burn(), contract::counter::TFLOPS, std::string(contract::unit_of(contract::counter::TFLOPS))});
  return f;
}

std::optional<double> figure(const GpuView& g, const Figure& f) {
  const Benchmark* b = g.find(f.benchmark);
  if (b == nullptr || b->state != RunState::Ok) return std::nullopt;
  const auto it = b->counters.find(f.counter);
  if (it == b->counters.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

}  // namespace

// Each GPU against the median of the OTHER GPUs of its group (leave-one-out: with two GPUs
// the slow one is named, not both); only the slow side fails.
std::map<const GpuView*, std::vector<AcceptCheck>> check_alike(const std::vector<const GpuView*>& group,
                                                               double allowed) {
  std::map<const GpuView*, std::vector<AcceptCheck>> out;
  if (group.size() < 2) {
    for (const GpuView* g : group) {
      AcceptCheck c = make_check(*g, "alike", "");
      c.note = "the only " + g->info.name + " of its node in the results: nothing to compare with";
      out[g].push_back(c);
    }
    return out;
  }
  for (const GpuView* g : group) {
    int compared = 0;
    double worst = 0;
    std::string worst_label;
    for (const Figure& f : alike_figures()) {
      const auto mine = figure(*g, f);
      if (!mine) continue;
      std::vector<double> others;
      std::vector<std::string> who;
      for (const GpuView* o : group)
        if (o != g)
          if (const auto v = figure(*o, f)) {
            others.push_back(*v);
            who.push_back(o->info.index);
          }
      if (others.empty()) continue;
      ++compared;
      const double ref = gpucheck::median(others).value_or(std::numeric_limits<double>::quiet_NaN());
      if (!(ref > 0)) continue;
      const double shortfall = 1.0 - *mine / ref;
      if (compared == 1 || shortfall > worst) {
        worst = shortfall;
        worst_label = f.label;
      }
      if (shortfall > allowed) {
        AcceptCheck c = make_check(*g, "alike", f.label);
        c.verdict = AcceptVerdict::Fail;
        c.benchmark = f.benchmark;
        c.unit = f.unit;
        c.value = *mine;
        c.limit = ref * (1.0 - allowed);
        c.measured = num(*mine) + " " + f.unit;
        c.floor = ">= " + num(*c.limit) + " " + f.unit + " (" + pct(1.0 - allowed) + " of " + num(ref) + ")";
        c.note = "outlier: " + f.label + " " + c.measured + " is " + pct(shortfall) +
                 " below the median of the other GPUs (" + num(ref) + " " + f.unit + (who.size() == 1 ? ", GPU " : ", GPUs ") +
                 list_some(who, 16) +
                 "), more than the " + pct(allowed) + " allowed";
        out[g].push_back(c);
      }
    }
    if (!out[g].empty()) continue;
    AcceptCheck c = make_check(*g, "alike", "");
    if (compared == 0) {
      c.note = "no figure that another GPU of the node also has";
    } else {
      c.verdict = AcceptVerdict::Pass;
      c.floor = "within " + pct(allowed) + " of the others' median";
      c.measured = std::to_string(compared) + " figures";
      c.note = worst > 0 ? "lowest: " + worst_label + " " + pct(worst) + " below the others' median"
                         : "none below the others' median";
    }
    out[g].push_back(c);
  }
  return out;
}

// ---- 6. NCCL ---------------------------------------------------------------------------------

std::vector<AcceptCheck> check_nccl(const std::vector<const GpuView*>& node, const AcceptConfig& cfg) {
  std::vector<AcceptCheck> out;
  const std::string host = node.front()->node;
  const std::string label = "node " + (known(host) ? host : std::string("(host unknown)"));
  std::map<std::string, std::pair<const Benchmark*, const GpuView*>> cases;  // one per name
  const std::string kPrefix = accept_names::nccl_allreduce_prefix();
  for (const GpuView* g : node)
    for (const auto& [name, b] : g->bench)
      if (name.starts_with(kPrefix)) cases.emplace(name, std::pair{b, g});
  if (cases.empty()) {
    if (node.size() < 2) return out;  // one GPU: nothing to all-reduce over
    AcceptCheck c;
    c.gpu = label;
    c.check = "nccl";
    c.item = "allreduce";
    c.note = "no " + std::string(kPrefix) + "<N> in the results";
    out.push_back(c);
    return out;
  }
  for (const auto& [name, found] : cases) {
    const auto ranks = to_int(name.substr(kPrefix.size()));
    AcceptCheck c;
    c.gpu = label;
    c.check = "nccl";
    c.item = "allreduce g" + name.substr(kPrefix.size());
    c.unit = "GB/s";
    const auto busbw = counter_or_why(found.first, name, contract::counter::busbw_GBps, c);
    const int n = ranks ? static_cast<int>(*ranks) : 0;
    const auto floor = cfg.nccl_floor(found.second->sku_id(), n);
    if (floor) {
      c.limit = *floor;
      c.floor = ">= " + num(*floor) + " GB/s (accept.json, " + found.second->sku_id() + " x" + std::to_string(n) + ")";
    }
    if (!busbw) {
      out.push_back(c);
      continue;
    }
    c.value = *busbw;
    c.measured = num(*busbw) + " GB/s busbw";
    std::string others;
    if (n > 0 && static_cast<std::size_t>(n) != node.size())
      others = "; ran over " + std::to_string(n) + (n == 1 ? " GPU" : " GPUs") + ", the node's results hold " +
               std::to_string(node.size());
    if (n == 1) {
      c.verdict = AcceptVerdict::Reported;
      c.note = "one rank: busbw is 0 by definition" + others;
    } else if (!floor) {
      c.verdict = AcceptVerdict::Reported;
      c.note = "no floor set for " + found.second->sku_id() + " x" + std::to_string(n) + " (accept.json)" + others;
    } else {
      c.verdict = *busbw >= *floor ? AcceptVerdict::Pass : AcceptVerdict::Fail;
      c.note = (c.verdict == AcceptVerdict::Fail ? c.measured + " is below the floor" : std::string()) + others;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace gpucheck::compare::accept_detail
