// Renderers for a comparison: terminal table, Markdown, JSON, JUnit XML and CSV. Pure functions
// from a Comparison to text; the CLI decides where the text goes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/format.hpp"
#include "rules/compare.hpp"

namespace gpucheck::compare {

std::string render_terminal(const Comparison& c, bool colour);
std::string render_markdown(const Comparison& c);
std::string render_json(const Comparison& c);
std::string render_junit(const Comparison& c);
// One line per row through the shared CSV writer (report/csv.hpp); columns in docs/COMPARE.md.
std::string render_csv(const Comparison& c);

}  // namespace gpucheck::compare
