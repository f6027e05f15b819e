// Mann-Whitney U written out: ranks with ties averaged, the exact null distribution by
// polynomial counting for small samples, the tie-corrected normal approximation otherwise.
#include "rules/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace gpucheck::compare {

double mann_whitney_exact_sf(double u, int n1, int n2) {
  if (n1 <= 0 || n2 <= 0) return 1.0;
  // The number of arrangements with statistic k is the coefficient of q^k in the Gaussian
  // binomial [n1+n2 choose n1]_q = prod_{i=1..m} (1 - q^{n+i}) / (1 - q^i), m = min(n1, n2).
  const int m = std::min(n1, n2);
  const int n = std::max(n1, n2);
  const std::size_t top = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  std::vector<double> c(top + 1, 0.0);
  c[0] = 1.0;
  for (int i = 1; i <= m; ++i) {
    const auto up = static_cast<std::size_t>(n + i);
    const auto down = static_cast<std::size_t>(i);
    for (std::size_t k = top; k >= up; --k) {  // multiply by (1 - q^{n+i})
      c[k] -= c[k - up];
      if (k == up) break;
    }
    for (std::size_t k = down; k <= top; ++k) c[k] += c[k - down];  // divide by (1 - q^i)
  }
  const double total = std::accumulate(c.begin(), c.end(), 0.0);
  if (u <= 0) return 1.0;
  const auto from = static_cast<std::size_t>(std::ceil(u));
  if (from > top) return 0.0;
  double tail = 0.0;
  for (std::size_t k = from; k <= top; ++k) tail += c[k];
  return tail / total;
}

std::optional<MannWhitney> mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  const std::size_t n1 = x.size();
  const std::size_t n2 = y.size();
  if (n1 == 0 || n2 == 0) return std::nullopt;
  struct Item {
    double v;
    bool first;
  };
  std::vector<Item> all;
  all.reserve(n1 + n2);
  for (const double v : x) all.push_back({v, true});
  for (const double v : y) all.push_back({v, false});
  std::sort(all.begin(), all.end(), [](const Item& a, const Item& b) { return a.v < b.v; });

  // Average ranks over ties; collect sum(t^3 - t) for the variance correction.
  double r1 = 0.0;
  double tie_term = 0.0;
  bool ties = false;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i + 1;
    while (j < all.size() && all[j].v == all[i].v) ++j;
    const double t = static_cast<double>(j - i);
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].first) r1 += avg_rank;
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double dn1 = static_cast<double>(n1);
  const double dn2 = static_cast<double>(n2);
  MannWhitney r;
  r.u1 = r1 - dn1 * (dn1 + 1.0) / 2.0;
  const double u2 = dn1 * dn2 - r.u1;
  const double u = std::max(r.u1, u2);

  if (!ties && std::min(n1, n2) <= 8 && std::max(n1, n2) <= 4096) {
    r.exact = true;
    r.p_value = 2.0 * mann_whitney_exact_sf(u, static_cast<int>(n1), static_cast<int>(n2));
  } else {
    const double nn = dn1 + dn2;
    const double mu = dn1 * dn2 / 2.0;
    const double var = dn1 * dn2 / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
    if (var <= 0.0) {
      r.p_value = 1.0;  // every value tied: nothing tells the samples apart
    } else {
      const double z = (u - mu - 0.5) / std::sqrt(var);
      r.p_value = std::erfc(z / std::sqrt(2.0));  // 2 * normal survival function
    }
  }
  r.p_value = std::clamp(r.p_value, 0.0, 1.0);
  return r;
}

}  // namespace gpucheck::compare
