// The fastest of N fresh processes against the baseline's quantile for it, and the median pair of
// processes run beside the base build's (fresh_minimum.hpp).
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

FreshMinimum judge_median_pair(const std::vector<double>& base, const std::vector<double>& cur, int n,
                               bool lower_is_better) {
  FreshMinimum f;
  const auto need = static_cast<std::size_t>(std::max(1, n));
  if (base.size() != cur.size() || base.size() < need) {
    f.why_not = "judged against " + std::to_string(n) + " fresh processes of the base build run in turn with " +
                std::to_string(n) + " of this one: the base side holds " + std::to_string(base.size()) + " process figure" +
                (base.size() == 1 ? "" : "s") + ", this build " + std::to_string(cur.size());
    return f;
  }
  const auto usable = [](double v) { return std::isfinite(v) && v > 0.0; };
  if (!std::all_of(base.begin(), base.end(), usable) || !std::all_of(cur.begin(), cur.end(), usable)) {
    f.why_not = "a process figure that is not a positive number";
    return f;
  }
  // The neighbouring pairs, in the order the processes ran (base 1, this 1, base 2, this 2, ...):
  // this build's process i with the base's process i just before it and i + 1 just after it.
  struct Pair {
    double base, cur;
  };
  std::vector<Pair> pairs;
  for (std::size_t i = 0; i < base.size(); ++i) {
    pairs.push_back({base[i], cur[i]});
    if (i + 1 < base.size()) pairs.push_back({base[i + 1], cur[i]});
  }
  // How much worse this build's member is: its ratio, inverted where higher is better.
  const auto worse = [lower_is_better](const Pair& p) { return lower_is_better ? p.cur / p.base : p.base / p.cur; };
  // 2N - 1 pairs: an odd count, the middle one is the median.
  const auto mid = pairs.begin() + static_cast<std::ptrdiff_t>(pairs.size() / 2);
  std::nth_element(pairs.begin(), mid, pairs.end(), [&](const Pair& a, const Pair& b) { return worse(a) < worse(b); });
  f.base = mid->base;
  f.cur = mid->cur;
  return f;
}

}  // namespace gpucheck::compare
