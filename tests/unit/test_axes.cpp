// The axes model (gpucheck/core/axes.hpp): the syntax of --axis, the expansion of values
// (lists, ranges, powers of two, units, dtypes, words), its bounds and errors, and the product.
#include "gpucheck/core/axes.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpucheck::axes {
namespace {

Axis integer(std::string name) {
  Axis a;
  a.name = std::move(name);
  a.help = "a count";
  return a;
}

Axis bytes_axis() {
  Axis a = integer("bytes");
  a.kind = Kind::bytes;
  a.max = std::int64_t{1} << 40;
  return a;
}

std::vector<std::int64_t> ns(const Axis& a, std::string_view v, bool pow2 = false) {
  std::vector<Value> out;
  std::string err;
  EXPECT_TRUE(expand(a, v, pow2, &out, &err)) << v << ": " << err;
  std::vector<std::int64_t> r;
  for (const Value& x : out) r.push_back(x.n);
  return r;
}

std::string fails(const Axis& a, std::string_view v, bool pow2 = false) {
  std::vector<Value> out;
  std::string err;
  EXPECT_FALSE(expand(a, v, pow2, &out, &err)) << v;
  return err;
}

using V = std::vector<std::int64_t>;

Axis words_axis() {
  Axis a = integer("variant");
  a.kind = Kind::word;
  a.words = {"a", "b"};
  return a;
}

Axis words(std::string name, Kind kind, std::vector<std::string> ws) {
  Axis a;
  a.name = std::move(name);
  a.kind = kind;
  a.words = std::move(ws);
  return a;
}

TEST(Axes, ParsesNameAndValues) {
  Override o;
  std::string err;
  ASSERT_TRUE(parse_override("M=1024,4096", &o, &err));
  EXPECT_EQ(o.name, "M");
  EXPECT_EQ(o.values, "1024,4096");
  EXPECT_FALSE(o.pow2);
  ASSERT_TRUE(parse_override("bytes[pow2]=[3:33]", &o, &err));
  EXPECT_EQ(o.name, "bytes");
  EXPECT_TRUE(o.pow2);
  EXPECT_EQ(o.values, "[3:33]");
  ASSERT_TRUE(parse_override("M=", &o, &err));  // an empty list is the axis's error, with its name
  EXPECT_FALSE(parse_override("M", &o, &err));
  EXPECT_NE(err.find("NAME=VALUES"), std::string::npos);
  EXPECT_FALSE(parse_override("=4", &o, &err));
  EXPECT_FALSE(parse_override("[pow2]=4", &o, &err));
}

TEST(Axes, ListsRangesAndPowers) {
  const Axis m = integer("M");
  EXPECT_EQ(ns(m, "1024"), (V{1024}));
  EXPECT_EQ(ns(m, "1024,4096,16"), (V{1024, 4096, 16}));
  EXPECT_EQ(ns(m, "[1:4]"), (V{1, 2, 3, 4}));           // both ends included
  EXPECT_EQ(ns(m, "[1:10:4]"), (V{1, 5, 9}));           // the stop need not be reached
  EXPECT_EQ(ns(m, "[8:8]"), (V{8}));                    // one value
  EXPECT_EQ(ns(m, "[1,3,5]"), (V{1, 3, 5}));            // nvbench's bracketed list
  EXPECT_EQ(ns(m, "2^[9:11]"), (V{512, 1024, 2048}));
  EXPECT_EQ(ns(m, "2^10"), (V{1024}));
  EXPECT_EQ(ns(m, "[9:11]", true), (V{512, 1024, 2048}));  // M[pow2]=[9:11]
  EXPECT_EQ(ns(m, "[0:4:2]", true), (V{1, 4, 16}));
  EXPECT_EQ(ns(m, "2^[1:2],100,[7:8]"), (V{2, 4, 100, 7, 8}));  // items mixed
}

TEST(Axes, DuplicatesAreDroppedFirstKept) {
  const Axis m = integer("M");
  EXPECT_EQ(ns(m, "4,2,4,2"), (V{4, 2}));
  EXPECT_EQ(ns(m, "[1:3],2^1,3"), (V{1, 2, 3}));
  const Axis d = words("dtype", Kind::dtype, {"fp16", "bf16"});
  std::vector<Value> out;
  std::string err;
  ASSERT_TRUE(expand(d, "bf16,fp16,bf16", false, &out, &err));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].text, "bf16");
}

TEST(Axes, SizesTakeUnits) {
  const Axis b = bytes_axis();
  EXPECT_EQ(ns(b, "4KiB"), (V{4096}));
  EXPECT_EQ(ns(b, "4K,1M,1G"), (V{4096, 1 << 20, 1 << 30}));  // nccl-tests' K/M/G are binary
  EXPECT_EQ(ns(b, "8GiB"), (V{std::int64_t{8} << 30}));
  EXPECT_EQ(ns(b, "1KB,1MB"), (V{1000, 1000000}));           // KB/MB decimal
  EXPECT_EQ(ns(b, "8,8B"), (V{8}));
  EXPECT_EQ(ns(b, "[3:5]", true), (V{8, 16, 32}));
  EXPECT_EQ(ns(b, "[1KiB:4KiB:1KiB]"), (V{1024, 2048, 3072, 4096}));
  std::vector<Value> out;
  std::string err;
  ASSERT_TRUE(expand(b, "256MiB,1536", false, &out, &err));
  EXPECT_EQ(out[0].text, "256MiB");  // the name's label
  EXPECT_EQ(out[1].text, "1536B");
  EXPECT_NE(fails(b, "4XiB").find("not a size"), std::string::npos);
  EXPECT_NE(fails(b, "KiB").find("not a size"), std::string::npos);
  // A count takes no unit, with a reason that says so.
  EXPECT_NE(fails(integer("M"), "4KiB").find("is a count"), std::string::npos);
}

TEST(Axes, BoundsAndMalformedValuesNameTheAxis) {
  const Axis m = integer("M");  // 1 to 2^31
  EXPECT_EQ(ns(m, "1"), (V{1}));
  EXPECT_EQ(ns(m, "2147483648"), (V{std::int64_t{1} << 31}));
  EXPECT_NE(fails(m, "-4").find("out of range for M"), std::string::npos);
  EXPECT_NE(fails(m, "0").find("out of range for M"), std::string::npos);
  EXPECT_NE(fails(m, "2147483649").find("out of range for M"), std::string::npos);
  EXPECT_NE(fails(m, "2^[30:32]").find("out of range"), std::string::npos);
  EXPECT_NE(fails(m, "abc").find("not a whole number"), std::string::npos);
  EXPECT_NE(fails(m, "1.5").find("not a whole number"), std::string::npos);
  EXPECT_NE(fails(m, "[4:1]").find("empty range"), std::string::npos);
  EXPECT_NE(fails(m, "[1:4:0]").find("step must be positive"), std::string::npos);
  EXPECT_NE(fails(m, "[1:4:-1]").find("step must be positive"), std::string::npos);
  EXPECT_NE(fails(m, "[1:2:3:4]").find("not a range"), std::string::npos);
  EXPECT_NE(fails(m, "[1:4").find("without closing"), std::string::npos);
  EXPECT_NE(fails(m, "2^[1:2]", true).find("2^ inside [pow2]"), std::string::npos);
}

TEST(Axes, EmptyListsAreErrors) {
  const Axis m = integer("M");
  EXPECT_EQ(fails(m, ""), "no values");
  EXPECT_NE(fails(m, "1,,2").find("empty value"), std::string::npos);
  EXPECT_NE(fails(m, "1,").find("empty value"), std::string::npos);
  EXPECT_NE(fails(m, "[]").find("not"), std::string::npos);
}

TEST(Axes, OverflowIsAnErrorNotAWrap) {
  Axis b = bytes_axis();
  b.max = std::numeric_limits<std::int64_t>::max();
  EXPECT_NE(fails(b, "9223372036854775808").find("not a size"), std::string::npos);  // past int64
  EXPECT_NE(fails(b, "8589934592GiB").find("not a size"), std::string::npos);       // 2^33 GiB = 2^63
  EXPECT_EQ(ns(b, "4194303TiB"), (V{std::int64_t{4194303} << 40}));
  EXPECT_NE(fails(b, "2^63").find("exponents 0 to 62"), std::string::npos);
  EXPECT_EQ(ns(b, "2^62"), (V{std::int64_t{1} << 62}));
  // A range that ends at the largest value stops there (no step past it, no wrap).
  EXPECT_EQ(ns(b, "[9223372036854775806:9223372036854775807]"),
            (V{std::numeric_limits<std::int64_t>::max() - 1, std::numeric_limits<std::int64_t>::max()}));
  EXPECT_NE(fails(integer("M"), "[1:1000000000]").find("more than"), std::string::npos);
}

// [start:stop] whose stop - start does not fit in int64 (UB before: a signed overflow under
// -fsanitize=undefined) is counted in uint64; [INT64_MIN:INT64_MAX] is too many, not a wrap.
TEST(Axes, RangesAcrossTheWholeInt64AreCountedNotOverflowed) {
  Axis w = integer("W");
  w.min = std::numeric_limits<std::int64_t>::min();
  w.max = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(ns(w, "[-9223372036854775808:9223372036854775807:9223372036854775807]"), (V{lo, -1, hi - 1}));
  EXPECT_EQ(ns(w, "[-9000000000000000000:9000000000000000000:9000000000000000000]"),
            (V{-9000000000000000000, 0, 9000000000000000000}));
  const std::string err = fails(w, "[-9223372036854775808:9223372036854775807]");
  EXPECT_NE(err.find("[-9223372036854775808:9223372036854775807]"), std::string::npos) << err;
  EXPECT_NE(err.find("more than 100000 values"), std::string::npos) << err;
  // On the family's axis (M: 1 to 2^31) the range is refused by count, before its bounds.
  EXPECT_NE(fails(integer("M"), "[-9000000000000000000:9000000000000000000]").find("more than"), std::string::npos);
}

// kMaxCases bounds the values a whole list names, counted before they are made: a list of
// many ranges (each under the cap) was every value made and deduplicated first, minutes and
// gigabytes for a long argument.
TEST(Axes, AListNamesAtMostTheCapOfValuesAcrossItsItems) {
  const Axis m = integer("M");
  EXPECT_EQ(ns(m, "[1:99999],100000").size(), 100000u);  // at the cap: allowed
  std::string err = fails(m, "[1:99999],[1:2]");
  EXPECT_NE(err.find("'[1:2]'"), std::string::npos) << err;
  EXPECT_NE(err.find("100000 values"), std::string::npos) << err;
  err = fails(m, "[1:100000],7");
  EXPECT_NE(err.find("more than 100000 values"), std::string::npos) << err;
  std::string many = "[1:99999]";
  for (int i = 0; i < 20000; ++i) many += ",[1:99999]";  // 200 KB naming 2e9 values
  err = fails(m, many);
  EXPECT_NE(err.find("100000 values"), std::string::npos);
  std::string words;
  for (int i = 0; i <= 100000; ++i) words += (i ? ",a" : "a");
  EXPECT_NE(fails(words_axis(), words).find("more than 100000 values"), std::string::npos);
}

TEST(Axes, WordsDtypesAndBooleans) {
  const Axis w = words("variant", Kind::word, {"cublaslt", "cublaslt_sustained"});
  std::vector<Value> out;
  std::string err;
  ASSERT_TRUE(expand(w, "cublaslt_sustained", false, &out, &err));
  EXPECT_EQ(out.at(0).text, "cublaslt_sustained");
  ASSERT_TRUE(expand(w, "[cublaslt,cublaslt_sustained]", false, &out, &err));  // nvbench's [A,B]
  EXPECT_EQ(out.size(), 2u);
  EXPECT_FALSE(expand(w, "cublas", false, &out, &err));
  EXPECT_EQ(err, "'cublas' is not one of cublaslt, cublaslt_sustained");
  EXPECT_FALSE(expand(w, "[2:3]", true, &out, &err));
  const Axis c = words("causal", Kind::boolean, {});
  ASSERT_TRUE(expand(c, "false,true,1,no", false, &out, &err));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (Value{0, "false"}));
  EXPECT_EQ(out[1], (Value{1, "true"}));
  EXPECT_FALSE(expand(c, "maybe", false, &out, &err));
}

// A GEMM-like model: quick multiplies variant a,b with M 8; full is variant a with M 8,16;
// accept is one fixed set (no defaults: it takes no -a). N, K and P follow (P is K / 2).
CaseModel gemm_model() {
  Axis v = words("variant", Kind::word, {"a", "b"});
  Axis m = integer("M");
  Axis n = integer("N");
  n.follows = "M";
  Axis k = integer("K");
  k.follows = "N";
  Axis p = integer("P");
  p.follows = "K";
  p.min = 0;
  p.follow = [](std::int64_t x) { return x / 2; };
  CaseModel model{"gemm", {v, m, n, k, p}, {}};
  model.suites = {{Suite::quick, {{"variant", "a,b"}, {"M", "8"}}, {{}}},
                  {Suite::full, {{"variant", "a"}, {"M", "8,16"}}, {{}}},
                  {Suite::accept, {}, {{{"variant", "b"}, {"M", "32"}}}}};
  return model;
}

std::vector<std::string> named(const std::vector<Point>& ps) {
  std::vector<std::string> out;
  for (const Point& p : ps) {
    std::string s;
    for (const Value& v : p.values) s += (s.empty() ? "" : " ") + v.text;
    out.push_back(s);
  }
  return out;
}

bool run_select(const CaseModel& model, Suite s, const std::vector<std::string>& args, std::vector<Point>* out,
                std::string* err) {
  std::vector<Override> os;
  for (const std::string& a : args) {
    Override o;
    if (!parse_override(a, &o, err)) return false;
    os.push_back(o);
  }
  return select(model, s, os, out, err);
}

TEST(Axes, ProductFirstAxisOutermostFollowersTakeTheirLeader) {
  const CaseModel model = gemm_model();
  std::vector<Point> ps;
  std::string err;
  ASSERT_TRUE(run_select(model, Suite::quick, {}, &ps, &err)) << err;
  EXPECT_EQ(named(ps), (std::vector<std::string>{"a 8 8 8 4", "b 8 8 8 4"}));  // the suite's defaults
  ASSERT_TRUE(run_select(model, Suite::full, {}, &ps, &err));
  EXPECT_EQ(named(ps), (std::vector<std::string>{"a 8 8 8 4", "a 16 16 16 8"}));
  ASSERT_TRUE(run_select(model, Suite::quick, {"M=2,4", "K=3"}, &ps, &err));
  EXPECT_EQ(named(ps), (std::vector<std::string>{"a 2 2 3 1", "a 4 4 3 1", "b 2 2 3 1", "b 4 4 3 1"}));
  ASSERT_TRUE(run_select(model, Suite::quick, {"variant=b", "N=[1:2]", "M=7"}, &ps, &err));
  EXPECT_EQ(named(ps), (std::vector<std::string>{"b 7 1 1 0", "b 7 2 2 1"}));
  EXPECT_EQ(ps[1].n("K"), 2);
  EXPECT_EQ(ps[1].text("variant"), "b");
  EXPECT_THROW((void)ps[0].at("Q"), std::out_of_range);
}

TEST(Axes, UnknownDuplicateAndBadValuesAreOneLineNamingTheAxes) {
  const CaseModel model = gemm_model();
  std::vector<Point> ps;
  std::string err;
  EXPECT_FALSE(run_select(model, Suite::quick, {"Q=1"}, &ps, &err));
  EXPECT_EQ(err, "--axis Q=1: unknown axis 'Q' (gemm's axes: variant, M, N, K, P)");
  // A near name is suggested: another case, a typo.
  EXPECT_FALSE(run_select(model, Suite::quick, {"m=1"}, &ps, &err));
  EXPECT_NE(err.find("unknown axis 'm' (did you mean M?)"), std::string::npos) << err;
  EXPECT_FALSE(run_select(model, Suite::quick, {"varaint=a"}, &ps, &err));
  EXPECT_NE(err.find("(did you mean variant?)"), std::string::npos) << err;
  EXPECT_FALSE(run_select(model, Suite::quick, {"M=-4"}, &ps, &err));
  EXPECT_EQ(err, "--axis M=-4: -4 is out of range for M (1 to 2147483648) (gemm's axes: variant, M, N, K, P)");
  EXPECT_FALSE(run_select(model, Suite::quick, {"M=1", "M=2"}, &ps, &err));
  EXPECT_NE(err.find("M given twice"), std::string::npos);
  EXPECT_FALSE(run_select(model, Suite::quick, {"M="}, &ps, &err));
  EXPECT_EQ(err, "--axis M=: no values (gemm's axes: variant, M, N, K, P)");
  EXPECT_EQ(err.find('\n'), std::string::npos);
  EXPECT_FALSE(run_select(model, Suite::accept, {"M=1"}, &ps, &err));
  EXPECT_NE(err.find("accept suite's cases are fixed"), std::string::npos);
}

// What the user typed is quoted escaped and cut short: a newline or an escape sequence in a
// value made the "one-line reason" several lines (or drove the terminal), and a 1 MB value a
// 1 MB line, several times over.
TEST(Axes, ErrorLinesQuoteTheArgumentEscapedAndShort) {
  const CaseModel model = gemm_model();
  std::vector<Point> ps;
  std::string err;
  EXPECT_FALSE(run_select(model, Suite::quick, {"M=4\n5"}, &ps, &err));
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  EXPECT_NE(err.find("M=4\\x0a5"), std::string::npos) << err;
  EXPECT_FALSE(run_select(model, Suite::quick, {"Q\x1b[2J=1"}, &ps, &err));
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << err;
  Override o;
  EXPECT_FALSE(parse_override("M\r", &o, &err));
  EXPECT_EQ(err.find('\r'), std::string::npos) << err;
  const std::string huge = "M=" + std::string(1 << 20, '9');
  EXPECT_FALSE(run_select(model, Suite::quick, {huge}, &ps, &err));
  EXPECT_LT(err.size(), 1000u);
  EXPECT_NE(err.find("--axis M=999"), std::string::npos) << err;  // still names the option and value
  EXPECT_NE(err.find("bytes)"), std::string::npos) << err;
  EXPECT_FALSE(bytes_range_override("8", "x\ny", "2", &o, &err));
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  EXPECT_NE(err.find("-e x\\x0ay"), std::string::npos) << err;
}

TEST(Axes, AProductPastTheLimitIsAnError) {
  const CaseModel model = gemm_model();
  std::vector<Point> ps;
  std::string err;
  ASSERT_TRUE(run_select(model, Suite::quick, {"M=[1:50000]", "variant=a,b"}, &ps, &err)) << err;
  EXPECT_EQ(ps.size(), 100000u);  // at the limit: allowed
  EXPECT_FALSE(run_select(model, Suite::quick, {"M=[1:50001]", "variant=a,b"}, &ps, &err));
  EXPECT_NE(err.find("more than 100000 cases"), std::string::npos);
  EXPECT_FALSE(run_select(model, Suite::quick, {"M=[1:100000]", "N=[1:100000]", "K=[1:100000]"}, &ps, &err));
}

// A suite's sets are the same product as -a: each set in order, the axes it does not name
// from the suite's defaults, followers from their leaders; a set's word may be one of the
// axis's suite_words, which a user may not give.
TEST(Axes, SuiteSetsAreProductsInOrderWithTheDefaults) {
  CaseModel model = gemm_model();
  model.axes[0].suite_words = {"burn"};
  model.suites[0].sets = {{{"variant", "b"}}, {{"M", "2,4"}, {"K", "3"}}, {{"variant", "burn"}, {"M", "1"}}};
  std::vector<Point> ps;
  std::string err;
  ASSERT_TRUE(run_select(model, Suite::quick, {}, &ps, &err)) << err;
  EXPECT_EQ(named(ps), (std::vector<std::string>{"b 8 8 8 4", "a 2 2 3 1", "a 4 4 3 1", "b 2 2 3 1", "b 4 4 3 1",
                                                 "burn 1 1 1 0"}));
  EXPECT_EQ(named(suite_points(model, Suite::quick)), named(ps));
  // A suite the model does not declare has no case; a declared suite without defaults is
  // its sets alone.
  ASSERT_TRUE(run_select(model, Suite::burn, {}, &ps, &err)) << err;
  EXPECT_TRUE(ps.empty());
  EXPECT_EQ(named(suite_points(model, Suite::accept)), (std::vector<std::string>{"b 32 32 32 16"}));
  // The user's -a multiplies with the defaults, never with the sets, and cannot name a suite word.
  ASSERT_TRUE(run_select(model, Suite::quick, {"M=5"}, &ps, &err)) << err;
  EXPECT_EQ(named(ps), (std::vector<std::string>{"a 5 5 5 2", "b 5 5 5 2"}));
  EXPECT_FALSE(run_select(model, Suite::quick, {"variant=burn"}, &ps, &err));
  EXPECT_EQ(err, "--axis variant=burn: 'burn' is not one of a, b (gemm's axes: variant, M, N, K, P)");
  // Suites without defaults (acceptance's, the burn's) refuse -a, with the same line.
  EXPECT_FALSE(run_select(model, Suite::accept, {"M=1"}, &ps, &err));
  EXPECT_EQ(err, "--axis M=1: the accept suite's cases are fixed (acceptance judges them); axes apply to --suite quick or full");
  EXPECT_FALSE(run_select(model, Suite::burn, {"M=1"}, &ps, &err));
  EXPECT_NE(err.find("the burn suite's cases are fixed"), std::string::npos);
}

// A set its axes refuse, or an axis neither a set nor the defaults give, is a bug of the
// family's table: select says why, suite_points throws.
TEST(Axes, ABadSuiteSetIsALogicError) {
  CaseModel model = gemm_model();
  model.suites[0].sets = {{{"M", "0"}}};
  std::vector<Point> ps;
  std::string err;
  EXPECT_FALSE(run_select(model, Suite::quick, {}, &ps, &err));
  EXPECT_NE(err.find("out of range for M"), std::string::npos) << err;
  EXPECT_THROW((void)suite_points(model, Suite::quick), std::logic_error);
  model = gemm_model();
  model.suites[1].defaults = {{"variant", "a"}};  // M given neither by the set nor the defaults
  EXPECT_THROW((void)suite_points(model, Suite::full), std::logic_error);
}

// Help and --list --format json show each suite's defaults of an axis, none for a follower.
TEST(Axes, HelpAndJsonShowTheSuitesDefaults) {
  const CaseModel model = gemm_model();
  const std::string h = axes_help(model);
  EXPECT_NE(h.find("quick: a,b; full: a"), std::string::npos) << h;
  EXPECT_NE(h.find("quick: 8; full: 8,16"), std::string::npos) << h;
  EXPECT_NE(h.find("follows M unless given"), std::string::npos) << h;
  const std::string j = listed_json(model, Suite::full, {}, false);
  EXPECT_NE(j.find("\"quick\": \"8\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"full\": \"8,16\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"device\": \"this\""), std::string::npos) << j;
}

TEST(Axes, NcclTestsRangeIsTheBytesAxis) {
  Override o;
  std::string err;
  ASSERT_TRUE(bytes_range_override("8", "8G", "2", &o, &err)) << err;
  EXPECT_EQ(o.name, "bytes");
  std::vector<Value> out;
  ASSERT_TRUE(expand(bytes_axis(), o.values, false, &out, &err)) << err;
  ASSERT_EQ(out.size(), 31u);  // 8 B to 8 GiB
  EXPECT_EQ(out.front().text, "8B");
  EXPECT_EQ(out.back().text, "8GiB");
  ASSERT_TRUE(bytes_range_override("1M", "10M", "4", &o, &err));
  EXPECT_EQ(o.values, "1048576,4194304");
  ASSERT_TRUE(bytes_range_override("4611686018427387904", "9223372036854775807", "2", &o, &err));  // no wrap
  EXPECT_EQ(o.values, "4611686018427387904");
  EXPECT_FALSE(bytes_range_override("0", "8", "2", &o, &err));
  EXPECT_FALSE(bytes_range_override("8", "4", "2", &o, &err));
  EXPECT_FALSE(bytes_range_override("8", "64", "1", &o, &err));
  EXPECT_FALSE(bytes_range_override("8", "64", "x", &o, &err));
}

TEST(Axes, FilterAndJson) {
  std::vector<Listed> cs{{"m/a/1", {{"M", "1"}}}, {"m/b/2", {{"M", "2"}}}};
  std::string err;
  auto kept = cs;
  ASSERT_TRUE(filter_names("a/", &kept, &err));
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].name, "m/a/1");
  kept = cs;
  ASSERT_TRUE(filter_names("-a/", &kept, &err));
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].name, "m/b/2");
  EXPECT_FALSE(filter_names("(", &kept, &err));
  // The reason quotes the filter as given, '-' included; '-' alone keeps nothing: refused.
  EXPECT_FALSE(filter_names("-(", &kept, &err));
  EXPECT_NE(err.find("--benchmark_filter=-("), std::string::npos) << err;
  kept = cs;
  EXPECT_FALSE(filter_names("-", &kept, &err));
  EXPECT_NE(err.find("--benchmark_filter=-"), std::string::npos) << err;
  EXPECT_EQ(kept.size(), 2u);
  const std::string j = listed_json(gemm_model(), Suite::quick, cs, true);
  EXPECT_NE(j.find("\"device\": \"reference\""), std::string::npos);
  EXPECT_NE(j.find("\"name\": \"m/b/2\""), std::string::npos);
  EXPECT_NE(j.find("\"follows\": \"M\""), std::string::npos);
  EXPECT_NE(axes_help(gemm_model()).find("N"), std::string::npos);
}

}  // namespace
}  // namespace gpucheck::axes
