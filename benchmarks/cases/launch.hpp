// bench_launch's case model: the modes (how a chain is launched and timed), the axes, and the
// suites as values of them. Pure: the binary maps a mode's name to its op.
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

// What a mode makes its cases of: chains of every kernel per length (eager, graph), one
// single empty launch (host_launch), or one empty-kernel case per length (the other host modes).
enum class Shape { chains, single, per_length };

struct Mode {
  std::string_view name;
  TimingMode timing;
  int batch;  // calls per sample; 0: the engine's choice
  Shape shape;
};

inline const std::vector<Mode>& modes() {
  namespace seg = contract::segment;
  static const std::vector<Mode> m{
      {seg::eager, TimingMode::per_call, 1, Shape::chains},
      {seg::graph, TimingMode::per_call, 1, Shape::chains},
      {"eager_held", TimingMode::held, 1, Shape::chains},
      {"host_launch", TimingMode::host, kHostLaunchesPerSample, Shape::single},
      {"host_graph_launch", TimingMode::host, kGraphLaunchesPerSample, Shape::per_length},
      {"graph_instantiate", TimingMode::host, 1, Shape::per_length},
  };
  return m;
}

struct Case {
  const Mode* mode;
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

// The suites: the chains per length (per mode, per kernel), the held eager chains of 100, then
// the host modes, each over the lengths (host_launch once). Acceptance and the burn run none.
inline axes::CaseModel model() {
  using axes::Kind;
  using enum Suite;
  std::vector<std::string> names;
  for (const Mode& m : modes()) names.emplace_back(m.name);
  const auto suite = [](Suite s, const std::vector<std::string>& lengths, const std::string& all) {
    axes::SuiteAxes x{s, {{"mode", "eager,graph"}, {"kernel", "empty,small"}, {"length", all}}, {}};
    for (const std::string& n : lengths) x.sets.push_back({{"length", n}});
    x.sets.push_back({{"mode", "eager_held"}, {"length", "100"}});  // the GPU's side of eager launching
    x.sets.push_back({{"mode", "host_launch"}, {"kernel", "empty"}, {"length", "1"}});
    for (const std::string m : {"host_graph_launch", "graph_instantiate"}) x.sets.push_back({{"mode", m}, {"kernel", "empty"}});
    return x;
  };
  return {std::string(contract::family::launch),
          {{"mode", Kind::word, "eager launches, graph replay, eager launches queued behind a hold (the GPU's side), the host's cost of a call", names, 1, 1},
           {"kernel", Kind::word, "the kernel chained", {"empty", "small"}, 1, 1},
           {"length", Kind::integer, "kernels per chain (graph nodes)", {}, 1, 1 << 20}},
          {suite(quick, {"100"}, "100"), suite(full, {"1", "10", "100", "1000"}, "1,10,100,1000")}};
}

// A suite's cases (or the user's points), in order. A user's combination that does not exist
// is a case, registered skipped with why (Case::unrunnable).
inline std::vector<Case> cases(Suite s, const std::vector<axes::Point>* user) {
  std::vector<Case> out;
  for (const axes::Point& p : points_of(model(), s, user))
    for (const Mode& m : modes())
      if (m.name == p.text("mode")) out.push_back({&m, p.text("kernel") == "small" ? Kernel::small : Kernel::empty, p.n("length")});
  return out;
}

}  // namespace gpucheck::launch
