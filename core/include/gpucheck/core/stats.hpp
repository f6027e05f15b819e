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

}  // namespace gpucheck
