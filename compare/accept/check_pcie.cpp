// The PCIe checks of one GPU: the link trained (decided in pcie_link.cpp from what the files
// read; FAIL names the short dimension and its cause), and H2D/D2H pinned bandwidth as a share
// of the rate of the link it ran at (else the link expected).
#include <algorithm>

#include "accept/checks.hpp"
#include "gpucheck/core/contract.hpp"
#include "accept/names.hpp"
#include "gpucheck/core/pcie.hpp"

namespace gpucheck::compare::accept_detail {
namespace {

// The lowest generation and width the cases read under load.
PcieLinkValue load_link(const GpuView& g) {
  PcieLinkValue l;
  for (const auto& [name, b] : g.bench) {
    if (b->state != RunState::Ok) continue;
    for (const auto& [counter, into] : {std::pair{contract::counter::pcie_gen_load, &l.gen}, std::pair{contract::counter::pcie_width_load, &l.width}}) {
      const auto it = b->counters.find(counter);
      if (it == b->counters.end() || !(it->second >= 1) || it->second > 64) continue;
      const int v = static_cast<int>(it->second);
      *into = *into > 0 ? std::min(*into, v) : v;
    }
  }
  return l;
}

PcieLinkReadings readings(const GpuView& g) {
  PcieLinkReadings r;
  r.load = load_link(g);
  r.idle = {g.max_int("pcie_gen_current"), g.max_int("pcie_width_current")};
  r.gpu_gen_max = g.max_int("pcie_gen_gpu_max");
  r.gpu_slot = {g.min_int("pcie_gen_max"), g.min_int("pcie_width_max")};
  r.slot = {g.min_int("pcie_gen_slot_max"), g.min_int("pcie_width_slot_max")};
  if (g.sku) {
    r.sku = g.sku->id;
    r.sku_link = {g.sku->pcie.gen, g.sku->pcie.width};
  }
  return r;
}

}  // namespace

AcceptCheck check_pcie_link(const GpuView& g) {
  AcceptCheck c = make_check(g, "pcie_link", "");
  const PcieLinkDecision d = decide_pcie_link(readings(g));
  PcieLinkWords w = word_pcie_link(d);
  c.verdict = d.outcome == LinkOutcome::Short ? AcceptVerdict::Fail
              : d.outcome == LinkOutcome::Ok  ? AcceptVerdict::Pass
                                              : AcceptVerdict::NotChecked;
  c.measured = std::move(w.measured);
  c.floor = std::move(w.floor);
  c.note = std::move(w.note);
  if (d.gen.seen > 0) c.value = d.gen.seen;
  c.basis = d;
  return c;
}

std::vector<AcceptCheck> check_pcie_bandwidth(const GpuView& g, const PcieLinkDecision& link, const AcceptLimits& lim) {
  std::vector<AcceptCheck> out;
  const PcieLink l{link.reference.gen, link.reference.width};
  const double rate = pcie_link_GBps(l);
  for (const std::string_view dir : accept_names::kPcieDirections) {
    Rate r{"pcie_bandwidth", std::string(dir), accept_names::pcie(dir), contract::counter::GBps, std::string(contract::unit_of(contract::counter::GBps)), {}, {}, {},
           lim.pcie_bandwidth_fraction, "no link to measure against (no reading, unknown SKU)"};
    if (rate > 0) {
      r.reference = rate;
      r.reference_short = to_string(l);
      r.reference_text = to_string(l) + " (" + num(rate) + " GB/s, " + word_link_reference(link) + ")";
    }
    out.push_back(check_rate(g, r));
  }
  return out;
}

}  // namespace gpucheck::compare::accept_detail
