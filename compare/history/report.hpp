// `gpucheck history report`: each case's figure over commits, one self-contained HTML page (the
// report's style and colours, report/charts.hpp) and optionally Markdown. Per family, per case:
// one dot per run coloured by machine (host name and CPU), the change-points found by
// `history changes` as dashed lines with their commit, the stored baseline's figure as a line
// and the gate's limit as a band around it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/args.hpp"
#include "history/command.hpp"

namespace gpucheck::compare {
namespace history {

struct TrendInput {
  std::string gpu, branch, metric;
  const std::vector<Series>* series = nullptr;
  const std::vector<CaseChanges>* changes = nullptr;
  const Thresholds* thresholds = nullptr;
  const Results* baseline = nullptr;  // the stored baseline, when one is found
  std::string baseline_source;
};

// One case's chart (an inline <svg>).
std::string trend_svg(const Series& s, const CaseChanges* changes, std::optional<double> baseline, double limit_pct);
std::string trend_html(const TrendInput& in);
std::string trend_markdown(const TrendInput& in);

}  // namespace history
}  // namespace gpucheck::compare
