// Numbers and text as every renderer writes them (times, metrics, changes, percentages) and the
// escapes for XML/HTML and Markdown table cells. Pure functions; no part of the tool formats a
// number its own way.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::compare {

// snprintf of one double into a string (formats here are short: 64 bytes).
std::string format_double(const char* printf_fmt, double v);
// "1.234 ms": three significant decimals in the largest unit that keeps the value >= 1.
std::string format_time_ns(double ns);
// A metric value: times via format_time_ns, counters with 4 significant digits.
std::string format_metric(std::string_view metric, std::optional<double> v);
// "+10.00%" / "-3.25%"; "" when absent.
std::string format_change(std::optional<double> fraction);
// "12.5%" without trailing zeros.
std::string format_pct(double pct);

std::string escape_xml(std::string_view s);  // also fine for HTML text and attributes
std::string escape_markdown_cell(std::string_view s);

}  // namespace gpucheck::compare
