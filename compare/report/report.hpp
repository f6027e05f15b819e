// The hardware comparison report: several result files side by side, one column each, rows
// grouped by family, ratios to the first column and within-family paired speed-ups.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/charts.hpp"
#include "rules/compare.hpp"
#include "results/results.hpp"

namespace gpucheck::compare {

struct ReportCell {
  std::optional<double> value;  // metric value (ns for real_time)
  std::optional<double> speed;  // relative to the first column, > 1 means faster/better
  std::string note;             // "errored: ...", "skipped: ...", "absent"
};

struct ReportRow {
  std::string name;
  std::string metric;  // the rate counter where the benchmark has one, else real_time
  std::string metric_note;  // why this counter, when it is not the family's usual one
  Direction direction = Direction::LowerIsBetter;
  std::vector<ReportCell> cells;  // one per column
};

// numerator over denominator, e.g. conv/nhwc/... against conv/nchw/...: speed-up from
// real_time (denominator time / numerator time), per column.
struct PairedRatio {
  std::string label;  // "nhwc/nchw"
  std::string numerator, denominator;
  std::vector<std::optional<double>> speedup;
};

struct ReportFamily {
  std::string family;
  std::vector<ReportRow> rows;
  std::vector<PairedRatio> pairs;
};

struct Report {
  std::vector<std::string> labels;   // per column: "GPU · host · driver"
  std::vector<std::string> sources;  // per column: path
  std::vector<std::pair<std::string, std::vector<std::string>>> context;  // label, values
  std::vector<ReportFamily> families;
};

struct ReportOptions {
  std::string metric;  // empty: each benchmark's own rate counter
};

// The segment pairs compared within a family, numerator first.
const std::vector<std::pair<std::string, std::string>>& paired_segments();

Expected<Report> build_report(const std::vector<Results>& inputs, const ReportOptions& options);
std::string render_report_markdown(const Report& r);
// One self-contained page: inline CSS and SVG, no scripts, no external resources.
std::string render_report_html(const Report& r);

}  // namespace gpucheck::compare
