// Change-points of one case's series: E-Divisive means (Matteson and James, "A Nonparametric
// Approach for Multiple Change Point Analysis of Multivariate Data", JASA 2014, with alpha = 1,
// as MongoDB's signal processing and Otava use it). Bisect the series where the energy
// statistic between the two sides is largest; keep the split when a permutation test says it
// is significant; repeat on the pieces. A split leaves at least `min_segment` points on each
// side, so a single outlier never makes a segment of its own, and the size of a change is the
// difference of the two sides' medians, which one outlier does not move. Pure: no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gpucheck::compare::history {

struct ChangeOptions {
  double max_p = 0.01;          // significance: a split is kept when its permutation p-value is at most this
  int permutations = 199;       // shuffles per test (p resolution 1/200); stops early once p cannot pass
  std::size_t min_segment = 3;  // points on each side of a split
  std::uint64_t seed = 1;       // the shuffles are reproducible: same series, same answer
};

struct ChangePoint {
  std::size_t index = 0;  // first point after the change
  double before = 0.0;    // median of the segment before it
  double after = 0.0;     // median of the segment after it
  double change = 0.0;    // (after - before) / before
  double p_value = 1.0;
};

// The energy statistic Q of splitting xs at each index (0 where a side has fewer than 2 points);
// exposed for tests.
std::vector<double> split_statistics(std::span<const double> xs);

// Significant change-points in index order, each with its neighbours' medians.
std::vector<ChangePoint> e_divisive(std::span<const double> xs, const ChangeOptions& o = {});

}  // namespace gpucheck::compare::history
