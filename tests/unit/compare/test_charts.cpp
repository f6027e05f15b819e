// The SVG chart module (report/charts): ratios centred on 1.00x with a neutral band, a limit
// line, labels escaped and never clipped, and every chart self-contained (no script).
#include <gtest/gtest.h>

#include <string>

#include "report/charts.hpp"

namespace gc = gpucheck::compare;

namespace {
int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST(Charts, ToneIsNeutralInsideTheNoise) {
  EXPECT_EQ(gc::ratio_tone(0.985, 0.04), gc::Tone::Neutral);  // 1.5% slower, cv 2%: band 4%
  EXPECT_EQ(gc::ratio_tone(0.90, 0.04), gc::Tone::Worse);
  EXPECT_EQ(gc::ratio_tone(1.10, 0.04), gc::Tone::Better);
  EXPECT_EQ(gc::ratio_tone(1.0, 0.0), gc::Tone::Neutral);
}

TEST(Charts, RatioChartDrawsBandLimitAndEscapedLabels) {
  gc::RatioChart c;
  c.title = "matmul <ratio>";
  c.limit = 1.0 / 1.1;
  c.items.push_back({"a<b>&c", 0.985, 0.04, std::nullopt, "", "", "", "#x", {}});
  c.items.push_back({"slow", 0.8, 0.01, std::nullopt, "noisy", "", "", "", {}});
  c.items.push_back({"gone", std::nullopt, 0.0, std::nullopt, "", "absent", "", "", {}});
  const std::string s = gc::svg_ratio_chart(c);
  EXPECT_NE(s.find("a&lt;b&gt;&amp;c"), std::string::npos);
  EXPECT_EQ(s.find("a<b>"), std::string::npos);
  EXPECT_EQ(count(s, "class=\"band\""), 2);
  EXPECT_EQ(count(s, "<line x1") - count(s, "class=\"grid\"") - count(s, "class=\"one\"") -
                count(s, "class=\"axis\"/>"),
            1);  // the limit line
  EXPECT_NE(s.find("0.98x"), std::string::npos);
  EXPECT_NE(s.find("class=\"neutral\""), std::string::npos);
  EXPECT_NE(s.find("class=\"worse\""), std::string::npos);
  EXPECT_NE(s.find(">noisy<"), std::string::npos);
  EXPECT_NE(s.find(">absent<"), std::string::npos);
  EXPECT_NE(s.find("href=\"#x\""), std::string::npos);
  EXPECT_EQ(s.find("<script"), std::string::npos);
}

TEST(Charts, RowsWithTheirOwnLimitsGetATickEach) {
  // The gate's 5% where a case's noise allows it, 10% elsewhere: no one line fits both.
  gc::RatioChart c;
  c.limit_label = "gate limit";
  c.items.push_back({"quiet", 0.97, 0.01, std::nullopt, "", "", "", "", 1.0 / 1.05});
  c.items.push_back({"loud", 0.93, 0.03, std::nullopt, "", "", "", "", 1.0 / 1.10});
  c.items.push_back({"report-only", 1.2, 0.0, std::nullopt, "", "", "", "", std::nullopt});
  auto limit_lines = [](const std::string& svg) {
    return count(svg, "<line x1") - count(svg, "class=\"grid\"") - count(svg, "class=\"one\"") -
           count(svg, "class=\"axis\"/>");
  };
  std::string s = gc::svg_ratio_chart(c);
  EXPECT_EQ(limit_lines(s), 2);  // a tick on each row that has a limit
  EXPECT_NE(s.find(">gate limit: the tick on each row<"), std::string::npos);
  // Each tick at its row's own ratio (drawn in the row, over its bar): the 5% one right of the
  // 10% one.
  auto tick_x = [&](const std::string& row) {
    const auto at = s.find("<line x1=\"", s.find(">" + row + "<"));
    EXPECT_NE(at, std::string::npos);
    EXPECT_EQ(s.compare(s.find("class=", at), 13, "class=\"limit\""), 0);
    return std::stod(s.substr(at + 10));
  };
  EXPECT_GT(tick_x("quiet"), tick_x("loud"));
  // One shared limit: one line, no ticks (the rows' own limits are ignored then).
  c.limit = 1.0 / 1.1;
  s = gc::svg_ratio_chart(c);
  EXPECT_EQ(limit_lines(s), 1);
  EXPECT_EQ(s.find("the tick on each row"), std::string::npos);
}

TEST(Charts, TallChartsRepeatTheAxisAtTheTop) {
  gc::RatioChart c;
  for (int i = 0; i < 20; ++i) c.items.push_back({"case" + std::to_string(i), 1.0 + i * 0.01, 0.0, {}, "", "", "", "", {}});
  const std::string s = gc::svg_ratio_chart(c);
  EXPECT_EQ(count(s, "class=\"axis\">1.00x<"), 2);  // top and bottom
}

TEST(Charts, BarsLineAndHistogramRender) {
  gc::BarChart b;
  b.unit = "TFLOP/s";
  b.series = {"A", "B"};
  b.groups.push_back({"bf16/8192", {700.0, std::nullopt}, {}, {"", "absent"}});
  const std::string bs = gc::svg_bar_chart(b);
  EXPECT_NE(bs.find("TFLOP/s"), std::string::npos);
  EXPECT_NE(bs.find(">absent<"), std::string::npos);

  gc::LineChart l;
  l.series = {{"sm %", {{0, 10}, {1, 90}, {2, 95}}}, {"mem %", {{0, 5}, {1, 40}, {2, 42}}}};
  l.limit = 80;
  const std::string ls = gc::svg_line_chart(l);
  EXPECT_EQ(count(ls, "<polyline"), 2);
  EXPECT_NE(ls.find("class=\"limit\""), std::string::npos);

  gc::Histogram h;
  for (int i = 0; i < 100; ++i) h.values.push_back(10.0 + (i % 10));
  h.markers = {{"median", 14.5}};
  const std::string hs = gc::svg_histogram(h);
  EXPECT_EQ(count(hs, "class=\"hist\""), 10);
  EXPECT_NE(hs.find("median"), std::string::npos);
  EXPECT_EQ(gc::svg_histogram({}), "");
}

TEST(Charts, OneStyleBlockForEveryPage) {
  const std::string css = gc::chart_style_block();
  EXPECT_EQ(css.rfind("<style>", 0), 0u);
  EXPECT_NE(css.find("@page{size:A4"), std::string::npos);
  EXPECT_NE(css.find("rect.band"), std::string::npos);
}
