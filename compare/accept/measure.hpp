// `gpucheck accept` without --results, the measuring run: the accept suites per GPU through
// the gate's runner, NCCL over the node, --burn on every GPU at once; the judge reads its files.
#pragma once

#include <string>
#include <vector>

#include "accept/command.hpp"
#include "accept/judge.hpp"
#include "base/command.hpp"
#include "base/expected.hpp"
#include "base/filesystem.hpp"

namespace gpucheck::compare {

// Needs env.runner (and env.gpu_probe to count the GPUs without --devices). Errors: no GPU,
// binaries not found.
struct AcceptMeasurement {
  std::string dir;                       // where the JSON is (OUT, walked by the judge)
  std::vector<AcceptCheck> failed_runs;  // binaries that crashed, hung or could not run
  std::vector<std::string> notes;        // what was not run and why
};
Expected<AcceptMeasurement> measure_accept(const AcceptArgs& args, FileSystem& fs, const CliEnvironment& env,
                                           CliOutput& io);

}  // namespace gpucheck::compare
