#include "gpucheck/harness/registry.hpp"

#include <atomic>
#include <cstdio>
#include <exception>

namespace gpucheck::harness {
namespace {
std::atomic<int> g_failed{0};
}

benchmark::internal::Benchmark* register_case(const std::string& name, CaseBody body) {
  auto wrapped = [body = std::move(body)](benchmark::State& state) {
    try {
      body(state);
    } catch (const std::exception& e) {
      ++g_failed;
      state.SkipWithError(e.what());
    }
  };
  return benchmark::RegisterBenchmark(name.c_str(), wrapped)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

int failed_cases() { return g_failed.load(); }

}  // namespace gpucheck::harness
