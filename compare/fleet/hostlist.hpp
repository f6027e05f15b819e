// Slurm host lists (`node[001-064],gpu[1-3,7]`, what $SLURM_JOB_NODELIST holds), expanded to
// node names in order, so `gpucheck fleet --expect` names every node that wrote nothing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace gpucheck::compare::fleet {

// Several bracket groups in one name (rack[1-2]-n[01-04]) expand as a product; a range keeps
// the first bound's zero padding. Errors: unbalanced or nested brackets, an empty name, a
// range that runs backwards, more than 1,000,000 names.
Expected<std::vector<std::string>> expand_hostlist(std::string_view list);

}  // namespace gpucheck::compare::fleet
