// The health of one GPU: clocks (FAIL on a hw_slowdown, thermal or power-brake reason in any
// case or in the context; sw_power_cap is normal under load and only reported), ECC (mode per
// accept.json, uncorrected errors since the driver loaded), row remapping, and the burn.
#include <algorithm>

#include "accept/checks.hpp"
#include "accept/names.hpp"
#include "rules/explain.hpp"
#include "gpucheck/core/telemetry.hpp"

namespace gpucheck::compare::accept_detail {
namespace {

using accept_names::kFaultNames;
using accept_names::kFaultReasons;
using accept_names::kPowerCap;
const std::string kBurn(accept_names::kBurn);

bool fault_name(const std::string& name) {
  return std::any_of(std::begin(kFaultNames), std::end(kFaultNames),
                     [&](std::string_view f) { return name.starts_with(f); });
}

struct Reasons {
  std::uint64_t mask = 0;
  int cases = 0;                              // cases that carried the counter
  std::vector<std::string> fault_cases;       // cases with a fault reason
  int power_capped = 0;                       // cases with sw_power_cap
  std::optional<double> sm_min, sm_max;       // sm_clock_MHz over the cases
};

Reasons case_reasons(const GpuView& g, bool burn) {
  Reasons r;
  for (const auto& [name, b] : g.bench) {
    if ((name == kBurn) != burn || b->state != RunState::Ok) continue;
    if (const auto m = counter_mask(*b, "clock_event_reasons")) {
      ++r.cases;
      r.mask |= *m;
      if (*m & kFaultReasons) r.fault_cases.push_back(name);
      if (*m & kPowerCap) ++r.power_capped;
    }
    for (const char* k : {"sm_clock_MHz", "sm_clock_min_MHz"}) {
      if (const auto it = b->counters.find(k); it != b->counters.end() && it->second > 0) {
        r.sm_min = std::min(r.sm_min.value_or(it->second), it->second);
        r.sm_max = std::max(r.sm_max.value_or(it->second), it->second);
      }
    }
  }
  return r;
}

}  // namespace

AcceptCheck check_clocks(const GpuView& g) {
  AcceptCheck c = make_check(g, "clocks", "");
  c.floor = "no hw_slowdown, thermal or power-brake reason";
  const Reasons r = case_reasons(g, false);
  std::vector<std::string> ctx_names, ctx_faults;
  for (const auto& v : g.values("throttle_reasons"))
    for (const auto& n : split(v, ","))
      if (known(n) && n != "none" && std::find(ctx_names.begin(), ctx_names.end(), n) == ctx_names.end()) {
        ctx_names.push_back(n);
        if (fault_name(n)) ctx_faults.push_back(n);
      }
  const bool ctx_known = !g.values("throttle_reasons").empty();
  if (r.cases == 0 && !ctx_known) {
    c.note = "no clock_event_reasons counters and throttle_reasons unknown";
    return c;
  }
  c.measured = r.cases > 0 ? describe_clock_event_reasons(r.mask) : (ctx_names.empty() ? "none" : list_some(ctx_names, 9));
  std::vector<std::string> notes;
  if (r.mask & kFaultReasons)
    notes.push_back(describe_clock_event_reasons(r.mask & kFaultReasons) + " during " + list_some(r.fault_cases));
  if (!ctx_faults.empty()) notes.push_back(list_some(ctx_faults, 9) + " in the context's throttle_reasons");
  if (!notes.empty()) {
    c.verdict = AcceptVerdict::Fail;
    for (const auto& n : notes) c.note += (c.note.empty() ? "" : "; ") + n;
    c.note += ": the card slows itself (heat, power delivery or a fault)";
    return c;
  }
  c.verdict = AcceptVerdict::Pass;
  if (r.power_capped > 0)
    notes.push_back(std::string(accept_names::kPowerCapName) + " in " + std::to_string(r.power_capped) + " of " + std::to_string(r.cases) +
                    " cases (normal under GEMM load)");
  else if (std::find(ctx_names.begin(), ctx_names.end(), accept_names::kPowerCapName) != ctx_names.end())
    notes.push_back(std::string(accept_names::kPowerCapName) + " seen (normal under GEMM load)");
  if (r.cases == 0) notes.push_back("context throttle_reasons only (no per-case counters)");
  if (r.sm_min) {
    std::string s = "SM clock " + whole(*r.sm_min) + "-" + whole(*r.sm_max) + " MHz";
    if (const int mx = g.max_int("sm_clock_max_MHz"); mx > 0) s += " (max " + std::to_string(mx) + ")";
    notes.push_back(s);
  }
  for (const auto& n : notes) c.note += (c.note.empty() ? "" : "; ") + n;
  return c;
}

std::vector<AcceptCheck> check_ecc(const GpuView& g, const AcceptConfig& cfg) {
  std::vector<AcceptCheck> out;
  AcceptCheck mode = make_check(g, "ecc", "mode");
  const std::vector<std::string> modes = g.values("ecc");
  const std::optional<bool> required = cfg.ecc_for(g.sku_id());
  mode.floor = required.value_or(false) ? "enabled" : "-";
  if (modes.empty()) {
    mode.note = g.why_unknown("ecc");
  } else {
    mode.measured = list_some(modes, 9);
    const bool off = std::find(modes.begin(), modes.end(), "enabled") == modes.end() ||
                     std::find(modes.begin(), modes.end(), "disabled") != modes.end();
    if (!off) {
      mode.verdict = AcceptVerdict::Pass;
    } else if (required.value_or(false)) {
      mode.verdict = AcceptVerdict::Fail;
      mode.note = "ECC is " + mode.measured + "; " + g.sku_id() + " has it (accept.json skus." + g.sku_id() + ".ecc)";
    } else {
      mode.verdict = AcceptVerdict::Reported;
      mode.note = "ECC " + mode.measured + (required ? "; not required for " + g.sku_id() : "; no ECC rule for " + g.sku_id());
    }
  }
  out.push_back(mode);

  AcceptCheck unc = make_check(g, "ecc", "uncorrected");
  unc.floor = "0 since the driver loaded";
  const auto vol = g.ints("ecc_uncorrected_volatile");
  if (vol.empty()) {
    unc.note = g.why_unknown("ecc_uncorrected_volatile");
  } else {
    const long long n = *std::max_element(vol.begin(), vol.end());
    unc.value = static_cast<double>(n);
    unc.measured = std::to_string(n);
    unc.verdict = n > 0 ? AcceptVerdict::Fail : AcceptVerdict::Pass;
    if (n > 0) unc.note = std::to_string(n) + " uncorrectable ECC errors since the driver loaded";
  }
  if (const auto agg = g.ints("ecc_uncorrected_aggregate"); !agg.empty()) {
    const long long n = *std::max_element(agg.begin(), agg.end());
    if (n > 0)
      unc.note += (unc.note.empty() ? "" : "; ") + std::to_string(n) + " over the card's life (aggregate, reported only)";
  }
  out.push_back(unc);
  return out;
}

std::vector<AcceptCheck> check_memory_health(const GpuView& g) {
  std::vector<AcceptCheck> out;
  struct Flag {
    const char* key;
    const char* fault;
  };
  const bool remap_known = !g.values("remapped_rows_pending").empty() || !g.values("remapped_rows_failure").empty();
  for (const Flag& f : {Flag{"remapped_rows_pending", "rows wait for a remap: reset the GPU, then test again"},
                        Flag{"remapped_rows_failure", "a row remap failed: the card needs service"},
                        Flag{"retired_pages_pending", "pages wait for retirement: reset the GPU, then test again"}}) {
    const std::vector<std::string> vs = g.values(f.key);
    // Cards that remap rows (Ampere on) do not retire pages: NVML leaves that entry unknown.
    if (vs.empty() && remap_known && std::string_view(f.key) == "retired_pages_pending") continue;
    AcceptCheck c = make_check(g, "memory_health", f.key);
    c.floor = "no";
    if (vs.empty()) {
      c.note = g.why_unknown(f.key);
    } else {
      c.measured = list_some(vs, 9);
      const bool yes = std::find(vs.begin(), vs.end(), "yes") != vs.end();
      const bool no = std::find(vs.begin(), vs.end(), "no") != vs.end();
      c.verdict = yes ? AcceptVerdict::Fail : no ? AcceptVerdict::Pass : AcceptVerdict::NotChecked;
      if (yes) c.note = f.fault;
      else if (!no) c.note = std::string(f.key) + " reads \"" + c.measured + "\", expected yes or no";
    }
    if (std::string_view(f.key) == "remapped_rows_pending") {
      const int unc = g.max_int("remapped_rows_uncorrectable"), cor = g.max_int("remapped_rows_correctable");
      if (unc > 0 || cor > 0)
        c.note += (c.note.empty() ? "" : "; ") + std::to_string(unc) + " rows remapped for uncorrectable and " +
                  std::to_string(cor) + " for correctable errors";
    }
    out.push_back(c);
  }
  return out;
}

// ---- 7. burn ------------------------------------------------------------------------------

AcceptCheck check_burn(const GpuView& g) {
  AcceptCheck c = make_check(g, "burn", "bf16");
  c.floor = "0 mismatches, no hw/thermal throttle";
  c.unit = "TFLOP/s";
  const Benchmark* b = g.find(kBurn);
  if (b == nullptr) {
    c.benchmark = kBurn;
    c.note = "no burn in the results (gpucheck accept --burn SECONDS)";
    return c;
  }
  const auto mism = counter_or_why(b, kBurn, "mismatches", c);
  if (c.verdict == AcceptVerdict::Fail || b->state != RunState::Ok) return c;
  auto counter = [&](const char* k) -> std::optional<double> {
    const auto it = b->counters.find(k);
    return it == b->counters.end() ? std::nullopt : std::optional<double>(it->second);
  };
  if (const auto t = counter("TFLOPS")) {
    c.value = *t;
    c.measured = num(*t) + " TFLOP/s";
  }
  std::vector<std::string> info;
  // gbench owns an entry's "iterations" field, so the burn counts its GEMMs as burn_iterations.
  if (const auto it = counter("burn_iterations")) info.push_back(whole(*it) + " iterations");
  if (mism) info.push_back(whole(*mism) + " mismatches");
  if (const auto s = counter("sm_clock_min_MHz")) info.push_back("SM clock min " + whole(*s) + " MHz");
  if (const auto t = counter("temperature_max_C")) info.push_back("max " + whole(*t) + " C");
  const Reasons r = case_reasons(g, true);
  if (const auto ts = counter("throttled_samples"); ts && *ts > 0)
    info.push_back(whole(*ts) + " throttled samples (" + describe_clock_event_reasons(r.mask) + ")");
  std::string facts;
  for (const auto& i : info) facts += (facts.empty() ? "" : ", ") + i;
  if (mism && *mism > 0) {
    c.verdict = AcceptVerdict::Fail;
    c.note = whole(*mism) + " mismatches: wrong results under sustained load (" + facts + ")";
  } else if (r.mask & kFaultReasons) {
    c.verdict = AcceptVerdict::Fail;
    c.note = describe_clock_event_reasons(r.mask & kFaultReasons) + " during the burn (" + facts + ")";
  } else if (!mism) {
    c.note = kBurn + std::string(" has no mismatches counter: results not verified");
  } else {
    c.verdict = AcceptVerdict::Pass;
    c.note = facts;
  }
  return c;
}

}  // namespace gpucheck::compare::accept_detail
