// Threshold file and glob matching. Globs rather than regexes: the names are paths, and a
// reviewer reads `launch/*` at a glance. The file is read strictly: a misspelt key or a key
// given twice would silently change what the gate checks, so both are errors (the second
// through core's one JSON loader, gpucheck/core/json_load.hpp).
#include "rules/thresholds.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gpucheck/core/json_load.hpp"
#include "gpucheck/core/suggest.hpp"
#include "results/results.hpp"

namespace gpucheck::compare {
namespace {

using json = nlohmann::ordered_json;

const std::vector<std::string>& top_keys() {
  static const std::vector<std::string> k{"default_pct", "overrides", "report_only", "host_bound", "comment"};
  return k;
}

std::optional<Error> unknown_key(const json& obj, const std::vector<std::string>& allowed, const std::string& source,
                                 const std::string& where) {
  for (const auto& [k, v] : obj.items()) {
    (void)v;
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      std::string known;
      for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
      const std::string hint = did_you_mean(k, allowed);
      return Error{source, where + "unknown key \"" + k + "\"" +
                               (hint.empty() ? " (known: " + known + ")" : hint)};
    }
  }
  return std::nullopt;
}

std::string list_ref(const std::string& list, std::size_t i, const std::string& glob) {
  std::string r = list + " #" + std::to_string(i + 1);
  if (!glob.empty()) r += " (\"" + glob + "\")";
  return r;
}

}  // namespace

bool glob_match(std::string_view p, std::string_view t) {
  // fnmatch(3) without FNM_PATHNAME: '*' crosses '/', as a case name's segments are one string.
  // Names and globs never hold a NUL, so the copies are the same strings.
  return ::fnmatch(std::string(p).c_str(), std::string(t).c_str(), 0) == 0;
}

Rule Thresholds::rule_for(std::string_view name) const {
  Rule r;
  r.pct = default_pct;
  for (const auto& o : report_only)
    if (glob_match(o.glob, name)) return Rule{RuleKind::ReportOnly, default_pct, o.cv_pct, o.glob, o.why, 0};
  for (const auto& o : host_bound)
    if (glob_match(o.glob, name)) return Rule{RuleKind::HostBound, o.pct, 0.0, o.glob, o.why, o.processes};
  for (const auto& o : overrides)
    if (glob_match(o.glob, name)) return Rule{RuleKind::Override, o.pct, 0.0, o.glob, o.why, o.processes};
  return r;
}

double Thresholds::pct_for(std::string_view name) const { return rule_for(name).pct; }

std::vector<std::string> Thresholds::unmatched_globs(const std::vector<std::string>& names) const {
  std::vector<std::string> out;
  auto check = [&](const std::string& list, const std::string& glob) {
    const bool any = std::any_of(names.begin(), names.end(), [&](const std::string& n) { return glob_match(glob, n); });
    if (!any) out.push_back(list + " glob \"" + glob + "\"");
  };
  for (const auto& o : report_only) check("report_only", o.glob);
  for (const auto& o : host_bound) check("host_bound", o.glob);
  for (const auto& o : overrides) check("overrides", o.glob);
  return out;
}

Expected<double> parse_percent(std::string_view text) {
  std::string_view s = text;
  if (s.ends_with('%')) s.remove_suffix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || v <= 0 || v >= 1000)
    return Error{"", "bad threshold \"" + std::string(text) + "\": expected a percentage such as 10%"};
  return v;
}

Expected<Thresholds> read_thresholds_json(std::string_view text, const std::string& source) {
  json doc;
  std::string err;
  JsonLoadOptions lo;
  lo.max_depth = kMaxJsonDepth;
  if (!load_json(text, source, &doc, &err, lo)) return Error{source, err.substr(source.size() + 2)};
  if (!doc.is_object()) return Error{source, "expected an object with \"overrides\", \"report_only\" or \"host_bound\""};
  if (auto e = unknown_key(doc, top_keys(), source, "")) return *e;
  Thresholds t;
  t.source = source;
  auto pct_of = [&](const json& v, const std::string& what) -> Expected<double> {
    if (v.is_number()) {
      const double d = v.get<double>();
      if (!std::isfinite(d) || d <= 0 || d >= 1000)
        return Error{source, what + ": expected a percentage in (0, 1000)"};
      return d;
    }
    if (v.is_string()) {
      auto p = parse_percent(v.get<std::string>());
      if (!p) return Error{source, what + ": " + p.error().message};
      return p;
    }
    return Error{source, what + " must be a number or a string such as \"15%\""};
  };
  if (const auto d = doc.find("default_pct"); d != doc.end()) {
    auto p = pct_of(*d, "default_pct");
    if (!p) return p.error();
    t.default_pct = *p;
  }
  if (const auto c = doc.find("comment"); c != doc.end() && !c->is_string())
    return Error{source, "\"comment\" must be a string"};

  // One loop over the three lists: each entry is {"glob", a number field, "why"}.
  struct ListSpec {
    const char* name;
    const char* number;  // "pct" or "cv_pct"
    bool why_required;
  };
  for (const ListSpec spec : {ListSpec{"report_only", "cv_pct", true}, ListSpec{"host_bound", "pct", true},
                              ListSpec{"overrides", "pct", false}}) {
    const auto list = doc.find(spec.name);
    if (list == doc.end()) continue;
    if (!list->is_array()) return Error{source, "\"" + std::string(spec.name) + "\" must be a list"};
    const bool host = std::string_view(spec.name) == "host_bound";
    std::vector<std::string> allowed{"glob", spec.number, "why"};
    if (std::string_view(spec.name) != "report_only") allowed.emplace_back("processes");
    for (std::size_t i = 0; i < list->size(); ++i) {
      const json& o = (*list)[i];
      std::string glob;
      if (o.is_object())
        if (const auto g = o.find("glob"); g != o.end() && g->is_string()) glob = g->get<std::string>();
      const std::string ref = list_ref(spec.name, i, glob);
      if (!o.is_object()) return Error{source, ref + " must be an object"};
      if (auto e = unknown_key(o, allowed, source, ref + ": ")) return *e;
      if (glob.empty()) return Error{source, ref + " needs a \"glob\" string"};
      if (glob.find('\0') != std::string::npos)
        return Error{source, ref + ": the glob holds a NUL (\\u0000) at byte " + std::to_string(glob.find('\0')) +
                                 ": a glob is taken whole, never cut"};
      if (glob.find_first_not_of(" \t\r\n\v\f") == std::string::npos)
        return Error{source, ref + ": the glob is only whitespace"};
      const auto nv = o.find(spec.number);
      if (nv == o.end()) return Error{source, ref + " needs \"" + std::string(spec.number) + "\""};
      auto num = pct_of(*nv, ref + " " + spec.number);
      if (!num) return num.error();
      std::string why;
      if (const auto w = o.find("why"); w != o.end()) {
        if (!w->is_string()) return Error{source, ref + ": \"why\" must be a string"};
        why = w->get<std::string>();
      }
      if (spec.why_required && why.empty()) return Error{source, ref + " needs a \"why\" (what makes the case noisy or host-bound)"};
      int processes = 0;
      if (const auto pv = o.find("processes"); pv != o.end()) {
        // A whole number as JSON writes one: 10, not 10.0 or "10".
        if (!pv->is_number_integer() || pv->get<long long>() < kMinFreshProcesses ||
            pv->get<long long>() > kMaxFreshProcesses)
          return Error{source, ref + ": \"processes\" must be a whole number from " + std::to_string(kMinFreshProcesses) +
                                   " to " + std::to_string(kMaxFreshProcesses)};
        processes = static_cast<int>(pv->get<long long>());
      }
      const std::string sname = spec.name;
      if (sname == "report_only") {
        t.report_only.push_back({glob, *num, why});
      } else {
        if (host) t.host_bound.push_back({glob, *num, why, processes});
        else t.overrides.push_back({glob, *num, why, processes});
      }
    }
  }
  return t;
}

namespace {
// A percentage as the file gave it (the shortest text that reads back as the same number).
std::string shortest_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ec == std::errc() ? static_cast<std::size_t>(r.ptr - buf) : 0);
}
}  // namespace

std::optional<Error> check_gated_limits(const Thresholds& t, const std::string& source) {
  auto gated = [&](double pct, const std::string& what) -> std::optional<Error> {
    if (pct <= kMaxGatedPct) return std::nullopt;
    return Error{source, what + " is gated at " + shortest_text(pct) +
                             "%: no case is gated at a limit above 25%: move it to report_only (with its measured cv_pct)"};
  };
  if (auto e = gated(t.default_pct, "default_pct")) return e;
  for (std::size_t i = 0; i < t.host_bound.size(); ++i)
    if (auto e = gated(t.host_bound[i].pct, list_ref("host_bound", i, t.host_bound[i].glob))) return e;
  for (std::size_t i = 0; i < t.overrides.size(); ++i)
    if (auto e = gated(t.overrides[i].pct, list_ref("overrides", i, t.overrides[i].glob))) return e;
  return std::nullopt;
}

Expected<Thresholds> parse_thresholds(std::string_view text, const std::string& source) {
  auto t = read_thresholds_json(text, source);
  if (!t) return t;
  if (auto e = check_gated_limits(*t, source)) return *e;
  return t;
}

}  // namespace gpucheck::compare
