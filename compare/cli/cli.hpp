// The gpucheck command line as a function: arguments, a file system and the environment in,
// text and an exit status out. main() only wires it to the process; tests call it directly
// (with a fake disk, a fake process runner and a fake NVML probe).
#pragma once

#include <string>
#include <vector>

#include "base/command.hpp"
#include "base/filesystem.hpp"

namespace gpucheck::compare {

ExitStatus run_cli(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io);

std::string usage_text();

}  // namespace gpucheck::compare
