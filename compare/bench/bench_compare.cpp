// The tool's own speed on a large suite: 10,000 benchmarks a side, once with one run each and
// once with 3 repetitions plus 4 aggregates each (70,000 entries a file). Loading, comparing
// and rendering are timed apart (inputs made once, in memory); cli_compare is the whole
// `gpucheck compare --format json --out` on files, as a user runs it (its two files parse on
// two threads). Read a figure as CPU time per call; `gpucheck compare` against
// baselines/cpu/bench_tool.json says what moved.
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "base/filesystem.hpp"
#include "cli/cli.hpp"
#include "report/render.hpp"
#include "results/results.hpp"
#include "rules/compare.hpp"
#include "synthetic.hpp"
#include "tool_cases.hpp"

namespace gpucheck::compare::bench {
namespace {

constexpr int kBenchmarks = 10000;

struct Side {
  std::string base_text, cur_text;
  Results base, cur;
  Comparison comparison;
};

// The current run is 3% slower than the baseline everywhere: under the 10% threshold, so
// every row is judged and none fails, the common case of a gate.
Side make_side(bool repetitions) {
  Side s;
  s.base_text = synthetic_results(kBenchmarks, 1.0, repetitions);
  s.cur_text = synthetic_results(kBenchmarks, 1.03, repetitions);
  auto base = parse_results(s.base_text, "base.json");
  auto cur = parse_results(s.cur_text, "cur.json");
  if (base && cur) {
    s.base = std::move(*base);
    s.cur = std::move(*cur);
    s.comparison = compare_results(s.base, s.cur, CompareOptions{});
  }
  return s;
}

const Side& side(bool repetitions) {
  if (!repetitions) {
    static const Side plain = make_side(false);
    return plain;
  }
  static const Side reps = make_side(true);
  return reps;
}

// The two files on disk for cli_compare, in a folder removed at exit.
struct Files {
  std::string dir;
  Files() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpucheck-bench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return;
    RealFileSystem fs;
    if (fs.write(tmpl + "/base.json", side(true).base_text) && fs.write(tmpl + "/cur.json", side(true).cur_text))
      dir = tmpl;
  }
  ~Files() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;
};

template <bool Repetitions>
void load(benchmark::State& state) {
  const Side& s = side(Repetitions);
  time_each(state, [&] {
    auto r = parse_results(s.base_text, "base.json");
    if (!r) state.SkipWithError(r.error().str().c_str());
    benchmark::DoNotOptimize(r);
    return r.ok();
  });
}

template <bool Repetitions>
void compare_rows(benchmark::State& state) {
  const Side& s = side(Repetitions);
  if (s.base.benchmarks.empty()) state.SkipWithError("the synthetic results did not load");
  time_each(state, [&] {
    Comparison c = compare_results(s.base, s.cur, CompareOptions{});
    benchmark::DoNotOptimize(c);
    return true;
  });
}

template <std::string (*Render)(const CompareReport&)>
void render(benchmark::State& state) {
  const CompareReport report(side(true).comparison);
  time_each(state, [&] {
    std::string text = Render(report);
    benchmark::DoNotOptimize(text);
    return true;
  });
}

std::string terminal(const CompareReport& r) { return render_terminal(r, false); }

void cli_compare(benchmark::State& state) {
  static const Files files;
  if (files.dir.empty()) state.SkipWithError("cannot write the inputs to a temporary folder");
  RealFileSystem fs;
  time_each(state, [&] {
    CliOutput io;
    const ExitStatus status = run_cli({"gpucheck", "compare", files.dir + "/base.json", files.dir + "/cur.json",
                                       "--format", "json", "--out", files.dir + "/out.json"},
                                      fs, {}, io);
    if (status == ExitStatus::Ok) return true;
    state.SkipWithError(("gpucheck compare exited " + std::to_string(static_cast<int>(status)) + ": " + io.err).c_str());
    return false;
  });
}

[[maybe_unused]] const bool registered = register_tool_cases({
    {"tool/load/gbench_json/10000x1", load<false>},
    {"tool/load/gbench_json/10000x7", load<true>},
    {"tool/compare/rows/10000x1", compare_rows<false>},
    {"tool/compare/rows/10000x7", compare_rows<true>},
    {"tool/render/terminal/10000", render<terminal>},
    {"tool/render/markdown/10000", render<render_markdown>},
    {"tool/render/json/10000", render<render_json>},
    {"tool/cli/compare_json/10000x7", cli_compare},
});

}  // namespace
}  // namespace gpucheck::compare::bench
