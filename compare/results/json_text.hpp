// Text from a results file as the tool shows it again, and JSON string literals as it writes
// them: shared by the reader and the writer of results. Internal to results/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gpucheck::compare {

// One line, printable, bounded: names and messages from the file end up in our output.
inline std::string printable(std::string_view s, std::size_t max_len = 120) {
  std::string out;
  for (const char c : s) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  return out;
}

inline std::string quote_json(const std::string& s) { return nlohmann::ordered_json(s).dump(); }

}  // namespace gpucheck::compare
