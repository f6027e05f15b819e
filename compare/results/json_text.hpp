// Text from a results file as the tool shows it again, and JSON string literals as it writes
// them: shared by the reader and the writer of results. Internal to results/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gpucheck/core/text.hpp"

namespace gpucheck::compare {

// The one escaping of text for terminals and tables lives in core (control characters as
// \xNN, bidirectional controls as \uNNNN): the tools' error lines use it too.
using gpucheck::bidi_control_at;
using gpucheck::visible_text;

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
