// One run of one benchmark binary (the runner's record of it: compare/runner/suite_runner.hpp
// makes it): how the process ended and what it reported. Here, below the rules and the
// renderers, because a gate's report lists the binaries it ran beside the rows it judged.
#pragma once

#include <string>

namespace gpucheck::compare {

struct BinaryRun {
  enum class Status { Ok, CaseFailed, Errored };
  std::string name;            // bench_matmul
  std::string pass = "first";  // "first" or "confirm"
  Status status = Status::Ok;
  std::string reason;          // for CaseFailed / Errored
  double seconds = 0.0;
  int cases_ok = 0, cases_errored = 0, cases_skipped = 0;
  std::string log;             // its stderr, as a path
};

}  // namespace gpucheck::compare
