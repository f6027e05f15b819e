// core/regex.hpp: the one filter type of every command (POSIX extended, matched by the C
// library), which must neither recurse per character nor backtrack exponentially.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "gpucheck/core/regex.hpp"

namespace {

using gpucheck::Regex;

TEST(Regex, SearchesLikeBenchmarkFilter) {
  std::string err;
  const auto re = Regex::compile("^(launch|pcie)/.*pageable", &err);
  ASSERT_TRUE(re) << err;
  EXPECT_TRUE(re->search("pcie/h2d/pageable/64MiB"));
  EXPECT_TRUE(re->search("launch/x/pageable"));
  EXPECT_FALSE(re->search("matmul/pcie/pageable"));  // anchored
  EXPECT_FALSE(re->search(""));
  EXPECT_EQ(re->pattern(), "^(launch|pcie)/.*pageable");
  const auto any = Regex::compile("", &err);  // regcomp's empty pattern matches everything
  ASSERT_TRUE(any);
  EXPECT_TRUE(any->search("x"));
}

TEST(Regex, ExtendedSyntaxNotEcmaScript) {
  std::string err;
  const auto plus = Regex::compile("a+b", &err);  // ERE: + is a repetition
  ASSERT_TRUE(plus);
  EXPECT_TRUE(plus->search("xaab"));
  const auto digit = Regex::compile("^[0-9]+$", &err);
  ASSERT_TRUE(digit);
  EXPECT_TRUE(digit->search("123"));
  EXPECT_FALSE(digit->search("12a"));
}

TEST(Regex, RefusesWhatDoesNotCompileWithAReason) {
  for (const char* bad : {"(", "a{2,1}", "[z-a]", "*)"}) {
    std::string err;
    EXPECT_FALSE(Regex::compile(bad, &err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
  EXPECT_FALSE(Regex::compile("(", nullptr));  // no reason asked for: still refused
}

// std::regex overflowed the stack on a 60 KB name (SIGSEGV) and took minutes on (a*)*b: both
// answer here; a crash or a hang is the failure, not a duration.
TEST(Regex, LongTextAndNestedStarsAnswer) {
  std::string err;
  const auto dot = Regex::compile("x/.*b", &err);
  ASSERT_TRUE(dot);
  const std::string long_name = "x/" + std::string(1'000'000, 'a');
  EXPECT_FALSE(dot->search(long_name));
  EXPECT_TRUE(dot->search(long_name + "b"));
  const auto nested = Regex::compile("(a*)*b", &err);
  ASSERT_TRUE(nested);
  EXPECT_FALSE(nested->search(std::string(29, 'a')));
  EXPECT_FALSE(nested->search(std::string(100'000, 'a')));
  EXPECT_TRUE(nested->search(std::string(29, 'a') + "b"));
}

TEST(Regex, CopiesShareOneCompiledExpression) {
  std::string err;
  std::optional<Regex> a = Regex::compile("k", &err);
  ASSERT_TRUE(a);
  const Regex b = *a;
  a.reset();  // the copy outlives the original
  EXPECT_TRUE(b.search("kk"));
}

}  // namespace
