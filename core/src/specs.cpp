#include "gpucheck/core/specs.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "gpucheck/core/input.hpp"
#include "gpucheck/core/json_load.hpp"

namespace gpucheck {

std::optional<double> SkuSpec::peak(DType t) const {
  auto it = peak_tflops.find(std::string(peak_key(t)));
  if (it == peak_tflops.end() || !(it->second > 0)) return std::nullopt;
  return it->second;
}

namespace {
std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

double number_or(const nlohmann::ordered_json& j, const char* key, double dflt) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return dflt;
  if (!it->is_number()) throw std::runtime_error(std::string("'") + key + "' is not a number");
  return it->get<double>();
}
}  // namespace

bool SpecDb::parse(std::string_view text, const std::string& origin, SpecDb* out, std::string* err) {
  nlohmann::ordered_json j;
  if (!load_json(text, origin, &j, err)) return false;
  if (!j.is_object() || !j.contains("skus") || !j["skus"].is_array()) {
    *err = origin + ": expected an object with a 'skus' array";
    return false;
  }
  SpecDb db;
  std::size_t index = 0;
  for (const auto& s : j["skus"]) {
    const std::string where = origin + ": skus[" + std::to_string(index++) + "]";
    try {
      if (!s.is_object()) throw std::runtime_error("not an object");
      SkuSpec sku;
      sku.id = s.at("id").get<std::string>();
      sku.name = s.value("name", sku.id);
      for (const auto& m : s.at("match")) sku.match.push_back(lower(m.get<std::string>()));
      if (sku.match.empty()) throw std::runtime_error("'match' is empty");
      for (const auto& [k, v] : s.at("peak_tflops").items()) {
        if (!v.is_number() || v.get<double>() < 0)
          throw std::runtime_error("peak_tflops." + k + " is not a non-negative number");
        sku.peak_tflops[k] = v.get<double>();
      }
      sku.memory_GBps = number_or(s, "memory_GBps", 0);
      sku.memory_GB = number_or(s, "memory_GB", 0);
      sku.nvlink_GBps = number_or(s, "nvlink_GBps", 0);
      if (auto p = s.find("pcie"); p != s.end()) {
        sku.pcie.gen = p->at("gen").get<int>();
        sku.pcie.width = p->at("width").get<int>();
      }
      sku.source = s.value("source", "");
      db.skus_.push_back(std::move(sku));
    } catch (const std::exception& e) {
      *err = where + ": " + e.what();
      return false;
    }
  }
  *out = std::move(db);
  return true;
}

bool SpecDb::load(const std::string& path, SpecDb* out, std::string* err) {
  std::string text;
  if (!read_input_file(path, kMaxSpecsBytes, &text, err)) return false;
  return parse(text, path, out, err);
}

const SkuSpec* SpecDb::lookup(std::string_view device_name) const {
  const std::string name = lower(device_name);
  for (const auto& sku : skus_) {
    bool all = std::all_of(sku.match.begin(), sku.match.end(),
                           [&](const std::string& m) { return name.find(m) != std::string::npos; });
    if (all) return &sku;
  }
  return nullptr;
}

std::string gpu_slug(std::string_view device_name) {
  std::string out;
  bool dash = false;
  for (unsigned char c : device_name) {
    if (std::isalnum(c)) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += static_cast<char>(std::tolower(c));
    } else {
      dash = true;
    }
  }
  return out.empty() ? "unknown-gpu" : out;
}

}  // namespace gpucheck
