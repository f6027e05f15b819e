#include "gpucheck/core/energy.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

namespace gpucheck::energy {

bool summarize(const std::vector<Reading>& r, double burst_s, double steady_from, Summary* out, std::string* err) {
  auto fail = [&](std::string m) {
    *err = std::move(m);
    return false;
  };
  if (!(burst_s > 0) || !std::isfinite(burst_s)) return fail("the burst window must be a positive number of seconds");
  if (!(steady_from >= 0 && steady_from < 1)) return fail("the steady part must start in [0, 1) of the run");
  if (r.size() < 3) return fail("fewer than three readings (" + std::to_string(r.size()) + ")");
  if (r[0].t_s != 0 || r[0].calls != 0) return fail("the first reading is not the start (time 0, no call)");
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (!std::isfinite(r[i].t_s) || (r[i].energy_J && !std::isfinite(*r[i].energy_J)))
      return fail("reading " + std::to_string(i) + " holds a value that is not finite");
    if (i > 0 && (r[i].t_s <= r[i - 1].t_s || r[i].calls <= r[i - 1].calls))
      return fail("reading " + std::to_string(i) + ": time and calls must increase");
  }
  Summary s;
  std::size_t b = 1;
  while (b < r.size() && r[b].t_s < burst_s) ++b;
  if (b + 1 >= r.size()) return fail("the run ends inside the burst window");
  s.burst_calls = r[b].calls;
  s.burst_s = r[b].t_s;
  s.burst_rate = static_cast<double>(r[b].calls) / r[b].t_s;
  s.burst_end_clock_MHz = r[b].sm_clock_MHz;
  const double from = steady_from * r.back().t_s;
  std::size_t a = 0;
  while (a < r.size() && r[a].t_s < from) ++a;
  if (a + 1 >= r.size()) return fail("no call in the steady part");
  const Reading &A = r[a], &Z = r.back();
  s.steady_calls = Z.calls - A.calls;
  s.steady_s = Z.t_s - A.t_s;
  s.steady_rate = static_cast<double>(s.steady_calls) / s.steady_s;
  if (A.energy_J && Z.energy_J && *Z.energy_J >= *A.energy_J) {
    s.joules_per_call = (*Z.energy_J - *A.energy_J) / static_cast<double>(s.steady_calls);
    s.mean_power_W = (*Z.energy_J - *A.energy_J) / s.steady_s;
  }
  double sum = 0;
  int n = 0;
  for (std::size_t i = a; i < r.size(); ++i)
    if (r[i].sm_clock_MHz) {
      sum += *r[i].sm_clock_MHz;
      ++n;
    }
  if (n > 0) s.mean_clock_MHz = sum / n;
  *out = s;
  return true;
}

std::optional<double> mean_clock_MHz(const std::vector<unsigned>& readings) {
  double sum = 0;
  int n = 0;
  for (const unsigned r : readings)
    if (r > 0) {
      sum += r;
      ++n;
    }
  if (n == 0) return std::nullopt;
  return sum / n;
}

void EnergySteps::add(double t_s, std::optional<double> energy_J) {
  if (!energy_J || !std::isfinite(*energy_J) || !std::isfinite(t_s)) return;
  if (last_t_s_ && !(t_s > *last_t_s_)) return;  // not a later reading
  if (last_J_ && *energy_J < *last_J_) broken_ = true;
  if (last_J_ && *energy_J > *last_J_) {
    const Move m{t_s, *energy_J, t_s - *last_t_s_};
    if (!first_) first_ = m;
    last_ = m;
    ++moves_;
  }
  last_t_s_ = t_s;
  last_J_ = energy_J;
}

bool ReadPacer::due(double now_s) const {
  if (!last_end_s_) return true;
  return !(now_s - *last_end_s_ < last_took_s_);  // a non-finite now reads
}

void ReadPacer::took(double start_s, double end_s) {
  if (!std::isfinite(start_s) || !std::isfinite(end_s) || end_s < start_s) {
    last_end_s_.reset();
    return;
  }
  last_end_s_ = end_s;
  last_took_s_ = end_s - start_s;
}

std::optional<double> EnergySteps::power_W() const {
  if (broken_ || moves_ < 2) return std::nullopt;
  // Each move is timed at the middle of its gap, to within half the gap either way.
  const double half_gaps_s = (first_->uncertainty_s + last_->uncertainty_s) / 2;
  const double span_s = (last_->t_s - last_->uncertainty_s / 2) - (first_->t_s - first_->uncertainty_s / 2);
  if (!(span_s > 0) || half_gaps_s > kMaxStepTimingFraction * span_s) return std::nullopt;
  return (last_->energy_J - first_->energy_J) / span_s;
}

std::optional<Cooldown> parse_cooldown(std::string_view spec, std::string* err) {
  Cooldown c;
  bool any_limit = false;
  for (bool more = !spec.empty(); more;) {  // every item, an empty one after a trailing comma too
    const std::size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    more = comma != std::string_view::npos;
    spec = more ? spec.substr(comma + 1) : std::string_view{};
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    double v = 0;
    const std::string_view text = eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v) || !(v > 0)) {
      err->assign(1, '\'').append(item).append("': expected power_W=, temp_C=, max_s= or settle_s= with a number > 0");
      return std::nullopt;
    }
    if (key == "power_W") c.power_W = v;
    else if (key == "temp_C") c.temp_C = v;
    else if (key == "max_s") c.max_s = v;
    else if (key == "settle_s") c.settle_s = v;
    else {
      err->assign(1, '\'').append(key).append("' is not power_W, temp_C, max_s or settle_s");
      return std::nullopt;
    }
    any_limit = any_limit || key == "power_W" || key == "temp_C";
  }
  if (!any_limit) {
    *err = "no limit (power_W= or temp_C=)";
    return std::nullopt;
  }
  return c;
}

namespace {
// The power part of `cooled`: under the rule's limit, or no limit, or no reading.
bool power_cooled(const Cooldown& rule, std::optional<double> power_W) {
  return !(rule.power_W && power_W && *power_W > *rule.power_W);
}
}  // namespace

bool cooled(const Cooldown& rule, std::optional<double> power_W, std::optional<unsigned> temp_C) {
  if (!power_cooled(rule, power_W)) return false;
  return !(rule.temp_C && temp_C && static_cast<double>(*temp_C) > *rule.temp_C);
}

CooldownWait wait_cooled(const Cooldown& rule, const std::function<PowerTemp()>& read,
                         const std::function<double()>& now, const std::function<void(double)>& sleep) {
  const double t0 = now();
  std::optional<unsigned> lowest;  // the lowest temperature read, and when (seconds into the wait)
  double lowest_at = 0;
  for (;;) {
    const auto [power_W, temp_C] = read();
    const double waited = now() - t0;
    if (temp_C && (!lowest || *temp_C < *lowest)) {
      lowest = temp_C;
      lowest_at = waited;
    }
    const bool done = cooled(rule, power_W, temp_C);
    const bool settled =
        !done && rule.settle_s && lowest && power_cooled(rule, power_W) && waited - lowest_at >= *rule.settle_s;
    if (done || settled || waited >= rule.max_s) return CooldownWait{waited, !done && !settled, settled, temp_C};
    sleep(rule.poll_s);
  }
}

std::optional<Shape> parse_shape(std::string_view label) {
  Shape s;
  std::string_view rest = label;
  // One field: its tag, then a decimal number >= 1 that fits an int.
  auto field = [&](std::string_view tag, int* v) {
    if (rest.substr(0, tag.size()) != tag) return false;
    rest.remove_prefix(tag.size());
    int x = 0;
    const auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), x);
    if (ec != std::errc() || p == rest.data() || x < 1) return false;
    rest.remove_prefix(static_cast<std::size_t>(p - rest.data()));
    *v = x;
    return true;
  };
  auto optional_field = [&](std::string_view tag, int* v) {
    return rest.substr(0, tag.size()) != tag || field(tag, v);
  };
  if (!field("b", &s.batch) || !field("h", &s.heads) || !optional_field("kv", &s.kv_heads) ||
      !field("s", &s.seq_q))
    return std::nullopt;
  if (!optional_field("sk", &s.seq_k) || !field("d", &s.head_dim) || !rest.empty()) return std::nullopt;
  return s;
}

}  // namespace gpucheck::energy
