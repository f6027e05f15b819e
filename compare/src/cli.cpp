// Argument parsing and the three commands. Every failure is an Error turned into one line
// on stderr and exit status 2; a regression is exit status 1; everything else 0.
#include "gpucheck/compare/cli.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <future>
#include <map>
#include <set>

#include "gpucheck/compare/accept.hpp"
#include "gpucheck/compare/baseline.hpp"
#include "gpucheck/compare/compare.hpp"
#include "gpucheck/compare/render.hpp"
#include "gpucheck/compare/report.hpp"
#include "gpucheck/compare/results.hpp"
#include "gpucheck/compare/thresholds.hpp"

namespace gpucheck::compare {
namespace {

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;  // --opt VALUE
  std::set<std::string> flags;                // --flag
};

// `with_value` / `flags`: the options the command knows. "--opt=value" is accepted too.
Expected<Args> parse_args(const std::vector<std::string>& in, std::size_t from, const std::set<std::string>& with_value,
                          const std::set<std::string>& flags) {
  Args a;
  bool only_positional = false;
  for (std::size_t i = from; i < in.size(); ++i) {
    const std::string& s = in[i];
    if (only_positional || s.size() < 2 || s[0] != '-' ) {
      a.positional.push_back(s);
      continue;
    }
    if (s == "--") {
      only_positional = true;
      continue;
    }
    std::string key = s;
    std::optional<std::string> inline_value;
    if (const auto eq = s.find('='); eq != std::string::npos) {
      key = s.substr(0, eq);
      inline_value = s.substr(eq + 1);
    }
    if (with_value.count(key) != 0) {
      if (a.values.count(key) != 0) return Error{key, "given twice"};
      if (inline_value) {
        a.values[key] = *inline_value;
      } else {
        if (i + 1 >= in.size()) return Error{key, "needs a value"};
        a.values[key] = in[++i];
      }
    } else if (flags.count(key) != 0 && !inline_value) {
      a.flags.insert(key);
    } else {
      return Error{key, "unknown option (see gpucheck --help)"};
    }
  }
  return a;
}

std::optional<std::string> value(const Args& a, const std::string& k) {
  const auto it = a.values.find(k);
  if (it == a.values.end()) return std::nullopt;
  return it->second;
}

Expected<double> parse_number(const std::string& opt, const std::string& s, double lo, double hi) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || v <= lo || v >= hi)
    return Error{opt, "bad value \"" + s + "\""};
  return v;
}

Status write_output(FileSystem& fs, const std::string& path, const std::string& text) {
  if (auto w = fs.write(path, text); !w) return w.error();
  return Done{};
}

Expected<Thresholds> thresholds_for(const FileSystem& fs, const Args& a, const std::string& baseline_path) {
  std::optional<std::string> file = value(a, "--thresholds");
  if (file && a.flags.count("--no-thresholds") != 0)
    return Error{"--thresholds", "cannot be combined with --no-thresholds"};
  if (!file && a.flags.count("--no-thresholds") == 0) {
    const std::string p1 = parent_path(baseline_path);
    for (const std::string& dir : {p1, parent_path(p1)}) {
      const std::string cand = join_path(dir, "thresholds.json");
      if (fs.kind(cand) == FileSystem::Kind::File) {
        file = cand;
        break;
      }
    }
  }
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
  }
  return t;
}

ExitStatus fail(CliOutput& io, const Error& e) {
  std::string line = "gpucheck: " + e.str();
  std::replace(line.begin(), line.end(), '\n', ' ');
  io.err += line + "\n";
  return ExitStatus::BadInput;
}

ExitStatus cmd_compare(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io) {
  auto a = parse_args(args, 2,
                      {"--metric", "--threshold", "--thresholds", "--alpha", "--min-repetitions", "--format", "--out", "--color"},
                      {"--higher-is-better", "--lower-is-better", "--allow-missing", "--no-thresholds"});
  if (!a) return fail(io, a.error());
  if (a->positional.size() != 2)
    return fail(io, Error{"compare", "needs BASELINE and CURRENT (got " + std::to_string(a->positional.size()) + " paths)"});
  CompareOptions o;
  o.metric = value(*a, "--metric").value_or("real_time");
  if (o.metric.empty()) return fail(io, Error{"--metric", "needs a counter name"});
  const bool hib = a->flags.count("--higher-is-better") != 0;
  const bool lib = a->flags.count("--lower-is-better") != 0;
  if (hib && lib) return fail(io, Error{"--higher-is-better", "cannot be combined with --lower-is-better"});
  if (hib || lib) {
    o.direction = hib ? Direction::HigherIsBetter : Direction::LowerIsBetter;
  } else if (const auto d = direction_for(o.metric)) {
    o.direction = *d;
  } else {
    return fail(io, Error{"--metric", "cannot tell whether more " + o.metric +
                                          " is better; add --higher-is-better or --lower-is-better"});
  }
  if (const auto al = value(*a, "--alpha")) {
    auto v = parse_number("--alpha", *al, 0.0, 1.0);
    if (!v) return fail(io, v.error());
    o.alpha = *v;
  }
  if (const auto mr = value(*a, "--min-repetitions")) {
    auto v = parse_number("--min-repetitions", *mr, 1.0, 1e6);
    if (!v || std::floor(*v) != *v) return fail(io, Error{"--min-repetitions", "expected a whole number >= 2"});
    o.min_repetitions_for_test = static_cast<int>(*v);
  }
  o.allow_missing = a->flags.count("--allow-missing") != 0;
  const std::string format = value(*a, "--format").value_or("terminal");
  if (format != "terminal" && format != "markdown" && format != "json" && format != "junit")
    return fail(io, Error{"--format", "unknown format \"" + format + "\" (terminal, markdown, json, junit)"});
  const std::string color = value(*a, "--color").value_or("auto");
  if (color != "auto" && color != "always" && color != "never")
    return fail(io, Error{"--color", "expected auto, always or never"});

  const std::string& base_path = a->positional[0];
  const std::string& cur_path = a->positional[1];
  auto thresholds = thresholds_for(fs, *a, base_path);
  if (!thresholds) return fail(io, thresholds.error());
  o.thresholds = std::move(*thresholds);

  // The two sides read in parallel: parsing dominates the run time on large suites.
  auto base_future = std::async(std::launch::async, [&fs, &base_path] { return load_results(fs, base_path); });
  auto cur = load_results(fs, cur_path);
  auto base = base_future.get();
  if (!base) return fail(io, base.error());
  if (!cur) return fail(io, cur.error());

  const Comparison c = compare_results(*base, *cur, o);
  const bool colour = color == "always" || (color == "auto" && env.stdout_is_tty && !env.no_color);
  std::string rendered;
  if (format == "terminal") rendered = render_terminal(c, colour && !value(*a, "--out"));
  else if (format == "markdown") rendered = render_markdown(c);
  else if (format == "json") rendered = render_json(c);
  else rendered = render_junit(c);

  if (const auto out = value(*a, "--out")) {
    if (auto w = write_output(fs, *out, rendered); !w) return fail(io, w.error());
    io.out += render_terminal(c, colour);
  } else {
    io.out += rendered;
  }
  if (env.step_summary_path && !env.step_summary_path->empty()) {
    if (auto w = fs.append(*env.step_summary_path, render_markdown(c) + "\n"); !w) return fail(io, w.error());
  }
  return c.failed() ? ExitStatus::Regression : ExitStatus::Ok;
}

ExitStatus cmd_baseline(const std::vector<std::string>& args, FileSystem& fs, CliOutput& io) {
  if (args.size() < 3) return fail(io, Error{"baseline", "needs a subcommand: update or show"});
  const std::string& sub = args[2];
  if (sub == "update") {
    auto a = parse_args(args, 3, {"--suite", "--root", "--gpu"}, {"--force"});
    if (!a) return fail(io, a.error());
    if (a->positional.size() != 1)
      return fail(io, Error{"baseline update", "needs exactly one RESULTS file or folder"});
    const auto suite = value(*a, "--suite");
    if (!suite) return fail(io, Error{"baseline update", "needs --suite NAME"});
    BaselineUpdateOptions o;
    o.suite = *suite;
    o.root = value(*a, "--root").value_or("baselines");
    o.gpu_slug = value(*a, "--gpu");
    o.force = a->flags.count("--force") != 0;
    ReadOptions ro;
    ro.keep_raw = true;
    auto results = load_results(fs, a->positional[0], ro);
    if (!results) return fail(io, results.error());
    auto u = update_baseline(fs, *results, o);
    if (!u) return fail(io, u.error());
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
  if (sub == "show") {
    auto a = parse_args(args, 3, {"--root", "--gpu"}, {});
    if (!a) return fail(io, a.error());
    if (!a->positional.empty()) return fail(io, Error{"baseline show", "takes no paths (use --root DIR)"});
    const std::string root = value(*a, "--root").value_or("baselines");
    auto list = list_baselines(fs, root, value(*a, "--gpu"));
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
                ", commit " + b.commit + ", " + b.date + "\n";
    }
    if (bad != nullptr) return fail(io, Error{bad->path, bad->problem});
    return ExitStatus::Ok;
  }
  return fail(io, Error{"baseline", "unknown subcommand \"" + sub + "\" (update or show)"});
}

ExitStatus cmd_report(const std::vector<std::string>& args, FileSystem& fs, CliOutput& io) {
  auto a = parse_args(args, 2, {"--markdown", "--html", "--metric"}, {});
  if (!a) return fail(io, a.error());
  if (a->positional.empty()) return fail(io, Error{"report", "needs at least one results file or folder"});
  std::vector<Results> inputs;
  for (const auto& p : a->positional) {
    auto r = load_results(fs, p);
    if (!r) return fail(io, r.error());
    inputs.push_back(std::move(*r));
  }
  ReportOptions o;
  o.metric = value(*a, "--metric").value_or("");
  auto rep = build_report(inputs, o);
  if (!rep) return fail(io, rep.error());
  const std::string md = render_report_markdown(*rep);
  const auto md_path = value(*a, "--markdown");
  const auto html_path = value(*a, "--html");
  if (md_path) {
    if (auto w = write_output(fs, *md_path, md); !w) return fail(io, w.error());
  }
  if (html_path) {
    if (auto w = write_output(fs, *html_path, render_report_html(*rep)); !w) return fail(io, w.error());
  }
  if (!md_path && !html_path) {
    io.out += md;
  } else {
    io.out += "report of " + std::to_string(inputs.size()) + " result files";
    if (md_path) io.out += ", markdown " + *md_path;
    if (html_path) io.out += ", html " + *html_path;
    io.out += "\n";
  }
  return ExitStatus::Ok;
}

}  // namespace

std::string usage_text() {
  return R"(gpucheck: compare Google Benchmark results, keep baselines, write reports

usage:
  gpucheck compare BASELINE CURRENT [options]      exit 0 no regression, 1 regression or missing, 2 bad input
      BASELINE, CURRENT    a results .json file or a folder of them (merged)
      --metric NAME        compare a counter instead of real_time (TFLOPS, GBps, us_per_launch, ...)
      --higher-is-better / --lower-is-better   direction when the metric's name does not tell
      --threshold PCT      default allowed slow-down (default 10%)
      --thresholds FILE    per-name glob overrides (default: thresholds.json next to or above BASELINE)
      --no-thresholds      ignore any thresholds file
      --alpha A            significance level of the Mann-Whitney U test (default 0.05)
      --min-repetitions N  repetitions needed on both sides to run the test (default 3)
      --allow-missing      benchmarks missing from CURRENT do not fail the gate
      --format F           terminal (default), markdown, json or junit
      --out FILE           write that format to FILE (the terminal table still goes to stdout)
      --color WHEN         auto (default: on a terminal unless NO_COLOR is set), always, never
      GITHUB_STEP_SUMMARY  when set, the Markdown table is appended to that file
  gpucheck baseline update --suite NAME RESULTS [--root DIR] [--gpu SLUG] [--force]
      writes DIR/<gpu-slug>/NAME.json atomically (DIR defaults to baselines)
  gpucheck baseline show [--root DIR] [--gpu SLUG]
  gpucheck report A [B ...] [--markdown FILE] [--html FILE] [--metric NAME]
      one column per results file; Markdown on stdout when no file is given
  gpucheck accept [--results PATH ...] [--devices 0,3] [--out DIR] [--format F]  (gpucheck accept --help)
      new-machine acceptance: exit 0 every check passed, 1 a check failed, 2 bad input
)";
}

ExitStatus run_cli(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io) {
  if (args.size() < 2) return fail(io, Error{"", "no command (compare, baseline, report; see gpucheck --help)"});
  const std::string& cmd = args[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    io.out += usage_text();
    return ExitStatus::Ok;
  }
  if (cmd == "--version") {
    io.out += "gpucheck 0.1.0\n";
    return ExitStatus::Ok;
  }
  if (cmd == "compare") return cmd_compare(args, fs, env, io);
  if (cmd == "baseline") return cmd_baseline(args, fs, io);
  if (cmd == "report") return cmd_report(args, fs, io);
  if (cmd == "accept") return cmd_accept(args, fs, io);
  return fail(io, Error{"", "unknown command \"" + cmd + "\" (compare, baseline, report; see gpucheck --help)"});
}

}  // namespace gpucheck::compare
