// Removing one value from a sorted set moves its median to one of at most three values, so the
// absolute deviations are sorted once per distinct peer median (at most three times) and each
// GPU's MAD is again a median with one element removed.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fleet/peers.hpp"

namespace gpucheck::compare::fleet {

double median_without(const std::vector<double>& sorted, std::size_t skip) {
  const std::size_t n = sorted.size() - 1;  // what remains
  auto at = [&](std::size_t j) { return j < skip ? sorted[j] : sorted[j + 1]; };
  return n % 2 == 1 ? at(n / 2) : (at(n / 2 - 1) + at(n / 2)) / 2;
}

LeaveOneOut::LeaveOneOut(std::vector<double> values) : sorted_(std::move(values)) {
  if (sorted_.size() < 2) throw std::logic_error("LeaveOneOut needs two values");
  std::sort(sorted_.begin(), sorted_.end());
}

const std::vector<double>& LeaveOneOut::deviations_from(double m) const {
  for (const auto& [median, devs] : deviations_)
    if (median == m) return devs;
  std::vector<double> devs(sorted_.size());
  for (std::size_t i = 0; i < sorted_.size(); ++i) devs[i] = std::fabs(sorted_[i] - m);
  std::sort(devs.begin(), devs.end());
  deviations_.emplace_back(m, std::move(devs));
  return deviations_.back().second;
}

PeerStats LeaveOneOut::without(double v) const {
  const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), v);
  if (it == sorted_.end() || *it != v) throw std::logic_error("LeaveOneOut: not one of the values");
  PeerStats s;
  s.median = median_without(sorted_, static_cast<std::size_t>(it - sorted_.begin()));
  const std::vector<double>& devs = deviations_from(s.median);
  const double own = std::fabs(v - s.median);
  const auto d = std::lower_bound(devs.begin(), devs.end(), own);
  s.mad = median_without(devs, static_cast<std::size_t>(d - devs.begin()));
  return s;
}

}  // namespace gpucheck::compare::fleet
