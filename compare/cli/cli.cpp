// The command table and the commands that judge files: compare, baseline, report. Every
// failure is an Error turned into one line on stderr and exit status 2; a regression is exit
// status 1; everything else 0. The gate and run commands live in gate/, accept in accept/.
#include "cli/cli.hpp"

#include <algorithm>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>

#include "accept/command.hpp"
#include "fleet/command.hpp"
#include "base/args.hpp"
#include "base/output.hpp"
#include "gpucheck/core/suggest.hpp"
#include "gate/commands.hpp"
#include "history/baseline.hpp"
#include "history/command.hpp"
#include "report/render.hpp"
#include "report/report.hpp"
#include "results/baseline.hpp"
#include "results/results.hpp"
#include "rules/compare.hpp"
#include "rules/explain.hpp"
#include "rules/options.hpp"
#include "watch/command.hpp"

namespace gpucheck::compare {
namespace cli {

const char* const kCompareUsage = R"(  gpucheck compare BASELINE CURRENT [options]      exit 0 no regression, 1 regression or missing, 2 bad input
      BASELINE, CURRENT    a results .json file or a folder of them (merged)
      --metric NAME        compare a counter instead of real_time (TFLOPS, GBps, us_per_launch, ...)
      --higher-is-better / --lower-is-better   direction when the metric's name does not tell
      --threshold PCT      default allowed slow-down (default 10%)
      --thresholds FILE    limits, report-only and host-bound lists (default: thresholds.json
                           next to BASELINE or up to two folders above it)
      --no-thresholds      ignore any thresholds file
      --alpha A            significance level of the Mann-Whitney U test (default 0.05)
      --min-repetitions N  repetitions needed on both sides to run the test (default 3)
      --allow-missing      benchmarks missing from CURRENT do not fail the gate
      --filter REGEX       only the cases whose names it matches, on both sides (POSIX extended, as
                           --benchmark_filter); cases it leaves out are neither missing nor new
      --format F           terminal (default), markdown, json, junit or csv
      --out FILE           write that format to FILE (the terminal table still goes to stdout;
                           with --out - or /dev/stdout the table goes to stderr)
      --color WHEN         auto (default: on a terminal unless NO_COLOR is set), always, never
      GITHUB_STEP_SUMMARY  when set, the Markdown table is appended to that file
)";

const char* const kBaselineUpdateUsage = R"(  gpucheck baseline update --suite NAME RESULTS [--root DIR] [--gpu SLUG] [--host] [--force] [--wait S]
      writes DIR/<gpu-slug>/NAME.json atomically (DIR defaults to baselines); with --host,
      DIR/<gpu-slug>/<host-slug>/NAME.json, a baseline of this runner's host CPU (host_cpu);
      keeps every repetition; waits up to S seconds (default 60) for a concurrent update
  gpucheck baseline update --suite NAME --from-history FILE --branch B [--last N] [--gpu SLUG] [--root DIR]
      the same file from the last N (default 5) runs of that suite and branch in a history, every
      repetition of every run kept (gpucheck history)
)";
const char* const kBaselineShowUsage = R"(  gpucheck baseline show [--root DIR] [--gpu SLUG]
      lists the stored baselines: GPU, driver, commit, host and the dates their figures were measured
)";
// Both subcommands, for `gpucheck baseline --help` and the command list.
const std::string kBaselineUsage = std::string(kBaselineUpdateUsage) + kBaselineShowUsage;

const char* const kReportUsage = R"(  gpucheck report A [B ...] [--markdown FILE] [--html FILE] [--metric NAME]
      one column per run of one GPU (its files merged); Markdown on stdout when no file is given (FILE - is stdout)
      --format F           what goes to stdout (or --out FILE): markdown (default), html, json or csv
      --columns A,B,...    name the columns (after merging)
      --only-common        drop cases that are not in every column
      --thresholds FILE    limits and the report-only list (default: thresholds.json next to A
                           or up to two folders above it); --no-thresholds: none
      --specs FILE         datasheet figures for percent of spec (default: baselines/specs.json, else
                           share/gpucheck/specs.json beside the binary's folder; none found is a warning)
)";

const char* const kAcceptUsage = R"(  gpucheck accept [--devices 0,3|all] [--bin-dir DIR] [--burn SECONDS] [--timeout S] [--out DIR] [--format F]
      new-machine acceptance: runs the accept suites per GPU, judges them against the SKU's
      datasheet (baselines/specs.json) and baselines/accept.json
  gpucheck accept --results PATH [...] [--specs FILE] [--config FILE] [--out DIR] [--format F]
      judges result files already on disk (no GPU needed)
      exit 0 every check passed, 1 a check failed, 2 bad input or no GPU
)";

const char* const kFleetUsage = R"(  gpucheck fleet [--out DIR] [--expect NODES] [--allow-missing] [--recheck DIR] [--reasons FILE] NODE_DIR...|PARENT
      many nodes' accept folders: each node's verdict, every GPU against its peers, drain/resume scripts
  gpucheck fleet pairs [--results FILE] NODES...
      node pairs for a two-node all-reduce round, and the round that isolates a bad node
)";

ExitStatus cmd_compare(const std::vector<std::string>& args, Context& ctx);
ExitStatus cmd_baseline(const std::vector<std::string>& args, Context& ctx);
ExitStatus cmd_report(const std::vector<std::string>& args, Context& ctx);

namespace {

const std::vector<Command>& commands() {
  // A new command is one row.
  static const std::vector<Command> table{
      {"gate", kGateUsage, cmd_gate},
      {"run", kRunUsage, cmd_run},
      {"compare", kCompareUsage, cmd_compare},
      {"baseline", kBaselineUsage.c_str(), cmd_baseline},
      {"report", kReportUsage, cmd_report},
      {"accept", kAcceptUsage, [](const std::vector<std::string>& args, Context& ctx) { return cmd_accept(args, ctx.fs, ctx.env, ctx.io); }},
      {"watch", kWatchUsage, cmd_watch},
      {"history", kHistoryUsage, cmd_history},
      {"fleet", kFleetUsage, [](const std::vector<std::string>& args, Context& ctx) { return cmd_fleet(args, ctx.fs, ctx.env, ctx.io); }},
  };
  return table;
}

std::vector<std::string> command_names() {
  std::vector<std::string> n;
  for (const auto& c : commands()) n.emplace_back(c.name);
  return n;
}

std::string names_list() {
  std::string s;
  for (const auto& n : command_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

bool asks_for_help(const std::vector<std::string>& args) {
  for (std::size_t i = 2; i < args.size(); ++i) {
    if (args[i] == "--") return false;
    if (args[i] == "--help" || args[i] == "-h") return true;
  }
  return false;
}

// A command's help where it is more than its row of the table: `gpucheck baseline show
// --help` prints that subcommand's lines alone; accept has its own page (every option).
std::optional<std::string> command_help(const std::vector<std::string>& args) {
  struct Sub {
    const char *command, *sub, *usage;
  };
  static const Sub kSubs[] = {{"baseline", "update", kBaselineUpdateUsage}, {"baseline", "show", kBaselineShowUsage}};
  if (args.size() >= 2 && args[1] == "accept") return accept_usage_text();
  if (args.size() >= 2 && args[1] == "fleet") return fleet_usage_text();
  if (args.size() < 3) return std::nullopt;
  for (const Sub& s : kSubs)
    if (args[1] == s.command && args[2] == s.sub) return std::string("usage:\n") + s.usage;
  return std::nullopt;
}

// Values a command is done with, where the process ends after it (CliEnvironment::
// process_ends_after): handed to a holder that is never destroyed, so their millions of small
// strings and maps (about a second of destructors at 1M entries) are not freed one by one before
// the process exits; the kernel takes the pages back at once. Everything written is written
// before. Elsewhere (tests, bench_tool) the caller's scope frees them as usual.
template <class... T>
void leave_to_exit(const CliEnvironment& env, T&&... values) {
  if (!env.process_ends_after) return;
  static auto* const kept = new std::vector<std::shared_ptr<void>>();  // deliberately never deleted
  (kept->push_back(std::make_shared<std::decay_t<T>>(std::forward<T>(values))), ...);
}

}  // namespace

ExitStatus cmd_compare(const std::vector<std::string>& args, Context& ctx) {
  CliOutput& io = ctx.io;
  auto a = parse_args(args, 2, with(compare_options(), {{"--format", "--out", "--color", "--filter"}, {}}), "compare");
  if (!a) return fail(io, a.error());
  auto filter = parse_filter(*a);
  if (!filter) return fail(io, filter.error());
  if (a->positional.size() != 2)
    return fail(io, Error{"compare", "needs BASELINE and CURRENT (got " + std::to_string(a->positional.size()) + " paths)"});
  const std::string format = value(*a, "--format").value_or("terminal");
  const std::vector<std::string> formats{"terminal", "markdown", "json", "junit", "csv"};
  if (std::find(formats.begin(), formats.end(), format) == formats.end())
    return fail(io, Error{"--format", "unknown format \"" + format + "\" (terminal, markdown, json, junit, csv)" +
                                          did_you_mean(format, formats)});
  auto colour = colour_from(*a, ctx.env);
  if (!colour) return fail(io, colour.error());

  const std::string& base_path = a->positional[0];
  const std::string& cur_path = a->positional[1];
  auto o = read_compare_options(ctx.fs, *a, thresholds_search_from(base_path));
  if (!o) return fail(io, o.error());
  if (*filter) o->warn_unmatched_globs = false;  // the globs of the cases left out are not stale
  const auto out = value(*a, "--out");
  std::vector<NamedPath> outputs;
  if (out) outputs.push_back({"--out", *out});
  if (auto c = check_command_outputs(ctx.fs, ctx.env, outputs, {{"BASELINE", base_path}, {"CURRENT", cur_path},
                                                   {"--thresholds", o->thresholds.source}});
      !c)
    return fail(io, c.error());

  // The two sides read in parallel: parsing dominates the run time on large suites.
  const FileSystem& rfs = ctx.fs;
  auto base_future = std::async(std::launch::async, [&rfs, &base_path] { return load_results(rfs, base_path); });
  auto cur = load_results(ctx.fs, cur_path);
  auto base = base_future.get();
  if (!base) return fail(io, base.error());
  if (!cur) return fail(io, cur.error());
  if (*filter) {
    base = keep_matching(*base, **filter);
    cur = keep_matching(*cur, **filter);
    if (base->benchmarks.empty() && cur->benchmarks.empty())
      return fail(io, Error{"--filter", "\"" + *value(*a, "--filter") + "\" matches no benchmark in " + base_path +
                                            " or " + cur_path});
  }
  if (auto m = check_metric(*base, *cur, o->metric); !m) return fail(io, m.error());

  Comparison judged = compare_results(*base, *cur, *o);
  explain_regressions(judged, *base, *cur, std::nullopt);
  CompareReport c(std::move(judged));
  // With --out, the table beside the file: the file's own text when that is the table without
  // colour, else rendered on a second thread while the file is rendered and written (at a
  // million rows each takes a large part of a second). Both only read `c`.
  const bool table_colour = out && *colour && !is_standard_output(ctx.fs, *out);
  const bool table_is_file = format == "terminal" && !table_colour;
  std::future<std::string> table;
  if (out && !table_is_file) table = std::async(std::launch::async, [&c, table_colour] { return render_terminal(c, table_colour); });
  std::string rendered;
  if (format == "terminal") rendered = render_terminal(c, *colour && !out);
  else if (format == "markdown") rendered = render_markdown(c);
  else if (format == "json") rendered = render_json(c);
  else if (format == "csv") rendered = render_csv(c);
  else rendered = render_junit(c);

  if (out) {
    if (auto w = write_command_output(ctx.fs, io, *out, rendered); !w) return fail(io, w.error());
    print_beside(ctx.fs, io, {*out}, table_is_file ? rendered : table.get());
  } else if (io.out.empty()) {
    io.out = std::move(rendered);
  } else {
    io.out += rendered;
  }
  if (ctx.env.step_summary_path && !ctx.env.step_summary_path->empty())
    append_step_summary(ctx.fs, ctx.env, io, render_markdown(c));
  const ExitStatus status = c.failed() ? ExitStatus::Regression : ExitStatus::Ok;
  leave_to_exit(ctx.env, std::move(*base), std::move(*cur), std::move(c));
  return status;
}

namespace {

// --from-history FILE: the results the baseline is made of, from the last runs in a history.
Expected<Results> results_from_history(const Args& a, const std::string& suite) {
  const auto branch = value(a, "--branch");
  if (!branch) return Error{"--from-history", "needs --branch B (the branch whose runs make the baseline)"};
  int last = 5;
  if (const auto n = value(a, "--last")) {
    auto v = parse_count("--last", *n, 1, 10000);
    if (!v) return v.error();
    last = *v;
  }
  auto store = history::Store::open(*value(a, "--from-history"), history::Store::Access::Read);
  if (!store) return store.error();
  auto b = history::baseline_from_history(*store, {*branch, suite, value(a, "--gpu"), static_cast<std::size_t>(last)});
  if (!b) return b.error();
  ReadOptions ro;
  ro.keep_raw = true;
  return parse_results(b->json, store->path() + " (" + std::to_string(b->runs) + " runs of " + *branch + ")", ro);
}

ExitStatus baseline_update(const std::vector<std::string>& args, Context& ctx) {
  CliOutput& io = ctx.io;
  auto a = parse_args(args, 3, {{"--suite", "--root", "--gpu", "--wait", "--from-history", "--branch", "--last"}, {"--force", "--host"}},
                      "baseline");
  if (!a) return fail(io, a.error());
  const bool from_history = value(*a, "--from-history").has_value();
  if ((value(*a, "--branch") || value(*a, "--last")) && !from_history)
    return fail(io, Error{"baseline update", "--branch and --last go with --from-history FILE"});
  if (a->positional.size() != (from_history ? 0U : 1U))
    return fail(io, Error{"baseline update", from_history ? "takes no RESULTS with --from-history"
                                                          : "needs exactly one RESULTS file or folder"});
  const auto suite = value(*a, "--suite");
  if (!suite) return fail(io, Error{"baseline update", "needs --suite NAME"});
  BaselineUpdateOptions o;
  o.suite = *suite;
  o.root = value(*a, "--root").value_or("baselines");
  if (o.root.empty()) return fail(io, Error{"--root", "needs a folder (the baselines store)"});
  o.gpu_slug = value(*a, "--gpu");
  o.force = flag(*a, "--force");
  o.per_host = flag(*a, "--host");
  if (const auto w = value(*a, "--wait")) {
    auto v = parse_count("--wait", *w, 0, 86400);
    if (!v) return fail(io, v.error());
    o.lock_wait_s = *v;
  }
  if (from_history)  // the history and what SQLite keeps beside it: the stored file is none of them
    for (const std::string& f : history::history_files(*value(*a, "--from-history"))) o.inputs.push_back({"--from-history", f});
  else
    o.inputs.push_back({"RESULTS", a->positional[0]});
  ReadOptions ro;
  ro.keep_raw = true;
  auto results = from_history ? results_from_history(*a, o.suite) : load_results(ctx.fs, a->positional[0], ro);
  if (!results) return fail(io, results.error());
  auto u = update_baseline(ctx.fs, *results, o);
  if (!u) return fail(io, u.error());
  for (const auto& n : u->cleaned) io.out += "removed a stale temporary of a killed update: " + n + "\n";
  if (u->waited_s >= 0.5)
    io.out += "waited " + format_double("%.1f", u->waited_s) + " s for a concurrent update of this folder\n";
  io.out += std::string(u->replaced ? "updated " : "created ") + u->path + ": " + std::to_string(u->benchmarks) +
            " benchmarks from " + results->source + " (" + u->gpu_name + ")";
  if (u->not_ok) io.out += ", " + std::to_string(u->not_ok) + " of them errored or skipped";
  io.out += "\n";
  if (u->replaced) {
    io.out += "  " + std::to_string(u->added.size()) + " added, " + std::to_string(u->removed.size()) + " removed, " +
              std::to_string(u->moved.size()) + " of " + std::to_string(u->common) + " moved by more than 10%\n";
    for (const auto& n : u->added) io.out += "  + " + n + "\n";
    for (const auto& n : u->removed) io.out += "  - " + n + "\n";
    for (const auto& m : u->moved) io.out += "  ~ " + m.name + " " + format_change(m.change) + "\n";
  }
  return ExitStatus::Ok;
}

ExitStatus baseline_show(const std::vector<std::string>& args, Context& ctx) {
  CliOutput& io = ctx.io;
  auto a = parse_args(args, 3, {{"--root", "--gpu"}, {}}, "baseline");
  if (!a) return fail(io, a.error());
  if (!a->positional.empty()) return fail(io, Error{"baseline show", "takes no paths (use --root DIR)"});
  const std::string root = value(*a, "--root").value_or("baselines");
  if (root.empty()) return fail(io, Error{"--root", "needs a folder (the baselines store)"});
  auto list = list_baselines(ctx.fs, root, value(*a, "--gpu"));
  if (!list) return fail(io, list.error());
  if (list->empty()) {
    io.out += "no baselines under " + root + "\n";
    return ExitStatus::Ok;
  }
  const StoredBaseline* bad = nullptr;
  for (const auto& b : *list) {
    if (!b.problem.empty()) {
      io.out += b.path + ": DOES NOT READ: " + b.problem + "\n";
      if (bad == nullptr) bad = &b;
      continue;
    }
    io.out += b.path + ": " + std::to_string(b.benchmarks) + " benchmarks, " + b.gpu_name + ", driver " + b.driver +
              ", commit " + b.commit + ", " + dates_text(b.date) + (b.host.empty() ? "" : ", host " + b.host) + "\n";
  }
  if (bad != nullptr) return fail(io, Error{bad->path, bad->problem});
  return ExitStatus::Ok;
}

// A --metric that no benchmark of the files carries would fill every cell with "no X": exit 2
// naming the counters that are there (and the nearest of them).
Status check_report_metric(const std::vector<Results>& inputs, const std::string& metric) {
  if (metric.empty() || metric == "real_time" || metric == "cpu_time") return Done{};
  std::set<std::string> there;
  for (const Results& r : inputs)
    for (const Benchmark& b : r.benchmarks) {
      if (b.counters.count(metric) != 0) return Done{};
      for (const auto& [k, v] : b.counters) there.insert(k);
    }
  const std::vector<std::string> names(there.begin(), there.end());
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return Error{"--metric", "no benchmark in these files has a counter \"" + metric + "\"" + did_you_mean(metric, names) +
                               " (counters there: " + (list.empty() ? std::string("none") : list) + "; or real_time, cpu_time)"};
}

}  // namespace

ExitStatus cmd_baseline(const std::vector<std::string>& args, Context& ctx) {
  if (args.size() < 3) return fail(ctx.io, Error{"baseline", "needs a subcommand: update or show"});
  const std::string& sub = args[2];
  if (sub == "update") return baseline_update(args, ctx);
  if (sub == "show") return baseline_show(args, ctx);
  return fail(ctx.io, Error{"baseline", "unknown subcommand \"" + sub + "\" (update or show)" +
                                            did_you_mean(sub, {"update", "show"})});
}

ExitStatus cmd_report(const std::vector<std::string>& args, Context& ctx) {
  CliOutput& io = ctx.io;
  auto a = parse_args(args, 2,
                      {{"--markdown", "--html", "--metric", "--format", "--out", "--columns", "--thresholds", "--specs"},
                       {"--only-common", "--no-thresholds"}},
                      "report");
  if (!a) return fail(io, a.error());
  if (a->positional.empty()) return fail(io, Error{"report", "needs at least one results file or folder"});
  const std::string format = value(*a, "--format").value_or("markdown");
  const std::vector<std::string> formats{"markdown", "html", "json", "csv"};
  if (std::find(formats.begin(), formats.end(), format) == formats.end())
    return fail(io, Error{"--format", "unknown format \"" + format + "\" (markdown, html, json, csv)" +
                                          did_you_mean(format, formats)});
  const auto md_path = value(*a, "--markdown");
  const auto html_path = value(*a, "--html");
  const auto out_path = value(*a, "--out");
  std::vector<NamedPath> outputs, named_inputs;
  if (md_path) outputs.push_back({"--markdown", *md_path});
  if (html_path) outputs.push_back({"--html", *html_path});
  if (out_path) outputs.push_back({"--out", *out_path});
  for (const auto& p : a->positional) named_inputs.push_back({"results", p});
  // Every file read is an input, found by a default search or given: an output may not replace it.
  const auto found = find_data_file(ctx.fs, value(*a, "--specs"), "specs.json");
  if (found) named_inputs.push_back({"--specs", *found});
  if (const auto t = thresholds_file(ctx.fs, *a, thresholds_search_from(a->positional.front())))
    named_inputs.push_back({"--thresholds", *t});
  if (auto c = check_command_outputs(ctx.fs, ctx.env, outputs, named_inputs); !c) return fail(io, c.error());
  std::vector<Results> inputs;
  for (const auto& p : a->positional) {
    auto r = load_results(ctx.fs, p);
    if (!r) return fail(io, r.error());
    inputs.push_back(std::move(*r));
  }
  ReportOptions o;
  o.metric = value(*a, "--metric").value_or("");
  if (auto m = check_report_metric(inputs, o.metric); !m) return fail(io, m.error());
  o.only_common = flag(*a, "--only-common");
  if (const auto cols = value(*a, "--columns")) {
    for (std::size_t from = 0;;) {
      const std::size_t comma = cols->find(',', from);
      o.columns.push_back(cols->substr(from, comma == std::string::npos ? std::string::npos : comma - from));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    for (const auto& c : o.columns)
      if (c.empty()) return fail(io, Error{"--columns", "an empty column name in \"" + *cols + "\""});
  }
  // The limits and report-only list as compare finds them (only the thresholds options).
  std::vector<std::string> targs(args.begin(), args.begin() + 2);
  if (const auto t = value(*a, "--thresholds")) targs.insert(targs.end(), {"--thresholds", *t});
  if (flag(*a, "--no-thresholds")) targs.emplace_back("--no-thresholds");
  auto ta = parse_args(targs, 2, compare_options(), "report");
  if (!ta) return fail(io, ta.error());
  auto co = read_compare_options(ctx.fs, *ta, thresholds_search_from(a->positional.front()));
  if (!co) return fail(io, co.error());
  if (!co->thresholds.source.empty()) o.thresholds = co->thresholds;
  SpecDb specs;
  // Found as accept finds it (a checkout's baselines/, else the copy beside the binary); none
  // found is said in one line, never a report that silently lacks % of spec.
  const std::string specs_file = found.value_or("");
  if (!found)
    warn(io, "no specs.json (" + data_file_places("specs.json") + "): % of spec is left out; pass --specs FILE");
  if (found) {
    auto text = ctx.fs.read(specs_file, std::size_t{16} << 20);
    if (!text) return fail(io, text.error());
    std::string err;
    if (!SpecDb::parse(*text, specs_file, &specs, &err)) return fail(io, Error{"--specs", err});
    o.specs = &specs;
  }
  auto rep = build_report(inputs, o);
  if (!rep) return fail(io, rep.error());
  if (o.specs) rep->specs_source = specs_file;
  const std::string md = render_report_markdown(*rep);
  // Every output or none: a --html that cannot be written leaves --markdown as it was.
  std::vector<std::pair<std::string, std::string>> writes;
  if (md_path) writes.emplace_back(*md_path, md);
  if (html_path) writes.emplace_back(*html_path, render_report_html(*rep));
  if (out_path || (!md_path && !html_path)) {
    std::string rendered = format == "html"   ? render_report_html(*rep)
                           : format == "json" ? render_report_json(*rep)
                           : format == "csv"  ? render_report_csv(*rep)
                                              : md;
    if (!out_path) {
      io.out += rendered;
      return ExitStatus::Ok;
    }
    writes.emplace_back(*out_path, std::move(rendered));
  }
  if (auto w = write_command_outputs(ctx.fs, io, writes); !w) return fail(io, w.error());
  std::string line = "report of " + std::to_string(inputs.size()) + " result files, " + std::to_string(rep->labels.size()) +
                     " column" + (rep->labels.size() == 1 ? "" : "s");
  if (md_path) line += ", markdown " + *md_path;
  if (html_path) line += ", html " + *html_path;
  if (out_path) line += ", " + format + " " + *out_path;
  std::vector<std::string> written;
  for (const auto& np : outputs) written.push_back(np.path);
  print_beside(ctx.fs, io, written, line + "\n");
  return ExitStatus::Ok;
}

}  // namespace cli

std::string dates_text(std::string_view merged) {
  std::vector<std::string_view> dates;
  for (std::size_t start = 0;;) {
    const std::size_t bar = merged.find(" | ", start);
    if (const std::string_view d = merged.substr(start, bar - start); !d.empty()) dates.push_back(d);
    if (bar == std::string_view::npos) break;
    start = bar + 3;
  }
  if (dates.size() < 2) return std::string(merged);
  std::sort(dates.begin(), dates.end());  // ISO 8601 in one zone sorts as text
  return std::to_string(dates.size()) + " dates, " + std::string(dates.front()) + " to " + std::string(dates.back());
}

std::string usage_text() {
  std::string s = "gpucheck: run the benchmark suite as a gate, compare Google Benchmark results, keep baselines,\n"
                  "write reports. `gpucheck COMMAND --help` shows one command.\n\nusage:\n";
  for (const auto& c : cli::commands()) s += c.usage;
  s += "  gpucheck --version\n      prints the tool's version\n";
  return s;
}

ExitStatus run_cli(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io) {
  using namespace cli;
  if (args.size() < 2) return fail(io, Error{"", "no command (" + names_list() + "; see gpucheck --help)"});
  const std::string& name = args[1];
  if (name == "--help" || name == "-h" || name == "help") {
    io.out += usage_text();
    return ExitStatus::Ok;
  }
  if (name == "--version") {
    io.out += "gpucheck 0.1.0\n";
    return ExitStatus::Ok;
  }
  for (const auto& c : commands()) {
    if (name != c.name) continue;
    if (asks_for_help(args)) {
      io.out += command_help(args).value_or(std::string("usage:\n") + c.usage);
      return ExitStatus::Ok;
    }
    Context ctx{fs, env, io};
    return c.run(args, ctx);
  }
  return fail(io, Error{"", "unknown command \"" + name + "\"" + did_you_mean(name, command_names()) + " (" +
                                names_list() + "; see gpucheck --help)"});
}

}  // namespace gpucheck::compare
