// The axes model (gpucheck/core/axes.hpp): the syntax of --axis, the expansion of values
// (lists, ranges, powers of two, units, dtypes, words), its bounds and errors, and the product.
#include "gpucheck/core/axes.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpucheck::axes {
namespace {

Axis integer(std::string name, std::string quick = "1", std::string full = "1") {
  Axis a;
  a.name = std::move(name);
  a.help = "a count";
  a.quick = std::move(quick);
  a.full = std::move(full);
  return a;
}

Axis bytes_axis() {
  Axis a = integer("bytes", "1GiB", "4KiB,1GiB");
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

std::vector<Axis> gemm_axes() {
  Axis v = words("variant", Kind::word, {"a", "b"});
  v.quick = "a,b";
  v.full = "a";
  Axis m = integer("M", "8", "8,16");
  Axis n = integer("N");
  n.follows = "M";
  Axis k = integer("K");
  k.follows = "N";
  Axis p = integer("P");
  p.follows = "K";
  p.min = 0;
  p.follow = [](std::int64_t x) { return x / 2; };
  return {v, m, n, k, p};
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

bool run_select(const std::vector<Axis>& axes, Suite s, const std::vector<std::string>& args, std::vector<Point>* out,
                std::string* err) {
  std::vector<Override> os;
  for (const std::string& a : args) {
    Override o;
    if (!parse_override(a, &o, err)) return false;
    os.push_back(o);
  }
  return select("gemm", axes, s, os, out, err);
}

TEST(Axes, ProductFirstAxisOutermostFollowersTakeTheirLeader) {
  const std::vector<Axis> axes = gemm_axes();
  std::vector<Point> ps;
  std::string err;
  ASSERT_TRUE(run_select(axes, Suite::quick, {}, &ps, &err)) << err;
  EXPECT_EQ(named(ps), (std::vector<std::string>{"a 8 8 8 4", "b 8 8 8 4"}));  // the suite's defaults
  ASSERT_TRUE(run_select(axes, Suite::full, {}, &ps, &err));
  EXPECT_EQ(named(ps), (std::vector<std::string>{"a 8 8 8 4", "a 16 16 16 8"}));
  ASSERT_TRUE(run_select(axes, Suite::quick, {"M=2,4", "K=3"}, &ps, &err));
  EXPECT_EQ(named(ps), (std::vector<std::string>{"a 2 2 3 1", "a 4 4 3 1", "b 2 2 3 1", "b 4 4 3 1"}));
  ASSERT_TRUE(run_select(axes, Suite::quick, {"variant=b", "N=[1:2]", "M=7"}, &ps, &err));
  EXPECT_EQ(named(ps), (std::vector<std::string>{"b 7 1 1 0", "b 7 2 2 1"}));
  EXPECT_EQ(ps[1].n("K"), 2);
  EXPECT_EQ(ps[1].text("variant"), "b");
  EXPECT_THROW((void)ps[0].at("Q"), std::out_of_range);
}

TEST(Axes, UnknownDuplicateAndBadValuesAreOneLineNamingTheAxes) {
  const std::vector<Axis> axes = gemm_axes();
  std::vector<Point> ps;
  std::string err;
  EXPECT_FALSE(run_select(axes, Suite::quick, {"Q=1"}, &ps, &err));
  EXPECT_EQ(err, "--axis Q=1: unknown axis 'Q' (gemm's axes: variant, M, N, K, P)");
  EXPECT_FALSE(run_select(axes, Suite::quick, {"M=-4"}, &ps, &err));
  EXPECT_EQ(err, "--axis M=-4: -4 is out of range for M (1 to 2147483648) (gemm's axes: variant, M, N, K, P)");
  EXPECT_FALSE(run_select(axes, Suite::quick, {"M=1", "M=2"}, &ps, &err));
  EXPECT_NE(err.find("M given twice"), std::string::npos);
  EXPECT_FALSE(run_select(axes, Suite::quick, {"M="}, &ps, &err));
  EXPECT_EQ(err, "--axis M=: no values (gemm's axes: variant, M, N, K, P)");
  EXPECT_EQ(err.find('\n'), std::string::npos);
  EXPECT_FALSE(run_select(axes, Suite::accept, {"M=1"}, &ps, &err));
  EXPECT_NE(err.find("accept suite's cases are fixed"), std::string::npos);
}

TEST(Axes, AProductPastTheLimitIsAnError) {
  const std::vector<Axis> axes = gemm_axes();
  std::vector<Point> ps;
  std::string err;
  ASSERT_TRUE(run_select(axes, Suite::quick, {"M=[1:50000]", "variant=a,b"}, &ps, &err)) << err;
  EXPECT_EQ(ps.size(), 100000u);  // at the limit: allowed
  EXPECT_FALSE(run_select(axes, Suite::quick, {"M=[1:50001]", "variant=a,b"}, &ps, &err));
  EXPECT_NE(err.find("more than 100000 cases"), std::string::npos);
  EXPECT_FALSE(run_select(axes, Suite::quick, {"M=[1:100000]", "N=[1:100000]", "K=[1:100000]"}, &ps, &err));
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
  const std::string j = listed_json("m", Suite::quick, gemm_axes(), cs, true);
  EXPECT_NE(j.find("\"device\": \"reference\""), std::string::npos);
  EXPECT_NE(j.find("\"name\": \"m/b/2\""), std::string::npos);
  EXPECT_NE(j.find("\"follows\": \"M\""), std::string::npos);
  EXPECT_NE(axes_help(gemm_axes()).find("N"), std::string::npos);
}

}  // namespace
}  // namespace gpucheck::axes
