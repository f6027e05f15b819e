#include "history/baseline.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <vector>

namespace gpucheck::compare::history {
namespace {

struct Reps {
  std::string method;  // as the runs wrote it ("" before binaries wrote one)
  std::vector<double> time_ns;
  std::string rate;
  std::vector<double> rate_values;
};

// Every ok case of the runs, in the order first seen, with all their repetitions; `take` says
// whether a run's figure of a case counts (the gate: host-bound cases only from this host CPU).
using Take = std::function<bool(const StoredRun&, const std::string&)>;
// Only the newest run's way of measuring of each case is stacked: no stored baseline spans two
// methods (an older method's repetitions would be compared as if measured the new way).
std::vector<std::pair<std::string, Reps>> stacked(const std::vector<StoredRun>& runs, const Take& take) {
  std::map<std::string, std::string> newest_method;
  for (auto r = runs.rbegin(); r != runs.rend(); ++r)
    for (const StoredCase& c : r->cases)
      if (c.metric == "real_time" && c.state == "ok" && take(*r, c.name)) newest_method.emplace(c.name, method_key(c.method));
  std::vector<std::pair<std::string, Reps>> out;
  std::map<std::string, std::size_t> at;
  for (const StoredRun& r : runs) {
    std::map<std::string, const StoredCase*> rate_of;
    for (const StoredCase& c : r.cases)
      if (c.metric != "real_time" && c.state == "ok") rate_of[c.name] = &c;
    for (const StoredCase& c : r.cases) {
      if (c.metric != "real_time" || c.state != "ok" || c.samples.empty() || !take(r, c.name)) continue;
      if (method_key(c.method) != newest_method[c.name]) continue;
      auto it = at.find(c.name);
      if (it == at.end()) it = at.emplace(c.name, out.size()).first, out.push_back({c.name, {}});
      Reps& reps = out[it->second].second;
      if (!c.method.empty()) reps.method = c.method;
      reps.time_ns.insert(reps.time_ns.end(), c.samples.begin(), c.samples.end());
      const auto rate = rate_of.find(c.name);
      // A rate kept only where every run carries it, one value per repetition.
      if (rate != rate_of.end() && rate->second->samples.size() == c.samples.size() &&
          (reps.rate.empty() || reps.rate == rate->second->metric) &&
          reps.rate_values.size() + c.samples.size() == reps.time_ns.size()) {
        reps.rate = rate->second->metric;
        reps.rate_values.insert(reps.rate_values.end(), rate->second->samples.begin(), rate->second->samples.end());
      } else {
        reps.rate.clear();
        reps.rate_values.clear();
      }
    }
  }
  return out;
}

// The runs (oldest first) as one Google Benchmark file: the newest run's context, every date.
std::string gbench_json(const std::vector<StoredRun>& runs, const std::string& what, const Take& take) {
  nlohmann::ordered_json j;
  j["context"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : runs.back().context) j["context"][k] = v;
  std::string dates;
  for (const StoredRun& r : runs) dates += (dates.empty() ? "" : " | ") + r.info.date;
  j["context"]["date"] = dates;
  j["context"]["gpucheck_history_runs"] = std::to_string(runs.size()) + " runs of " + what + ", " +
                                          runs.front().info.commit + " to " + runs.back().info.commit;
  j["benchmarks"] = nlohmann::ordered_json::array();
  for (const auto& [name, reps] : stacked(runs, take)) {
    for (std::size_t i = 0; i < reps.time_ns.size(); ++i) {
      nlohmann::ordered_json e{{"name", name},
                               {"run_name", name},
                               {"run_type", "iteration"},
                               {"repetitions", reps.time_ns.size()},
                               {"repetition_index", i},
                               {"threads", 1},
                               {"iterations", 1},
                               {"real_time", reps.time_ns[i]},
                               {"cpu_time", reps.time_ns[i]},
                               {"time_unit", "ns"}};
      if (!reps.rate.empty()) e[reps.rate] = reps.rate_values[i];
      // The method goes back into the file as the counter the binaries write (a whole number).
      if (!reps.method.empty() && reps.method.find_first_not_of("0123456789") == std::string::npos && reps.method.size() < 10)
        e["method"] = std::stoll(reps.method);
      j["benchmarks"].push_back(std::move(e));
    }
  }
  return j.dump(2) + "\n";
}

// The runs with these ids (newest first, as Store::runs lists them), read oldest first.
Expected<std::vector<StoredRun>> read_oldest_first(Store& store, const std::vector<std::int64_t>& newest_first) {
  std::vector<StoredRun> runs;
  for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) {
    auto r = store.read_run(*it);
    if (!r) return r.error();
    runs.push_back(std::move(*r));
  }
  return runs;
}

}  // namespace

Expected<HistoryBaseline> baseline_from_history(Store& store, const FromHistory& o) {
  auto gpu = store.pick_gpu(o.gpu_slug);
  if (!gpu) return gpu.error();
  auto all = store.runs({*gpu, o.branch});
  if (!all) return all.error();
  std::vector<std::int64_t> picked;  // newest first
  for (const RunInfo& r : *all)
    if (r.suite == o.suite && picked.size() < o.last) picked.push_back(r.id);
  if (picked.size() < o.last)
    return Error{store.path(), "holds " + std::to_string(picked.size()) + " runs of suite " + o.suite + " on branch " +
                                   o.branch + " (" + *gpu + "), fewer than --last " + std::to_string(o.last)};
  auto read = read_oldest_first(store, picked);
  if (!read) return read.error();
  const std::vector<StoredRun>& runs = *read;
  return HistoryBaseline{gbench_json(runs, o.branch, [](const StoredRun&, const std::string&) { return true; }),
                         runs.size(), runs.front().info.commit, runs.back().info.commit};
}

}  // namespace gpucheck::compare::history

namespace gpucheck::compare::history {

Expected<std::optional<HistoryBaseline>> commit_baseline(Store& store, const std::string& commit, const std::string& gpu_slug,
                                                         const std::string& host_cpu,
                                                         const std::function<bool(const std::string&)>& host_bound) {
  auto all = store.runs({gpu_slug, std::nullopt});
  if (!all) return all.error();
  std::vector<std::int64_t> ids;  // newest first
  for (const RunInfo& r : *all)
    if (r.commit == commit) ids.push_back(r.id);
  if (ids.empty()) return std::optional<HistoryBaseline>();
  auto read = read_oldest_first(store, ids);
  if (!read) return read.error();
  const std::vector<StoredRun>& runs = *read;
  const Take take = [&](const StoredRun& r, const std::string& name) { return !host_bound(name) || r.info.host_cpu == host_cpu; };
  return std::optional<HistoryBaseline>(HistoryBaseline{gbench_json(runs, "commit " + commit, take), runs.size(), commit, commit});
}

}  // namespace gpucheck::compare::history
