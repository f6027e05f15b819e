// bench_tool: how fast the gpucheck tool itself is, as Google Benchmark JSON that `gpucheck
// compare` judges against baselines/cpu/bench_tool.json. The context names the host CPU and the
// commit, so a comparison says when the machine, not the code, changed.
#include <benchmark/benchmark.h>

#include <optional>
#include <string>

#include "gpucheck/core/telemetry.hpp"
#include "tool_cases.hpp"

namespace gpucheck::compare::bench {

bool register_tool_cases(std::initializer_list<ToolCase> cases) {
  for (const ToolCase& c : cases) {
    auto* b = benchmark::RegisterBenchmark(c.name, c.run)->UseManualTime()->Unit(benchmark::kMillisecond);
    if (c.repetitions > 0) b->Repetitions(c.repetitions);
  }
  return true;
}

}  // namespace gpucheck::compare::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  const std::optional<std::string> cpuinfo = gpucheck::RealFileReader().read("/proc/cpuinfo");
  const std::optional<std::string> cpu = cpuinfo ? gpucheck::host_cpu_from_proc(*cpuinfo) : std::nullopt;
  benchmark::AddCustomContext("host_cpu", cpu.value_or("unknown"));
  benchmark::AddCustomContext("gpucheck_commit", GPUCHECK_GIT_COMMIT);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
