#include "history/report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "base/format.hpp"
#include "gpucheck/core/stats.hpp"
#include "base/output.hpp"
#include "report/charts.hpp"
#include "results/baseline.hpp"
#include "rules/compare.hpp"

namespace gpucheck::compare {
namespace history {
namespace {

std::string num(double v) { return format_double("%.1f", v); }

// A machine: its host name and GPU (cloud VMs often share one host name: "vm" on every H200
// lease), the GPU's UUID shortened to its first group as nvidia-smi users know it.
std::string machine_of(const Point& p) {
  const std::string gpu = p.gpu_uuid.substr(0, p.gpu_uuid.find('-', p.gpu_uuid.rfind("GPU-", 0) == 0 ? 4 : 0));
  return p.host_name + (gpu.empty() ? "" : ", " + gpu) + " (" + p.host_cpu + ")";
}

std::string family_of(const std::string& name) { return name.substr(0, name.find('/')); }

std::optional<double> baseline_figure(const Results* b, const Series& s) {
  if (b == nullptr) return std::nullopt;
  const Benchmark* x = b->find(s.name);
  if (x == nullptr || x->state != RunState::Ok) return std::nullopt;
  if (s.metric == "real_time") return x->real_time_ns;
  if (const auto c = x->counters.find(s.metric); c != x->counters.end()) return c->second;
  return std::nullopt;
}

const CaseChanges* changes_of(const std::vector<CaseChanges>& all, const Series& s) {
  for (const auto& c : all)
    if (c.series == &s) return &c;
  return nullptr;
}

double limit_of(const Thresholds& t, const std::string& name) {
  const Rule r = t.rule_for(name);
  return r.kind == RuleKind::ReportOnly ? t.default_pct : r.pct;
}

// Legend entries left to right, wrapped onto a new row where the next would pass right_x:
// each entry's x and row (machine names with their host CPU run long; three did not fit one row).
std::vector<std::pair<double, int>> legend_layout(const std::vector<double>& widths, double left_x, double right_x) {
  std::vector<std::pair<double, int>> at;
  double x = left_x;
  int row = 0;
  for (const double wd : widths) {
    if (x > left_x && x + wd > right_x) x = left_x, ++row;
    at.emplace_back(x, row);
    x += wd;
  }
  return at;
}
}  // namespace

std::string trend_svg(const Series& s, const CaseChanges* changes, std::optional<double> baseline, double limit_pct) {
  std::map<std::string, std::size_t> machines;
  for (const Point& p : s.points) machines.emplace(machine_of(p), machines.size());
  std::vector<double> legend_w;
  for (const auto& [m, i] : machines) legend_w.push_back(24 + text_width_px(m, 11));
  const double w = 1000, x0 = 80, x1 = w - 20, y0 = 20, legend_y = 220, row_h = 14, y1 = legend_y - 40;
  const auto legend = legend_layout(legend_w, x0, x1);
  const double h = legend_y + row_h * (legend.empty() ? 0 : legend.back().second);
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (const Point& p : s.points) lo = std::min(lo, p.median), hi = std::max(hi, p.median);
  const double band = limit_pct / 100.0;
  // The axis spans at least the gate's limit around the series' median: noise well inside the
  // limit reads as flat, not magnified to the chart's height.
  std::vector<double> ys_all;
  for (const Point& p : s.points) ys_all.push_back(p.median);
  const double mid = baseline.value_or(gpucheck::median(ys_all).value_or(0.0));
  lo = std::min(lo, mid * (1 - band)), hi = std::max(hi, mid * (1 + band));
  if (!(hi > lo)) lo -= std::fabs(lo) * 0.05 + 1e-9, hi += std::fabs(hi) * 0.05 + 1e-9;
  const double pad = (hi - lo) * 0.08;
  lo -= pad, hi += pad;
  const std::size_t n = s.points.size();
  const auto xs = [&](double i) { return n < 2 ? (x0 + x1) / 2 : x0 + (x1 - x0) * i / static_cast<double>(n - 1); };
  const auto ys = [&](double v) { return y1 - (y1 - y0) * (v - lo) / (hi - lo); };
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"gc-chart\" role=\"img\" width=\"" + num(w) +
                  "\" height=\"" + num(h) + "\" viewBox=\"0 0 " + num(w) + " " + num(h) +
                  "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n<title>" + escape_xml(s.name) +
                  " over commits</title>\n";
  const auto text = [&](double x, double y, const std::string& t, const char* anchor, const char* cls) {
    o += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\" class=\"" + cls + "\">" +
         escape_xml(t) + "</text>\n";
  };
  const auto line = [&](double ax, double ay, double bx, double by, const char* cls) {
    o += "<line x1=\"" + num(ax) + "\" y1=\"" + num(ay) + "\" x2=\"" + num(bx) + "\" y2=\"" + num(by) + "\" class=\"" +
         cls + "\"/>\n";
  };
  if (baseline) {
    const double top = ys(*baseline * (1 + band)), bottom = ys(*baseline * (1 - band));
    o += "<rect class=\"band\" x=\"" + num(x0) + "\" y=\"" + num(top) + "\" width=\"" + num(x1 - x0) + "\" height=\"" +
         num(bottom - top) + "\"><title>gate limit +-" + format_pct(limit_pct) + " of the baseline</title></rect>\n";
    line(x0, ys(*baseline), x1, ys(*baseline), "one");
    text(x0 + 4, ys(*baseline) - 3, "baseline " + format_metric(s.metric, *baseline), "start", "axis");
  }
  line(x0, y1, x1, y1, "axis");
  line(x0, y0, x0, y1, "axis");
  text(x0 - 4, y0 + 4, format_metric(s.metric, hi), "end", "axis");
  text(x0 - 4, y1, format_metric(s.metric, lo), "end", "axis");
  for (std::size_t i = 0; i < n; ++i) {
    const Point& p = s.points[i];
    o += "<circle cx=\"" + num(xs(static_cast<double>(i))) + "\" cy=\"" + num(ys(p.median)) + "\" r=\"2.5\" fill=\"" +
         std::string(series_colour(machines[machine_of(p)])) + "\"><title>" +
         escape_xml(p.commit + " " + p.date + " " + machine_of(p) + ": " + format_metric(s.metric, p.median)) +
         "</title></circle>\n";
  }
  if (changes != nullptr)
    for (const CaseChange& c : changes->changes) {
      const double x = xs(static_cast<double>(c.at.index) - 0.5);
      line(x, y0, x, y1, c.regression ? "limit" : "marker");
      text(x + 3, y0 + 10, c.commit.substr(0, 10) + " " + format_change(c.at.change), "start", c.regression ? "worse" : "better");
    }
  text(x0, y1 + 18, s.points.empty() ? "" : "first " + s.points.front().commit, "start", "axis");
  text(x1, y1 + 18, s.points.empty() ? "" : "newest " + s.points.back().commit, "end", "axis");
  std::size_t k = 0;
  for (const auto& [m, i] : machines) {
    const auto [lx, row] = legend[k++];
    const double ly = legend_y + row_h * row;
    o += "<rect x=\"" + num(lx) + "\" y=\"" + num(ly - 12) + "\" width=\"10\" height=\"10\" fill=\"" +
         std::string(series_colour(i)) + "\"/>\n";
    text(lx + 14, ly - 3, m, "start", "axis");
  }
  return o + "</svg>\n";
}

std::string trend_html(const TrendInput& in) {
  std::map<std::string, std::vector<const Series*>> families;
  for (const Series& s : *in.series) families[family_of(s.name)].push_back(&s);
  std::string o = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gpucheck history</title>" +
                  chart_style_block() + "</head><body>\n<h1>gpucheck history: " + escape_xml(in.gpu) + "</h1>\n";
  o += "<p class=\"muted\">metric " + escape_xml(in.metric) + ", branch " + escape_xml(in.branch.empty() ? "all" : in.branch) +
       ", " + std::to_string(in.series->size()) + " case series, " + std::to_string(in.changes->size()) +
       " with change-points (E-Divisive means, p &lt;= 0.01, larger than the gate limit); baseline " +
       escape_xml(in.baseline_source.empty() ? "none found" : in.baseline_source) + "</p>\n";
  for (const auto& [fam, list] : families) {
    o += "<h2 id=\"" + escape_xml(fam) + "\">" + escape_xml(fam) + "</h2>\n";
    for (const Series* s : list) {
      o += "<h3>" + escape_xml(s->name) + (s->method.empty() ? "" : " (method " + escape_xml(s->method) + ")") + "</h3>\n";
      o += "<div class=\"chart\">" +
           trend_svg(*s, changes_of(*in.changes, *s), baseline_figure(in.baseline, *s), limit_of(*in.thresholds, s->name)) +
           "</div>\n";
    }
  }
  return o + "</body></html>\n";
}

std::string trend_markdown(const TrendInput& in) {
  std::string o = "# gpucheck history: " + in.gpu + "\n\nmetric " + in.metric + ", " + std::to_string(in.series->size()) +
                  " case series, " + std::to_string(in.changes->size()) + " with change-points\n";
  std::string fam;
  for (const Series& s : *in.series) {
    if (family_of(s.name) != fam) {
      fam = family_of(s.name);
      o += "\n## " + fam + "\n\n| case | runs | first | newest | baseline | change-points |\n|---|---:|---:|---:|---:|---|\n";
    }
    std::string cps;
    if (const CaseChanges* c = changes_of(*in.changes, s))
      for (const auto& ch : c->changes) cps += (cps.empty() ? "" : ", ") + ch.commit + " " + format_change(ch.at.change);
    const auto b = baseline_figure(in.baseline, s);
    o += "| " + escape_markdown_cell(s.name) + " | " + std::to_string(s.points.size()) + " | " +
         format_metric(s.metric, s.points.front().median) + " | " + format_metric(s.metric, s.points.back().median) + " | " +
         (b ? format_metric(s.metric, *b) : std::string("-")) + " | " + escape_markdown_cell(cps) + " |\n";
  }
  return o;
}

}  // namespace history
}  // namespace gpucheck::compare
