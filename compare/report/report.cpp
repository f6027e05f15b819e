// Hardware comparison report. Columns are result files; each benchmark is shown in the
// counter people quote (TFLOPS, GBps, us per launch) and as a ratio to the first column, so
// "0.62x" reads as "this machine reaches 62% of the reference". Charts are plain SVG bars.
#include "report/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "base/format.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"

namespace gpucheck::compare {
namespace {

std::string family_of(const std::string& name) {
  const std::size_t s = name.find('/');
  return s == std::string::npos ? name : name.substr(0, s);
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
  return out;
}

std::optional<double> metric_value(const Benchmark& b, const std::string& metric) {
  if (b.state != RunState::Ok) return std::nullopt;
  if (metric == "real_time") return b.real_time_ns;
  const auto it = b.counters.find(metric);
  if (it == b.counters.end()) return std::nullopt;
  return it->second;
}

std::string value_text(const std::string& metric, std::optional<double> v) {
  if (!v) return "-";
  if (metric == "real_time") return format_time_ns(*v);
  return format_double("%.4g", *v);
}

std::string speed_text(std::optional<double> s) { return s ? format_double("%.2f", *s) + "x" : ""; }

std::string metric_title(const std::string& metric, Direction d) {
  const std::string unit = metric == "real_time" ? "time per iteration" : metric;
  return unit + (d == Direction::LowerIsBetter ? " (lower is better)" : " (higher is better)");
}

// Okabe-Ito: tells columns apart for colour-blind readers too.
constexpr const char* kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"};
constexpr std::size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

// The chart's short row name, as drawn left of the bars.
std::string chart_label(const ReportFamily& fam, const std::string& name) {
  std::string s = name.size() > fam.family.size() + 1 ? name.substr(fam.family.size() + 1) : name;
  if (s.size() > 48) s = s.substr(0, 45) + "...";
  return s;
}

std::string svg_chart(const Report& rep, const ReportFamily& fam, const std::string& metric) {
  std::vector<const ReportRow*> rows;
  for (const auto& r : fam.rows)
    if (r.metric == metric) rows.push_back(&r);
  if (rows.empty()) return "";
  const std::size_t ncol = rep.labels.size();
  double vmax = 0.0;
  double widest = 0.0;
  for (const auto* r : rows) {
    widest = std::max(widest, text_width_px(chart_label(fam, r->name), 12.0));
    for (const auto& c : r->cells)
      if (c.value) vmax = std::max(vmax, *c.value);
  }
  if (vmax <= 0.0) return "";
  // Axis on round numbers (1, 2, 5 x 10^k) so a reader can estimate any bar.
  const double raw_step = vmax / 4.0;
  const double mag = std::pow(10.0, std::floor(std::log10(raw_step)));
  const double unit_step = raw_step / mag <= 1.0 ? 1.0 : raw_step / mag <= 2.0 ? 2.0 : raw_step / mag <= 5.0 ? 5.0 : 10.0;
  const double step = unit_step * mag;
  const int n_ticks = static_cast<int>(std::ceil(vmax / step - 1e-9));
  const double axis_max = step * n_ticks;
  const double scale_div = metric == "real_time" ? (vmax >= 1e9 ? 1e9 : vmax >= 1e6 ? 1e6 : vmax >= 1e3 ? 1e3 : 1.0) : 1.0;
  const char* unit = metric == "real_time" ? (scale_div == 1e9 ? " s" : scale_div == 1e6 ? " ms" : scale_div == 1e3 ? " us" : " ns") : "";
  const int label_w = static_cast<int>(std::ceil(widest)) + 16;  // the label ends 8 px left of the bars
  const int bar_w = 520;
  const int bar_h = 13;
  const int group_gap = 10;
  const int top = 8;
  const int group_h = static_cast<int>(ncol) * bar_h + group_gap;
  const int height = top + static_cast<int>(rows.size()) * group_h + 26;
  const int width = label_w + bar_w + 90;
  Direction dir = rows.front()->direction;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"" + std::to_string(width) +
                  "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " +
                  std::to_string(height) + "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n";
  s += "<title>" + escape_xml(fam.family + ": " + metric_title(metric, dir)) + "</title>\n";
  // light gridlines at each tick
  for (int q = 0; q <= n_ticks; ++q) {
    const int x = label_w + bar_w * q / n_ticks;
    s += "<line x1=\"" + std::to_string(x) + "\" y1=\"" + std::to_string(top - 4) + "\" x2=\"" + std::to_string(x) +
         "\" y2=\"" + std::to_string(height - 22) + "\" stroke=\"#ddd\"/>\n";
    s += "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(height - 8) +
         "\" text-anchor=\"middle\" fill=\"#555\">" + escape_xml(format_double("%.4g", step * q / scale_div) + unit) + "</text>\n";
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ReportRow& r = *rows[i];
    const int y0 = top + static_cast<int>(i) * group_h;
    const std::string short_name = chart_label(fam, r.name);
    s += "<text x=\"" + std::to_string(label_w - 8) + "\" y=\"" + std::to_string(y0 + static_cast<int>(ncol) * bar_h / 2 + 4) +
         "\" text-anchor=\"end\" fill=\"#222\">" + escape_xml(short_name) + "</text>\n";
    for (std::size_t c = 0; c < ncol; ++c) {
      const int y = y0 + static_cast<int>(c) * bar_h;
      const auto& cell = r.cells[c];
      if (!cell.value) {
        s += "<text x=\"" + std::to_string(label_w + 4) + "\" y=\"" + std::to_string(y + bar_h - 3) +
             "\" fill=\"#999\" font-size=\"10\">" + escape_xml(cell.note.empty() ? "n/a" : cell.note.substr(0, 60)) + "</text>\n";
        continue;
      }
      const int w = std::max(1, static_cast<int>(std::lround(*cell.value / axis_max * bar_w)));
      s += "<rect x=\"" + std::to_string(label_w) + "\" y=\"" + std::to_string(y + 1) + "\" width=\"" +
           std::to_string(w) + "\" height=\"" + std::to_string(bar_h - 2) + "\" fill=\"" + kPalette[c % kPaletteSize] +
           "\"><title>" + escape_xml(rep.labels[c] + ": " + value_text(metric, cell.value)) + "</title></rect>\n";
      s += "<text x=\"" + std::to_string(label_w + w + 4) + "\" y=\"" + std::to_string(y + bar_h - 3) +
           "\" font-size=\"10\" fill=\"#333\">" + escape_xml(value_text(metric, cell.value)) + "</text>\n";
    }
  }
  s += "</svg>\n";
  return s;
}

// Columns of the same GPU, host and driver: told apart by their file's name, else by the
// run's date (context "date", to the minute), else by a number.
void disambiguate_labels(std::vector<std::string>& labels, const std::vector<Results>& inputs) {
  auto repeated = [&labels](std::size_t i) { return std::count(labels.begin(), labels.end(), labels[i]) > 1; };
  auto tag_with = [&](auto&& tag) {
    std::vector<std::string> next = labels;
    for (std::size_t i = 0; i < labels.size(); ++i)
      if (repeated(i)) {
        const std::string t = tag(i);
        if (!t.empty()) next[i] += " (" + t + ")";
      }
    labels = std::move(next);
  };
  tag_with([&](std::size_t i) {
    const std::string& src = inputs[i].source;
    const std::size_t slash = src.find_last_of('/');
    return slash == std::string::npos ? src : src.substr(slash + 1);
  });
  tag_with([&](std::size_t i) {
    const std::string d = inputs[i].context_value("date");
    return d == "unknown" ? std::string() : d.substr(0, 16);
  });
  std::map<std::string, int> uses;
  for (auto& l : labels)
    if (const int n = ++uses[l]; n > 1) l += " #" + std::to_string(n);
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& paired_segments() {
  // The contract's pairs (fusion over the naive path, ours over cuDNN's, NHWC over NCHW, ...).
  static const std::vector<std::pair<std::string, std::string>> k = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& p : contract::kReportPairs) out.emplace_back(std::string(p.candidate), std::string(p.reference));
    return out;
  }();
  return k;
}

namespace {

// One column per file, labelled by GPU, host and driver; the context rows any file has.
void add_columns(Report& rep, const std::vector<Results>& inputs) {
  for (const Results& r : inputs) {
    std::string label = r.context_value("gpu_name");
    if (const auto h = r.context_value("host_name"); h != "unknown") label += " · " + h;
    if (const auto d = r.context_value("driver_version"); d != "unknown") label += " · " + d;
    rep.labels.push_back(label);
    rep.sources.push_back(r.source);
  }
  disambiguate_labels(rep.labels, inputs);
  for (const auto& [key, label] : context_keys()) {
    std::vector<std::string> vals;
    bool any = false;
    for (const Results& r : inputs) {
      vals.push_back(r.context_value(key));
      any = any || vals.back() != "unknown";
    }
    if (any) rep.context.emplace_back(label, std::move(vals));
  }
}

// A benchmark's row: the metric it is read by, a cell per file, each cell's speed against the
// first column's.
ReportRow make_row(const std::string& name, const std::vector<Results>& inputs, const ReportOptions& o) {
  ReportRow row;
  row.name = name;
  row.metric = o.metric;
  if (row.metric.empty()) {
    for (const Results& r : inputs)
      if (const Benchmark* b = r.find(name); b != nullptr && b->state == RunState::Ok) {
        row.metric = rate_counter(*b);
        if (one_rank_collective(*b)) row.metric_note = "one rank: busbw is 0 by definition";
        break;
      }
    if (row.metric.empty()) row.metric = "real_time";
  }
  row.direction = direction_for(row.metric).value_or(Direction::HigherIsBetter);
  for (const Results& r : inputs) {
    ReportCell cell;
    const Benchmark* b = r.find(name);
    if (b == nullptr) {
      cell.note = "absent";
    } else if (b->state != RunState::Ok) {
      cell.note = (b->state == RunState::Errored ? "errored: " : "skipped: ") + b->message;
    } else {
      cell.value = metric_value(*b, row.metric);
      if (!cell.value) cell.note = "no " + row.metric;
    }
    row.cells.push_back(std::move(cell));
  }
  const auto& first = row.cells.front().value;
  for (auto& cell : row.cells)
    if (first && cell.value && *first > 0 && *cell.value > 0)
      cell.speed = row.direction == Direction::LowerIsBetter ? *first / *cell.value : *cell.value / *first;
  return row;
}

// Within a family, every pair of cases whose names differ in one segment by a pair of
// paired_segments(): the speed-up of the numerator over the denominator, per file.
void add_pairs(ReportFamily& fam, const std::vector<Results>& inputs) {
  std::set<std::string> in_family;
  for (const auto& r : fam.rows) in_family.insert(r.name);
  for (const auto& r : fam.rows) {
    auto parts = split_name(r.name);
    for (std::size_t i = 1; i < parts.size(); ++i) {
      for (const auto& [num, den] : paired_segments()) {
        if (parts[i] != num) continue;
        auto other = parts;
        other[i] = den;
        const std::string other_name = join(other);
        if (in_family.count(other_name) == 0) continue;
        PairedRatio p;
        p.label = num + "/" + den;
        p.numerator = r.name;
        p.denominator = other_name;
        for (const Results& res : inputs) {
          const Benchmark* a = res.find(r.name);
          const Benchmark* b = res.find(other_name);
          if (a && b && a->state == RunState::Ok && b->state == RunState::Ok && a->real_time_ns > 0)
            p.speedup.emplace_back(b->real_time_ns / a->real_time_ns);
          else
            p.speedup.emplace_back(std::nullopt);
        }
        fam.pairs.push_back(std::move(p));
      }
    }
  }
}

}  // namespace

Expected<Report> build_report(const std::vector<Results>& inputs, const ReportOptions& o) {
  if (inputs.empty()) return Error{"report", "needs at least one results file"};
  Report rep;
  add_columns(rep, inputs);
  // Rows in first-seen order across the files; families in first-seen order too.
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const Results& r : inputs)
    for (const auto& b : r.benchmarks)
      if (seen.insert(b.name).second) names.push_back(b.name);
  std::map<std::string, std::size_t> fam_index;
  for (const auto& name : names) {
    const std::string fam = family_of(name);
    auto [it, fresh] = fam_index.try_emplace(fam, rep.families.size());
    if (fresh) rep.families.push_back(ReportFamily{fam, {}, {}});
    rep.families[it->second].rows.push_back(make_row(name, inputs, o));
  }
  for (auto& fam : rep.families) add_pairs(fam, inputs);
  return rep;
}

std::string render_report_markdown(const Report& r) {
  std::string out = "# gpucheck hardware comparison\n\n";
  for (std::size_t i = 0; i < r.labels.size(); ++i)
    out += "- **" + escape_markdown_cell(r.labels[i]) + "**: `" + r.sources[i] + "`\n";
  out += "\nRatios are against the first column; above 1.00x is faster (higher rate or shorter time).\n\n";
  if (!r.context.empty()) {
    out += "## Context\n\n|";
    for (const auto& l : r.labels) out += " | " + escape_markdown_cell(l);
    out += " |\n|---";
    for (std::size_t i = 0; i < r.labels.size(); ++i) out += "|---";
    out += "|\n";
    for (const auto& [label, vals] : r.context) {
      out += "| " + escape_markdown_cell(label);
      for (const auto& v : vals) out += " | " + escape_markdown_cell(v);
      out += " |\n";
    }
    out += "\n";
  }
  for (const auto& fam : r.families) {
    out += "## " + escape_markdown_cell(fam.family) + "\n\n| benchmark | metric";
    for (const auto& l : r.labels) out += " | " + escape_markdown_cell(l);
    out += " |\n|---|---";
    for (std::size_t i = 0; i < r.labels.size(); ++i) out += "|---:";
    out += "|\n";
    for (const auto& row : fam.rows) {
      out += "| " + escape_markdown_cell(row.name) + " | " +
             escape_markdown_cell(row.metric_note.empty() ? row.metric : row.metric + " (" + row.metric_note + ")");
      for (std::size_t i = 0; i < row.cells.size(); ++i) {
        const auto& c = row.cells[i];
        std::string cell = c.value ? value_text(row.metric, c.value) : escape_markdown_cell(c.note);
        if (i > 0 && c.speed) cell += " (" + speed_text(c.speed) + ")";
        out += " | " + cell;
      }
      out += " |\n";
    }
    if (!fam.pairs.empty()) {
      out += "\n| paired speed-up | numerator | denominator";
      for (const auto& l : r.labels) out += " | " + escape_markdown_cell(l);
      out += " |\n|---|---|---";
      for (std::size_t i = 0; i < r.labels.size(); ++i) out += "|---:";
      out += "|\n";
      for (const auto& p : fam.pairs) {
        out += "| " + p.label + " | " + escape_markdown_cell(p.numerator) + " | " + escape_markdown_cell(p.denominator);
        for (const auto& s : p.speedup) out += " | " + (s ? speed_text(s) : std::string("-"));
        out += " |\n";
      }
    }
    out += "\n";
  }
  return out;
}

std::string render_report_html(const Report& r) {
  std::string h = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>gpucheck hardware comparison</title>
<style>
body{font-family:"DejaVu Sans",Arial,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px;margin:0 0 8px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:13px}
th,td{border:1px solid #d0d0d0;padding:3px 8px;text-align:right;white-space:nowrap}
th{background:#f2f2f2;white-space:normal;max-width:220px} td.name,th.name{text-align:left;font-family:"DejaVu Sans Mono",monospace}
td.note{color:#999;text-align:left} .better{color:#087f23} .worse{color:#b00020}
.legend span{display:inline-block;margin-right:18px;font-size:13px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px}
.muted{color:#666;font-size:13px} .chart{margin:6px 0 4px}
</style></head><body>
<h1>gpucheck hardware comparison</h1>
)";
  h += "<p class=\"muted\">Ratios are against the first column; above 1.00x is faster (higher rate or shorter time).</p>\n";
  h += "<div class=\"legend\">";
  for (std::size_t i = 0; i < r.labels.size(); ++i)
    h += "<span><i style=\"background:" + std::string(kPalette[i % kPaletteSize]) + "\"></i>" + escape_xml(r.labels[i]) +
         " <span class=\"muted\">(" + escape_xml(r.sources[i]) + ")</span></span>";
  h += "</div>\n";
  auto head_row = [&](const std::string& first_cols) {
    std::string s = "<tr>" + first_cols;
    for (std::size_t i = 0; i < r.labels.size(); ++i)
      s += "<th><i style=\"display:inline-block;width:10px;height:10px;background:" + std::string(kPalette[i % kPaletteSize]) +
           "\"></i> " + escape_xml(r.labels[i]) + "</th>";
    return s + "</tr>\n";
  };
  if (!r.context.empty()) {
    h += "<h2>Context</h2>\n<table>\n" + head_row("<th class=\"name\"></th>");
    for (const auto& [label, vals] : r.context) {
      const bool differs = std::any_of(vals.begin(), vals.end(), [&](const std::string& v) { return v != vals.front(); });
      h += "<tr><td class=\"name\">" + escape_xml(label) + "</td>";
      for (const auto& v : vals) h += "<td" + std::string(differs ? " style=\"background:#fff3cd\"" : "") + ">" + escape_xml(v) + "</td>";
      h += "</tr>\n";
    }
    h += "</table>\n";
  }
  for (const auto& fam : r.families) {
    h += "<h2>" + escape_xml(fam.family) + "</h2>\n";
    std::vector<std::string> metrics;
    for (const auto& row : fam.rows)
      if (std::find(metrics.begin(), metrics.end(), row.metric) == metrics.end()) metrics.push_back(row.metric);
    for (const auto& m : metrics) {
      const Direction d = std::find_if(fam.rows.begin(), fam.rows.end(), [&](const ReportRow& x) { return x.metric == m; })->direction;
      h += "<div class=\"muted\">" + escape_xml(metric_title(m, d)) + "</div>\n<div class=\"chart\">" + svg_chart(r, fam, m) + "</div>\n";
    }
    h += "<table>\n" + head_row("<th class=\"name\">benchmark</th><th>metric</th>");
    for (const auto& row : fam.rows) {
      h += "<tr><td class=\"name\">" + escape_xml(row.name) + "</td><td>" +
           escape_xml(row.metric_note.empty() ? row.metric : row.metric + " (" + row.metric_note + ")") + "</td>";
      for (std::size_t i = 0; i < row.cells.size(); ++i) {
        const auto& c = row.cells[i];
        if (!c.value) {
          h += "<td class=\"note\">" + escape_xml(c.note) + "</td>";
          continue;
        }
        std::string cell = escape_xml(value_text(row.metric, c.value));
        if (i > 0 && c.speed) {
          const char* cls = *c.speed >= 1.0 ? "better" : "worse";
          cell += " <span class=\"" + std::string(cls) + "\">(" + speed_text(c.speed) + ")</span>";
        }
        h += "<td>" + cell + "</td>";
      }
      h += "</tr>\n";
    }
    h += "</table>\n";
    if (!fam.pairs.empty()) {
      h += "<table>\n" + head_row("<th class=\"name\">paired speed-up</th><th class=\"name\">of benchmark</th>");
      for (const auto& p : fam.pairs) {
        const std::string shown = p.numerator.size() > fam.family.size() + 1 ? p.numerator.substr(fam.family.size() + 1) : p.numerator;
        h += "<tr><td class=\"name\">" + escape_xml(p.label) + "</td><td class=\"name\" title=\"" +
             escape_xml(p.numerator + " against " + p.denominator) + "\">" + escape_xml(shown) + "</td>";
        for (const auto& s : p.speedup) h += "<td>" + (s ? speed_text(s) : std::string("-")) + "</td>";
        h += "</tr>\n";
      }
      h += "</table>\n";
    }
  }
  h += "</body></html>\n";
  return h;
}

}  // namespace gpucheck::compare
