// The statistics both sides report and judge by: median, mean, sample standard deviation and
// coefficient of variation of a set of values. One set, so that a binary's cv_pct and the
// tool's noise figure are the same number. A figure that needs more values than it has is
// nullopt (the mean of nothing, the spread of one value), never a made-up 0. NaN in the input
// propagates (a NaN median or mean is NaN): callers reject non-finite samples before.
#pragma once
#include <optional>
#include <span>

namespace gpucheck {

// The middle value (the mean of the two middle ones for an even count); nullopt when empty.
std::optional<double> median(std::span<const double> xs);
// nullopt when empty.
std::optional<double> mean(std::span<const double> xs);
// Sample standard deviation (n - 1); nullopt below two values.
std::optional<double> stddev(std::span<const double> xs);
// stddev / |mean| (a fraction); nullopt below two values, or for a zero or non-finite mean.
std::optional<double> coefficient_of_variation(std::span<const double> xs);
// The p-th percentile (p in [0, 100]) by linear interpolation between the closest ranks (the
// "type 7" of R and NumPy's default: p 50 is the median, p 0 the minimum, p 100 the maximum);
// nullopt when empty or for a p outside [0, 100] or NaN. A NaN in the set gives NaN.
std::optional<double> percentile(std::span<const double> xs, double p);

}  // namespace gpucheck
