#include "history/changes.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <utility>

#include "gpucheck/core/stats.hpp"

namespace gpucheck::compare::history {
namespace {

// Counts and sums of the values inserted so far, by rank: the sum of |x - v| over them for a
// new x in O(log n), so a whole scan of split points is O(n log n), not O(n^2).
class Fenwick {
 public:
  explicit Fenwick(std::size_t n) : count_(n + 1, 0), sum_(n + 1, 0.0) {}
  void add(std::size_t rank, double v) {
    for (std::size_t i = rank + 1; i < count_.size(); i += i & (~i + 1)) {
      ++count_[i];
      sum_[i] += v;
    }
  }
  // Count and sum of the values of rank below `rank`.
  void below(std::size_t rank, std::size_t* count, double* sum) const {
    *count = 0;
    *sum = 0.0;
    for (std::size_t i = rank; i > 0; i -= i & (~i + 1)) {
      *count += count_[i];
      *sum += sum_[i];
    }
  }

 private:
  std::vector<std::size_t> count_;
  std::vector<double> sum_;
};

// within[k] = sum of |v_i - v_j| over i < j < k (the first k points), for k = 0..n.
void prefix_within(std::span<const double> v, std::span<const std::size_t> rank, std::size_t ranks,
                   std::vector<double>& within) {
  Fenwick f(ranks);
  within.assign(v.size() + 1, 0.0);
  double total = 0.0, acc = 0.0;
  for (std::size_t k = 0; k < v.size(); ++k) {
    std::size_t c = 0;
    double s = 0.0;
    f.below(rank[k], &c, &s);
    acc += (static_cast<double>(c) * v[k] - s) + ((total - s) - static_cast<double>(k - c) * v[k]);
    within[k + 1] = acc;
    f.add(rank[k], v[k]);
    total += v[k];
  }
}

// Q at every split of v (indices 0..n), given each value's rank among v's distinct values.
void statistics(std::span<const double> v, std::span<const std::size_t> rank, std::size_t ranks, std::vector<double>& q) {
  const std::size_t n = v.size();
  std::vector<double> left, right;
  prefix_within(v, rank, ranks, left);
  std::vector<double> rv(v.rbegin(), v.rend());
  std::vector<std::size_t> rr(rank.rbegin(), rank.rend());
  prefix_within(rv, rr, ranks, right);  // right[k]: the last k points
  q.assign(n + 1, 0.0);
  const double total = left[n];
  for (std::size_t t = 2; t + 2 <= n; ++t) {
    const double m = static_cast<double>(t), k = static_cast<double>(n - t);
    const double wl = left[t], wr = right[n - t];
    const double cross = total - wl - wr;
    const double e = 2.0 * cross / (m * k) - wl / (m * (m - 1) / 2) - wr / (k * (k - 1) / 2);
    q[t] = m * k / (m + k) * e;
  }
}

std::vector<std::size_t> ranks_of(std::span<const double> v, std::size_t* distinct) {
  std::vector<double> sorted(v.begin(), v.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<std::size_t> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    r[i] = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), v[i]) - sorted.begin());
  *distinct = sorted.size();
  return r;
}

struct Best {
  std::size_t at = 0;  // split index within the segment; 0: none allowed
  double q = 0.0;
  std::size_t candidates = 0;  // the positions it was chosen among
};

// The split of v with the largest Q among the positions that start a group (`group` empty: all)
// and leave min_segment points on each side.
Best best_split(std::span<const double> v, std::span<const std::size_t> rank, std::size_t ranks,
                std::span<const std::size_t> group, std::size_t min_segment, std::vector<double>& q) {
  Best b;
  if (v.size() < 2 * min_segment) return b;
  statistics(v, rank, ranks, q);
  for (std::size_t t = min_segment; t + min_segment <= v.size(); ++t) {
    if (!group.empty() && group[t] == group[t - 1]) continue;
    ++b.candidates;
    if (b.at == 0 || q[t] > b.q) {
      b.at = t;
      b.q = q[t];
    }
  }
  return b;
}

double median_of(std::span<const double> v) { return gpucheck::median(v).value_or(0.0); }

// Where a side stands for the test: its median, or, for a side of fewer than 3 points (whose
// median one outlier moves), its point nearest the other side.
double location(std::span<const double> side, bool toward_higher) {
  if (side.size() >= 3) return median_of(side);
  const auto [lo, hi] = std::minmax_element(side.begin(), side.end());
  return toward_higher ? *hi : *lo;
}

// The p-value of splitting v at `at`: the two sides' locations apart, against the noise sigma
// of the whole series (with df degrees of freedom), times the number of candidate positions.
double split_p(std::span<const double> v, std::size_t at, double sigma, double df, std::size_t candidates) {
  const auto left = v.first(at), right = v.subspan(at);
  const bool up = median_of(right) > median_of(left);
  const double gap = up ? location(right, false) - location(left, true) : location(left, false) - location(right, true);
  if (!(gap > 0.0)) return 1.0;
  if (!(sigma > 0.0)) return 0.0;  // an exact series: any difference is real
  const double m = static_cast<double>(left.size()), k = static_cast<double>(right.size());
  const double se = sigma * std::sqrt(std::numbers::pi / 2.0) * std::sqrt(1.0 / m + 1.0 / k);  // of a median
  return std::min(1.0, student_t_two_sided(gap / se, df) * static_cast<double>(candidates));
}

// The continued fraction of the regularized incomplete beta function (modified Lentz).
double beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  d = 1.0 / (std::fabs(d) < tiny ? tiny : d);
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double dm = m;
    for (const double aa : {dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm)),
                            -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1))}) {
      d = 1.0 + aa * d;
      d = 1.0 / (std::fabs(d) < tiny ? tiny : d);
      c = 1.0 + aa / c;
      c = std::fabs(c) < tiny ? tiny : c;
      h *= d * c;
    }
    if (std::fabs(d * c - 1.0) < 1e-15) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_fraction(a, b, x) / a;
  return 1.0 - front * beta_fraction(b, a, 1.0 - x) / b;
}

}  // namespace

std::vector<double> split_statistics(std::span<const double> xs) {
  std::size_t distinct = 0;
  const auto r = ranks_of(xs, &distinct);
  std::vector<double> q;
  statistics(xs, r, distinct, q);
  return q;
}

double series_noise(std::span<const double> xs) {
  if (xs.size() < 2) return 0.0;
  std::vector<double> d(xs.size() - 1);
  for (std::size_t i = 0; i + 1 < xs.size(); ++i) d[i] = std::fabs(xs[i + 1] - xs[i]);
  const double mad = median_of(d);
  if (mad > 0.0) return 1.4826 * mad / std::numbers::sqrt2;
  return std::accumulate(d.begin(), d.end(), 0.0) / static_cast<double>(d.size()) * std::sqrt(std::numbers::pi) / 2.0;
}

double student_t_two_sided(double t, double df) {
  if (std::isnan(t) || !(df > 0.0)) return 1.0;
  if (std::isinf(t)) return 0.0;
  return incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
}

std::vector<ChangePoint> e_divisive(std::span<const double> xs, std::span<const std::size_t> group, const ChangeOptions& o) {
  std::size_t distinct = 0;
  const auto rank = ranks_of(xs, &distinct);
  const double sigma = series_noise(xs);
  // The MAD keeps about 37% of the information of a standard deviation (its asymptotic efficiency).
  const double df = std::max(1.0, 0.37 * (static_cast<double>(xs.size()) - 1.0));
  std::vector<std::size_t> cuts{0, xs.size()};  // segment bounds, sorted
  std::vector<std::pair<std::size_t, double>> found;  // cut, its p-value
  std::vector<double> q;
  const auto group_in = [&](std::size_t a, std::size_t len) {
    return group.empty() ? std::span<const std::size_t>() : group.subspan(a, len);
  };
  for (;;) {
    Best best;
    std::size_t from = 0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      const std::size_t a = cuts[i], b = cuts[i + 1];
      const Best s = best_split(xs.subspan(a, b - a), std::span(rank).subspan(a, b - a), distinct, group_in(a, b - a),
                                o.min_segment, q);
      if (s.at != 0 && (best.at == 0 || s.q > best.q)) {
        best = s;
        from = a;
      }
    }
    if (best.at == 0 || !(best.q > 0.0)) break;
    const std::size_t end = *std::upper_bound(cuts.begin(), cuts.end(), from);
    const double p = split_p(xs.subspan(from, end - from), best.at, sigma, df, best.candidates);
    if (p > o.max_p) break;
    cuts.insert(std::upper_bound(cuts.begin(), cuts.end(), from + best.at), from + best.at);
    found.emplace_back(from + best.at, p);
  }
  std::vector<ChangePoint> out;
  for (std::size_t i = 1; i + 1 < cuts.size(); ++i) {
    const std::size_t a = cuts[i - 1], c = cuts[i], b = cuts[i + 1];
    ChangePoint cp;
    cp.index = c;
    cp.before = median_of(xs.subspan(a, c - a));
    cp.after = median_of(xs.subspan(c, b - c));
    cp.change = cp.before != 0.0 ? (cp.after - cp.before) / cp.before : 0.0;
    cp.p_value = std::find_if(found.begin(), found.end(), [c](const auto& f) { return f.first == c; })->second;
    out.push_back(cp);
  }
  return out;
}

}  // namespace gpucheck::compare::history
