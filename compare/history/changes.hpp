// Change-points of one case's series. Where: E-Divisive means (Matteson and James, "A Nonparametric
// Approach for Multiple Change Point Analysis of Multivariate Data", JASA 2014, with alpha = 1, as
// MongoDB's signal processing and Otava use it): bisect the series where the energy statistic
// between the two sides is largest, repeat on the pieces while the split is significant.
// Whether: as Otava does, a parametric test, not E-Divisive's permutation test, whose p-value
// reads only the order of the points: on a short series (tens of gate runs) it cannot reach
// 0.01 however far a shift stands above the noise. Here the two sides' medians are compared with
// the series' run-to-run noise (the MAD of successive differences, as in Fryzlewicz's Wild
// Binary Segmentation), Student's t, Bonferroni over the positions the split was chosen among.
// A side of two runs counts at its run nearer the other side, so one outlier beside one normal
// run never makes a change; with three or more runs, the median outvotes one outlier. Pure.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace gpucheck::compare::history {

struct ChangeOptions {
  double max_p = 0.01;          // a split is kept when its p-value (Bonferroni-adjusted) is at most this
  std::size_t min_segment = 2;  // points on each side of a split: one run is never a segment
};

struct ChangePoint {
  std::size_t index = 0;  // first point after the change
  double before = 0.0;    // median of the segment before it
  double after = 0.0;     // median of the segment after it
  double change = 0.0;    // (after - before) / before
  double p_value = 1.0;   // of the split when it was made, Bonferroni-adjusted
};

// The energy statistic Q of splitting xs at each index (0 where a side has fewer than 2 points);
// exposed for tests.
std::vector<double> split_statistics(std::span<const double> xs);

// The series' run-to-run noise, a standard deviation: 1.4826 x the median of |x[i+1] - x[i]|
// over sqrt(2) (a few shifts and outliers do not move it); the mean absolute successive
// difference x sqrt(pi)/2 where that median is 0; 0 for a constant series.
double series_noise(std::span<const double> xs);

// Two-sided p-value of Student's t with `df` degrees of freedom (df > 0, not necessarily whole).
double student_t_two_sided(double t, double df);

// Significant change-points in index order, each with its neighbours' medians. `group[i]`: the
// commit of point i (any id): a change starts only where it differs from point i-1's, as the
// runs of one commit are replicates; empty: anywhere.
std::vector<ChangePoint> e_divisive(std::span<const double> xs, std::span<const std::size_t> group,
                                    const ChangeOptions& o = {});
inline std::vector<ChangePoint> e_divisive(std::span<const double> xs, const ChangeOptions& o = {}) {
  return e_divisive(xs, {}, o);
}

}  // namespace gpucheck::compare::history
