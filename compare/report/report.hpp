// The hardware comparison report: several result files side by side, one column per run of one
// GPU (files of one run merged), rows grouped by family, ratios to the first column with their
// noise, a summary (headline, per-family geomeans, largest wins and losses), percent of the
// SKU's datasheet figure, and within-family paired speed-ups.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/core/specs.hpp"
#include "report/charts.hpp"
#include "rules/compare.hpp"
#include "rules/thresholds.hpp"
#include "results/results.hpp"

namespace gpucheck::compare {

struct ReportCell {
  std::optional<double> value;  // metric value (ns for real_time)
  std::optional<double> speed;  // relative to the first column, > 1 means faster/better
  std::string note;             // "errored: ...", "skipped: ...", "absent"
  std::optional<double> cv;     // the figure's spread, a fraction (repetitions, else cv_pct)
  double band = 0.0;            // neutral band of `speed`: 2 x the larger cv of this cell and the first's
  std::optional<double> pct_of_spec;  // percent of the column's SKU datasheet figure
  bool absent = false;          // the column has no such benchmark at all
};

struct ReportRow {
  std::string name;
  std::string metric;  // the rate counter where the benchmark has one, else real_time
  std::string metric_note;  // why this counter, when it is not the family's usual one
  Direction direction = Direction::LowerIsBetter;
  std::vector<ReportCell> cells;  // one per column
  std::string unit;               // as people write it: "TFLOP/s", "GB/s", "µs", "" for time
  double limit_pct = 10.0;        // the gate's limit for this case (thresholds)
  bool report_only = false;       // listed report-only in the thresholds: shown, never gated
  bool noisy = false;             // a column's cv exceeds the limit: a change is not measurable
  bool partial = false;           // absent from some column: counted, not charted
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

// Geomean of a family's ratios per column, over the cases that have a ratio there.
struct FamilySummary {
  std::string family;
  std::vector<std::optional<double>> geomean;  // per column (the first is 1.00 by definition)
  std::vector<int> cases;                      // per column: cases in the geomean
};

// One of the largest changes of a column against the first.
struct CaseChange {
  std::string name;
  double ratio = 1.0;
  double band = 0.0;
  bool report_only = false, noisy = false;
};

struct ColumnSummary {
  std::optional<double> geomean;  // over every case with a ratio
  int cases = 0;
  std::vector<CaseChange> wins, losses;  // top five each, largest first
};

struct ReportSummary {
  std::vector<FamilySummary> families;
  std::vector<ColumnSummary> columns;  // per column
  std::vector<std::string> partial;    // cases not in every column (counted, not charted)
};

struct Report {
  std::vector<std::string> labels;   // per column: "GPU · host · driver", or --columns
  std::vector<std::string> sources;  // per column: its files, joined by " + "
  std::vector<int> files;            // per column: how many files were merged into it
  std::vector<std::string> skus;     // per column: the datasheet's SKU name, "" when unknown
  std::vector<std::pair<std::string, std::vector<std::string>>> context;  // label, values
  std::vector<ReportFamily> families;
  ReportSummary summary;
  std::string thresholds_source;     // where the limits and report-only list came from
  std::string specs_source;          // where the datasheet figures came from
};

struct ReportOptions {
  std::string metric;  // empty: each benchmark's own rate counter
  std::vector<std::string> columns;  // names of the columns (after merging), empty: from the context
  bool only_common = false;          // drop cases that are not in every column
  bool merge_runs = true;            // files of one run of one GPU become one column
  std::optional<Thresholds> thresholds;  // limits and the report-only list
  const SpecDb* specs = nullptr;         // datasheet figures, for percent of spec
};

// Files of one run of one GPU (same UUID, driver, library versions, suite and commit, and no
// benchmark in two of them) as one Results each, in first-seen order; anything else stays apart.
std::vector<Results> merge_runs(const std::vector<Results>& inputs);

// The segment pairs compared within a family, numerator first.
const std::vector<std::pair<std::string, std::string>>& paired_segments();

Expected<Report> build_report(const std::vector<Results>& inputs, const ReportOptions& options);
std::string render_report_markdown(const Report& r);
// The same comparison for other tools: one object per case and column (docs/COMPARE.md).
std::string render_report_json(const Report& r);
std::string render_report_csv(const Report& r);
// One self-contained page: inline CSS and SVG, no scripts, no external resources.
std::string render_report_html(const Report& r);

}  // namespace gpucheck::compare
