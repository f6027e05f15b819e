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
  c.items.push_back({"a<b>&c", 0.985, 0.04, std::nullopt, "", "", "", "#x"});
  c.items.push_back({"slow", 0.8, 0.01, std::nullopt, "noisy", "", "", ""});
  c.items.push_back({"gone", std::nullopt, 0.0, std::nullopt, "", "absent", "", ""});
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

TEST(Charts, TallChartsRepeatTheAxisAtTheTop) {
  gc::RatioChart c;
  for (int i = 0; i < 20; ++i) c.items.push_back({"case" + std::to_string(i), 1.0 + i * 0.01, 0.0, {}, "", "", "", ""});
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
