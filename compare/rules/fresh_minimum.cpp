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
  // A relative 1e-12 below an exact rank stays that rank (0.5 * 10 is rank 5, not 6).
  const double rank = std::ceil(q * static_cast<double>(values.size()) * (1.0 - 1e-12));
  const auto at = static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
  return values[at];
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
  f.cur = quantile_of(cur, lower_is_better ? q : 1.0 - q);
  if (!f.base || !f.cur) {
    f.base.reset();
    f.cur.reset();
    f.why_not = "a process figure that is not a number";
  }
  return f;
}

}  // namespace gpucheck::compare
