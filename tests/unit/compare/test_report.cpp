// Hardware comparison report: columns, ratios to the first column, paired speed-ups, and an
// HTML page that stands alone (no scripts, no network).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "base/filesystem.hpp"
#include "report/report.hpp"
#include "results/results.hpp"

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

TEST(Report, ChartLabelsAreNotClippedAndOneRankCollectivesShowAlgbw) {
  // "permute_bmm/fp16/b64m512n512k512" is digits and m's: 7 px a character (the old sizing)
  // left it 20 px short, and a reader saw "ermute_bmm".
  const std::string label = "permute_bmm/fp16/b64m512n512k512";
  EXPECT_GE(gc::text_width_px(label, 12.0), 0.6 * 12.0 * static_cast<double>(label.size()) + 10);
  EXPECT_GT(gc::text_width_px("mmmm", 12.0), gc::text_width_px("iiii", 12.0) * 3);
  auto r = gc::parse_results(R"({"context": {"gpu_name": "NVIDIA H200"}, "benchmarks": [
      {"name": "bmm/permute_bmm/fp16/b64m512n512k512", "real_time": 54, "time_unit": "us", "TFLOPS": 318},
      {"name": "nccl/allreduce/fp32/1MiB/g1", "real_time": 1.9, "time_unit": "us", "busbw_GBps": 0,
       "algbw_GBps": 538.4, "ranks": 1},
      {"name": "nccl/allreduce/fp32/1MiB/g2", "real_time": 15, "time_unit": "us", "busbw_GBps": 69.9,
       "algbw_GBps": 69.9, "ranks": 2}]})",
                             "r.json");
  ASSERT_TRUE(r);
  auto rep = gc::build_report({*r}, {});
  ASSERT_TRUE(rep);
  const auto* g1 = find_row(*rep, "nccl/allreduce/fp32/1MiB/g1");
  const auto* g2 = find_row(*rep, "nccl/allreduce/fp32/1MiB/g2");
  ASSERT_TRUE(g1 && g2);
  EXPECT_EQ(g1->metric, "algbw_GBps");
  EXPECT_EQ(g1->metric_note, "one rank: busbw is 0 by definition");
  EXPECT_EQ(g2->metric, "busbw_GBps");
  const std::string html = gc::render_report_html(*rep);
  // The label is drawn right-aligned at x: everything left of x must fit the label.
  const std::size_t at = html.find(">" + label + "</text>");
  ASSERT_NE(at, std::string::npos);
  const std::size_t x_at = html.rfind("<text x=\"", at);
  ASSERT_NE(x_at, std::string::npos);
  const double x = std::stod(html.substr(x_at + 9));
  EXPECT_GE(x, gc::text_width_px(label, 12.0));
  EXPECT_NE(gc::render_report_markdown(*rep).find("algbw\\_GBps (one rank: busbw is 0 by definition)"), std::string::npos);
}

TEST(Report, ColumnsOfOneMachineAreToldApartByFileThenDate) {
  auto doc = [](const char* date) {
    return std::string(R"({"context": {"gpu_name": "NVIDIA H200", "host_name": "n1", "driver_version": "580", "date": ")") +
           date + R"("}, "benchmarks": [{"name": "a/b", "real_time": 1, "time_unit": "us"}]})";
  };
  auto a = gc::parse_results(doc("2026-11-30T10:39:35+00:00"), "runs/monday/results.json");
  auto b = gc::parse_results(doc("2026-11-30T10:53:01+00:00"), "runs/tuesday/results.json");
  auto c = gc::parse_results(doc("2026-11-30T10:53:01+00:00"), "baseline.json");
  ASSERT_TRUE(a && b && c);
  auto rep = gc::build_report({*a, *b, *c}, {});
  ASSERT_TRUE(rep);
  ASSERT_EQ(rep->labels.size(), 3u);
  EXPECT_EQ(rep->labels[0], "NVIDIA H200 · n1 · 580 (results.json) (2026-11-30T10:39)");
  EXPECT_EQ(rep->labels[1], "NVIDIA H200 · n1 · 580 (results.json) (2026-11-30T10:53)");
  EXPECT_EQ(rep->labels[2], "NVIDIA H200 · n1 · 580 (baseline.json)");
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
