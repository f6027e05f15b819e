// The results model: one Google Benchmark JSON file (or a folder of them, merged) read into
// benchmarks keyed by a stable name, with repetitions folded into one figure per benchmark.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/expected.hpp"
#include "gpucheck/core/regex.hpp"

namespace gpucheck::compare {

class FileSystem;

enum class RunState { Ok, Skipped, Errored };

// One benchmark after its repetitions are folded. Times are in nanoseconds whatever unit the
// file used, so `ms` against `us` compares like with like.
struct Benchmark {
  std::string name;             // the key: gbench's name less the suffixes gbench appends
  RunState state = RunState::Ok;
  std::string message;          // error_message or skip_message
  double real_time_ns = 0.0;    // median aggregate, else median of repetitions, else the run
  std::string time_unit = "ns"; // unit written in the file (display only)
  int repetitions = 1;
  std::vector<double> samples_ns;                              // per-repetition real_time
  std::map<std::string, double> counters;                      // finite values only
  std::map<std::string, std::vector<double>> counter_samples;  // per repetition
  std::optional<double> cv;                                    // of real_time, a fraction
  std::map<std::string, double> counter_cv;                    // from the cv aggregate
  std::string label;                                           // first run's label, "" if none
  std::string method;                                          // the counter "method" as text, "" if none
  std::string source;                                          // file it was read from
  std::map<std::string, double> nonfinite_counters;            // NaN / Infinity as written (not in counters)
};

struct Results {
  std::string source;                          // file or folder as given
  std::map<std::string, std::string> context;  // scalar context values, as strings
  std::vector<Benchmark> benchmarks;           // in file order

  // Only filled with ReadOptions::keep_raw: the entries and context as JSON text, so a
  // baseline keeps exactly what Google Benchmark wrote (aggregates included).
  std::vector<std::string> raw_entries;
  std::vector<std::string> raw_keys;  // the benchmark key of each raw entry
  std::vector<std::pair<std::string, std::string>> raw_context;  // key, JSON value text

  [[nodiscard]] const Benchmark* find(std::string_view name) const;
  // A context key's value, "unknown" where the file has none.
  [[nodiscard]] std::string context_value(const std::string& key) const;
  void reindex();

 private:
  // Hashed as a string_view, so find() looks a name up without copying it.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::size_t, NameHash, std::equal_to<>> index_;
};

struct ReadOptions {
  bool keep_raw = false;
};

// Parses one file's text. `source` names the file in error messages.
Expected<Results> parse_results(std::string_view text, const std::string& source,
                                const ReadOptions& options = {});

// Concatenates benchmarks and merges contexts (a key whose values differ keeps them all,
// joined by " | "). A benchmark name present in two parts is an error.
Expected<Results> merge_results(std::vector<Results> parts, const std::string& source);

// The results file of a gate's --out folder (DIR/results.json when compare.json is beside
// it: the folder a user has at hand after a gate, whose compare.json, logs/, runs/ and
// confirm/ are the gate's own), or nullopt when `dir` is not one.
std::optional<std::string> gate_folder_results(const FileSystem& fs, const std::string& dir);

// A file, a gate's --out folder (its results.json), or a folder whose entries are all *.json
// results files (hidden entries ignored).
Expected<Results> load_results(const FileSystem& fs, const std::string& path,
                               const ReadOptions& options = {});

// Google Benchmark's JSON shape again; needs results read with keep_raw.
std::string to_gbench_json(const Results& results);

// `first` with the benchmarks named in `names` taken from `rerun` instead (benchmark and raw
// entries, in first's order); names that `rerun` lacks keep first's figures. Both read with
// keep_raw. The gate uses it so results.json holds the confirmation's entries for re-run cases.
Results replace_benchmarks(const Results& first, const Results& rerun, const std::vector<std::string>& names);

// The cases whose names `filter` matches, with or without Google Benchmark's /manual_time
// suffix (as --benchmark_filter sees them), in order; source and context kept, raw text left
// out. compare --filter and the gate's --filter (the baseline's cases out of scope) use it.
Results keep_matching(const Results& in, const Regex& filter);

// Several one-repetition runs of the same binary, each a fresh process, as one file with their
// figures as repetitions (each case's entries numbered 0..N-1): how the confirmation and a
// baseline measure host-bound cases, whose figure moves with the process (docs/GATE.md).
// Every run read with keep_raw; the context is the first run's.
Expected<Results> stack_repetitions(const std::vector<Results>& runs, const std::string& source);

// The benchmark key for a gbench name: drops "/manual_time", "/real_time", "/process_time",
// "/min_time:..", "/min_warmup_time:..", "/iterations:..", "/repeats:..".
std::string benchmark_key(std::string_view gbench_name);

// Units Google Benchmark writes; nullopt for anything else.
std::optional<double> ns_per_unit(std::string_view unit);

// Replaces bare NaN / Infinity / -Infinity tokens (outside strings) with marker strings the
// reader understands, and measures nesting depth. Exposed for tests and the fuzzer.
struct Sanitized {
  std::string text;       // only filled when `replaced`; otherwise the input is already JSON
  bool replaced = false;
  int max_depth = 0;
};
Sanitized sanitize_nonfinite(std::string_view text);

inline constexpr int kMaxJsonDepth = 64;
inline constexpr std::size_t kMaxFileBytes = std::size_t{1} << 30;

}  // namespace gpucheck::compare
