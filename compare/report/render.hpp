// Renderers for a comparison: terminal table, Markdown, JSON, JUnit XML and CSV. Pure functions
// from one report value to text; the CLI decides where the text goes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/format.hpp"
#include "results/binary_run.hpp"
#include "rules/compare.hpp"

namespace gpucheck::compare {

// What the renderings show: the comparison as the rules judged it, and what the gate adds
// around it. A plain `gpucheck compare` report is its comparison alone (hence the implicit
// conversion).
struct CompareReport {
  CompareReport() = default;
  CompareReport(Comparison c) : comparison(std::move(c)) {}  // NOLINT(google-explicit-constructor)

  Comparison comparison;
  // Gate only: its own warnings (a busy GPU, another GPU model), shown before the comparison's;
  // what the GPU was doing before the first binary; the binaries it ran; the repetitions of
  // the confirmation runs (0 when none ran).
  std::vector<std::string> warnings;
  std::vector<std::string> activity;
  std::vector<BinaryRun> binaries;
  int confirm_repetitions = 0;

  [[nodiscard]] bool failed() const;  // a row fails the gate, or a binary errored
  [[nodiscard]] bool errored_binaries() const;
  // The gate's warnings, then the comparison's: the lines above the table in every format.
  [[nodiscard]] std::vector<std::string> all_warnings() const;
};

std::string render_terminal(const CompareReport& r, bool colour);
std::string render_markdown(const CompareReport& r);
std::string render_json(const CompareReport& r);
std::string render_junit(const CompareReport& r);
// One line per row through the shared CSV writer (report/csv.hpp); columns in docs/COMPARE.md.
std::string render_csv(const CompareReport& r);

}  // namespace gpucheck::compare
