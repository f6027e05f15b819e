// Renderers: golden Markdown and JUnit for one comparison that shows every verdict, the JSON
// document's fields, the terminal table with and without colour.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rules/compare.hpp"
#include "base/filesystem.hpp"
#include "report/csv.hpp"
#include "report/render.hpp"
#include "results/results.hpp"

namespace gc = gpucheck::compare;

namespace {

std::string fixture_path(const std::string& rel) { return std::string(GPUCHECK_COMPARE_FIXTURES) + "/" + rel; }

std::string slurp(const std::string& path) {
  auto t = gc::RealFileSystem{}.read(path, 1 << 24);
  if (!t) throw std::runtime_error(t.error().str());
  return *t;
}

gc::Comparison golden_comparison() {
  // Sources named without folders so the golden text does not depend on where the tree is.
  auto base = gc::parse_results(slurp(fixture_path("golden/baseline.json")), "baseline.json");
  auto cur = gc::parse_results(slurp(fixture_path("golden/current.json")), "current.json");
  if (!base || !cur) throw std::runtime_error("golden fixtures do not read");
  return gc::compare_results(*base, *cur, gc::CompareOptions{});
}

// GPUCHECK_UPDATE_GOLDEN=1 rewrites the golden files (then review the diff before committing).
void expect_golden(const std::string& rel, const std::string& actual) {
  const std::string path = fixture_path(rel);
  if (const char* u = std::getenv("GPUCHECK_UPDATE_GOLDEN"); u != nullptr && std::string(u) == "1") {
    gc::RealFileSystem fs;
    ASSERT_TRUE(fs.write(path, actual));
    GTEST_SKIP() << "golden file rewritten: " << path;
  }
  EXPECT_EQ(actual, slurp(path)) << "golden mismatch for " << rel;
}

}  // namespace

TEST(Render, GoldenMarkdown) { expect_golden("golden/expected.md", gc::render_markdown(golden_comparison())); }

TEST(Render, GoldenJUnit) { expect_golden("golden/expected.junit.xml", gc::render_junit(golden_comparison())); }

TEST(Render, JsonCarriesEveryRow) {
  const auto c = golden_comparison();
  const auto j = nlohmann::json::parse(gc::render_json(c));
  EXPECT_EQ(j["result"], "fail");
  EXPECT_EQ(j["counts"]["regressed"], 1);
  EXPECT_EQ(j["counts"]["missing"], 1);
  EXPECT_EQ(j["counts"]["errored"], 1);
  EXPECT_EQ(j["counts"]["improved"], 1);
  EXPECT_EQ(j["counts"]["new"], 1);
  EXPECT_EQ(j["rows"].size(), 7u);
  EXPECT_EQ(j["rows"][0]["name"], "matmul/cublaslt/bf16/8192x8192x8192");
  EXPECT_EQ(j["rows"][0]["verdict"], "REGRESSION");
  EXPECT_NEAR(j["rows"][0]["change"].get<double>(), 0.25, 1e-12);
  EXPECT_EQ(j["context_diff"][0]["key"], "driver_version");
}

// Issue 36: the rows are written one by one, in exactly the bytes nlohmann's dump(2) gives the
// whole document: no rows, one, every verdict, a confirmation, a listed cv, a name that is not UTF-8.
TEST(Render, JsonRowByRowIsTheWholeDocumentsPrettyPrint) {
  const auto pretty = [](const std::string& s) {
    return nlohmann::ordered_json::parse(s).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  };
  gc::Comparison c = golden_comparison();
  ASSERT_GE(c.rows.size(), 3u);
  c.rows[1].confirmation = gc::Confirmation::Confirmed;
  c.rows[1].first_change = 0.125;
  c.rows[2].listed_cv_pct = 3.5;
  c.rows[2].name = "bad\xff\xfe name";
  // Every member written row by row: a method object, a list of reasons, text to escape, whole,
  // tiny, huge and non-finite numbers (null), a report-only row's own members.
  c.rows[0].verdict = gc::Verdict::MethodChanged;
  c.rows[0].base_method = "1";
  c.rows[0].cur_method = "2";
  c.rows[0].why = {"SM clock 1980 -> 1545 MHz", "tab\there \"quoted\" back\\slash \x01 \x7f", "caf\xc3\xa9 \xe2\x86\x92"};
  c.rows[0].base = 20000.0;
  c.rows[0].cur = 1e-300;
  c.rows[0].change = std::numeric_limits<double>::quiet_NaN();
  c.rows[0].p_value = std::numeric_limits<double>::infinity();
  c.rows[0].base_rate = -0.0;
  c.rows[0].cur_rate = 1.7976931348623157e308;
  c.rows[0].base_reps = -3;
  c.rows[1].verdict = gc::Verdict::ReportOnly;
  c.rows[1].rule_why = "listed report-only in thresholds.json";
  c.rows[1].note = "line\nbreak\r\f\b";
  const std::string all = gc::render_json(c);
  EXPECT_EQ(all, pretty(all));
  EXPECT_NE(all.find("bad\xef\xbf\xbd\xef\xbf\xbd name"), std::string::npos);  // replaced, as dump() replaces
  EXPECT_NE(all.find("\"first_change\": 0.125"), std::string::npos);
  EXPECT_NE(all.find("\"baseline\": 20000.0,"), std::string::npos);
  EXPECT_NE(all.find("\"change\": null,"), std::string::npos);
  EXPECT_NE(all.find("\"method\": {\n        \"baseline\": \"1\",\n        \"current\": \"2\"\n      }"), std::string::npos);
  EXPECT_NE(all.find("\\u0001"), std::string::npos);
  const auto rows = nlohmann::json::parse(all)["rows"];
  EXPECT_EQ(rows[0]["why"].size(), 3u);
  EXPECT_EQ(rows[0]["why"][2], "caf\xc3\xa9 \xe2\x86\x92");
  EXPECT_EQ(rows[1]["measured_verdict"], "ok");
  EXPECT_EQ(rows[1]["note"], "line\nbreak\r\f\b");
  c.rows.resize(1);
  const std::string one = gc::render_json(c);
  EXPECT_EQ(one, pretty(one));
  EXPECT_EQ(nlohmann::json::parse(one)["rows"].size(), 1u);
  c.rows.clear();
  const std::string none = gc::render_json(c);
  EXPECT_EQ(none, pretty(none));
  EXPECT_NE(none.find("\"rows\": []\n}\n"), std::string::npos);
}

TEST(Render, TerminalColourOnlyWhenAsked) {
  const auto c = golden_comparison();
  const std::string plain = gc::render_terminal(c, false);
  const std::string coloured = gc::render_terminal(c, true);
  EXPECT_EQ(plain.find('\033'), std::string::npos);
  EXPECT_NE(coloured.find("\033[1;31mREGRESSION"), std::string::npos);
  // Columns named in the issue, regressions first, context above the table.
  const auto header = plain.find("name ");
  ASSERT_NE(header, std::string::npos);
  EXPECT_NE(plain.find("baseline", header), std::string::npos);
  EXPECT_LT(plain.find("context differs:"), header);
  EXPECT_LT(plain.find("REGRESSION"), plain.find("improved"));
  EXPECT_NE(plain.find("result: FAIL"), std::string::npos);
}

TEST(Render, Formatting) {
  EXPECT_EQ(gc::format_time_ns(1.5e6), "1.500 ms");
  EXPECT_EQ(gc::format_time_ns(999.0), "999.000 ns");
  EXPECT_EQ(gc::format_time_ns(2.5e9), "2.500 s");
  EXPECT_EQ(gc::format_change(0.1), "+10.00%");
  EXPECT_EQ(gc::format_change(-0.035), "-3.50%");
  EXPECT_EQ(gc::format_pct(12.5), "12.5%");
  EXPECT_EQ(gc::format_pct(10.0), "10%");
  EXPECT_EQ(gc::escape_xml("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
  EXPECT_EQ(gc::escape_markdown_cell("a|b_c"), "a\\|b\\_c");
}

// The gate's report: the comparison as judged, and what the gate adds around it. Its warnings
// come before the comparison's; an errored binary fails it though every row passes.
TEST(Render, TheGatesReportAddsWarningsActivityAndBinaries) {
  auto base = gc::parse_results(slurp(fixture_path("golden/baseline.json")), "baseline.json");
  ASSERT_TRUE(base);
  gc::Comparison same = gc::compare_results(*base, *base, gc::CompareOptions{});
  same.warnings = {"from the rules"};
  ASSERT_FALSE(same.failed());
  gc::CompareReport r(same);
  EXPECT_FALSE(r.failed());
  r.warnings = {"from the gate"};
  r.activity = {"GPU activity: idle"};
  gc::BinaryRun b;
  b.name = "bench_matmul";
  b.status = gc::BinaryRun::Status::Errored;
  b.reason = "crashed";
  r.binaries = {b};
  EXPECT_TRUE(r.errored_binaries());
  EXPECT_TRUE(r.failed());
  const auto j = nlohmann::json::parse(gc::render_json(r));
  EXPECT_EQ(j["warnings"].get<std::vector<std::string>>(), (std::vector<std::string>{"from the gate", "from the rules"}));
  EXPECT_EQ(j["gpu_activity"][0], "GPU activity: idle");
  EXPECT_EQ(j["binaries"][0]["status"], "ERRORED");
  EXPECT_EQ(j["result"], "fail");
  EXPECT_EQ(j["counts"]["errored"], 0);  // the binary's error is not a row's
  EXPECT_EQ(nlohmann::json::parse(gc::render_json(same))["result"], "pass");
}

// Issue 35: the header states the limits the table was judged at, per case, not one figure.
TEST(Render, HeaderCountsTheCasesAtEachLimit) {
  gc::Comparison c = golden_comparison();
  ASSERT_GE(c.rows.size(), 3u);
  EXPECT_NE(gc::render_markdown(c).find("limit 10% for every case (no thresholds file"), std::string::npos);
  c.rows[0].threshold_pct = 5.0;
  c.rows[1].threshold_pct = 5.0;
  c.rows[2].threshold_pct = 25.0;
  c.thresholds_source = "baselines/thresholds.json";
  const std::string md = gc::render_markdown(c);
  EXPECT_NE(md.find("limit 10% by default; 5% for 2 cases; 25% for 1 case (per-name overrides from "
                    "baselines/thresholds.json)"),
            std::string::npos)
      << md.substr(0, 600);
  EXPECT_EQ(md.find("threshold 10%"), std::string::npos);
  c.default_threshold_pct = 5.0;  // every row at 5% but two: the others are counted
  for (auto& r : c.rows) r.threshold_pct = 5.0;
  EXPECT_NE(gc::render_terminal(c, false).find("limit 5% for every case (per-name overrides"), std::string::npos);
}

// Issue 35/36: CSV cells say their unit, keep every digit, and never start a formula.
TEST(Render, CsvFieldsAreSafeAndNumbersExact) {
  EXPECT_EQ(gc::csv_field("matmul/cublaslt/bf16/8x8x8"), "matmul/cublaslt/bf16/8x8x8");
  EXPECT_EQ(gc::csv_field("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(gc::csv_field("@SUM(A1)"), "\"'@SUM(A1)\"");
  EXPECT_EQ(gc::csv_field("+cmd"), "\"'+cmd\"");
  EXPECT_EQ(gc::csv_field("-cmd"), "\"'-cmd\"");
  EXPECT_EQ(gc::csv_field("\tx"), "\"'\tx\"");
  EXPECT_EQ(gc::csv_field("\rx"), "\"'\rx\"");
  EXPECT_EQ(gc::csv_field("-1.5"), "-1.5");  // numbers stay numbers
  EXPECT_EQ(gc::csv_field("+3"), "+3");
  EXPECT_EQ(gc::csv_field("-"), "\"'-\"");
  EXPECT_EQ(gc::csv_field(""), "");
  EXPECT_EQ(gc::csv_field("a,b"), "\"a,b\"");
  for (const double v : {1.0 / 3.0, 1234567.891011, 1e-300, 2.5e9, -0.1}) {
    const std::string s = gc::csv_number(v);
    EXPECT_EQ(std::stod(s), v) << s;  // reads back as the same double: nothing rounded away
  }
  EXPECT_EQ(gc::csv_number(1234567.0), "1234567");
  EXPECT_EQ(gc::csv_number(std::nullopt), "");
  EXPECT_EQ(gc::csv_pct(0.05), "5");
  EXPECT_EQ(gc::csv_pct(std::nullopt), "");
  EXPECT_EQ(gc::csv_unit("real_time"), "ns");
  EXPECT_EQ(gc::csv_unit("TFLOPS"), "TFLOP/s");

  gc::Comparison c = golden_comparison();
  c.rows[0].name = "=cmd";
  const std::string csv = gc::render_csv(c);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "name,verdict,metric,unit,baseline,current,change_pct,threshold_pct,p_value,baseline_cv_pct,"
            "current_cv_pct,noisy,fails_gate,note");
  EXPECT_NE(csv.find("\n\"'=cmd\","), std::string::npos) << csv;
  EXPECT_NE(csv.find(",real_time,ns,"), std::string::npos) << csv;
}
