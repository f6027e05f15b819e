// The history's speed on 1,000 runs of 60 cases (5 repetitions each, a real_time and a TFLOPS
// figure per case; 10 of the cases shift by 15% at run 500): adding them, one transaction per
// run as 1,000 `history add` calls would; finding the change-points of every case; rendering the
// trend page. Inputs are made once, in memory; the history file lives in a temporary folder.
// The budgets (add under 10 s, changes and report under 2 s each on the 2-core CPU
// machine) are read off these figures, never asserted by a test.
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "history/changes.hpp"
#include "history/command.hpp"
#include "history/report.hpp"
#include "history/store.hpp"
#include "tool_cases.hpp"

namespace gpucheck::compare::bench {
namespace {

constexpr int kRuns = 1000, kCases = 60, kReps = 5;

std::vector<history::StoredRun> make_runs() {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::vector<history::StoredRun> out;
  for (int i = 0; i < kRuns; ++i) {
    Results r;
    char commit[32], date[64];
    std::snprintf(commit, sizeof commit, "c%06d", i);
    std::snprintf(date, sizeof date, "2026-%02d-%02dT%02d:00:00+00:00", 1 + i / 100 % 12, 1 + i / 4 % 25, i % 24);
    r.source = "synthetic";
    r.context = {{"gpu_name", "NVIDIA H200"}, {"gpucheck_commit", commit}, {"git_branch", "main"}, {"date", date},
                 {"host_cpu", i % 2 ? "Xeon A" : "Xeon B"}, {"host_name", i % 2 ? "node-1" : "node-2"},
                 {"gpucheck_suite", "quick"}};
    for (int c = 0; c < kCases; ++c) {
      Benchmark b;
      b.name = "family" + std::to_string(c / 10) + "/case/fp16/" + std::to_string(c);
      const double level = 1000.0 * (1 + c) * (c % 6 == 0 && i >= kRuns / 2 ? 1.15 : 1.0);
      for (int k = 0; k < kReps; ++k) {
        b.samples_ns.push_back(level * (1 + noise(rng)));
        b.counter_samples["TFLOPS"].push_back(1e6 / b.samples_ns.back());
      }
      b.real_time_ns = b.samples_ns[2];
      b.counters["TFLOPS"] = 1e6 / b.real_time_ns;
      b.repetitions = kReps;
      r.benchmarks.push_back(std::move(b));
    }
    r.reindex();
    out.push_back(history::run_from_results(r, {}, {}, "real_time"));
  }
  return out;
}

const std::vector<history::StoredRun>& runs() {
  static const std::vector<history::StoredRun> all = make_runs();
  return all;
}

// A temporary folder with the history of every run in it, removed at exit.
struct Folder {
  std::string dir;
  Folder() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpucheck-bench-history-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) dir = tmpl;
  }
  ~Folder() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
};
const Folder& folder() {
  static const Folder f;
  return f;
}

// Adds every run into `path`, one transaction each; false (with the reason) on the first failure.
bool add_all(const std::string& path, std::string* why) {
  auto store = history::Store::open(path, history::Store::Access::Create);
  if (!store) return *why = store.error().str(), false;
  for (const auto& r : runs())
    if (auto a = store->add({r}); !a) return *why = a.error().str(), false;
  if (auto k = store->checkpoint(); !k) return *why = k.error().str(), false;
  return true;
}

const std::string& full_history() {
  static const std::string path = [] {
    const std::string p = folder().dir + "/full.db";
    std::string why;
    return add_all(p, &why) ? p : std::string();
  }();
  return path;
}

void add(benchmark::State& state) {
  if (folder().dir.empty()) state.SkipWithError("no temporary folder");
  const std::string path = folder().dir + "/add.db";
  runs();
  time_each(state, [&] {
    std::error_code ec;
    for (const char* tail : {"", "-wal", "-shm"}) std::filesystem::remove(path + tail, ec);
    std::string why;
    if (add_all(path, &why)) return true;
    state.SkipWithError(why.c_str());
    return false;
  });
}

// Reads the series of the full history, then `work` on them.
template <class Work>
void over_history(benchmark::State& state, Work work) {
  if (full_history().empty()) state.SkipWithError("the history did not build");
  time_each(state, [&] {
    auto store = history::Store::open(full_history(), history::Store::Access::Read);
    if (!store) return state.SkipWithError(store.error().str().c_str()), false;
    auto points = store->points({std::string("nvidia-h200"), std::nullopt}, "real_time");
    if (!points) return state.SkipWithError(points.error().str().c_str()), false;
    const auto series = history::series_of(std::move(*points));
    const auto found = history::find_changes(series, Thresholds{}, history::ChangeOptions{});
    if (found.size() != kCases / 6) return state.SkipWithError("the shifted cases were not all found"), false;
    work(series, found);
    return true;
  });
}

void changes(benchmark::State& state) {
  over_history(state, [](const auto& series, const auto& found) { benchmark::DoNotOptimize(series.size() + found.size()); });
}

void report(benchmark::State& state) {
  const Thresholds t;
  over_history(state, [&t](const auto& series, const auto& found) {
    const history::TrendInput in{"nvidia-h200", "", "real_time", &series, &found, &t, nullptr, ""};
    std::string html = history::trend_html(in);
    benchmark::DoNotOptimize(html);
  });
}

[[maybe_unused]] const bool registered = register_tool_cases({
    {"tool/history/add/1000x60", add},
    {"tool/history/changes/1000x60", changes},
    {"tool/history/report/1000x60", report},
});

}  // namespace
}  // namespace gpucheck::compare::bench
