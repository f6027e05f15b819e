// The gpucheck command line as a function: arguments, a file system and the environment in,
// text and an exit status out. main() only wires it to the process; tests call it directly
// (with a fake disk, a fake process runner and a fake NVML probe).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/command.hpp"
#include "base/filesystem.hpp"

namespace gpucheck::compare {

ExitStatus run_cli(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io);

std::string usage_text();

// A baseline's measurement date as `baseline show` prints it: one date as is; the dates a
// merged context joins with " | " as their count and range ("8 dates, 2026-11-20T... to
// 2026-12-01T..."), earliest first.
std::string dates_text(std::string_view merged);

}  // namespace gpucheck::compare
