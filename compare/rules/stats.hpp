// Statistics for deciding whether a change is real: the Mann-Whitney U test Google
// Benchmark's compare.py uses (same conventions as scipy.stats.mannwhitneyu,
// two-sided, method "auto").
#pragma once

#include <optional>
#include <span>

namespace gpucheck::compare {

// Median, mean, stddev and cv are core's (gpucheck/core/stats.hpp): one set for the binaries
// and the tool.

struct MannWhitney {
  double u1 = 0;       // U statistic of the first sample
  double p_value = 1;  // two-sided
  bool exact = false;  // exact null distribution (no ties, a sample of <= 8) or normal approx.
};

// Two-sided Mann-Whitney U test. Exact when there are no ties and one sample has at most 8
// values; otherwise the normal approximation with tie correction and continuity correction.
// nullopt when a sample is empty.
std::optional<MannWhitney> mann_whitney_u(std::span<const double> x, std::span<const double> y);

// P(U >= u) under the null hypothesis for sample sizes n1, n2 (no ties).
double mann_whitney_exact_sf(double u, int n1, int n2);

}  // namespace gpucheck::compare
