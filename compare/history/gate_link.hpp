// What `gpucheck gate` asks of the history: the file opened and checked before anything is
// measured (a file that is not a history is exit 2 at once), the base commit's runs as the
// baseline (`--against-commit`), and the judged run added afterwards (`--history`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/expected.hpp"
#include "results/results.hpp"
#include "rules/compare.hpp"

namespace gpucheck::compare::history {

struct GateHistory {
  std::string path;
  std::optional<std::string> against;  // --against-commit as given
  std::optional<std::string> commit;   // the stored commit it names; unset when the history has none
};

// nullopt without --history; --against-commit needs --history. A prefix that names several
// commits is an error; one that names none leaves `commit` unset (the stored baseline judges).
Expected<std::optional<GateHistory>> open_gate_history(const std::optional<std::string>& file,
                                                       const std::optional<std::string>& against);

// The commit's runs on the current results' GPU model, read as a baseline (keep_raw), and the line
// that says what was used; nullopt when the history has none of them.
struct CommitBaseline {
  Results results;
  std::string label;  // "history FILE, commit C: N runs on nvidia-h200"
};
Expected<std::optional<CommitBaseline>> against_commit(const GateHistory& h, const Results& current, const Thresholds& t);

// Adds the judged run (its verdicts from the comparison); the stored run's id, or the one it
// already was.
Expected<std::int64_t> add_gate_run(const GateHistory& h, const Results& current, const Comparison& judged,
                                    const std::string& source);

}  // namespace gpucheck::compare::history
