// The fastest of N fresh processes against the baseline's quantile for it (fresh_minimum.hpp).
#include "rules/fresh_minimum.hpp"

#include <algorithm>
#include <cmath>

namespace gpucheck::compare {

double best_of_n_quantile(int n) { return 1.0 - std::pow(0.5, 1.0 / static_cast<double>(std::max(1, n))); }

std::optional<double> quantile_of(std::vector<double> values, double q) {
  if (values.empty() || !(q >= 0.0 && q <= 1.0)) return std::nullopt;
  if (std::any_of(values.begin(), values.end(), [](double v) { return !std::isfinite(v); })) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

FreshMinimum judge_fresh_minimum(const std::vector<double>& base, const std::vector<double>& cur, int n,
                                 bool lower_is_better) {
  FreshMinimum f;
  const auto need = static_cast<std::size_t>(std::max(1, n));
  if (base.size() < need || cur.size() < need) {
    f.why_not = "judged by the fastest of " + std::to_string(n) + " fresh processes: the baseline holds " +
                std::to_string(base.size()) + " process figure" + (base.size() == 1 ? "" : "s") + ", this run " +
                std::to_string(cur.size());
    return f;
  }
  const double q = best_of_n_quantile(n);
  f.base = quantile_of(base, lower_is_better ? q : 1.0 - q);
  f.cur = quantile_of(cur, lower_is_better ? 0.0 : 1.0);
  if (!f.base || !f.cur) {
    f.base.reset();
    f.cur.reset();
    f.why_not = "a process figure that is not a number";
  }
  return f;
}

}  // namespace gpucheck::compare
