// Threshold file and glob matching. Globs rather than regexes: the names are paths, and a
// reviewer reads `launch/*` at a glance.
#include "gpucheck/compare/thresholds.hpp"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gpucheck/compare/results.hpp"

namespace gpucheck::compare {

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative matcher with one backtrack point: linear-ish, no recursion on hostile input.
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

double Thresholds::pct_for(std::string_view name) const {
  for (const auto& o : overrides)
    if (glob_match(o.glob, name)) return o.pct;
  return default_pct;
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

Expected<Thresholds> parse_thresholds(std::string_view text, const std::string& source) {
  using json = nlohmann::json;
  const Sanitized s = sanitize_nonfinite(text);
  if (s.max_depth > kMaxJsonDepth) return Error{source, "JSON nested too deeply"};
  const std::string_view clean = s.replaced ? std::string_view(s.text) : text;
  json doc = json::parse(clean.begin(), clean.end(), nullptr, false);
  if (doc.is_discarded()) return Error{source, "not valid JSON"};
  if (!doc.is_object()) return Error{source, "expected an object with \"overrides\""};
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
  const auto ov = doc.find("overrides");
  if (ov == doc.end()) return t;
  if (!ov->is_array()) return Error{source, "\"overrides\" must be a list"};
  for (std::size_t i = 0; i < ov->size(); ++i) {
    const json& o = (*ov)[i];
    const std::string ref = "override #" + std::to_string(i + 1);
    if (!o.is_object()) return Error{source, ref + " must be an object"};
    const auto g = o.find("glob");
    if (g == o.end() || !g->is_string() || g->get_ref<const std::string&>().empty())
      return Error{source, ref + " needs a \"glob\" string"};
    const auto pv = o.find("pct");
    if (pv == o.end()) return Error{source, ref + " needs \"pct\""};
    auto p = pct_of(*pv, ref);
    if (!p) return p.error();
    ThresholdOverride to{g->get<std::string>(), *p, {}};
    if (const auto w = o.find("why"); w != o.end() && w->is_string()) to.why = w->get<std::string>();
    t.overrides.push_back(std::move(to));
  }
  return t;
}

}  // namespace gpucheck::compare
