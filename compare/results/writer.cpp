// Results written or recombined: folders merged into one file's shape, a confirmation's entries
// put in place of the first pass's, and Google Benchmark's JSON again from what was read raw.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "results/json_text.hpp"
#include "results/results.hpp"

namespace gpucheck::compare {

Expected<Results> merge_results(std::vector<Results> parts, const std::string& source) {
  if (parts.empty()) return Error{source, "no results files"};
  if (parts.size() == 1) {
    parts.front().source = source;
    return std::move(parts.front());
  }
  Results out;
  out.source = source;
  std::unordered_map<std::string, std::string> seen;  // name -> file
  std::map<std::string, std::vector<std::string>> values;
  for (Results& p : parts) {
    for (auto& [k, v] : p.context) {
      auto& vs = values[k];
      if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
    }
    for (auto& member : p.raw_context) {
      const std::string& key = member.first;
      const bool known = std::any_of(out.raw_context.begin(), out.raw_context.end(),
                                     [&key](const auto& kv) { return kv.first == key; });
      if (!known) out.raw_context.push_back(std::move(member));
    }
    for (Benchmark& b : p.benchmarks) {
      auto [it, fresh] = seen.emplace(b.name, b.source);
      if (!fresh)
        return Error{source, "duplicate benchmark \"" + printable(b.name) + "\" in " + b.source + " and " + it->second};
      out.benchmarks.push_back(std::move(b));
    }
    for (std::string& e : p.raw_entries) out.raw_entries.push_back(std::move(e));
    for (std::string& k : p.raw_keys) out.raw_keys.push_back(std::move(k));
  }
  for (const auto& [k, vs] : values) {
    std::string joined;
    for (const auto& v : vs) joined += (joined.empty() ? "" : " | ") + v;
    out.context[k] = joined;
    if (vs.size() > 1) {
      for (auto& kv : out.raw_context)
        if (kv.first == k) kv.second = quote_json(joined);
    }
  }
  out.reindex();
  return out;
}

Results keep_matching(const Results& in, const Regex& filter) {
  Results out;
  out.source = in.source;
  out.context = in.context;
  for (const Benchmark& b : in.benchmarks)
    if (filter.search(b.name) || filter.search(b.name + "/manual_time")) out.benchmarks.push_back(b);
  out.reindex();
  return out;
}

Results replace_benchmarks(const Results& first, const Results& rerun, const std::vector<std::string>& names) {
  std::unordered_set<std::string> replaced;
  for (const auto& n : names)
    if (rerun.find(n) != nullptr && first.find(n) != nullptr) replaced.insert(n);
  Results out;
  out.source = first.source;
  out.context = first.context;
  out.raw_context = first.raw_context;
  out.benchmarks.reserve(first.benchmarks.size());
  for (const Benchmark& b : first.benchmarks)
    out.benchmarks.push_back(replaced.count(b.name) != 0 ? *rerun.find(b.name) : b);
  std::unordered_set<std::string> emitted;
  for (std::size_t i = 0; i < first.raw_entries.size() && i < first.raw_keys.size(); ++i) {
    const std::string& key = first.raw_keys[i];
    if (replaced.count(key) == 0) {
      out.raw_entries.push_back(first.raw_entries[i]);
      out.raw_keys.push_back(key);
      continue;
    }
    if (!emitted.insert(key).second) continue;
    for (std::size_t j = 0; j < rerun.raw_entries.size() && j < rerun.raw_keys.size(); ++j) {
      if (rerun.raw_keys[j] != key) continue;
      out.raw_entries.push_back(rerun.raw_entries[j]);
      out.raw_keys.push_back(key);
    }
  }
  out.reindex();
  return out;
}

std::string to_gbench_json(const Results& r) {
  std::string out = "{\n  \"context\": {";
  for (std::size_t i = 0; i < r.raw_context.size(); ++i)
    out += (i ? ",\n    " : "\n    ") + quote_json(r.raw_context[i].first) + ": " + r.raw_context[i].second;
  out += r.raw_context.empty() ? "},\n" : "\n  },\n";
  out += "  \"benchmarks\": [";
  for (std::size_t i = 0; i < r.raw_entries.size(); ++i) out += (i ? ",\n    " : "\n    ") + r.raw_entries[i];
  out += r.raw_entries.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

Expected<Results> stack_repetitions(const std::vector<Results>& runs, const std::string& source) {
  if (runs.empty()) return Error{source, "no runs to stack"};
  using json = nlohmann::ordered_json;
  // Case keys in first-seen order, each with its entries from every run, in run order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<json>> entries;
  for (const Results& r : runs) {
    for (std::size_t i = 0; i < r.raw_entries.size() && i < r.raw_keys.size(); ++i) {
      json e = json::parse(r.raw_entries[i], nullptr, false);
      if (e.is_discarded() || !e.is_object()) return Error{r.source, "entry does not read back"};
      if (e.value("run_type", std::string("iteration")) == "aggregate") continue;  // none with one repetition
      auto [it, fresh] = entries.try_emplace(r.raw_keys[i]);
      if (fresh) order.push_back(r.raw_keys[i]);
      it->second.push_back(std::move(e));
    }
  }
  std::string text = "{\n  \"context\": {";
  const Results& first = runs.front();
  for (std::size_t i = 0; i < first.raw_context.size(); ++i)
    text += (i ? ",\n    " : "\n    ") + quote_json(first.raw_context[i].first) + ": " + first.raw_context[i].second;
  text += first.raw_context.empty() ? "},\n  \"benchmarks\": [" : "\n  },\n  \"benchmarks\": [";
  bool any = false;
  for (const std::string& key : order) {
    auto& es = entries[key];
    for (std::size_t i = 0; i < es.size(); ++i) {
      es[i]["repetitions"] = es.size();
      es[i]["repetition_index"] = i;
      text += (any ? ",\n    " : "\n    ") + es[i].dump();
      any = true;
    }
  }
  text += any ? "\n  ]\n}\n" : "]\n}\n";
  ReadOptions keep;
  keep.keep_raw = true;
  return parse_results(text, source, keep);
}

}  // namespace gpucheck::compare
