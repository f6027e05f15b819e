// gpucheck run and gpucheck gate: the benchmark binaries as child processes (runner
// contract, DESIGN.md), their JSON trusted only once it parses, the merged results written
// atomically, then (gate) the compare with the stored baseline, and a confirmation run in a
// fresh process for every case past its limit before anything fails.
#include "gate/commands.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "base/args.hpp"
#include "base/output.hpp"
#include "runner/suite.hpp"
#include "history/gate_link.hpp"
#include "report/render.hpp"
#include "results/baseline.hpp"
#include "results/results.hpp"
#include "rules/compare.hpp"
#include "rules/explain.hpp"
#include "rules/options.hpp"
#include "runner/gpu_activity.hpp"
#include "runner/process.hpp"
#include "runner/suite_runner.hpp"

namespace gpucheck::compare::cli {

const char* const kGateUsage =
    R"(  gpucheck gate --bin-dir DIR --baseline FILE|DIR --out DIR [options]   exit 0 pass, 1 fail, 2 bad input, no GPU, no baseline
      runs every bench_* binary in DIR (or those DIR/gpucheck-benchmarks.txt lists), each in its own
      process, compares with the baseline and re-measures cases past their limit before failing
      --history FILE       add this run to a history (gpucheck history) after judging it
      --against-commit SHA judge against that commit's runs in --history on this GPU model (every repetition;
                           host-bound cases only from runs of this host CPU), else the stored baseline
      --base-bin-dir DIR   the base build's binaries (the merge base, built): cases measured in fresh
                           processes (thresholds' "processes") run N times from each build, one by one in
                           turn, and are judged by their median pair (OUT/base/); without it they are shown,
                           not gated. One binary missing there is exit 2
      --baseline FILE|DIR  a baseline file, or a store root: DIR/<gpu-slug>/<host-slug>/SUITE.json when it
                           exists (this host's), else DIR/<gpu-slug>/SUITE.json; thresholds DIR/thresholds.json
      --out DIR            results.json, compare.md, compare.json, junit.xml, logs/ (and runs/, confirm/)
      --suite S            quick (default) or full
      -d, --device N       CUDA device (default 0)
      --timeout S          limit per binary and repetition (default: quick 300, full 3600)
      --confirm-repetitions N   repetitions of the re-run of cases past their limit (default 5)
      --filter REGEX       only the cases it matches (--benchmark_filter); matching none is exit 2
      --pin-cpu auto|off|N each binary pinned to one core: auto (default) the last of the GPU's NUMA node
                           (NVML's bus id, sysfs local_cpulist; not pinned where either is missing)
      --allow-other-gpu    compare with a baseline of another GPU model
      --color WHEN         auto, always, never
      and compare's --metric, --threshold, --thresholds, --no-thresholds, --alpha, --min-repetitions,
      --allow-missing, --higher-is-better, --lower-is-better; GITHUB_STEP_SUMMARY gets compare.md
)";

const char* const kRunUsage =
    R"(  gpucheck run --bin-dir DIR --out DIR [--suite S] [-d|--device N] [--repetitions N [--fresh-processes]] [--timeout S] [--filter REGEX] [--pin-cpu auto|off|N]
      the gate's runner alone: every binary into DIR/results.json (exit 0 all ran, 1 a binary or case
      failed, 2 bad input or no GPU); --fresh-processes runs each repetition in a process of its own
      (a host-bound figure moves with the process); --pin-cpu as the gate's. A baseline with repetitions, for the U test:
      gpucheck run --bin-dir build/bin --out results/base --repetitions 5 --fresh-processes &&
      gpucheck baseline update --suite quick results/base/results.json
)";

namespace {

// The gate's outputs in --out (results.json, compare.md, compare.json, junit.xml), checked
// against its inputs before anything runs: --out may not hold the baseline or the thresholds.
const char* const kGateOutputs[] = {"results.json", "compare.md", "compare.json", "junit.xml"};

// A gate killed by SIGKILL leaves its binaries' temporaries (".X.json.tmp-PID",
// ".X.json.tmp-PID.partial-PID2"): the next run into the folder removes those of dead gates.
void remove_killed_runs_temporaries(FileSystem& fs, const std::string& dir) {
  auto names = fs.list(dir);
  if (!names) return;
  for (const std::string& n : *names) {
    const std::size_t partial = n.rfind(".partial-");
    const std::string temp = partial == std::string::npos ? n : n.substr(0, partial);
    const std::size_t t = temp.rfind(".tmp-");
    if (t == std::string::npos || !is_stale_temporary(temp)) continue;
    const long pid = std::strtol(temp.c_str() + t + 5, nullptr, 10);
    if (pid <= 0 || pid == static_cast<long>(::getpid()) || (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH))
      continue;  // its gate may still be at work
    (void)fs.remove(join_path(dir, n));
  }
}

Status make_out_dirs(FileSystem& fs, const CliEnvironment& env, const std::string& out, bool gate,
                     const std::vector<NamedPath>& inputs) {
  std::vector<NamedPath> outputs;
  for (const char* name : kGateOutputs) outputs.push_back({"--out", join_path(out, name)});
  if (auto c = check_command_outputs(fs, env, outputs, inputs); !c) return c.error();
  // What a run writes into these folders replaces what is there: an input inside is refused.
  for (const char* sub : {"logs", "runs", "confirm"})
    if (auto c = check_output_folder(fs, {"--out", join_path(out, sub)}, inputs); !c) return c.error();
  // A gate's folder holds one run: the last run's verdicts go before this one measures, so a
  // gate that stops part way never leaves new results beside old compare files that say pass.
  if (gate)
    for (const NamedPath& o : outputs)
      if (fs.kind(o.path) == FileSystem::Kind::File)
        if (auto r = fs.remove(o.path); !r) return r.error();
  for (const char* sub : {"logs", "runs", "confirm"}) {
    if (!gate && std::string(sub) == "confirm") continue;  // run has no confirmation
    if (auto m = fs.make_dirs(join_path(out, sub)); !m) return m.error();
    remove_killed_runs_temporaries(fs, join_path(out, sub));
  }
  return Done{};
}

// The first pass over every binary: progress on the terminal, one outcome each.
struct FirstPass {
  std::vector<Outcome> outcomes;
  std::map<std::string, std::string> owner;  // benchmark -> binary
  std::vector<Results> parts;
  std::optional<Results> base_side;  // --base-bin-dir: the base build's fresh processes, paired
};

// Why a binary's results cannot join the others' (nullopt: they can): a case another binary
// already reported (a name clash), or another GPU model than the suite's (`gpu`, as `gpu_from` reported).
std::optional<std::string> part_conflict(const Results& part, const std::map<std::string, std::string>& owner,
                                         const std::string& gpu, const std::string& gpu_from) {
  for (const Benchmark& b : part.benchmarks)
    if (const auto it = owner.find(b.name); it != owner.end())
      return "reports " + b.name + ", which " + it->second + " reported too (a name clash): its results are left out";
  const std::string g = part.context_value("gpu_name");
  if (!gpu.empty() && g != "unknown" && g != gpu)
    return "ran on " + g + ", " + gpu_from + " on " + gpu + ": its results are left out";
  return std::nullopt;
}

Expected<FirstPass> run_all(Context& ctx, const RunPlan& plan, const std::vector<std::string>& bins, int reps,
                            bool fresh_processes = false) {
  FirstPass fp;
  SuiteRunner runner(ctx, plan);
  for (std::size_t i = 0; i < bins.size(); ++i) {
    const std::string progress = "[" + std::to_string(i + 1) + "/" + std::to_string(bins.size()) + "]";
    Outcome o = fresh_processes && reps > 1 ? runner.run_fresh(bins[i], progress, "first", reps, plan.filter, plan.filter.has_value())
                                            : runner.run(bins[i], progress, "first", reps, plan.filter, plan.filter.has_value());
    if (o.interrupted) return Error{bins[i], "interrupted by a signal: the run stopped (results not written)"};
    const bool no_gpu = i == 0 && o.no_device;
    fp.outcomes.push_back(std::move(o));
    if (no_gpu) break;  // the rest would say the same: one line, not one per binary
  }
  // Every binary could not run, for one reason (no GPU, CUDA_LAUNCH_BLOCKING set, ...): that
  // reason is the gate's one line, exit 2.
  const auto could_not_run = [](const Outcome& o) {
    return o.run.status == BinaryRun::Status::Errored && o.run.reason.starts_with(kCouldNotRun);
  };
  if (!fp.outcomes.empty() && std::all_of(fp.outcomes.begin(), fp.outcomes.end(), could_not_run) &&
      std::all_of(fp.outcomes.begin(), fp.outcomes.end(),
                  [&](const Outcome& o) { return o.run.reason == fp.outcomes.front().run.reason; })) {
    std::string why = fp.outcomes.front().run.reason.substr(kCouldNotRun.size());
    if (why.starts_with("gpucheck: ")) why.erase(0, 10);
    if (fp.outcomes.front().no_device)
      return Error{"", "no GPU: " + fp.outcomes.front().run.name + " said \"" + why +
                           "\"; run on a GPU machine, or judge results measured there with gpucheck compare"};
    return Error{"", "every benchmark binary refused: \"" + why + "\""};
  }
  // The suite's GPU model: the one most binaries report (ties: the first); a binary on
  // another one ran somewhere else (CUDA_VISIBLE_DEVICES, a wrapper) and is left out.
  std::string gpu, gpu_from;
  {
    std::map<std::string, int> votes;
    for (const Outcome& o : fp.outcomes)
      if (o.results) ++votes[o.results->context_value("gpu_name")];
    int best = 0;
    for (const Outcome& o : fp.outcomes) {
      if (!o.results) continue;
      const std::string g = o.results->context_value("gpu_name");
      if (g != "unknown" && votes[g] > best) {
        best = votes[g];
        gpu = g;
        gpu_from = o.run.name;
      }
    }
  }
  for (Outcome& o : fp.outcomes) {
    if (!o.results) continue;
    // A binary whose results cannot stand beside the others' costs that binary only.
    if (const auto clash = part_conflict(*o.results, fp.owner, gpu, gpu_from)) {
      o.run.status = BinaryRun::Status::Errored;
      o.run.reason = *clash;
      ctx.io.emit(o.run.name + ": ERRORED: " + *clash + "\n");
      o.results.reset();
      continue;
    }
    for (const Benchmark& b : o.results->benchmarks) fp.owner.emplace(b.name, o.run.name);
    fp.parts.push_back(std::move(*o.results));
    o.results.reset();
  }
  if (plan.filter && fp.parts.empty() &&
      std::all_of(fp.outcomes.begin(), fp.outcomes.end(), [](const Outcome& o) {
        return o.matched_nothing || o.run.status == BinaryRun::Status::Ok;
      }))
    return Error{"--filter", "\"" + *plan.filter + "\" matches no benchmark in any binary"};
  return fp;
}

Expected<Results> merge_parts(std::vector<Results> parts, const std::string& source) {
  if (parts.empty()) {
    Results empty;
    empty.source = source;
    return empty;
  }
  return merge_results(std::move(parts), source);
}

std::string header(const RunPlan& plan, const SuiteBinaries& bins, int reps) {
  std::string s = std::to_string(bins.names.size()) + " binaries from " + plan.bin_dir +
                  (bins.from_list ? " (" + std::string(kBenchmarkList) + ")" : "") + ", suite " + plan.suite +
                  ", device " + std::to_string(plan.device) + ", timeout " + seconds_text(plan.timeout_s) +
                  " s per binary" + (reps > 1 ? " and repetition, " + std::to_string(reps) + " repetitions" : "");
  if (plan.filter) s += ", filter " + *plan.filter;
  return s;
}

std::vector<BinaryRun> runs_of(const std::vector<Outcome>& outcomes) {
  std::vector<BinaryRun> out;
  for (const auto& o : outcomes) out.push_back(o.run);
  return out;
}

}  // namespace

ExitStatus cmd_run(const std::vector<std::string>& args, Context& ctx) {
  CliOutput& io = ctx.io;
  auto a = parse_args(args, 2, with(run_options(), {{"--repetitions"}, {"--fresh-processes"}}), "run");
  if (!a) return fail(io, a.error());
  auto plan = read_plan(*a, args[0], "run");
  if (!plan) return fail(io, plan.error());
  int reps = 1;
  if (const auto r = value(*a, "--repetitions")) {
    auto v = parse_count("--repetitions", *r, 1, 1000);
    if (!v) return fail(io, v.error());
    reps = *v;
  }
  if (ctx.env.runner == nullptr) return fail(io, Error{"run", "cannot start processes here"});
  auto bins = discover_binaries(ctx.fs, plan->bin_dir);
  if (!bins) return fail(io, bins.error());
  if (auto m = make_out_dirs(ctx.fs, ctx.env, plan->out, false, {}); !m) return fail(io, m.error());
  io.emit("gpucheck run: " + header(*plan, *bins, reps) + "\n");
  ActivitySnapshot snap;
  snap.reason = "no NVML probe";
  if (ctx.env.gpu_probe != nullptr && plan->pin.mode == PinRequest::Mode::Auto) snap = ctx.env.gpu_probe->snapshot();
  if (auto p = choose_pin(ctx, *plan, snap); !p) return fail(io, p.error());
  // --fresh-processes: each repetition a process of its own (how a baseline is recorded, so
  // that a host-bound case's figure spans process placements: docs/GATE.md).
  auto fp = run_all(ctx, *plan, bins->names, reps, flag(*a, "--fresh-processes"));
  if (!fp) return fail(io, fp.error());
  const std::string results_path = join_path(plan->out, "results.json");
  const std::size_t n_parts = fp->parts.size();
  auto merged = merge_parts(std::move(fp->parts), results_path);
  if (!merged) return fail(io, merged.error());
  int errored = 0, case_failed = 0;
  for (const auto& o : fp->outcomes) {
    errored += o.run.status == BinaryRun::Status::Errored ? 1 : 0;
    case_failed += o.run.status == BinaryRun::Status::CaseFailed ? 1 : 0;
  }
  if (n_parts == 0) {
    io.emit("no results: every binary ERRORED (logs in " + join_path(plan->out, "logs") + ")\n");
    return ExitStatus::Regression;
  }
  if (auto w = ctx.fs.write_output(results_path, to_gbench_json(*merged)); !w) return fail(io, w.error());
  std::string s = "wrote " + results_path + ": " + std::to_string(merged->benchmarks.size()) + " benchmarks from " +
                  std::to_string(n_parts) + " binaries";
  if (errored) s += "; " + std::to_string(errored) + " binaries ERRORED";
  if (case_failed) s += "; " + std::to_string(case_failed) + " binaries had failed cases";
  io.emit(s + "\nto store it as the baseline: " + plan->self + " baseline update --suite " + plan->suite + " " +
          results_path + "   (add --host for this host's own baseline)\n");
  return errored || case_failed ? ExitStatus::Regression : ExitStatus::Ok;
}

namespace {

struct GatePlan {
  RunPlan run;
  std::string baseline;  // file or store root
  bool baseline_is_dir = false;
  int confirm_reps = 5;
  bool allow_other_gpu = false;
  bool colour = false;
  CompareOptions compare;
  std::optional<history::GateHistory> history;  // --history FILE [--against-commit SHA]
  std::optional<std::string> base_bin_dir;       // --base-bin-dir: the base build's binaries
};

// The base build's runner plan: its binaries, this gate's flags, its files under OUT/base.
RunPlan base_plan(const GatePlan& g) {
  RunPlan p = g.run;
  p.bin_dir = g.base_bin_dir.value_or("");
  p.out = join_path(g.run.out, "base");
  return p;
}

// What a paired run's two sides said when they gave no figure: the side that errored.
std::string paired_reason(const Outcome& base, const Outcome& cur) {
  const bool base_failed = base.run.status == BinaryRun::Status::Errored;
  const Outcome& o = base_failed ? base : cur;
  return std::string(base_failed ? "base build: " : "this build: ") + (o.run.reason.empty() ? "no results" : o.run.reason);
}

// The baseline file for these results: the file given, or the store's pick (this host's
// first). An error (exit 2) says how to store one.
Expected<std::string> pick_baseline(const FileSystem& fs, const GatePlan& g, const Results& current,
                                    const std::string& results_path) {
  if (!g.baseline_is_dir) return g.baseline;
  const std::string gpu = current.context_value("gpu_name");
  if (gpu == "unknown" || gpu.find(" | ") != std::string::npos)
    return Error{results_path, "results do not name one GPU model (gpu_name: " + gpu +
                                   "): pass --baseline FILE to say which baseline to compare with"};
  const auto cands = baseline_candidates(g.baseline, gpu, current.context_value("host_cpu"), g.run.suite);
  for (const auto& c : cands)
    if (fs.kind(c) == FileSystem::Kind::File) return c;
  return Error{g.baseline, "no baseline for " + gpu + " (looked for " + cands.back() + (cands.size() > 1 ? " and " + cands.front() : "") +
                               "); to store this run as one: " + g.run.self + " baseline update --suite " + g.run.suite +
                               " --root " + g.baseline + " " + results_path};
}

// Baseline cases the filter leaves out are out of scope, not missing.
Results restrict_to_filter(const Results& base, const RunPlan& plan) {
  return plan.filter_re ? keep_matching(base, *plan.filter_re) : base;
}

// `base` with `own`'s entries in place of its own of the same names, and added where it has none.
Results with_cases_of(const Results& base, const Results& own) {
  std::vector<std::string> names;
  for (const Benchmark& b : own.benchmarks) names.push_back(b.name);
  Results out = replace_benchmarks(base, own, names);
  for (const Benchmark& b : own.benchmarks)
    if (out.find(b.name) == nullptr) out.benchmarks.push_back(b);
  out.reindex();
  return out;
}

// `side` (the base build's processes gathered so far) with `more`'s cases added.
void add_cases(std::optional<Results>& side, const Results& more) {
  side = side ? with_cases_of(*side, more) : more;
}

// The rule's fresh-process count for a case measured in fresh processes, else 0.
int fresh_processes_of(const GatePlan& g, const std::string& name) {
  return g.compare.thresholds.rule_for(name).fresh_processes();
}

// Every case whose rule asks for it (thresholds.json "processes": N) is measured in N fresh
// processes of its binary, filtered to those cases, in place of the first pass's one figure,
// paired with N of the base build's when there is one (rules/fresh_minimum.hpp). A binary whose fresh runs
// give no figure leaves its cases with the first pass's one process, which the rules show and
// do not gate (too few processes).
Status fresh_pass(Context& ctx, const GatePlan& g, FirstPass& fp, Results& current) {
  std::map<std::string, std::map<int, std::vector<std::string>>> by_binary;  // binary -> N -> cases
  std::size_t cases = 0;
  for (const Benchmark& b : current.benchmarks) {
    const int n = fresh_processes_of(g, b.name);
    const auto it = fp.owner.find(b.name);
    if (n == 0 || b.state != RunState::Ok || it == fp.owner.end()) continue;
    by_binary[it->second][n].push_back(b.name);
    ++cases;
  }
  if (by_binary.empty()) return Done{};
  ctx.io.emit(std::to_string(cases) + " case(s) measured in fresh processes (thresholds' \"processes\")" +
              (g.base_bin_dir ? ", each beside one of the base build's (" + *g.base_bin_dir + ")" : "") +
              ":\n");
  SuiteRunner runner(ctx, g.run);
  const RunPlan bp = base_plan(g);
  SuiteRunner base_runner(ctx, bp);
  std::size_t i = 0;
  for (const auto& [bin, groups] : by_binary)
    for (const auto& [n, names] : groups) {
      const std::string progress = "[fresh " + std::to_string(++i) + "]";
      if (g.base_bin_dir) {
        const std::string base_bin = join_path(*g.base_bin_dir, bin);
        if (ctx.fs.kind(base_bin) != FileSystem::Kind::File)
          return Error{base_bin, "no such binary (--base-bin-dir: the base build's binaries, which judge this build's "
                                 "fresh-process cases)"};
        auto [b, o] = runner.run_fresh_paired(base_runner, bin, progress, "fresh", n, cases_filter(names));
        if (b.interrupted || o.interrupted) return Error{bin, "interrupted by a signal during the fresh-process pass"};
        if (o.results) {  // and b.results: both or neither
          current = replace_benchmarks(current, *o.results, names);
          add_cases(fp.base_side, *b.results);
        } else {
          ctx.io.emit(bin + ": the paired fresh-process pass gave no figure (" + paired_reason(b, o) + "): its " +
                      std::to_string(names.size()) + " case(s) keep the first pass's one process (shown, not gated)\n");
        }
        if (!o.run.name.empty()) fp.outcomes.push_back(std::move(o));  // this build's run, when it ran
        continue;
      }
      Outcome o = runner.run_fresh(bin, progress, "fresh", n, cases_filter(names), false);
      if (o.interrupted) return Error{bin, "interrupted by a signal during the fresh-process pass"};
      if (o.results) current = replace_benchmarks(current, *o.results, names);
      else ctx.io.emit(bin + ": the fresh-process pass gave no figure: its " + std::to_string(names.size()) +
                       " case(s) keep the first pass's one process (shown, not gated)\n");
      fp.outcomes.push_back(std::move(o));
    }
  return Done{};
}

bool past_limit(const Row& r, Direction d) {
  return r.verdict == Verdict::Regression || (r.verdict == Verdict::Unconfirmed && worse_direction(r, d));
}

struct Confirmations {
  std::vector<BinaryRun> runs;
  std::map<std::string, Row> first;           // first-pass row of each re-measured case
  std::map<std::string, std::string> failed;  // case -> why the re-run gave no figure
  std::optional<Results> base_side;           // --base-bin-dir: the base build's re-run, paired
};

// How the confirmation re-measures its cases, by kind: " in a fresh process, 5 repetitions",
// or, where some are measured in fresh processes, how many go which way.
std::string confirm_how(const GatePlan& g, const std::map<std::string, Row>& cases) {
  std::map<int, int> fresh;  // processes -> cases
  int host = 0, plain = 0;
  for (const auto& [name, row] : cases) {
    if (const int n = fresh_processes_of(g, name); n > 0) ++fresh[n];
    else if (g.compare.thresholds.rule_for(name).kind == RuleKind::HostBound) ++host;
    else ++plain;
  }
  const std::string reps = std::to_string(g.confirm_reps);
  if (fresh.empty() && host == 0) return " in a fresh process, " + reps + " repetitions";
  std::vector<std::string> parts;
  if (plain > 0) parts.push_back(std::to_string(plain) + " in a fresh process with " + reps + " repetitions");
  if (host > 0) parts.push_back(std::to_string(host) + " in " + reps + " fresh processes");
  for (const auto& [n, k] : fresh)
    parts.push_back(std::to_string(k) + " in " + std::to_string(n) + " fresh processes" +
                    (g.base_bin_dir ? " of each build, in turn" : ""));
  std::string s = ": ";
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s;
}

// Re-measures every case past its limit in a fresh process of its binary, with repetitions;
// `current` takes the re-run's entries for them.
Expected<Confirmations> confirm(Context& ctx, const GatePlan& g, const Comparison& first, Results& current,
                                const std::map<std::string, std::string>& owner) {
  Confirmations out;
  std::map<std::string, std::vector<std::string>> by_binary;
  for (const Row& r : first.rows) {
    if (!past_limit(r, first.direction)) continue;
    const auto it = owner.find(r.name);
    if (it == owner.end()) continue;
    by_binary[it->second].push_back(r.name);
    out.first.emplace(r.name, r);
  }
  if (by_binary.empty()) return out;
  ctx.io.emit("confirming " + std::to_string(out.first.size()) + " case(s) past their limit" + confirm_how(g, out.first) +
              ":\n");
  SuiteRunner runner(ctx, g.run);
  const RunPlan bp = base_plan(g);
  SuiteRunner base_runner(ctx, bp);
  std::size_t i = 0;
  for (const auto& [bin, all] : by_binary) {
    ++i;
    const std::string progress = "[confirm " + std::to_string(i) + "/" + std::to_string(by_binary.size()) + "]";
    // Host-bound cases are re-measured in a fresh process per repetition (their figure moves
    // with the process: docs/GATE.md), those measured in fresh processes in as many
    // as their rule asks; the others in one fresh process with repetitions. Key: processes (0:
    // one process with repetitions).
    std::map<int, std::vector<std::string>> groups;
    for (const auto& n : all) {
      const int fresh = fresh_processes_of(g, n);
      groups[fresh > 0 ? fresh
             : g.compare.thresholds.rule_for(n).kind == RuleKind::HostBound ? g.confirm_reps : 0].push_back(n);
    }
    for (const auto& [processes, names] : groups) {
      // Judged against the base build (--base-bin-dir): both builds measured again, in pairs.
      const bool paired = g.base_bin_dir && processes > 0 && fresh_processes_of(g, names.front()) > 0;
      Outcome b;
      Outcome o;
      if (paired) std::tie(b, o) = runner.run_fresh_paired(base_runner, bin, progress, "confirm", processes, cases_filter(names));
      else o = processes > 0 ? runner.run_fresh(bin, progress, "confirm", processes, cases_filter(names), false)
                             : runner.run(bin, progress, "confirm", g.confirm_reps, cases_filter(names), false);
      if (o.interrupted || b.interrupted) return Error{bin, "interrupted by a signal during the confirmation run"};
      if (!o.run.name.empty()) out.runs.push_back(o.run);
      for (const auto& n : names) {
        if (!o.results) out.failed[n] = !o.run.reason.empty() ? o.run.reason : paired ? paired_reason(b, o) : "no results";
        else if (o.results->find(n) == nullptr) out.failed[n] = "not in the re-run's results";
      }
      if (o.results) current = replace_benchmarks(current, *o.results, names);
      if (paired && o.results) add_cases(out.base_side, *b.results);
    }
  }
  return out;
}

// Marks each re-measured row with what the confirmation said.
void mark_confirmations(Comparison& c, const Confirmations& conf) {
  for (Row& r : c.rows) {
    const auto it = conf.first.find(r.name);
    if (it == conf.first.end()) continue;
    r.first_change = it->second.change;
    r.first_cur_reps = it->second.cur_reps;
    if (const auto f = conf.failed.find(r.name); f != conf.failed.end()) {
      r.confirmation = Confirmation::RerunFailed;
      r.note = "confirmation run gave no figure (" + f->second + "): the first pass stands";
    } else if (r.verdict == Verdict::Regression) {
      r.confirmation = Confirmation::Confirmed;
    } else if (r.verdict == Verdict::Errored || r.verdict == Verdict::Missing) {
      r.confirmation = Confirmation::RerunFailed;
    } else {
      r.confirmation = Confirmation::NotConfirmed;
    }
  }
}

Expected<GatePlan> read_gate_plan(const FileSystem& fs, const Args& a, const std::vector<std::string>& args,
                                  const CliEnvironment& env) {
  GatePlan g;
  auto run = read_plan(a, args[0], "gate");
  if (!run) return run.error();
  g.run = std::move(*run);
  const auto base = value(a, "--baseline");
  if (!base) return Error{"gate", "needs --baseline FILE or DIR (a baseline file, or the store: baselines)"};
  g.baseline = *base;
  const auto kind = fs.kind(g.baseline);
  if (kind == FileSystem::Kind::Missing) return Error{g.baseline, "no such file or folder (--baseline)"};
  // Refused before anything runs: a FIFO, a device or a loop of links would only fail after the
  // binaries ran and results.json was replaced.
  if (kind == FileSystem::Kind::Loop) return Error{g.baseline, "a loop of symbolic links (--baseline)"};
  if (kind == FileSystem::Kind::Other) return Error{g.baseline, "not a regular file or a folder (--baseline)"};
  g.baseline_is_dir = kind == FileSystem::Kind::Directory;
  if (const auto r = value(a, "--confirm-repetitions")) {
    auto v = parse_count("--confirm-repetitions", *r, 2, 1000);
    if (!v) return v.error();
    g.confirm_reps = *v;
  }
  g.allow_other_gpu = flag(a, "--allow-other-gpu");
  auto colour = colour_from(a, env);
  if (!colour) return colour.error();
  g.colour = *colour;
  const std::vector<std::string> search = g.baseline_is_dir ? std::vector<std::string>{join_path(g.baseline, "thresholds.json")}
                                                            : thresholds_search_from(g.baseline);
  auto o = read_compare_options(fs, a, search);
  if (!o) return o.error();
  g.compare = std::move(*o);
  g.compare.warn_unmatched_globs = !g.run.filter;
  auto h = history::open_gate_history(value(a, "--history"), value(a, "--against-commit"));
  if (!h) return h.error();
  g.history = std::move(*h);
  if (const auto bd = value(a, "--base-bin-dir")) {
    if (const FileSystem::Kind k = fs.kind(*bd); k != FileSystem::Kind::Directory)
      return Error{*bd, std::string(k == FileSystem::Kind::Missing ? "no such folder" : "not a folder") +
                            " (--base-bin-dir: the base build's binaries)"};
    g.base_bin_dir = *bd;
  }
  return g;
}

ActivityReport probe_activity(Context& ctx, const GatePlan& g, const std::string& gpu_uuid, const ActivitySnapshot& snap) {
  const auto sel = select_gpu(snap, g.run.device, ctx.env.cuda_visible_devices, gpu_uuid);
  return describe_activity(snap, sel, g.run.device, static_cast<unsigned>(::getpid()));
}

// What the GPU was doing before the first binary, on the terminal (the record gets it later).
void show_activity_before(Context& ctx, const GatePlan& g, const ActivitySnapshot& snap) {
  const ActivityReport before = probe_activity(ctx, g, "", snap);
  std::string text;
  for (const auto& w : before.warnings) text += "WARNING: " + w + "\n";
  for (const auto& l : before.lines) text += l + "\n";
  ctx.io.emit(text);
}

// Nothing ran: no GPU model to pick a baseline by, no case to compare. The comparison of two
// empty sides carries the options; the binaries' errors are the report.
Comparison nothing_ran(const GatePlan& g, const std::string& results_path) {
  Results base, cur;
  base.source = g.baseline;
  cur.source = results_path;
  CompareOptions o = g.compare;
  o.warn_unmatched_globs = false;  // no names to match: every glob would be "stale"
  return compare_results(base, cur, o);
}

// The judging of a first pass: the baseline picked and checked, the comparison, the
// confirmation of every case past its limit, the explanations; the report carries the
// comparison with the gate's warning of another GPU model and the confirmation's repetitions.
// `current` ends as judged (the confirmation's entries in place of the first pass's) and is
// written again if it moved.
Expected<CompareReport> judge_first_pass(Context& ctx, GatePlan& g, FirstPass& fp, Results& current, ActivitySnapshot& snap,
                                      const std::string& results_path, bool any_results) {
  CliOutput& io = ctx.io;
  auto from_commit = g.history ? history::against_commit(*g.history, current, g.compare.thresholds)
                               : Expected<std::optional<history::CommitBaseline>>(std::nullopt);
  if (!from_commit) return from_commit.error();
  if (g.history && g.history->against && !*from_commit)
    io.emit("history " + g.history->path + " has no run of commit " + *g.history->against +
            " on this GPU model: judging against the stored baseline\n");
  auto base_path = *from_commit ? Expected<std::string>((*from_commit)->label) : pick_baseline(ctx.fs, g, current, results_path);
  if (!base_path) return base_path.error();
  auto base_full = *from_commit ? Expected<Results>((*from_commit)->results) : load_results(ctx.fs, *base_path);
  if (!base_full) return base_full.error();
  const std::string gpu_b = base_full->context_value("gpu_name");
  const std::string gpu_c = current.context_value("gpu_name");
  CompareReport report;
  if (any_results && gpu_b != gpu_c) {
    if (!g.allow_other_gpu)
      return Error{*base_path, "baseline is from " + gpu_b + ", this run is on " + gpu_c +
                                   ": compare the same GPU model, or pass --allow-other-gpu"};
    report.warnings.push_back("baseline is from " + gpu_b + ", this run is on " + gpu_c + " (--allow-other-gpu)");
  }
  if (auto m = check_metric(*base_full, current, g.compare.metric); !m && any_results) return m.error();
  Results base = restrict_to_filter(*base_full, g.run);
  io.emit("baseline: " + *base_path + " (" + gpu_b + ")\n");
  // Cases measured in fresh processes: judged only against the base build's processes, each run
  // beside one of this build's (--base-bin-dir). Against the stored baseline or earlier runs, a
  // slower period of the whole machine failed an unchanged tree (docs/GATE.md): shown, not gated.
  if (fp.base_side) {
    base = with_cases_of(base, restrict_to_filter(*fp.base_side, g.run));
    g.compare.fresh_not_gated.clear();
    g.compare.paired_processes = true;
    io.emit("fresh-process cases: against the base build (" + g.base_bin_dir.value_or("") +
            "), by the median pair, each of its processes run beside one of this build's\n");
  } else {
    g.compare.fresh_not_gated = "shown, not gated: judged only against the base build's processes run beside this "
                                "build's (--base-bin-dir DIR; ci/gate.sh: GPUCHECK_BASE_REF=REF)";
  }
  if (!g.compare.fresh_not_gated.empty() && measures_any_in_fresh_processes(g.compare.thresholds, current))
    io.emit("fresh-process cases: " + g.compare.fresh_not_gated + "\n");

  // A neighbour may have started after the first look: look again before judging and
  // re-measuring. A neighbour on the GPU is never excused as a slow host.
  if (ctx.env.gpu_probe != nullptr) snap = merge_snapshots(snap, ctx.env.gpu_probe->snapshot());
  const ActivityReport seen = probe_activity(ctx, g, current.context_value("gpu_uuid"), snap);
  g.compare.gpu_other_processes = seen.other_processes.value_or(0);
  Comparison first = compare_results(base, current, g.compare);
  auto conf = confirm(ctx, g, first, current, fp.owner);
  if (!conf) return conf.error();
  if (conf->base_side) base = with_cases_of(base, restrict_to_filter(*conf->base_side, g.run));
  Comparison c = conf->first.empty() ? std::move(first) : compare_results(base, current, g.compare);
  if (!conf->first.empty()) {
    report.confirm_repetitions = g.confirm_reps;
    mark_confirmations(c, *conf);
    for (auto& r : conf->runs) fp.outcomes.push_back(Outcome{r, std::nullopt, false, false, false});
    // The record is what was judged: the re-run's entries replace the first pass's.
    if (auto w = ctx.fs.write_output(results_path, to_gbench_json(current)); !w) return w.error();
  }
  explain_regressions(c, base, current, seen.other_processes);
  report.comparison = std::move(c);
  return report;
}

// compare.md, compare.json and junit.xml beside results.json; the terminal table; the step summary.
Status write_gate_outputs(Context& ctx, const GatePlan& g, const CompareReport& c, const std::string& results_path,
                          bool any_results) {
  const std::string md = render_markdown(c);
  const std::vector<std::pair<std::string, std::string>> files{
      {join_path(g.run.out, "compare.md"), md},
      {join_path(g.run.out, "compare.json"), render_json(c)},
      {join_path(g.run.out, "junit.xml"), render_junit(c)}};
  if (auto w = write_command_outputs(ctx.fs, ctx.io, files); !w) return w.error();  // all three or none
  ctx.io.emit(render_terminal(c, g.colour));
  ctx.io.emit("wrote " + (any_results ? results_path + ", " : std::string()) + files[0].first + ", " + files[1].first +
              ", " + files[2].first + " (logs in " + join_path(g.run.out, "logs") + ")\n");
  append_step_summary(ctx.fs, ctx.env, ctx.io, md);
  return Done{};
}

}  // namespace

ExitStatus cmd_gate(const std::vector<std::string>& args, Context& ctx) {
  CliOutput& io = ctx.io;
  const OptionSet gate_only{{"--baseline", "--confirm-repetitions", "--color", "--history", "--against-commit",
                             "--base-bin-dir"},
                            {"--allow-other-gpu"}};
  auto a = parse_args(args, 2, with(with(run_options(), compare_options()), gate_only), "gate");
  if (!a) return fail(io, a.error());
  auto g = read_gate_plan(ctx.fs, *a, args, ctx.env);
  if (!g) return fail(io, g.error());
  if (ctx.env.runner == nullptr) return fail(io, Error{"gate", "cannot start processes here"});
  auto bins = discover_binaries(ctx.fs, g->run.bin_dir);
  if (!bins) return fail(io, bins.error());
  // The history is read and written in place: no output of the gate may name it (its
  // compare.md or a log would replace the database). --bin-dir is not among them: the gate
  // reads only its bench_* binaries, so results written there harm nothing.
  std::vector<NamedPath> inputs{{"--baseline", g->baseline}, {"--thresholds", g->compare.thresholds.source}};
  if (g->history) inputs.push_back({"--history", g->history->path});
  if (g->base_bin_dir) inputs.push_back({"--base-bin-dir", *g->base_bin_dir});
  if (auto m = make_out_dirs(ctx.fs, ctx.env, g->run.out, true, inputs); !m) return fail(io, m.error());
  if (g->base_bin_dir) {  // the base build's files: OUT/base/{runs,confirm,logs}
    if (auto m = make_out_dirs(ctx.fs, ctx.env, join_path(g->run.out, "base"), true, inputs); !m) return fail(io, m.error());
  }

  io.emit("gpucheck gate: " + header(g->run, *bins, 1) + "; confirmation " + std::to_string(g->confirm_reps) +
          " repetitions\n");
  ActivitySnapshot snap;
  snap.reason = "no NVML probe";
  if (ctx.env.gpu_probe != nullptr) snap = ctx.env.gpu_probe->snapshot();
  show_activity_before(ctx, *g, snap);
  if (auto p = choose_pin(ctx, g->run, snap); !p) return fail(io, p.error());

  auto fp = run_all(ctx, g->run, bins->names, 1);
  if (!fp) return fail(io, fp.error());
  const std::string results_path = join_path(g->run.out, "results.json");
  const bool any_results = !fp->parts.empty();
  auto current = merge_parts(std::move(fp->parts), results_path);
  if (!current) return fail(io, current.error());
  if (auto f = fresh_pass(ctx, *g, *fp, *current); !f) return fail(io, f.error());
  if (any_results) {
    if (auto w = ctx.fs.write_output(results_path, to_gbench_json(*current)); !w) return fail(io, w.error());
  }

  // The rules learn which families lost their binary, and judge those cases Errored themselves.
  g->compare.errored_families = errored_families(runs_of(fp->outcomes));
  CompareReport report;
  if (!any_results && g->baseline_is_dir) {
    report = nothing_ran(*g, results_path);
  } else {
    auto judged = judge_first_pass(ctx, *g, *fp, *current, snap, results_path, any_results);
    if (!judged) return fail(io, judged.error());
    report = std::move(*judged);
  }
  const ActivityReport activity = probe_activity(ctx, *g, any_results ? current->context_value("gpu_uuid") : "", snap);
  report.warnings.insert(report.warnings.begin(), activity.warnings.begin(), activity.warnings.end());
  report.activity = activity.lines;
  report.binaries = runs_of(fp->outcomes);
  if (auto w = write_gate_outputs(ctx, *g, report, results_path, any_results); !w) return fail(io, w.error());
  if (g->history && any_results) {
    auto id = history::add_gate_run(*g->history, *current, report.comparison, g->run.out);
    if (!id) return fail(io, id.error());
    io.emit("history: run " + std::to_string(*id) + " in " + g->history->path + "\n");
  }
  return report.failed() ? ExitStatus::Regression : ExitStatus::Ok;
}

}  // namespace gpucheck::compare::cli
