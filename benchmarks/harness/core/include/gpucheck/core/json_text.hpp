// Google Benchmark's JSON may carry bare NaN, Infinity and -Infinity (a counter divided by
// zero), which strict JSON parsers reject. Readers of results make them strings first, with
// this one function: outside string literals only, each token whole ("-Infinity" is one token,
// never "-" and "Infinity"), so a reader then sees "NaN", "Infinity" or "-Infinity" and can
// tell a broken figure from a missing one.
#pragma once
#include <string>
#include <string_view>

namespace gpucheck {

std::string quote_non_finite(std::string_view json_text);

}  // namespace gpucheck
