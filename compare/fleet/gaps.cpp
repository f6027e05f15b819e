// The fleet's minimum gaps (baselines/fleet_gaps.json), read strictly: a misspelt figure that
// silently falls back to nothing would let a slow GPU pass, and a gap under twice the measured
// healthy spread would drain healthy nodes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "accept/names.hpp"
#include "fleet/gaps.hpp"
#include "gpucheck/core/json_load.hpp"

namespace gpucheck::compare::fleet {
namespace {

using json = nlohmann::ordered_json;

struct GapError {
  std::string message;
};

double pct_field(const json& o, const std::string& key, const std::string& where) {
  const auto it = o.find(key);
  if (it == o.end()) throw GapError{where + "." + key + ": missing"};
  if (!it->is_number()) throw GapError{where + "." + key + ": expected a number, got " + json_type_name(*it)};
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0 || v >= 100) throw GapError{where + "." + key + ": " + it->dump() + " is outside [0, 100)"};
  return v / 100.0;
}

FigureGap read_gap(const json& o, const std::string& where) {
  if (!o.is_object()) throw GapError{where + ": expected an object"};
  for (const auto& [k, unused] : o.items())
    if (k != "min_gap_pct" && k != "healthy_spread_pct" && k != "basis" && !k.starts_with("_"))
      throw GapError{where + "." + k + ": unknown key (known: min_gap_pct, healthy_spread_pct, basis)"};
  FigureGap g;
  g.min_gap = pct_field(o, "min_gap_pct", where);
  g.healthy_spread = pct_field(o, "healthy_spread_pct", where);
  const auto b = o.find("basis");
  if (b == o.end() || !b->is_string() || b->get<std::string>().empty())
    throw GapError{where + ".basis: needs the measurement behind the spread (a string)"};
  g.basis = b->get<std::string>();
  if (g.min_gap < 0.01 - 1e-12) throw GapError{where + ".min_gap_pct: under 1%"};
  if (g.min_gap < 2 * g.healthy_spread - 1e-12)
    throw GapError{where + ".min_gap_pct: under twice its healthy_spread_pct (a healthy node would be named)"};
  return g;
}

}  // namespace

std::vector<std::string> figure_keys() {
  std::vector<std::string> keys;
  for (auto k : accept_names::kGemmKeys) keys.push_back("gemm/" + std::string(k));
  for (auto v : accept_names::kMemoryVariants) keys.push_back("memory/" + std::string(v));
  for (auto d : accept_names::kPcieDirections) keys.push_back("pcie/" + std::string(d));
  keys.emplace_back("burn");
  keys.emplace_back("nccl");
  return keys;
}

const FigureGap& FleetGaps::gap(const std::string& key) const {
  const auto it = figures.find(key);
  if (it == figures.end()) throw std::logic_error("fleet gaps: no figure " + key);
  return it->second;
}

Expected<FleetGaps> parse_fleet_gaps(std::string_view text, const std::string& source) {
  json doc;
  std::string err;
  if (!load_json(text, source, &doc, &err)) return Error{source, err.substr(std::min(err.size(), source.size() + 2))};
  try {
    if (!doc.is_object()) throw GapError{"expected an object"};
    FleetGaps g;
    g.source = source;
    for (const auto& [k, v] : doc.items()) {
      if (k.starts_with("_")) continue;
      if (k == "schema") {  // an unsigned integer, exactly 1: 4294967297 is not read as 1
        if (!v.is_number_unsigned() || v.get<std::uint64_t>() != 1) throw GapError{"schema: expected 1, got " + v.dump()};
      } else if (k == "k") {
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 1 || v.get<double>() > 20)
          throw GapError{"k: expected a number in [1, 20], got " + v.dump()};
        g.k = v.get<double>();
      } else if (k == "figures") {
        if (!v.is_object()) throw GapError{"figures: expected an object"};
        const auto keys = figure_keys();
        for (const auto& [fk, fv] : v.items()) {
          if (fk.starts_with("_")) continue;
          if (std::find(keys.begin(), keys.end(), fk) == keys.end()) {
            std::string known;
            for (const auto& n : keys) known += (known.empty() ? "" : ", ") + n;
            throw GapError{"figures." + fk + ": unknown figure (known: " + known + ")"};
          }
          g.figures[fk] = read_gap(fv, "figures." + fk);
        }
        for (const auto& fk : keys)
          if (!g.figures.count(fk)) throw GapError{"figures." + fk + ": missing (every figure needs its gap)"};
      } else {
        throw GapError{k + ": unknown key (known: k, figures)"};
      }
    }
    if (g.figures.empty()) throw GapError{"figures: missing"};
    return g;
  } catch (const GapError& e) {
    return Error{source, e.message};
  }
}

}  // namespace gpucheck::compare::fleet
