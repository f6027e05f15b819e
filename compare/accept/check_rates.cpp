// Rates against a reference: a case's GB/s or TFLOP/s as a share of the link's rate (PCIe) or
// of the SKU's datasheet (HBM copy, GEMM per dtype); FAIL below the config's fraction. A case
// missing or skipped is "not checked"; one that errored, wrote its rate as NaN or Infinity, or
// claims over 1.5x its datasheet peak fails.
#include <cmath>

#include "accept/checks.hpp"
#include "base/format.hpp"
#include "gpucheck/core/contract.hpp"
#include "accept/names.hpp"
#include "gpucheck/core/dtype.hpp"

namespace gpucheck::compare::accept_detail {
namespace {

// Above this share of its datasheet peak a rate was not measured: no card beats its datasheet
// by half again. (A PCIe rate is held to the link read under load, which a test edits freely.)
constexpr double kImpossibleShare = 1.5;

}  // namespace

// The case's counter, or a check that says why there is none.
std::optional<double> counter_or_why(const Benchmark* b, const std::string& name, const std::string& counter,
                                     AcceptCheck& c) {
  c.benchmark = name;
  if (b == nullptr) {
    c.note = "no " + name + " in the results";
    return std::nullopt;
  }
  if (b->state == RunState::Errored) {
    c.verdict = AcceptVerdict::Fail;
    c.note = name + " errored: " + (b->message.empty() ? "no message" : b->message);
    return std::nullopt;
  }
  if (b->state == RunState::Skipped) {
    c.note = name + " skipped: " + (b->message.empty() ? "no message" : b->message);
    return std::nullopt;
  }
  if (const auto nf = b->nonfinite_counters.find(counter); nf != b->nonfinite_counters.end()) {
    c.verdict = AcceptVerdict::Fail;  // the case ran and wrote no figure: not a case without the counter
    c.measured = std::isnan(nf->second) ? "NaN" : nf->second > 0 ? "Infinity" : "-Infinity";
    c.note = name + ": " + counter + " is " + c.measured + ", not a measured figure";
    return std::nullopt;
  }
  const auto it = b->counters.find(counter);
  if (it == b->counters.end()) {
    c.note = name + " has no " + counter + " counter";
    return std::nullopt;
  }
  return it->second;
}

AcceptCheck check_rate(const GpuView& g, const Rate& r) {
  AcceptCheck c = make_check(g, r.check, r.item);
  c.unit = r.unit;
  const auto v = counter_or_why(g.find(r.benchmark), r.benchmark, r.counter, c);
  if (r.reference && *r.reference > 0) {
    c.limit = r.fraction * *r.reference;
    c.floor = ">= " + num(*c.limit) + " " + r.unit + " (" + pct(r.fraction) + " of " + r.reference_short + ")";
  }
  if (!v) return c;
  c.value = *v;
  c.measured = num(*v) + " " + r.unit;
  if (!c.limit) {
    c.note = r.no_reference_why;
    return c;
  }
  const double share = *v / *r.reference;
  if (r.datasheet && share > kImpossibleShare) {
    c.verdict = AcceptVerdict::Fail;
    c.measured = format_double("%.4g", *v) + " " + r.unit;  // 1e308, not its 309 digits
    c.note = c.measured + " is " + format_double("%.3g", share) + "x " + r.reference_text + ": more than " +
             format_double("%.3g", kImpossibleShare) + "x is not a possible figure (a broken timer or counter)";
  } else if (*v >= *c.limit) {
    c.verdict = AcceptVerdict::Pass;
    c.note = pct(share) + " of " + r.reference_text;
  } else {
    c.verdict = AcceptVerdict::Fail;
    c.note = c.measured + " is " + pct(share) + " of " + r.reference_text + ", below the floor of " + pct(r.fraction);
  }
  return c;
}

std::vector<AcceptCheck> check_memory(const GpuView& g, const AcceptLimits& lim) {
  std::vector<AcceptCheck> out;
  for (const auto& [item, fraction] : lim.memory_fraction) {
    Rate r{"memory", item, accept_names::memory(item), contract::counter::GBps, std::string(contract::unit_of(contract::counter::GBps)), {}, {}, {}, fraction,
           g.sku ? "the SKU has no memory bandwidth in specs.json" : "unknown SKU: no datasheet figure"};
    if (g.sku && g.sku->memory_GBps > 0) {
      r.reference = g.sku->memory_GBps;
      r.datasheet = true;
      r.reference_short = "datasheet " + num(g.sku->memory_GBps);
      r.reference_text = r.reference_short + " GB/s";
    }
    out.push_back(check_rate(g, r));
  }
  return out;
}

std::vector<AcceptCheck> check_gemm(const GpuView& g, const AcceptLimits& lim) {
  std::vector<AcceptCheck> out;
  for (const std::string_view k : accept_names::kGemmKeys) {
    const std::string key(k);
    const auto f = lim.gemm_fraction.find(key);
    if (f == lim.gemm_fraction.end()) continue;
    const std::string name = accept_names::gemm(key);
    std::optional<double> peak;
    if (g.sku)
      if (const auto dt = accept_names::gemm_dtype(key)) peak = g.sku->peak(*dt);
    // A SKU without the path (fp8 on A100) that did not run it has nothing to check.
    if (g.sku && !peak && g.find(name) == nullptr) continue;
    Rate r{"gemm", key, name, contract::counter::TFLOPS, std::string(contract::unit_of(contract::counter::TFLOPS)), {}, {}, {}, f->second,
           g.sku ? "the SKU has no " + key + " peak in specs.json" : "unknown SKU: no datasheet figure"};
    if (peak) {
      r.reference = *peak;
      r.datasheet = true;
      r.reference_short = "datasheet " + num(*peak);
      r.reference_text = r.reference_short + " TFLOP/s";
    }
    out.push_back(check_rate(g, r));
  }
  return out;
}

}  // namespace gpucheck::compare::accept_detail
