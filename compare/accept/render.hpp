// Renderers of an acceptance report: a terminal table per GPU, the same as Markdown, and JSON
// for machines. Each returns the whole text; none prints.
#pragma once

#include <string>

#include "accept/judge.hpp"

namespace gpucheck::compare {

std::string render_accept_terminal(const AcceptReport& r);
std::string render_accept_markdown(const AcceptReport& r);
std::string render_accept_json(const AcceptReport& r);

}  // namespace gpucheck::compare
