// Hardware comparison report: columns, ratios to the first column, paired speed-ups, and an
// HTML page that stands alone (no scripts, no network).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <set>
#include <string>

#include "../test_util.hpp"
#include "base/filesystem.hpp"
#include "cli/cli.hpp"
#include "fake_fs.hpp"
#include "report/report.hpp"
#include "results/results.hpp"

namespace gc = gpucheck::compare;

namespace {

std::vector<gc::Results> three() {
  std::vector<gc::Results> v;
  for (const char* f : {"report/h200-node-a.json", "report/h200-node-b.json", "report/a100-node-c.json"}) {
    auto r = gc::load_results(gc::RealFileSystem{}, gpucheck::testutil::fixture(f));
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
  const std::string md = gc::render_report_markdown(*rep);
  EXPECT_NE(md.find("| algbw GB/s |"), std::string::npos);
  EXPECT_NE(md.find("one rank: busbw is 0 by definition |"), std::string::npos);
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
  EXPECT_NE(md.find("### Machines"), std::string::npos);
  EXPECT_NE(md.find("| throttle reasons | none | sw\\_thermal | none |"), std::string::npos);
  EXPECT_NE(md.find("(0.40x ▼)"), std::string::npos);
  EXPECT_NE(md.find("| nhwc/nchw |"), std::string::npos);
}

namespace {

// A results file of one GPU: `cases` as name -> (real_time us, cv_pct), context from `driver`
// and `uuid`.
gc::Results crafted(const std::vector<std::tuple<std::string, double, double>>& cases, const std::string& source,
                    const std::string& driver = "580.1", const std::string& uuid = "GPU-aaaa") {
  std::string j = R"({"context": {"gpu_name": "NVIDIA H200", "host_name": "n1", "gpu_uuid": ")" + uuid +
                  R"(", "driver_version": ")" + driver + R"(", "gpucheck_suite": "quick", "gpucheck_commit": "abc"}, "benchmarks": [)";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& [name, us, cv] = cases[i];
    if (i > 0) j += ',';
    j += R"({"name": ")" + name + R"(", "real_time": )" + std::to_string(us) + R"(, "time_unit": "us", "cv_pct": )" +
         std::to_string(cv) + "}";
  }
  auto r = gc::parse_results(j + "]}", source);
  if (!r) throw std::runtime_error(r.error().str());
  return std::move(*r);
}

const gc::FamilySummary* family(const gc::Report& r, const std::string& f) {
  for (const auto& s : r.summary.families)
    if (s.family == f) return &s;
  return nullptr;
}

}  // namespace

// Must show: B 10% slower on every matmul case, equal elsewhere.
TEST(ReportSummary, MatmulTenPercentSlowerReadsAsPointNineOne) {
  std::vector<std::tuple<std::string, double, double>> a, b;
  for (const char* n : {"matmul/cublaslt/bf16/8192", "matmul/cublaslt/fp16/8192", "matmul/cublaslt/fp32/8192"})
    a.emplace_back(n, 100.0, 0.5), b.emplace_back(n, 110.0, 0.5);
  for (const char* n : {"memory/copy/u8/2GiB", "launch/eager/empty/100", "launch/graph/empty/100", "pcie/h2d/pinned/256MiB"})
    a.emplace_back(n, 50.0, 0.5), b.emplace_back(n, 50.0, 0.5);
  b.emplace_back("conv/nhwc/fp16/only_in_b", 10.0, 0.5);
  auto rep = gc::build_report({crafted(a, "a.json", "580.1"), crafted(b, "b.json", "580.2")}, {});
  ASSERT_TRUE(rep) << rep.error().str();
  ASSERT_EQ(rep->labels.size(), 2u);
  const auto* m = family(*rep, "matmul");
  ASSERT_TRUE(m && m->geomean[1]);
  EXPECT_NEAR(*m->geomean[1], 1.0 / 1.1, 1e-9);
  EXPECT_EQ(m->cases[1], 3);
  for (const char* f : {"memory", "launch", "pcie"}) EXPECT_NEAR(*family(*rep, f)->geomean[1], 1.0, 1e-12) << f;
  const auto& col = rep->summary.columns[1];
  ASSERT_TRUE(col.geomean);
  EXPECT_NEAR(*col.geomean, std::pow(1.0 / 1.1, 3.0 / 7.0), 1e-9);  // every case in both columns
  EXPECT_EQ(col.cases, 7);
  ASSERT_EQ(col.losses.size(), 3u);
  for (const auto& l : col.losses) EXPECT_EQ(l.name.rfind("matmul/", 0), 0u) << l.name;
  EXPECT_TRUE(col.wins.empty());
  // The case in only one column: counted, not charted.
  ASSERT_EQ(rep->summary.partial.size(), 1u);
  EXPECT_EQ(rep->summary.partial.front(), "conv/nhwc/fp16/only_in_b");
  const std::string md = gc::render_report_markdown(*rep);
  EXPECT_NE(md.find("is 0.96x "), std::string::npos);  // the headline's overall geomean
  EXPECT_NE(md.find("matmul 0.91x, the rest 1.00x"), std::string::npos);
  EXPECT_NE(md.find("Cases in only some columns: 1"), std::string::npos);
  const std::string html = gc::render_report_html(*rep);
  EXPECT_EQ(html.find(">nhwc/fp16/only_in_b</text>"), std::string::npos);  // in no chart
  EXPECT_NE(html.find("id=\"matmul\""), std::string::npos);
  EXPECT_NE(html.find("href=\"#matmul\""), std::string::npos);
}

TEST(ReportSummary, AFamilyWhoseCasesHaveTwoLimitsShowsEachCasesTick) {
  // The gate's 5% where a case's noise allows it, 10% for the rest: the chart marks each row's
  // own limit instead of drawing no limit at all.
  std::vector<std::tuple<std::string, double, double>> a, b;
  for (const char* n : {"matmul/cublaslt/bf16/8192", "matmul/cublaslt/fp16/8192"})
    a.emplace_back(n, 100.0, 0.5), b.emplace_back(n, 95.0, 0.5);
  auto t = gc::parse_thresholds(R"({"default_pct": 10, "overrides": [{"glob": "matmul/cublaslt/bf16/*", "pct": 5}]})",
                                "thresholds.json");
  ASSERT_TRUE(t) << t.error().str();
  gc::ReportOptions o;
  o.thresholds = *t;
  auto rep = gc::build_report({crafted(a, "a.json", "580.1"), crafted(b, "b.json", "580.2")}, o);
  ASSERT_TRUE(rep) << rep.error().str();
  std::string html = gc::render_report_html(*rep);
  EXPECT_NE(html.find(">gate limit: the tick on each row<"), std::string::npos);
  EXPECT_EQ(html.find(">gate limit 0.91x<"), std::string::npos);
  // One limit for the family: the one line, as before.
  o.thresholds = *gc::parse_thresholds(R"({"default_pct": 10})", "thresholds.json");
  rep = gc::build_report({crafted(a, "a.json", "580.1"), crafted(b, "b.json", "580.2")}, o);
  ASSERT_TRUE(rep);
  html = gc::render_report_html(*rep);
  EXPECT_EQ(html.find("the tick on each row"), std::string::npos);
  EXPECT_NE(html.find(">gate limit 0.91x<"), std::string::npos);
}

TEST(ReportSummary, OnePointFivePercentSlowerAtTwoPercentCvIsNeutral) {
  auto rep = gc::build_report({crafted({{"memory/copy/u8/2GiB", 100.0, 2.0}}, "a.json", "1"),
                               crafted({{"memory/copy/u8/2GiB", 101.5, 2.0}}, "b.json", "2")},
                              {});
  ASSERT_TRUE(rep);
  const auto& cell = rep->families.front().rows.front().cells[1];
  ASSERT_TRUE(cell.speed);
  EXPECT_NEAR(cell.band, 0.04, 1e-12);
  EXPECT_EQ(gc::ratio_tone(*cell.speed, cell.band), gc::Tone::Neutral);
  EXPECT_NE(gc::render_report_html(*rep).find("class=\"neutral\""), std::string::npos);
}

TEST(ReportColumns, FiveFilesOfOneRunAreTheColumnOfTheirMergedFile) {
  std::vector<std::tuple<std::string, double, double>> all;
  std::vector<gc::Results> parts;
  const char* fams[] = {"matmul", "memory", "conv", "launch", "pcie"};
  for (int f = 0; f < 5; ++f) {
    std::vector<std::tuple<std::string, double, double>> mine;
    for (int i = 0; i < 2; ++i) mine.emplace_back(std::string(fams[f]) + "/x/fp16/" + std::to_string(i), 10.0 + f + i, 1.0);
    all.insert(all.end(), mine.begin(), mine.end());
    parts.push_back(crafted(mine, std::string("bench_") + fams[f] + ".json"));
  }
  auto split = gc::build_report(parts, {});
  auto merged = gc::build_report({crafted(all, "results.json")}, {});
  ASSERT_TRUE(split && merged);
  ASSERT_EQ(split->labels.size(), 1u);
  EXPECT_EQ(split->files.front(), 5);
  EXPECT_EQ(split->labels, merged->labels);
  ASSERT_EQ(split->families.size(), merged->families.size());
  for (std::size_t f = 0; f < split->families.size(); ++f)
    for (std::size_t i = 0; i < split->families[f].rows.size(); ++i) {
      EXPECT_EQ(split->families[f].rows[i].name, merged->families[f].rows[i].name);
      EXPECT_EQ(split->families[f].rows[i].cells[0].value, merged->families[f].rows[i].cells[0].value);
    }
  // Against a second GPU, the five files are still one column.
  parts.push_back(crafted(all, "other.json", "580.1", "GPU-bbbb"));
  auto two = gc::build_report(parts, {});
  ASSERT_TRUE(two);
  EXPECT_EQ(two->labels.size(), 2u);
}

TEST(ReportColumns, TwoRunsOfOneGpuWithDifferentDriversAreTwoColumns) {
  const std::vector<std::tuple<std::string, double, double>> c{{"matmul/x/fp16/1", 10.0, 1.0}};
  auto rep = gc::build_report({crafted(c, "before.json", "570.1"), crafted({{"memory/x/u8/1", 1.0, 1.0}}, "after.json", "580.1")}, {});
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->labels.size(), 2u);
  gc::ReportOptions o;
  o.columns = {"before", "after"};
  o.only_common = true;
  auto named = gc::build_report({crafted(c, "before.json", "570.1"), crafted(c, "after.json", "580.1")}, o);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->labels, (std::vector<std::string>{"before", "after"}));
  o.columns = {"one"};
  EXPECT_FALSE(gc::build_report({crafted(c, "before.json", "570.1"), crafted(c, "after.json", "580.1")}, o));
}

TEST(ReportFormats, JsonAndCsvCarryTheSameFigures) {
  auto rep = gc::build_report({crafted({{"matmul/x/fp16/1", 10.0, 1.0}}, "a.json", "1"),
                               crafted({{"matmul/x/fp16/1", 11.0, 1.0}}, "b.json", "2")},
                              {});
  ASSERT_TRUE(rep);
  const std::string csv = gc::render_report_csv(*rep);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "family,name,metric,unit,direction,column,value,ratio,noise_band_pct,cv_pct,pct_of_spec,tone,report_only,noisy,"
            "partial,note");
  // Every digit (issue 35: "%.6g" rounded them), fractions as the *_pct columns say.
  EXPECT_NE(csv.find(",0.9090909090909091,2,1,,worse,0,0,0,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",real_time,ns,"), std::string::npos) << csv;
  const std::string json = gc::render_report_json(*rep);
  EXPECT_NE(json.find("\"geomean\": 0.9090909"), std::string::npos);
}

// ---- the command's inputs and outputs (in process, fake disk) --------------------------------

namespace {

gpucheck::compare::testing::InProcessRun report_cli(std::vector<std::string> args, gpucheck::compare::testing::FakeFileSystem& fs) {
  return gpucheck::compare::testing::run_command("report", std::move(args), fs);
}

}  // namespace

// Every file report reads (--specs, --thresholds, given or found by the default search) is an
// input: an output naming one is exit 2 with one line, and the file keeps its bytes.
TEST(ReportCli, AnOutputThatNamesAFileReadIsRefusedAndTheFileKept) {
  gpucheck::compare::testing::FakeFileSystem fs;
  const std::string results = gpucheck::testutil::slurp(gpucheck::testutil::fixture("h200_quick_06ccf6c.json"));
  const std::string specs = gpucheck::testutil::slurp(gpucheck::testutil::source_path("baselines/specs.json"));
  const std::string thresholds = gpucheck::testutil::slurp(gpucheck::testutil::source_path("baselines/thresholds.json"));
  fs.add("a.json", results);
  fs.add("s.json", specs);
  fs.add("t.json", thresholds);
  fs.add("auto/a.json", results);
  fs.add("auto/thresholds.json", thresholds);
  fs.add("baselines/specs.json", specs);
  struct Case {
    std::vector<std::string> args;
    std::string file, option;  // the input the output names, and the option it is read by
  };
  const Case cases[] = {
      {{"a.json", "--specs", "s.json", "--markdown", "s.json"}, "s.json", "--specs"},
      {{"a.json", "--thresholds", "t.json", "--html", "t.json"}, "t.json", "--thresholds"},
      {{"auto/a.json", "--markdown", "auto/thresholds.json"}, "auto/thresholds.json", "--thresholds"},  // found beside A
      {{"a.json", "--markdown", "baselines/specs.json"}, "baselines/specs.json", "--specs"},            // found by default
      {{"a.json", "--format", "json", "--out", "baselines/specs.json"}, "baselines/specs.json", "--specs"},
  };
  for (const Case& c : cases) {
    const std::string before = fs.files.at(c.file);
    auto r = report_cli(c.args, fs);
    EXPECT_EQ(r.status, gc::ExitStatus::BadInput) << c.args.back() << ": " << r.io.err;
    EXPECT_EQ(std::count(r.io.err.begin(), r.io.err.end(), '\n'), 1) << r.io.err;
    EXPECT_NE(r.io.err.find(c.file), std::string::npos) << r.io.err;
    EXPECT_NE(r.io.err.find(c.option), std::string::npos) << r.io.err;
    EXPECT_EQ(fs.files.at(c.file), before) << c.file;
  }
  // --no-thresholds reads none: the file beside A may then be written.
  auto ok = report_cli({"auto/a.json", "--no-thresholds", "--markdown", "auto/thresholds.json"}, fs);
  EXPECT_EQ(ok.status, gc::ExitStatus::Ok) << ok.io.err;
  EXPECT_NE(fs.files.at("auto/thresholds.json"), thresholds);
}
