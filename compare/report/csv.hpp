// The one CSV writer of the tool (RFC 4180: comma-separated, CRLF-free "\n" lines, a field
// quoted when it holds a comma, quote or line break, quotes doubled): report and compare both
// write their --format csv through it, so a spreadsheet reads either the same way.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::compare {

std::string csv_field(std::string_view s);
// One line: the fields escaped, joined by commas, ended by "\n".
std::string csv_line(const std::vector<std::string>& fields);
// A number for a CSV cell: %.6g, "" when absent.
std::string csv_number(std::optional<double> v);

}  // namespace gpucheck::compare
