// CSV cells and lines for --format csv (report and compare).
#include "report/csv.hpp"

#include "base/format.hpp"

namespace gpucheck::compare {

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(fields[i]);
  }
  out += '\n';
  return out;
}

std::string csv_number(std::optional<double> v) { return v ? format_double("%.6g", *v) : std::string(); }

}  // namespace gpucheck::compare
