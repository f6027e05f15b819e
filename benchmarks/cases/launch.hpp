// bench_launch's tables: the modes (how a chain is launched and timed) and the chain lengths,
// each with the suites it belongs to. Pure: the binary hands in how to make each mode's op.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/measure.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/options.hpp"

namespace gpucheck::launch {

enum class Kernel { empty, small };
inline std::string_view to_string(Kernel k) { return k == Kernel::empty ? "empty" : "small"; }

inline constexpr int kHostLaunchesPerSample = 100;  // far below the launch queue's depth
inline constexpr int kGraphLaunchesPerSample = 10;

// What a row makes its cases of: chains of every kernel per length (eager, graph), one
// single empty launch (host_launch), or one empty-kernel case per length (the other host modes).
enum class Shape { chains, single, per_length };

template <class Make>
struct Mode {
  std::string_view name;
  TimingMode timing;
  int batch;  // calls per sample; 0: the engine's choice
  Shape shape;
  Suites suites;
  Make make;
};

template <class Make>
std::vector<Mode<Make>> modes(Make eager, Make graph, Make host_launch, Make host_graph_launch, Make graph_instantiate) {
  using enum Suite;
  namespace seg = contract::segment;
  return {
      {seg::eager, TimingMode::per_call, 1, Shape::chains, {quick, full}, eager},
      {seg::graph, TimingMode::per_call, 1, Shape::chains, {quick, full}, graph},
      {"host_launch", TimingMode::host, kHostLaunchesPerSample, Shape::single, {quick, full}, host_launch},
      {"host_graph_launch", TimingMode::host, kGraphLaunchesPerSample, Shape::per_length, {quick, full}, host_graph_launch},
      {"graph_instantiate", TimingMode::host, 1, Shape::per_length, {quick, full}, graph_instantiate},
  };
}

struct Length {
  std::int64_t n;
  Suites suites;
};

inline std::vector<Length> lengths() {
  using enum Suite;
  return {{1, {full}}, {10, {full}}, {100, {quick, full}}, {1000, {full}}};  // acceptance and burn-in: none
}

template <class Make>
struct Case {
  const Mode<Make>* mode;
  Kernel kernel;
  std::int64_t n;
  std::string name() const {
    return bench_name({contract::family::launch, mode->name, to_string(kernel), std::to_string(n)});
  }
};

// A suite's cases, in order: the chains (per length, per mode, per kernel), then the host
// modes (each over the lengths, host_launch once).
template <class Make>
std::vector<Case<Make>> cases(const std::vector<Mode<Make>>& ms, Suite s) {
  std::vector<Case<Make>> out;
  std::vector<std::int64_t> ns;
  for (const Length& l : lengths())
    if (l.suites.has(s)) ns.push_back(l.n);
  for (std::int64_t n : ns)
    for (const auto& m : ms)
      if (m.suites.has(s) && m.shape == Shape::chains)
        for (Kernel k : {Kernel::empty, Kernel::small}) out.push_back({&m, k, n});
  for (const auto& m : ms) {
    if (!m.suites.has(s) || ns.empty()) continue;
    if (m.shape == Shape::single) out.push_back({&m, Kernel::empty, 1});
    else if (m.shape == Shape::per_length)
      for (std::int64_t n : ns) out.push_back({&m, Kernel::empty, n});
  }
  return out;
}

}  // namespace gpucheck::launch
