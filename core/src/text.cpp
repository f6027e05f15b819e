#include "gpucheck/core/text.hpp"

#include <algorithm>

namespace gpucheck {

std::size_t bidi_control_at(std::string_view s, std::size_t i, char32_t* code) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (i + 1 < s.size() && b(0) == 0xD8 && b(1) == 0x9C) {
    *code = 0x061C;
    return 2;
  }
  if (i + 2 >= s.size() || b(0) != 0xE2) return 0;
  const char32_t c = (char32_t{b(1)} & 0x3F) << 6 | (char32_t{b(2)} & 0x3F) | 0x2000;
  if (b(1) != 0x80 && b(1) != 0x81) return 0;
  if ((c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0x200E || c == 0x200F || c == 0x2028 ||
      c == 0x2029) {
    *code = c;
    return 3;
  }
  return 0;
}

std::string visible_text(std::string_view s) {
  // Most text has nothing to escape: one scan, one copy (the loader calls this for every name).
  const bool plain = std::none_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f || u == 0xD8 || u == 0xE2;
  });
  if (plain) return std::string(s);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    char32_t code = 0;
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else if (const std::size_t n = u >= 0xD8 ? bidi_control_at(s, i, &code) : 0; n > 0) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code >> shift) & 0xf];
      i += n - 1;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string visible_excerpt(std::string_view s, std::size_t max) {
  if (s.size() <= max) return visible_text(s);
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a character
  return visible_text(s.substr(0, n)) + "... (" + std::to_string(s.size()) + " bytes)";
}

}  // namespace gpucheck
