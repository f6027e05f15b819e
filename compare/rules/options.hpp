// The options compare and gate share (--metric, --threshold, --thresholds, --alpha, ...) and
// where a thresholds file is found: the rules as a command gives them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/args.hpp"
#include "base/filesystem.hpp"
#include "rules/compare.hpp"

namespace gpucheck::compare::cli {

// --metric, --higher-is-better, --lower-is-better, --threshold, --thresholds, --no-thresholds,
// --alpha, --min-repetitions, --allow-missing.
const OptionSet& compare_options();

// The compare options from the arguments; thresholds from --thresholds, or the first
// thresholds.json found in `search` (files), unless --no-thresholds.
Expected<CompareOptions> read_compare_options(const FileSystem& fs, const Args& a, const std::vector<std::string>& search);
// thresholds.json next to BASELINE or up to two folders above it (baselines/<gpu>/<host>/x.json).
std::vector<std::string> thresholds_search_from(const std::string& baseline_path);
// The thresholds file read_compare_options reads: --thresholds, else the first file of
// `search`, none with --no-thresholds. A command names it among its inputs before writing.
std::optional<std::string> thresholds_file(const FileSystem& fs, const Args& a, const std::vector<std::string>& search);

}  // namespace gpucheck::compare::cli
