// What a command works with: the environment it was started in (terminal, colour, step summary,
// the process runner and NVML probe, fakes in tests), where its text goes, and the exit status
// it ends with. Every command is a function over these (cli/cli.hpp holds the dispatcher).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/filesystem.hpp"

namespace gpucheck::compare {

class ProcessRunner;
class GpuActivityProbe;

enum class ExitStatus : int { Ok = 0, Regression = 1, BadInput = 2 };

struct CliEnvironment {
  bool stdout_is_tty = false;
  bool no_color = false;                          // NO_COLOR set and non-empty
  std::optional<std::string> step_summary_path;   // GITHUB_STEP_SUMMARY
  std::optional<std::string> cuda_visible_devices;  // CUDA_VISIBLE_DEVICES: which GPU is --device N
  ProcessRunner* runner = nullptr;       // gate / run: starts the benchmark binaries
  GpuActivityProbe* gpu_probe = nullptr; // gate: who else uses the GPU (nullptr: unknown)
  // The process ends when the command returns (main sets it): a command may leave its large
  // values to the end of the process instead of freeing them (tests and bench_tool: false).
  bool process_ends_after = false;
};

struct CliOutput {
  std::string out;  // for stdout
  std::string err;  // for stderr: on exit 2, exactly one line
  // When set, emit() hands text over at once (progress of a long gate); otherwise it is
  // kept in `out` like everything else.
  std::function<void(std::string_view)> live;

  void emit(const std::string& text) {
    if (live) live(text);
    else out += text;
  }
};

}  // namespace gpucheck::compare
