// `gpucheck history`: the runs of the suite kept in one SQLite file (store.hpp), and what only a
// history can say: which commit moved a case (changes.hpp) and the trend (report). Subcommands
// add, merge, remove, list, changes, report; every one that writes checkpoints the WAL before it
// returns, so FILE alone holds every run; the reading ones open FILE read-only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/args.hpp"
#include "history/changes.hpp"
#include "history/store.hpp"
#include "rules/thresholds.hpp"

namespace gpucheck::compare {

extern const char* const kHistoryUsage;

namespace cli {
ExitStatus cmd_history(const std::vector<std::string>& args, Context& ctx);
}  // namespace cli

namespace history {

// One run read from a results file or a run's folder (DIR/results.json as gate, run and watch
// write it; the verdicts of DIR/compare.json when the gate left one), ready to store.
Expected<StoredRun> read_run_input(const FileSystem& fs, const std::string& path, const AddOptions& o);

// A case series is one case, one metric, one way of measuring (method): a change of method
// restarts it (an absent method and method 1 are one: rules/compare.hpp, same_method).
struct Series {
  std::string name, metric, unit, direction, method;
  std::vector<Point> points;  // in commit order
};
std::vector<Series> series_of(std::vector<Point> points);

// A branch's points judged from its start point, as a pull request is: the base branch's points
// older than the branch's first, then the branch's own (`base_runs`: the base runs kept).
std::vector<Point> from_start_point(std::vector<Point> base, std::vector<Point> own, std::size_t* base_runs);

struct CaseChange {
  ChangePoint at;
  std::string commit, date;
  std::int64_t run = 0;
  bool regression = false;
};
struct CaseChanges {
  const Series* series = nullptr;
  double limit_pct = 10.0;
  std::vector<CaseChange> changes;  // significant and larger than the limit, oldest first
};
// The listed changes of every series (those with none left out).
std::vector<CaseChanges> find_changes(const std::vector<Series>& all, const Thresholds& t, const ChangeOptions& o);

}  // namespace history
}  // namespace gpucheck::compare
