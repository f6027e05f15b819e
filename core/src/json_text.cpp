// One sanitizer for Google Benchmark's bare NaN / Infinity / -Infinity (see the header).
#include "gpucheck/core/json_text.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace gpucheck {

NonFiniteSanitized sanitize_non_finite(std::string_view in, const NonFiniteMarks& marks) {
  // One pass that copies untouched spans whole: at tens of MB a file, per-character appends
  // cost more than the JSON parse.
  NonFiniteSanitized s;
  const char* p = in.data();
  const std::size_t n = in.size();
  std::size_t copied = 0;
  int depth = 0;
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.'; };
  for (std::size_t i = 0; i < n; ++i) {
    const char c = p[i];
    switch (c) {
      case '"':
        for (++i; i < n && p[i] != '"'; ++i)
          if (p[i] == '\\') ++i;
        break;
      case '[':
      case '{':
        s.max_depth = std::max(s.max_depth, ++depth);
        break;
      case ']':
      case '}':
        --depth;
        break;
      case 'N':
      case 'I':
      case '-': {
        if (i > 0 && is_word(p[i - 1])) break;
        const std::string_view rest(p + i, n - i);
        std::string_view mark;
        std::size_t len = 0;
        if (rest.starts_with("NaN")) {
          mark = marks.nan;
          len = 3;
        } else if (rest.starts_with("Infinity")) {
          mark = marks.pos_inf;
          len = 8;
        } else if (rest.starts_with("-Infinity")) {
          mark = marks.neg_inf;
          len = 9;
        }
        if (len == 0 || (i + len < n && is_word(p[i + len]))) break;
        if (s.text.empty()) s.text.reserve(n + n / 16);
        s.text.append(p + copied, i - copied);
        s.text += mark;
        i += len - 1;
        copied = i + 1;
        s.replaced = true;
        break;
      }
      default:
        break;
    }
  }
  if (s.replaced) s.text.append(p + copied, n - copied);
  return s;
}

std::string quote_non_finite(std::string_view t) {
  NonFiniteSanitized s = sanitize_non_finite(t, {"\"NaN\"", "\"Infinity\"", "\"-Infinity\""});
  return s.replaced ? std::move(s.text) : std::string(t);
}

}  // namespace gpucheck
