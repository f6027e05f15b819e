// Baseline store on the fake disk: layout, atomic replace (a failed write or rename leaves the
// old baseline byte for byte), refusal across GPU models, what changed, listing.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "../test_util.hpp"
#include "fake_fs.hpp"
#include "results/baseline.hpp"

namespace gc = gpucheck::compare;
using gpucheck::compare::testing::FakeFileSystem;

namespace {

std::string results_text(const std::string& gpu, double t_ms, const std::string& extra_name = "") {
  std::string s = R"({"context": {"gpu_name": ")" + gpu + R"(", "host_name": "n1", "num_cpus": 8}, "benchmarks": [)";
  s += R"({"name": "matmul/cublaslt/bf16/8x8x8/manual_time", "run_type": "iteration", "real_time": )" +
       std::to_string(t_ms) + R"(, "time_unit": "ms", "TFLOPS": NaN})";
  if (!extra_name.empty())
    s += R"(, {"name": ")" + extra_name + R"(", "run_type": "iteration", "real_time": 5, "time_unit": "us"})";
  return s + "]}";
}

gc::Results raw(const std::string& text) {
  gc::ReadOptions o;
  o.keep_raw = true;
  auto r = gc::parse_results(text, "results.json", o);
  if (!r) throw std::runtime_error(r.error().str());
  return std::move(*r);
}

gc::BaselineUpdateOptions opts(const std::string& suite = "quick") {
  gc::BaselineUpdateOptions o;
  o.root = "baselines";
  o.suite = suite;
  return o;
}

}  // namespace

TEST(Baseline, WritesUnderTheGpuSlug) {
  FakeFileSystem fs;
  auto u = gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), opts());
  ASSERT_TRUE(u) << u.error().str();
  EXPECT_EQ(u->path, "baselines/nvidia-h200/quick.json");
  EXPECT_FALSE(u->replaced);
  ASSERT_EQ(fs.files.count("baselines/nvidia-h200/quick.json"), 1u);
  auto back = gc::parse_results(fs.files["baselines/nvidia-h200/quick.json"], "b");
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(back->context_value("gpu_name"), "NVIDIA H200");
  EXPECT_EQ(back->context_value("num_cpus"), "8");
  EXPECT_DOUBLE_EQ(back->benchmarks[0].real_time_ns, 1e6);
  // nothing but the baseline is left behind: the temp file was renamed
  EXPECT_EQ(fs.files.size(), 1u);
}

TEST(Baseline, FailedWriteLeavesTheOldBaseline) {
  FakeFileSystem fs;
  ASSERT_TRUE(gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), opts()));
  const std::string before = fs.files["baselines/nvidia-h200/quick.json"];
  fs.fail_write_after = 40;  // the disk fills up 40 bytes into the new baseline
  auto u = gc::update_baseline(fs, raw(results_text("NVIDIA H200", 2.0)), opts());
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().message.find("No space left on device"), std::string::npos);
  EXPECT_EQ(fs.files["baselines/nvidia-h200/quick.json"], before);
  EXPECT_EQ(fs.files.size(), 1u);  // the torn temp file was removed
}

TEST(Baseline, FailedRenameLeavesTheOldBaseline) {
  FakeFileSystem fs;
  ASSERT_TRUE(gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), opts()));
  const std::string before = fs.files["baselines/nvidia-h200/quick.json"];
  fs.fail_rename = true;
  auto u = gc::update_baseline(fs, raw(results_text("NVIDIA H200", 2.0)), opts());
  ASSERT_FALSE(u);
  EXPECT_EQ(fs.files["baselines/nvidia-h200/quick.json"], before);
  EXPECT_EQ(fs.files.size(), 1u);
}

TEST(Baseline, RefusesAnotherGpuModelUnlessForced) {
  FakeFileSystem fs;
  ASSERT_TRUE(gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), opts()));
  auto o = opts();
  o.gpu_slug = "nvidia-h200";
  auto refused = gc::update_baseline(fs, raw(results_text("NVIDIA A100-SXM4-80GB", 2.0)), o);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("--force"), std::string::npos);
  o.force = true;
  auto forced = gc::update_baseline(fs, raw(results_text("NVIDIA A100-SXM4-80GB", 2.0)), o);
  ASSERT_TRUE(forced) << forced.error().str();
  EXPECT_EQ(forced->path, "baselines/nvidia-h200/quick.json");
}

TEST(Baseline, RefusesTheStoredBaselineItselfAsResults) {
  FakeFileSystem fs;
  ASSERT_TRUE(gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), opts()));
  const std::string before = fs.files["baselines/nvidia-h200/quick.json"];
  gc::ReadOptions ro;
  ro.keep_raw = true;
  for (const std::string name : {"baselines/nvidia-h200/quick.json", "./baselines/nvidia-h200/quick.json"}) {
    auto self = gc::parse_results(before, name, ro);
    ASSERT_TRUE(self) << self.error().str();
    for (bool force : {false, true}) {
      auto o = opts();
      o.force = force;
      auto u = gc::update_baseline(fs, *self, o);
      ASSERT_FALSE(u) << name;
      EXPECT_EQ(u.error().where, name);
      EXPECT_NE(u.error().message.find("is the baseline this update would replace"), std::string::npos);
    }
  }
  EXPECT_EQ(fs.files["baselines/nvidia-h200/quick.json"], before);
  // another suite's file of the same GPU is results like any other
  auto other = gc::parse_results(before, "baselines/nvidia-h200/quick.json", ro);
  ASSERT_TRUE(other);
  EXPECT_TRUE(gc::update_baseline(fs, *other, opts("full")));
}

TEST(Baseline, RefusesAStoredFileOfAnotherModelAtTheSamePath) {
  FakeFileSystem fs;
  fs.add("baselines/nvidia-h200/quick.json", results_text("NVIDIA H200 NVL", 1.0));  // hand-edited store
  auto u = gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), opts());
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().message.find("stored baseline is from NVIDIA H200 NVL"), std::string::npos);
}

TEST(Baseline, NeedsAGpuName) {
  FakeFileSystem fs;
  auto u = gc::update_baseline(fs, raw(R"({"benchmarks": [{"name": "a/b", "real_time": 1, "time_unit": "ms"}]})"), opts());
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().message.find("--gpu"), std::string::npos);
  auto o = opts();
  o.gpu_slug = "lab-box";
  EXPECT_TRUE(gc::update_baseline(fs, raw(R"({"benchmarks": [{"name": "a/b", "real_time": 1, "time_unit": "ms"}]})"), o));
}

TEST(Baseline, RejectsUnsafeNames) {
  FakeFileSystem fs;
  EXPECT_FALSE(gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), opts("../quick")));
  auto o = opts();
  o.gpu_slug = "../../etc";
  EXPECT_FALSE(gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), o));
  EXPECT_TRUE(fs.files.empty());
}

TEST(Baseline, SaysWhatChanged) {
  FakeFileSystem fs;
  ASSERT_TRUE(gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0, "old/only/fp32/1")), opts()));
  auto u = gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.5, "new/only/fp32/1")), opts());
  ASSERT_TRUE(u) << u.error().str();
  EXPECT_TRUE(u->replaced);
  EXPECT_EQ(u->added, std::vector<std::string>{"new/only/fp32/1"});
  EXPECT_EQ(u->removed, std::vector<std::string>{"old/only/fp32/1"});
  ASSERT_EQ(u->moved.size(), 1u);
  EXPECT_NEAR(u->moved[0].change, 0.5, 1e-12);
}

TEST(Baseline, ListsWhatIsStored) {
  FakeFileSystem fs;
  ASSERT_TRUE(gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), opts("quick")));
  ASSERT_TRUE(gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), opts("full")));
  ASSERT_TRUE(gc::update_baseline(fs, raw(results_text("NVIDIA A100-SXM4-80GB", 1.0)), opts("quick")));
  fs.add("baselines/thresholds.json", "{}");
  fs.add("baselines/nvidia-h200/broken.json", "{");
  auto all = gc::list_baselines(fs, "baselines", std::nullopt);
  ASSERT_TRUE(all) << all.error().str();
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ((*all)[0].slug, "nvidia-a100-sxm4-80gb");
  EXPECT_EQ((*all)[1].suite, "broken");
  EXPECT_FALSE((*all)[1].problem.empty());
  EXPECT_EQ((*all)[2].suite, "full");
  EXPECT_EQ((*all)[2].benchmarks, 1u);
  auto h200 = gc::list_baselines(fs, "baselines", std::string("nvidia-h200"));
  ASSERT_TRUE(h200);
  EXPECT_EQ(h200->size(), 3u);
  EXPECT_FALSE(gc::list_baselines(fs, "baselines", std::string("nvidia-b200")));
  EXPECT_FALSE(gc::list_baselines(fs, "nowhere", std::nullopt));
}

TEST(Baseline, AConcurrentUpdateHoldingTheLockIsAClearError) {
  FakeFileSystem fs;
  fs.locked.insert("baselines/nvidia-h200/.lock");  // another update is writing this folder
  auto u = gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), opts());
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().str().find("baseline not updated: baselines/nvidia-h200/.lock: locked by another process"), std::string::npos)
      << u.error().str();
  EXPECT_EQ(fs.files.count("baselines/nvidia-h200/quick.json"), 0u);
  fs.locked.clear();
  EXPECT_TRUE(gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), opts()));
  EXPECT_TRUE(fs.locked.empty());  // released when the update returns
}

TEST(Baseline, RealLockSecondHolderWaitsThenFails) {
  const gpucheck::testutil::TempDir dir("gpucheck-lock");
  const std::string lock_path = dir / ".lock";
  gc::RealFileSystem fs;
  auto first = fs.lock(lock_path, 0.0);
  ASSERT_TRUE(first) << first.error().str();
  auto second = fs.lock(lock_path, 0.2);  // flock: a second open file description conflicts
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("locked by another process (pid " + std::to_string(::getpid()) + ")"), std::string::npos)
      << second.error().message;
  first->reset();
  auto third = fs.lock(lock_path, 0.0);
  EXPECT_TRUE(third);
  third->reset();
}

// The lock is opened without following a link and must be a regular file: a link made after
// any check before the call is still refused at the open, its target untouched.
TEST(Baseline, RealLockNeverFollowsALink) {
  const gpucheck::testutil::TempDir dir("gpucheck-lock");
  const std::string target = dir / "results.json", link = dir / ".lock", fifo = dir / "fifo.lock";
  { std::ofstream(target) << "precious"; }
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  gc::RealFileSystem fs;
  auto l = fs.lock(link, 0.0);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().where, link);
  EXPECT_EQ(gpucheck::testutil::slurp(target), "precious");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = fs.lock(fifo, 0.0);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().where, fifo);
}

namespace {
// A process id that is gone: a child that has exited and been reaped.
pid_t gone_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}
}  // namespace

TEST(Baseline, OnlyTemporariesOfGoneWritersAreRemoved) {
  const gpucheck::testutil::TempDir dir("gpucheck-stale");
  const std::string folder = dir / "baselines/nvidia-h200";
  std::filesystem::create_directories(folder);
  const std::string dead = ".quick.json.tmp-" + std::to_string(gone_pid());
  const std::string dead_other = ".full.json.tmp-" + std::to_string(gone_pid());
  const std::string live = ".trend.html.tmp-" + std::to_string(::getppid());  // a writer still at work
  for (const std::string& n : {dead, dead_other, live, std::string(".keep-me")})
    gpucheck::testutil::write_file(folder + "/" + n, "{\"context\": {");
  gc::RealFileSystem fs;
  auto o = opts();
  o.root = dir / "baselines";
  auto u = gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), o);
  ASSERT_TRUE(u) << u.error().str();
  EXPECT_EQ(u->cleaned, (std::vector<std::string>{dead_other, dead}));
  EXPECT_FALSE(std::filesystem::exists(folder + "/" + dead));
  EXPECT_TRUE(std::filesystem::exists(folder + "/" + live));
  EXPECT_TRUE(std::filesystem::exists(folder + "/.keep-me"));
  EXPECT_TRUE(gc::is_stale_temporary(".quick.json.tmp-1"));
  EXPECT_FALSE(gc::is_stale_temporary("quick.json.tmp-1"));
  EXPECT_FALSE(gc::is_stale_temporary(".quick.json.tmp-"));
  EXPECT_FALSE(gc::is_stale_temporary(".quick.json.tmp-1x"));
}

TEST(Baseline, ALockThatIsALinkIsRefusedAndItsTargetUntouched) {
  const gpucheck::testutil::TempDir dir("gpucheck-lock-link");
  std::filesystem::create_directories(dir / "baselines/nvidia-h200");
  const std::string victim = dir / "results.json";
  gpucheck::testutil::write_file(victim, results_text("NVIDIA H200", 1.0));
  const std::string before = gpucheck::testutil::slurp(victim);
  std::filesystem::create_symlink(victim, dir / "baselines/nvidia-h200/.lock");
  gc::RealFileSystem fs;
  auto o = opts();
  o.root = dir / "baselines";
  auto u = gc::update_baseline(fs, raw(results_text("NVIDIA H200", 2.0)), o);
  ASSERT_FALSE(u);
  EXPECT_EQ(u.error().where, dir / "baselines/nvidia-h200/.lock");
  EXPECT_EQ(gpucheck::testutil::slurp(victim), before);
  EXPECT_FALSE(std::filesystem::exists(dir / "baselines/nvidia-h200/quick.json"));
  const auto r = gpucheck::testutil::cli({"baseline", "update", "--suite", "quick", victim, "--root", dir / "baselines"});
  EXPECT_EQ(r.status, gc::ExitStatus::BadInput);
  EXPECT_EQ(std::count(r.io.err.begin(), r.io.err.end(), '\n'), 1) << r.io.err;
  EXPECT_EQ(gpucheck::testutil::slurp(victim), before);
}

TEST(Baseline, AnEmptyRootIsRefused) {
  const gpucheck::testutil::TempDir dir("gpucheck-root");
  gpucheck::testutil::write_file(dir / "r.json", results_text("NVIDIA H200", 1.0));
  EXPECT_EQ(gpucheck::testutil::cli({"baseline", "update", "--suite", "quick", dir / "r.json", "--root", ""}).status,
            gc::ExitStatus::BadInput);
  EXPECT_EQ(gpucheck::testutil::cli({"baseline", "show", "--root", ""}).status, gc::ExitStatus::BadInput);
  EXPECT_FALSE(std::filesystem::exists("nvidia-h200/quick.json"));
}

TEST(Baseline, PerHostBaselineUnderTheHostSlug) {
  FakeFileSystem fs;
  auto text = results_text("NVIDIA H200", 1.0);
  text.replace(text.find("\"host_name\""), 0, R"x("host_cpu": "Intel(R) Xeon(R) Platinum 8480+ (family 6 model 143 stepping 8)", )x");
  auto o = opts();
  o.per_host = true;
  auto u = gc::update_baseline(fs, raw(text), o);
  ASSERT_TRUE(u) << u.error().str();
  EXPECT_EQ(u->path, "baselines/nvidia-h200/intel-r-xeon-r-platinum-8480-family-6-model-143-stepping-8/quick.json");
  EXPECT_EQ(gc::baseline_candidates("baselines", "NVIDIA H200", "Intel(R) Xeon(R) Platinum 8480+ (family 6 model 143 stepping 8)", "quick"),
            (std::vector<std::string>{u->path, "baselines/nvidia-h200/quick.json"}));
  EXPECT_EQ(gc::baseline_candidates("b", "NVIDIA H200", "unknown", "full"), std::vector<std::string>{"b/nvidia-h200/full.json"});
  auto listed = gc::list_baselines(fs, "baselines", std::nullopt);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].host, "intel-r-xeon-r-platinum-8480-family-6-model-143-stepping-8");
  // Without host_cpu there is no folder to name.
  auto none = gc::update_baseline(fs, raw(results_text("NVIDIA H200", 1.0)), o);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no host_cpu"), std::string::npos);
}

TEST(Baseline, KeepsEveryRepetitionSoTheUTestCanRun) {
  FakeFileSystem fs;
  std::string s = R"({"context": {"gpu_name": "NVIDIA H200"}, "benchmarks": [)";
  for (int i = 0; i < 5; ++i)
    s += std::string(i ? "," : "") + R"({"name": "m/a/manual_time", "run_name": "m/a/manual_time", "run_type": "iteration", "repetitions": 5, "repetition_index": )" +
         std::to_string(i) + R"(, "real_time": )" + std::to_string(1.0 + 0.01 * i) + R"(, "time_unit": "ms", "cv_pct": 0.4})";
  s += R"(, {"name": "m/a/manual_time_median", "run_name": "m/a/manual_time", "run_type": "aggregate", "aggregate_name": "median", "repetitions": 5, "real_time": 1.02, "time_unit": "ms"}]})";
  ASSERT_TRUE(gc::update_baseline(fs, raw(s), opts()));
  auto back = gc::parse_results(fs.files["baselines/nvidia-h200/quick.json"], "b");
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(back->benchmarks[0].samples_ns.size(), 5u);
  EXPECT_EQ(back->benchmarks[0].repetitions, 5);
  EXPECT_DOUBLE_EQ(back->benchmarks[0].real_time_ns, 1.02e6);
}

TEST(Baseline, GpuSlug) {
  EXPECT_EQ(gc::gpu_slug("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(gc::gpu_slug("NVIDIA A100-SXM4-80GB"), "nvidia-a100-sxm4-80gb");
  EXPECT_EQ(gc::gpu_slug("  NVIDIA  GeForce RTX 4090 "), "nvidia-geforce-rtx-4090");
  EXPECT_EQ(gc::gpu_slug("../.."), "unknown");
}
