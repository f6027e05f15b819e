// "Did you mean ...?": the nearest known word to a misspelt one (an option, a command, a key,
// a counter name), by edit distance. Used by the argument parser (gpucheck/core/args.hpp) of
// the binaries and of the tool.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours, each one edit ("gaet" is one edit from "gate").
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` when it is close enough to be a likely typo (at most a third
// of the longer word's length, and at most 3 edits); ties go to the earlier candidate; `word`
// itself is never suggested; a candidate that differs from `word` only in case wins outright.
std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean X?)" or "" when nothing is near.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace gpucheck
