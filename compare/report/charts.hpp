// SVG charts for the tool's HTML pages (the hardware comparison report, gpucheck watch's page):
// pure functions from plain data to an inline <svg> element, no scripts, no external resources,
// styled by the one style block below so every page reads alike on screen and on A4 paper.
// Nothing here knows about results files: callers hand in numbers, labels and tones.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpucheck::compare {

// Width in pixels a chart label needs at `font_px` (DejaVu Sans advances, rounded up): a
// chart's label column is sized from it, so no row name is clipped at the left.
double text_width_px(std::string_view text, double font_px);

// The page's CSS (no <style> tags): body, headings, tables, the TOC, the chart classes below,
// and print rules for A4. One block, shared by every page that draws these charts.
std::string_view chart_style_css();
// chart_style_css() inside <style>...</style>, ready for <head>.
std::string chart_style_block();

// Colour of series i (Okabe-Ito, distinguishable by colour-blind readers too).
std::string_view series_colour(std::size_t i);

// What a mark's colour says. Neutral: inside the measured noise; Better/Worse: outside it.
enum class Tone { Neutral, Better, Worse, Muted };
std::string_view tone_class(Tone t);  // "neutral", "better", "worse", "muted" (CSS classes)
// Better above 1 + noise, Worse below 1 - noise, Neutral between (noise as a fraction).
Tone ratio_tone(double ratio, double noise);

// ---- ratio chart: one row per case, its ratio on a log axis centred on 1.00x -------------------
struct RatioItem {
  std::string label;             // drawn left of the row (not wrapped; the column fits it)
  std::optional<double> ratio;   // > 1 is better; absent: "n/a" (or `note`)
  double noise = 0.0;            // half-width of the neutral band, a fraction (0.04 = +-4%)
  std::optional<Tone> tone;      // default: ratio_tone(ratio, noise)
  std::string mark;              // shown after the value: "report-only", "noisy", ...
  std::string note;              // shown instead of the value when ratio is absent
  std::string tooltip;           // <title> of the row
  std::string href;              // optional link target of the label ("#case-..." or a URL)
  std::optional<double> limit;   // this row's own limit (a tick), where the rows' limits differ
};
struct RatioChart {
  std::string title;                 // <title> of the svg (screen readers, hover)
  std::vector<RatioItem> items;
  std::optional<double> limit;       // a line at this ratio (e.g. the gate's 1/1.10 = 0.909x)
  std::string limit_label = "limit"; // written beside the line (or, rows' own limits: the ticks) at the top
  int width = 1000;                  // total, px
  double max_span = 4.0;             // the axis never reaches past [1/max_span, max_span]
};
std::string svg_ratio_chart(const RatioChart& c);

// ---- horizontal bars: groups of one bar per series, on a linear axis from 0 ------------------
struct BarGroup {
  std::string label;
  std::vector<std::optional<double>> values;  // one per series; absent: `notes[i]` or "n/a"
  std::vector<std::string> texts;             // optional: the text beside each bar (default %.4g)
  std::vector<std::string> notes;             // optional: shown where a value is absent
};
struct BarChart {
  std::string title;
  std::string unit;                  // appended to tick labels ("TFLOP/s", "GB/s", "µs")
  std::vector<std::string> series;   // legend names, colours series_colour(i)
  std::vector<BarGroup> groups;
  int width = 1000;
};
std::string svg_bar_chart(const BarChart& c);

// ---- line chart: one or two series over a numeric x axis, an optional limit line ------------
struct LineSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};
struct LineChart {
  std::string title;
  std::string x_label, y_label;
  std::vector<LineSeries> series;    // one or two; a second one is dashed
  std::optional<double> limit;       // horizontal line at this y
  std::string limit_label = "limit";
  std::optional<double> y_min, y_max;  // default: from the data (y_min 0 when all y >= 0)
  int width = 1000, height = 260;
};
std::string svg_line_chart(const LineChart& c);

// ---- histogram of a sample, with optional marker lines (median, p99, ...) -------------------
struct HistogramMarker {
  std::string label;
  double x = 0.0;
};
struct Histogram {
  std::string title;
  std::string x_label;               // with its unit
  std::vector<double> values;
  int bins = 0;                      // 0: sqrt(n), between 5 and 40
  std::vector<HistogramMarker> markers;
  int width = 1000, height = 220;
};
std::string svg_histogram(const Histogram& c);

}  // namespace gpucheck::compare
