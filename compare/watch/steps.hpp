// Step times from the watched command's output (`--step REGEX`, a PCRE2 pattern run with
// limits: watch/pcre2.hpp): a line that matches gives the
// first number at the regex's first group (or at the match, without a group) and the unit
// written right after it: ns, us, µs, ms (and no unit: milliseconds), s, s/it (tqdm's seconds
// per iteration). A rate (it/s, img/s, any "/s") is not a time: the line is counted as a rate
// line and left out, never inverted, because a rate's number is often an average over steps.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "watch/pcre2.hpp"
#include "watch/rules.hpp"

namespace gpucheck::compare::watch {

struct StepLine {
  // Limit: the pattern hit PCRE2's match, depth or heap limit on this line (no answer).
  enum class Kind { NoMatch, Time, Rate, NoNumber, Limit };
  Kind kind = Kind::NoMatch;
  double ms = 0.0;  // Time
};

class StepParser {
 public:
  static Expected<StepParser> make(const std::string& regex);
  [[nodiscard]] StepLine parse(std::string_view line) const;

 private:
  explicit StepParser(std::shared_ptr<Pcre2Pattern> re) : re_(std::move(re)) {}
  std::shared_ptr<Pcre2Pattern> re_;
};

// The distribution of step times: the first `warmup` left out (10% of the steps, at least 1
// when there are 3 or more, at most 10), the rest summarised.
struct StepStats {
  int seen = 0, warmup = 0, rate_lines = 0, unparsed_lines = 0;
  std::vector<double> ms;  // after warm-up, in order
  std::optional<double> median_ms, p10_ms, p90_ms, mean_ms, cv;
};
int warmup_steps(int seen);
StepStats step_stats(const std::vector<double>& all_ms, int rate_lines = 0, int unparsed_lines = 0);
// When the steps after warm-up ran, from the times their lines came (at_s, seconds since the
// command started; ms, each step's time): from the line before the first counted step (the
// first step's own start, its line's time less its duration, without warm-up) to the last
// line. Empty with fewer than 2 counted steps or times out of order.
std::optional<gpucheck::watch::Window> steps_window(const std::vector<double>& at_s, const std::vector<double>& ms, int warmup);
// Linear interpolation between order statistics (numpy's default); nullopt when empty.
std::optional<double> percentile(std::vector<double> xs, double p);

}  // namespace gpucheck::compare::watch
