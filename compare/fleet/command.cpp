// `gpucheck fleet`: node folders in, the fleet's verdict out (terminal, and with --out the six
// files of render.hpp). Everything the user typed wrong is one line and exit 2 before anything
// is written; a node's own trouble is that node's line in the verdict.
#include <algorithm>
#include <sstream>
#include <unordered_set>

#include "accept/config.hpp"
#include "base/args.hpp"
#include "base/output.hpp"
#include "fleet/command.hpp"
#include "fleet/hostlist.hpp"
#include "fleet/load.hpp"
#include "fleet/pairs.hpp"
#include "fleet/render.hpp"
#include "gpucheck/core/specs.hpp"

namespace gpucheck::compare {
namespace {

using cli::fail;
using namespace fleet;

constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;

struct FleetArgs {
  std::vector<std::string> paths;
  std::optional<std::string> out, specs, gaps, config, expect, recheck, reasons;
  bool allow_missing = false;
};

Expected<FleetArgs> parse_fleet_args(const std::vector<std::string>& args) {
  static const cli::OptionSet kOptions{{"--out", "--specs", "--gaps", "--config", "--expect", "--recheck", "--reasons"},
                                       {"--allow-missing"}};
  auto p = cli::parse_args(args, 2, kOptions, "fleet");
  if (!p) return p.error();
  for (const auto& [key, v] : p->values)
    if (v.empty()) return Error{key, "needs a value"};
  FleetArgs a;
  a.paths = p->positional;
  if (a.paths.empty()) return Error{"fleet", "needs node folders, or one folder of node folders"};
  a.out = cli::value(*p, "--out");
  a.specs = cli::value(*p, "--specs");
  a.gaps = cli::value(*p, "--gaps");
  a.config = cli::value(*p, "--config");
  a.expect = cli::value(*p, "--expect");
  a.recheck = cli::value(*p, "--recheck");
  a.reasons = cli::value(*p, "--reasons");
  a.allow_missing = cli::flag(*p, "--allow-missing");
  return a;
}

// --expect's value names a file when something is there (a folder, FIFO or device is refused
// as any input is), or when it looks like a path: a '/' or a file name's extension, which no
// host list has (nodes.txt missing is "no such file", not a node called nodes.txt).
bool looks_like_a_file(const std::string& v) {
  if (v.find('/') != std::string::npos) return true;
  for (const char* ext : {".txt", ".list", ".lst", ".hosts", ".csv", ".json"})
    if (v.ends_with(ext)) return true;
  return false;
}

// --expect: a file of host lists (one or more a line, # comments; one cap over the whole file),
// else a host list itself.
Expected<std::vector<std::string>> expected_nodes(const FileSystem& fs, const std::string& v) {
  if (fs.kind(v) == FileSystem::Kind::Missing) {
    if (looks_like_a_file(v)) return Error{v, "no such file (--expect takes a host list, or a file of them)"};
    return expand_hostlist(v);
  }
  auto text = fs.read(v, kMaxConfigBytes);
  if (!text) return text.error();
  std::vector<std::string> out;
  std::istringstream in(*text);
  std::string line, word;
  while (std::getline(in, line)) {
    if (const auto h = line.find('#'); h != std::string::npos) line.resize(h);
    std::istringstream words(line);
    while (words >> word)
      if (auto s = append_hostlist(word, out); !s) return Error{v, s.error().message};
  }
  if (out.empty()) return Error{v, "names no node"};
  return out;
}

struct Inputs {
  SpecDb specs;
  std::string specs_source = "none found";
  AcceptConfig config;
  FleetGaps gaps;
};

Expected<Inputs> read_inputs(FileSystem& fs, const FleetArgs& a) {
  Inputs in;
  in.config.source = "built-in defaults (no baselines/accept.json)";
  if (const auto path = cli::find_data_file(fs, a.specs, "specs.json")) {
    auto text = fs.read(*path, kMaxConfigBytes);
    if (!text) return text.error();
    std::string err;
    if (!SpecDb::parse(*text, *path, &in.specs, &err)) return Error{"", err};
    in.specs_source = *path;
  }
  if (const auto path = cli::find_data_file(fs, a.config, "accept.json")) {
    auto text = fs.read(*path, kMaxConfigBytes);
    if (!text) return text.error();
    auto c = parse_accept_config(*text, *path);
    if (!c) return c.error();
    in.config = std::move(*c);
  }
  if (auto k = check_config_skus(in.config, in.specs); !k) return k.error();
  const auto path = cli::find_data_file(fs, a.gaps, "fleet_gaps.json");
  if (!path) return Error{"--gaps", "no fleet_gaps.json (" + cli::data_file_places("fleet_gaps.json") + "): pass --gaps FILE"};
  auto text = fs.read(*path, kMaxConfigBytes);
  if (!text) return text.error();
  auto g = parse_fleet_gaps(*text, *path);
  if (!g) return g.error();
  in.gaps = std::move(*g);
  return in;
}

const char* const kOutputs[] = {"fleet.json", "fleet.md", "fleet.html", "drain.txt", "drain.sh", "resume.sh"};

Status check_fleet_outputs(const FileSystem& fs, const CliEnvironment& env, const FleetArgs& a) {
  if (!a.out) return Done{};
  std::vector<NamedPath> outputs, inputs;
  for (const char* f : kOutputs) outputs.push_back({"--out", join_path(*a.out, f)});
  // The node folders as the loader will read them: --out may sit in a PARENT as a folder of its
  // own right inside it (read again, a subfolder holding fleet.json is skipped), not in a node
  // folder, not as PARENT itself (its fleet.json would make PARENT read as a node), not deeper.
  auto folders = node_folders(fs, a.paths);
  if (!folders) return folders.error();
  for (const auto& p : folders->nodes) inputs.push_back({"NODE_DIR", p});
  for (const auto& p : folders->parents)
    if (!fs.same_file(parent_path(*a.out), p))
      if (auto c = check_outputs(fs, {{"--out", join_path(*a.out, "fleet.json")}}, {{"PARENT", p}}); !c) return c;
  // Every file read is an input, given or found by the default search.
  for (const auto& [opt, v] : {std::pair{"--specs", cli::find_data_file(fs, a.specs, "specs.json")},
                               std::pair{"--gaps", cli::find_data_file(fs, a.gaps, "fleet_gaps.json")},
                               std::pair{"--config", cli::find_data_file(fs, a.config, "accept.json")},
                               std::pair{"--recheck", a.recheck}, std::pair{"--reasons", a.reasons}})
    if (v) inputs.push_back({opt, *v});
  if (a.expect && fs.kind(*a.expect) != FileSystem::Kind::Missing) inputs.push_back({"--expect", *a.expect});
  return check_command_outputs(fs, env, outputs, inputs);
}

// --recheck DIR: the flagged nodes' second runs, judged against the first run's other nodes as
// peers (a recheck folder of two nodes has no peers of its own).
Status recheck(FileSystem& fs, const FleetArgs& a, const Inputs& in, const std::vector<NodeInput>& first, FleetReport& rep) {
  auto again = load_nodes(fs, {*a.recheck});
  if (!again) return again.error();
  std::vector<NodeInput> combined = std::move(*again);
  std::unordered_set<std::string> again_names;
  for (const NodeInput& r : combined) again_names.insert(r.name);
  for (const NodeInput& n : first)
    if (!again_names.count(n.name)) combined.push_back(n);
  auto second = judge_fleet(std::move(combined), in.specs, in.config, in.gaps, FleetOptions{true, {}, 0});
  if (!second) return Error{*a.recheck, second.error().message};
  apply_recheck(rep, *second, *a.recheck);
  return Done{};
}

Status write_outputs(FileSystem& fs, CliOutput& io, const FleetArgs& a, const FleetReport& rep) {
  std::string resume = "#!/bin/sh\n# Written by gpucheck fleet: no --reasons (sinfo -R output) given, so nothing to resume.\n";
  if (a.reasons) {
    auto text = fs.read(*a.reasons, kMaxConfigBytes);
    if (!text) return text.error();
    auto reasons = parse_sinfo_reasons(*text, *a.reasons);
    if (!reasons) return reasons.error();
    resume = render_resume_sh(rep, *reasons, *a.reasons);
  }
  if (!a.out) return Done{};
  if (auto d = fs.make_dirs(*a.out); !d) return d;
  const std::string texts[] = {render_fleet_json(rep), render_fleet_markdown(rep), render_fleet_html(rep),
                               render_drain_txt(rep), render_drain_sh(rep), resume};
  // All six or none: a full disk part way never leaves this run's fleet.json beside the last
  // run's drain list.
  std::vector<std::pair<std::string, std::string>> files;
  for (std::size_t i = 0; i < std::size(kOutputs); ++i) files.emplace_back(join_path(*a.out, kOutputs[i]), texts[i]);
  return write_command_outputs(fs, io, files);
}

ExitStatus cmd_pairs(const std::vector<std::string>& args, FileSystem& fs, CliOutput& io) {
  auto p = cli::parse_args(args, 3, {{"--results"}, {}}, "fleet pairs");
  if (!p) return fail(io, p.error());
  std::vector<std::string> nodes;
  for (const auto& list : p->positional)  // one cap over all of them
    if (auto s = append_hostlist(list, nodes); !s) return fail(io, Error{"fleet pairs", s.error().message});
  if (nodes.size() < 2) return fail(io, Error{"fleet pairs", "needs at least two nodes"});
  std::vector<std::string> sorted = nodes;
  std::sort(sorted.begin(), sorted.end());
  if (const auto d = std::adjacent_find(sorted.begin(), sorted.end()); d != sorted.end())
    return fail(io, Error{"fleet pairs", "node \"" + *d + "\" given twice"});
  const auto results_path = cli::value(*p, "--results");
  if (!results_path) {
    io.out += "# round 1: a two-node all-reduce on each pair; record \"A B pass|fail\" per pair for --results\n";
    for (const NodePair& pr : first_round(nodes)) io.out += pr.a + " " + pr.b + "\n";
    return ExitStatus::Ok;
  }
  auto text = fs.read(*results_path, kMaxConfigBytes);
  if (!text) return fail(io, text.error());
  auto results = parse_pair_results(*text, *results_path);
  if (!results) return fail(io, results.error());
  auto iso = isolate(nodes, *results);
  if (!iso) return fail(io, Error{*results_path, iso.error().message});
  for (const auto& n : iso->bad) io.out += "# at fault: " + n + "\n";
  for (const auto& n : iso->untested) io.out += "# untested: " + n + "\n";
  for (const NodePair& pr : iso->unexplained)
    io.out += "# failed between two nodes that passed elsewhere (the path between them, or a flaky run): " + pr.a + " " +
              pr.b + "\n";
  if (!iso->suspects.empty() && iso->good.empty()) io.out += "# no pair passed: no good node to isolate the suspects beside\n";
  if (!iso->next_round.empty()) io.out += "# next round: each suspect beside a node that passed\n";
  for (const NodePair& pr : iso->next_round) io.out += pr.a + " " + pr.b + "\n";
  const bool clean = iso->bad.empty() && iso->suspects.empty() && iso->untested.empty() && iso->unexplained.empty();
  return clean ? ExitStatus::Ok : ExitStatus::Regression;
}

}  // namespace

ExitStatus cmd_fleet(const std::vector<std::string>& args, FileSystem& fs, const CliEnvironment& env, CliOutput& io) {
  if (args.size() >= 3 && args[2] == "pairs") return cmd_pairs(args, fs, io);
  auto a = parse_fleet_args(args);
  if (!a) return fail(io, a.error());
  if (auto c = check_fleet_outputs(fs, env, *a); !c) return fail(io, c.error());
  auto in = read_inputs(fs, *a);
  if (!in) return fail(io, in.error());
  FleetOptions opt;
  opt.allow_missing = a->allow_missing;
  if (a->expect) {
    auto e = expected_nodes(fs, *a->expect);
    if (!e) return fail(io, e.error());
    opt.expect = std::move(*e);
  }
  auto nodes = load_nodes(fs, a->paths);
  if (!nodes) return fail(io, nodes.error());
  std::vector<NodeInput> first;
  if (a->recheck) first = *nodes;
  auto rep = judge_fleet(std::move(*nodes), in->specs, in->config, in->gaps, opt);
  if (!rep) return fail(io, rep.error());
  rep->specs_source = in->specs_source;
  if (a->recheck)
    if (auto r = recheck(fs, *a, *in, first, *rep); !r) return fail(io, r.error());
  std::vector<std::string> outs;
  if (a->out)
    for (const char* f : kOutputs) outs.push_back(join_path(*a->out, f));
  if (auto w = write_outputs(fs, io, *a, *rep); !w) return fail(io, w.error());
  print_beside(fs, io, outs, render_fleet_terminal(*rep));
  return rep->failed() ? ExitStatus::Regression : ExitStatus::Ok;
}

std::string fleet_usage_text() {
  return R"(gpucheck fleet: many nodes' acceptance folders judged together; every GPU against its peers

usage:
  gpucheck fleet [options] NODE_DIR... | PARENT
      NODE_DIR             what `gpucheck accept --out DIR` wrote on one node; the node is the
                           folder's name. PARENT: a folder whose subfolders are the nodes
                           (recheck/ and a fleet's own --out skipped)
      --out DIR            write fleet.json, fleet.md, fleet.html, drain.txt, drain.sh, resume.sh
      --expect NODES       the nodes that should be there: a Slurm host list (node[001-064]) or a
                           file of them (what is on disk, or holds a '/' or ends in .txt, .list,
                           .lst, .hosts, .csv, .json); one with no folder is named missing
      --allow-missing      missing, empty, half-written or other-suite folders do not fail the fleet
                           (a judged node that lacks results its accept.json read still fails)
      --recheck DIR        second runs of flagged nodes (DIR/NODE): a node is drained only if both
                           runs flag it
      --reasons FILE       `sinfo -R` output: resume.sh resumes nodes gpucheck drained that now pass
      --gaps FILE          the per-figure minimum gaps (default baselines/fleet_gaps.json)
      --specs FILE         datasheet figures (default baselines/specs.json)
      --config FILE        acceptance floors (default baselines/accept.json)
  gpucheck fleet pairs [--results FILE] NODES...
      NCCL across nodes, two at a time: the first round's pairs, or with --results (lines
      "A B pass|fail") the nodes at fault and the next round pairing each suspect with a good node
exit status: 0 every node passes, 1 a node failed, holds an outlier or is missing, 2 bad input
)";
}

}  // namespace gpucheck::compare
