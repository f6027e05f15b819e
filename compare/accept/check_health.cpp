// The health of one GPU: clocks (FAIL on a hw_slowdown, thermal or power-brake reason in any
// case or in the context; sw_power_cap is normal under load and only reported), ECC (mode per
// accept.json, uncorrected errors since the driver loaded), row remapping, and the burn.
#include <algorithm>
#include <cmath>
#include <utility>

#include "accept/checks.hpp"
#include "base/format.hpp"
#include "gpucheck/core/contract.hpp"
#include "accept/names.hpp"
#include "rules/explain.hpp"
#include "gpucheck/core/telemetry.hpp"

namespace gpucheck::compare::accept_detail {
namespace {

using accept_names::fault_name;
using accept_names::kFaultReasons;
using accept_names::kPowerCap;
const std::string kBurn = accept_names::burn();

// A clock_event_reasons value that is no mask (not a whole number in [0, 2^53]), as printed.
std::optional<std::string> bad_mask(const Benchmark& b, const char* key) {
  auto bad = [](double v) { return !std::isfinite(v) || v < 0 || v > 9007199254740992.0 || std::floor(v) != v; };
  std::vector<double> seen;
  if (const auto it = b.counter_samples.find(key); it != b.counter_samples.end()) seen = it->second;
  if (const auto it = b.counters.find(key); it != b.counters.end()) seen.push_back(it->second);
  for (const double v : seen)
    if (bad(v)) return format_double("%.17g", v);
  return std::nullopt;
}

bool reason_name(const std::string& n) {
  if (n == "none") return true;
  return std::any_of(contract::kClockEventReasons.begin(), contract::kClockEventReasons.end(),
                     [&](const contract::ClockEventReason& r) { return r.name == n; });
}

// The reasons of the burn case (burn) or of every other case, and the SM clocks they ran at.
ClockFindings case_reasons(const GpuView& g, bool burn) {
  ClockFindings r;
  for (const auto& [name, b] : g.bench) {
    if ((name == kBurn) != burn || b->state != RunState::Ok) continue;
    if (const auto v = bad_mask(*b, contract::counter::clock_event_reasons))
      r.unreadable.push_back(name + ": clock_event_reasons " + *v + " is no mask");
    if (const auto m = counter_mask(*b, contract::counter::clock_event_reasons)) {
      ++r.cases;
      r.mask |= *m;
      if (*m & kFaultReasons) r.fault_cases.push_back(name);
      if (*m & kPowerCap) ++r.power_capped;
    }
    for (const char* k : {contract::counter::sm_clock_MHz, contract::counter::sm_clock_min_MHz}) {
      if (const auto it = b->counters.find(k); it != b->counters.end() && it->second > 0) {
        r.sm_min_MHz = std::min(r.sm_min_MHz.value_or(it->second), it->second);
        r.sm_max_MHz = std::max(r.sm_max_MHz.value_or(it->second), it->second);
      }
    }
  }
  r.fault_mask = r.mask & kFaultReasons;
  return r;
}

ClockFindings clock_findings(const GpuView& g) {
  ClockFindings f = case_reasons(g, false);
  auto& names = f.context_reasons;
  for (const auto& v : g.values("throttle_reasons"))
    for (const auto& n : split(v, ",")) {
      if (!known(n)) continue;
      if (!reason_name(n)) {
        f.unreadable.push_back("throttle_reasons \"" + n + "\" is no known reason");
        continue;
      }
      if (n != "none" && std::find(names.begin(), names.end(), n) == names.end()) {
        names.push_back(n);
        if (fault_name(n)) f.context_faults.push_back(n);
      }
    }
  f.context_known = !g.values("throttle_reasons").empty();
  f.sm_rated_max_MHz = g.max_int("sm_clock_max_MHz");
  return f;
}

AcceptVerdict clocks_verdict(const ClockFindings& f) {
  if (f.fault_mask != 0 || !f.context_faults.empty()) return AcceptVerdict::Fail;
  if ((f.cases == 0 && !f.context_known) || !f.unreadable.empty()) return AcceptVerdict::NotChecked;
  return AcceptVerdict::Pass;
}

std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

// The clocks row's measured and note, from the findings and the verdict they gave.
void word_clocks(const ClockFindings& f, AcceptCheck& c) {
  if (c.verdict == AcceptVerdict::NotChecked) {
    c.note = f.unreadable.empty() ? "no clock_event_reasons counters and throttle_reasons unknown"
                                  : "not checked: " + list_some(f.unreadable, 3);
    return;
  }
  c.measured = f.cases > 0 ? describe_clock_event_reasons(f.mask)
                           : (f.context_reasons.empty() ? "none" : list_some(f.context_reasons, 9));
  std::vector<std::string> notes;
  if (c.verdict == AcceptVerdict::Fail) {
    if (f.fault_mask) notes.push_back(describe_clock_event_reasons(f.fault_mask) + " during " + list_some(f.fault_cases));
    if (!f.context_faults.empty()) notes.push_back(list_some(f.context_faults, 9) + " in the context's throttle_reasons");
    c.note = join(notes) + ": the card slows itself (heat, power delivery or a fault)";
    return;
  }
  const std::string cap(accept_names::power_cap_name());
  if (f.power_capped > 0)
    notes.push_back(cap + " in " + std::to_string(f.power_capped) + " of " + std::to_string(f.cases) +
                    " cases (normal under GEMM load)");
  else if (std::find(f.context_reasons.begin(), f.context_reasons.end(), cap) != f.context_reasons.end())
    notes.push_back(cap + " seen (normal under GEMM load)");
  if (f.cases == 0) notes.push_back("context throttle_reasons only (no per-case counters)");
  if (f.sm_min_MHz) {
    std::string s = "SM clock " + whole(*f.sm_min_MHz) + "-" + whole(*f.sm_max_MHz) + " MHz";
    if (f.sm_rated_max_MHz > 0) s += " (max " + std::to_string(f.sm_rated_max_MHz) + ")";
    notes.push_back(s);
  }
  c.note = join(notes);
}

// The burn row's measured and note: its facts, led by what failed.
void word_burn(const BurnFindings& f, AcceptCheck& c) {
  if (f.tflops) {
    c.value = *f.tflops;
    c.measured = num(*f.tflops) + " TFLOP/s";
  }
  std::vector<std::string> info;
  if (f.iterations) info.push_back(whole(*f.iterations) + " iterations");
  if (f.mismatches) info.push_back(whole(*f.mismatches) + " mismatches");
  if (f.sm_clock_min_MHz) info.push_back("SM clock min " + whole(*f.sm_clock_min_MHz) + " MHz");
  if (f.temperature_max_C) info.push_back("max " + whole(*f.temperature_max_C) + " C");
  if (f.throttled_samples && *f.throttled_samples > 0)
    info.push_back(whole(*f.throttled_samples) + " throttled samples (" + describe_clock_event_reasons(f.reasons.mask) +
                   ")");
  std::string facts;
  for (const auto& i : info) facts += (facts.empty() ? "" : ", ") + i;
  if (f.mismatches && *f.mismatches > 0)
    c.note = whole(*f.mismatches) + " mismatches: wrong results under sustained load (" + facts + ")";
  else if (f.reasons.fault_mask)
    c.note = describe_clock_event_reasons(f.reasons.fault_mask) + " during the burn (" + facts + ")";
  else if (!f.mismatches)
    c.note = kBurn + " has no mismatches counter: results not verified";
  else
    c.note = facts;
}

}  // namespace

AcceptCheck check_clocks(const GpuView& g) {
  AcceptCheck c = make_check(g, "clocks", "");
  c.floor = "no hw_slowdown, thermal or power-brake reason";
  const ClockFindings f = clock_findings(g);
  c.verdict = clocks_verdict(f);
  word_clocks(f, c);
  c.basis = f;
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
    std::vector<std::string> odd;
    for (const auto& m : modes)
      if (m != "enabled" && m != "disabled") odd.push_back("\"" + m + "\"");
    const bool off = std::find(modes.begin(), modes.end(), "enabled") == modes.end() ||
                     std::find(modes.begin(), modes.end(), "disabled") != modes.end();
    if (!odd.empty()) {
      mode.note = "not checked: ecc " + list_some(odd, 3) + " is neither enabled nor disabled";
    } else if (!off) {
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
  std::vector<std::string> odd;
  for (const auto& v : g.values("ecc_uncorrected_volatile"))
    if (const auto i = to_int(v); !i || *i < 0) odd.push_back("\"" + v + "\"");
  if (!odd.empty()) {
    unc.measured = list_some(odd, 3);
    unc.note = "not checked: ecc_uncorrected_volatile " + list_some(odd, 3) + " is not a count";
  } else if (vol.empty()) {
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
  const auto mism = counter_or_why(b, kBurn, contract::counter::mismatches, c);
  if (c.verdict == AcceptVerdict::Fail || b->state != RunState::Ok) return c;
  auto counter = [&](const char* k) -> std::optional<double> {
    const auto it = b->counters.find(k);
    return it == b->counters.end() ? std::nullopt : std::optional<double>(it->second);
  };
  BurnFindings f;
  f.tflops = counter(contract::counter::TFLOPS);
  f.iterations = counter(contract::counter::burn_iterations);  // gbench owns an entry's "iterations" field
  f.mismatches = mism;
  f.sm_clock_min_MHz = counter(contract::counter::sm_clock_min_MHz);
  f.temperature_max_C = counter(contract::counter::temperature_max_C);
  f.throttled_samples = counter(contract::counter::throttled_samples);
  f.reasons = case_reasons(g, true);
  c.verdict = (f.mismatches && *f.mismatches > 0) || f.reasons.fault_mask ? AcceptVerdict::Fail
              : f.mismatches                                           ? AcceptVerdict::Pass
                                                                       : AcceptVerdict::NotChecked;
  word_burn(f, c);
  c.basis = std::move(f);
  return c;
}

}  // namespace gpucheck::compare::accept_detail
