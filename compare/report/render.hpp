// Renderers for a comparison: terminal table, Markdown, JSON and JUnit XML. Pure functions
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

}  // namespace gpucheck::compare
