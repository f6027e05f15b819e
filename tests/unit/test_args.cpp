#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpucheck/core/args.hpp"
#include "gpucheck/core/options.hpp"
#include "gpucheck/core/suggest.hpp"

namespace gpucheck::args {
namespace {

using S = std::vector<std::string>;

const OptionSet kTool{{"--metric", "--threshold"}, {"--allow-missing", "--no-colour"}, {"--out"}};

Parsed ok(const S& in, const OptionSet& o = kTool) {
  Parsed p;
  ParseError e;
  EXPECT_TRUE(parse(in, o, &p, &e)) << e.str();
  return p;
}

ParseError bad(const S& in, const OptionSet& o = kTool) {
  Parsed p;
  ParseError e;
  EXPECT_FALSE(parse(in, o, &p, &e));
  return e;
}

TEST(Args, ValuesBothWaysFlagsRepeatablesAndPositionals) {
  const Parsed p = ok({"a.json", "--metric", "TFLOPS", "--threshold=0.05", "--allow-missing", "--out", "x", "b.json",
                       "--out=y", "-"});
  EXPECT_EQ(p.positional, (S{"a.json", "b.json", "-"}));  // "-" is a positional (standard input/output)
  EXPECT_EQ(p.value("--metric"), "TFLOPS");
  EXPECT_EQ(p.value("--threshold"), "0.05");
  EXPECT_EQ(p.value("--nope"), std::nullopt);
  EXPECT_TRUE(p.flag("--allow-missing"));
  EXPECT_FALSE(p.flag("--no-colour"));
  EXPECT_EQ(p.list("--out"), (S{"x", "y"}));
  EXPECT_TRUE(p.list("--metric").empty());
  EXPECT_TRUE(p.passed.empty());
}

TEST(Args, DoubleDashEndsTheOptions) {
  const Parsed p = ok({"--allow-missing", "--", "--metric", "-x"});
  EXPECT_EQ(p.positional, (S{"--metric", "-x"}));
  EXPECT_FALSE(p.value("--metric"));
}

TEST(Args, ValueMayLookLikeAnOption) { EXPECT_EQ(ok({"--metric", "--allow-missing"}).value("--metric"), "--allow-missing"); }

TEST(Args, ErrorsAreValues) {
  EXPECT_EQ(bad({"--metric"}).str(), "--metric: needs a value");
  EXPECT_EQ(bad({"--metric=a", "--metric", "b"}).str(), "--metric: given twice");
  EXPECT_EQ(bad({"--allow-missing=yes"}).str(), "--allow-missing: takes no value");
  const ParseError e = bad({"--metirc=TFLOPS"});
  EXPECT_EQ(e.option, "--metirc");
  EXPECT_EQ(e.message, "unknown option");
  EXPECT_EQ(e.suggestion, "--metric");
  EXPECT_EQ(e.str(), "--metirc: unknown option (did you mean --metric?)");
  EXPECT_EQ(bad({"--zzzzzzzz"}).suggestion, std::nullopt);
  EXPECT_EQ(bad({"--zzzzzzzz"}).str(), "--zzzzzzzz: unknown option");
}

TEST(Args, AnUnknownOptionIsQuotedEscapedAndShort) {
  EXPECT_EQ(bad({"--metr\x1b[2Jic"}).str(), "--metr\\x1b[2Jic: unknown option");
  const std::string s = bad({"--" + std::string(1 << 20, 'z')}).str();
  EXPECT_LT(s.size(), 1000u);
  EXPECT_NE(s.find("unknown option"), std::string::npos);
}

TEST(Args, LastWinsWhenAsked) {
  OptionSet o = kTool;
  o.last_wins = true;
  EXPECT_EQ(ok({"--metric=a", "--metric", "b"}, o).value("--metric"), "b");
}

TEST(Args, PassThroughKeepsOrderAndIndices) {
  const OptionSet o{{"--device"}, {"--help"}, {}, {"--benchmark_"}, {"--help"}, true};
  const S in{"--benchmark_filter=x", "--device", "3", "--mpi", "pos", "--help", "--benchmark_out=o.json", "--", "--device"};
  const Parsed p = ok(in, o);
  EXPECT_EQ(p.value("--device"), "3");  // before `--` only
  EXPECT_TRUE(p.flag("--help"));
  std::vector<std::string> passed;
  for (std::size_t i : p.passed) passed.push_back(in[i]);
  EXPECT_EQ(passed, (S{"--benchmark_filter=x", "--mpi", "pos", "--help", "--benchmark_out=o.json", "--", "--device"}));
}

TEST(Args, KeepPassedRewritesArgv) {
  std::vector<std::string> store{"bench", "--device", "1", "--benchmark_filter=a"};
  std::vector<char*> argv;
  for (auto& s : store) argv.push_back(s.data());
  argv.push_back(nullptr);
  int argc = 4;
  const OptionSet o{{"--device"}, {}, {}, {}, {}, true};
  Parsed p;
  ParseError e;
  ASSERT_TRUE(parse(from_argv(argc, argv.data()), o, &p, &e));
  keep_passed(&argc, argv.data(), p);
  ASSERT_EQ(argc, 2);
  EXPECT_STREQ(argv[0], "bench");
  EXPECT_STREQ(argv[1], "--benchmark_filter=a");
  EXPECT_EQ(argv[2], nullptr);
}

TEST(Args, Numbers) {
  EXPECT_EQ(to_integer("42"), 42);
  EXPECT_EQ(to_integer("-3"), -3);
  EXPECT_EQ(to_integer("4x"), std::nullopt);
  EXPECT_EQ(to_integer(""), std::nullopt);
  EXPECT_EQ(to_number("0.5"), 0.5);
  EXPECT_EQ(to_number("1e3"), 1000.0);
  EXPECT_EQ(to_number("1,5"), std::nullopt);
}

TEST(Suggest, EditDistanceCountsSwapsAsOne) {
  EXPECT_EQ(edit_distance("gate", "gate"), 0u);
  EXPECT_EQ(edit_distance("gaet", "gate"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);  // optimal string alignment, not full Damerau
}

TEST(Suggest, NearestIsCloseEnoughOrNothing) {
  const S names{"--suite", "--device", "--specs"};
  EXPECT_EQ(nearest("--siute", names), "--suite");
  EXPECT_EQ(nearest("--suite", names), std::nullopt);  // itself is no suggestion
  EXPECT_EQ(nearest("--xyz", names), std::nullopt);
  EXPECT_EQ(nearest("ab", S{"ac", "ad"}), std::nullopt);  // one edit of two letters is too far
  EXPECT_EQ(nearest("abc", S{"abd", "abe"}), "abd");     // ties: the earlier
  EXPECT_EQ(did_you_mean("--devcie", names), " (did you mean --device?)");
  EXPECT_EQ(did_you_mean("--nothing-near", names), "");
}

TEST(Options, UnknownArgumentsLeftOverSuggestOurs) {
  std::vector<std::string> store{"bench", "--benchmark_filter=a", "--v=2", "--help"};
  std::vector<char*> argv;
  for (auto& s : store) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::string err;
  EXPECT_TRUE(check_passed_arguments(4, argv.data(), {}, &err)) << err;
  std::vector<std::string> typo{"bench", "--suiet=full"};
  std::vector<char*> tv{typo[0].data(), typo[1].data(), nullptr};
  EXPECT_FALSE(check_passed_arguments(2, tv.data(), {}, &err));
  EXPECT_EQ(err, "--suiet: unknown option (did you mean --suite?)");
  std::vector<std::string> fam{"bench", "--mpii"};
  std::vector<char*> fv{fam[0].data(), fam[1].data(), nullptr};
  EXPECT_FALSE(check_passed_arguments(2, fv.data(), {"--mpi"}, &err));
  EXPECT_EQ(err, "--mpii: unknown option (did you mean --mpi?)");
  std::vector<std::string> pos{"bench", "stray"};
  std::vector<char*> pv{pos[0].data(), pos[1].data(), nullptr};
  EXPECT_FALSE(check_passed_arguments(2, pv.data(), {}, &err));
}

// Issue 35: other tools' habits. nvbench's -d is --device; nccl-tests' -g has no gpucheck
// meaning, so the error says what to use instead.
TEST(Options, DashDIsDeviceAndDashGSaysWhatToUse) {
  std::vector<std::string> store{"bench", "-d", "3", "--benchmark_filter=a"};
  std::vector<char*> argv;
  for (auto& s : store) argv.push_back(s.data());
  argv.push_back(nullptr);
  int argc = 4;
  Options o;
  std::string err;
  ASSERT_TRUE(parse_options(&argc, argv.data(), &o, &err)) << err;
  EXPECT_EQ(o.device, 3);
  EXPECT_EQ(argc, 2);  // -d 3 taken, the filter passed on
  std::vector<std::string> eq{"bench", "-d=1"};
  std::vector<char*> ev{eq[0].data(), eq[1].data(), nullptr};
  argc = 2;
  ASSERT_TRUE(parse_options(&argc, ev.data(), &o, &err)) << err;
  EXPECT_EQ(o.device, 1);
  std::vector<std::string> bad{"bench", "-d", "x"};
  std::vector<char*> bv{bad[0].data(), bad[1].data(), bad[2].data(), nullptr};
  argc = 3;
  EXPECT_FALSE(parse_options(&argc, bv.data(), &o, &err));
  EXPECT_NE(err.find("--device wants a device index"), std::string::npos) << err;

  std::vector<std::string> g{"bench", "-g", "8"};
  std::vector<char*> gv{g[0].data(), g[1].data(), g[2].data(), nullptr};
  EXPECT_FALSE(check_passed_arguments(3, gv.data(), {}, &err));
  EXPECT_EQ(err.rfind("-g: unknown option (nccl-tests' GPUs per process", 0), 0u) << err;
  EXPECT_NE(err.find("CUDA_VISIBLE_DEVICES"), std::string::npos) << err;
}

TEST(Args, ForeignFlagHintsAndAliases) {
  ASSERT_TRUE(foreign_flag_hint("-g"));
  ASSERT_TRUE(foreign_flag_hint("--ngpus"));
  EXPECT_FALSE(foreign_flag_hint("-G"));
  EXPECT_FALSE(foreign_flag_hint(""));
  EXPECT_FALSE(foreign_flag_hint("--device"));
  OptionSet o{{"--device"}, {}};
  o.aliases = {{"-d", "--device"}};
  EXPECT_EQ(ok({"-d", "2"}, o).value("--device"), "2");
  EXPECT_EQ(ok({"-d=5"}, o).value("--device"), "5");
  Parsed p;
  ParseError e;
  EXPECT_FALSE(parse(S{"-g", "1"}, o, &p, &e));
  EXPECT_EQ(e.message, "unknown option");
  ASSERT_TRUE(e.hint);
  EXPECT_EQ(e.str().rfind("-g: unknown option (nccl-tests'", 0), 0u);
  EXPECT_FALSE(parse(S{"-x"}, o, &p, &e));
  EXPECT_FALSE(e.hint);  // no habit of another tool: no hint
}

}  // namespace
}  // namespace gpucheck::args
