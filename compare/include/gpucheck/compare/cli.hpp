// The gpucheck command line as a function: arguments, a file system and the environment in,
// text and an exit status out. main() only wires it to the process; tests call it directly
// (with a fake disk, a fake process runner and a fake NVML probe).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/compare/filesystem.hpp"

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

ExitStatus run_cli(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io);

std::string usage_text();

}  // namespace gpucheck::compare
