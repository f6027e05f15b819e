// What `gpucheck fleet --out DIR` writes, each a whole text from a FleetReport (none prints):
// fleet.json (machines), fleet.md (people), fleet.html (a heat map of nodes x figures, flagged
// nodes first and healthy ones folded), drain.txt / drain.sh (every flagged node, the script
// written and never run) and resume.sh (nodes gpucheck drained that now pass).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "base/expected.hpp"
#include "fleet/fleet.hpp"

namespace gpucheck::compare::fleet {

std::string render_fleet_json(const FleetReport& r);
std::string render_fleet_markdown(const FleetReport& r);
std::string render_fleet_html(const FleetReport& r);
std::string render_fleet_terminal(const FleetReport& r);  // the summary and every flagged node
std::string render_drain_txt(const FleetReport& r);
std::string render_drain_sh(const FleetReport& r);

// Slurm's current reasons, from `sinfo -R` output (REASON ... NODELIST, the node list last on
// each line, a header line skipped): node -> reason. Errors: a line with one field, a bad list.
Expected<std::map<std::string, std::string>> parse_sinfo_reasons(std::string_view text, const std::string& source);
// For each node whose current reason starts with "gpucheck" and that now passes: a RESUME line.
std::string render_resume_sh(const FleetReport& r, const std::map<std::string, std::string>& reasons,
                             const std::string& reasons_source);

// The reason as it goes into scontrol: "gpucheck: ...", no quote, dollar, backquote or
// backslash, at most 200 characters.
std::string slurm_reason(const FleetNode& n);
// Slurm node names this writes into a script: letters, digits, '.', '_', '-'.
bool safe_node_name(std::string_view name);

}  // namespace gpucheck::compare::fleet
