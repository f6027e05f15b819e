// The verdict table. Colours: red for what fails, yellow for what needs a second look, green
// for a gain, cyan for what is new; a noisy row of another kind is yellow (report/render.cpp).
#include "rules/verdict.hpp"

namespace gpucheck::compare {

namespace {
constexpr std::string_view kRed = "\033[1;31m", kYellow = "\033[33m", kGreen = "\033[32m", kCyan = "\033[36m";
using G = GateEffect;
}  // namespace

const std::array<VerdictKind, kVerdictKinds>& verdict_kinds() {
  // verdict, name, gate, colour, rank, count key, count_at, summary words, always, summary_at, separator
  static constexpr std::array<VerdictKind, kVerdictKinds> k{{
      {Verdict::Regression, "REGRESSION", G::Fails, kRed, 0, "regressed", 0, "regressed", true, 0, ", "},
      {Verdict::Missing, "MISSING", G::FailsUnlessMissingAllowed, kRed, 1, "missing", 1, "missing", true, 1, ", "},
      {Verdict::Errored, "ERRORED", G::FailsUnlessMissingAllowed, kRed, 2, "errored", 2, "errored", true, 2, ", "},
      {Verdict::Skipped, "skipped", G::Passes, "", 3, "skipped", 3, "skipped", true, 6, ", "},
      {Verdict::Unconfirmed, "unconfirmed", G::Passes, kYellow, 4, "unconfirmed", 4, "unconfirmed", true, 3, ", "},
      {Verdict::HostDiffers, "host differs", G::Passes, "", 5, "host_differs", 10, "not gated (host differs)", false, 8, ", "},
      {Verdict::Improvement, "improved", G::Passes, kGreen, 6, "improved", 5, "improved", true, 4, ", "},
      {Verdict::New, "new", G::Passes, kCyan, 7, "new", 6, "new", true, 5, ", "},
      {Verdict::NoMetric, "no metric", G::Passes, "", 8, "no_metric", 7, "without the metric", false, 9, ", "},
      {Verdict::Same, "ok", G::Passes, "", 9, "unchanged", 8, "unchanged", true, 7, ", "},
      {Verdict::ReportOnly, "report only", G::Passes, "", 10, "report_only", 11, "report-only", false, 11, "; "},
      {Verdict::MethodChanged, "method changed", G::Passes, kYellow, 5, "method_changed", 12,
       "not compared (method changed: re-record the baseline)", false, 12, "; "},
  }};
  return k;
}

const VerdictKind& kind_of(Verdict v) { return verdict_kinds()[static_cast<std::size_t>(v)]; }

bool fails_gate(Verdict v, bool allow_missing) {
  const GateEffect g = kind_of(v).gate;
  return g == GateEffect::Fails || (g == GateEffect::FailsUnlessMissingAllowed && !allow_missing);
}

std::string_view confirmation_name(Confirmation c) {
  switch (c) {
    case Confirmation::None: return "";
    case Confirmation::Confirmed: return "confirmed";
    case Confirmation::NotConfirmed: return "not confirmed";
    case Confirmation::RerunFailed: return "re-run failed";
  }
  return "?";
}

}  // namespace gpucheck::compare
