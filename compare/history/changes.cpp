#include "history/changes.hpp"

#include <algorithm>
#include <numeric>
#include <random>

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
};

Best best_split(std::span<const double> v, std::span<const std::size_t> rank, std::size_t ranks, std::size_t min_segment,
                std::vector<double>& q) {
  Best b;
  if (v.size() < 2 * min_segment) return b;
  statistics(v, rank, ranks, q);
  for (std::size_t t = min_segment; t + min_segment <= v.size(); ++t)
    if (b.at == 0 || q[t] > b.q) b = {t, q[t]};
  return b;
}

// The permutation p-value of a segment's best split: the share of shuffles of the segment whose
// best split is at least as strong (the observed one counted), stopping once p cannot pass.
double permutation_p(std::span<const double> v, std::span<const std::size_t> rank, std::size_t ranks, double observed,
                     const ChangeOptions& o, std::mt19937_64& rng) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<double> pv(v.size());
  std::vector<std::size_t> pr(v.size());
  std::vector<double> q;
  const double cap = o.max_p * (o.permutations + 1);  // p > max_p once this many shuffles reach `observed`
  int at_least = 0, done = 0;
  for (; done < o.permutations; ++done) {
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t i = 0; i < order.size(); ++i) {
      pv[i] = v[order[i]];
      pr[i] = rank[order[i]];
    }
    if (best_split(pv, pr, ranks, o.min_segment, q).q >= observed) ++at_least;
    if (at_least + 1 > cap) return static_cast<double>(at_least + 1) / (done + 2);
  }
  return static_cast<double>(at_least + 1) / (done + 1);
}

double median_of(std::span<const double> v) { return gpucheck::median(v).value_or(0.0); }

}  // namespace

std::vector<double> split_statistics(std::span<const double> xs) {
  std::size_t distinct = 0;
  const auto r = ranks_of(xs, &distinct);
  std::vector<double> q;
  statistics(xs, r, distinct, q);
  return q;
}

std::vector<ChangePoint> e_divisive(std::span<const double> xs, const ChangeOptions& o) {
  std::size_t distinct = 0;
  const auto rank = ranks_of(xs, &distinct);
  std::mt19937_64 rng(o.seed);
  std::vector<std::size_t> cuts{0, xs.size()};  // segment bounds, sorted
  std::vector<double> pvals;                    // of each cut found, in order found
  std::vector<std::size_t> found;
  std::vector<double> q;
  for (;;) {
    Best best;
    std::size_t from = 0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      const std::size_t a = cuts[i], b = cuts[i + 1];
      const Best s = best_split(xs.subspan(a, b - a), std::span(rank).subspan(a, b - a), distinct, o.min_segment, q);
      if (s.at != 0 && (best.at == 0 || s.q > best.q)) {
        best = s;
        from = a;
      }
    }
    if (best.at == 0 || !(best.q > 0.0)) break;
    const std::size_t end = *std::upper_bound(cuts.begin(), cuts.end(), from);
    const double p = permutation_p(xs.subspan(from, end - from), std::span(rank).subspan(from, end - from), distinct,
                                   best.q, o, rng);
    if (p > o.max_p) break;
    cuts.insert(std::upper_bound(cuts.begin(), cuts.end(), from + best.at), from + best.at);
    found.push_back(from + best.at);
    pvals.push_back(p);
  }
  std::vector<ChangePoint> out;
  for (std::size_t i = 1; i + 1 < cuts.size(); ++i) {
    const std::size_t a = cuts[i - 1], c = cuts[i], b = cuts[i + 1];
    ChangePoint cp;
    cp.index = c;
    cp.before = median_of(xs.subspan(a, c - a));
    cp.after = median_of(xs.subspan(c, b - c));
    cp.change = cp.before != 0.0 ? (cp.after - cp.before) / cp.before : 0.0;
    cp.p_value = pvals[static_cast<std::size_t>(std::find(found.begin(), found.end(), c) - found.begin())];
    out.push_back(cp);
  }
  return out;
}

}  // namespace gpucheck::compare::history
