// The loader's own scanner against nlohmann's parser (issue 36): on every input both read, the
// same acceptance, the same document, the same streamed elements and the same one-line refusal.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gpucheck/core/json_load.hpp"

namespace gpucheck {
namespace {

struct Read {
  bool ok = false;
  std::string err, doc;
  std::vector<std::string> elements;  // "index:value" as handed over
  std::size_t count = 0;
};

Read read(const std::string& text, bool stream, const NonFiniteMarks* marks, bool by_nlohmann) {
  Read r;
  JsonStream s;
  s.list_key = "benchmarks";
  s.element = [&r](std::size_t i, const JsonFlatObject* o, const nlohmann::ordered_json& other) {
    r.elements.push_back(std::to_string(i) + ":" + (o != nullptr ? o->to_json().dump() : other.dump()));
  };
  JsonLoadOptions lo;
  lo.non_finite = marks;
  if (stream) lo.stream = &s;
  nlohmann::ordered_json j;
  r.ok = by_nlohmann ? load_json_by_nlohmann(text, "t.json", &j, &r.err, lo) : load_json(text, "t.json", &j, &r.err, lo);
  if (r.ok) r.doc = j.dump();
  r.count = s.count;
  return r;
}

// Both readers, with and without a stream, with the results reader's marks and the default ones.
void expect_same(const std::string& text) {
  static constexpr NonFiniteMarks kReader{"\"\\u0001NaN\"", "\"\\u0001Infinity\"", "\"\\u0001-Infinity\""};
  for (const NonFiniteMarks* marks : {static_cast<const NonFiniteMarks*>(nullptr), &kReader}) {
    for (const bool stream : {false, true}) {
      const Read ours = read(text, stream, marks, false);
      const Read ref = read(text, stream, marks, true);
      const std::string what = "text <" + text.substr(0, 200) + "> stream " + std::to_string(stream);
      EXPECT_EQ(ours.ok, ref.ok) << what << "\n ours: " << ours.err << "\n nlohmann: " << ref.err;
      EXPECT_EQ(ours.err, ref.err) << what;
      EXPECT_EQ(ours.doc, ref.doc) << what;
      if (ours.ok) {  // a refusal hands over what came before it, which callers drop
        EXPECT_EQ(ours.elements, ref.elements) << what;
        EXPECT_EQ(ours.count, ref.count) << what;
      }
    }
  }
}

TEST(JsonScan, AgreesWithNlohmannOnCraftedInputs) {
  using namespace std::string_literals;
  const std::vector<std::string> texts = {
      "", " ", "\xEF\xBB\xBF{}", "\xEF\xBB{}", "\xEF", "{}", "[]", "[1,2,]", "{\"a\":1,}", "{,}", "[,1]", "01", "-0", "-",
      "1.", ".5", "1e", "1e+", "1E-2", "-1.5e308", "1e309", "-1e309", "1e-400", "5e-324", "0.1e-2", "2.", "+1",
      "18446744073709551615", "18446744073709551616", "-9223372036854775808", "-9223372036854775809", "[0,-0,0.0,-0.0]",
      "[NaN]", "[Infinity,-Infinity]", "[NaNx]", "[NaN.5]", "[-NaN]", "[--Infinity]", "{NaN:1}", "{-Infinity:1,Infinity:2}",
      "{\"a\":NaN}", "[NaN", "[1-Infinity]", "[1NaN]", "Infinity", "NaN ", "\"\\u0000\"", "\"\\ud800\"", "\"\\ud800\\udc00\"",
      "\"\\uDBFF\\uDFFF\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\ud800x\"", "\"\\x\"", "\"\\u12g4\"", "\"\\u12\"",
      "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"a\x01b\"", "\"\x7f\"", "\"\xc3\xa9\"", "\"\xc0\x80\"", "\"\xc2\"", "\"\xe0\x80\x80\"",
      "\"\xe0\xa0\x80\"", "\"\xed\x9f\xbf\"", "\"\xed\xa0\x80\"", "\"\xef\xbf\xbf\"", "\"\xf0\x8f\xbf\xbf\"", "\"\xf0\x90\x80\x80\"",
      "\"\xf4\x8f\xbf\xbf\"", "\"\xf4\x90\x80\x80\"", "\"\xf5\x80\x80\x80\"", "\"\xff\"", "\"\x80\"", "\"abc", "\"abc\\",
      "tru", "true", "truex", "nul", "null ", "false", "fals", " [true,false,null] ", "{\"a\":{\"b\":[{}]}}",
      "{\"a\":1,\"a\":2}", "{\"a\":1,\"real\\u005ftime\":2,\"real_time\":3}", "[1]x", "[1] [2]", "{\"a\" 1}", "{\"a\":}",
      "{1:2}", "\t\n\r {}\n", "[1,\n2,\n x]", "{\"a\":1}\n\n}", "/* c */ {}", "{}\n// c", "[1,2", "{\"a\"", "{\"a\":1",
      "{\"benchmarks\":[{\"a\":1},{\"a\":1,\"a\":2}]}", "{\"benchmarks\":[1,[2],{\"x\":{\"y\":NaN}},\"s\",null,{}]}",
      "{\"benchmarks\":[]}", "{\"benchmarks\":{}}", "{\"benchmarks\":[{\"n\":{\"w\":1,\"w\":2}}]}",
      "{\"benchmarks\":[{\"a\":1}],\"benchmarks\":[]}", "{\"c\":{\"benchmarks\":[7]},\"benchmarks\":[{\"x\":[1,{\"q\":2}]}]}",
      "{\"benchmarks\":[{\"real_time\":1.25,\"time_unit\":\"us\",\"n\":\"\\u00e9\\ud83d\\ude00\"}]}",
      "[\"a\0b\"]"s, "{}\0"s, "{}\0garbage"s, "[1]\0x"s, "[\0]"s, "\0"s, "{\"a\":1\0}"s, " \0{}"s,
      "\"x\"\0"s + std::string(100, '[')};
  for (const std::string& t : texts) expect_same(t);
}

// A raw NUL is never JSON: nlohmann's parser took one as the end of the input, so a document with
// anything after a NUL read as the part before it (the fuzzer found the two readers parting on
// "\"x\"\0[[[...": ours read the string, nlohmann's depth pre-scan saw the brackets). Both refuse,
// naming the byte.
TEST(JsonScan, ANulByteAnywhereIsRefusedNamingItsOffset) {
  using namespace std::string_literals;
  for (const auto& [text, at] : std::vector<std::pair<std::string, std::size_t>>{
           {"{}\0garbage"s, 2}, {"\0"s, 0}, {"[\"a\0b\"]"s, 3}, {"\"x\"\0"s + std::string(100, '['), 3}})
    for (const bool by_nlohmann : {false, true}) {
      const Read r = read(text, false, nullptr, by_nlohmann);
      EXPECT_FALSE(r.ok);
      EXPECT_EQ(r.err, "t.json: not valid JSON: a NUL byte at byte " + std::to_string(at)) << by_nlohmann;
    }
}

TEST(JsonScan, AgreesOnDepthAtTheBoundAndFarPastIt) {
  for (const int n : {63, 64, 65, 100000}) {
    expect_same(std::string(static_cast<std::size_t>(n), '[') + std::string(static_cast<std::size_t>(n), ']'));
    std::string objects;
    for (int i = 0; i < std::min(n, 1000); ++i) objects += "{\"a\":";
    expect_same(objects + "1" + std::string(static_cast<std::size_t>(std::min(n, 1000)), '}'));
  }
  // Too deep past a syntax error: the depth is what is said (the whole text is measured first).
  expect_same("[1,,]" + std::string(100, '['));
}

// Every fixture and corpus file in the repository: the files the tool's tests and fuzzer read.
TEST(JsonScan, AgreesWithNlohmannOnEveryFixtureAndCorpusFile) {
  const std::filesystem::path root = std::filesystem::path(GPUCHECK_SPECS_JSON).parent_path().parent_path();
  std::size_t files = 0;
  for (const char* dir : {"tests/unit/compare/fixtures", "tests/fuzz/corpus", "baselines"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root / dir)) {
      if (!e.is_regular_file() || e.path().extension() != ".json") continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      SCOPED_TRACE(e.path().string());
      expect_same(ss.str());
      ++files;
    }
  }
  EXPECT_GT(files, 50u);
}

}  // namespace
}  // namespace gpucheck
