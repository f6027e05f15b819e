// A host figure that comes in levels between processes (docs/GATE.md, host-bound: on the H200
// VMs one process's cudaLaunchKernel reads one of two levels, and nothing inside the process
// divides the level out) is measured in N fresh processes.
//
// Against the base build (gpucheck gate --base-bin-dir): the two builds' processes ran in turn,
// base 1, this 1, base 2, this 2, ..., so a level or a slower period of the whole machine, which
// lasts a few processes (measured 2026-12-05, docs/GATE.md), falls on both builds alike. The case
// is judged by the median neighbouring pair: each process of this build beside the base build's
// process run just before it and the one run just after it, 2N - 1 pairs with either build first
// about as often (an effect of the order, if any, falls on both builds); their ratios ranked, the
// middle pair's two figures shown. A slower launch path moves every pair; a lucky or slow process
// moves two.
//
// Against figures that did not run beside this run's (a results file of fresh processes, as
// gpucheck compare reads them): the fastest of N. It does not take out a period in which the
// whole machine is slower: every process of a gate can fall in one (measured 2026-12-05), which
// is why the gate judges these cases only against the base build.
//
// The fastest of N:
// Each side holds one figure per fresh process, from any number of runs. Its figure for the case
// is where the fastest of N of its processes lands half the time: the quantile
// q = 1 - 0.5^(1/N) of its figures (N = 10: the 6.7th percentile), read as the empirical
// distribution's inverse (the figure at rank ceil(q * count)), so that a side of exactly N
// processes reads its fastest, and a side of more reads what N of them would, not a luckier
// minimum. For a higher-is-better metric "fastest" is the largest, at the quantile 1 - q.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpucheck::compare {

// 1 - 0.5^(1/n): the quantile at which the best of n draws lands half the time (n >= 1).
double best_of_n_quantile(int n);

// The q-quantile (0 <= q <= 1) of `values` as the inverse of their empirical distribution: the
// value of rank max(1, ceil(q * count)) in ascending order (q = 0: the smallest). nullopt when
// `values` is empty or holds a value that is not finite.
std::optional<double> quantile_of(std::vector<double> values, double q);

// The two figures of a fresh-minimum judgement, or why there are none.
struct FreshMinimum {
  std::optional<double> base;  // each side's quantile for the best of n
  std::optional<double> cur;
  std::string why_not;         // set when either is missing: what the sides hold
};
// `base` and `cur`: one figure per fresh process. Needs at least n on each side.
FreshMinimum judge_fresh_minimum(const std::vector<double>& base, const std::vector<double>& cur, int n,
                                 bool lower_is_better);

// The median neighbouring pair (above): base[0], cur[0], base[1], cur[1], ... in the order they
// ran. Needs the same count on both sides, at least n, every figure finite and above zero; else
// why_not says what is held.
FreshMinimum judge_median_pair(const std::vector<double>& base, const std::vector<double>& cur, int n,
                               bool lower_is_better);

}  // namespace gpucheck::compare
