// Slurm host lists (`node[001-064],gpu[1-3,7]`, what $SLURM_JOB_NODELIST holds), expanded to
// node names in order, so `gpucheck fleet --expect` names every node that wrote nothing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace gpucheck::compare::fleet {

inline constexpr std::size_t kMaxHostlistNames = 1'000'000;

// Several bracket groups in one name (rack[1-2]-n[01-04]) expand as a product; a range keeps
// the first bound's zero padding. Errors: unbalanced or nested brackets, an empty name, a
// range that runs backwards, a bound of more than 18 digits, more than 1,000,000 names
// (counted before any is built).
Expected<std::vector<std::string>> expand_hostlist(std::string_view list);

// The same, appended to `out`: the cap counts what `out` already holds, so the lists of one
// file (--expect FILE, --reasons FILE) share one cap. Nothing is appended on an error.
Status append_hostlist(std::string_view list, std::vector<std::string>& out);

}  // namespace gpucheck::compare::fleet
