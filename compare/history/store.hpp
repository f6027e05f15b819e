// The history store: every run of the suite in one SQLite file (docs/HISTORY.md has the
// schema). A run is one results file (or one run's folder) with its commit, branch, machine and
// context; each case keeps its figure per metric with every repetition. A run is stored once:
// its identity is a hash of its content (context and cases), so adding or merging it again is
// a no-op. WAL journal, a busy timeout, every write one transaction: several gates may add to
// one file at once, and a killed add loses only its own run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "history/db.hpp"
#include "results/results.hpp"

namespace gpucheck::compare::history {

// The schema this build writes (PRAGMA user_version) and the file's mark (PRAGMA application_id).
inline constexpr int kSchemaVersion = 1;
inline constexpr std::int64_t kApplicationId = 0x67707563;  // "gpuc"

struct RunInfo {
  std::int64_t id = 0;
  std::string hash;
  std::string commit, branch, date, added, suite, source;
  std::string gpu_name, gpu_slug, gpu_uuid, driver, host_cpu, host_name;
  std::size_t cases = 0;  // benchmarks (distinct names) in the run
};

struct StoredCase {
  std::string name, metric, unit, direction, method, state;  // direction: "lower" or "higher"; state: ok, skipped, errored
  std::optional<double> median, cv;  // cv a fraction
  std::string verdict;               // the gate's verdict where the run's folder had compare.json
  std::vector<double> samples;       // every repetition's figure
};

struct StoredRun {
  RunInfo info;
  std::map<std::string, std::string> context;
  std::vector<StoredCase> cases;
};

// Where a command's commit and branch come from when the flags do not say.
struct AddOptions {
  std::optional<std::string> commit, branch;
};

// The run a results file describes (commit gpucheck_commit, branch git_branch, the earliest
// of its dates; a case per metric: real_time in ns, and the rate counter a person reads).
// `verdicts`: case name -> verdict of the gate that judged it (empty when none did).
StoredRun run_from_results(const Results& r, const AddOptions& o, const std::map<std::string, std::string>& verdicts,
                           const std::string& verdict_metric);
// 32 hex digits over the run's context and cases (not its commit/branch overrides or source).
std::string content_hash(const StoredRun& run);

// FILE and what SQLite keeps beside it (FILE-wal, FILE-shm, FILE-journal): all of them are the
// history, as an input and as what a command writes.
std::vector<std::string> history_files(const std::string& path);

struct Filter {
  std::optional<std::string> gpu_slug;
  std::optional<std::string> branch;
};

// One case's figure in one run, for the series readers (changes, report, the gate).
// A case's way of measuring as the history compares it: a file written before binaries recorded
// `method` ("") measured as method 1 did.
inline std::string method_key(const std::string& method) { return method.empty() ? "1" : method; }

struct Point {
  std::int64_t run = 0;
  std::string commit, branch, date, host_cpu, gpu_uuid, host_name;
  std::string name, metric, unit, direction, method;
  double median = 0.0;
  std::optional<double> cv;
  // The run's fastest repetition (its smallest figure; the largest for a higher-is-better
  // metric): what the gate judges for a case measured in fresh processes and judged by the
  // fastest (thresholds' "processes": rules/fresh_minimum.hpp).
  std::optional<double> best;
};

class Store {
 public:
  // Opens FILE. Read (list, changes, report, an OTHER of merge, a baseline from history): never
  // writes it (SQLite's read-only mode: no schema, no journal mode change, no checkpoint), so a
  // read-only file or folder reads. Write (remove): it must exist and be a history. Create (add,
  // merge, gate --history): a missing or empty file becomes a new history. A file that is not a
  // gpucheck history (not SQLite, or another application's database, or a newer schema) is an
  // Error and the file is left as it was; an older schema is migrated in one transaction. An
  // Error names its cause (read-only, a sidecar that is not a file, a full disk).
  enum class Access { Read, Write, Create };
  static Expected<Store> open(const std::string& path, Access access, int busy_ms = 60000);

  // Adds the runs in one transaction (all or none); a run whose content is already stored is
  // not added again (its outcome names the stored run).
  struct Added {
    std::int64_t id = 0;
    bool added = false;
  };
  Expected<std::vector<Added>> add(std::vector<StoredRun> runs);
  Expected<std::vector<RunInfo>> runs(const Filter& f);  // newest first
  Expected<StoredRun> read_run(std::int64_t id);
  Expected<std::size_t> remove_run(std::int64_t id);
  // Every run of the commit a unique prefix names; the count removed.
  Expected<std::size_t> remove_commit(const std::string& prefix);
  // The full commit a prefix names: exactly one stored commit starts with it.
  Expected<std::string> resolve_commit(const std::string& prefix);
  Expected<std::vector<std::string>> gpu_slugs();
  // The metrics and the branches of one GPU model's runs, sorted.
  Expected<std::vector<std::string>> metrics(const std::string& gpu_slug);
  Expected<std::vector<std::string>> branches(const std::string& gpu_slug);
  // --gpu as given (it must be in the file), else the only GPU model in the file.
  Expected<std::string> pick_gpu(const std::optional<std::string>& given);
  // The ok cases of `metric`, ordered by commit (the date of its first run), then run date.
  Expected<std::vector<Point>> points(const Filter& f, const std::string& metric);
  // Every repetition of each case of `metric` in the runs of `commit` (exact) on one GPU model;
  // host_cpu: only runs of that host CPU when set.
  Expected<std::map<std::string, std::vector<double>>> commit_samples(const std::string& commit, const std::string& gpu_slug,
                                                                      const std::string& metric,
                                                                      const std::optional<std::string>& host_cpu);
  // Db::checkpoint: an Error when FILE alone lacks committed runs (they are in FILE-wal).
  Status checkpoint() { return db_.checkpoint(); }
  [[nodiscard]] const std::string& path() const { return db_.path(); }

 private:
  explicit Store(Db db) : db_(std::move(db)) {}
  static Expected<Store> open_once(const std::string& path, Access access, int busy_ms, bool* busy);
  Status migrate();
  // The first column of `sql`'s rows as text, gpu_slug bound to ?1 when given.
  Expected<std::vector<std::string>> texts(const std::string& sql, const std::optional<std::string>& gpu_slug);
  Db db_;
};

}  // namespace gpucheck::compare::history
