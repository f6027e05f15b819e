// A stale baseline (cases better than their limit: one `baseline stale:` line, compare.json's
// baseline_stale) and a baseline re-recorded from the history's last runs, every repetition kept.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "history_fixture.hpp"
#include "results/results.hpp"
#include "rules/compare.hpp"

namespace gc = gpucheck::compare;
using gpucheck::testutil::cli;
using gpucheck::testutil::fixture;
using gpucheck::testutil::results_text;
using gpucheck::testutil::RunSpec;
using gpucheck::testutil::slurp;
using gpucheck::testutil::TempDir;
using gpucheck::testutil::write_file;

namespace {

bool has_line_starting(const std::string& text, const std::string& head) {
  return text.rfind(head, 0) == 0 || text.find("\n" + head) != std::string::npos;
}

}  // namespace

TEST(StaleBaseline, ImprovementsPastTheLimitMakeOneLineAndAField) {
  const auto r = cli({"compare", fixture("crafted/baseline.json"), fixture("crafted/faster_30pct.json"), "--no-thresholds"});
  EXPECT_EQ(r.status, gc::ExitStatus::Ok);
  EXPECT_TRUE(has_line_starting(r.io.out, "baseline stale: 1 case ")) << r.io.out;
  const auto j = cli({"compare", fixture("crafted/baseline.json"), fixture("crafted/faster_30pct.json"), "--no-thresholds",
                      "--format", "json"});
  const auto doc = nlohmann::json::parse(j.io.out);
  ASSERT_TRUE(doc["baseline_stale"].is_object());
  EXPECT_EQ(doc["baseline_stale"]["cases"], 1);
  EXPECT_NEAR(doc["baseline_stale"]["least_pct"].get<double>(), 30.0, 0.01);
  EXPECT_EQ(doc["baseline_stale"]["since_commit"], "0123456789ab");
  EXPECT_NE(doc["baseline_stale"]["command"].get<std::string>().find("--from-history"), std::string::npos);
}

TEST(StaleBaseline, NoLineWithinTheLimitOrWhenSlower) {
  for (const char* cur : {"crafted/slower_9pct.json", "crafted/slower_11pct.json", "crafted/same_in_us.json"}) {
    const auto r = cli({"compare", fixture("crafted/baseline.json"), fixture(cur), "--no-thresholds"});
    EXPECT_EQ(r.io.out.find("baseline stale:"), std::string::npos) << cur;
    const auto j = cli({"compare", fixture("crafted/baseline.json"), fixture(cur), "--no-thresholds", "--format", "json"});
    EXPECT_TRUE(nlohmann::json::parse(j.io.out)["baseline_stale"].is_null()) << cur;
  }
}

TEST(BaselineFromHistory, TheLastRunsOfTheBranchWithEveryRepetition) {
  const TempDir d("gpucheck-history");
  const std::vector<std::pair<std::string, std::string>> runs{{"c1", "main"}, {"c2", "main"}, {"c3", "pr-1"}, {"c4", "main"}};
  int day = 1;
  for (const auto& [commit, branch] : runs) {
    RunSpec s;
    s.commit = commit;
    s.branch = branch;
    s.date = "2026-12-0" + std::to_string(day++) + "T10:00:00+00:00";
    s.cases = {{"matmul/x/bf16/1", {1000, 1010, 990}}, {"memory/copy/1GiB", {commit == "c1" ? 99.0 : 50.0}}};
    write_file(d / (commit + ".json"), results_text(s));
    ASSERT_EQ(cli({"history", "add", "--db", d / "h.db", d / (commit + ".json")}).status, gc::ExitStatus::Ok);
  }
  auto b = gpucheck::testutil::baseline_from_history(d, d / "h.db", 2);
  ASSERT_TRUE(b.ok()) << b.error().str();
  EXPECT_EQ(b->context.at("gpucheck_commit"), "c4");  // the newest run's context
  const gc::Benchmark* m = b->find("matmul/x/bf16/1");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->repetitions, 6);  // 3 repetitions of c2 and of c4
  const gc::Benchmark* c = b->find("memory/copy/1GiB");
  ASSERT_NE(c, nullptr);
  EXPECT_DOUBLE_EQ(c->real_time_ns, 50.0);  // c1 (99) is not among the last 2 of main
  EXPECT_EQ(cli({"baseline", "update", "--suite", "quick", "--from-history", d / "h.db", "--branch", "main", "--last",
                 "4", "--root", d / "bl"})
                .status,
            gc::ExitStatus::BadInput);  // 3 runs of main
  EXPECT_EQ(cli({"baseline", "update", "--suite", "quick", "--from-history", d / "h.db", "--root", d / "bl"}).status,
            gc::ExitStatus::BadInput);  // no --branch
  EXPECT_EQ(cli({"baseline", "update", "--suite", "quick", "--branch", "main", d / "c1.json"}).status,
            gc::ExitStatus::BadInput);  // --branch without --from-history
}

// A case whose way of measuring changed (method 2 in the newest runs): the baseline holds only
// the newest method's repetitions and says which method; a file without the field counts as
// method 1, so "" and 1 are one series.
TEST(BaselineFromHistory, NeverSpansTwoMethods) {
  const TempDir d("gpucheck-history");
  std::vector<RunSpec> runs(4);
  const int methods[] = {0, 1, 2, 2};
  for (int i = 0; i < 4; ++i) {
    runs[i].commit = std::vector<std::string>{"c1", "c2", "c3", "c4"}[i];
    runs[i].method = methods[i];
    runs[i].date = gpucheck::testutil::december(i + 1);
    runs[i].cases = {{"matmul/x/bf16/1", {methods[i] == 2 ? 2000.0 : 1000.0}}};
  }
  gpucheck::testutil::add_by_cli(d, d / "h.db", runs);
  auto b = gpucheck::testutil::baseline_from_history(d, d / "h.db", 4);
  ASSERT_TRUE(b.ok()) << b.error().str();
  const gc::Benchmark* m = b->find("matmul/x/bf16/1");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->repetitions, 2);  // c3 and c4 only
  EXPECT_DOUBLE_EQ(m->real_time_ns, 2000.0);
  EXPECT_EQ(m->method, "2");
  // c1 (no field) and c2 (method 1): one series, restarted at c3.
  const auto l = cli({"history", "report", "--db", d / "h.db", "--markdown", d / "r.md"});
  ASSERT_EQ(l.status, gc::ExitStatus::Ok) << l.io.err;
  EXPECT_NE(slurp(d / "r.md").find("2 case series"), std::string::npos) << slurp(d / "r.md");
}
