// Hardware comparison report: columns, ratios to the first column, paired speed-ups, and an
// HTML page that stands alone (no scripts, no network).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "gpucheck/compare/filesystem.hpp"
#include "gpucheck/compare/report.hpp"
#include "gpucheck/compare/results.hpp"

namespace gc = gpucheck::compare;

namespace {

std::vector<gc::Results> three() {
  std::vector<gc::Results> v;
  for (const char* f : {"report/h200-node-a.json", "report/h200-node-b.json", "report/a100-node-c.json"}) {
    auto r = gc::load_results(gc::RealFileSystem{}, std::string(GPUCHECK_COMPARE_FIXTURES) + "/" + f);
    if (!r) throw std::runtime_error(r.error().str());
    v.push_back(std::move(*r));
  }
  return v;
}

const gc::ReportRow* find_row(const gc::Report& r, const std::string& name) {
  for (const auto& f : r.families)
    for (const auto& row : f.rows)
      if (row.name == name) return &row;
  return nullptr;
}

}  // namespace

TEST(Report, ColumnsRatiosAndFamilies) {
  auto rep = gc::build_report(three(), {});
  ASSERT_TRUE(rep) << rep.error().str();
  ASSERT_EQ(rep->labels.size(), 3u);
  EXPECT_EQ(rep->labels[0], "NVIDIA H200 · node-a · 560.35.03");
  EXPECT_EQ(rep->families.front().family, "matmul");
  const auto* m = find_row(*rep, "matmul/cublaslt/bf16/8192x8192x8192");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->metric, "TFLOPS");
  ASSERT_TRUE(m->cells[2].speed);
  EXPECT_NEAR(*m->cells[2].speed, 0.4, 1e-9);  // the A100 at 40% of node-a
  const auto* l = find_row(*rep, "launch/graph/empty/100");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->metric, "us_per_launch");
  EXPECT_EQ(l->direction, gc::Direction::LowerIsBetter);
  EXPECT_NEAR(*l->cells[2].speed, 0.95, 1e-9);  // slower launches read as < 1
}

TEST(Report, PairedRatios) {
  auto rep = gc::build_report(three(), {});
  ASSERT_TRUE(rep);
  std::set<std::string> labels;
  for (const auto& f : rep->families)
    for (const auto& p : f.pairs) labels.insert(f.family + ":" + p.label);
  for (const char* want : {"conv:nhwc/nchw", "attention:fused/naive", "launch:graph/eager", "matmul:fp16/fp32",
                           "matmul:bf16/fp32", "pcie:pinned/pageable"})
    EXPECT_EQ(labels.count(want), 1u) << want;
  for (const auto& f : rep->families)
    for (const auto& p : f.pairs)
      if (p.label == "nhwc/nchw") {
        EXPECT_NEAR(*p.speedup[0], 330.0 / 210.0, 1e-9);
      }
}

TEST(Report, AttentionShowsFusionOverNaiveAndOursOverCudnn) {
  auto r = gc::parse_results(R"({"context": {"gpu_name": "NVIDIA H200"}, "benchmarks": [
      {"name": "attention/naive/fp16/b4h16s4096d128", "real_time": 3263, "time_unit": "us"},
      {"name": "attention/flash/fp16/b4h16s4096d128", "real_time": 841.7, "time_unit": "us"},
      {"name": "attention/cudnn/fp16/b4h16s4096d128", "real_time": 807.6, "time_unit": "us"}]})",
                             "attention.json");
  ASSERT_TRUE(r);
  auto rep = gc::build_report({*r}, {});
  ASSERT_TRUE(rep);
  std::map<std::string, double> ratio;
  for (const auto& f : rep->families)
    for (const auto& p : f.pairs)
      if (p.speedup.front()) ratio[p.label] = *p.speedup.front();
  ASSERT_EQ(ratio.size(), 3u);
  EXPECT_NEAR(ratio.at("flash/naive"), 3263 / 841.7, 1e-9);
  EXPECT_NEAR(ratio.at("cudnn/naive"), 3263 / 807.6, 1e-9);
  EXPECT_NEAR(ratio.at("flash/cudnn"), 807.6 / 841.7, 1e-9);  // ours 4% behind cuDNN here: < 1
}

TEST(Report, HtmlIsSelfContained) {
  auto rep = gc::build_report(three(), {});
  ASSERT_TRUE(rep);
  const std::string html = gc::render_report_html(*rep);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  // the only URL is the SVG namespace, which is a name, not a fetch
  std::size_t pos = 0, urls = 0, svgs = 0;
  while ((pos = html.find("http", pos)) != std::string::npos) {
    ++urls;
    EXPECT_EQ(html.compare(pos, 26, "http://www.w3.org/2000/svg"), 0);
    pos += 4;
  }
  pos = 0;
  while ((pos = html.find("<svg", pos)) != std::string::npos) ++svgs, pos += 4;
  EXPECT_EQ(urls, svgs);
  EXPECT_GE(svgs, 7u);  // one chart per family at least
  EXPECT_NE(html.find("NVIDIA A100-SXM4-80GB"), std::string::npos);
}

TEST(Report, MarkdownHasContextAndRatios) {
  auto rep = gc::build_report(three(), {});
  ASSERT_TRUE(rep);
  const std::string md = gc::render_report_markdown(*rep);
  EXPECT_NE(md.find("## Context"), std::string::npos);
  EXPECT_NE(md.find("| throttle reasons | none | sw\\_thermal | none |"), std::string::npos);
  EXPECT_NE(md.find("(0.40x)"), std::string::npos);
  EXPECT_NE(md.find("| nhwc/nchw |"), std::string::npos);
}
