#include "history/gate_link.hpp"

#include <algorithm>

#include "history/baseline.hpp"
#include "history/store.hpp"
#include "results/baseline.hpp"

namespace gpucheck::compare::history {

Expected<std::optional<GateHistory>> open_gate_history(const std::optional<std::string>& file,
                                                       const std::optional<std::string>& against) {
  if (!file) {
    if (against) return Error{"--against-commit", "needs --history FILE (the runs of that commit)"};
    return std::optional<GateHistory>();
  }
  auto store = Store::open(*file, Store::Access::Create);
  if (!store) return store.error();
  GateHistory h{*file, against, std::nullopt};
  if (against) {
    auto c = store->resolve_commit(*against);
    if (c) h.commit = *c;
    else if (c.error().message.find(" names ") != std::string::npos) return c.error();  // ambiguous: say so
  }
  if (auto k = store->checkpoint(); !k) return k.error();
  return std::optional<GateHistory>(std::move(h));
}

Expected<std::optional<CommitBaseline>> against_commit(const GateHistory& h, const Results& current, const Thresholds& t) {
  if (!h.commit) return std::optional<CommitBaseline>();
  auto store = Store::open(h.path, Store::Access::Read);
  if (!store) return store.error();
  const std::string gpu = gpu_slug(current.context_value("gpu_name"));
  const auto host_bound = [&t](const std::string& name) { return t.rule_for(name).kind == RuleKind::HostBound; };
  auto b = commit_baseline(*store, *h.commit, gpu, current.context_value("host_cpu"), host_bound);
  if (!b) return b.error();
  if (!*b) return std::optional<CommitBaseline>();
  ReadOptions ro;
  ro.keep_raw = true;
  const std::string label = "history " + h.path + ", commit " + *h.commit + ": " + std::to_string((*b)->runs) + " run" +
                            ((*b)->runs == 1 ? "" : "s") + " on " + gpu + ", every repetition";
  auto r = parse_results((*b)->json, label, ro);
  if (!r) return r.error();
  return std::optional<CommitBaseline>(CommitBaseline{std::move(*r), label});
}

Expected<std::int64_t> add_gate_run(const GateHistory& h, const Results& current, const Comparison& judged,
                                    const std::string& source) {
  std::map<std::string, std::string> verdicts;
  for (const Row& r : judged.rows) verdicts[r.name] = std::string(verdict_name(r.verdict));
  Results named = current;
  named.source = source;
  StoredRun run = run_from_results(named, {}, verdicts, judged.metric);
  auto store = Store::open(h.path, Store::Access::Create);
  if (!store) return store.error();
  auto added = store->add({std::move(run)});
  if (!added) return added.error();
  if (auto k = store->checkpoint(); !k) return k.error();
  return added->front().id;
}

}  // namespace gpucheck::compare::history
