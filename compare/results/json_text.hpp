// Text from a results file as the tool shows it again, and JSON string literals as it writes
// them: shared by the reader and the writer of results. Internal to results/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gpucheck::compare {

// The length of a Unicode character at s[i] that reorders or breaks the text around it when
// shown raw (U+202A-U+202E embeddings and overrides, U+2066-U+2069 isolates, U+200E/U+200F
// marks, U+061C, U+2028/U+2029 separators: "Trojan source"), as UTF-8; 0 for anything else.
inline std::size_t bidi_control_at(std::string_view s, std::size_t i, char32_t* code) {
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

// Text from a file as every output shows it: control characters as \xNN and bidirectional
// controls as \u202e, so an escape sequence, a bell or a reordering never reaches a
// terminal, a Markdown table or a chart raw. Both sides of a comparison are read alike, so
// names still match.
inline std::string visible_text(std::string_view s) {
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

// One line, printable, bounded: names and messages from the file end up in our output.
inline std::string printable(std::string_view s, std::size_t max_len = 120) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(s[i]);
    char32_t code = 0;
    if (const std::size_t n = u >= 0xD8 ? bidi_control_at(s, i, &code) : 0; n > 0) {
      out += '?';
      i += n - 1;
    } else {
      out += (u < 0x20 || u == 0x7f) ? '?' : s[i];
    }
  }
  return out;
}

inline std::string quote_json(const std::string& s) { return nlohmann::ordered_json(s).dump(); }

}  // namespace gpucheck::compare
