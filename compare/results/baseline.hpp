// The baseline store: baselines/<gpu-slug>/<suite>.json (or, for a runner that keeps a
// baseline of its own host, baselines/<gpu-slug>/<host-slug>/<suite>.json), written only on
// request, atomically (temp file, flush, rename), under a lock (one update of a folder at a
// time), never across GPU models unless forced.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/expected.hpp"
#include "base/filesystem.hpp"
#include "base/output.hpp"
#include "results/results.hpp"

namespace gpucheck::compare {

// "NVIDIA H200" -> "nvidia-h200": lower case, runs of other characters become one '-';
// "unknown" when nothing is left. Also names a host CPU's folder (host_cpu).
std::string gpu_slug(std::string_view gpu_name);
inline std::string host_slug(std::string_view host_cpu) { return gpu_slug(host_cpu); }

struct BaselineUpdateOptions {
  std::string root = "baselines";
  std::string suite;
  std::optional<std::string> gpu_slug;  // default: from the results' gpu_name
  bool force = false;
  bool per_host = false;            // store under <gpu-slug>/<host-slug>/ (host_cpu of the results)
  double lock_wait_s = 60.0;        // how long to wait for a concurrent update of the folder
  double report_change_pct = 10.0;  // list benchmarks whose time moved more than this
  // What the results were read from, which the stored file must not be (by identity, or by name
  // for a file not there yet: a history's FILE-wal); empty: the results' source.
  std::vector<NamedPath> inputs;
};

struct BaselineChange {
  std::string name;
  double change = 0.0;  // (new - old) / old of real_time
};

struct BaselineUpdate {
  std::string path;
  std::string slug;
  std::string host_slug;  // "" unless per_host
  std::string gpu_name;
  std::vector<std::string> cleaned;  // temporaries whose writer is gone (core's remove_stale_temps), removed
  double waited_s = 0.0;             // for the lock, held by a concurrent update
  bool replaced = false;  // an older baseline was there
  std::size_t benchmarks = 0;
  std::size_t not_ok = 0;  // errored or skipped entries stored as such
  std::vector<std::string> added, removed;
  std::vector<BaselineChange> moved;  // beyond report_change_pct
  std::size_t common = 0;
};

// `results` must have been read with ReadOptions::keep_raw.
Expected<BaselineUpdate> update_baseline(FileSystem& fs, const Results& results, const BaselineUpdateOptions& options);

struct StoredBaseline {
  std::string slug, host, suite, path;  // host: "" for the GPU model's shared baseline
  std::string gpu_name, commit, date, driver;
  std::size_t benchmarks = 0;
  std::string problem;  // non-empty when the file does not read
};

Expected<std::vector<StoredBaseline>> list_baselines(const FileSystem& fs, const std::string& root,
                                                     const std::optional<std::string>& slug);

// Letters, digits, '-', '_', '.', not starting with '.': safe as a file or folder name.
bool valid_store_name(std::string_view name);

// Where the gate looks for a baseline under a store root: the runner's own host first
// (<root>/<gpu-slug>/<host-slug>/<suite>.json), then the GPU model's (<root>/<gpu-slug>/<suite>.json).
std::vector<std::string> baseline_candidates(const std::string& root, const std::string& gpu_name,
                                             const std::string& host_cpu, const std::string& suite);

}  // namespace gpucheck::compare
