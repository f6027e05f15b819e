// SVG charts for the tool's HTML pages. Ratios are drawn on a log axis so 0.5x and 2x are the
// same distance from 1.00x; every axis is on round numbers; tall charts repeat their axis at
// the top so a reader never scrolls to read a row. Colours come from the style block's classes.
#include "report/charts.hpp"

#include <algorithm>
#include <cmath>

#include "base/format.hpp"

namespace gpucheck::compare {
namespace {

constexpr const char* kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                    "#56B4E9", "#D55E00", "#F0E442", "#000000"};
constexpr std::size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
constexpr int kTallRows = 12;  // from this many rows on, the axis is drawn at the top too

std::string num(double v) { return format_double("%.1f", v); }
std::string ix(int v) { return std::to_string(v); }

std::string svg_open(int width, int height, const std::string& title, const char* cls) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"gc-chart " + std::string(cls) + "\" role=\"img\" width=\"" +
         ix(width) + "\" height=\"" + ix(height) + "\" viewBox=\"0 0 " + ix(width) + " " + ix(height) +
         "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n<title>" + escape_xml(title) + "</title>\n";
}

std::string text(double x, double y, const std::string& s, const char* anchor, const char* cls) {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\" class=\"" + cls + "\">" +
         escape_xml(s) + "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, const char* cls) {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) + "\" class=\"" +
         cls + "\"/>\n";
}

// A round step (1, 2, 5 x 10^k) that cuts `range` into about `target` parts.
double nice_step(double range, int target) {
  if (!(range > 0)) return 1.0;
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * mag;
}

struct LinearAxis {
  double lo = 0, hi = 1, step = 1;
};
LinearAxis linear_axis(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + (lo == 0 ? 1.0 : std::fabs(lo) * 0.1);
  const double step = nice_step(hi - lo, target);
  return {std::floor(lo / step + 1e-9) * step, std::ceil(hi / step - 1e-9) * step, step};
}

std::string tick_text(double v, const std::string& unit) {
  std::string s = format_double("%.4g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return unit.empty() ? s : s + " " + unit;
}

std::string ratio_text(double r) { return format_double(r >= 9.995 ? "%.1f" : "%.2f", r) + "x"; }

}  // namespace

double text_width_px(std::string_view text, double font_px) {
  // Advance widths of DejaVu Sans (the page's first font; Arial is narrower) in em; a glyph
  // outside ASCII counts a full em. 5% spare: a label must never be clipped at the left.
  double em = 0.0;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
    if (c >= 0x80) em += 1.0;
    else if (c >= '0' && c <= '9') em += 0.636;
    else if (c == 'm') em += 0.974;
    else if (c == 'w') em += 0.818;
    else if (c == 'i' || c == 'j' || c == 'l') em += 0.278;
    else if (c == 'f' || c == 't' || c == 'r') em += 0.411;
    else if (c >= 'a' && c <= 'z') em += 0.635;
    else if (c == 'M' || c == 'W') em += 1.0;
    else if (c == 'I') em += 0.295;
    else if (c >= 'A' && c <= 'Z') em += 0.77;
    else if (c == '/' || c == '.' || c == ':' || c == ' ' || c == '-') em += 0.361;
    else if (c == '_') em += 0.5;
    else em += 0.838;  // = % # and the rest: the widest common ones
  }
  return em * font_px * 1.05;
}

std::string_view chart_style_css() {
  return R"(body{font-family:"DejaVu Sans",Arial,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px;margin:0 0 8px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:13px}
th,td{border:1px solid #d0d0d0;padding:3px 8px;text-align:right;white-space:nowrap}
th{background:#f2f2f2} td.name,th.name{text-align:left;font-family:"DejaVu Sans Mono",monospace}
td.text,th.text{text-align:left} td.wrap{text-align:left;white-space:normal;min-width:22em;max-width:44em}
td.note{color:#999;text-align:left} .better{color:#087f23} .worse{color:#b00020} .neutral{color:#555}
.muted{color:#666;font-size:13px} .chart{margin:6px 0 4px;overflow-x:auto}
.headline{font-size:16px;margin:10px 0} .headline b{font-size:18px}
.legend span{display:inline-block;margin-right:18px;font-size:13px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px}
nav.toc{font-size:13px;margin:8px 0 16px} nav.toc a{margin-right:14px}
a{color:#0b5cad;text-decoration:none} a:hover{text-decoration:underline}
details summary{cursor:pointer;color:#444;font-size:13px}
.tag{display:inline-block;font-size:11px;padding:0 5px;border-radius:3px;background:#eee;color:#555;margin-left:4px}
svg.gc-chart text{fill:#222} svg.gc-chart text.axis{fill:#555;font-size:11px} svg.gc-chart text.muted{fill:#999;font-size:11px}
svg.gc-chart text.better{fill:#087f23} svg.gc-chart text.worse{fill:#b00020} svg.gc-chart text.neutral{fill:#555}
svg.gc-chart text.mark{fill:#8a6d00;font-size:11px} svg.gc-chart text.limit{fill:#b00020;font-size:11px}
svg.gc-chart line.grid{stroke:#e4e4e4} svg.gc-chart line.axis{stroke:#999} svg.gc-chart line.one{stroke:#555}
svg.gc-chart line.limit{stroke:#b00020;stroke-dasharray:5 3} svg.gc-chart line.marker{stroke:#555;stroke-dasharray:3 3}
svg.gc-chart rect.band{fill:#e9e9e9} svg.gc-chart rect.better{fill:#2e9b4a} svg.gc-chart rect.worse{fill:#c8374b}
svg.gc-chart rect.neutral{fill:#9a9a9a} svg.gc-chart rect.muted{fill:#d0d0d0} svg.gc-chart rect.hist{fill:#0072B2}
svg.gc-chart polyline{fill:none;stroke-width:1.6}
@media print{@page{size:A4;margin:12mm} body{margin:0;max-width:none;font-size:11px} .chart{overflow:visible}
svg.gc-chart{max-width:100%;height:auto} h2{break-after:avoid} tr,svg{break-inside:avoid} nav.toc a{color:#222}}
)";
}

std::string chart_style_block() { return "<style>\n" + std::string(chart_style_css()) + "</style>\n"; }

std::string_view series_colour(std::size_t i) { return kPalette[i % kPaletteSize]; }

std::string_view tone_class(Tone t) {
  switch (t) {
    case Tone::Better: return "better";
    case Tone::Worse: return "worse";
    case Tone::Muted: return "muted";
    case Tone::Neutral: break;
  }
  return "neutral";
}

Tone ratio_tone(double ratio, double noise) {
  if (ratio > 1.0 + noise) return Tone::Better;
  if (ratio < 1.0 - noise) return Tone::Worse;
  return Tone::Neutral;
}

std::string svg_ratio_chart(const RatioChart& c) {
  if (c.items.empty()) return "";
  constexpr int kRow = 17;
  constexpr int kValueW = 170;
  double widest = 0.0;
  double span = std::log(1.05);  // at least +-5%: small differences get room to show
  for (const auto& it : c.items) {
    widest = std::max(widest, text_width_px(it.label, 12.0));
    if (it.ratio && *it.ratio > 0) span = std::max(span, std::fabs(std::log(*it.ratio)));
    span = std::max(span, std::log(1.0 + std::min(it.noise, 1.0)));
  }
  if (c.limit && *c.limit > 0) span = std::max(span, std::fabs(std::log(*c.limit)));
  bool row_limits = false;
  for (const auto& it : c.items)
    if (it.limit && *it.limit > 0) {
      span = std::max(span, std::fabs(std::log(*it.limit)));
      row_limits = true;
    }
  span = std::min(span * 1.08, std::log(c.max_span));
  const int label_w = static_cast<int>(std::ceil(widest)) + 14;
  const int plot_w = std::max(200, c.width - label_w - kValueW);
  const bool tall = static_cast<int>(c.items.size()) >= kTallRows;
  const int top = tall ? 30 : 16;
  const int height = top + static_cast<int>(c.items.size()) * kRow + 26;
  const double x0 = label_w, x1 = label_w + plot_w;
  auto xr = [&](double r) {
    const double l = std::clamp(std::log(r), -span, span);
    return x0 + (l + span) / (2 * span) * plot_w;
  };
  std::string s = svg_open(c.width, height, c.title, "ratio");
  // Ticks at ratios people quote; those that fit the span, thinned so labels do not collide.
  static const double kTicks[] = {0.25, 0.33, 0.5, 0.67, 0.8, 0.9, 0.95, 0.98, 0.99, 1.0,
                                  1.01, 1.02, 1.05, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0};
  std::vector<double> ticks;
  double last_x = -1e9;
  for (const double t : kTicks) {
    if (std::fabs(std::log(t)) > span + 1e-9) continue;
    const double x = xr(t);
    if (t != 1.0 && (x - last_x < 44 || std::fabs(x - xr(1.0)) < 44)) continue;
    ticks.push_back(t);
    last_x = x;
  }
  const double y_first = top, y_last = top + static_cast<double>(c.items.size()) * kRow;
  for (const double t : ticks) {
    s += line(xr(t), y_first - 2, xr(t), y_last + 2, t == 1.0 ? "one" : "grid");
    s += text(xr(t), y_last + 16, ratio_text(t), "middle", "axis");
    if (tall) s += text(xr(t), top - 6, ratio_text(t), "middle", "axis");
  }
  if (c.limit && *c.limit > 0) {
    s += line(xr(*c.limit), y_first - (tall ? 14 : 10), xr(*c.limit), y_last + 2, "limit");
    s += text(xr(*c.limit) + 3, y_first - (tall ? 16 : 4), c.limit_label + " " + ratio_text(*c.limit), "start", "limit");
  } else if (row_limits) {  // each row's own: a tick on its row, one caption at the top
    s += text(x0, y_first - (tall ? 16 : 4), c.limit_label + ": the tick on each row", "start", "limit");
  }
  for (std::size_t i = 0; i < c.items.size(); ++i) {
    const RatioItem& it = c.items[i];
    const double y = top + static_cast<double>(i) * kRow;
    s += "<g>";
    if (!it.tooltip.empty()) s += "<title>" + escape_xml(it.tooltip) + "</title>";
    const std::string label = text(x0 - 8, y + 12.5, it.label, "end", "label");
    s += it.href.empty() ? label : "<a href=\"" + escape_xml(it.href) + "\">" + label + "</a>";
    if (it.noise > 0) {
      const double lo = xr(std::max(1e-9, 1.0 - it.noise)), hi = xr(1.0 + it.noise);
      s += "<rect class=\"band\" x=\"" + num(lo) + "\" y=\"" + num(y + 2) + "\" width=\"" + num(hi - lo) +
           "\" height=\"" + ix(kRow - 4) + "\"/>";
    }
    if (it.ratio && *it.ratio > 0) {
      const Tone tone = it.tone.value_or(ratio_tone(*it.ratio, it.noise));
      const double xa = xr(1.0), xb = xr(*it.ratio);
      s += "<rect class=\"" + std::string(tone_class(tone)) + "\" x=\"" + num(std::min(xa, xb)) + "\" y=\"" +
           num(y + 4) + "\" width=\"" + num(std::max(1.5, std::fabs(xb - xa))) + "\" height=\"" + ix(kRow - 8) + "\"/>";
      const bool clipped = std::fabs(std::log(*it.ratio)) > span;
      // A change outside the noise that rounds to 1.00x gets a third decimal: red "1.00x" reads as a bug.
      std::string v = ratio_text(*it.ratio);
      if (v == "1.00x" && tone != Tone::Neutral) v = format_double("%.3f", *it.ratio) + "x";
      v += clipped ? (*it.ratio > 1 ? " ▶" : " ◀") : "";
      s += text(x1 + 8, y + 12.5, v, "start", tone_class(tone).data());
      if (!it.mark.empty()) s += text(x1 + 58, y + 12.5, it.mark, "start", "mark");
    } else {
      s += text(x1 + 8, y + 12.5, it.note.empty() ? "n/a" : it.note, "start", "muted");
    }
    if (!(c.limit && *c.limit > 0) && it.limit && *it.limit > 0)  // on top of the bar
      s += line(xr(*it.limit), y + 1, xr(*it.limit), y + kRow - 1, "limit");
    s += "</g>\n";
  }
  s += line(x0, y_last + 2, x1, y_last + 2, "axis");
  return s + "</svg>\n";
}

std::string svg_bar_chart(const BarChart& c) {
  if (c.groups.empty()) return "";
  constexpr int kBar = 13, kGap = 9, kValueW = 110;
  const std::size_t nser = std::max<std::size_t>(1, c.series.size());
  double widest = 0.0, vmax = 0.0;
  for (const auto& g : c.groups) {
    widest = std::max(widest, text_width_px(g.label, 12.0));
    for (const auto& v : g.values)
      if (v) vmax = std::max(vmax, *v);
  }
  if (!(vmax > 0)) return "";
  const LinearAxis ax = linear_axis(0.0, vmax, 5);
  const int label_w = static_cast<int>(std::ceil(widest)) + 14;
  const int plot_w = std::max(200, c.width - label_w - kValueW);
  const int group_h = static_cast<int>(nser) * kBar + kGap;
  const bool tall = static_cast<int>(c.groups.size() * nser) >= kTallRows * 2;
  const int top = tall ? 22 : 8;
  const int height = top + static_cast<int>(c.groups.size()) * group_h + 22;
  const double y_last = top + static_cast<double>(c.groups.size()) * group_h - kGap / 2.0;
  auto xv = [&](double v) { return label_w + v / ax.hi * plot_w; };
  std::string s = svg_open(c.width, height, c.title, "bars");
  for (double t = 0.0; t <= ax.hi + ax.step * 1e-6; t += ax.step) {
    s += line(xv(t), top - 3, xv(t), y_last, t == 0.0 ? "axis" : "grid");
    s += text(xv(t), y_last + 15, tick_text(t, c.unit), "middle", "axis");
    if (tall) s += text(xv(t), top - 7, tick_text(t, c.unit), "middle", "axis");
  }
  for (std::size_t gi = 0; gi < c.groups.size(); ++gi) {
    const BarGroup& g = c.groups[gi];
    const double y0 = top + static_cast<double>(gi) * group_h;
    s += text(label_w - 8, y0 + static_cast<double>(nser * kBar) / 2.0 + 4, g.label, "end", "label");
    for (std::size_t k = 0; k < nser && k < g.values.size(); ++k) {
      const double y = y0 + static_cast<double>(k) * kBar;
      const std::string series = k < c.series.size() ? c.series[k] + ": " : "";
      if (!g.values[k]) {
        const std::string note = k < g.notes.size() && !g.notes[k].empty() ? g.notes[k] : "n/a";
        s += text(label_w + 4, y + kBar - 3, note.substr(0, 60), "start", "muted");
        continue;
      }
      const std::string t =
          k < g.texts.size() && !g.texts[k].empty() ? g.texts[k] : tick_text(*g.values[k], c.unit);
      const double w = std::max(1.0, *g.values[k] / ax.hi * plot_w);
      s += "<rect x=\"" + ix(label_w) + "\" y=\"" + num(y + 1) + "\" width=\"" + num(w) + "\" height=\"" + ix(kBar - 2) +
           "\" fill=\"" + std::string(series_colour(k)) + "\"><title>" + escape_xml(series + t) + "</title></rect>\n";
      s += "<text x=\"" + num(label_w + w + 4) + "\" y=\"" + num(y + kBar - 3) + "\" class=\"axis\">" + escape_xml(t) +
           "</text>\n";
    }
  }
  return s + "</svg>\n";
}

std::string svg_line_chart(const LineChart& c) {
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const auto& se : c.series)
    for (const auto& [x, y] : se.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      xmin = std::min(xmin, x), xmax = std::max(xmax, x), ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    }
  if (!std::isfinite(xmin)) return "";
  if (c.limit) ymin = std::min(ymin, *c.limit), ymax = std::max(ymax, *c.limit);
  if (ymin >= 0) ymin = 0;
  const LinearAxis ay = linear_axis(c.y_min.value_or(ymin), c.y_max.value_or(ymax), 4);
  const LinearAxis ax = linear_axis(xmin, xmax, 8);
  const double left = std::max(48.0, text_width_px(tick_text(ay.hi, ""), 11.0) + 14), right = c.width - 16.0;
  const double top = c.series.size() > 1 || c.limit ? 26.0 : 12.0, bottom = c.height - 34.0;
  auto px = [&](double x) { return left + (x - ax.lo) / (ax.hi - ax.lo) * (right - left); };
  auto py = [&](double y) { return bottom - (std::clamp(y, ay.lo, ay.hi) - ay.lo) / (ay.hi - ay.lo) * (bottom - top); };
  std::string s = svg_open(c.width, c.height, c.title, "line");
  for (double t = ay.lo; t <= ay.hi + ay.step * 1e-6; t += ay.step) {
    s += line(left, py(t), right, py(t), "grid");
    s += text(left - 6, py(t) + 4, tick_text(t, ""), "end", "axis");
  }
  for (double t = ax.lo; t <= ax.hi + ax.step * 1e-6; t += ax.step)
    s += text(px(t), bottom + 15, tick_text(t, ""), "middle", "axis");
  s += line(left, bottom, right, bottom, "axis");
  if (!c.x_label.empty()) s += text((left + right) / 2, c.height - 4.0, c.x_label, "middle", "axis");
  if (!c.y_label.empty()) s += text(left, 11, c.y_label, "start", "axis");
  double legend_x = right;
  for (std::size_t i = c.series.size(); i-- > 0;) {
    const auto& se = c.series[i];
    legend_x -= text_width_px(se.name, 11.0) + 34;
    s += "<line x1=\"" + num(legend_x) + "\" y1=\"8\" x2=\"" + num(legend_x + 18) + "\" y2=\"8\" stroke=\"" +
         std::string(series_colour(i)) + "\" stroke-width=\"2\"" + (i ? " stroke-dasharray=\"5 3\"" : "") + "/>\n";
    s += text(legend_x + 22, 12, se.name, "start", "axis");
    std::string pts;
    for (const auto& [x, y] : se.points)
      if (std::isfinite(x) && std::isfinite(y)) pts += num(px(x)) + "," + num(py(y)) + " ";
    s += "<polyline stroke=\"" + std::string(series_colour(i)) + "\"" + (i ? " stroke-dasharray=\"5 3\"" : "") +
         " points=\"" + pts + "\"><title>" + escape_xml(se.name) + "</title></polyline>\n";
  }
  if (c.limit) {
    s += line(left, py(*c.limit), right, py(*c.limit), "limit");
    s += text(left + 4, py(*c.limit) - 4, c.limit_label + " " + tick_text(*c.limit, ""), "start", "limit");
  }
  return s + "</svg>\n";
}

std::string svg_histogram(const Histogram& c) {
  std::vector<double> v;
  for (const double x : c.values)
    if (std::isfinite(x)) v.push_back(x);
  if (v.empty()) return "";
  const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  const int nb = c.bins > 0 ? c.bins : std::clamp(static_cast<int>(std::ceil(std::sqrt(v.size()))), 5, 40);
  const double lo = *mn, width_x = *mx > *mn ? (*mx - *mn) : std::max(1e-12, std::fabs(*mn) * 0.01 + 1e-12);
  std::vector<int> counts(static_cast<std::size_t>(nb), 0);
  for (const double x : v)
    ++counts[static_cast<std::size_t>(std::clamp(static_cast<int>((x - lo) / width_x * nb), 0, nb - 1))];
  const int cmax = *std::max_element(counts.begin(), counts.end());
  const LinearAxis ay = linear_axis(0.0, cmax, 4);
  const LinearAxis ax = linear_axis(lo, lo + width_x, 8);
  const double left = std::max(44.0, text_width_px(tick_text(ay.hi, ""), 11.0) + 14), right = c.width - 16.0;
  const double top = c.markers.empty() ? 12.0 : 24.0, bottom = c.height - 34.0;
  auto px = [&](double x) { return left + (x - ax.lo) / (ax.hi - ax.lo) * (right - left); };
  auto py = [&](double y) { return bottom - y / ay.hi * (bottom - top); };
  std::string s = svg_open(c.width, c.height, c.title, "hist");
  for (double t = 0; t <= ay.hi + ay.step * 1e-6; t += ay.step) {
    s += line(left, py(t), right, py(t), "grid");
    s += text(left - 6, py(t) + 4, tick_text(t, ""), "end", "axis");
  }
  for (int b = 0; b < nb; ++b) {
    const double xa = px(lo + width_x * b / nb), xb = px(lo + width_x * (b + 1) / nb);
    const auto n = counts[static_cast<std::size_t>(b)];
    s += "<rect class=\"hist\" x=\"" + num(xa + 0.5) + "\" y=\"" + num(py(n)) + "\" width=\"" +
         num(std::max(0.5, xb - xa - 1)) + "\" height=\"" + num(bottom - py(n)) + "\"><title>" +
         escape_xml(tick_text(lo + width_x * b / nb, "") + " to " + tick_text(lo + width_x * (b + 1) / nb, "") + ": " +
                    std::to_string(n)) +
         "</title></rect>\n";
  }
  for (double t = ax.lo; t <= ax.hi + ax.step * 1e-6; t += ax.step)
    s += text(px(t), bottom + 15, tick_text(t, ""), "middle", "axis");
  s += line(left, bottom, right, bottom, "axis");
  if (!c.x_label.empty()) s += text((left + right) / 2, c.height - 4.0, c.x_label, "middle", "axis");
  for (const auto& m : c.markers) {
    s += line(px(m.x), top - 4, px(m.x), bottom, "marker");
    s += text(px(m.x) + 3, top - 8, m.label + " " + tick_text(m.x, ""), "start", "axis");
  }
  return s + "</svg>\n";
}

}  // namespace gpucheck::compare
