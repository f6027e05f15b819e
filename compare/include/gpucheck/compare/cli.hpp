// The gpucheck command line as a function: arguments, a file system and the environment in,
// text and an exit status out. main() only wires it to the process; tests call it directly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpucheck/compare/filesystem.hpp"

namespace gpucheck::compare {

enum class ExitStatus : int { Ok = 0, Regression = 1, BadInput = 2 };

struct CliEnvironment {
  bool stdout_is_tty = false;
  bool no_color = false;                          // NO_COLOR set and non-empty
  std::optional<std::string> step_summary_path;   // GITHUB_STEP_SUMMARY
};

struct CliOutput {
  std::string out;  // for stdout
  std::string err;  // for stderr: on exit 2, exactly one line
};

ExitStatus run_cli(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io);

std::string usage_text();

}  // namespace gpucheck::compare
