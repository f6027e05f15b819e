#include "runner/suite_runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "results/baseline.hpp"
#include "runner/suite.hpp"
#include "runner/contain.hpp"
#include "runner/process.hpp"
#include "base/format.hpp"
#include "gpucheck/core/contract.hpp"

namespace gpucheck::compare::cli {

std::vector<ErroredFamily> errored_families(const std::vector<BinaryRun>& runs) {
  std::vector<ErroredFamily> out;
  for (const BinaryRun& r : runs) {
    if (r.status != BinaryRun::Status::Errored || r.pass != "first") continue;
    const std::string_view family = contract::family_of_binary(r.name);
    if (!family.empty()) out.push_back({std::string(family), r.name, r.reason});
  }
  return out;
}

const OptionSet& run_options() {
  static const OptionSet o = [] {
    OptionSet s{{"--bin-dir", "--out", "--suite", "--device", "--timeout", "--filter", "--pin-cpu"}, {}};
    s.aliases = {{"-d", "--device"}};  // as the benchmark binaries take it
    return s;
  }();
  return o;
}

Expected<RunPlan> read_plan(const Args& a, const std::string& self, const std::string& command) {
  RunPlan p;
  p.self = self;
  const auto bin = value(a, "--bin-dir");
  const auto out = value(a, "--out");
  if (!bin) return Error{command, "needs --bin-dir DIR (the folder of the bench_* binaries)"};
  if (!out) return Error{command, "needs --out DIR (where results and reports go)"};
  if (!a.positional.empty()) return Error{command, "takes no paths (\"" + a.positional.front() + "\"): use the options"};
  if (auto how = containment_from_env(std::getenv("GPUCHECK_CONTAINMENT")); !how) return how.error();
  p.bin_dir = *bin;
  p.out = *out;
  p.suite = value(a, "--suite").value_or("quick");
  if (!valid_store_name(p.suite)) return Error{"--suite", "bad suite name \"" + p.suite + "\""};
  if (const auto d = value(a, "--device")) {
    auto v = parse_count("--device", *d, 0, 1023);
    if (!v) return v.error();
    p.device = *v;
  }
  p.timeout_s = default_timeout_s(p.suite);
  if (const auto t = value(a, "--timeout")) {
    auto v = parse_number("--timeout", *t, 0.0, 1e6);
    if (!v) return v.error();
    p.timeout_s = *v;
  }
  auto filter = parse_filter(a);
  if (!filter) return filter.error();
  if (*filter) {
    p.filter = (*filter)->pattern();
    p.filter_re = std::move(*filter);
  }
  if (const auto pin = value(a, "--pin-cpu")) {
    auto r = parse_pin_cpu(*pin);
    if (!r) return r.error();
    p.pin = *r;
  }
  return p;
}

Status choose_pin(Context& ctx, RunPlan& plan, const ActivitySnapshot& snap) {
  Expected<std::vector<int>> local = Error{"", "not looked up"};
  std::string gpu = "?";
  if (plan.pin.mode == PinRequest::Mode::Auto) {
    if (!snap.known) {
      local = Error{"", snap.reason.empty() ? std::string("NVML unknown") : snap.reason};
    } else {
      const auto sel = select_gpu(snap, plan.device, ctx.env.cuda_visible_devices, "");
      const auto bus = gpu_bus_id(snap.gpus, sel, plan.device);
      if (bus) gpu = *bus;
      local = bus ? read_local_cpus("", *bus) : Expected<std::vector<int>>(bus.error());
    }
  }
  auto d = decide_pin(plan.pin, local, gpu, allowed_cpus());
  if (!d) return d.error();
  plan.pin_cpu = d->cpu;
  ctx.io.emit(d->line + "\n");
  return Done{};
}

std::string seconds_text(double s) { return format_double(s < 10 ? "%.1f" : "%.0f", s); }

Outcome SuiteRunner::run(const std::string& bin, const std::string& progress, const std::string& pass, int reps,
                         const std::optional<std::string>& filter, bool allow_empty) {
  Outcome o;
  o.run.name = bin;
  o.run.pass = pass;
  const bool confirm = pass == "confirm", fresh = pass == "fresh";
  const std::string json_dir = join_path(plan_.out, confirm ? "confirm" : "runs");
  const std::string logs = join_path(plan_.out, "logs");
  const std::string stem = bin + (confirm ? ".confirm" : fresh ? ".fresh" : "");
  const std::string final_json = join_path(json_dir, (fresh ? stem : bin) + ".json");
  std::string tmp_name(1, '.');
  tmp_name.append(bin).append(".json.tmp-").append(std::to_string(::getpid()));
  const std::string tmp_json = join_path(json_dir, tmp_name);
  o.run.log = join_path(logs, stem + ".log");
  // An older run's file must not stand in for this one's.
  (void)ctx_.fs.remove(final_json);
  (void)ctx_.fs.remove(tmp_json);

  ProcessSpec spec;
  spec.program = join_path(plan_.bin_dir, bin);
  if (spec.program.find('/') == std::string::npos) spec.program = "./" + spec.program;
  spec.args = {"--suite", plan_.suite, "--device", std::to_string(plan_.device), "--benchmark_out=" + tmp_json,
               "--benchmark_out_format=json"};
  if (reps > 1) spec.args.push_back("--benchmark_repetitions=" + std::to_string(reps));
  if (filter) spec.args.push_back("--benchmark_filter=" + *filter);
  spec.args.insert(spec.args.end(), plan_.extra_args.begin(), plan_.extra_args.end());
  spec.stdout_path = join_path(logs, stem + ".stdout.log");
  spec.stderr_path = o.run.log;
  spec.timeout_s = plan_.timeout_s * std::max(1, reps);
  spec.kill_grace_s = kill_grace_s(spec.timeout_s);
  spec.cpu = plan_.pin_cpu.value_or(-1);

  ctx_.io.emit(progress + " " + bin + (confirm ? " (confirmation)" : fresh ? " (fresh processes)" : "") + " ... ");
  const ProcessResult pr = ctx_.env.runner->run(spec);
  o.run.seconds = pr.seconds;
  std::string err_text;
  if (auto t = ctx_.fs.read(o.run.log, std::size_t{64} << 20)) err_text = std::move(*t);
  const std::string last = last_line(err_text);
  auto errored = [&o](std::string reason) {
    o.run.status = BinaryRun::Status::Errored;
    o.run.reason = std::move(reason);
  };
  switch (pr.end) {
    case ProcessResult::End::CouldNotStart: errored("cannot start " + spec.program + ": " + pr.error); break;
    case ProcessResult::End::Interrupted:
      o.interrupted = true;
      errored("interrupted");
      break;
    case ProcessResult::End::TimedOut:
      errored("timed out after " + seconds_text(spec.timeout_s) + " s" +
              (pr.killed_hard ? " (ignored SIGTERM, killed)" : ""));
      break;
    case ProcessResult::End::Signalled:
      errored("crashed: " + signal_name(pr.signal) + (last.empty() ? "" : "; last stderr line: " + last));
      break;
    case ProcessResult::End::Exited:
      if (pr.exit_code == 2 && allow_empty && contract::says_no_match(last)) {
        // The filter the gate passes to every binary left this one no case: nothing of this
        // family was asked for, which is no error (binaries say so and exit 2, writing nothing).
        o.matched_nothing = true;
      } else if (pr.exit_code == 2) {
        errored(std::string(kCouldNotRun) + (last.empty() ? std::string("no message on stderr") : last));
        o.no_device = says_no_device(last);
      } else if (pr.exit_code != 0 && pr.exit_code != 1) {
        errored("exit " + std::to_string(pr.exit_code) + (last.empty() ? "" : ": " + last));
      } else {
        read_json(o, tmp_json, final_json, pr.exit_code, allow_empty, last);
      }
      break;
  }
  if (o.run.status == BinaryRun::Status::Errored) (void)ctx_.fs.remove(tmp_json);
  // A binary killed before it renamed its output leaves FILE.partial-PID (runner contract: it
  // writes there first): gone with it.
  if (pr.pid > 0) (void)ctx_.fs.remove(tmp_json + ".partial-" + std::to_string(pr.pid));
  if (pr.dropped_bytes > 0)
    ctx_.io.emit("(" + bin + " printed " + std::to_string(pr.dropped_bytes) + " bytes more than its logs keep: the middle was dropped) ");

  std::string line = seconds_text(o.run.seconds) + " s, ";
  if (o.matched_nothing) line += "no case matches the filter";
  else if (o.run.status == BinaryRun::Status::Errored) line += "ERRORED: " + o.run.reason + " (log " + o.run.log + ")";
  else line += std::to_string(o.run.cases_ok) + (o.run.cases_ok == 1 ? " case ok" : " cases ok");
  if (o.run.status != BinaryRun::Status::Errored && (o.run.cases_errored || o.run.cases_skipped)) {
    if (o.run.cases_errored) line += ", " + std::to_string(o.run.cases_errored) + " errored";
    if (o.run.cases_skipped) line += ", " + std::to_string(o.run.cases_skipped) + " skipped";
  }
  line += "\n";
  // A binary that found no device said so in its one line, already in the reason.
  if (o.run.status != BinaryRun::Status::Ok && !o.no_device)
    for (const auto& l : last_lines(err_text, 5)) line += "    | " + l + "\n";
  ctx_.io.emit(line);
  return o;
}

bool SuiteRunner::FreshRuns::add(Outcome o) {
  seconds += o.run.seconds;
  const bool ok = !(o.interrupted || o.run.status == BinaryRun::Status::Errored || o.matched_nothing || !o.results);
  if (ok) runs.push_back(std::move(*o.results));
  last = std::move(o);
  return ok;
}

Outcome SuiteRunner::stack_fresh(const std::string& bin, const std::string& pass, FreshRuns&& f) {
  Outcome last = std::move(f.last);
  const bool confirm = pass == "confirm";
  const std::string final_json = join_path(join_path(plan_.out, confirm ? "confirm" : "runs"),
                                           bin + (pass == "fresh" ? ".fresh" : "") + ".processes.json");
  auto stacked = stack_repetitions(f.runs, final_json);
  last.run.seconds = f.seconds;
  if (!stacked) {
    last.run.status = BinaryRun::Status::Errored;
    last.run.reason = "its runs do not stack: " + stacked.error().str();
    last.results.reset();
    return last;
  }
  if (auto w = ctx_.fs.write_output(final_json, to_gbench_json(*stacked)); !w) {
    last.run.status = BinaryRun::Status::Errored;
    last.run.reason = "results not kept: " + w.error().str();
    last.results.reset();
    return last;
  }
  last.results = std::move(*stacked);
  return last;
}

Outcome SuiteRunner::run_fresh(const std::string& bin, const std::string& progress, const std::string& pass,
                               int processes, const std::optional<std::string>& filter, bool allow_empty) {
  FreshRuns f;
  for (int i = 0; i < processes; ++i) {
    const std::string p = progress + " (process " + std::to_string(i + 1) + "/" + std::to_string(processes) + ")";
    if (!f.add(run(bin, p, pass, 1, filter, allow_empty))) return std::move(f.last);
  }
  return stack_fresh(bin, pass, std::move(f));
}

std::pair<Outcome, Outcome> SuiteRunner::run_fresh_paired(SuiteRunner& base, const std::string& bin,
                                                          const std::string& progress, const std::string& pass,
                                                          int processes, const std::optional<std::string>& filter) {
  FreshRuns b, c;
  std::pair<Outcome, Outcome> out;
  bool ran = true;
  for (int i = 0; i < processes && ran; ++i) {
    const std::string of = std::to_string(i + 1) + "/" + std::to_string(processes) + ")";
    ran = b.add(base.run(bin, progress + " (base build, process " + of, pass, 1, filter, false)) &&
          c.add(run(bin, progress + " (this build, process " + of, pass, 1, filter, false));
  }
  if (ran) out = {base.stack_fresh(bin, pass, std::move(b)), stack_fresh(bin, pass, std::move(c))};
  else out = {std::move(b.last), std::move(c.last)};
  // Both sides or neither: a side without a figure leaves the other with nothing to be judged
  // against (and a side cut short holds its last process emptied into its runs).
  if (!out.first.results || !out.second.results) {
    out.first.results.reset();
    out.second.results.reset();
  }
  return out;
}

void SuiteRunner::read_json(Outcome& o, const std::string& tmp, const std::string& final_json, int code,
                            bool allow_empty, const std::string& last) {
  const std::string after = "exit " + std::to_string(code) + " but ";
  const std::string tail = last.empty() ? "" : "; last stderr line: " + last;
  if (ctx_.fs.kind(tmp) == FileSystem::Kind::Missing) {
    if (allow_empty && code == 0) {
      o.matched_nothing = true;
      return;
    }
    o.run.status = BinaryRun::Status::Errored;
    o.run.reason = after + "it wrote no results JSON" + tail;
    return;
  }
  // A link is never followed nor kept: it could name any file this user may read.
  if (ctx_.fs.is_link(tmp)) {
    (void)ctx_.fs.remove(tmp);
    o.run.status = BinaryRun::Status::Errored;
    o.run.reason = after + "its results JSON is a symbolic link (removed, not followed)" + tail;
    return;
  }
  ReadOptions keep;
  keep.keep_raw = true;
  auto text = ctx_.fs.read(tmp, kMaxFileBytes);
  Expected<Results> parsed = text ? parse_results(*text, final_json, keep) : Expected<Results>(text.error());
  if (!parsed) {
    // Google Benchmark leaves an empty file when its filter matched nothing.
    const std::string& m = parsed.error().message;
    const bool empty = text && (m == "empty file" || m.find("list is empty") != std::string::npos);
    if (allow_empty && code == 0 && empty) {
      o.matched_nothing = true;
      (void)ctx_.fs.remove(tmp);
      return;
    }
    // Kept for a look, out of the way of any reader of runs/.
    // A copy of the bytes read (a regular file's), never the entry itself.
    const std::string kept = join_path(join_path(plan_.out, "logs"), base_name(final_json) + ".unreadable");
    (void)ctx_.fs.remove(kept);
    if (text) (void)ctx_.fs.write(kept, *text);
    (void)ctx_.fs.remove(tmp);
    o.run.status = BinaryRun::Status::Errored;
    o.run.reason = after + "its results JSON does not read (" + parsed.error().message + ")" + tail;
    return;
  }
  if (auto r = ctx_.fs.rename(tmp, final_json); !r) {
    o.run.status = BinaryRun::Status::Errored;
    o.run.reason = "results not kept: " + r.error().str();
    return;
  }
  for (const Benchmark& b : parsed->benchmarks) {
    if (b.state == RunState::Ok) ++o.run.cases_ok;
    else if (b.state == RunState::Errored) ++o.run.cases_errored;
    else ++o.run.cases_skipped;
  }
  if (code == 1 && o.run.cases_errored == 0) {
    o.run.status = BinaryRun::Status::Errored;
    o.run.reason = "exit 1 but no case in its JSON is marked as failed" + tail;
    return;
  }
  if (code == 1) {
    o.run.status = BinaryRun::Status::CaseFailed;
    o.run.reason = std::to_string(o.run.cases_errored) + " case(s) failed (exit 1; their entries say why)";
  }
  o.results = std::move(*parsed);
}

}  // namespace gpucheck::compare::cli
