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

namespace {

// The Unicode line breaks past ASCII (U+0085 NEL, U+2028, U+2029) as UTF-8: a renderer may end
// a table row or a line at one.
std::size_t unicode_break_at(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  if (i + 1 < s.size() && b(i) == 0xC2 && b(i + 1) == 0x85) return 2;
  if (i + 2 < s.size() && b(i) == 0xE2 && b(i + 1) == 0x80 && (b(i + 2) == 0xA8 || b(i + 2) == 0xA9)) return 3;
  return 0;
}

}  // namespace

std::string escape_xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (const std::size_t n = unicode_break_at(s, i)) {  // a line break some readers honour
      out += ' ';
      i += n - 1;
      continue;
    }
    const char ch = s[i];
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
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (const std::size_t n = unicode_break_at(s, i)) {
      out += ' ';
      i += n - 1;
      continue;
    }
    const char ch = s[i];
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u == 0x7f) {
      out += ' ';  // a line break or control character would end the row or the line
      continue;
    }
    // Markdown's own punctuation: a table cell, emphasis, code, inline HTML, a link or image.
    if (std::string_view("|\\*_`<>[]!&~#").find(ch) != std::string_view::npos) out += '\\';
    out += ch;
  }
  return out;
}

std::string markdown_code(std::string_view s) {
  std::string out(1, '`');
  for (const char ch : escape_html_breaks(s)) out += ch == '`' ? '\'' : ch;
  return out + '`';
}

std::string escape_html_breaks(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (const std::size_t n = unicode_break_at(s, i)) {
      out += ' ';
      i += n - 1;
      continue;
    }
    const auto u = static_cast<unsigned char>(s[i]);
    out += (u < 0x20 || u == 0x7f) ? ' ' : s[i];
  }
  return out;
}

std::string escape_html(std::string_view s) { return escape_xml(escape_html_breaks(s)); }

}  // namespace gpucheck::compare
