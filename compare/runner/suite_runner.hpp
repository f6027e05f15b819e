// The gate's runner, shared by `gpucheck gate`, `gpucheck run` and `gpucheck accept`: one
// benchmark binary in its own process (runner contract, DESIGN.md), its JSON written to a
// temporary name and trusted only once the process ended and the file parses, then renamed
// into DIR/runs (or DIR/confirm); a crash, hang, exit 2 or unreadable JSON costs that binary
// only. Internal to compare/src.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/args.hpp"
#include "results/binary_run.hpp"
#include "results/results.hpp"
#include "rules/compare.hpp"
#include "runner/cpu_pin.hpp"
#include "gpucheck/core/regex.hpp"
#include "runner/gpu_activity.hpp"

namespace gpucheck::compare::cli {

struct RunPlan {
  std::string self;  // how gpucheck was invoked, for the command lines it prints
  std::string bin_dir, out, suite = "quick";
  int device = 0;
  double timeout_s = 0.0;  // per one-repetition run
  std::optional<std::string> filter;
  std::optional<Regex> filter_re;
  std::vector<std::string> extra_args;  // passed to every binary after the contract's flags
  PinRequest pin;                        // --pin-cpu (runner/cpu_pin.hpp)
  std::optional<int> pin_cpu;            // decided by choose_pin: the core every binary runs on
};

const OptionSet& run_options();  // --bin-dir --out --suite --device --timeout --filter --pin-cpu
Expected<RunPlan> read_plan(const Args& a, const std::string& self, const std::string& command);
// Decides plan.pin_cpu from plan.pin (auto: the GPU's bus id from the NVML snapshot, its NUMA
// node's cores from sysfs) and says so in one line; an Error only for a --pin-cpu N this
// process may not run on. A host without NVML or the sysfs file runs the binaries unpinned.
Status choose_pin(Context& ctx, RunPlan& plan, const ActivitySnapshot& snap);
std::string seconds_text(double s);

// The reason of a binary that exited 2 (runner contract: could not run at all) starts so.
inline constexpr std::string_view kCouldNotRun = "could not run (exit 2): ";

// One process run of one binary and what came of it.
struct Outcome {
  BinaryRun run;
  std::optional<Results> results;
  bool no_device = false;        // exit 2 saying there is no CUDA device
  bool matched_nothing = false;  // a filter left it no case
  bool interrupted = false;
};

// The families whose binary errored in the first pass, each named from its binary by core's
// contract, for the rules (CompareOptions::errored_families). A confirmation run's error
// blames nothing: the first pass's figures stand. A binary not named bench_* has no family.
std::vector<ErroredFamily> errored_families(const std::vector<BinaryRun>& runs);

class SuiteRunner {
 public:
  SuiteRunner(Context& ctx, const RunPlan& plan) : ctx_(ctx), plan_(plan) {}

  // `pass`: "first", "fresh" (the cases measured in fresh processes, thresholds' "processes":
  // DIR/runs/BIN.fresh.json, logs BIN.fresh.log) or "confirm"; `allow_empty`: a filter may
  // leave the binary no case.
  Outcome run(const std::string& bin, const std::string& progress, const std::string& pass, int reps,
              const std::optional<std::string>& filter, bool allow_empty);
  // `processes` runs of the binary, one repetition each, each a fresh process, read as one
  // run's repetitions (stack_repetitions): a host-bound figure moves with the process (its
  // placement), so its repetitions must span processes (docs/GATE.md, host-bound). The first
  // run that errors ends it and is the outcome.
  Outcome run_fresh(const std::string& bin, const std::string& progress, const std::string& pass, int processes,
                    const std::optional<std::string>& filter, bool allow_empty);
  // `processes` fresh processes of `bin` from `base` (another build's binaries, its own --out)
  // and from this runner, alternately, the base's first: base 1, this 1, base 2, this 2, ... The
  // two builds see the same levels and periods of the machine, and each process of this build
  // has a base process just before it and one just after (docs/GATE.md, "Fresh processes against
  // the base build"). Each side read as run_fresh reads its own; the first run that errors ends
  // both. Both outcomes carry results, or neither does.
  std::pair<Outcome, Outcome> run_fresh_paired(SuiteRunner& base, const std::string& bin, const std::string& progress,
                                               const std::string& pass, int processes,
                                               const std::optional<std::string>& filter);

 private:
  void read_json(Outcome& o, const std::string& tmp, const std::string& final_json, int code, bool allow_empty,
                 const std::string& last);
  // A fresh-process run's processes so far, and how they stack into one run's repetitions.
  struct FreshRuns {
    std::vector<Results> runs;
    Outcome last;
    double seconds = 0.0;
    bool add(Outcome o);  // false (and `last` is that outcome) when the process errored
  };
  Outcome stack_fresh(const std::string& bin, const std::string& pass, FreshRuns&& f);

  Context& ctx_;
  const RunPlan& plan_;
};

}  // namespace gpucheck::compare::cli
