// The compare options as the commands give them, and the thresholds file they name or find.
#include "rules/options.hpp"

#include <optional>

#include "base/format.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/suggest.hpp"
#include "rules/thresholds.hpp"

namespace gpucheck::compare::cli {

const OptionSet& compare_options() {
  static const OptionSet o{{"--metric", "--threshold", "--thresholds", "--alpha", "--min-repetitions"},
                           {"--higher-is-better", "--lower-is-better", "--allow-missing", "--no-thresholds"}};
  return o;
}

std::vector<std::string> thresholds_search_from(const std::string& baseline_path) {
  std::vector<std::string> out;
  std::string dir = parent_path(baseline_path);
  for (int up = 0; up < 3; ++up) {
    out.push_back(join_path(dir, "thresholds.json"));
    const std::string next = parent_path(dir);
    if (next == dir) break;
    dir = next;
  }
  return out;
}

std::optional<std::string> thresholds_file(const FileSystem& fs, const Args& a, const std::vector<std::string>& search) {
  if (auto given = value(a, "--thresholds")) return given;
  if (flag(a, "--no-thresholds")) return std::nullopt;
  for (const std::string& cand : search)
    if (fs.kind(cand) == FileSystem::Kind::File) return cand;
  return std::nullopt;
}

namespace {

Expected<Thresholds> read_thresholds(const FileSystem& fs, const Args& a, const std::vector<std::string>& search) {
  if (value(a, "--thresholds") && flag(a, "--no-thresholds"))
    return Error{"--thresholds", "cannot be combined with --no-thresholds"};
  const std::optional<std::string> file = thresholds_file(fs, a, search);
  Thresholds t;
  if (file) {
    auto text = fs.read(*file, std::size_t{16} << 20);
    if (!text) return text.error();
    auto parsed = parse_thresholds(*text, *file);
    if (!parsed) return parsed.error();
    t = std::move(*parsed);
  }
  if (const auto th = value(a, "--threshold")) {
    auto pct = parse_percent(*th);
    if (!pct) return Error{"--threshold", pct.error().message};
    t.default_pct = *pct;
    // The same ceiling as thresholds.json: no case is gated at a limit above kMaxGatedPct.
    Thresholds only{};
    only.default_pct = *pct;
    if (check_gated_limits(only, "--threshold"))
      return Error{"--threshold", *th + (th->ends_with('%') ? "" : "%") + " is above the ceiling: no case is gated at a limit above " +
                                      format_pct(kMaxGatedPct) + " (a case that noisy belongs on report_only in thresholds.json)"};
  }
  return t;
}

}  // namespace

Expected<CompareOptions> read_compare_options(const FileSystem& fs, const Args& a, const std::vector<std::string>& search) {
  CompareOptions o;
  o.metric = value(a, "--metric").value_or("real_time");
  if (o.metric.empty()) return Error{"--metric", "needs a counter name"};
  const bool hib = flag(a, "--higher-is-better");
  const bool lib = flag(a, "--lower-is-better");
  if (hib && lib) return Error{"--higher-is-better", "cannot be combined with --lower-is-better"};
  if (hib || lib) {
    o.direction = hib ? Direction::HigherIsBetter : Direction::LowerIsBetter;
  } else if (const auto d = direction_for(o.metric)) {
    o.direction = *d;
  } else {
    // A near miss of a counter whose direction is known ("TFLOP", "tflops") is a typo.
    std::vector<std::string> known{"real_time", "cpu_time"};
    for (const auto& c : contract::kCounters)
      if (direction_for(std::string(c.name))) known.emplace_back(c.name);
    return Error{"--metric", "cannot tell whether more " + o.metric + " is better" + did_you_mean(o.metric, known) +
                                 "; add --higher-is-better or --lower-is-better"};
  }
  if (const auto al = value(a, "--alpha")) {
    auto v = parse_number("--alpha", *al, 0.0, 1.0);
    if (!v) return v.error();
    o.alpha = *v;
  }
  if (const auto mr = value(a, "--min-repetitions")) {
    auto v = parse_count("--min-repetitions", *mr, 2, 1000000);
    if (!v) return v.error();
    o.min_repetitions_for_test = *v;
  }
  o.allow_missing = flag(a, "--allow-missing");
  auto t = read_thresholds(fs, a, search);
  if (!t) return t.error();
  o.thresholds = std::move(*t);
  return o;
}

}  // namespace gpucheck::compare::cli
