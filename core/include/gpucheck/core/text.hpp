// Text helpers shared by the core (sysfs files) and the tools (benchmark lists, logs, context
// values).
#pragma once
#include <string>
#include <string_view>

namespace gpucheck {

// `s` without leading and trailing ASCII whitespace (space, \t, \n, \v, \f, \r).
constexpr std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const std::size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

// The length of a Unicode character at s[i] that reorders or breaks the text around it when
// shown raw (U+202A-U+202E embeddings and overrides, U+2066-U+2069 isolates, U+200E/U+200F
// marks, U+061C, U+2028/U+2029 separators: "Trojan source"), as UTF-8, its code in *code; 0
// for anything else.
std::size_t bidi_control_at(std::string_view s, std::size_t i, char32_t* code);

// Text from a file or the command line as every output and error line shows it: control
// characters as \xNN and bidirectional controls as \u202e, so an escape sequence, a bell or a
// reordering never reaches a terminal, a Markdown table or a chart raw. Both sides of a
// comparison are read alike, so names still match.
std::string visible_text(std::string_view s);

// A command-line value as an error line quotes it: visible_text of at most `max` bytes of it
// (cut at a UTF-8 character), then "... (N bytes)" when it was longer, so that a 1 MB
// argument makes a short line.
std::string visible_excerpt(std::string_view s, std::size_t max = 200);

}  // namespace gpucheck
