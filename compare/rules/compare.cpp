// Compare rules. A regression needs three things: the same benchmark on both sides, a change
// in the worse direction beyond its threshold, and (when both sides have repetitions) a
// Mann-Whitney p-value below alpha. Improvements are reported and never fail.
#include "rules/compare.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <numeric>
#include <set>
#include <thread>
#include <unordered_set>

#include "base/format.hpp"
#include "gpucheck/core/environment.hpp"
#include "rules/fresh_minimum.hpp"
#include "rules/host_bound.hpp"
#include "rules/stats.hpp"
#include "gpucheck/core/suggest.hpp"

namespace gpucheck::compare {
namespace {

bool ends_with_any(std::string_view s, std::initializer_list<std::string_view> tails) {
  return std::any_of(tails.begin(), tails.end(), [&](std::string_view t) { return s.ends_with(t); });
}

int order(Verdict v) { return kind_of(v).rank; }

const std::vector<double>* samples_of(const Benchmark& b, const std::string& metric) {
  if (metric == "real_time") return &b.samples_ns;
  const auto it = b.counter_samples.find(metric);
  return it == b.counter_samples.end() ? nullptr : &it->second;
}

std::optional<double> value_of(const Benchmark& b, const std::string& metric) {
  if (metric == "real_time") return b.real_time_ns;
  const auto it = b.counters.find(metric);
  if (it == b.counters.end()) return std::nullopt;
  return it->second;
}

std::optional<double> cv_of(const Benchmark& b, const std::string& metric) {
  if (metric == "real_time") return b.cv;
  if (const auto it = b.counter_cv.find(metric); it != b.counter_cv.end()) return std::fabs(it->second);
  if (const auto* s = samples_of(b, metric)) return gpucheck::coefficient_of_variation(*s);
  return std::nullopt;
}

}  // namespace

std::optional<Direction> direction_for(std::string_view m) {
  if (m == "real_time" || m == "cpu_time" || m.find("latency") != std::string_view::npos ||
      m.starts_with("us_per") || m.starts_with("ns_per") || m.starts_with("ms_per") ||
      ends_with_any(m, {"_us", "_ns", "_ms", "_s", "_time"}))
    return Direction::LowerIsBetter;
  if (ends_with_any(m, {"ps", "PS", "_per_second", "/s"}) || m.starts_with("pct_of_") ||
      m == "bytes_per_second" || m == "items_per_second")
    return Direction::HigherIsBetter;
  return std::nullopt;
}

std::string rate_counter(const Benchmark& b) {
  const bool one_rank = one_rank_collective(b);
  for (const auto k : contract::kPreferredRates) {
    if (k == contract::counter::busbw_GBps && one_rank) continue;  // 0 by definition there
    if (b.counters.count(std::string(k)) != 0) return std::string(k);
  }
  return {};
}

bool one_rank_collective(const Benchmark& b) {
  const auto r = b.counters.find(contract::counter::ranks);
  return r != b.counters.end() && r->second == 1.0 && b.counters.count(contract::counter::algbw_GBps) != 0;
}

const std::vector<std::pair<std::string, std::string>>& context_keys() {
  static const std::vector<std::pair<std::string, std::string>> k{
      {"gpu_name", "GPU"},
      {"gpu_uuid", "GPU UUID"},
      {"gpu_cc", "compute capability"},
      {"gpu_sms", "SMs"},
      {"gpu_memory_MiB", "memory (MiB)"},
      {"gpu_l2_MiB", "L2 (MiB)"},
      {"driver_version", "driver"},
      {"cuda_runtime", "CUDA runtime"},
      {"cuda_driver_api", "CUDA driver API"},
      {"cublas_version", "cuBLAS"},
      {"cudnn_version", "cuDNN"},
      {"nccl_version", "NCCL"},
      {"sm_clock_MHz", "SM clock (MHz)"},
      {"sm_clock_max_MHz", "SM clock max (MHz)"},
      {"mem_clock_MHz", "memory clock (MHz)"},
      {"power_limit_W", "power limit (W)"},
      {"pcie_gen_current", "PCIe gen"},
      {"pcie_gen_max", "PCIe gen max"},
      {"pcie_width_current", "PCIe width"},
      {"pcie_width_max", "PCIe width max"},
      {"ecc", "ECC"},
      {"throttle_reasons", "throttle reasons"},
      {"host_name", "host"},
      {"host_cpu", "host CPU"},
      {"cpu_pinned", "CPU pinned"},
      {"gpucheck_commit", "gpucheck commit"},
      {"gpucheck_suite", "suite"},
      {"gpucheck_device_index", "device index"},
  };
  return k;
}

std::vector<ContextDiff> diff_context(const Results& base, const Results& cur) {
  std::vector<ContextDiff> out;
  for (const auto& [key, label] : context_keys()) {
    const std::string a = base.context_value(key);
    const std::string b = cur.context_value(key);
    if (a != b) out.push_back({key, label, a, b});
  }
  return out;
}

bool Comparison::failed() const {
  return std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.fails_gate; });
}

Counts counts_of(const std::vector<Row>& rows) {
  Counts n;
  for (const Row& r : rows) {
    ++n[r.verdict];
    if (r.noisy) ++n.noisy;
  }
  return n;
}

bool worse_direction(const Row& r, Direction d) {
  if (!r.change) return false;
  return d == Direction::LowerIsBetter ? *r.change > 0 : *r.change < 0;
}

Status check_metric(const Results& baseline, const Results& current, const std::string& metric) {
  if (metric == "real_time") return Done{};
  std::set<std::string> seen;
  for (const Results* r : {&baseline, &current})
    for (const Benchmark& b : r->benchmarks) {
      if (b.counters.count(metric) != 0) return Done{};
      for (const auto& [k, v] : b.counters) seen.insert(k);
    }
  const std::vector<std::string> names(seen.begin(), seen.end());
  std::string hint = did_you_mean(metric, names);
  if (hint.empty() && !names.empty()) {
    std::string list;
    for (std::size_t i = 0; i < names.size() && i < 8; ++i) list += (i ? ", " : "") + names[i];
    hint = " (counters there: " + list + (names.size() > 8 ? ", ..." : "") + ")";
  }
  return Error{"--metric", "no benchmark in either file carries a counter \"" + metric + "\"" + hint};
}

namespace {

std::optional<double> noise_pct(const Benchmark& b) {
  const auto it = b.counters.find(contract::counter::cv_pct);
  if (it == b.counters.end()) return std::nullopt;
  return it->second;
}

// A case measured in `processes` fresh processes (fresh_minimum.hpp): by its median pair when
// the base side ran beside this one, else by the fastest of N. No U test (the figures are levels,
// not one distribution with noise); a side without enough process figures is shown, not gated,
// saying so. False when the row is decided here without a figure each (the caller returns).
bool judge_by_fresh_minimum(Row& r, const Benchmark& b, const Benchmark& k, const CompareOptions& o, int processes) {
  const bool lower_better = o.direction == Direction::LowerIsBetter;
  static const std::vector<double> kNone;
  const auto* sa = samples_of(b, o.metric);
  const auto* sb = samples_of(k, o.metric);
  const auto& base = sa ? *sa : kNone;
  const auto& cur = sb ? *sb : kNone;
  const FreshMinimum f = o.paired_processes ? judge_median_pair(base, cur, processes, lower_better)
                                            : judge_fresh_minimum(base, cur, processes, lower_better);
  r.fresh_processes = processes;
  r.paired = o.paired_processes;
  r.base_processes = sa ? static_cast<int>(sa->size()) : 0;
  if (!f.base || !f.cur) {
    r.measured = Verdict::Skipped;  // not compared
    r.verdict = Verdict::ReportOnly;
    const bool base_short = r.base_processes < processes;
    std::string advice;  // a base build's processes are re-run by the next gate: nothing to do
    if (!o.paired_processes)
      advice = base_short ? "; re-record the baseline from fresh processes (gpucheck baseline update --from-history, or "
                            "gpucheck run --repetitions N --fresh-processes)"
                          : "; measure it in N fresh processes (the gate does; gpucheck run --repetitions N --fresh-processes)";
    r.note = f.why_not + ": shown, not gated" + advice;
    r.fails_gate = fails_gate(r.verdict, o.allow_missing);
    return false;
  }
  r.base = f.base;
  r.cur = f.cur;
  r.base_cv = cv_of(b, o.metric);
  r.cur_cv = cv_of(k, o.metric);
  return true;
}

// A benchmark on both sides with a figure each: the threshold, noise and significance rules.
void judge(Row& r, const Benchmark& b, const Benchmark& k, const CompareOptions& o, const Rule& rule) {
  const bool lower_better = o.direction == Direction::LowerIsBetter;
  r.base = value_of(b, o.metric);
  r.cur = value_of(k, o.metric);
  if (!r.base && !r.cur) {
    r.verdict = Verdict::NoMetric;
    r.note = "no " + o.metric + " counter on either side";
    return;
  }
  if (!r.cur) {  // the baseline had the figure; current lost it
    r.verdict = Verdict::Missing;
    r.note = "current has no " + o.metric + " counter (the baseline has)";
    r.fails_gate = fails_gate(r.verdict, o.allow_missing);
    return;
  }
  if (!r.base) {
    r.verdict = Verdict::New;
    r.note = "the baseline has no " + o.metric + " counter";
    return;
  }
  if (*r.base == 0.0) {
    r.verdict = Verdict::NoMetric;
    r.note = "baseline " + o.metric + " is zero: no ratio";
    return;
  }
  // Judged by the fastest of fresh processes: its own two figures, and neither the noise flag
  // nor the U test below (two levels are not one distribution with noise).
  const bool fresh = rule.fresh_processes() > 0;
  if (fresh && !judge_by_fresh_minimum(r, b, k, o, rule.fresh_processes())) return;
  r.change = (*r.cur - *r.base) / *r.base;
  const double worse = lower_better ? *r.change : -*r.change;
  const double limit = r.threshold_pct / 100.0 * (1.0 + kThresholdSlack);

  if (!fresh) {
    r.base_cv = cv_of(b, o.metric);
    r.cur_cv = cv_of(k, o.metric);
    const double half = r.threshold_pct / 200.0;
    r.noisy = (r.base_cv && *r.base_cv > half) || (r.cur_cv && *r.cur_cv > half);

    const auto* sa = samples_of(b, o.metric);
    const auto* sb = samples_of(k, o.metric);
    const auto min_n = static_cast<std::size_t>(std::max(1, o.min_repetitions_for_test));
    if (sa != nullptr && sb != nullptr && sa->size() >= min_n && sb->size() >= min_n) {
      if (const auto t = mann_whitney_u(*sa, *sb)) {
        r.p_value = t->p_value;
        r.exact_test = t->exact;
      }
    }
  }
  const bool significant = !r.p_value || *r.p_value < o.alpha;
  if (worse > limit) {
    r.verdict = significant ? Verdict::Regression : Verdict::Unconfirmed;
  } else if (-worse > limit) {
    r.verdict = significant ? Verdict::Improvement : Verdict::Unconfirmed;
  } else {
    r.verdict = Verdict::Same;
  }
  r.fails_gate = fails_gate(r.verdict, o.allow_missing);
}

std::string state_note(const Benchmark& k) {
  return (k.state == RunState::Errored ? "errored: " : "skipped: ") + k.message;
}

// A baseline benchmark against what current has for it (maybe nothing), under its rule.
Row baseline_row(const Benchmark& b, const Benchmark* k, const CompareOptions& o, const Rule& rule) {
  Row r;
  r.name = b.name;
  r.threshold_pct = rule.pct;
  r.base_reps = b.repetitions;
  const bool base_ok = b.state == RunState::Ok;
  if (base_ok) r.base = value_of(b, o.metric);
  r.rate = rate_counter(b);
  if (!r.rate.empty() && base_ok) r.base_rate = b.counters.at(r.rate);
  if (base_ok) r.base_noise_pct = noise_pct(b);
  if (k == nullptr) {
    r.verdict = base_ok ? Verdict::Missing : Verdict::Skipped;
    r.note = base_ok ? "not in current results" : "no figure in the baseline either";
    r.fails_gate = fails_gate(r.verdict, o.allow_missing);
    return r;
  }
  r.cur_reps = k->repetitions;
  if (k->state == RunState::Ok) {
    r.cur_noise_pct = noise_pct(*k);
    if (!r.rate.empty())
      if (const auto it = k->counters.find(r.rate); it != k->counters.end()) r.cur_rate = it->second;
  }
  if (k->state != RunState::Ok) {
    // A figure the baseline had and current lacks counts as missing, whatever the reason.
    r.verdict = !base_ok ? Verdict::Skipped : k->state == RunState::Errored ? Verdict::Errored : Verdict::Missing;
    r.note = state_note(*k);
    r.fails_gate = fails_gate(r.verdict, o.allow_missing);
    return r;
  }
  if (!base_ok) {
    r.cur = value_of(*k, o.metric);
    r.verdict = Verdict::New;
    r.note = std::string(b.state == RunState::Errored ? "baseline errored: " : "baseline skipped: ") + b.message;
    return r;
  }
  r.base_method = effective_method(b.method);
  r.cur_method = effective_method(k->method);
  if (!same_method(b.method, k->method)) {
    // Two ways of measuring: no ratio between them means anything, so no verdict, no
    // confirmation and no stale line; the figures are shown as measured.
    r.cur = value_of(*k, o.metric);
    r.verdict = Verdict::MethodChanged;
    r.note = method_note(b.method, k->method);
    r.fails_gate = fails_gate(r.verdict, o.allow_missing);
    return r;
  }
  judge(r, b, *k, o, rule);
  return r;
}

Row current_only_row(const Benchmark& k, const CompareOptions& o, const Rule& rule) {
  Row r;
  r.name = k.name;
  r.threshold_pct = rule.pct;
  r.cur_reps = k.repetitions;
  r.verdict = k.state == RunState::Ok ? Verdict::New : Verdict::Skipped;
  if (k.state == RunState::Ok) {
    r.cur = value_of(k, o.metric);
    r.rate = rate_counter(k);
    if (!r.rate.empty()) r.cur_rate = k.counters.at(r.rate);
    r.cur_noise_pct = noise_pct(k);
    r.note = "not in the baseline";
  } else {
    r.note = state_note(k);
  }
  return r;
}

// A side's host reference (docs/GATE.md, host-bound): host_ref_us, and host_ref_max_us when
// the binary measured the reference warm before and after the case.
std::optional<HostReference> host_reference(const Benchmark* b) {
  if (b == nullptr || b->state != RunState::Ok) return std::nullopt;
  const auto it = b->counters.find(contract::counter::host_ref_us);
  if (it == b->counters.end() || !(it->second > 0)) return std::nullopt;
  HostReference r{it->second, std::nullopt};
  if (const auto m = b->counters.find(contract::counter::host_ref_max_us); m != b->counters.end()) r.max_us = m->second;
  return r;
}

std::string reference_text(const HostReference& base, const HostReference& cur) {
  return "host reference " + format_double("%.0f", cur.typical_us) + " us vs " + format_double("%.0f", base.typical_us) +
         " us";
}

// The row shown in the report-only section, never gated, keeping what it measured.
void show_not_gated(Row& r, const Rule& rule, const Comparison& c) {
  r.measured = r.verdict;
  r.verdict = Verdict::ReportOnly;
  r.fails_gate = fails_gate(r.verdict, c.allow_missing);
  r.rule_why = rule.why;
}

// The report-only and host-bound lists, applied over the plain verdict.
void apply_rule(Row& r, const Rule& rule, bool same_host, const Comparison& c, const Benchmark* base,
                const Benchmark* cur, const CompareOptions& o) {
  if (r.verdict == Verdict::MethodChanged) return;  // not compared: no list applies
  if (rule.kind == RuleKind::ReportOnly) {
    show_not_gated(r, rule, c);
    r.listed_cv_pct = rule.cv_pct;
    return;
  }
  if (rule.fresh_processes() > 0 && r.verdict == Verdict::ReportOnly) {  // too few fresh processes
    r.rule_why = rule.why;
    return;
  }
  if (rule.fresh_processes() > 0 && r.change && !o.fresh_not_gated.empty()) {  // no runs of this runner's own
    show_not_gated(r, rule, c);
    r.note = o.fresh_not_gated;
    return;
  }
  if (rule.kind != RuleKind::HostBound || !r.change) return;
  HostBoundInput in;
  const double ratio = 1.0 + *r.change;
  in.slowdown = o.direction == Direction::LowerIsBetter ? ratio : (ratio > 0 ? 1.0 / ratio : HUGE_VAL);
  in.limit_pct = r.threshold_pct;
  in.same_host_cpu = same_host;
  in.gpu_other_processes = o.gpu_other_processes;
  // The fastest of fresh processes already is the host at its best: no reference excuses it.
  if (rule.fresh_processes() == 0) {
    in.base_ref = host_reference(base);
    in.cur_ref = host_reference(cur);
  }
  const HostBoundJudgement j = judge_host_bound(in);
  const std::string pct = format_double("%g%%", r.threshold_pct);
  switch (j.outcome) {
    case HostBoundOutcome::OtherHostCpu:
      r.measured = r.verdict;
      r.verdict = Verdict::HostDiffers;
      r.fails_gate = fails_gate(r.verdict, c.allow_missing);
      r.rule_why = rule.why;
      r.note = "host-bound: gated at " + pct + " only against a baseline of the same host CPU" +
               (c.host_base == "unknown" || c.host_cur == "unknown" ? " (a side does not record host_cpu)" : "");
      return;
    case HostBoundOutcome::GatedWithNeighbour:
      r.note = "host-bound, but " + std::to_string(o.gpu_other_processes) + " other process" +
               (o.gpu_other_processes == 1 ? "" : "es") + " used the GPU: gated at " + pct + " whatever the host reference";
      return;
    case HostBoundOutcome::Gated:
      if (j.reference == ReferenceUse::Unstable && worse_direction(r, o.direction))
        r.note = "host-bound: the host reference's readings disagree (" +
                 format_double("%.0f", in.base_ref->typical_us) + "-" + format_double("%.0f", in.base_ref->max_us.value_or(0)) +
                 " us baseline, " + format_double("%.0f", in.cur_ref->typical_us) + "-" +
                 format_double("%.0f", in.cur_ref->max_us.value_or(0)) + " us now): not used, gated at " + pct +
                 " as measured; measure again";
      return;
    case HostBoundOutcome::Adjusted: {
      const std::string moved = reference_text(*in.base_ref, *in.cur_ref) + ", " + format_double("%.2f", j.ref_ratio) + "x";
      const std::string left = format_change(j.adjusted_slowdown - 1.0);
      if (r.verdict == Verdict::Regression && !j.past_limit) {
        // Excused by as much as the reference moved, and no more: the figure shows it.
        r.measured = r.verdict;
        r.verdict = Verdict::HostDiffers;
        r.fails_gate = fails_gate(r.verdict, c.allow_missing);
        r.rule_why = rule.why;
        r.note = "host-bound: the host ran slower while this was measured (" + moved + "); " + left +
                 " is left beyond it, within " + pct + ": not gated";
      } else if (r.verdict == Verdict::Regression) {
        r.note = "host-bound: the host ran slower (" + moved + "), but " + left + " is left beyond it: past " + pct;
      }
      return;
    }
  }
}

// The timing environment each side recorded (core/environment.hpp): a difference is shown
// above the table, never failed on; a baseline recorded before the environment was says so.
std::vector<std::string> environment_warnings(const Results& baseline, const Results& current) {
  const std::string key(kEnvironmentContextKey);
  const auto b = baseline.context.find(key), k = current.context.find(key);
  if (k == current.context.end()) return {};
  const Environment cur = parse_environment_record(k->second);
  if (b == baseline.context.end()) {
    if (cur.empty()) return {};
    return {"the baseline records no environment (recorded before gpucheck recorded it); this run had " +
            environment_record(cur)};
  }
  std::vector<std::string> out;
  for (const auto& ch : environment_changes(parse_environment_record(b->second), cur))
    out.push_back("environment differs from the baseline's: " + ch.name + " " + (ch.base ? "=" + *ch.base : "unset") +
                  " -> " + (ch.cur ? "=" + *ch.cur : "unset"));
  return out;
}

// A baseline case with no figure now, of a family whose binary errored, is that binary's
// error, not a missing case. Applied after the sort: such a row keeps a missing case's place
// in the table (where the gate has always listed it).
void blame_errored_families(std::vector<Row>& rows, const CompareOptions& o) {
  for (const ErroredFamily& f : o.errored_families)
    for (Row& r : rows) {
      if (r.verdict != Verdict::Missing || !contract::in_family(r.name, f.family)) continue;
      r.verdict = Verdict::Errored;
      r.note = f.binary + " ERRORED: " + f.reason;
      r.fails_gate = fails_gate(r.verdict, o.allow_missing);
    }
}

// The improvements past their limit (report-only rows are never Improvement). A case judged
// against the base build's processes is faster than the base build, not than the stored
// baseline: no re-recording follows from it.
std::optional<StaleBaseline> stale_of(const std::vector<Row>& rows, const Results& baseline) {
  StaleBaseline s;
  for (const Row& r : rows) {
    if (r.verdict != Verdict::Improvement || !r.change || r.paired) continue;
    const double gain = std::fabs(*r.change);
    s.least = s.cases == 0 ? gain : std::min(s.least, gain);
    s.most = s.cases == 0 ? gain : std::max(s.most, gain);
    ++s.cases;
  }
  if (s.cases == 0) return std::nullopt;
  const std::string dates = baseline.context_value("date");
  std::string first = dates.substr(0, dates.find(" | "));
  for (std::size_t at = dates.find(" | "); at != std::string::npos; at = dates.find(" | ", at + 3)) {
    const std::string d = dates.substr(at + 3, dates.find(" | ", at + 3) - at - 3);
    if (d < first) first = d;
  }
  s.since_date = first;
  s.since_commit = baseline.context_value("gpucheck_commit");
  s.suite = baseline.context_value("gpucheck_suite");
  return s;
}

}  // namespace

bool measures_any_in_fresh_processes(const Thresholds& t, const Results& r) {
  return std::any_of(r.benchmarks.begin(), r.benchmarks.end(),
                     [&t](const Benchmark& b) { return t.rule_for(b.name).fresh_processes() > 0; });
}

// Rows from which a comparison is judged on two threads (below it a thread costs more than it saves).
constexpr std::size_t kParallelRows = 20000;

Comparison compare_results(const Results& baseline, const Results& current, const CompareOptions& o) {
  Comparison c;
  c.baseline_source = baseline.source;
  c.current_source = current.source;
  c.metric = o.metric;
  c.direction = o.direction;
  c.alpha = o.alpha;
  c.allow_missing = o.allow_missing;
  c.thresholds_source = o.thresholds.source;
  c.default_threshold_pct = o.thresholds.default_pct;
  c.context = diff_context(baseline, current);
  for (auto& w : environment_warnings(baseline, current)) c.warnings.push_back(std::move(w));
  c.gpu_base = baseline.context_value("gpu_name");
  c.gpu_cur = current.context_value("gpu_name");
  c.host_base = baseline.context_value("host_cpu");
  c.host_cur = current.context_value("host_cpu");
  const bool same_host = c.host_base == c.host_cur && c.host_base != "unknown";

  // Each row's two sides, found once (a lookup in a large index is a few cache misses).
  std::vector<std::pair<const Benchmark*, const Benchmark*>> sides;
  sides.reserve(std::max(baseline.benchmarks.size(), current.benchmarks.size()));
  for (const Benchmark& b : baseline.benchmarks) sides.emplace_back(&b, current.find(b.name));
  for (const Benchmark& k : current.benchmarks)
    if (baseline.find(k.name) == nullptr) sides.emplace_back(nullptr, &k);
  c.rows.resize(sides.size());
  // Each row depends on its own two sides only: a large comparison judges its halves on two
  // threads (a million rows: about 1.7 s of one core).
  const auto judge_rows = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      const Rule rule = o.thresholds.rule_for(sides[i].first ? sides[i].first->name : sides[i].second->name);
      c.rows[i] = sides[i].first ? baseline_row(*sides[i].first, sides[i].second, o, rule)
                                 : current_only_row(*sides[i].second, o, rule);
      apply_rule(c.rows[i], rule, same_host, c, sides[i].first, sides[i].second, o);
    }
  };
  const std::size_t n = sides.size();
  if (n >= kParallelRows && std::thread::hardware_concurrency() > 1) {
    auto first_half = std::async(std::launch::async, judge_rows, std::size_t{0}, n / 2);
    judge_rows(n / 2, n);
    first_half.get();
  } else {
    judge_rows(0, n);
  }

  const Thresholds& t = o.thresholds;
  if (o.warn_unmatched_globs && !(t.report_only.empty() && t.host_bound.empty() && t.overrides.empty())) {
    std::vector<std::string> names;
    names.reserve(c.rows.size());
    for (const Row& r : c.rows) names.push_back(r.name);
    for (const auto& g : t.unmatched_globs(names))
      c.warnings.push_back(t.source + ": " + g + " matches no benchmark in either file");
  }

  const bool lower_better = o.direction == Direction::LowerIsBetter;
  // Sorted as indices and moved into place once: a row is a few hundred bytes, and a million
  // of them moved at every merge pass was a large compare's slowest step.
  std::vector<std::size_t> at(c.rows.size());
  std::iota(at.begin(), at.end(), std::size_t{0});
  std::stable_sort(at.begin(), at.end(), [&](std::size_t i, std::size_t j) {
    const Row& a = c.rows[i];
    const Row& b = c.rows[j];
    if (order(a.verdict) != order(b.verdict)) return order(a.verdict) < order(b.verdict);
    const double wa = a.change ? (lower_better ? *a.change : -*a.change) : 0.0;
    const double wb = b.change ? (lower_better ? *b.change : -*b.change) : 0.0;
    if (a.verdict == Verdict::Improvement) return wa < wb;  // biggest gain first
    if (wa != wb) return wa > wb;
    return a.name < b.name;
  });
  std::vector<Row> sorted;
  sorted.reserve(c.rows.size());
  for (const std::size_t i : at) sorted.push_back(std::move(c.rows[i]));
  c.rows = std::move(sorted);
  blame_errored_families(c.rows, o);
  c.counts = counts_of(c.rows);
  c.stale = stale_of(c.rows, baseline);
  return c;
}

std::string_view effective_method(std::string_view method) { return method.empty() ? std::string_view("1") : method; }

bool same_method(std::string_view a, std::string_view b) {
  // "?" (a method that is not a whole number) matches nothing, itself included.
  return effective_method(a) == effective_method(b) && effective_method(a) != "?";
}

std::string method_note(std::string_view base, std::string_view cur) {
  return "method " + std::string(effective_method(base)) + " -> " + std::string(effective_method(cur)) +
         ": not compared, re-record the baseline";
}

std::string stale_command(const StaleBaseline& s) {
  const std::string suite = s.suite == "unknown" ? "SUITE" : s.suite;
  return "gpucheck baseline update --suite " + suite + " RESULTS, or from a history: gpucheck baseline update " +
         "--from-history FILE --branch B --last N --suite " + suite;
}

std::string stale_line(const StaleBaseline& s) {
  return "baseline stale: " + std::to_string(s.cases) + (s.cases == 1 ? " case" : " cases") +
         " better than the limit by " + format_double("%.1f", s.least * 100.0) + "% to " +
         format_double("%.1f", s.most * 100.0) + "% since the baseline of " + s.since_date + " (commit " +
         s.since_commit + "); re-record: " + stale_command(s);
}

}  // namespace gpucheck::compare
