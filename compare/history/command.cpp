#include "history/command.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "base/format.hpp"
#include "base/output.hpp"
#include "gpucheck/core/json_load.hpp"
#include "gpucheck/core/suggest.hpp"
#include "gpucheck/core/text.hpp"
#include "history/report.hpp"
#include "rules/compare.hpp"

namespace gpucheck::compare {

const char* const kHistoryUsage = R"(  gpucheck history add --db FILE [--commit C] [--branch B] RESULTS...
      stores each RESULTS (a results file, or one run's folder as gate/run/watch write it) as one run;
      commit and branch from the context (gpucheck_commit, git_branch) unless given; a run already
      stored (same content) is not stored again
  gpucheck history merge --db FILE OTHER...      every run of the OTHER histories, none twice
  gpucheck history remove --db FILE --run ID | --commit SHA
  gpucheck history list --db FILE [--gpu SLUG] [--branch B]      runs, newest first
  gpucheck history changes --db FILE [--gpu SLUG] [--branch B [--base-branch MAIN]] [--metric M] [--thresholds F]
                           [--format json]
      change-points of each case's series of runs, at commits (E-Divisive means; p <= 0.01 against
      the run-to-run noise) larger than the case's gate limit; exit 1 when the newest change of any
      case is a regression; --branch B other than the base branch (--base-branch, default main):
      B from its start point (the base branch's runs older than B's first run, then B's; report too)
  gpucheck history report --db FILE --html OUT [--markdown OUT] [--gpu SLUG] [--branch B [--base-branch MAIN]]
                          [--metric M] [--thresholds F] [--baseline FILE]
      each case's figure over commits, per family: change-points, the limit band, the baseline, machines
      --gpu SLUG: the GPU model (default: the only one in FILE); a commit is any unique prefix of its SHA
)";

namespace history {
namespace {

// The gate's verdicts in DIR/compare.json (name -> verdict) and the metric it judged.
Status read_verdicts(const FileSystem& fs, const std::string& path, std::map<std::string, std::string>* verdicts,
                     std::string* metric) {
  auto text = fs.read(path, kMaxFileBytes);
  if (!text) return text.error();
  nlohmann::ordered_json j;
  std::string err;
  if (!load_json(*text, path, &j, &err)) return Error{"", err};
  if (!j.is_object() || !j.contains("rows") || !j["rows"].is_array()) return Error{path, "no \"rows\" array"};
  if (j.contains("metric") && j["metric"].is_string()) *metric = j["metric"].get<std::string>();
  for (const auto& row : j["rows"]) {
    if (!row.is_object() || !row.contains("name") || !row["name"].is_string() || !row.contains("verdict") ||
        !row["verdict"].is_string())
      return Error{path, "a row without a string \"name\" and \"verdict\""};
    (*verdicts)[row["name"].get<std::string>()] = row["verdict"].get<std::string>();
  }
  return Done{};
}

}  // namespace

Expected<StoredRun> read_run_input(const FileSystem& fs, const std::string& path, const AddOptions& o) {
  std::string results = path;
  std::map<std::string, std::string> verdicts;
  std::string metric = "real_time";
  if (fs.kind(path) == FileSystem::Kind::Directory) {
    const std::string in_folder = join_path(path, "results.json");
    if (fs.kind(in_folder) == FileSystem::Kind::File) results = in_folder;
    const std::string judged = join_path(path, "compare.json");
    const FileSystem::Kind k = fs.kind(judged);
    if (results == in_folder && k != FileSystem::Kind::Missing) {  // a FIFO's verdicts are not dropped in silence
      if (k != FileSystem::Kind::File) return Error{judged, "not a regular file (the gate's verdicts are read from one)"};
      if (auto v = read_verdicts(fs, judged, &verdicts, &metric); !v) return v.error();
    }
  }
  auto r = load_results(fs, results);
  if (!r) return r.error();
  if (r->benchmarks.empty()) return Error{path, "holds no benchmarks: nothing to store"};
  r->source = path;
  return run_from_results(*r, o, verdicts, metric);
}

std::vector<Series> series_of(std::vector<Point> points) {
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> at;
  std::vector<Series> out;
  for (Point& p : points) {
    const auto key = std::make_tuple(p.name, p.metric, method_key(p.method));
    auto it = at.find(key);
    if (it == at.end()) {
      it = at.emplace(key, out.size()).first;
      out.push_back(Series{p.name, p.metric, p.unit, p.direction, p.method, {}});
    }
    out[it->second].points.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const Series& a, const Series& b) {
    return std::make_tuple(a.name, method_key(a.method)) < std::make_tuple(b.name, method_key(b.method));
  });
  return out;
}

std::vector<Point> from_start_point(std::vector<Point> base, std::vector<Point> own, std::size_t* base_runs) {
  std::vector<Point> out;
  *base_runs = 0;
  if (own.empty()) return own;
  const std::string first = std::min_element(own.begin(), own.end(), [](const Point& a, const Point& b) {
                              return a.date < b.date;
                            })->date;
  std::set<std::int64_t> runs;
  for (Point& p : base)
    if (p.date < first) {
      runs.insert(p.run);
      out.push_back(std::move(p));
    }
  *base_runs = runs.size();
  out.insert(out.end(), std::make_move_iterator(own.begin()), std::make_move_iterator(own.end()));
  return out;
}

std::vector<CaseChanges> find_changes(const std::vector<Series>& all, const Thresholds& t, const ChangeOptions& base) {
  std::vector<CaseChanges> out;
  for (const Series& s : all) {
    const Rule rule = t.rule_for(s.name);
    CaseChanges cc{&s, rule.kind == RuleKind::ReportOnly ? t.default_pct : rule.pct, {}};
    std::vector<double> xs;
    std::vector<std::size_t> commit;  // a change starts only at a commit's first run: its runs are replicates
    xs.reserve(s.points.size());
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      xs.push_back(s.points[i].median);
      commit.push_back(i == 0 ? 0 : commit.back() + (s.points[i].commit != s.points[i - 1].commit ? 1 : 0));
    }
    for (const ChangePoint& cp : e_divisive(xs, commit, base)) {
      if (std::abs(cp.change) * 100.0 <= cc.limit_pct * (1.0 + kThresholdSlack)) continue;
      const Point& first = s.points[cp.index];
      const bool slower = s.direction == "higher" ? cp.change < 0 : cp.change > 0;
      cc.changes.push_back({cp, first.commit, first.date, first.run, slower});
    }
    if (!cc.changes.empty()) out.push_back(std::move(cc));
  }
  return out;
}

}  // namespace history

namespace cli {
namespace {

using history::Store;

struct Reading {
  std::string gpu;
  history::Filter filter;
  std::string metric;
  std::string base_branch;     // --base-branch, main by default
  std::size_t base_runs = 0;   // runs of it before the branch's first, in front of the branch's series
};

Expected<std::string> db_path(const Args& a) {
  const auto db = value(a, "--db");
  if (!db || db->empty()) return Error{"history", "needs --db FILE"};
  return *db;
}

Expected<Store> open_db(const Args& a, Store::Access access) {
  auto db = db_path(a);
  if (!db) return db.error();
  return Store::open(*db, access);
}

// --db and what SQLite keeps beside it, as inputs: an output never names one of them.
std::vector<NamedPath> db_inputs(const std::string& option, const std::string& path) {
  std::vector<NamedPath> out;
  for (const std::string& f : history::history_files(path)) out.push_back({option, f});
  return out;
}

// A --metric or --branch the history does not hold would read as "nothing moved": exit 2
// naming what is there, as --gpu does.
Status check_present(const std::string& option, const std::string& given, const std::vector<std::string>& there,
                     const std::string& where) {
  if (std::find(there.begin(), there.end(), given) != there.end()) return Done{};
  std::string list;
  for (const auto& t : there) list += (list.empty() ? "" : ", ") + t;
  return Error{option, "no runs with \"" + given + "\" in " + where + did_you_mean(given, there) + " (there: " +
                           (list.empty() ? std::string("none") : list) + ")"};
}

Expected<Reading> reading_of(Store& store, const Args& a) {
  auto gpu = store.pick_gpu(value(a, "--gpu"));
  if (!gpu) return gpu.error();
  Reading r{*gpu, {*gpu, value(a, "--branch")}, value(a, "--metric").value_or("real_time"),
            value(a, "--base-branch").value_or("main"), 0};
  if (r.base_branch.empty()) return Error{"--base-branch", "needs a branch name"};
  const std::string where = store.path() + " on " + r.gpu;
  auto metrics = store.metrics(r.gpu);
  if (!metrics) return metrics.error();
  if (auto m = check_present("--metric", r.metric, *metrics, where); !m) return m.error();
  if (r.filter.branch) {
    auto branches = store.branches(r.gpu);
    if (!branches) return branches.error();
    if (auto b = check_present("--branch", *r.filter.branch, *branches, where); !b) return b.error();
  }
  return r;
}

// Every command that wrote ends here: the checkpoint's failure (FILE alone lacks the runs) is
// exit 2 though the runs are stored.
ExitStatus finish(CliOutput& io, Store& store, ExitStatus s) {
  if (auto k = store.checkpoint(); !k) return fail(io, k.error());
  return s;
}

// Commit and branch are printed in rows and lines: a control character would split a row or
// reach the terminal.
Status check_label(const char* option, const std::optional<std::string>& v, const char* what) {
  if (!v) return Done{};
  if (v->empty()) return Error{option, std::string("needs ") + what};
  if (visible_text(*v) != *v) return Error{option, "holds a control character (\"" + visible_text(*v) + "\")"};
  return Done{};
}

ExitStatus history_add(const std::vector<std::string>& args, Context& ctx) {
  auto a = parse_args(args, 3, {{"--db", "--commit", "--branch"}, {}}, "history");
  if (!a) return fail(ctx.io, a.error());
  if (a->positional.empty()) return fail(ctx.io, Error{"history add", "needs at least one RESULTS file or folder"});
  history::AddOptions o{value(*a, "--commit"), value(*a, "--branch")};
  if (auto c = check_label("--commit", o.commit, "a commit"); !c) return fail(ctx.io, c.error());
  if (auto b = check_label("--branch", o.branch, "a branch name"); !b) return fail(ctx.io, b.error());
  if (const auto db = value(*a, "--db"); db && !db->empty()) {
    std::vector<NamedPath> inputs;
    for (const auto& p : a->positional) inputs.push_back({"RESULTS", p});
    if (auto c = check_outputs(ctx.fs, {{"--db", *db}}, inputs); !c) return fail(ctx.io, c.error());
  }
  std::vector<history::StoredRun> runs;  // every input read before anything is stored
  for (const auto& p : a->positional) {
    auto r = history::read_run_input(ctx.fs, p, o);
    if (!r) return fail(ctx.io, r.error());
    runs.push_back(std::move(*r));
  }
  auto store = open_db(*a, Store::Access::Create);
  if (!store) return fail(ctx.io, store.error());
  std::vector<std::string> what;
  for (const auto& r : runs)
    what.push_back(r.info.source + " (commit " + r.info.commit + ", branch " + r.info.branch + ", " + r.info.gpu_name +
                   ", " + std::to_string(r.info.cases) + " cases)");
  auto added = store->add(std::move(runs));
  if (!added) return fail(ctx.io, added.error());
  for (std::size_t i = 0; i < added->size(); ++i)
    ctx.io.out += ((*added)[i].added ? "added run " : "already stored as run ") + std::to_string((*added)[i].id) + ": " +
                  visible_text(what[i]) + "\n";
  return finish(ctx.io, *store, ExitStatus::Ok);
}

// Every run of each OTHER (opened read-only: an input is never written), read before --db is
// opened; oldest first, so ids follow dates.
Expected<std::vector<history::StoredRun>> read_others(const FileSystem& fs, const std::string& db,
                                                      const std::vector<std::string>& others) {
  std::vector<history::StoredRun> all;
  for (const auto& p : others) {
    if (fs.same_file(p, db)) return Error{p, "is the --db file itself"};
    auto other = Store::open(p, Store::Access::Read);
    if (!other) return other.error();
    auto runs = other->runs({});
    if (!runs) return runs.error();
    for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
      auto r = other->read_run(it->id);
      if (!r) return r.error();
      all.push_back(std::move(*r));
    }
  }
  return all;
}

ExitStatus history_merge(const std::vector<std::string>& args, Context& ctx) {
  auto a = parse_args(args, 3, {{"--db"}, {}}, "history");
  if (!a) return fail(ctx.io, a.error());
  if (a->positional.empty()) return fail(ctx.io, Error{"history merge", "needs at least one OTHER history"});
  const auto db = db_path(*a);
  if (!db) return fail(ctx.io, db.error());
  std::vector<NamedPath> inputs;
  for (const auto& p : a->positional)
    for (const auto& f : db_inputs("OTHER", p)) inputs.push_back(f);
  if (auto c = check_outputs(ctx.fs, {{"--db", *db}}, inputs); !c) return fail(ctx.io, c.error());
  // SQLite missing is said of --db, as by every other command, before any OTHER is judged.
  if (std::string why; history::sqlite::load(&why) == nullptr) return fail(ctx.io, Error{*db, why});
  // All or nothing: a bad OTHER leaves --db as it was (not even created).
  auto all = read_others(ctx.fs, *db, a->positional);
  if (!all) return fail(ctx.io, all.error());
  auto store = open_db(*a, Store::Access::Create);
  if (!store) return fail(ctx.io, store.error());
  auto done = store->add(std::move(*all));
  if (!done) return fail(ctx.io, done.error());
  std::size_t added = 0, there = 0;
  for (const auto& d : *done) (d.added ? added : there) += 1;
  ctx.io.out += "merged " + std::to_string(added) + " runs into " + store->path() + " (" + std::to_string(there) +
                " already there)\n";
  return finish(ctx.io, *store, ExitStatus::Ok);
}

ExitStatus history_remove(const std::vector<std::string>& args, Context& ctx) {
  auto a = parse_args(args, 3, {{"--db", "--run", "--commit"}, {}}, "history");
  if (!a) return fail(ctx.io, a.error());
  const auto run = value(*a, "--run");
  const auto commit = value(*a, "--commit");
  if (!a->positional.empty()) return fail(ctx.io, Error{"history remove", "takes no paths"});
  if (run.has_value() == commit.has_value()) return fail(ctx.io, Error{"history remove", "needs one of --run ID or --commit SHA"});
  std::optional<int> id;
  if (run) {
    auto v = parse_count("--run", *run, 1, std::numeric_limits<int>::max());
    if (!v) return fail(ctx.io, v.error());
    id = *v;
  }
  {  // what to remove is found read-only first: a remove of nothing leaves the file's bytes alone
    auto reader = open_db(*a, Store::Access::Read);
    if (!reader) return fail(ctx.io, reader.error());
    if (id) {
      auto runs = reader->runs({});
      if (!runs) return fail(ctx.io, runs.error());
      if (std::none_of(runs->begin(), runs->end(), [&](const history::RunInfo& r) { return r.id == *id; }))
        return fail(ctx.io, Error{"--run", "no run " + *run + " in " + reader->path()});
    } else if (auto c = reader->resolve_commit(*commit); !c) {
      return fail(ctx.io, c.error());
    }
  }
  auto store = open_db(*a, Store::Access::Write);
  if (!store) return fail(ctx.io, store.error());
  Expected<std::size_t> n = id ? store->remove_run(*id) : store->remove_commit(*commit);
  if (!n) return fail(ctx.io, n.error());
  ctx.io.out += "removed " + std::to_string(*n) + " run" + (*n == 1 ? "" : "s") + " from " + store->path() + "\n";
  return finish(ctx.io, *store, ExitStatus::Ok);
}

ExitStatus history_list(const std::vector<std::string>& args, Context& ctx) {
  auto a = parse_args(args, 3, {{"--db", "--gpu", "--branch"}, {}}, "history");
  if (!a) return fail(ctx.io, a.error());
  if (!a->positional.empty()) return fail(ctx.io, Error{"history list", "takes no paths"});
  auto store = open_db(*a, Store::Access::Read);
  if (!store) return fail(ctx.io, store.error());
  auto runs = store->runs({value(*a, "--gpu"), value(*a, "--branch")});
  if (!runs) return fail(ctx.io, runs.error());
  for (const auto& r : *runs)  // what another tool stored is shown, never obeyed, by the terminal
    ctx.io.out += visible_text(std::to_string(r.id) + "  " + r.date + "  " + r.commit + "  " + r.branch + "  " +
                               r.gpu_slug + "  " + r.host_name + " (" + r.host_cpu + ")  " + r.suite + "  " +
                               std::to_string(r.cases) + " cases  " + r.source) +
                  "\n";
  ctx.io.out += std::to_string(runs->size()) + " run" + (runs->size() == 1 ? "" : "s") + "\n";
  return ExitStatus::Ok;
}

Expected<Thresholds> thresholds_of(const FileSystem& fs, const Args& a, std::string* source = nullptr) {
  const auto found = find_data_file(fs, value(a, "--thresholds"), "thresholds.json");
  if (source) *source = found ? *found : std::string();
  if (!found) return Thresholds{};
  auto text = fs.read(*found, std::size_t{16} << 20);
  if (!text) return text.error();
  return parse_thresholds(*text, *found);
}

std::string changes_json(const Reading& r, std::size_t series, const std::vector<history::CaseChanges>& found,
                         const history::ChangeOptions& o, bool regression) {
  nlohmann::ordered_json j;
  j["gpu"] = r.gpu;
  j["branch"] = r.filter.branch ? nlohmann::ordered_json(*r.filter.branch) : nlohmann::ordered_json(nullptr);
  j["base_branch"] = r.filter.branch && *r.filter.branch != r.base_branch ? nlohmann::ordered_json(r.base_branch)
                                                                          : nlohmann::ordered_json(nullptr);
  j["base_runs"] = r.base_runs;
  j["metric"] = r.metric;
  j["method"] = {{"name", "e-divisive means"}, {"alpha", 1},
                 {"test", "medians against the run-to-run noise (MAD of successive differences), Student's t, "
                          "Bonferroni over the candidate splits"},
                 {"max_p", o.max_p}, {"min_segment", o.min_segment}};
  j["regression"] = regression;
  j["series"] = series;
  j["cases"] = nlohmann::ordered_json::array();
  for (const auto& c : found) {
    nlohmann::ordered_json cj{{"name", c.series->name}, {"metric", c.series->metric}, {"unit", c.series->unit},
                              {"direction", c.series->direction}, {"method", c.series->method},
                              {"limit_pct", c.limit_pct}, {"points", c.series->points.size()}};
    cj["changes"] = nlohmann::ordered_json::array();
    for (const auto& ch : c.changes)
      cj["changes"].push_back({{"commit", ch.commit}, {"date", ch.date}, {"run", ch.run}, {"index", ch.at.index},
                               {"before", ch.at.before}, {"after", ch.at.after}, {"change_pct", ch.at.change * 100.0},
                               {"p_value", ch.at.p_value}, {"regression", ch.regression}});
    j["cases"].push_back(std::move(cj));
  }
  return j.dump(2) + "\n";
}

// What `changes` and `report` both read: one GPU model's case series and their change-points
// against the gate's limits. Filled in place: `found` points into `series`.
struct Analysis {
  std::optional<Store> store;
  Reading reading;
  Thresholds thresholds;
  std::string thresholds_source;  // empty: none found, every case at the default limit
  std::vector<history::Series> series;
  std::vector<history::CaseChanges> found;
};

std::optional<Error> analyse(const FileSystem& fs, const Args& a, const history::ChangeOptions& o, Analysis& an) {
  auto t = thresholds_of(fs, a, &an.thresholds_source);
  if (!t) return t.error();
  an.thresholds = std::move(*t);
  auto store = open_db(a, Store::Access::Read);
  if (!store) return store.error();
  an.store.emplace(std::move(*store));
  auto r = reading_of(*an.store, a);
  if (!r) return r.error();
  an.reading = std::move(*r);
  auto points = an.store->points(an.reading.filter, an.reading.metric);
  if (!points) return points.error();
  const auto& branch = an.reading.filter.branch;
  if (branch && *branch != an.reading.base_branch) {  // a branch judged from its start point
    auto base = an.store->points({an.reading.gpu, an.reading.base_branch}, an.reading.metric);
    if (!base) return base.error();
    points = history::from_start_point(std::move(*base), std::move(*points), &an.reading.base_runs);
  }
  an.series = history::series_of(std::move(*points));
  // A case the gate judges by its fastest fresh process is read by that figure here too: the
  // median of processes on two levels would move with the levels, not with the code.
  for (history::Series& s : an.series) {
    if (an.thresholds.rule_for(s.name).fresh_processes() == 0) continue;
    for (history::Point& p : s.points)
      if (p.best) p.median = *p.best;
  }
  if (an.reading.base_runs > 0)  // the cases the branch measured, not every case of its base
    std::erase_if(an.series, [&branch](const history::Series& s) {
      return std::none_of(s.points.begin(), s.points.end(), [&branch](const history::Point& p) { return p.branch == *branch; });
    });
  an.found = history::find_changes(an.series, an.thresholds, o);
  return std::nullopt;
}

ExitStatus history_changes(const std::vector<std::string>& args, Context& ctx) {
  auto a = parse_args(args, 3, {{"--db", "--gpu", "--branch", "--base-branch", "--metric", "--thresholds", "--format"}, {}},
                      "history");
  if (!a) return fail(ctx.io, a.error());
  if (!a->positional.empty()) return fail(ctx.io, Error{"history changes", "takes no paths"});
  const std::string format = value(*a, "--format").value_or("terminal");
  if (format != "terminal" && format != "json")
    return fail(ctx.io, Error{"--format", "unknown format \"" + format + "\" (terminal, json)"});
  const history::ChangeOptions o;
  Analysis an;
  if (auto e = analyse(ctx.fs, *a, o, an)) return fail(ctx.io, *e);
  const Reading* r = &an.reading;
  const auto& series = an.series;
  const auto& found = an.found;
  bool regression = false;
  for (const auto& c : found) regression = regression || c.changes.back().regression;
  if (format == "json") {
    ctx.io.out += changes_json(*r, series.size(), found, o, regression);
    return regression ? ExitStatus::Regression : ExitStatus::Ok;
  }
  for (const auto& c : found) {
    ctx.io.out += visible_text(c.series->name) + " (" + c.series->metric + ", limit " + format_pct(c.limit_pct) + ", " +
                  std::to_string(c.series->points.size()) + " runs)\n";
    for (const auto& ch : c.changes)
      ctx.io.out += "  at " + visible_text(ch.commit) + " (" + visible_text(ch.date) + ", run " + std::to_string(ch.run) + "): " +
                    format_metric(c.series->metric, ch.at.before) + " -> " + format_metric(c.series->metric, ch.at.after) +
                    " " + format_change(ch.at.change) + (ch.regression ? " worse" : " better") +
                    ", p=" + format_double("%.2g", ch.at.p_value) + "\n";
  }
  // Which limits judged the sizes: a run from another folder finds no thresholds.json and says so.
  ctx.io.out += an.thresholds_source.empty()
                    ? "limits: the default " + format_pct(an.thresholds.default_pct) +
                          " for every case (no thresholds.json found; --thresholds FILE)\n"
                    : "limits: " + an.thresholds_source + "\n";
  ctx.io.out += std::to_string(found.size()) + " of " + std::to_string(series.size()) + " case series moved on " + r->gpu +
                (r->filter.branch && *r->filter.branch != r->base_branch
                     ? " (branch " + *r->filter.branch + " after " + std::to_string(r->base_runs) + " runs of " +
                           r->base_branch + " before its first)"
                     : std::string()) +
                (regression ? "; the newest change of at least one is a regression\n" : "\n");
  return regression ? ExitStatus::Regression : ExitStatus::Ok;
}

// The stored baseline the report draws: --baseline, else baselines/<gpu>/<suite>.json of the
// newest run's suite when there is one.
Expected<std::optional<Results>> report_baseline(const FileSystem& fs, const Args& a, Store& store, const Reading& r,
                                                 std::string* source) {
  std::optional<std::string> path = value(a, "--baseline");
  if (!path) {
    auto runs = store.runs(r.filter);
    if (!runs) return runs.error();
    if (!runs->empty()) {
      const std::string guess = join_path(join_path("baselines", r.gpu), runs->front().suite + ".json");
      if (fs.kind(guess) == FileSystem::Kind::File) path = guess;
    }
  }
  if (!path) return std::optional<Results>();
  auto b = load_results(fs, *path);
  if (!b) return b.error();
  *source = *path;
  return std::optional<Results>(std::move(*b));
}

ExitStatus history_report(const std::vector<std::string>& args, Context& ctx) {
  auto a = parse_args(args, 3,
                      {{"--db", "--gpu", "--branch", "--base-branch", "--metric", "--thresholds", "--html", "--markdown",
                        "--baseline"},
                       {}},
                      "history");
  if (!a) return fail(ctx.io, a.error());
  if (!a->positional.empty()) return fail(ctx.io, Error{"history report", "takes no paths"});
  const auto html = value(*a, "--html");
  const auto md = value(*a, "--markdown");
  if (!html && !md) return fail(ctx.io, Error{"history report", "needs --html OUT (and/or --markdown OUT)"});
  std::vector<NamedPath> outputs;
  if (html) outputs.push_back({"--html", *html});
  if (md) outputs.push_back({"--markdown", *md});
  std::vector<NamedPath> inputs = db_inputs("--db", value(*a, "--db").value_or(""));
  if (const auto b = value(*a, "--baseline")) inputs.push_back({"--baseline", *b});
  if (const auto t = value(*a, "--thresholds")) inputs.push_back({"--thresholds", *t});
  if (auto c = check_command_outputs(ctx.fs, ctx.env, outputs, inputs); !c) return fail(ctx.io, c.error());
  Analysis an;
  if (auto e = analyse(ctx.fs, *a, history::ChangeOptions{}, an)) return fail(ctx.io, *e);
  Store* store = &*an.store;
  const Reading* r = &an.reading;
  const Thresholds* t = &an.thresholds;
  const auto& series = an.series;
  const auto& found = an.found;
  std::string baseline_source;
  auto baseline = report_baseline(ctx.fs, *a, *store, *r, &baseline_source);
  if (!baseline) return fail(ctx.io, baseline.error());
  std::string branch = r->filter.branch.value_or("");
  if (r->filter.branch && *r->filter.branch != r->base_branch)
    branch += " (from its start point: " + std::to_string(r->base_runs) + " runs of " + r->base_branch + " before it)";
  const history::TrendInput in{r->gpu, branch, r->metric, &series, &found, &*t,
                               *baseline ? &**baseline : nullptr, baseline_source};
  std::vector<std::pair<std::string, std::string>> texts;  // path, text
  if (html) texts.emplace_back(*html, history::trend_html(in));
  if (md) texts.emplace_back(*md, history::trend_markdown(in));
  if (auto w = write_command_outputs(ctx.fs, ctx.io, texts); !w) return fail(ctx.io, w.error());
  std::vector<std::string> written;
  for (const auto& np : outputs) written.push_back(np.path);
  print_beside(ctx.fs, ctx.io, written,
               "history report of " + std::to_string(series.size()) + " case series on " + r->gpu + ", " +
                   std::to_string(found.size()) + " with change-points\n");
  return ExitStatus::Ok;
}

}  // namespace

ExitStatus cmd_history(const std::vector<std::string>& args, Context& ctx) {
  static const std::vector<std::string> subs{"add", "merge", "remove", "list", "changes", "report"};
  if (args.size() < 3) return fail(ctx.io, Error{"history", "needs a subcommand: add, merge, remove, list, changes or report"});
  const std::string& sub = args[2];
  if (sub == "add") return history_add(args, ctx);
  if (sub == "merge") return history_merge(args, ctx);
  if (sub == "remove") return history_remove(args, ctx);
  if (sub == "list") return history_list(args, ctx);
  if (sub == "changes") return history_changes(args, ctx);
  if (sub == "report") return history_report(args, ctx);
  return fail(ctx.io, Error{"history", "unknown subcommand \"" + sub + "\" (add, merge, remove, list, changes, report)" +
                                           did_you_mean(sub, subs)});
}

}  // namespace cli
}  // namespace gpucheck::compare
