// What one watched run leaves: the record (timeline, steps, verdict) and its three renderings:
// watch.json (everything, columnar), results.json (the case in Google Benchmark's shape, so
// compare, baseline update and report take it unchanged) and the terminal summary (the
// verdict first). Pure functions of the record.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "watch/rules.hpp"
#include "watch/child.hpp"
#include "watch/steps.hpp"

namespace gpucheck::compare::watch {

// watch.json's version: 2 adds the PCIe link columns (pcie_gen, pcie_width and their maxima) and
// each GPU's processes with their shares; a version-1 record reads with those absent.
inline constexpr int kWatchRecordVersion = 2;

struct WatchRun {
  std::vector<std::string> command;
  std::string name;  // the case's name in results.json
  double interval_s = 0.1;
  std::string date;  // ISO 8601, when it started
  std::string host_name;
  std::optional<std::string> host_cpu, driver_version;
  std::string no_gpu_reason;  // why no GPU was sampled ("" when one was)
  std::vector<std::string> notes;  // e.g. GPUs without GPM
  ChildEnd end;
  std::optional<int> attached_pid;  // --pid: a job watch did not start (no exit status)
  std::string attach_end;           // --pid: why watching stopped
  std::optional<std::string> step_regex;
  StepStats steps;
  gpucheck::watch::Timeline timeline;
  gpucheck::watch::Verdict verdict;
};

// "python3 ci/examples/train_step.py" -> "watch/train_step"; "./a.out" -> "watch/a.out".
std::string default_case_name(const std::vector<std::string>& command);

std::string watch_json(const WatchRun& run);
// A watch.json read back (the timeline, steps and end as recorded; the verdict left to judge
// again); `where` names the file in the error.
Expected<WatchRun> read_watch_json(std::string_view text, const std::string& where);
std::string results_json(const WatchRun& run);
std::string summary_text(const WatchRun& run, const std::vector<std::string>& written);
// The line on a terminal while it runs: elapsed, last step, the first job GPU's util and power.
std::string progress_line(double elapsed_s, std::optional<double> last_step_ms, const gpucheck::GpuSample* gpu,
                          std::optional<double> cpu_pct);

}  // namespace gpucheck::compare::watch
