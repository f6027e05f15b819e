#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpucheck/core/options.hpp"

namespace gpucheck {
namespace {

struct Argv {
  std::vector<std::string> store;
  std::vector<char*> ptrs;
  int argc = 0;
  explicit Argv(std::vector<std::string> a) : store(std::move(a)) {
    for (auto& s : store) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
    argc = static_cast<int>(store.size());
  }
  std::vector<std::string> rest() const {
    std::vector<std::string> r;
    for (int i = 0; i < argc; ++i) r.emplace_back(ptrs[static_cast<std::size_t>(i)]);
    return r;
  }
};

TEST(Options, DefaultsAreDeviceZeroQuick) {
  Argv a({"bench"});
  Options o;
  std::string err;
  ASSERT_TRUE(parse_options(&a.argc, a.ptrs.data(), &o, &err));
  EXPECT_EQ(o.device, 0);
  EXPECT_EQ(o.suite, Suite::quick);
  EXPECT_FALSE(o.help);
}

TEST(Options, StripsOursAndKeepsGoogleBenchmarkFlagsInOrder) {
  Argv a({"bench", "--benchmark_filter=bf16", "--device", "3", "--suite=full", "--benchmark_out=x.json",
          "--specs", "s.json"});
  Options o;
  std::string err;
  ASSERT_TRUE(parse_options(&a.argc, a.ptrs.data(), &o, &err)) << err;
  EXPECT_EQ(o.device, 3);
  EXPECT_EQ(o.suite, Suite::full);
  EXPECT_EQ(o.specs_path, "s.json");
  EXPECT_EQ(a.rest(), (std::vector<std::string>{"bench", "--benchmark_filter=bf16", "--benchmark_out=x.json"}));
  EXPECT_EQ(a.ptrs[static_cast<std::size_t>(a.argc)], nullptr);
}

// Every suite's name parses back to it (llm: bench_matmul's Llama-3 projections).
TEST(Options, EverySuiteNameRoundTrips) {
  for (Suite s : {Suite::quick, Suite::full, Suite::accept, Suite::burn, Suite::llm})
    EXPECT_EQ(parse_suite(to_string(s)), s) << to_string(s);
  Argv a({"bench", "--suite", "llm"});
  Options o;
  std::string err;
  ASSERT_TRUE(parse_options(&a.argc, a.ptrs.data(), &o, &err)) << err;
  EXPECT_EQ(o.suite, Suite::llm);
  Argv bad({"bench", "--suite", "llama"});
  EXPECT_FALSE(parse_options(&bad.argc, bad.ptrs.data(), &o, &err));
  EXPECT_EQ(err, "--suite wants quick, full, accept, burn or llm, got 'llama'");
}

TEST(Options, BadValuesAreErrorsAndLeaveArgvAlone) {
  for (auto bad : std::vector<std::vector<std::string>>{{"b", "--device", "x"},
                                                        {"b", "--device=-1"},
                                                        {"b", "--device=1x"},
                                                        {"b", "--device"},
                                                        {"b", "--suite", "medium"},
                                                        {"b", "--specs="}}) {
    Argv a(bad);
    Options o;
    std::string err;
    EXPECT_FALSE(parse_options(&a.argc, a.ptrs.data(), &o, &err)) << bad[1];
    EXPECT_FALSE(err.empty());
    EXPECT_EQ(a.argc, static_cast<int>(bad.size()));
  }
}

// A value or an unknown argument is quoted escaped and cut short: one line, no terminal
// escape sequence, however it was typed.
TEST(Options, ErrorLinesQuoteValuesEscapedAndShort) {
  for (auto bad : std::vector<std::vector<std::string>>{{"b", "--suite", "q\x1b[2J"},
                                                        {"b", "--device", "1\n2"},
                                                        {"b", "--format", std::string(1 << 20, 'x')}}) {
    Argv a(bad);
    Options o;
    std::string err;
    EXPECT_FALSE(parse_options(&a.argc, a.ptrs.data(), &o, &err));
    EXPECT_EQ(err.find_first_of("\n\x1b"), std::string::npos) << err;
    EXPECT_NE(err.find(bad[1]), std::string::npos) << err;
    EXPECT_LT(err.size(), 1000u);
  }
  Argv a({"b", "x\ny"});
  std::string err;
  EXPECT_FALSE(check_passed_arguments(a.argc, a.ptrs.data(), {}, &err));
  EXPECT_EQ(err, "unexpected argument 'x\\x0ay'");
}

TEST(Options, HelpIsSeenButPassedOn) {
  Argv a({"bench", "--help"});
  Options o;
  std::string err;
  ASSERT_TRUE(parse_options(&a.argc, a.ptrs.data(), &o, &err));
  EXPECT_TRUE(o.help);
  EXPECT_EQ(a.argc, 2);
  EXPECT_NE(options_help("bench").find("--suite"), std::string::npos);
}

TEST(Options, SpecsPathPrefersTheFlag) {
  Options o;
  o.specs_path = "mine.json";
  EXPECT_EQ(resolve_specs_path(o), "mine.json");
}

}  // namespace
}  // namespace gpucheck
