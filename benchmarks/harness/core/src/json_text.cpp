#include "gpucheck/core/json_text.hpp"

#include <array>
#include <cctype>

namespace gpucheck {

std::string quote_non_finite(std::string_view t) {
  static constexpr std::array<std::string_view, 3> kTokens{"-Infinity", "Infinity", "NaN"};
  std::string out;
  out.reserve(t.size() + 16);
  bool in_string = false;
  for (std::size_t i = 0; i < t.size();) {
    const char c = t[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < t.size()) {
        out += t[i + 1];
        i += 2;
        continue;
      }
      if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      ++i;
      continue;
    }
    bool replaced = false;
    for (std::string_view tok : kTokens) {
      if (t.substr(i, tok.size()) != tok) continue;
      // A whole token: not the tail or head of a longer word.
      const bool before_ok = i == 0 || !std::isalnum(static_cast<unsigned char>(t[i - 1]));
      const std::size_t end = i + tok.size();
      const bool after_ok = end == t.size() || !std::isalnum(static_cast<unsigned char>(t[end]));
      if (!before_ok || !after_ok) continue;
      out += '"';
      out += tok;
      out += '"';
      i = end;
      replaced = true;
      break;
    }
    if (!replaced) {
      out += c;
      ++i;
    }
  }
  return out;
}

}  // namespace gpucheck
