// Numbers and text as every renderer writes them: one place for the formats and the escapes.
#include "base/format.hpp"

#include <cmath>
#include <cstdio>

namespace gpucheck::compare {

std::string format_double(const char* printf_fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_fmt, v);
  return buf;
}

std::string format_time_ns(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return format_double("%.3f s", ns / 1e9);
  if (a >= 1e6) return format_double("%.3f ms", ns / 1e6);
  if (a >= 1e3) return format_double("%.3f us", ns / 1e3);
  return format_double("%.3f ns", ns);
}

std::string format_metric(std::string_view metric, std::optional<double> v) {
  if (!v) return "-";
  if (metric == "real_time" || metric == "cpu_time") return format_time_ns(*v);
  return format_double("%.4g", *v);
}

std::string format_change(std::optional<double> f) {
  if (!f) return "";
  return format_double("%+.2f%%", *f * 100.0);
}

std::string format_pct(double pct) {
  std::string s = format_double("%.4f", pct);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s + "%";
}

std::string escape_xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even escaped.
        out += (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t') ? '?' : ch;
    }
  }
  return out;
}

std::string escape_markdown_cell(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    if (ch == '|' || ch == '\\' || ch == '*' || ch == '_' || ch == '`' || ch == '<' || ch == '>') out += '\\';
    out += (ch == '\n' || ch == '\r') ? ' ' : ch;
  }
  return out;
}

}  // namespace gpucheck::compare
