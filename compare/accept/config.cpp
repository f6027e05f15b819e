// The acceptance config (baselines/accept.json): floors as fractions, with per-SKU overrides,
// ECC expectations and NCCL floors. Strict, because a misspelt key that silently changes
// nothing would let a sick box pass.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <nlohmann/json.hpp>

#include "accept/config.hpp"
#include "gpucheck/core/specs.hpp"
#include "gpucheck/core/json_load.hpp"
#include "gpucheck/core/suggest.hpp"

namespace gpucheck::compare {
namespace {

using json = nlohmann::ordered_json;

bool is_comment(const std::string& key) { return !key.empty() && key[0] == '_'; }

// Thrown inside the parser only, turned into an Error at its boundary.
struct ConfigError {
  std::string message;
};

double fraction(const json& v, const std::string& where, bool below_one) {
  if (!v.is_number()) throw ConfigError{where + ": expected a number"};
  const double d = v.get<double>();
  const bool ok = std::isfinite(d) && d > 0 && (below_one ? d < 1 : d <= 1);
  if (!ok) throw ConfigError{where + ": " + v.dump() + " is outside " + (below_one ? "(0, 1)" : "(0, 1]")};
  return d;
}

void read_fraction_map(const json& v, const std::string& where, std::map<std::string, double>& into) {
  if (!v.is_object()) throw ConfigError{where + ": expected an object"};
  for (const auto& [k, f] : v.items()) {
    if (is_comment(k)) continue;
    if (into.count(k) == 0) {
      std::string known;
      for (const auto& [name, unused] : into) known += (known.empty() ? "" : ", ") + name;
      // The whole list, not the nearest: fp4 is not a typo of fp8.
      throw ConfigError{where + "." + k + ": unknown key (known: " + known + ")"};
    }
    into[k] = fraction(f, where + "." + k, false);
  }
}

// Reads the limit keys of `obj` into `limits`; other keys are left to the caller.
bool read_limit(const std::string& key, const json& v, const std::string& where, AcceptLimits& limits) {
  if (key == "pcie_bandwidth_fraction") {
    limits.pcie_bandwidth_fraction = fraction(v, where, false);
  } else if (key == "memory_fraction") {
    read_fraction_map(v, where, limits.memory_fraction);
  } else if (key == "gemm_fraction") {
    read_fraction_map(v, where, limits.gemm_fraction);
  } else if (key == "alike_fraction") {
    limits.alike_fraction = fraction(v, where, true);
  } else {
    return false;
  }
  return true;
}

std::map<int, double> read_nccl_floors(const json& v, const std::string& where) {
  if (!v.is_object()) throw ConfigError{where + ": expected an object of GPU count -> GB/s"};
  std::map<int, double> out;
  for (const auto& [k, f] : v.items()) {
    if (is_comment(k)) continue;
    int n = 0;
    const auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), n);
    if (k.empty() || ec != std::errc() || end != k.data() + k.size() || n < 1)
      throw ConfigError{where + ": key \"" + k + "\" is not a GPU count"};
    if (!f.is_number() || !std::isfinite(f.get<double>()) || f.get<double>() <= 0)
      throw ConfigError{where + "." + k + ": expected a positive number of GB/s"};
    out[n] = f.get<double>();
  }
  return out;
}

// The keys of a level, for " (did you mean X?)" after a misspelt one ("defualts").
const std::vector<std::string>& limit_keys() {
  static const std::vector<std::string> k{"pcie_bandwidth_fraction", "memory_fraction", "gemm_fraction", "alike_fraction"};
  return k;
}

AcceptConfig parse_document(const json& doc) {
  if (!doc.is_object()) throw ConfigError{"expected an object with \"defaults\" and \"skus\""};
  AcceptConfig c;
  if (const auto s = doc.find("schema"); s != doc.end() && (!s->is_number_unsigned() || s->get<std::uint64_t>() != 1))
    throw ConfigError{"schema: expected 1"};
  if (const auto d = doc.find("defaults"); d != doc.end()) {
    if (!d->is_object()) throw ConfigError{"defaults: expected an object"};
    for (const auto& [k, v] : d->items()) {
      if (is_comment(k)) continue;
      if (!read_limit(k, v, "defaults." + k, c.defaults))
        throw ConfigError{"defaults." + k + ": unknown key" + did_you_mean(k, limit_keys())};
    }
  }
  if (const auto s = doc.find("skus"); s != doc.end()) {
    if (!s->is_object()) throw ConfigError{"skus: expected an object keyed by specs.json id"};
    for (const auto& [id, rules] : s->items()) {
      if (is_comment(id)) continue;
      const std::string where = "skus." + id;
      if (!rules.is_object()) throw ConfigError{where + ": expected an object"};
      AcceptSkuRules r;
      r.limits = c.defaults;
      for (const auto& [k, v] : rules.items()) {
        if (is_comment(k)) continue;
        if (read_limit(k, v, where + "." + k, r.limits)) continue;
        if (k == "ecc") {
          if (!v.is_boolean()) throw ConfigError{where + ".ecc: expected true or false"};
          r.ecc = v.get<bool>();
        } else if (k == "nccl_allreduce_busbw_GBps") {
          r.nccl_allreduce_busbw_GBps = read_nccl_floors(v, where + "." + k);
        } else {
          std::vector<std::string> known = limit_keys();
          known.insert(known.end(), {"ecc", "nccl_allreduce_busbw_GBps"});
          throw ConfigError{where + "." + k + ": unknown key" + did_you_mean(k, known)};
        }
      }
      c.skus[id] = std::move(r);
    }
  }
  for (const auto& [k, v] : doc.items())
    if (!is_comment(k) && k != "schema" && k != "defaults" && k != "skus") {
      const std::string hint = did_you_mean(k, {"schema", "defaults", "skus"});
      throw ConfigError{k + ": unknown key" + (hint.empty() ? std::string(" (schema, defaults, skus)") : hint)};
    }
  return c;
}

}  // namespace

const AcceptLimits& AcceptConfig::limits_for(const std::string& sku_id) const {
  const auto it = skus.find(sku_id);
  return it == skus.end() ? defaults : it->second.limits;
}

std::optional<bool> AcceptConfig::ecc_for(const std::string& sku_id) const {
  const auto it = skus.find(sku_id);
  return it == skus.end() ? std::nullopt : it->second.ecc;
}

std::optional<double> AcceptConfig::nccl_floor(const std::string& sku_id, int gpus) const {
  const auto it = skus.find(sku_id);
  if (it == skus.end()) return std::nullopt;
  const auto f = it->second.nccl_allreduce_busbw_GBps.find(gpus);
  if (f == it->second.nccl_allreduce_busbw_GBps.end()) return std::nullopt;
  return f->second;
}

Status check_config_skus(const AcceptConfig& config, const SpecDb& specs) {
  if (specs.skus().empty()) return Done{};  // no specs to hold the ids to (accept says so itself)
  std::vector<std::string> ids;
  for (const SkuSpec& s : specs.skus()) ids.push_back(s.id);
  for (const auto& [id, unused] : config.skus) {
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) continue;
    std::string known;
    for (const auto& k : ids) known += (known.empty() ? "" : ", ") + k;
    return Error{config.source, "skus." + id + ": unknown SKU id" + did_you_mean(id, ids) + " (specs.json's ids: " +
                                    (known.empty() ? std::string("none") : known) + ")"};
  }
  return Done{};
}

Expected<AcceptConfig> parse_accept_config(std::string_view text, const std::string& source) {
  json doc;
  std::string err;
  if (!load_json(text, source, &doc, &err)) return Error{source, err.substr(source.size() + 2)};
  try {
    AcceptConfig c = parse_document(doc);
    c.source = source;
    return c;
  } catch (const ConfigError& e) {
    return Error{source, e.message};
  } catch (const json::exception& e) {
    return Error{source, std::string("unexpected content: ") + e.what()};
  }
}

}  // namespace gpucheck::compare
