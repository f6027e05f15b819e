// Hardware comparison report: the model. Columns are runs of one GPU (the files of one run
// merged); each benchmark is read in the counter people quote (TFLOP/s, GB/s, µs per launch)
// and as a speed ratio to the first column, so "0.62x" reads as "this machine reaches 62% of
// the reference". Each ratio carries its noise band (2 x the larger cv of the two figures), so
// a renderer can tell a change from the noise; the summary is computed here, rendered in
// report_render.cpp.
#include "report/report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/format.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/dtype.hpp"
#include "gpucheck/core/names.hpp"

namespace gpucheck::compare {
namespace {

std::string family_of(const std::string& name) {
  const std::size_t s = name.find('/');
  return s == std::string::npos ? name : name.substr(0, s);
}

std::string join(const std::vector<std::string>& parts, const char* sep = "/") {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::optional<double> metric_value(const Benchmark& b, const std::string& metric) {
  if (b.state != RunState::Ok) return std::nullopt;
  if (metric == "real_time") return b.real_time_ns;
  const auto it = b.counters.find(metric);
  if (it == b.counters.end()) return std::nullopt;
  return it->second;
}

// The figure's spread as a fraction: the repetitions' cv of this counter, else of the time
// (a rate is work over time), else the engine's own cv_pct.
std::optional<double> cell_cv(const Benchmark& b, const std::string& metric) {
  if (const auto it = b.counter_cv.find(metric); it != b.counter_cv.end()) return it->second;
  if (b.cv) return b.cv;
  if (const auto it = b.counters.find(contract::counter::cv_pct); it != b.counters.end()) return it->second / 100.0;
  return std::nullopt;
}

// The datasheet figure a case's counter is a fraction of: the dtype's dense peak for TFLOP/s,
// the memory bandwidth for the memory family's GB/s. nullopt where the datasheet has none.
std::optional<double> spec_figure(const SkuSpec& sku, const std::string& name, const std::string& metric) {
  if (metric == contract::counter::TFLOPS) {
    for (const auto& part : split_name(name))
      if (const auto dt = parse_dtype(part)) return sku.peak(*dt);
    return std::nullopt;
  }
  if (metric == contract::counter::GBps && family_of(name) == contract::family::memory && sku.memory_GBps > 0)
    return sku.memory_GBps;
  return std::nullopt;
}

// Whether a name segment is `want`: itself, or a dtype whose peak key it is ("fp8e4m3" is the
// report pairs' "fp8").
bool segment_is(const std::string& seg, const std::string& want) {
  if (seg == want) return true;
  const auto dt = parse_dtype(seg);
  return dt && peak_key(*dt) == want && to_string(*dt) != want;
}

// What makes a run: files that agree on all of these (and hold different benchmarks) are one
// run split by binary. The date is not among them: each binary stamps its own.
constexpr const char* kRunKeys[] = {"gpu_uuid",     "driver_version", "cuda_runtime",    "cublas_version",
                                    "cudnn_version", "nccl_version",  "gpucheck_suite", "gpucheck_commit"};

std::string run_key(const Results& r) {
  if (r.context_value("gpu_uuid") == "unknown") return "";  // no identity: never merged
  std::string k;
  for (const char* key : kRunKeys) k += r.context_value(key) + "\x1f";
  return k;
}

struct Column {
  Results results;
  int files = 1;
};

std::vector<Column> merge_columns(const std::vector<Results>& inputs) {
  std::vector<std::vector<std::size_t>> groups;
  std::map<std::string, std::size_t> by_key;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string k = run_key(inputs[i]);
    if (k.empty()) {
      groups.push_back({i});
      continue;
    }
    auto [it, fresh] = by_key.try_emplace(k, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  std::vector<Column> out;
  for (const auto& g : groups) {
    if (g.size() == 1) {
      out.push_back({inputs[g.front()], 1});
      continue;
    }
    std::vector<Results> parts;
    std::vector<std::string> sources;
    for (const std::size_t i : g) parts.push_back(inputs[i]), sources.push_back(inputs[i].source);
    // A benchmark in two of the files: not one run split by binary, so they stay apart.
    if (auto m = merge_results(std::move(parts), join(sources, " + "))) {
      out.push_back({std::move(*m), static_cast<int>(g.size())});
    } else {
      for (const std::size_t i : g) out.push_back({inputs[i], 1});
    }
  }
  return out;
}

// Columns of the same GPU, host and driver: told apart by their file's name, else by the
// run's date (context "date", to the minute), else by a number.
void disambiguate_labels(std::vector<std::string>& labels, const std::vector<Results>& inputs) {
  auto repeated = [&labels](std::size_t i) { return std::count(labels.begin(), labels.end(), labels[i]) > 1; };
  auto tag_with = [&](auto&& tag) {
    std::vector<std::string> next = labels;
    for (std::size_t i = 0; i < labels.size(); ++i)
      if (repeated(i)) {
        const std::string t = tag(i);
        if (!t.empty()) next[i] += " (" + t + ")";
      }
    labels = std::move(next);
  };
  tag_with([&](std::size_t i) {
    const std::string& src = inputs[i].source;
    const std::size_t slash = src.find_last_of('/');
    return slash == std::string::npos ? src : src.substr(slash + 1);
  });
  tag_with([&](std::size_t i) {
    const std::string d = inputs[i].context_value("date");
    return d == "unknown" ? std::string() : d.substr(0, 16);
  });
  std::map<std::string, int> uses;
  for (auto& l : labels)
    if (const int n = ++uses[l]; n > 1) l += " #" + std::to_string(n);
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& paired_segments() {
  // The contract's pairs (fusion over the naive path, ours over cuDNN's, NHWC over NCHW, ...).
  static const std::vector<std::pair<std::string, std::string>> k = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& p : contract::kReportPairs) out.emplace_back(std::string(p.candidate), std::string(p.reference));
    return out;
  }();
  return k;
}


namespace {

// One column per run, labelled by GPU, host and driver (or --columns); the context rows any
// column has.
Expected<Done> add_columns(Report& rep, const std::vector<Results>& cols, const std::vector<int>& files,
                           const ReportOptions& o) {
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const Results& r = cols[i];
    std::string label = r.context_value("gpu_name");
    if (const auto h = r.context_value("host_name"); h != "unknown") label += " · " + h;
    if (const auto d = r.context_value("driver_version"); d != "unknown") label += " · " + d;
    rep.labels.push_back(label);
    rep.sources.push_back(r.source);
    rep.files.push_back(files[i]);
    const SkuSpec* sku = o.specs ? o.specs->lookup(r.context_value("gpu_name")) : nullptr;
    rep.skus.push_back(sku ? sku->name : "");
  }
  disambiguate_labels(rep.labels, cols);
  if (!o.columns.empty()) {
    if (o.columns.size() != cols.size())
      return Error{"--columns", "names " + std::to_string(o.columns.size()) + " columns; the files make " +
                                    std::to_string(cols.size()) + " (files of one run of one GPU are one column)"};
    rep.labels = o.columns;
  }
  for (const auto& [key, label] : context_keys()) {
    std::vector<std::string> vals;
    bool any = false;
    for (const Results& r : cols) {
      vals.push_back(r.context_value(key));
      any = any || vals.back() != "unknown";
    }
    if (any) rep.context.emplace_back(label, std::move(vals));
  }
  return Done{};
}

// A benchmark's row: the metric it is read by, a cell per column, each cell's speed against
// the first column's with its noise band, the limits and lists the thresholds give it.
ReportRow make_row(const std::string& name, const std::vector<Results>& cols, const ReportOptions& o) {
  ReportRow row;
  row.name = name;
  row.metric = o.metric;
  if (row.metric.empty()) {
    for (const Results& r : cols)
      if (const Benchmark* b = r.find(name); b != nullptr && b->state == RunState::Ok) {
        row.metric = rate_counter(*b);
        if (one_rank_collective(*b)) row.metric_note = "one rank: busbw is 0 by definition";
        break;
      }
    if (row.metric.empty()) row.metric = "real_time";
  }
  row.direction = direction_for(row.metric).value_or(Direction::HigherIsBetter);
  row.unit = std::string(contract::unit_of(row.metric));
  if (o.thresholds) {
    row.limit_pct = o.thresholds->pct_for(name);
    row.report_only = o.thresholds->rule_for(name).kind == RuleKind::ReportOnly;
  }
  for (const Results& r : cols) {
    ReportCell cell;
    const Benchmark* b = r.find(name);
    if (b == nullptr) {
      cell.note = "absent";
      cell.absent = true;
      row.partial = true;
    } else if (b->state != RunState::Ok) {
      cell.note = (b->state == RunState::Errored ? "errored: " : "skipped: ") + b->message;
    } else {
      cell.value = metric_value(*b, row.metric);
      cell.cv = cell_cv(*b, row.metric);
      if (!cell.value) cell.note = "no " + row.metric;
      const SkuSpec* sku = o.specs ? o.specs->lookup(r.context_value("gpu_name")) : nullptr;
      if (const auto peak = sku && cell.value ? spec_figure(*sku, name, row.metric) : std::nullopt; peak && *peak > 0)
        cell.pct_of_spec = *cell.value / *peak * 100.0;
    }
    row.noisy = row.noisy || (cell.cv && *cell.cv * 100.0 > row.limit_pct);
    row.cells.push_back(std::move(cell));
  }
  const ReportCell& first = row.cells.front();
  for (auto& cell : row.cells) {
    if (first.value && cell.value && *first.value > 0 && *cell.value > 0)
      cell.speed = row.direction == Direction::LowerIsBetter ? *first.value / *cell.value : *cell.value / *first.value;
    cell.band = 2.0 * std::max(first.cv.value_or(0.0), cell.cv.value_or(0.0));
  }
  return row;
}

// Within a family, every pair of cases whose names differ in one segment by a pair of
// paired_segments(): the speed-up of the numerator over the denominator, per file.
void add_pairs(ReportFamily& fam, const std::vector<Results>& inputs) {
  std::set<std::string> in_family;
  for (const auto& r : fam.rows) in_family.insert(r.name);
  for (const auto& r : fam.rows) {
    auto parts = split_name(r.name);
    for (std::size_t i = 1; i < parts.size(); ++i) {
      for (const auto& [num, den] : paired_segments()) {
        if (!segment_is(parts[i], num)) continue;
        auto other = parts;
        other[i] = den;
        const std::string other_name = join(other);
        if (in_family.count(other_name) == 0) continue;
        PairedRatio p;
        p.label = num + "/" + den;
        p.numerator = r.name;
        p.denominator = other_name;
        for (const Results& res : inputs) {
          const Benchmark* a = res.find(r.name);
          const Benchmark* b = res.find(other_name);
          if (a && b && a->state == RunState::Ok && b->state == RunState::Ok && a->real_time_ns > 0)
            p.speedup.emplace_back(b->real_time_ns / a->real_time_ns);
          else
            p.speedup.emplace_back(std::nullopt);
        }
        fam.pairs.push_back(std::move(p));
      }
    }
  }
}

std::optional<double> geomean(const std::vector<double>& ratios) {
  if (ratios.empty()) return std::nullopt;
  double s = 0.0;
  for (const double r : ratios) s += std::log(r);
  return std::exp(s / static_cast<double>(ratios.size()));
}

// Per family and per column: the geomean of the ratios of the cases in every column; the
// five largest wins and losses of each column.
ReportSummary summarise(const Report& rep) {
  ReportSummary sum;
  const std::size_t ncol = rep.labels.size();
  std::vector<std::vector<double>> all(ncol);
  std::vector<std::vector<CaseChange>> changes(ncol);
  for (const auto& fam : rep.families) {
    FamilySummary fs{fam.family, {}, {}};
    std::vector<std::vector<double>> per(ncol);
    for (const auto& row : fam.rows) {
      if (row.partial) {
        sum.partial.push_back(row.name);
        continue;
      }
      for (std::size_t c = 0; c < ncol; ++c) {
        const auto& cell = row.cells[c];
        if (!cell.speed) continue;
        per[c].push_back(*cell.speed);
        all[c].push_back(*cell.speed);
        if (c > 0) changes[c].push_back({row.name, *cell.speed, cell.band, row.report_only, row.noisy});
      }
    }
    for (std::size_t c = 0; c < ncol; ++c) {
      fs.geomean.push_back(geomean(per[c]));
      fs.cases.push_back(static_cast<int>(per[c].size()));
    }
    sum.families.push_back(std::move(fs));
  }
  for (std::size_t c = 0; c < ncol; ++c) {
    ColumnSummary cs;
    cs.geomean = geomean(all[c]);
    cs.cases = static_cast<int>(all[c].size());
    auto& ch = changes[c];
    std::stable_sort(ch.begin(), ch.end(), [](const CaseChange& a, const CaseChange& b) { return a.ratio < b.ratio; });
    for (std::size_t i = 0; i < ch.size() && cs.losses.size() < 5 && ch[i].ratio < 1.0; ++i) cs.losses.push_back(ch[i]);
    for (std::size_t i = ch.size(); i-- > 0 && cs.wins.size() < 5 && ch[i].ratio > 1.0;) cs.wins.push_back(ch[i]);
    sum.columns.push_back(std::move(cs));
  }
  return sum;
}

}  // namespace

std::vector<Results> merge_runs(const std::vector<Results>& inputs) {
  std::vector<Results> out;
  for (auto& c : merge_columns(inputs)) out.push_back(std::move(c.results));
  return out;
}

Expected<Report> build_report(const std::vector<Results>& inputs, const ReportOptions& o) {
  if (inputs.empty()) return Error{"report", "needs at least one results file"};
  std::vector<Results> cols;
  std::vector<int> files;
  if (o.merge_runs) {
    for (auto& c : merge_columns(inputs)) cols.push_back(std::move(c.results)), files.push_back(c.files);
  } else {
    cols = inputs;
    files.assign(inputs.size(), 1);
  }
  Report rep;
  if (auto added = add_columns(rep, cols, files, o); !added) return added.error();
  if (o.thresholds) rep.thresholds_source = o.thresholds->source;
  // Rows in first-seen order across the columns; families in first-seen order too.
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const Results& r : cols)
    for (const auto& b : r.benchmarks)
      if (seen.insert(b.name).second) names.push_back(b.name);
  std::map<std::string, std::size_t> fam_index;
  for (const auto& name : names) {
    ReportRow row = make_row(name, cols, o);
    if (o.only_common && row.partial) continue;
    const std::string fam = family_of(name);
    auto [it, fresh] = fam_index.try_emplace(fam, rep.families.size());
    if (fresh) rep.families.push_back(ReportFamily{fam, {}, {}});
    rep.families[it->second].rows.push_back(std::move(row));
  }
  for (auto& fam : rep.families) add_pairs(fam, cols);
  rep.summary = summarise(rep);
  return rep;
}

}  // namespace gpucheck::compare
