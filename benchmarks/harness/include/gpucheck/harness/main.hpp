// The shared main of every benchmark binary: parses the common flags, selects the device,
// records the context, lets the family register its table of cases, runs Google Benchmark,
// writes the results file atomically and turns the outcome into the runner contract's exit
// status (DESIGN.md): 0 every case ran (or was skipped as unsupported; also when the filter
// or the suite selects none: the file then lists no benchmark), 1 a case failed (its entry
// says why), 2 bad usage, no CUDA device, or nothing could run (one line on stderr).
// Every binary has the one main() of benchmarks/harness/src/bench_main.cpp, which runs the
// Family its family file declares with harness::family().
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/core/axes.hpp"

namespace gpucheck::harness {

class Registry;

struct Family {
  // The axes and the suites as their values (gpucheck/core/axes.hpp); model.family names the
  // family ("matmul": every case name starts "matmul/").
  axes::CaseModel model;
  std::function<void(Registry&)> register_cases;
  // The cases the suite (points null) or the axes' points give, on a device with these
  // facts, without touching it (nor making any GPU-side object): what --list prints.
  // Registration makes the same list.
  std::function<std::vector<axes::Listed>(Suite, const std::vector<axes::Point>*, const axes::DeviceFacts&)> list;
  // The family in one sentence, for --help.
  std::string_view summary = {};
  // Its own flags, environment variables and two examples, for --help.
  std::string_view own_help = {};
  // Optional: removes the family's own flags from argv before Google Benchmark parses it
  // (bench_nccl's --mpi). Returns false with a one-line reason on bad input.
  std::function<bool(int* argc, char** argv, std::string* err)> take_args = {};
  // Optional: false on processes whose console output is not wanted (MPI ranks other than 0).
  std::function<bool()> prints = {};
  // The flags take_args takes, for "did you mean" when an argument is left that neither we
  // nor Google Benchmark know.
  std::vector<std::string> options = {};
};

// Declared by each family file (bench_*.cpp), called by the one main(); what the Family's
// functions share (bench_nccl's job) lives as long as it.
Family family();

int run_family(int argc, char** argv, const Family& family);

}  // namespace gpucheck::harness
