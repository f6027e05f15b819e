// The GPU smoke test's value checks: ranges a broken measurement cannot meet (a figure off by
// 100x passes "present and positive", not these). Pure: the figures in, one verdict per
// checked figure out; a figure whose bound needs a datasheet the GPU has not is skipped with
// the reason, not passed.
//   - the 8192^3 GEMMs (matmul/cublaslt and cublaslt_sustained): TFLOPS above 50% of the
//     SKU's dense peak for the dtype;
//   - the 2 GiB copies acceptance reads (memory/memcpy_d2d, copy_kernel): GBps above 50% of the
//     SKU's HBM bandwidth;
//   - every empty-kernel launch (launch/<mode>/empty/<n>): us_per_launch under 50 us.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/core/specs.hpp"

namespace gpucheck::smoke {

inline constexpr double kMinFractionOfPeak = 0.5;
inline constexpr double kMinFractionOfHbm = 0.5;
inline constexpr double kMaxEmptyLaunchUs = 50;

// One case of the results: its name as registered and its counters.
struct Figure {
  std::string name;
  std::map<std::string, double> counters;
};

enum class Verdict { pass, fail, skipped };

struct RangeCheck {
  std::string name, counter;
  Verdict verdict = Verdict::skipped;
  double value = 0, bound = 0;
  bool at_least = true;  // the value must be above bound (else below)
  std::string why;       // for fail and skipped
};

// "matmul/cublaslt/bf16/8192x8192x8192/iterations:1/manual_time" -> "matmul/cublaslt/bf16/8192x8192x8192":
// Google Benchmark's suffixes (segments holding ':', manual_time, real_time) dropped.
std::string registered_name(std::string_view reported);

// The checks that apply to these figures; `sku` null when the GPU has no datasheet entry.
std::vector<RangeCheck> check_ranges(const std::vector<Figure>& figures, const SkuSpec* sku, std::string_view gpu_name);

}  // namespace gpucheck::smoke
