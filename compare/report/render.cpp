// Text renderings of a comparison. The terminal and Markdown tables lead with what fails the
// gate; JSON carries every field for tools; JUnit lets CI systems show one test per benchmark.
#include "report/render.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <nlohmann/json.hpp>

#include "report/csv.hpp"
#include "rules/fresh_minimum.hpp"

namespace gpucheck::compare {
namespace {

std::string direction_text(Direction d) {
  return d == Direction::LowerIsBetter ? "lower is better" : "higher is better";
}

// The limits the table was judged at: the default, and each per-case limit with how many cases
// it applies to ("limit 10% by default; 5% for 45 cases"), so the header never states one
// figure over cases that fail at another.
std::string threshold_text(const Comparison& c) {
  std::map<double, int> others;  // limit % -> cases, for the limits other than the default
  for (const Row& r : c.rows)
    if (std::fabs(r.threshold_pct - c.default_threshold_pct) > 1e-9) ++others[r.threshold_pct];
  std::string s = "limit " + format_pct(c.default_threshold_pct);
  if (others.empty()) {
    s += " for every case";
  } else {
    s += " by default";
    for (const auto& [pct, n] : others)
      s += "; " + format_pct(pct) + " for " + std::to_string(n) + (n == 1 ? " case" : " cases");
  }
  // Without a thresholds file nothing is report-only or host-bound: say so, or a baseline
  // folder without one (gate --baseline DIR reads DIR/thresholds.json) fails host-bound
  // cases at the default limit with no hint why.
  if (!c.thresholds_source.empty()) s += " (per-name overrides from " + c.thresholds_source + ")";
  else s += " (no thresholds file: no overrides, report-only or host-bound lists)";
  return s;
}

std::string verdict_text(const Row& r) {
  std::string v(verdict_name(r.verdict));
  if (r.noisy) v += " (noisy)";
  return v;
}

std::string rate_text(const Row& r, std::string_view arrow) {
  if (r.rate.empty()) return "";
  auto num = [](std::optional<double> v) { return v ? format_double("%.4g", *v) : std::string("-"); };
  return r.rate + " " + num(r.base_rate) + std::string(arrow) + num(r.cur_rate);
}

// What a case measured in fresh processes compared (rules/fresh_minimum.hpp).
std::string fastest_of_text(const Row& r) {
  const std::string n = std::to_string(r.fresh_processes);
  if (r.paired) return "median pair of " + n + " fresh processes, each run beside the base build's";
  // A side of exactly N processes reads its fastest.
  if (r.base_processes == r.fresh_processes) return "fastest of " + n + " fresh processes vs the baseline's fastest of " + n;
  return "fastest of " + n + " fresh processes vs the baseline's " +
         format_double("%.1f", 100.0 * best_of_n_quantile(r.fresh_processes)) + "th percentile of " +
         std::to_string(r.base_processes);
}

std::string notes_text(const Row& r) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : "; ") + part; };
  if (r.confirmation != Confirmation::None)
    add(std::string(confirmation_name(r.confirmation)) + " (first pass " + format_change(r.first_change) + ")");
  if (r.p_value) add(format_double("p=%.3g", *r.p_value) + (r.exact_test ? " exact" : ""));
  if (r.base_cv || r.cur_cv) {
    auto cv = [](std::optional<double> v) { return v ? format_double("%.1f%%", *v * 100.0) : std::string("-"); };
    add("cv " + cv(r.base_cv) + "/" + cv(r.cur_cv));
  }
  if (std::fabs(r.threshold_pct - 10.0) > 1e-12 || r.verdict == Verdict::Regression)
    add("limit " + format_pct(r.threshold_pct));
  for (const auto& w : r.why) add(w);
  if (r.fresh_processes > 0 && r.change) add(fastest_of_text(r));
  if (!r.note.empty()) add(r.note);
  return s;
}

std::string summary_text(const CompareReport& rep) {
  const Comparison& c = rep.comparison;
  const Counts& n = c.counts;
  const std::size_t gated = c.rows.size() - static_cast<std::size_t>(n[Verdict::ReportOnly]);
  // The kinds in summary order; the noisy count stands among them at kNoisySummaryAt.
  std::vector<const VerdictKind*> kinds;
  for (const VerdictKind& k : verdict_kinds()) kinds.push_back(&k);
  std::stable_sort(kinds.begin(), kinds.end(), [](const auto* a, const auto* b) { return a->summary_at < b->summary_at; });
  std::string s = std::to_string(gated) + " benchmarks: ";
  bool first = true, noisy_done = false;
  auto add = [&](std::string_view sep, int count, std::string_view words) {
    s += (first ? std::string() : std::string(sep)) + std::to_string(count) + " " + std::string(words);
    first = false;
  };
  for (const VerdictKind* k : kinds) {
    if (!noisy_done && k->summary_at > kNoisySummaryAt) {
      if (n.noisy) add("; ", n.noisy, "noisy");
      noisy_done = true;
    }
    if (k->always || n[k->verdict] > 0) add(k->separator, n[k->verdict], k->summary);
  }
  if (!noisy_done && n.noisy) add("; ", n.noisy, "noisy");
  int errored = 0;
  for (const auto& b : rep.binaries) errored += b.status == BinaryRun::Status::Errored ? 1 : 0;
  if (errored) s += "; " + std::to_string(errored) + " binary run" + (errored > 1 ? "s" : "") + " ERRORED";
  return s;
}

std::string result_text(const CompareReport& rep) {
  const Comparison& c = rep.comparison;
  if (!rep.failed()) return "PASS";
  std::vector<std::string> why;
  if (c.counts[Verdict::Regression]) why.emplace_back("regression");
  if (!c.allow_missing && (c.counts[Verdict::Missing] || c.counts[Verdict::Errored])) why.emplace_back("missing figures");
  if (rep.errored_binaries()) why.emplace_back("errored binaries");
  std::string s;
  for (std::size_t i = 0; i < why.size(); ++i) s += (i ? " and " : "") + why[i];
  return "FAIL (" + s + ")";
}

std::vector<const Row*> rows_where(const Comparison& c, bool (*keep)(const Row&)) {
  std::vector<const Row*> out;
  for (const Row& r : c.rows)
    if (keep(r)) out.push_back(&r);
  return out;
}
bool is_report_only(const Row& r) { return r.verdict == Verdict::ReportOnly; }
bool was_reconfirmed(const Row& r) { return r.confirmation != Confirmation::None; }

std::string binary_status(const BinaryRun& b) {
  switch (b.status) {
    case BinaryRun::Status::Ok: return "ok";
    case BinaryRun::Status::CaseFailed: return "case failed";
    case BinaryRun::Status::Errored: return "ERRORED";
  }
  return "?";
}

std::string binary_cases(const BinaryRun& b) {
  std::string s = std::to_string(b.cases_ok) + (b.cases_ok == 1 ? " case ok" : " cases ok");
  if (b.cases_errored) s += ", " + std::to_string(b.cases_errored) + " errored";
  if (b.cases_skipped) s += ", " + std::to_string(b.cases_skipped) + " skipped";
  return s;
}

// "n=5/5, p=0.00794" for a confirmation line.
std::string n_and_p(const Row& r) {
  std::string s = "n=" + std::to_string(r.base_reps) + "/" + std::to_string(r.cur_reps);
  s += r.p_value ? format_double(", p=%.3g", *r.p_value) : std::string(", no U test (too few repetitions)");
  return s;
}

std::string confirmation_detail(const Row& r) {
  const std::string first = "first pass " + format_change(r.first_change) + " (n=" + std::to_string(r.base_reps) + "/" +
                            std::to_string(r.first_cur_reps) + ")";
  if (r.confirmation == Confirmation::RerunFailed && r.cur_reps == r.first_cur_reps && r.change == r.first_change)
    return first + ", no figure from the re-run, limit " + format_pct(r.threshold_pct);
  return first + ", re-run " + (r.change ? format_change(r.change) : std::string("-")) + " (" + n_and_p(r) +
         "), limit " + format_pct(r.threshold_pct);
}

std::string confirmation_head(const CompareReport& rep, std::size_t n) {
  return "confirmation: " + std::to_string(n) + " case" + (n == 1 ? "" : "s") +
         " past the limit re-measured in a fresh process with " + std::to_string(rep.confirm_repetitions) +
         " repetitions";
}

std::string host_line(const Comparison& c) {
  return "host-bound cases are shown, not gated: host CPU differs (baseline " + c.host_base + ", current " +
         c.host_cur + ")";
}

// A report-only row's spread (the cv listed in thresholds.json, this run's) and, for a case judged
// by its fastest fresh process, which figures were compared.
std::string report_only_cv(const Row& r) {
  std::string s = r.listed_cv_pct ? format_double("%.3g%%", *r.listed_cv_pct) : std::string("-");
  s += " listed";
  if (r.cur_noise_pct) s += ", " + format_double("%.3g%%", *r.cur_noise_pct) + " now";
  if (r.cur_cv) s += format_double(", %.3g%% across repetitions", *r.cur_cv * 100.0);
  if (r.fresh_processes > 0 && r.change) s += "; " + fastest_of_text(r);
  return s;
}

std::string colour_of(const Row& r) {
  const std::string_view k = kind_of(r.verdict).colour;
  if (!k.empty()) return std::string(k);
  return r.noisy ? "\033[33m" : "";
}

std::string pad(std::string s, std::size_t w, bool right = false) {
  if (s.size() >= w) return s;
  const std::string fill(w - s.size(), ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

bool CompareReport::errored_binaries() const {
  return std::any_of(binaries.begin(), binaries.end(),
                     [](const BinaryRun& b) { return b.status == BinaryRun::Status::Errored; });
}

bool CompareReport::failed() const { return errored_binaries() || comparison.failed(); }

std::vector<std::string> CompareReport::all_warnings() const {
  std::vector<std::string> out = warnings;
  out.insert(out.end(), comparison.warnings.begin(), comparison.warnings.end());
  return out;
}

std::string render_terminal(const CompareReport& rep, bool colour) {
  const Comparison& c = rep.comparison;
  std::string out;
  const char* bold = colour ? "\033[1m" : "";
  const char* reset = colour ? "\033[0m" : "";
  const char* yellow = colour ? "\033[1;33m" : "";
  out += std::string(bold) + "gpucheck compare" + reset + ": " + c.baseline_source + " (" + c.gpu_base + ") -> " +
         c.current_source + " (" + c.gpu_cur + ")\n";
  out += "metric " + c.metric + " (" + direction_text(c.direction) + "), " + threshold_text(c) + ", alpha " +
         format_double("%g", c.alpha) + "\n";
  for (const auto& w : rep.all_warnings()) out += std::string(yellow) + "WARNING: " + reset + w + "\n";
  for (const auto& a : rep.activity) out += a + "\n";
  if (!c.context.empty()) {
    out += std::string(bold) + "context differs:" + reset + "\n";
    std::size_t w = 0;
    for (const auto& d : c.context) w = std::max(w, d.label.size());
    for (const auto& d : c.context) out += "  " + pad(d.label, w) + "  " + d.base + " -> " + d.cur + "\n";
  }
  if (c.counts[Verdict::HostDiffers]) out += host_line(c) + "\n";
  std::size_t bw = 0;
  for (const auto& b : rep.binaries)
    if (b.status != BinaryRun::Status::Ok) bw = std::max(bw, b.name.size() + b.pass.size() + 3);
  for (const auto& b : rep.binaries)
    if (b.status != BinaryRun::Status::Ok)
      out += "binary " + pad(b.name + " (" + b.pass + ")", bw) + "  " + binary_status(b) + ": " + b.reason +
             (b.log.empty() ? "" : " (log " + b.log + ")") + "\n";

  const std::string rate_head = "rate";
  std::vector<std::array<std::string, 7>> cells;
  std::vector<const Row*> shown;
  cells.reserve(c.rows.size() + 1);
  cells.push_back({"name", "baseline", "current", "change", "verdict", rate_head, "notes"});
  for (const Row& r : c.rows) {
    if (is_report_only(r)) continue;
    shown.push_back(&r);
    cells.push_back({r.name, format_metric(c.metric, r.base), format_metric(c.metric, r.cur), format_change(r.change),
                     verdict_text(r), rate_text(r, " -> "), notes_text(r)});
  }
  std::array<std::size_t, 7> w{};
  for (const auto& row : cells)
    for (std::size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], row[i].size());
  // Each line built in one reused buffer and appended (a million rows: no copy per cell).
  out.reserve(out.size() + cells.size() * (std::accumulate(w.begin(), w.end(), std::size_t{0}) + 2 * w.size()));
  std::string line;
  for (std::size_t ri = 0; ri < cells.size(); ++ri) {
    const auto& row = cells[ri];
    line.clear();
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool right = i >= 1 && i <= 3;
      const std::size_t fill = w[i] - row[i].size();
      const std::string paint = i == 4 && ri > 0 && colour ? colour_of(*shown[ri - 1]) : std::string();
      if (i) line += "  ";
      line += paint;
      if (right) line.append(fill, ' ');
      line += row[i];
      if (!right) line.append(fill, ' ');
      if (!paint.empty()) line += reset;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (ri == 0 && colour) out += bold;
    out += line;
    if (ri == 0 && colour) out += reset;
    out += '\n';
  }
  if (const auto ro = rows_where(c, is_report_only); !ro.empty()) {
    out += std::string(bold) + "report only (shown, never gated):" + reset + "\n";
    std::size_t nw = 0;
    for (const Row* r : ro) nw = std::max(nw, r->name.size());
    for (const Row* r : ro)
      out += "  " + pad(r->name, nw) + "  " + format_metric(c.metric, r->base) + " -> " +
             format_metric(c.metric, r->cur) + "  " + pad(format_change(r->change), 8, true) + "  cv " +
             report_only_cv(*r) + (r->note.empty() ? "" : "; " + r->note) + "; " + r->rule_why + "\n";
  }
  if (const auto cf = rows_where(c, was_reconfirmed); !cf.empty()) {
    out += std::string(bold) + confirmation_head(rep, cf.size()) + ":" + reset + "\n";
    std::size_t nw = 0;
    for (const Row* r : cf) nw = std::max(nw, r->name.size());
    for (const Row* r : cf)
      out += "  " + pad(std::string(confirmation_name(r->confirmation)), 13) + "  " + pad(r->name, nw) + "  " +
             confirmation_detail(*r) + "\n";
  }
  out += summary_text(rep) + "\n";
  if (c.stale) out += stale_line(*c.stale) + "\n";
  const bool failed = rep.failed();
  out += std::string(colour ? (failed ? "\033[1;31m" : "\033[1;32m") : "") + "result: " + result_text(rep) + reset + "\n";
  return out;
}

std::string render_markdown(const CompareReport& rep) {
  const Comparison& c = rep.comparison;
  std::string out;
  out += "### gpucheck compare: " + std::string(rep.failed() ? ":x: " : ":white_check_mark: ") + result_text(rep) + "\n\n";
  for (const auto& w : rep.all_warnings()) out += "> **WARNING**: " + escape_markdown_cell(w) + "\n\n";
  out += "Baseline " + markdown_code(c.baseline_source) + " (" + escape_markdown_cell(c.gpu_base) + ") against current " +
         markdown_code(c.current_source) + " (" + escape_markdown_cell(c.gpu_cur) + "); metric " + markdown_code(c.metric) + " (" +
         direction_text(c.direction) + "), " + threshold_text(c) + ", alpha " + format_double("%g", c.alpha) + ".\n\n";
  out += summary_text(rep) + ".\n\n";
  if (c.stale) out += escape_markdown_cell(stale_line(*c.stale)) + "\n\n";
  if (!rep.activity.empty()) {
    for (const auto& a : rep.activity) out += "- " + escape_markdown_cell(a) + "\n";
    out += "\n";
  }
  if (!c.context.empty()) {
    out += "**Context differs**\n\n| | baseline | current |\n|---|---|---|\n";
    for (const auto& d : c.context)
      out += "| " + escape_markdown_cell(d.label) + " | " + escape_markdown_cell(d.base) + " | " +
             escape_markdown_cell(d.cur) + " |\n";
    out += "\n";
  }
  if (c.counts[Verdict::HostDiffers]) out += escape_markdown_cell(host_line(c)) + ".\n\n";
  if (!rep.binaries.empty()) {
    std::string table = "| binary | pass | status | time | cases | reason |\n|---|---|---|---:|---|---|\n";
    for (const auto& b : rep.binaries)
      table += "| " + escape_markdown_cell(b.name) + " | " + b.pass + " | " +
               (b.status == BinaryRun::Status::Errored ? "**ERRORED**" : binary_status(b)) + " | " +
               format_double("%.1f s", b.seconds) + " | " + binary_cases(b) + " | " + escape_markdown_cell(b.reason) +
               " |\n";
    if (rep.errored_binaries()) out += "**Binaries**\n\n" + table + "\n";
    else out += "<details><summary>" + std::to_string(rep.binaries.size()) + " binary runs</summary>\n\n" + table + "\n</details>\n\n";
  }
  if (const auto cf = rows_where(c, was_reconfirmed); !cf.empty()) {
    out += "**" + escape_markdown_cell(confirmation_head(rep, cf.size())) + "**\n\n| name | confirmation | detail |\n|---|---|---|\n";
    for (const Row* r : cf)
      out += "| " + escape_markdown_cell(r->name) + " | " +
             (r->confirmation == Confirmation::NotConfirmed ? std::string("not confirmed")
                                                            : "**" + std::string(confirmation_name(r->confirmation)) + "**") +
             " | " + escape_markdown_cell(confirmation_detail(*r)) + " |\n";
    out += "\n";
  }
  auto header = [] { return std::string("| name | baseline | current | change | verdict | rate | notes |\n|---|---:|---:|---:|---|---|---|\n"); };
  auto line = [&](const Row& r) {
    return "| " + escape_markdown_cell(r.name) + " | " + format_metric(c.metric, r.base) + " | " +
           format_metric(c.metric, r.cur) + " | " + format_change(r.change) + " | " +
           (r.fails_gate ? "**" + verdict_text(r) + "**" : verdict_text(r)) + " | " +
           escape_markdown_cell(rate_text(r, " → ")) + " | " + escape_markdown_cell(notes_text(r)) + " |\n";
  };
  std::string notable, quiet, report_only;
  std::size_t n_quiet = 0;
  for (const Row& r : c.rows) {
    if (is_report_only(r)) {
      report_only += "| " + escape_markdown_cell(r.name) + " | " + format_metric(c.metric, r.base) + " | " +
                     format_metric(c.metric, r.cur) + " | " + format_change(r.change) + " | " +
                     escape_markdown_cell(report_only_cv(r)) + " | " +
                     escape_markdown_cell(r.note.empty() ? r.rule_why : r.note + "; " + r.rule_why) + " |\n";
    } else if (r.verdict == Verdict::Same && !r.noisy) {
      quiet += line(r);
      ++n_quiet;
    } else {
      notable += line(r);
    }
  }
  if (!notable.empty()) out += header() + notable + "\n";
  if (!report_only.empty())
    out += "**Report only** (shown, never gated)\n\n| name | baseline | current | change | cv | why |\n|---|---:|---:|---:|---|---|\n" +
           report_only + "\n";
  if (n_quiet) {
    out += "<details><summary>" + std::to_string(n_quiet) + " unchanged</summary>\n\n" + header() + quiet +
           "\n</details>\n";
  }
  return out;
}

namespace {

// compare.json's rows written straight into the text, no document built and freed per row (its
// keys and values allocated a million times): the member names are fixed ASCII; numbers go through
// nlohmann's own to_chars and strings with anything to escape through its serializer, so the
// bytes are those json::dump(2) writes (tests/unit/compare/test_render.cpp holds them to it).
class RowText {
 public:
  RowText(std::string& out, std::size_t indent) : out_(out), indent_(indent) {}
  void open() {
    out_ += '{';
    indent_ += 2;
    first_ = true;
  }
  void close() {
    indent_ -= 2;
    out_ += '\n';
    out_.append(indent_, ' ');
    out_ += '}';
    first_ = false;
  }
  RowText& key(std::string_view k) {
    out_ += first_ ? "\n" : ",\n";
    first_ = false;
    out_.append(indent_, ' ');
    out_ += '"';
    out_ += k;
    out_ += "\": ";
    return *this;
  }
  void number(double v) {
    if (!std::isfinite(v)) {
      out_ += "null";
      return;
    }
    std::array<char, 64> buf{};
    const char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), v);
    out_.append(buf.data(), static_cast<std::size_t>(end - buf.data()));
  }
  void number(std::optional<double> v) {
    if (v) number(*v);
    else out_ += "null";
  }
  void integer(int v) { out_ += std::to_string(v); }
  void boolean(bool b) { out_ += b ? "true" : "false"; }
  void string(std::string_view s) {
    const bool plain = std::all_of(s.begin(), s.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\'; });
    if (!plain) {
      out_ += nlohmann::ordered_json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
    }
    out_ += '"';
    out_ += s;
    out_ += '"';
  }
  void strings(const std::vector<std::string>& v) {
    if (v.empty()) {
      out_ += "[]";
      return;
    }
    out_ += "[\n";
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out_ += ",\n";
      out_.append(indent_ + 2, ' ');
      string(v[i]);
    }
    out_ += '\n';
    out_.append(indent_, ' ');
    out_ += ']';
  }

 private:
  std::string& out_;
  std::size_t indent_;
  bool first_ = true;
};

// One row of compare.json, its members in the file's order.
void write_row(RowText& t, const Row& r) {
  t.open();
  t.key("name").string(r.name);
  t.key("verdict").string(verdict_name(r.verdict));
  t.key("fails_gate").boolean(r.fails_gate);
  t.key("noisy").boolean(r.noisy);
  t.key("baseline").number(r.base);
  t.key("current").number(r.cur);
  t.key("change").number(r.change);
  t.key("threshold_pct").number(r.threshold_pct);
  t.key("p_value").number(r.p_value);
  t.key("exact_test").boolean(r.exact_test);
  t.key("baseline_cv").number(r.base_cv);
  t.key("current_cv").number(r.cur_cv);
  t.key("baseline_repetitions").integer(r.base_reps);
  t.key("current_repetitions").integer(r.cur_reps);
  t.key("rate_counter").string(r.rate);
  t.key("baseline_rate").number(r.base_rate);
  t.key("current_rate").number(r.cur_rate);
  t.key("note").string(r.note);
  t.key("why").strings(r.why);
  t.key("baseline_noise_cv_pct").number(r.base_noise_pct);
  t.key("current_noise_cv_pct").number(r.cur_noise_pct);
  if (r.fresh_processes > 0) {
    t.key("fresh_processes").integer(r.fresh_processes);
    t.key("baseline_processes").integer(r.base_processes);
    t.key("judged_by").string(r.paired ? "median_pair" : "fastest");
  }
  if (r.verdict == Verdict::ReportOnly || r.verdict == Verdict::HostDiffers) {
    t.key("measured_verdict").string(verdict_name(r.measured));
    t.key("rule_why").string(r.rule_why);
  }
  if (r.verdict == Verdict::MethodChanged) {
    t.key("method").open();
    t.key("baseline").string(r.base_method);
    t.key("current").string(r.cur_method);
    t.close();
  }
  if (r.listed_cv_pct) t.key("listed_cv_pct").number(*r.listed_cv_pct);
  if (r.confirmation != Confirmation::None) {
    t.key("confirmation").open();
    t.key("status").string(confirmation_name(r.confirmation));
    t.key("first_change").number(r.first_change);
    t.key("first_current_repetitions").integer(r.first_cur_reps);
    t.close();
  }
  t.close();
}

}  // namespace

std::string render_json(const CompareReport& rep) {
  const Comparison& c = rep.comparison;
  using json = nlohmann::ordered_json;
  json j;
  j["baseline"] = c.baseline_source;
  j["current"] = c.current_source;
  j["metric"] = c.metric;
  j["direction"] = c.direction == Direction::LowerIsBetter ? "lower_is_better" : "higher_is_better";
  j["default_threshold_pct"] = c.default_threshold_pct;
  j["thresholds_file"] = c.thresholds_source;
  j["alpha"] = c.alpha;
  j["allow_missing"] = c.allow_missing;
  j["result"] = rep.failed() ? "fail" : "pass";
  const Counts& n = c.counts;
  {
    // The kinds in compare.json's order, the noisy count at kNoisyCountAt among them.
    std::vector<std::pair<int, std::pair<std::string_view, int>>> counts;
    for (const VerdictKind& k : verdict_kinds()) counts.push_back({k.count_at, {k.count_key, n[k.verdict]}});
    counts.push_back({kNoisyCountAt, {"noisy", n.noisy}});
    std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    j["counts"] = json::object();
    for (const auto& [at, kv] : counts) j["counts"][std::string(kv.first)] = kv.second;
  }
  j["warnings"] = rep.all_warnings();
  if (c.stale)
    j["baseline_stale"] = {{"cases", c.stale->cases},          {"least_pct", c.stale->least * 100.0},
                           {"most_pct", c.stale->most * 100.0}, {"since_date", c.stale->since_date},
                           {"since_commit", c.stale->since_commit}, {"line", stale_line(*c.stale)},
                           {"command", stale_command(*c.stale)}};
  else j["baseline_stale"] = nullptr;
  j["gpu_activity"] = rep.activity;
  j["hosts"] = {{"baseline", c.host_base}, {"current", c.host_cur}};
  j["confirm_repetitions"] = rep.confirm_repetitions;
  j["binaries"] = json::array();
  for (const auto& b : rep.binaries)
    j["binaries"].push_back({{"name", b.name},
                             {"pass", b.pass},
                             {"status", binary_status(b)},
                             {"reason", b.reason},
                             {"seconds", b.seconds},
                             {"cases_ok", b.cases_ok},
                             {"cases_errored", b.cases_errored},
                             {"cases_skipped", b.cases_skipped},
                             {"log", b.log}});
  j["context_diff"] = json::array();
  for (const auto& d : c.context)
    j["context_diff"].push_back({{"key", d.key}, {"label", d.label}, {"baseline", d.base}, {"current", d.cur}});
  // The rows are written one at a time after the rest (a million-row document built whole
  // was most of a large compare's output time and memory), in the bytes j.dump(2) gives.
  j["rows"] = json::array();
  std::string out = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  if (c.rows.empty()) return out + "\n";
  out.resize(out.size() - std::string_view("[]\n}").size());  // "rows" is the last member
  out.reserve(out.size() + c.rows.size() * 1024);
  out += "[\n";
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    out += "    ";
    RowText row(out, 4);
    write_row(row, c.rows[i]);
    out += i + 1 < c.rows.size() ? ",\n" : "\n";
  }
  out += "  ]\n}\n";
  return out;
}

std::string render_junit(const CompareReport& rep) {
  const Comparison& c = rep.comparison;
  auto not_compared = [](const Row& r) {
    return r.verdict == Verdict::Skipped || r.verdict == Verdict::NoMetric || r.verdict == Verdict::Missing ||
           r.verdict == Verdict::Errored || r.verdict == Verdict::MethodChanged;
  };
  int failures = 0, skipped = 0, bin_failures = 0;
  for (const Row& r : c.rows) {
    if (r.fails_gate) ++failures;
    else if (not_compared(r)) ++skipped;
  }
  for (const auto& b : rep.binaries) bin_failures += b.status == BinaryRun::Status::Errored ? 1 : 0;
  const std::size_t tests = c.rows.size() + rep.binaries.size();
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"gpucheck compare\" tests=\"" + std::to_string(tests) + "\" failures=\"" +
         std::to_string(failures + bin_failures) + "\" skipped=\"" + std::to_string(skipped) + "\">\n";
  out += "  <testsuite name=\"" + escape_xml(c.current_source) + "\" tests=\"" + std::to_string(c.rows.size()) +
         "\" failures=\"" + std::to_string(failures) + "\" skipped=\"" + std::to_string(skipped) + "\">\n";
  for (const Row& r : c.rows) {
    const std::size_t slash = r.name.find('/');
    const std::string family = slash == std::string::npos ? r.name : r.name.substr(0, slash);
    const double secs = r.cur && c.metric == "real_time" ? *r.cur / 1e9 : 0.0;
    out += "    <testcase classname=\"" + escape_xml(family) + "\" name=\"" + escape_xml(r.name) + "\" time=\"" +
           format_double("%.9f", secs) + "\"";
    const std::string detail = c.metric + " " + format_metric(c.metric, r.base) + " -> " +
                               format_metric(c.metric, r.cur) + " " + format_change(r.change) + "; " + notes_text(r);
    if (r.fails_gate) {
      out += ">\n      <failure message=\"" + escape_xml(std::string(verdict_name(r.verdict)) + ": " + detail) +
             "\" type=\"" + escape_xml(std::string(verdict_name(r.verdict))) + "\"/>\n    </testcase>\n";
    } else if (not_compared(r)) {
      out += ">\n      <skipped message=\"" + escape_xml(std::string(verdict_name(r.verdict)) + ": " + r.note) +
             "\"/>\n    </testcase>\n";
    } else {
      std::string text = std::string(verdict_name(r.verdict)) + ": " + detail;
      if (r.verdict == Verdict::ReportOnly) text += "; cv " + report_only_cv(r) + "; " + r.rule_why;
      out += ">\n      <system-out>" + escape_xml(text) + "</system-out>\n    </testcase>\n";
    }
  }
  out += "  </testsuite>\n";
  if (!rep.binaries.empty()) {
    out += "  <testsuite name=\"benchmark binaries\" tests=\"" + std::to_string(rep.binaries.size()) + "\" failures=\"" +
           std::to_string(bin_failures) + "\" skipped=\"0\">\n";
    for (const auto& b : rep.binaries) {
      out += "    <testcase classname=\"binaries\" name=\"" + escape_xml(b.name + " (" + b.pass + ")") + "\" time=\"" +
             format_double("%.3f", b.seconds) + "\">\n";
      if (b.status == BinaryRun::Status::Errored)
        out += "      <failure message=\"" + escape_xml("ERRORED: " + b.reason) + "\" type=\"ERRORED\"/>\n";
      else
        out += "      <system-out>" + escape_xml(binary_status(b) + ": " + binary_cases(b)) + "</system-out>\n";
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

std::string render_csv(const CompareReport& rep) {
  const Comparison& c = rep.comparison;
  const std::string unit = csv_unit(c.metric);
  std::string out = csv_line({"name", "verdict", "metric", "unit", "baseline", "current", "change_pct", "threshold_pct",
                              "p_value", "baseline_cv_pct", "current_cv_pct", "noisy", "fails_gate", "note"});
  for (const Row& r : c.rows)
    out += csv_line({r.name, std::string(verdict_name(r.verdict)), c.metric, unit, csv_number(r.base), csv_number(r.cur),
                     csv_pct(r.change), csv_number(r.threshold_pct), csv_number(r.p_value), csv_pct(r.base_cv),
                     csv_pct(r.cur_cv), r.noisy ? "1" : "0", r.fails_gate ? "1" : "0", r.note});
  return out;
}

}  // namespace gpucheck::compare
