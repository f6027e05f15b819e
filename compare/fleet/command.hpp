// `gpucheck fleet` and `gpucheck fleet pairs`: arguments, loading, the judge and the outputs.
#pragma once

#include <string>
#include <vector>

#include "base/command.hpp"

namespace gpucheck::compare {

// args[0] is the program, args[1] "fleet". Exit 0 every node passes, 1 a node failed, holds an
// outlier or is missing (without --allow-missing), 2 bad input (one line on io.err).
ExitStatus cmd_fleet(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io);

std::string fleet_usage_text();

}  // namespace gpucheck::compare
