// bench_launch's tables: the modes (how a chain is launched and timed) and the chain lengths,
// each with the suites it belongs to. Pure: the binary hands in how to make each mode's op.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/measure.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/options.hpp"
#include "listing.hpp"

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
  Coordinates coordinates() const {
    return {{"mode", std::string(mode->name)}, {"kernel", std::string(to_string(kernel))}, {"length", std::to_string(n)}};
  }
  // Why this combination of the user's axes does not exist (nullopt: it runs).
  std::optional<std::string> unrunnable() const {
    if (mode->shape != Shape::chains && kernel != Kernel::empty)
      return std::string(mode->name) + " launches the empty kernel only";
    if (mode->shape == Shape::single && n != 1) return std::string(mode->name) + " times single launches: length 1";
    return std::nullopt;
  }
};

inline std::vector<axes::Axis> axis_table() {
  using axes::Kind;
  std::vector<std::string> names;
  for (const auto& m : modes(0, 0, 0, 0, 0)) names.emplace_back(m.name);
  return {
      {"mode", Kind::word, "eager launches, graph replay, the host's cost of a call", names, 1, 1, "eager,graph", "eager,graph"},
      {"kernel", Kind::word, "the kernel chained", {"empty", "small"}, 1, 1, "empty,small", "empty,small"},
      {"length", Kind::integer, "kernels per chain (graph nodes)", {}, 1, 1 << 20, "100", "1,10,100,1000"},
  };
}

// A suite's cases, in order: the chains (per length, per mode, per kernel), then the host
// modes (each over the lengths, host_launch once).
template <class Make>
std::vector<Case<Make>> cases(const std::vector<Mode<Make>>& ms, Suite s, const std::vector<axes::Point>* points = nullptr) {
  std::vector<Case<Make>> out;
  if (points) {  // the user's axes: each point as given (a combination that does not exist is skipped, with why)
    for (const axes::Point& p : *points)
      for (const auto& m : ms)
        if (m.name == p.text("mode")) out.push_back({&m, p.text("kernel") == "small" ? Kernel::small : Kernel::empty, p.n("length")});
    return out;
  }
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
