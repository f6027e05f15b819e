// Hardware comparison report: its renderers. Markdown and HTML open with the summary (the
// headline per column, the machines as the context rows that differ, per-family geomeans,
// the largest wins and losses with their noise, the cases not in every column), then one
// section per family; JSON and CSV carry the same figures for other tools.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/format.hpp"
#include "gpucheck/core/contract.hpp"
#include "report/charts.hpp"
#include "report/csv.hpp"
#include "report/report.hpp"

namespace gpucheck::compare {
namespace {

namespace counter = contract::counter;

// The metric as people write it: "TFLOP/s", "busbw GB/s", "µs per launch", "time".
std::string metric_label(const std::string& metric) {
  if (metric == "real_time") return "time";
  if (metric == counter::TFLOPS || metric == counter::GBps) return std::string(contract::unit_of(metric));
  if (metric == counter::busbw_GBps) return "busbw GB/s";
  if (metric == counter::algbw_GBps) return "algbw GB/s";
  if (metric == counter::us_per_launch) return "µs per launch";
  if (metric == counter::us_per_node) return "µs per node";
  const auto unit = contract::unit_of(metric);
  return unit.empty() ? metric : metric + " (" + std::string(unit) + ")";
}

std::string metric_title(const ReportRow& row) {
  return metric_label(row.metric) + (row.direction == Direction::LowerIsBetter ? " (lower is better)" : " (higher is better)");
}

std::string value_text(const ReportRow& row, std::optional<double> v) {
  if (!v) return "-";
  if (row.metric == "real_time") return format_time_ns(*v);
  return format_double("%.4g", *v) + (row.unit.empty() ? "" : " " + row.unit);
}

std::string ratio_text(double s) { return format_double("%.2f", s) + "x"; }
std::string band_text(double band) { return band > 0 ? "±" + format_double("%.1f", band * 100.0) + "%" : "-"; }

std::vector<std::string> marks(bool report_only, bool noisy) {
  std::vector<std::string> m;
  if (report_only) m.emplace_back("report-only");
  if (noisy) m.emplace_back("noisy");
  return m;
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

bool differs(const std::vector<std::string>& vals) {
  return std::any_of(vals.begin(), vals.end(), [&](const std::string& v) { return v != vals.front(); });
}

bool skus_differ(const Report& r) { return differs(r.skus); }

Tone cell_tone(const ReportCell& c) { return c.speed ? ratio_tone(*c.speed, c.band) : Tone::Muted; }

// "0.91x A overall (geomean of 40 cases): matmul 0.91x, pcie 0.95x, the rest 1.00x". Families
// whose geomean rounds to 1.00x are "the rest".
std::string headline_tail(const Report& r, std::size_t c) {
  const ColumnSummary& cs = r.summary.columns[c];
  if (!cs.geomean) return "no case in common with " + r.labels.front();
  std::string s = ratio_text(*cs.geomean) + " " + r.labels.front() + " overall (geomean of " + std::to_string(cs.cases) +
                  " case" + (cs.cases == 1 ? "" : "s") + ")";
  std::vector<std::string> parts;
  int rest = 0;
  for (const auto& f : r.summary.families) {
    if (!f.geomean[c]) continue;
    if (ratio_text(*f.geomean[c]) == "1.00x") ++rest;
    else parts.push_back(f.family + " " + ratio_text(*f.geomean[c]));
  }
  if (rest > 0) parts.push_back(parts.empty() ? "every family 1.00x" : "the rest 1.00x");
  return s + (parts.empty() ? "" : ": " + joined(parts, ", "));
}

std::string anchor(const std::string& family) {
  std::string s;
  for (const char ch : family) s += std::isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(std::tolower(ch)) : '-';
  return s;
}

std::string case_anchor(const std::string& name) { return "case-" + anchor(name); }

constexpr const char* kRatioNote =
    "Ratios are speed against the first column: above 1.00x is faster (higher rate or shorter time). A ratio inside its "
    "noise band (2 x the larger cv of the two figures) is neutral; the gate's limit is drawn as a line.";
constexpr const char* kSkuNote =
    "The columns are different SKUs: a ratio is what a case of that shape gains or loses on the other card, and "
    "percent of spec says how close each card comes to its own datasheet figure (baselines/specs.json).";

// Context rows that differ between columns, and those that do not (folded).
void split_context(const Report& r, std::vector<const std::pair<std::string, std::vector<std::string>>*>& diff,
                   std::vector<const std::pair<std::string, std::vector<std::string>>*>& same) {
  for (const auto& row : r.context) (differs(row.second) ? diff : same).push_back(&row);
}

// Each non-first column's largest losses, then wins, that are not empty: fn(column, losses, list).
template <class Fn>
void for_each_change_list(const Report& r, Fn&& fn) {
  for (std::size_t c = 1; c < r.labels.size(); ++c)
    for (const bool losses : {true, false})
      if (const auto& list = losses ? r.summary.columns[c].losses : r.summary.columns[c].wins; !list.empty())
        fn(c, losses, list);
}

// A change's tags: "within noise" first when its ratio is inside the band.
std::vector<std::string> change_marks(const CaseChange& ch) {
  std::vector<std::string> m = marks(ch.report_only, ch.noisy);
  if (ratio_tone(ch.ratio, ch.band) == Tone::Neutral) m.insert(m.begin(), "within noise");
  return m;
}

std::string cell_markdown(const ReportRow& row, const ReportCell& c, std::size_t i) {
  if (!c.value) return escape_markdown_cell(c.note);
  std::string s = value_text(row, c.value);
  if (i > 0 && c.speed) {
    const Tone t = cell_tone(c);
    s += " (" + ratio_text(*c.speed) + (t == Tone::Better ? " ▲" : t == Tone::Worse ? " ▼" : "") + ")";
  }
  if (c.pct_of_spec) s += " · " + format_double("%.0f", *c.pct_of_spec) + "% of spec";
  return s;
}

}  // namespace

std::string render_report_markdown(const Report& r) {
  const std::size_t ncol = r.labels.size();
  std::string out = "# gpucheck hardware comparison\n\n## Summary\n\n";
  for (std::size_t c = 1; c < ncol; ++c) out += "**" + escape_markdown_cell(r.labels[c]) + "** is " + escape_markdown_cell(headline_tail(r, c)) + ".\n\n";
  for (std::size_t i = 0; i < ncol; ++i) {
    out += "- **" + escape_markdown_cell(r.labels[i]) + "**: " + markdown_code(r.sources[i]);
    if (r.files[i] > 1) out += " (" + std::to_string(r.files[i]) + " files of one run)";
    if (!r.skus[i].empty()) out += " · " + r.skus[i];
    out += "\n";
  }
  out += "\n" + std::string(kRatioNote) + "\n\n";
  if (skus_differ(r)) out += std::string(kSkuNote) + "\n\n";
  out += "Contents: [Summary](#summary)";
  for (const auto& f : r.families) out += " · [" + escape_markdown_cell(f.family) + "](#" + anchor(f.family) + ")";
  out += "\n\n";
  std::vector<const std::pair<std::string, std::vector<std::string>>*> diff, same;
  split_context(r, diff, same);
  auto header = [&](const std::string& first, const std::string& second) {
    std::string s = "| " + first + (second.empty() ? "" : " | " + second);
    for (const auto& l : r.labels) s += " | " + escape_markdown_cell(l);
    s += " |\n|---" + std::string(second.empty() ? "" : "|---:");
    for (std::size_t i = 0; i < ncol; ++i) s += "|---:";
    return s + "|\n";
  };
  if (!r.context.empty()) {
    out += "### Machines\n\n";
    if (!diff.empty()) {
      out += header("context", "");
      for (const auto* row : diff) {
        out += "| " + escape_markdown_cell(row->first);
        for (const auto& v : row->second) out += " | " + escape_markdown_cell(v);
        out += " |\n";
      }
      out += "\n";
    }
    if (!same.empty()) {
      std::vector<std::string> s;
      for (const auto* row : same) s.push_back(row->first + ": " + row->second.front());
      out += "Identical in every column (" + std::to_string(same.size()) + "): " + escape_markdown_cell(joined(s, "; ")) + ".\n\n";
    }
  }
  if (ncol > 1) {
    out += "### Per family (geomean of the ratios to " + escape_markdown_cell(r.labels.front()) + ")\n\n";
    out += header("family", "cases");
    for (const auto& f : r.summary.families) {
      out += "| [" + escape_markdown_cell(f.family) + "](#" + anchor(f.family) + ") | " + std::to_string(f.cases.back());
      for (const auto& g : f.geomean) out += " | " + (g ? ratio_text(*g) : std::string("-"));
      out += " |\n";
    }
    out += "\n";
    for_each_change_list(r, [&](std::size_t c, bool losses, const std::vector<CaseChange>& list) {
      out += std::string("### Largest ") + (losses ? "losses" : "wins") + ": " + escape_markdown_cell(r.labels[c]) +
             " against " + escape_markdown_cell(r.labels.front()) + "\n\n| case | ratio | noise band | |\n|---|---:|---:|---|\n";
      for (const auto& ch : list)
        out += "| " + escape_markdown_cell(ch.name) + " | " + ratio_text(ch.ratio) + " | " + band_text(ch.band) + " | " +
               joined(change_marks(ch), ", ") + " |\n";
      out += "\n";
    });
  }
  if (!r.summary.partial.empty()) {
    out += "Cases in only some columns: " + std::to_string(r.summary.partial.size()) +
           " (counted, not charted, not in the geomeans): " + escape_markdown_cell(joined(r.summary.partial, ", ")) + ".\n\n";
  }
  for (const auto& fam : r.families) {
    out += "## " + escape_markdown_cell(fam.family) + "\n\n| benchmark | metric";
    for (const auto& l : r.labels) out += " | " + escape_markdown_cell(l);
    out += " | notes |\n|---|---";
    for (std::size_t i = 0; i < ncol; ++i) out += "|---:";
    out += "|---|\n";
    for (const auto& row : fam.rows) {
      out += "| " + escape_markdown_cell(row.name) + " | " + escape_markdown_cell(metric_label(row.metric));
      for (std::size_t i = 0; i < row.cells.size(); ++i) out += " | " + cell_markdown(row, row.cells[i], i);
      std::vector<std::string> m = marks(row.report_only, row.noisy);
      if (row.partial) m.emplace_back("not in every column");
      if (!row.metric_note.empty()) m.push_back(row.metric_note);
      out += " | " + escape_markdown_cell(joined(m, ", ")) + " |\n";
    }
    if (!fam.pairs.empty()) {
      out += "\n| paired speed-up | numerator | denominator";
      for (const auto& l : r.labels) out += " | " + escape_markdown_cell(l);
      out += " |\n|---|---|---";
      for (std::size_t i = 0; i < ncol; ++i) out += "|---:";
      out += "|\n";
      for (const auto& p : fam.pairs) {
        out += "| " + p.label + " | " + escape_markdown_cell(p.numerator) + " | " + escape_markdown_cell(p.denominator);
        for (const auto& s : p.speedup) out += " | " + (s ? ratio_text(*s) : std::string("-"));
        out += " |\n";
      }
    }
    out += "\n";
  }
  return out;
}

namespace {

std::string legend_swatch(std::size_t i) {
  return "<i style=\"background:" + std::string(series_colour(i)) + "\"></i>";
}

std::string html_head_row(const Report& r, const std::string& first_cols, const std::string& last_cols = "") {
  std::string s = "<tr>" + first_cols;
  for (std::size_t i = 0; i < r.labels.size(); ++i)
    s += "<th><span class=\"legend\">" + legend_swatch(i) + "</span>" + escape_html(r.labels[i]) + "</th>";
  return s + last_cols + "</tr>\n";
}

std::string html_tags(const std::vector<std::string>& m) {
  std::string s;
  for (const auto& t : m) s += "<span class=\"tag\">" + escape_xml(t) + "</span>";
  return s;
}

// One ratio chart of a family: every case in every column, its ratio to the first column.
std::string family_ratio_chart(const Report& r, const ReportFamily& fam, std::size_t c) {
  RatioChart chart;
  chart.title = fam.family + ": " + r.labels[c] + " against " + r.labels.front();
  std::optional<double> limit_pct;
  bool one_limit = true;
  for (const auto& row : fam.rows) {
    if (row.partial) continue;
    const ReportCell& cell = row.cells[c];
    RatioItem it;
    it.label = row.name.size() > fam.family.size() + 1 ? row.name.substr(fam.family.size() + 1) : row.name;
    it.ratio = cell.speed;
    it.noise = cell.band;
    it.mark = joined(marks(row.report_only, row.noisy), ", ");
    it.note = cell.note.substr(0, 40);
    it.href = "#" + case_anchor(row.name);
    it.tooltip = row.name + ": " + value_text(row, row.cells.front().value) + " -> " + value_text(row, cell.value) +
                 (cell.speed ? " (" + ratio_text(*cell.speed) + ", noise " + band_text(cell.band) + ")" : "");
    if (row.report_only) it.tone = cell.speed ? std::optional<Tone>(Tone::Muted) : std::nullopt;
    if (!row.report_only) {
      if (limit_pct && *limit_pct != row.limit_pct) one_limit = false;
      limit_pct = row.limit_pct;
      it.limit = 1.0 / (1.0 + row.limit_pct / 100.0);  // a tick where the rows' limits differ
    }
    chart.items.push_back(std::move(it));
  }
  if (chart.items.empty()) return "";
  chart.limit_label = "gate limit";
  if (limit_pct && one_limit) chart.limit = 1.0 / (1.0 + *limit_pct / 100.0);  // one line, no ticks
  return svg_ratio_chart(chart);
}

std::string family_bar_charts(const Report& r, const ReportFamily& fam) {
  std::vector<std::string> metrics;
  for (const auto& row : fam.rows)
    if (std::find(metrics.begin(), metrics.end(), row.metric) == metrics.end()) metrics.push_back(row.metric);
  std::string s;
  for (const auto& m : metrics) {
    BarChart b;
    b.series = r.labels;
    const ReportRow* first = nullptr;
    for (const auto& row : fam.rows) {
      if (row.metric != m || row.partial) continue;
      if (!first) first = &row;
      BarGroup g;
      g.label = row.name.size() > fam.family.size() + 1 ? row.name.substr(fam.family.size() + 1) : row.name;
      for (const auto& cell : row.cells) {
        // Times in µs on the bars: one unit for the axis.
        const bool t = m == "real_time";
        g.values.push_back(cell.value ? std::optional<double>(t ? *cell.value / 1e3 : *cell.value) : std::nullopt);
        g.texts.push_back(cell.value ? value_text(row, cell.value) : "");
        g.notes.push_back(cell.note);
      }
      b.groups.push_back(std::move(g));
    }
    if (!first) continue;
    b.unit = m == "real_time" ? "µs" : first->unit;
    b.title = fam.family + ": " + metric_title(*first);
    s += "<div class=\"muted\">" + escape_xml(metric_title(*first)) + "</div>\n<div class=\"chart\">" + svg_bar_chart(b) + "</div>\n";
  }
  return s;
}

}  // namespace

std::string render_report_html(const Report& r) {
  const std::size_t ncol = r.labels.size();
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<title>gpucheck hardware comparison</title>\n" +
                  chart_style_block() + "</head><body>\n<h1 id=\"summary\">gpucheck hardware comparison</h1>\n";
  h += "<nav class=\"toc\"><a href=\"#summary\">Summary</a>";
  for (const auto& f : r.families) h += "<a href=\"#" + anchor(f.family) + "\">" + escape_xml(f.family) + "</a>";
  h += "</nav>\n";
  for (std::size_t c = 1; c < ncol; ++c)
    h += "<p class=\"headline\"><b>" + escape_html(r.labels[c]) + "</b> is " + escape_html(headline_tail(r, c)) + ".</p>\n";
  h += "<div class=\"legend\">";
  for (std::size_t i = 0; i < ncol; ++i) {
    h += "<span>" + legend_swatch(i) + escape_html(r.labels[i]) + " <span class=\"muted\">(" + escape_html(r.sources[i]) +
         (r.files[i] > 1 ? ", " + std::to_string(r.files[i]) + " files of one run" : "") + ")" +
         (r.skus[i].empty() ? "" : " · " + escape_xml(r.skus[i])) + "</span></span>";
  }
  h += "</div>\n<p class=\"muted\">" + std::string(kRatioNote) + "</p>\n";
  if (skus_differ(r)) h += "<p class=\"muted\">" + std::string(kSkuNote) + "</p>\n";
  std::vector<const std::pair<std::string, std::vector<std::string>>*> diff, same;
  split_context(r, diff, same);
  if (!r.context.empty()) {
    h += "<h3>Machines</h3>\n";
    auto rows = [&](const auto& list) {
      std::string s = "<table>\n" + html_head_row(r, "<th class=\"text\"></th>");
      for (const auto* row : list) {
        s += "<tr><td class=\"text\">" + escape_xml(row->first) + "</td>";
        for (const auto& v : row->second) s += "<td>" + escape_xml(v) + "</td>";
        s += "</tr>\n";
      }
      return s + "</table>\n";
    };
    if (!diff.empty()) h += rows(diff);
    if (!same.empty())
      h += "<details><summary>" + std::to_string(same.size()) + " context rows identical in every column</summary>\n" +
           rows(same) + "</details>\n";
  }
  if (ncol > 1) {
    h += "<h3>Per family: geomean of the ratios to " + escape_html(r.labels.front()) + "</h3>\n<table>\n" +
         html_head_row(r, "<th class=\"text\">family</th><th>cases</th>");
    for (const auto& f : r.summary.families) {
      h += "<tr><td class=\"text\"><a href=\"#" + anchor(f.family) + "\">" + escape_xml(f.family) + "</a></td><td>" +
           std::to_string(f.cases.back()) + "</td>";
      for (const auto& g : f.geomean) h += "<td>" + (g ? ratio_text(*g) : std::string("-")) + "</td>";
      h += "</tr>\n";
    }
    h += "</table>\n";
    for_each_change_list(r, [&](std::size_t c, bool losses, const std::vector<CaseChange>& list) {
      h += std::string("<h3>Largest ") + (losses ? "losses" : "wins") + ": " + escape_html(r.labels[c]) + " against " +
           escape_html(r.labels.front()) +
           "</h3>\n<table>\n<tr><th class=\"name\">case</th><th>ratio</th><th>noise band</th><th class=\"text\"></th></tr>\n";
      for (const auto& ch : list) {
        const Tone t = ch.report_only ? Tone::Muted : ratio_tone(ch.ratio, ch.band);
        h += "<tr><td class=\"name\"><a href=\"#" + case_anchor(ch.name) + "\">" + escape_xml(ch.name) + "</a></td><td class=\"" +
             std::string(tone_class(t)) + "\">" + ratio_text(ch.ratio) + "</td><td>" + band_text(ch.band) +
             "</td><td class=\"text\">" + html_tags(change_marks(ch)) + "</td></tr>\n";
      }
      h += "</table>\n";
    });
  }
  if (!r.summary.partial.empty()) {
    h += "<details><summary>" + std::to_string(r.summary.partial.size()) +
         " cases in only some columns (counted, not charted, not in the geomeans)</summary><p class=\"muted\">";
    for (const auto& n : r.summary.partial) h += "<a href=\"#" + case_anchor(n) + "\">" + escape_xml(n) + "</a> ";
    h += "</p></details>\n";
  }
  for (const auto& fam : r.families) {
    h += "<h2 id=\"" + anchor(fam.family) + "\">" + escape_xml(fam.family) + "</h2>\n";
    for (std::size_t c = 1; c < ncol; ++c) {
      const std::string chart = family_ratio_chart(r, fam, c);
      if (chart.empty()) continue;
      h += "<div class=\"muted\">speed ratio, " + escape_html(r.labels[c]) + " against " + escape_html(r.labels.front()) +
           " (log axis)</div>\n<div class=\"chart\">" + chart + "</div>\n";
    }
    const std::string bars = family_bar_charts(r, fam);
    if (!bars.empty()) {
      h += ncol > 1 ? "<details><summary>absolute figures</summary>\n" + bars + "</details>\n" : bars;
    }
    h += "<table>\n" + html_head_row(r, "<th class=\"name\">benchmark</th><th class=\"text\">metric</th>", "<th class=\"text\">notes</th>");
    for (const auto& row : fam.rows) {
      h += "<tr id=\"" + case_anchor(row.name) + "\"><td class=\"name\">" + escape_xml(row.name) + "</td><td class=\"text\">" +
           escape_xml(metric_label(row.metric)) + "</td>";
      for (std::size_t i = 0; i < row.cells.size(); ++i) {
        const auto& c = row.cells[i];
        if (!c.value) {
          h += "<td class=\"note\">" + escape_xml(c.note) + "</td>";
          continue;
        }
        std::string cell = escape_xml(value_text(row, c.value));
        if (i > 0 && c.speed) {
          const Tone t = row.report_only ? Tone::Muted : cell_tone(c);
          cell += " <span class=\"" + std::string(tone_class(t)) + "\" title=\"noise " + band_text(c.band) + "\">(" +
                  ratio_text(*c.speed) + ")</span>";
        }
        if (c.pct_of_spec) cell += " <span class=\"muted\">" + format_double("%.0f", *c.pct_of_spec) + "% of spec</span>";
        h += "<td>" + cell + "</td>";
      }
      std::vector<std::string> m = marks(row.report_only, row.noisy);
      if (row.partial) m.emplace_back("not in every column");
      if (!row.metric_note.empty()) m.push_back(row.metric_note);
      h += "<td class=\"text\">" + html_tags(m) + "</td></tr>\n";
    }
    h += "</table>\n";
    if (!fam.pairs.empty()) {
      h += "<table>\n" + html_head_row(r, "<th class=\"name\">paired speed-up</th><th class=\"name\">of benchmark</th>");
      for (const auto& p : fam.pairs) {
        const std::string shown = p.numerator.size() > fam.family.size() + 1 ? p.numerator.substr(fam.family.size() + 1) : p.numerator;
        h += "<tr><td class=\"name\">" + escape_xml(p.label) + "</td><td class=\"name\" title=\"" +
             escape_xml(p.numerator + " against " + p.denominator) + "\">" + escape_xml(shown) + "</td>";
        for (const auto& s : p.speedup) h += "<td>" + (s ? ratio_text(*s) : std::string("-")) + "</td>";
        h += "</tr>\n";
      }
      h += "</table>\n";
    }
  }
  h += "</body></html>\n";
  return h;
}

std::string render_report_json(const Report& r) {
  using json = nlohmann::ordered_json;
  auto opt = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
  json j;
  j["columns"] = json::array();
  for (std::size_t i = 0; i < r.labels.size(); ++i)
    j["columns"].push_back({{"label", r.labels[i]}, {"sources", r.sources[i]}, {"files", r.files[i]}, {"sku", r.skus[i]}});
  j["thresholds_file"] = r.thresholds_source;
  j["context"] = json::array();
  for (const auto& [label, vals] : r.context) j["context"].push_back({{"label", label}, {"values", vals}, {"differs", differs(vals)}});
  json sum;
  sum["columns"] = json::array();
  for (std::size_t c = 0; c < r.summary.columns.size(); ++c) {
    const auto& cs = r.summary.columns[c];
    auto changes = [](const std::vector<CaseChange>& v) {
      json a = json::array();
      for (const auto& ch : v)
        a.push_back({{"name", ch.name}, {"ratio", ch.ratio}, {"noise_band", ch.band}, {"report_only", ch.report_only}, {"noisy", ch.noisy}});
      return a;
    };
    sum["columns"].push_back({{"label", r.labels[c]}, {"geomean", opt(cs.geomean)}, {"cases", cs.cases},
                              {"wins", changes(cs.wins)}, {"losses", changes(cs.losses)}});
  }
  sum["families"] = json::array();
  for (const auto& f : r.summary.families) {
    json g = json::array();
    for (const auto& v : f.geomean) g.push_back(opt(v));
    sum["families"].push_back({{"family", f.family}, {"geomean", g}, {"cases", f.cases}});
  }
  sum["partial"] = r.summary.partial;
  j["summary"] = sum;
  j["cases"] = json::array();
  for (const auto& fam : r.families)
    for (const auto& row : fam.rows) {
      json cells = json::array();
      for (const auto& c : row.cells)
        cells.push_back({{"value", opt(c.value)}, {"ratio", opt(c.speed)}, {"noise_band", c.band}, {"cv", opt(c.cv)},
                         {"pct_of_spec", opt(c.pct_of_spec)}, {"note", c.note}});
      j["cases"].push_back({{"family", fam.family}, {"name", row.name}, {"metric", row.metric}, {"unit", row.unit},
                            {"direction", row.direction == Direction::LowerIsBetter ? "lower_is_better" : "higher_is_better"},
                            {"limit_pct", row.limit_pct}, {"report_only", row.report_only}, {"noisy", row.noisy},
                            {"partial", row.partial}, {"cells", cells}});
    }
  j["pairs"] = json::array();
  for (const auto& fam : r.families)
    for (const auto& p : fam.pairs) {
      json s = json::array();
      for (const auto& v : p.speedup) s.push_back(opt(v));
      j["pairs"].push_back({{"family", fam.family}, {"label", p.label}, {"numerator", p.numerator}, {"denominator", p.denominator}, {"speedup", s}});
    }
  return j.dump(2) + "\n";
}

std::string render_report_csv(const Report& r) {
  std::string out = csv_line({"family", "name", "metric", "unit", "direction", "column", "value", "ratio",
                              "noise_band_pct", "cv_pct", "pct_of_spec", "tone", "report_only", "noisy", "partial", "note"});
  for (const auto& fam : r.families)
    for (const auto& row : fam.rows)
      for (std::size_t i = 0; i < row.cells.size(); ++i) {
        const auto& c = row.cells[i];
        const std::string tone = i == 0 ? "reference" : c.speed ? std::string(tone_class(cell_tone(c))) : "";
        out += csv_line({fam.family, row.name, row.metric, csv_unit(row.metric),
                         row.direction == Direction::LowerIsBetter ? "lower_is_better" : "higher_is_better", r.labels[i],
                         csv_number(c.value), csv_number(c.speed), csv_pct(c.band), csv_pct(c.cv),
                         csv_number(c.pct_of_spec), tone, row.report_only ? "1" : "0", row.noisy ? "1" : "0",
                         row.partial ? "1" : "0", c.note});
      }
  return out;
}

}  // namespace gpucheck::compare
