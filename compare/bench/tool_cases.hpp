// bench_tool's cases: each file of compare/bench/ lists its cases in one table and registers the
// table at start-up, so a later part (history, fleet) adds its cases with a file of its own. A
// case's name is its key in baselines/cpu/bench_tool.json: tool/<part>/<what>/<size>.
// A case's time is the process's CPU time (every thread's), not the wall clock: the machines
// that run it are shared, and another job's load moves CPU time far less than wall time.
#pragma once

#include <benchmark/benchmark.h>
#include <time.h>

#include <initializer_list>

namespace gpucheck::compare::bench {

struct ToolCase {
  const char* name;
  void (*run)(benchmark::State&);
  // Repetitions of its own, for a case of tens of seconds (0: --benchmark_repetitions decides).
  int repetitions = 0;
};

// Registers every row (manual time, in milliseconds); returns true so that a file registers its
// table from a namespace-scope initialiser.
bool register_tool_cases(std::initializer_list<ToolCase> cases);

inline double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The case's loop: times each call of `body` in process CPU time. `body` returns false after
// state.SkipWithError, which ends the loop.
template <class Body>
void time_each(benchmark::State& state, Body body) {
  for (auto _ : state) {
    const double t0 = process_cpu_seconds();
    const bool ok = body();
    state.SetIterationTime(process_cpu_seconds() - t0);
    if (!ok) break;
  }
}

}  // namespace gpucheck::compare::bench
