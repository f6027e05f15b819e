// `gpucheck gate` (run the suite, confirm a regression in a fresh process, compare with the
// stored baseline, write results.json, compare.md/json and junit.xml) and `gpucheck run` (run
// the suite and keep the results, e.g. to record a baseline).
#pragma once

#include <string>
#include <vector>

#include "base/args.hpp"

namespace gpucheck::compare::cli {

ExitStatus cmd_gate(const std::vector<std::string>& args, Context& ctx);
ExitStatus cmd_run(const std::vector<std::string>& args, Context& ctx);

extern const char* const kGateUsage;
extern const char* const kRunUsage;

}  // namespace gpucheck::compare::cli
