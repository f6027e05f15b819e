// A stored baseline made from the history (`gpucheck baseline update --from-history`): the last N
// runs of one branch and suite on one GPU model, every case with every repetition of every run,
// as one Google Benchmark file the baseline store writes like any other (results/baseline.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "base/expected.hpp"
#include "history/store.hpp"

namespace gpucheck::compare::history {

struct FromHistory {
  std::string branch, suite;
  std::optional<std::string> gpu_slug;  // default: the only GPU model in the history
  std::size_t last = 5;
};

struct HistoryBaseline {
  std::string json;  // Google Benchmark's shape: the newest run's context, every run's date
  std::size_t runs = 0;
  std::string first_commit, last_commit;
};

// The runs taken are the newest `last` of that branch, suite and GPU model; fewer is an error
// naming how many there are. A case's entries are its repetitions in every run (real_time in ns,
// its rate counter beside it, its method when not 1), numbered 0..n-1; a case no run measured is
// left out, and so are a case's runs of another method than its newest run's.
Expected<HistoryBaseline> baseline_from_history(Store& store, const FromHistory& o);

}  // namespace gpucheck::compare::history

namespace gpucheck::compare::history {

// The runs of one commit (exact) on one GPU model as a baseline (`gate --against-commit`): every
// repetition of every run; a case whose `host_bound` says so only from runs of `host_cpu`, and
// left out when there is none. nullopt when the history has no run of that commit on that model.
Expected<std::optional<HistoryBaseline>> commit_baseline(Store& store, const std::string& commit, const std::string& gpu_slug,
                                                         const std::string& host_cpu,
                                                         const std::function<bool(const std::string&)>& host_bound);

}  // namespace gpucheck::compare::history
