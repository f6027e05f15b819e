// Why a case got slower, from what the runs recorded beside the figure: the SM clock, the
// clock-event (throttle) reasons, samples taken while throttled, whether the measurement hit
// its time limit before its noise target, and other processes on the GPU. A user tells a
// noisy neighbour from a code regression from these lines alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rules/compare.hpp"
#include "results/results.hpp"

namespace gpucheck::compare {

// The telemetry lines for one case whose current figure is worse than the baseline's; empty
// when nothing differs. `other_processes`: other processes seen on the GPU before the run.
std::vector<std::string> explain_case(const Benchmark& base, const Benchmark& cur, std::optional<int> other_processes);

// Fills Row::why for regressions, unconfirmed slow-downs and re-measured cases.
void explain_regressions(Comparison& c, const Results& baseline, const Results& current,
                         std::optional<int> other_processes);

// The OR of a bit-mask counter over a case's repetitions (clock_event_reasons): a reason seen
// in one repetition counts. nullopt when the case does not carry the counter or no value of it
// is a whole number from 0 to 2^53.
std::optional<std::uint64_t> counter_mask(const Benchmark& b, const std::string& counter);

}  // namespace gpucheck::compare
