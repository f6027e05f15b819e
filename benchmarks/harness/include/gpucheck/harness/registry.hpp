// Registration of benchmark cases: manual time, and an exception in a case (a CUDA error, a
// failed verification) becomes SkipWithError for that case only and is counted, so the
// binary's exit status says that something was wrong.
#pragma once
#include <benchmark/benchmark.h>

#include <functional>
#include <string>

namespace gpucheck::harness {

using CaseBody = std::function<void(benchmark::State&)>;

benchmark::internal::Benchmark* register_case(const std::string& name, CaseBody body);

// How many cases ended in an error so far.
int failed_cases();

}  // namespace gpucheck::harness
