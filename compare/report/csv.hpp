// The one CSV writer of the tool (RFC 4180: comma-separated, CRLF-free "\n" lines, a field
// quoted when it holds a comma, quote or line break, quotes doubled): report and compare both
// write their --format csv through it, so a spreadsheet reads either the same way.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::compare {

// A cell that a spreadsheet would run as a formula (starting with = + - @, a tab or a carriage
// return, and not a number) is written quoted with a leading ' (OWASP's advice on CSV
// injection): a benchmark named "=HYPERLINK(...)" shows as text. Names are otherwise unchanged.
std::string csv_field(std::string_view s);
// One line: the fields escaped, joined by commas, ended by "\n".
std::string csv_line(const std::vector<std::string>& fields);
// A number for a CSV cell, the shortest text that reads back as the same double (no figure
// rounded away); "" when absent.
std::string csv_number(std::optional<double> v);
// A fraction as a percent cell (0.05 -> 5), for the *_pct columns.
std::string csv_pct(std::optional<double> fraction);
// The unit of a metric's cells, for the unit column: "ns" for a time, the counter's unit
// otherwise ("TFLOP/s"), "" for a count.
std::string csv_unit(std::string_view metric);

}  // namespace gpucheck::compare
