// The fleet judge: each node through accept's judge (its own verdict, unchanged), then every
// GPU's figures against its peers of one model across the fleet. An outlier must be both far
// in robust terms (K MADs: the fleet's own spread) and far in absolute terms (the figure's
// minimum gap: the spread one healthy machine shows between runs), so neither a tight fleet
// nor a noisy figure drains a healthy node.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "accept/gpus.hpp"
#include "accept/names.hpp"
#include "base/format.hpp"
#include "fleet/fleet.hpp"
#include "fleet/parallel.hpp"
#include "fleet/peers.hpp"
#include "gpucheck/core/options.hpp"
#include "gpucheck/core/specs.hpp"

namespace gpucheck::compare::fleet {
namespace {

using accept_detail::GpuView;
using accept_detail::known;

constexpr int kMinPeers = 3;          // fewer: the figure is shown, not judged
constexpr double kMadToSigma = 1.4826;  // MAD of a normal sample -> its standard deviation

struct FigureDef {
  std::string key, benchmark, counter;
};

const std::vector<FigureDef>& gpu_figures() {
  static const std::vector<FigureDef> defs = [] {
    std::vector<FigureDef> d;
    for (auto k : accept_names::kGemmKeys) d.push_back({"gemm/" + std::string(k), accept_names::gemm(k), "TFLOPS"});
    for (auto v : accept_names::kMemoryVariants) d.push_back({"memory/" + std::string(v), accept_names::memory(v), "GBps"});
    for (auto p : accept_names::kPcieDirections) d.push_back({"pcie/" + std::string(p), accept_names::pcie(p), "GBps"});
    d.push_back({"burn", accept_names::burn(), "TFLOPS"});
    return d;
  }();
  return defs;
}

const char* const kVersionKeys[] = {"driver_version", "cuda_runtime", "cublas_version", "cudnn_version", "nccl_version",
                                    "gpucheck_commit"};

std::string unit_of(const std::string& key) {
  return key.starts_with("gemm/") || key == "burn" ? "TFLOP/s" : "GB/s";
}

std::string first_known(const std::vector<Results>& files, const std::string& key) {
  for (const Results& r : files) {
    const std::string v = accept_detail::split(r.context_value(key), " | ").front();
    if (known(v)) return v;
  }
  return "unknown";
}

std::optional<double> figure_of(const GpuView& g, const std::string& bench, const std::string& counter) {
  const Benchmark* b = g.find(bench);
  if (b == nullptr || b->state != RunState::Ok) return std::nullopt;
  const auto it = b->counters.find(counter);
  if (it == b->counters.end() || !std::isfinite(it->second) || it->second <= 0) return std::nullopt;
  return it->second;
}

// NCCL over the node: the all-reduce with the most GPUs, its busbw, and "<model>/g<N>".
std::optional<std::pair<int, double>> nccl_of(const std::vector<GpuView>& gpus) {
  const std::string prefix = accept_names::nccl_allreduce_prefix();
  std::optional<std::pair<int, double>> best;
  for (const GpuView& g : gpus)
    for (const auto& [name, b] : g.bench) {
      if (!name.starts_with(prefix) || b->state != RunState::Ok) continue;
      const auto n = accept_detail::to_int(name.substr(prefix.size()));
      const auto it = b->counters.find("busbw_GBps");
      if (!n || *n < 2 || it == b->counters.end() || !(it->second > 0)) continue;
      if (!best || *n > best->first) best = std::pair{static_cast<int>(*n), it->second};
    }
  return best;
}

std::optional<std::string> other_suite(const std::vector<Results>& files) {
  for (const Results& r : files) {
    const std::string s = r.context_value("gpucheck_suite");
    if (known(s) && s != to_string(Suite::accept) && s != to_string(Suite::burn))
      return "other suite: " + r.source + " is gpucheck_suite \"" + s + "\", not " + std::string(to_string(Suite::accept));
  }
  return std::nullopt;
}

// The cases accept's per-GPU checks read, which every GPU's files must hold: PCIe, HBM, GEMM
// (fp8 only where the SKU has the path or ran it, as check_gemm decides).
std::vector<std::string> required_cases(const GpuView& g, const AcceptConfig& config) {
  std::vector<std::string> out;
  for (auto p : accept_names::kPcieDirections) out.push_back(accept_names::pcie(p));
  const AcceptLimits& lim = config.limits_for(g.sku_id());
  for (const auto& [v, unused] : lim.memory_fraction) out.push_back(accept_names::memory(v));
  for (const auto& [k, unused] : lim.gemm_fraction) {
    const auto dt = accept_names::gemm_dtype(k);
    if (g.sku && !(dt && g.sku->peak(*dt))) continue;
    out.push_back(accept_names::gemm(k));
  }
  return out;
}

// What accept on the node recorded or expects that the files do not show, as failed checks:
// its own failed checks (a binary that crashed: its JSON removed, "did not run" recorded), a case
// a GPU must hold, a case or a GPU its accept.json read. --allow-missing is about node folders,
// not these.
std::vector<std::string> held_to_record(const NodeInput& in, const std::vector<GpuView>& gpus, const AcceptReport& report,
                                        const AcceptConfig& config) {
  std::vector<std::string> out;
  std::set<std::string> missing, present, uuids;
  for (const GpuView& g : gpus) {
    uuids.insert(g.info.uuid);
    for (const auto& [name, unused] : g.bench) present.insert(name);
    for (const std::string& name : required_cases(g, config))
      if (g.find(name) == nullptr && missing.insert(name).second)
        out.push_back("results missing: " + g.info.label + ": no " + name + " (accept's checks read it)");
  }
  if (!in.recorded) return out;
  for (const AcceptCheck& f : in.recorded->failures)
    if (std::none_of(report.checks.begin(), report.checks.end(), [&](const AcceptCheck& c) {
          return c.verdict == AcceptVerdict::Fail && c.gpu == f.gpu && c.check == f.check && c.item == f.item;
        }))
      out.push_back("accept.json: " + f.line());
  for (const std::string& b : in.recorded->benchmarks)
    if (!present.count(b) && missing.insert(b).second)
      out.push_back("results missing: no " + b + " (its accept.json read it)");
  for (const std::string& u : in.recorded->gpu_uuids)
    if (!uuids.count(u)) out.push_back("results missing: GPU " + u + " of its accept.json has no results");
  return out;
}

// One node through accept's judge and into GPUs with their raw figures.
void read_node(NodeInput& in, FleetNode& node, const SpecDb& specs, const AcceptConfig& config) {
  node.host = first_known(in.files, "host_name");
  if ((node.problem = other_suite(in.files))) return;
  auto report = judge(in.files, specs, config);
  if (!report) {
    node.problem = "half-written: " + report.error().str();
    return;
  }
  node.accept_failed = report->failed();
  for (const AcceptCheck& c : report->checks)
    if (c.verdict == AcceptVerdict::Fail) node.accept_failures.push_back(c.line());
  auto gpus = accept_detail::group_by_gpu(in.files, specs);
  if (!gpus) {
    node.problem = "half-written: " + gpus.error().str();
    return;
  }
  for (std::string& line : held_to_record(in, *gpus, *report, config)) {
    node.accept_failed = true;
    node.accept_failures.push_back(std::move(line));
  }
  for (const char* k : kVersionKeys) node.versions[k] = first_known(in.files, k);
  for (const GpuView& g : *gpus) {
    FleetGpu out{in.name, g.node, g.info.index, g.info.uuid, g.info.pci_bus_id, "unknown", g.sku_id(), {}};
    if (out.model == "unknown" && known(g.info.name)) out.model = g.info.name;
    if (const auto s = g.values("gpu_serial"); !s.empty()) out.serial = s.front();
    for (const FigureDef& d : gpu_figures())
      if (const auto v = figure_of(g, d.benchmark, d.counter)) out.figures.push_back(Figure{d.key, *v, {}, {}, 0, 0, 0, false});
    if (!out.figures.empty() || !g.bench.empty()) node.gpus.push_back(std::move(out));
  }
  if (const auto n = nccl_of(*gpus)) node.node_figures.push_back(Figure{"nccl", n->second, {}, {}, 0, 0, 0, false});
}

// Judges every figure of one peer group (one model, one figure key).
void judge_group(std::vector<Figure*>& group, const FigureGap& gap, double k) {
  if (static_cast<int>(group.size()) < kMinPeers + 1) {
    for (Figure* f : group) f->peers = static_cast<int>(group.size()) - 1;
    return;
  }
  std::vector<double> values;
  values.reserve(group.size());
  for (const Figure* f : group) values.push_back(f->value);
  const LeaveOneOut loo(std::move(values));
  for (Figure* f : group) {
    const PeerStats s = loo.without(f->value);
    f->peers = static_cast<int>(group.size()) - 1;
    f->peer_median = s.median;
    f->peer_mad = s.mad;
    f->deviation = s.median > 0 ? f->value / s.median - 1 : 0;
    const double sigma = kMadToSigma * s.mad;
    const double below = s.median - f->value;
    f->robust_z = sigma > 0 ? -below / sigma : (below > 0 ? -std::numeric_limits<double>::infinity() : 0);
    f->outlier = below > 0 && f->deviation < -gap.min_gap && below > k * sigma;
  }
}

std::string figure_text(const Figure& f) {
  std::string s = f.key + " " + format_double("%.4g", f.value) + " " + unit_of(f.key) + ", " +
                  format_double("%+.1f", 100 * f.deviation) + "% against its " + std::to_string(f.peers) +
                  " peers' median " + format_double("%.4g", f.peer_median.value_or(0));
  if (std::isfinite(f.robust_z)) s += " (" + format_double("%.1f", -f.robust_z) + " robust deviations below)";
  else s += " (the peers agree exactly)";
  return s;
}

std::string gpu_name(const FleetGpu& g) {
  std::string s = "GPU " + g.index;
  if (known(g.uuid)) s += " " + g.uuid;
  if (known(g.pci_bus_id)) s += " pci " + g.pci_bus_id;
  if (known(g.serial)) s += " serial " + g.serial;
  return s;
}

// Outlier lines of a node: a figure every GPU of the node is low on names the node once.
void name_outliers(FleetNode& n, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    std::vector<const Figure*> low, all;
    const FleetGpu* first_low = nullptr;
    for (const FleetGpu& g : n.gpus)
      for (const Figure& f : g.figures)
        if (f.key == key) {
          all.push_back(&f);
          if (f.outlier && low.empty()) first_low = &g;
          if (f.outlier) low.push_back(&f);
        }
    if (low.empty()) continue;
    if (all.size() >= 2 && low.size() == all.size()) {
      n.node_low = true;
      double worst = 0;
      for (const Figure* f : low) worst = std::min(worst, f->deviation);
      n.outlier_lines.push_back("node " + n.name + ": all " + std::to_string(all.size()) + " GPUs low on " + key +
                                " (down to " + format_double("%+.1f", 100 * worst) + "% against their peers); " +
                                figure_text(*low.front()) + " on GPU " + first_low->index);
      continue;
    }
    for (const FleetGpu& g : n.gpus)
      for (const Figure& f : g.figures)
        if (f.key == key && f.outlier) n.outlier_lines.push_back(n.name + " " + gpu_name(g) + ": " + figure_text(f));
  }
  for (const Figure& f : n.node_figures)
    if (f.outlier) n.outlier_lines.push_back("node " + n.name + ": " + figure_text(f));
}

// Versions: the majority per key over the judged nodes; a node that differs is a warning, and
// the difference is said beside its outliers. With no single majority (a tie at the top: three
// nodes on three commits), every value is listed in one warning and no node is called odd.
void compare_versions(FleetReport& rep) {
  for (const char* key : kVersionKeys) {
    std::map<std::string, std::vector<std::string>> by_value;
    for (const FleetNode& n : rep.nodes)
      if (!n.problem) by_value[n.versions.at(key)].push_back(n.name);
    if (by_value.size() < 2) continue;
    const auto major = std::max_element(by_value.begin(), by_value.end(),
                                        [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    const auto ties = std::count_if(by_value.begin(), by_value.end(),
                                    [&](const auto& v) { return v.second.size() == major->second.size(); });
    if (ties > 1) {
      std::string all;
      for (const auto& [value, names] : by_value)
        all += (all.empty() ? "" : "; ") + value + " on " + accept_detail::list_some(names, 4);
      rep.warnings.push_back(std::string(key) + " differs with no majority, " + std::to_string(by_value.size()) +
                             " values: " + all);
      for (FleetNode& n : rep.nodes)
        if (!n.problem) n.version_differences.push_back(std::string(key) + " " + n.versions.at(key) + " (fleet: no majority)");
      continue;
    }
    for (FleetNode& n : rep.nodes)
      if (!n.problem && n.versions.at(key) != major->first)
        n.version_differences.push_back(std::string(key) + " " + n.versions.at(key) + " (fleet: " + major->first + ")");
    for (const auto& [value, names] : by_value)
      if (value != major->first)
        rep.warnings.push_back(std::string(key) + " " + value + " on " + std::to_string(names.size()) + " node(s): " +
                               accept_detail::list_some(names, 8) + " (fleet majority: " + major->first + " on " +
                               std::to_string(major->second.size()) + ")");
  }
}

void judge_peers(FleetReport& rep, const FleetGaps& gaps, double k) {
  std::map<std::pair<std::string, std::string>, std::vector<Figure*>> groups;  // (model, key)
  for (FleetNode& n : rep.nodes) {
    if (n.problem) continue;
    for (FleetGpu& g : n.gpus)
      for (Figure& f : g.figures) groups[{g.model, f.key}].push_back(&f);
    const std::string model = n.gpus.empty() ? "unknown" : n.gpus.front().model;
    for (Figure& f : n.node_figures) groups[{model + "/" + std::to_string(n.gpus.size()) + " GPUs", f.key}].push_back(&f);
  }
  for (auto& [mk, group] : groups) {
    judge_group(group, gaps.gap(mk.second), k);
    std::vector<double> v;
    for (const Figure* f : group) v.push_back(f->value);
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    rep.fleet_median[mk.first][mk.second] = v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  }
}

// One GPU (its UUID) in two node folders: one node's results copied under another name, so
// the GPU would be its own peer. A fleet with duplicated node data is not a fleet: bad input.
Status one_gpu_twice(const std::vector<FleetNode>& judged, const std::vector<NodeInput>& in) {
  std::unordered_map<std::string, std::size_t> seen;  // UUID -> node
  for (std::size_t i = 0; i < judged.size(); ++i) {
    if (judged[i].problem) continue;
    for (const FleetGpu& g : judged[i].gpus) {
      if (!known(g.uuid)) continue;
      const auto [it, added] = seen.emplace(g.uuid, i);
      if (added || it->second == i) continue;
      auto folder = [&](std::size_t k) { return in[k].dir.empty() ? in[k].name : in[k].dir; };
      return Error{"fleet", "GPU " + g.uuid + " is in two node folders, " + folder(it->second) + " and " + folder(i) +
                                " (one node's results copied under another name?)"};
    }
  }
  return Done{};
}

}  // namespace

bool FleetGpu::outlier() const {
  return std::any_of(figures.begin(), figures.end(), [](const Figure& f) { return f.outlier; });
}

bool FleetNode::flagged() const {
  if (problem) return true;
  if (recheck_cleared) return false;
  return accept_failed || !outlier_lines.empty();
}

std::string FleetNode::reason() const {
  if (problem) return "not judged: " + *problem;
  std::string r;
  if (accept_failed && !accept_failures.empty()) {
    r = "accept FAIL: " + accept_failures.front();
    if (accept_failures.size() > 1) r += " (+" + std::to_string(accept_failures.size() - 1) + " more)";
  }
  if (!outlier_lines.empty()) {
    if (!r.empty()) r += "; ";
    r += "outlier: " + outlier_lines.front();
    if (outlier_lines.size() > 1) r += " (+" + std::to_string(outlier_lines.size() - 1) + " more)";
  }
  if (!version_differences.empty() && !outlier_lines.empty()) r += "; versions differ: " + version_differences.front();
  if (rechecked) r += "; flagged again by its recheck";
  return r;
}

int FleetReport::count_flagged() const {
  return static_cast<int>(std::count_if(nodes.begin(), nodes.end(), [](const FleetNode& n) { return !n.problem && n.flagged(); }));
}
int FleetReport::count_unjudged() const {
  return static_cast<int>(std::count_if(nodes.begin(), nodes.end(), [](const FleetNode& n) { return n.problem.has_value(); }));
}
bool FleetReport::failed() const { return count_flagged() > 0 || (!allow_missing && count_unjudged() > 0); }

Expected<FleetReport> judge_fleet(std::vector<NodeInput> nodes, const SpecDb& specs, const AcceptConfig& config,
                                  const FleetGaps& gaps, const FleetOptions& options) {
  FleetReport rep;
  rep.gaps_source = gaps.source;
  rep.config_source = config.source;
  rep.k = options.k > 0 ? options.k : gaps.k;
  rep.allow_missing = options.allow_missing;
  rep.figure_keys = figure_keys();
  for (const std::string& k : rep.figure_keys) rep.min_gap[k] = gaps.gap(k).min_gap;
  std::unordered_set<std::string> present;  // a set: --expect may name a million nodes
  for (const NodeInput& n : nodes) present.insert(n.name);
  for (const std::string& e : options.expect)
    if (present.insert(e).second) nodes.push_back(NodeInput{e, {}, "missing: no folder, expected by --expect"});
  if (nodes.empty()) return Error{"fleet", "no node folders to judge"};
  rep.nodes.resize(nodes.size());
  parallel_for(nodes.size(), [&](std::size_t i) {  // accept's judge is pure: one node per core
    FleetNode& n = rep.nodes[i];
    n.name = nodes[i].name;
    n.host = "unknown";
    n.problem = nodes[i].problem;
    if (!n.problem) read_node(nodes[i], n, specs, config);
  });
  if (auto d = one_gpu_twice(rep.nodes, nodes); !d) return d.error();
  if (std::all_of(rep.nodes.begin(), rep.nodes.end(), [](const FleetNode& n) { return n.problem.has_value(); }))
    return Error{"fleet", "none of the " + std::to_string(rep.nodes.size()) + " node folders holds acceptance results (" +
                              rep.nodes.front().name + ": " + *rep.nodes.front().problem + ")"};
  judge_peers(rep, gaps, rep.k);
  compare_versions(rep);
  for (FleetNode& n : rep.nodes) {
    name_outliers(n, rep.figure_keys);
    if (!n.outlier_lines.empty() && !n.version_differences.empty())
      for (auto& l : n.outlier_lines) l += " [versions differ: " + n.version_differences.front() + "]";
  }
  std::stable_sort(rep.nodes.begin(), rep.nodes.end(), [](const FleetNode& a, const FleetNode& b) {
    return std::make_tuple(!a.flagged(), a.name) < std::make_tuple(!b.flagged(), b.name);
  });
  return rep;
}

void apply_recheck(FleetReport& first, const FleetReport& recheck, const std::string& source) {
  first.recheck_source = source;
  for (FleetNode& n : first.nodes) {
    if (n.problem || !n.flagged()) continue;
    const auto it = std::find_if(recheck.nodes.begin(), recheck.nodes.end(), [&](const FleetNode& r) { return r.name == n.name; });
    if (it == recheck.nodes.end() || it->problem) continue;
    n.rechecked = true;
    n.recheck_cleared = !it->flagged();
  }
  std::stable_sort(first.nodes.begin(), first.nodes.end(), [](const FleetNode& a, const FleetNode& b) {
    return std::make_tuple(!a.flagged(), a.name) < std::make_tuple(!b.flagged(), b.name);
  });
}

}  // namespace gpucheck::compare::fleet
