// `gpucheck watch`: runs a command while sampling its GPUs (NVML, GPM) and the host, then judges
// which link limits it and writes watch.json, results.json and watch.html. The exit status is
// the command's (128+N for signal N, 127 when it cannot start); bad watch options are 2.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "base/args.hpp"
#include "watch/host_sample.hpp"
#include "gpucheck/core/telemetry.hpp"

namespace gpucheck::compare {

extern const char* const kWatchUsage;

// What watch reads the world through: fakes in tests.
struct WatchDeps {
  const gpucheck::NvmlApi* nvml = nullptr;  // nullptr: no GPU sampled, `nvml_error` says why
  std::string nvml_error;
  const gpucheck::ProcReader* proc = nullptr;
  int out_fd = 1, err_fd = 2;  // where the command's output goes
  bool progress = false;       // a progress line on err_fd (a terminal)
  const std::atomic<int>* stop = nullptr;  // --pid: a stop signal's number once one came (core/stop.hpp)
  std::optional<std::string> containment_env;  // GPUCHECK_CONTAINMENT: checked before the command starts
};

ExitStatus run_watch(const std::vector<std::string>& args, cli::Context& ctx, const WatchDeps& deps);
// The real NVML (dlopen) and /proc; a progress line when stderr is a terminal.
ExitStatus cmd_watch(const std::vector<std::string>& args, cli::Context& ctx);

}  // namespace gpucheck::compare
