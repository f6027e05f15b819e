// The formulas are the tool's (compare/ judged with them first): its golden outputs are
// these numbers to the last bit.
#include "gpucheck/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace gpucheck {

std::optional<double> median(std::span<const double> xs) {
  if (xs.empty()) return std::nullopt;
  // nth_element with a NaN in the range has no defined result; the median of a set holding
  // one is NaN.
  if (std::any_of(xs.begin(), xs.end(), [](double x) { return std::isnan(x); })) return std::nan("");
  std::vector<double> v(xs.begin(), xs.end());
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return lo + (hi - lo) / 2.0;  // no overflow for two huge values
}

std::optional<double> mean(std::span<const double> xs) {
  if (xs.empty()) return std::nullopt;
  return std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
}

std::optional<double> stddev(std::span<const double> xs) {
  if (xs.size() < 2) return std::nullopt;
  const double m = *mean(xs);
  double ss = 0.0;
  for (const double x : xs) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(xs.size() - 1));
}

std::optional<double> coefficient_of_variation(std::span<const double> xs) {
  if (xs.size() < 2) return std::nullopt;
  const double m = *mean(xs);
  if (m == 0.0 || !std::isfinite(m)) return std::nullopt;
  return *stddev(xs) / std::fabs(m);
}

std::optional<double> percentile(std::span<const double> xs, double p) {
  if (xs.empty() || !(p >= 0.0 && p <= 100.0)) return std::nullopt;
  if (std::any_of(xs.begin(), xs.end(), [](double x) { return std::isnan(x); })) return std::nan("");
  std::vector<double> v(xs.begin(), xs.end());
  std::sort(v.begin(), v.end());
  const double at = p / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  const double f = at - static_cast<double>(lo);
  return f == 0.0 ? v[lo] : v[lo] + (v[hi] - v[lo]) * f;
}

}  // namespace gpucheck
