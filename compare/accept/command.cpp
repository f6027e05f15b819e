// `gpucheck accept`: its arguments (both modes: judging files on disk, and the measuring run
// that the GPU machine does), loading every results file under a folder, and the judge
// wired to specs, config, renderers and output files. Every problem is one line, exit 2.
#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/args.hpp"
#include "base/output.hpp"
#include "accept/command.hpp"
#include "accept/measure.hpp"
#include "accept/render.hpp"
#include "gpucheck/core/options.hpp"
#include "gpucheck/core/specs.hpp"


namespace gpucheck::compare {
namespace {

using cli::fail;

constexpr int kMaxFolderDepth = 8;
constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;

Expected<double> positive_seconds(const std::string& opt, const std::string& s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || v <= 0 || v > 7 * 86400.0)
    return Error{opt, "expected seconds (a number > 0), got \"" + s + "\""};
  return v;
}

Expected<std::vector<int>> device_list(const std::string& s) {
  std::vector<int> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    const std::string part = s.substr(at, comma - at);
    int v = -1;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v < 0)
      return Error{"--devices", "expected device indices like 0,3, got \"" + s + "\""};
    if (std::find(out.begin(), out.end(), v) != out.end())
      return Error{"--devices", "device " + part + " given twice"};
    out.push_back(v);
    at = comma + 1;
  }
  return out;
}

Status walk(const FileSystem& fs, const std::string& dir, int depth, std::vector<Results>& out) {
  if (depth > kMaxFolderDepth)
    return Error{dir, "folders nested deeper than " + std::to_string(kMaxFolderDepth) + " levels (a link loop?)"};
  // A gate's --out folder is its results.json (its compare.json, runs/ and confirm/ are the
  // gate's own, and runs/ repeats results.json); a folder of logs holds no results.
  if (const auto gate = gate_folder_results(fs, dir)) {
    auto text = fs.read(*gate, kMaxFileBytes);
    if (!text) return text.error();
    auto r = parse_results(*text, *gate);
    if (!r) return r.error();
    out.push_back(std::move(*r));
    return Done{};
  }
  auto names = fs.list(dir);
  if (!names) return names.error();
  for (const std::string& n : *names) {
    if (n.starts_with(".") || n == "logs") continue;
    const std::string full = join_path(dir, n);
    const auto kind = fs.kind(full);
    if (kind == FileSystem::Kind::Loop) return Error{full, "a symbolic link loop"};
    if (kind == FileSystem::Kind::Directory) {
      if (auto w = walk(fs, full, depth + 1, out); !w) return w;
    } else if (kind == FileSystem::Kind::File && n.ends_with(".json") && n != "accept.json") {
      auto text = fs.read(full, kMaxFileBytes);
      if (!text) return text.error();
      auto r = parse_results(*text, full);
      if (!r) return r.error();
      out.push_back(std::move(*r));
    }
  }
  return Done{};
}

// --out DIR's accept.json and accept.md may not be an input (a --results file, --specs,
// --config, given or found by the default search) nor the step summary; checked before
// anything is measured.
Status check_accept_outputs(const AcceptArgs& a, const FileSystem& fs, const CliEnvironment& env) {
  if (!a.out) return Done{};
  const std::vector<NamedPath> outputs{{"--out", join_path(*a.out, "accept.json")}, {"--out", join_path(*a.out, "accept.md")}};
  std::vector<NamedPath> inputs;
  for (const auto& r : a.results) inputs.push_back({"--results", r});
  if (const auto specs = cli::find_data_file(fs, a.specs, "specs.json")) inputs.push_back({"--specs", *specs});
  if (const auto config = cli::find_data_file(fs, a.config, "accept.json")) inputs.push_back({"--config", *config});
  return check_command_outputs(fs, env, outputs, inputs);
}

}  // namespace

Expected<AcceptArgs> parse_accept_args(const std::vector<std::string>& args, std::size_t from) {
  static const cli::OptionSet kOptions{
      {"--specs", "--config", "--out", "--format", "--devices", "--bin-dir", "--burn", "--timeout"}, {}, {"--results"}};
  auto parsed = cli::parse_args(args, from, kOptions, "accept");
  if (!parsed) return parsed.error();
  if (!parsed->positional.empty())
    return Error{"accept", "unexpected argument \"" + parsed->positional.front() + "\" (results go after --results)"};
  for (const auto& [key, v] : parsed->values)
    if (v.empty()) return Error{key, "needs a value"};
  AcceptArgs a;
  if (const auto it = parsed->lists.find("--results"); it != parsed->lists.end()) a.results = it->second;
  for (const std::string& r : a.results)
    if (r.empty()) return Error{"--results", "needs a value"};
  a.specs = cli::value(*parsed, "--specs");
  a.config = cli::value(*parsed, "--config");
  a.out = cli::value(*parsed, "--out");
  a.bin_dir = cli::value(*parsed, "--bin-dir");
  if (auto f = cli::value(*parsed, "--format")) {
    if (*f != "terminal" && *f != "markdown" && *f != "json")
      return Error{"--format", "unknown format \"" + *f + "\" (terminal, markdown, json)"};
    a.format = *f;
  }
  if (auto d = cli::value(*parsed, "--devices"); d && *d != "all") {
    auto list = device_list(*d);
    if (!list) return list.error();
    a.devices = std::move(*list);
  }
  for (const auto& [opt, field] : {std::pair{"--burn", &a.burn_s}, std::pair{"--timeout", &a.timeout_s}})
    if (auto v = cli::value(*parsed, opt)) {
      auto secs = positive_seconds(opt, *v);
      if (!secs) return secs.error();
      *field = *secs;
    }
  if (!a.results.empty()) {
    for (const auto& [opt, given] : {std::pair{"--bin-dir", a.bin_dir.has_value()}, std::pair{"--burn", a.burn_s.has_value()},
                                     std::pair{"--timeout", a.timeout_s.has_value()}})
      if (given) return Error{opt, "is for a measuring run on the GPU machine; with --results the judge only reads files"};
  }
  return a;
}

Expected<std::vector<Results>> load_accept_results(const FileSystem& fs, const std::vector<std::string>& paths) {
  if (paths.empty()) return Error{"--results", "no results folder given"};
  std::vector<Results> out;
  for (const std::string& p : paths) {
    const std::size_t before = out.size();
    switch (fs.kind(p)) {
      case FileSystem::Kind::Missing: return Error{p, "no such file or folder"};
      case FileSystem::Kind::Loop: return Error{p, "a symbolic link loop"};
      case FileSystem::Kind::Other: return fs.read(p, kMaxFileBytes).error();  // what it is, at once
      case FileSystem::Kind::File: {
        auto text = fs.read(p, kMaxFileBytes);
        if (!text) return text.error();
        auto r = parse_results(*text, p);
        if (!r) return r.error();
        out.push_back(std::move(*r));
        break;
      }
      case FileSystem::Kind::Directory:
        if (auto w = walk(fs, p, 0, out); !w) return w.error();
        break;
    }
    if (out.size() == before) return Error{p, "holds no results files (*.json)"};
  }
  return out;
}

ExitStatus judge_and_report(const AcceptArgs& args, const std::vector<Results>& files, FileSystem& fs, CliOutput& io,
                            const std::vector<AcceptCheck>& extra) {
  SpecDb specs;
  std::string specs_source =
      "none found (" + cli::data_file_places("specs.json") + "): SKU checks not checked; pass --specs FILE";
  if (const auto path = cli::find_data_file(fs, args.specs, "specs.json")) {
    auto text = fs.read(*path, kMaxConfigBytes);
    if (!text) return fail(io, text.error());
    std::string err;
    if (!SpecDb::parse(*text, *path, &specs, &err)) return fail(io, Error{"", err});
    specs_source = *path;
  }
  AcceptConfig config;
  config.source = "built-in defaults (no baselines/accept.json)";
  if (const auto path = cli::find_data_file(fs, args.config, "accept.json")) {
    auto text = fs.read(*path, kMaxConfigBytes);
    if (!text) return fail(io, text.error());
    auto c = parse_accept_config(*text, *path);
    if (!c) return fail(io, c.error());
    config = std::move(*c);
  }
  if (auto k = check_config_skus(config, specs); !k) return fail(io, k.error());
  auto report = judge(files, specs, config);
  if (!report) return fail(io, report.error());
  report->specs_source = specs_source;
  report->checks.insert(report->checks.end(), extra.begin(), extra.end());

  if (args.format == "json") io.out += render_accept_json(*report);
  else if (args.format == "markdown") io.out += render_accept_markdown(*report);
  else io.out += render_accept_terminal(*report);

  if (args.out) {
    if (auto d = fs.make_dirs(*args.out); !d) return fail(io, d.error());
    const std::vector<std::pair<std::string, std::string>> written{
        {join_path(*args.out, "accept.json"), render_accept_json(*report)},
        {join_path(*args.out, "accept.md"), render_accept_markdown(*report)}};
    if (auto w = write_command_outputs(fs, io, written); !w) return fail(io, w.error());  // both or neither
  }
  return report->failed() ? ExitStatus::Regression : ExitStatus::Ok;
}

ExitStatus cmd_accept(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io) {
  for (std::size_t i = 2; i < args.size(); ++i)
    if (args[i] == "--help" || args[i] == "-h") {
      io.out += accept_usage_text();
      return ExitStatus::Ok;
    }
  auto a = parse_accept_args(args, 2);
  if (!a) return fail(io, a.error());
  if (auto c = check_accept_outputs(*a, fs, env); !c) return fail(io, c.error());
  if (a->results.empty()) {  // measure first, then judge what was measured
    auto m = measure_accept(*a, fs, env, io);
    if (!m) return fail(io, m.error());
    auto files = load_accept_results(fs, {m->dir});
    if (!files) return fail(io, files.error());
    for (const auto& n : m->notes) io.out += "note: " + n + "\n";
    AcceptArgs judged = *a;
    judged.out = m->dir;
    return judge_and_report(judged, *files, fs, io, m->failed_runs);
  }
  auto files = load_accept_results(fs, a->results);
  if (!files) return fail(io, files.error());
  if (a->devices) {
    std::vector<Results> kept;
    for (Results& r : *files) {
      const std::string index = r.context_value("gpucheck_device_index");
      if (std::any_of(a->devices->begin(), a->devices->end(), [&](int d) { return std::to_string(d) == index; }))
        kept.push_back(std::move(r));
    }
    if (kept.empty()) return fail(io, Error{"--devices", "no results of those devices under the --results paths"});
    *files = std::move(kept);
  }
  return judge_and_report(*a, *files, fs, io);
}

std::string accept_usage_text() {
  return R"(gpucheck accept: is this node healthy? (PCIe link and bandwidth, HBM and GEMM rates against
the SKU's datasheet, clocks, ECC, all GPUs alike, NCCL, burn)

usage:
  gpucheck accept [--devices 0,3] [--bin-dir DIR] [--burn SECONDS] [--timeout SECONDS] [--out DIR]
      runs the accept suites on this node's GPUs (bench_pcie, bench_memory, bench_matmul per GPU,
      one process each; bench_nccl over the node; --burn: bench_matmul's burn suite on every GPU
      at once), keeps their JSON under --out (default results/accept), then judges it
      --devices 0,3|all    the GPUs to measure (default all: every GPU NVML counts); a machine
                           without a GPU judges results measured elsewhere with --results
      --bin-dir DIR        the bench_* binaries (default: beside gpucheck)
      --burn SECONDS       sustained checked GEMM load on every GPU at once
      --timeout SECONDS    per binary (default 600)
  gpucheck accept --results PATH [--results PATH ...] [options]
      judges results files already on disk, on any machine
      PATH                 a results .json file or a folder, walked recursively (accept.json skipped)
      --devices LIST       only these device indices (gpucheck_device_index), e.g. 0,3
      --specs FILE         datasheet figures (default baselines/specs.json, else share/gpucheck/specs.json
                           beside the binary's folder; the one used is printed)
      --config FILE        acceptance floors (default baselines/accept.json)
      --out DIR            also write DIR/accept.json and DIR/accept.md
      --format F           stdout as terminal (default), markdown or json
exit status: 0 every check passed, 1 a check failed, 2 bad input or no GPU (one line on stderr)
)";
}

}  // namespace gpucheck::compare
