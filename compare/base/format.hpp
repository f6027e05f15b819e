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

// XML/HTML text and attributes: & < > " ' as entities, control characters but \n and \t as
// '?', Unicode line breaks (U+0085, U+2028, U+2029) as spaces.
std::string escape_xml(std::string_view s);
// Text from a file (a label such as gpu_name, a benchmark name) in Markdown: the table bar,
// emphasis, code, inline HTML, links and images escaped, line breaks (U+0085, U+2028 and
// U+2029 too) and control characters as spaces. Every Markdown renderer writes labels so.
std::string escape_markdown_cell(std::string_view s);
// A path or command in a Markdown code span: on one line, its backticks as quotes.
std::string markdown_code(std::string_view s);
// Line breaks (ASCII and Unicode) and control characters as spaces.
std::string escape_html_breaks(std::string_view s);
// A label in HTML text or an attribute: escape_xml of the text on one line.
std::string escape_html(std::string_view s);

}  // namespace gpucheck::compare
