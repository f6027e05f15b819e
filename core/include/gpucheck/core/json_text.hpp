// Google Benchmark's JSON may carry bare NaN, Infinity and -Infinity (a counter divided by
// zero), which strict JSON parsers reject. Readers of results make them strings first, with
// this one function: outside string literals only, each token whole ("-Infinity" is one token,
// never "-" and "Infinity"), so a reader then sees "NaN", "Infinity" or "-Infinity" and can
// tell a broken figure from a missing one.
#pragma once
#include <string>
#include <string_view>

namespace gpucheck {

// The JSON string literals written in place of each token.
struct NonFiniteMarks {
  std::string_view nan, pos_inf, neg_inf;
};
struct NonFiniteSanitized {
  std::string text;  // only filled when `replaced`; otherwise the input is already JSON
  bool replaced = false;
  int max_depth = 0;  // the deepest nesting of [ and { seen (outside strings)
};
// One pass, copying untouched spans whole (at tens of MB a file, per-character appends cost
// more than the parse). A token is whole when no letter, digit, '_' or '.' touches it.
NonFiniteSanitized sanitize_non_finite(std::string_view json_text, const NonFiniteMarks& marks);

// Each token as the string of its own name: "NaN", "Infinity", "-Infinity".
std::string quote_non_finite(std::string_view json_text);

}  // namespace gpucheck
