// The fleet's renderers. The HTML reads at 1,000 nodes: the flagged nodes first with a row per
// GPU, the healthy ones folded into one <details> (a row each, their worst figure per column),
// every cell coloured by its deviation from the fleet's median for that model and figure.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/format.hpp"
#include "fleet/hostlist.hpp"
#include "fleet/render.hpp"
#include "report/charts.hpp"

namespace gpucheck::compare::fleet {
namespace {

using json = nlohmann::ordered_json;

std::string verdict_of(const FleetNode& n) {
  if (n.problem) return "not judged";
  if (n.recheck_cleared) return "pass (recheck)";
  return n.flagged() ? "FAIL" : "pass";
}

json figure_json(const Figure& f) {
  json j;
  j["value"] = f.value;
  j["peers"] = f.peers;
  j["peer_median"] = f.peer_median ? json(*f.peer_median) : json(nullptr);
  j["peer_mad"] = f.peer_mad ? json(*f.peer_mad) : json(nullptr);
  j["deviation_pct"] = 100 * f.deviation;
  j["robust_z"] = std::isfinite(f.robust_z) ? json(f.robust_z) : json(nullptr);
  j["outlier"] = f.outlier;
  return j;
}

json node_json(const FleetNode& n) {
  json j;
  j["node"] = n.name;
  j["host"] = n.host;
  j["verdict"] = verdict_of(n);
  j["problem"] = n.problem ? json(*n.problem) : json(nullptr);
  j["accept_failed"] = n.accept_failed;
  j["accept_failures"] = n.accept_failures;
  j["outliers"] = n.outlier_lines;
  j["node_low"] = n.node_low;
  j["rechecked"] = n.rechecked;
  j["recheck_cleared"] = n.recheck_cleared;
  j["versions"] = n.versions;
  j["version_differences"] = n.version_differences;
  j["gpus"] = json::array();
  for (const FleetGpu& g : n.gpus) {
    json gj{{"index", g.index}, {"uuid", g.uuid}, {"pci_bus_id", g.pci_bus_id}, {"serial", g.serial}, {"model", g.model}};
    gj["outlier"] = g.outlier();
    gj["figures"] = json::object();
    for (const Figure& f : g.figures) gj["figures"][f.key] = figure_json(f);
    j["gpus"].push_back(std::move(gj));
  }
  j["node_figures"] = json::object();
  for (const Figure& f : n.node_figures) j["node_figures"][f.key] = figure_json(f);
  return j;
}

// The node's worst deviation per figure from the fleet's median of its model.
std::map<std::string, double> worst_deviation(const FleetReport& r, const FleetNode& n) {
  std::map<std::string, double> out;
  auto add = [&](const std::string& model, const Figure& f) {
    const auto m = r.fleet_median.find(model);
    if (m == r.fleet_median.end()) return;
    const auto med = m->second.find(f.key);
    if (med == m->second.end() || !(med->second > 0)) return;
    const double d = f.value / med->second - 1;
    const auto [it, fresh] = out.emplace(f.key, d);
    if (!fresh) it->second = std::min(it->second, d);
  };
  for (const FleetGpu& g : n.gpus)
    for (const Figure& f : g.figures) add(g.model, f);
  const std::string model = n.gpus.empty() ? "unknown" : n.gpus.front().model;
  for (const Figure& f : n.node_figures) add(model + "/" + std::to_string(n.gpus.size()) + " GPUs", f);
  return out;
}

// Red below the median, blue above, white at it; full colour at the figure's gap, so a cell
// says how near the GPU is to being named (h2d's 2% is pale, HBM's 1% is not).
std::string heat_colour(double d, double gap) {
  const double t = std::clamp(std::fabs(d) / (gap > 0 ? gap : 0.05), 0.0, 1.0);
  const int fade = static_cast<int>(std::lround(255 - 155 * t));
  return d < 0 ? format_double("rgb(255,%.0f,", fade) + std::to_string(fade) + ")"
               : "rgb(" + std::to_string(fade) + "," + std::to_string(fade) + ",255)";
}

std::string heat_cell(std::optional<double> d, double gap, bool outlier, const std::string& title) {
  if (!d) return "<td class=\"note\">-</td>";
  std::string s = "<td style=\"background:" + heat_colour(*d, gap) + (outlier ? ";font-weight:bold;outline:2px solid #b00020" : "") +
                  "\" title=\"" + escape_xml(title) + "\">" + format_double("%+.1f", 100 * *d) + "</td>";
  return s;
}

std::string heat_row(const FleetReport& r, const FleetNode& n, const std::string& label, const std::map<std::string, double>& dev,
                     const std::map<std::string, bool>& outliers) {
  std::string s = "<tr><th style=\"text-align:left\">" + escape_xml(label) + "</th>";
  for (const std::string& k : r.figure_keys) {
    const auto it = dev.find(k);
    const auto o = outliers.find(k);
    const auto gap = r.min_gap.find(k);
    s += heat_cell(it == dev.end() ? std::nullopt : std::optional<double>(it->second), gap == r.min_gap.end() ? 0 : gap->second,
                   o != outliers.end() && o->second, n.name + " " + k);
  }
  return s + "</tr>\n";
}

std::string heat_header(const FleetReport& r) {
  std::string s = "<tr><th>node</th>";
  for (const std::string& k : r.figure_keys) {
    const auto gap = r.min_gap.find(k);
    s += "<th>" + escape_xml(k) + (gap == r.min_gap.end() ? "" : "<br><small>gap " + format_double("%g", 100 * gap->second) + "%</small>") + "</th>";
  }
  return s + "</tr>\n";
}

std::string flagged_rows(const FleetReport& r, const FleetNode& n) {
  std::map<std::string, bool> node_out;
  for (const Figure& f : n.node_figures) node_out[f.key] = f.outlier;
  const std::string host = n.host != n.name && n.host != "unknown" ? " (host " + n.host + ")" : "";
  std::string s = heat_row(r, n, n.name + host + " " + verdict_of(n), worst_deviation(r, n), node_out);
  for (const FleetGpu& g : n.gpus) {
    FleetNode one;
    one.name = n.name;
    one.gpus.push_back(g);
    std::map<std::string, bool> out;
    for (const Figure& f : g.figures) out[f.key] = f.outlier;
    s += heat_row(r, n, "\u2003GPU " + g.index + " " + g.pci_bus_id, worst_deviation(r, one), out);
  }
  return s;
}

std::string summary_line(const FleetReport& r) {
  const int judged = static_cast<int>(r.nodes.size()) - r.count_unjudged();
  std::string s = std::string(r.failed() ? "FAIL" : "PASS") + ": " + std::to_string(r.nodes.size()) + " nodes, " +
                  std::to_string(judged) + " judged, " + std::to_string(r.count_flagged()) + " flagged (failed or holding an outlier), " +
                  std::to_string(r.count_unjudged()) + " not judged";
  if (r.count_unjudged() > 0 && r.allow_missing) s += " (allowed: --allow-missing)";
  return s;
}

std::string sanitize(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '$' || c == '`' || c == '\\') out += '\'';
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) out += ' ';  // no line, field or escape
    else out += c;
  }
  return out;
}

}  // namespace

bool safe_node_name(std::string_view name) {
  return !name.empty() && name.front() != '-' && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

std::string slurm_reason(const FleetNode& n) {
  std::string s = sanitize("gpucheck: " + n.reason());
  if (s.size() > 200) s = s.substr(0, 197) + "...";
  return s;
}

std::string render_fleet_json(const FleetReport& r) {
  json j;
  j["verdict"] = r.failed() ? "FAIL" : "PASS";
  j["summary"] = summary_line(r);
  j["k"] = r.k;
  j["gaps"] = r.gaps_source;
  j["specs"] = r.specs_source;
  j["config"] = r.config_source;
  j["recheck"] = r.recheck_source ? json(*r.recheck_source) : json(nullptr);
  j["allow_missing"] = r.allow_missing;
  j["nodes_total"] = r.nodes.size();
  j["flagged"] = r.count_flagged();
  j["not_judged"] = r.count_unjudged();
  j["warnings"] = r.warnings;
  j["fleet_median"] = r.fleet_median;
  j["nodes"] = json::array();
  for (const FleetNode& n : r.nodes) j["nodes"].push_back(node_json(n));
  return j.dump() + "\n";  // 8,000 GPUs: compact (22 MB indented, read by programs)
}

std::string render_fleet_terminal(const FleetReport& r) {
  std::string s;
  for (const auto& w : r.warnings) s += "warning: versions: " + w + "\n";
  for (const FleetNode& n : r.nodes) {
    if (!n.flagged() && !n.recheck_cleared) continue;
    s += sanitize(n.name) + (n.host != n.name && n.host != "unknown" ? " (host " + n.host + ")" : "") + ": " + verdict_of(n) + "\n";
    if (n.problem) s += "  " + sanitize(*n.problem) + "\n";
    for (const auto& f : n.accept_failures) s += "  accept: " + f + "\n";
    for (const auto& o : n.outlier_lines) s += "  outlier: " + o + "\n";
    if (n.recheck_cleared) s += "  flagged by the first run only: its recheck passed, not drained\n";
  }
  return s + summary_line(r) + "\n";
}

std::string render_fleet_markdown(const FleetReport& r) {
  std::string s = "# gpucheck fleet\n\n**" + summary_line(r) + "**\n\n";
  s += "Peers: per GPU model and figure, the median and MAD of the other GPUs; an outlier is more than " +
       format_double("%g", r.k) + " robust deviations and more than the figure's gap (" + r.gaps_source + ") below them.\n\n";
  if (!r.warnings.empty()) {
    s += "## Versions that differ from the fleet\n\n";
    for (const auto& w : r.warnings) s += "- " + escape_markdown_cell(w) + "\n";
    s += "\n";
  }
  s += "## Flagged nodes\n\n| node | host | verdict | why |\n| --- | --- | --- | --- |\n";
  int shown = 0;
  for (const FleetNode& n : r.nodes)
    if (n.flagged() || n.recheck_cleared) {
      ++shown;
      std::string why = n.problem ? *n.problem : "";
      for (const auto& f : n.accept_failures) why += (why.empty() ? "" : "<br>") + ("accept: " + f);
      for (const auto& o : n.outlier_lines) why += (why.empty() ? "" : "<br>") + ("outlier: " + o);
      if (n.recheck_cleared) why += "<br>its recheck passed: not drained";
      s += "| " + escape_markdown_cell(n.name) + " | " + escape_markdown_cell(n.host) + " | " + verdict_of(n) + " | " +
           escape_markdown_cell(why) + " |\n";
    }
  if (shown == 0) s += "| (none) | | | |\n";
  s += "\n" + std::to_string(static_cast<int>(r.nodes.size()) - shown) + " nodes pass.\n";
  return s;
}

std::string render_fleet_html(const FleetReport& r) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gpucheck fleet</title>\n" +
                  chart_style_block() + "\n</head><body>\n<h1>gpucheck fleet</h1>\n<p class=\"" +
                  std::string(r.failed() ? "worse" : "better") + "\"><b>" + escape_xml(summary_line(r)) + "</b></p>\n";
  s += "<p>Each cell: the node's lowest GPU on that figure, in % from the fleet's median for its model (red below, blue "
       "above, full colour at the figure's gap); outlined: an outlier against its peers (" + escape_xml(format_double("%g", r.k)) +
       " robust deviations and the figure's gap, " + escape_xml(r.gaps_source) + ").</p>\n";
  if (!r.warnings.empty()) {
    s += "<h2>Versions that differ from the fleet</h2><ul>\n";
    for (const auto& w : r.warnings) s += "<li>" + escape_xml(w) + "</li>\n";
    s += "</ul>\n";
  }
  s += "<h2>Flagged nodes</h2>\n<table>\n" + heat_header(r);
  std::string unjudged;
  int healthy = 0;
  for (const FleetNode& n : r.nodes) {
    if (n.problem) unjudged += "<li>" + escape_xml(n.name + ": " + *n.problem) + "</li>\n";
    else if (n.flagged()) s += flagged_rows(r, n);
    else ++healthy;
  }
  s += "</table>\n<ul>\n";
  for (const FleetNode& n : r.nodes)
    for (const auto& o : n.outlier_lines) s += "<li>" + escape_xml(o) + "</li>\n";
  for (const FleetNode& n : r.nodes)
    for (const auto& f : n.accept_failures) s += "<li>" + escape_xml(n.name + ": accept: " + f) + "</li>\n";
  s += "</ul>\n";
  if (!unjudged.empty()) s += "<h2>Not judged</h2><ul>\n" + unjudged + "</ul>\n";
  s += "<details><summary>" + std::to_string(healthy) + " nodes pass (folded)</summary>\n<table>\n" + heat_header(r);
  for (const FleetNode& n : r.nodes)
    if (!n.problem && !n.flagged()) s += heat_row(r, n, n.name, worst_deviation(r, n), {});
  s += "</table></details>\n</body></html>\n";
  return s;
}

std::string render_drain_txt(const FleetReport& r) {
  std::string s = "# gpucheck fleet: every node that failed acceptance or holds an outlier, NODE<TAB>reason\n# " +
                  summary_line(r) + "\n";
  for (const FleetNode& n : r.nodes) {
    const std::string name = sanitize(n.name);  // a folder's name may hold a line break
    if (n.problem) s += "# " + name + "\tnot judged: " + sanitize(*n.problem) + "\n";
    else if (n.recheck_cleared) s += "# " + name + "\tflagged once, its recheck passed: not drained\n";
    else if (n.flagged()) s += name + "\t" + sanitize(n.reason()) + "\n";
  }
  return s;
}

std::string render_drain_sh(const FleetReport& r) {
  std::string s = "#!/bin/sh\n# Written by gpucheck fleet, never run by it: drains every node in drain.txt.\n# " +
                  summary_line(r) + "\n";
  for (const FleetNode& n : r.nodes) {
    if (n.problem || !n.flagged()) continue;
    const std::string line = "scontrol update NodeName=" + n.name + " State=DRAIN Reason=\"" + slurm_reason(n) + "\"\n";
    s += safe_node_name(n.name) ? line : "# not a Slurm node name, left out: " + sanitize(n.name) + "\n";
  }
  return s;
}

Expected<std::map<std::string, std::string>> parse_sinfo_reasons(std::string_view text, const std::string& source) {
  std::map<std::string, std::string> out;
  std::vector<std::string> names;
  std::size_t at = 0;
  int line_no = 0;
  while (at < text.size()) {
    const std::size_t nl = std::min(text.find('\n', at), text.size());
    std::string line(text.substr(at, nl - at));
    at = nl + 1;
    ++line_no;
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t')) line.pop_back();
    if (line.empty() || line.starts_with("REASON") || line.starts_with("#")) continue;
    const std::size_t last = line.find_last_of(" \t");
    if (last == std::string::npos)
      return Error{source, "line " + std::to_string(line_no) + ": expected `sinfo -R` columns (REASON ... NODELIST)"};
    const std::size_t before = names.size();  // one cap over the whole file
    if (auto s = append_hostlist(line.substr(last + 1), names); !s)
      return Error{source, "line " + std::to_string(line_no) + ": " + s.error().message};
    for (std::size_t i = before; i < names.size(); ++i) out[names[i]] = line.substr(0, last);  // reason, user, time
  }
  return out;
}

std::string render_resume_sh(const FleetReport& r, const std::map<std::string, std::string>& reasons,
                             const std::string& reasons_source) {
  std::string s = "#!/bin/sh\n# Written by gpucheck fleet, never run by it: resumes the nodes that gpucheck drained (their\n"
                  "# reason in " + sanitize(reasons_source) + " starts with \"gpucheck\") and that now pass.\n";
  for (const FleetNode& n : r.nodes) {
    const auto it = reasons.find(n.name);
    if (it == reasons.end() || !it->second.starts_with("gpucheck")) continue;
    if (n.problem || n.flagged()) {
      s += "# " + sanitize(n.name) + " stays drained: " + (n.problem ? "not judged" : "still flagged") + "\n";
      continue;
    }
    s += safe_node_name(n.name) ? "scontrol update NodeName=" + n.name + " State=RESUME\n"
                                : "# not a Slurm node name, left out: " + sanitize(n.name) + "\n";
  }
  return s;
}

}  // namespace gpucheck::compare::fleet
