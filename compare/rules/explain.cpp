// Telemetry beside a regression. The counters come from the measurement engine (issue 8):
// sm_clock_MHz (median SM clock while timing), clock_event_reasons (NVML mask, OR over the
// run), throttled_samples, samples, cv_pct, and a label holding stop=time_limit when the
// noise target was not reached. Reason names come from the harness core (one table).
#include "rules/explain.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "base/format.hpp"
#include "rules/stats.hpp"
#include "gpucheck/core/telemetry.hpp"

namespace gpucheck::compare {
namespace {

// The case's figure for a counter; the median of its repetitions when the aggregate the
// figure came from does not carry it.
std::optional<double> counter(const Benchmark& b, const std::string& name) {
  if (const auto it = b.counters.find(name); it != b.counters.end()) return it->second;
  if (const auto it = b.counter_samples.find(name); it != b.counter_samples.end() && !it->second.empty())
    return gpucheck::median(it->second);
  return std::nullopt;
}

// The largest value over the repetitions (a throttled repetition is not hidden by a median).
std::optional<double> counter_max(const Benchmark& b, const std::string& name) {
  if (const auto it = b.counter_samples.find(name); it != b.counter_samples.end() && !it->second.empty())
    return *std::max_element(it->second.begin(), it->second.end());
  return counter(b, name);
}

std::string num(double v) { return format_double("%.0f", v); }

// gpu_idle (bit 0) is the GPU waiting for work between samples, not a slow-down.
constexpr std::uint64_t kIdleBit = 0x1;

}  // namespace

std::optional<std::uint64_t> counter_mask(const Benchmark& b, const std::string& name) {
  // A mask is stored as a JSON number (a double): exact up to 2^53, plenty for NVML's bits. A
  // value that is not a whole number in that range (a mean or median of masks) is no mask.
  auto to_mask = [](double v) -> std::optional<std::uint64_t> {
    if (!std::isfinite(v) || v < 0 || v > 9007199254740992.0 || std::floor(v) != v) return std::nullopt;
    return static_cast<std::uint64_t>(v);
  };
  if (const auto it = b.counter_samples.find(name); it != b.counter_samples.end() && !it->second.empty()) {
    std::optional<std::uint64_t> m;
    for (const double v : it->second)
      if (const auto one = to_mask(v)) m = m.value_or(0) | *one;
    return m;
  }
  if (const auto v = counter(b, name)) return to_mask(*v);
  return std::nullopt;
}

std::vector<std::string> explain_case(const Benchmark& base, const Benchmark& cur, std::optional<int> other_processes) {
  std::vector<std::string> why;
  const auto clk_b = counter(base, contract::counter::sm_clock_MHz);
  const auto clk_c = counter(cur, contract::counter::sm_clock_MHz);
  if (clk_b && clk_c && *clk_b > 0 && std::fabs(*clk_c - *clk_b) / *clk_b > 0.02)
    why.push_back("SM clock " + num(*clk_b) + " -> " + num(*clk_c) + " MHz");
  else if (!clk_b && clk_c)
    why.push_back("SM clock " + num(*clk_c) + " MHz");
  // A power burst's mean clock and power (report-only counters): what the limiter did this time.
  for (const auto& [name, words, unit] : {std::tuple{contract::counter::sm_clock_mean_MHz, "SM clock mean ", " MHz"},
                                          std::tuple{contract::counter::power_W, "mean power ", " W"}}) {
    const auto vb = counter(base, name), vc = counter(cur, name);
    if (vb && vc && *vb > 0 && std::fabs(*vc - *vb) / *vb > 0.02)
      why.push_back(std::string(words) + num(*vb) + " -> " + num(*vc) + unit);
  }
  const auto rb = counter_mask(base, contract::counter::clock_event_reasons);
  const auto rc = counter_mask(cur, contract::counter::clock_event_reasons);
  if (rc) {
    const std::uint64_t b = rb.value_or(0) & ~kIdleBit;
    const std::uint64_t c = *rc & ~kIdleBit;
    if (c != b) {
      std::string text = describe_clock_event_reasons(c);
      if (rb) text += " (baseline: " + describe_clock_event_reasons(b) + ")";
      why.push_back("clock events " + text);
    }
  }
  const auto tb = counter_max(base, contract::counter::throttled_samples);
  const auto tc = counter_max(cur, contract::counter::throttled_samples);
  if (tc && *tc > tb.value_or(0)) {
    std::string text = "throttled samples " + (tb ? num(*tb) + " -> " : std::string()) + num(*tc);
    if (const auto s = counter(cur, contract::counter::samples); s && *s > 0) text += " of " + num(*s);
    why.push_back(text);
  }
  if (cur.label.find("stop=time_limit") != std::string::npos) {
    std::string text = "noise target not reached (stop=time_limit";
    if (const auto cv = counter(cur, contract::counter::cv_pct)) text += format_double(", cv %.2g%%", *cv);
    why.push_back(text + ")");
  }
  if (other_processes && *other_processes > 0)
    why.push_back(std::to_string(*other_processes) + " other process" + (*other_processes == 1 ? "" : "es") +
                  " on the GPU");
  return why;
}

void explain_regressions(Comparison& c, const Results& baseline, const Results& current,
                         std::optional<int> other_processes) {
  for (Row& r : c.rows) {
    const bool slower = worse_direction(r, c.direction);
    const bool flagged = r.verdict == Verdict::Regression || r.confirmation != Confirmation::None ||
                         ((r.verdict == Verdict::Unconfirmed || r.verdict == Verdict::HostDiffers) && slower);
    if (!flagged) continue;
    const Benchmark* b = baseline.find(r.name);
    const Benchmark* k = current.find(r.name);
    if (b == nullptr || k == nullptr) continue;
    r.why = explain_case(*b, *k, other_processes);
  }
}

}  // namespace gpucheck::compare
