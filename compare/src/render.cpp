// Text renderings of a comparison. The terminal and Markdown tables lead with what fails the
// gate; JSON carries every field for tools; JUnit lets CI systems show one test per benchmark.
#include "gpucheck/compare/render.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace gpucheck::compare {
namespace {

std::string direction_text(Direction d) {
  return d == Direction::LowerIsBetter ? "lower is better" : "higher is better";
}

std::string threshold_text(const Comparison& c) {
  std::string s = "threshold " + format_pct(c.default_threshold_pct);
  if (!c.thresholds_source.empty()) s += " (per-name overrides from " + c.thresholds_source + ")";
  return s;
}

std::string verdict_text(const Row& r) {
  std::string v(verdict_name(r.verdict));
  if (r.noisy) v += " (noisy)";
  return v;
}

std::string rate_text(const Row& r, std::string_view arrow) {
  if (r.rate.empty()) return "";
  auto num = [](std::optional<double> v) { return v ? format_double("%.4g", *v) : std::string("-"); };
  return r.rate + " " + num(r.base_rate) + std::string(arrow) + num(r.cur_rate);
}

std::string notes_text(const Row& r) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : "; ") + part; };
  if (r.p_value) add(format_double("p=%.3g", *r.p_value) + (r.exact_test ? " exact" : ""));
  if (r.base_cv || r.cur_cv) {
    auto cv = [](std::optional<double> v) { return v ? format_double("%.1f%%", *v * 100.0) : std::string("-"); };
    add("cv " + cv(r.base_cv) + "/" + cv(r.cur_cv));
  }
  if (std::fabs(r.threshold_pct - 10.0) > 1e-12 || r.verdict == Verdict::Regression)
    add("limit " + format_pct(r.threshold_pct));
  if (!r.note.empty()) add(r.note);
  return s;
}

std::string summary_text(const Comparison& c) {
  const Counts& n = c.counts;
  std::string s = std::to_string(c.rows.size()) + " benchmarks: " + std::to_string(n.regressions) + " regressed, " +
                  std::to_string(n.missing) + " missing, " + std::to_string(n.errored) + " errored, " +
                  std::to_string(n.unconfirmed) + " unconfirmed, " + std::to_string(n.improvements) + " improved, " +
                  std::to_string(n.fresh) + " new, " + std::to_string(n.skipped) + " skipped, " +
                  std::to_string(n.same) + " unchanged";
  if (n.no_metric) s += ", " + std::to_string(n.no_metric) + " without the metric";
  if (n.noisy) s += "; " + std::to_string(n.noisy) + " noisy";
  return s;
}

std::string result_text(const Comparison& c) {
  if (!c.failed()) return "PASS";
  std::string why;
  if (c.counts.regressions) why = "regression";
  if (!c.allow_missing && (c.counts.missing || c.counts.errored))
    why += std::string(why.empty() ? "" : " and ") + "missing figures";
  return "FAIL (" + why + ")";
}

const char* colour_of(const Row& r) {
  switch (r.verdict) {
    case Verdict::Regression:
    case Verdict::Missing:
    case Verdict::Errored: return "\033[1;31m";
    case Verdict::Unconfirmed: return "\033[33m";
    case Verdict::Improvement: return "\033[32m";
    case Verdict::New: return "\033[36m";
    default: return r.noisy ? "\033[33m" : "";
  }
}

std::string pad(std::string s, std::size_t w, bool right = false) {
  if (s.size() >= w) return s;
  const std::string fill(w - s.size(), ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

std::string format_double(const char* printf_fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_fmt, v);
  return buf;
}

std::string format_time_ns(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return format_double("%.3f s", ns / 1e9);
  if (a >= 1e6) return format_double("%.3f ms", ns / 1e6);
  if (a >= 1e3) return format_double("%.3f us", ns / 1e3);
  return format_double("%.3f ns", ns);
}

std::string format_metric(std::string_view metric, std::optional<double> v) {
  if (!v) return "-";
  if (metric == "real_time" || metric == "cpu_time") return format_time_ns(*v);
  return format_double("%.4g", *v);
}

std::string format_change(std::optional<double> f) {
  if (!f) return "";
  return format_double("%+.2f%%", *f * 100.0);
}

std::string format_pct(double pct) {
  std::string s = format_double("%.4f", pct);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s + "%";
}

std::string escape_xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even escaped.
        out += (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t') ? '?' : ch;
    }
  }
  return out;
}

std::string escape_markdown_cell(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    if (ch == '|' || ch == '\\' || ch == '*' || ch == '_' || ch == '`' || ch == '<' || ch == '>') out += '\\';
    out += (ch == '\n' || ch == '\r') ? ' ' : ch;
  }
  return out;
}

std::string render_terminal(const Comparison& c, bool colour) {
  std::string out;
  const char* bold = colour ? "\033[1m" : "";
  const char* reset = colour ? "\033[0m" : "";
  out += std::string(bold) + "gpucheck compare" + reset + ": " + c.baseline_source + " (" + c.gpu_base + ") -> " +
         c.current_source + " (" + c.gpu_cur + ")\n";
  out += "metric " + c.metric + " (" + direction_text(c.direction) + "), " + threshold_text(c) + ", alpha " +
         format_double("%g", c.alpha) + "\n";
  if (!c.context.empty()) {
    out += std::string(bold) + "context differs:" + reset + "\n";
    std::size_t w = 0;
    for (const auto& d : c.context) w = std::max(w, d.label.size());
    for (const auto& d : c.context) out += "  " + pad(d.label, w) + "  " + d.base + " -> " + d.cur + "\n";
  }
  const std::string rate_head = "rate";
  std::vector<std::array<std::string, 7>> cells;
  cells.reserve(c.rows.size() + 1);
  cells.push_back({"name", "baseline", "current", "change", "verdict", rate_head, "notes"});
  for (const Row& r : c.rows)
    cells.push_back({r.name, format_metric(c.metric, r.base), format_metric(c.metric, r.cur), format_change(r.change),
                     verdict_text(r), rate_text(r, " -> "), notes_text(r)});
  std::array<std::size_t, 7> w{};
  for (const auto& row : cells)
    for (std::size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], row[i].size());
  for (std::size_t ri = 0; ri < cells.size(); ++ri) {
    const auto& row = cells[ri];
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool right = i >= 1 && i <= 3;
      std::string cell = pad(row[i], w[i], right);
      if (i == 4 && ri > 0 && colour && *colour_of(c.rows[ri - 1]) != '\0')
        cell = colour_of(c.rows[ri - 1]) + cell + reset;
      line += (i ? "  " : "") + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (ri == 0 && colour) line = bold + line + reset;
    out += line + "\n";
  }
  out += summary_text(c) + "\n";
  const bool failed = c.failed();
  out += std::string(colour ? (failed ? "\033[1;31m" : "\033[1;32m") : "") + "result: " + result_text(c) + reset + "\n";
  return out;
}

std::string render_markdown(const Comparison& c) {
  std::string out;
  out += "### gpucheck compare: " + std::string(c.failed() ? ":x: " : ":white_check_mark: ") + result_text(c) + "\n\n";
  out += "Baseline `" + c.baseline_source + "` (" + escape_markdown_cell(c.gpu_base) + ") against current `" +
         c.current_source + "` (" + escape_markdown_cell(c.gpu_cur) + "); metric `" + c.metric + "` (" +
         direction_text(c.direction) + "), " + threshold_text(c) + ", alpha " + format_double("%g", c.alpha) + ".\n\n";
  out += summary_text(c) + ".\n\n";
  if (!c.context.empty()) {
    out += "**Context differs**\n\n| | baseline | current |\n|---|---|---|\n";
    for (const auto& d : c.context)
      out += "| " + escape_markdown_cell(d.label) + " | " + escape_markdown_cell(d.base) + " | " +
             escape_markdown_cell(d.cur) + " |\n";
    out += "\n";
  }
  auto header = [] { return std::string("| name | baseline | current | change | verdict | rate | notes |\n|---|---:|---:|---:|---|---|---|\n"); };
  auto line = [&](const Row& r) {
    return "| " + escape_markdown_cell(r.name) + " | " + format_metric(c.metric, r.base) + " | " +
           format_metric(c.metric, r.cur) + " | " + format_change(r.change) + " | " +
           (r.fails_gate ? "**" + verdict_text(r) + "**" : verdict_text(r)) + " | " +
           escape_markdown_cell(rate_text(r, " → ")) + " | " + escape_markdown_cell(notes_text(r)) + " |\n";
  };
  std::string notable, quiet;
  std::size_t n_quiet = 0;
  for (const Row& r : c.rows) {
    if (r.verdict == Verdict::Same && !r.noisy) {
      quiet += line(r);
      ++n_quiet;
    } else {
      notable += line(r);
    }
  }
  if (!notable.empty()) out += header() + notable + "\n";
  if (n_quiet) {
    out += "<details><summary>" + std::to_string(n_quiet) + " unchanged</summary>\n\n" + header() + quiet +
           "\n</details>\n";
  }
  return out;
}

std::string render_json(const Comparison& c) {
  using json = nlohmann::ordered_json;
  auto opt = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
  json j;
  j["baseline"] = c.baseline_source;
  j["current"] = c.current_source;
  j["metric"] = c.metric;
  j["direction"] = c.direction == Direction::LowerIsBetter ? "lower_is_better" : "higher_is_better";
  j["default_threshold_pct"] = c.default_threshold_pct;
  j["thresholds_file"] = c.thresholds_source;
  j["alpha"] = c.alpha;
  j["allow_missing"] = c.allow_missing;
  j["result"] = c.failed() ? "fail" : "pass";
  const Counts& n = c.counts;
  j["counts"] = {{"regressed", n.regressions}, {"missing", n.missing},     {"errored", n.errored},
                 {"skipped", n.skipped},       {"unconfirmed", n.unconfirmed}, {"improved", n.improvements},
                 {"new", n.fresh},             {"no_metric", n.no_metric}, {"unchanged", n.same},
                 {"noisy", n.noisy}};
  j["context_diff"] = json::array();
  for (const auto& d : c.context)
    j["context_diff"].push_back({{"key", d.key}, {"label", d.label}, {"baseline", d.base}, {"current", d.cur}});
  j["rows"] = json::array();
  for (const Row& r : c.rows) {
    json row;
    row["name"] = r.name;
    row["verdict"] = std::string(verdict_name(r.verdict));
    row["fails_gate"] = r.fails_gate;
    row["noisy"] = r.noisy;
    row["baseline"] = opt(r.base);
    row["current"] = opt(r.cur);
    row["change"] = opt(r.change);
    row["threshold_pct"] = r.threshold_pct;
    row["p_value"] = opt(r.p_value);
    row["exact_test"] = r.exact_test;
    row["baseline_cv"] = opt(r.base_cv);
    row["current_cv"] = opt(r.cur_cv);
    row["baseline_repetitions"] = r.base_reps;
    row["current_repetitions"] = r.cur_reps;
    row["rate_counter"] = r.rate;
    row["baseline_rate"] = opt(r.base_rate);
    row["current_rate"] = opt(r.cur_rate);
    row["note"] = r.note;
    j["rows"].push_back(std::move(row));
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_junit(const Comparison& c) {
  int failures = 0, skipped = 0;
  for (const Row& r : c.rows) {
    if (r.fails_gate) ++failures;
    else if (r.verdict == Verdict::Skipped || r.verdict == Verdict::NoMetric || r.verdict == Verdict::Missing || r.verdict == Verdict::Errored) ++skipped;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"gpucheck compare\" tests=\"" + std::to_string(c.rows.size()) + "\" failures=\"" +
         std::to_string(failures) + "\" skipped=\"" + std::to_string(skipped) + "\">\n";
  out += "  <testsuite name=\"" + escape_xml(c.current_source) + "\" tests=\"" + std::to_string(c.rows.size()) +
         "\" failures=\"" + std::to_string(failures) + "\" skipped=\"" + std::to_string(skipped) + "\">\n";
  for (const Row& r : c.rows) {
    const std::size_t slash = r.name.find('/');
    const std::string family = slash == std::string::npos ? r.name : r.name.substr(0, slash);
    const double secs = r.cur && c.metric == "real_time" ? *r.cur / 1e9 : 0.0;
    out += "    <testcase classname=\"" + escape_xml(family) + "\" name=\"" + escape_xml(r.name) + "\" time=\"" +
           format_double("%.9f", secs) + "\"";
    const std::string detail = c.metric + " " + format_metric(c.metric, r.base) + " -> " +
                               format_metric(c.metric, r.cur) + " " + format_change(r.change) + "; " + notes_text(r);
    if (r.fails_gate) {
      out += ">\n      <failure message=\"" + escape_xml(std::string(verdict_name(r.verdict)) + ": " + detail) +
             "\" type=\"" + escape_xml(std::string(verdict_name(r.verdict))) + "\"/>\n    </testcase>\n";
    } else if (r.verdict == Verdict::Skipped || r.verdict == Verdict::NoMetric || r.verdict == Verdict::Missing || r.verdict == Verdict::Errored) {
      out += ">\n      <skipped message=\"" + escape_xml(std::string(verdict_name(r.verdict)) + ": " + r.note) +
             "\"/>\n    </testcase>\n";
    } else {
      out += ">\n      <system-out>" + escape_xml(std::string(verdict_name(r.verdict)) + ": " + detail) +
             "</system-out>\n    </testcase>\n";
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace gpucheck::compare
