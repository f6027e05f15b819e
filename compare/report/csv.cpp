// CSV cells and lines for --format csv (report and compare).
#include "report/csv.hpp"

#include <array>
#include <charconv>

#include "gpucheck/core/contract.hpp"

namespace gpucheck::compare {

namespace {
bool is_number(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}
}  // namespace

std::string csv_field(std::string_view s) {
  const bool formula = !s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos &&
                       !is_number(s.front() == '+' ? s.substr(1) : s);
  if (!formula && s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = formula ? "\"'" : "\"";
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

std::string csv_number(std::optional<double> v) {
  if (!v) return {};
  std::array<char, 32> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), *v);
  return ec == std::errc() ? std::string(buf.data(), end) : std::string();
}

std::string csv_pct(std::optional<double> fraction) {
  return csv_number(fraction ? std::optional<double>(*fraction * 100.0) : std::nullopt);
}

std::string csv_unit(std::string_view metric) {
  if (metric == "real_time" || metric == "cpu_time") return "ns";  // the reader keeps times in ns
  return std::string(contract::unit_of(metric));
}

}  // namespace gpucheck::compare
