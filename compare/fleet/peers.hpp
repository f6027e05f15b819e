// Leave-one-out robust statistics: for each value of a set, the median and the MAD (median
// absolute deviation) of all the others, in O(n log n) for the set rather than O(n^2 log n),
// so 8,000 GPUs of one model are judged at once.
#pragma once

#include <cstddef>
#include <vector>

namespace gpucheck::compare::fleet {

struct PeerStats {
  double median = 0;
  double mad = 0;
};

class LeaveOneOut {
 public:
  explicit LeaveOneOut(std::vector<double> values);  // at least two values
  // The median and MAD of every value but one equal to `v` (which must be one of them).
  [[nodiscard]] PeerStats without(double v) const;

 private:
  std::vector<double> sorted_;
  mutable std::vector<std::pair<double, std::vector<double>>> deviations_;  // per peer median
  [[nodiscard]] const std::vector<double>& deviations_from(double m) const;
};

// Median of a sorted range with the element at position `skip` removed.
double median_without(const std::vector<double>& sorted, std::size_t skip);

}  // namespace gpucheck::compare::fleet
