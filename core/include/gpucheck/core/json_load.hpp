// The one way a JSON file is read, by the binaries (specs.json) and by the tool (results,
// baselines, thresholds, specs, the accept config): strict JSON, nested no deeper than a
// bound, and no key given twice in one object. nlohmann's parser keeps the last of two equal
// keys without a word, so `"pcie_bandwidth_fraction": 0.8, "pcie_bandwidth_fraction": 0.01`
// or a user counter named `real_time` after Google Benchmark's own would silently change a
// verdict; here it is an error naming the file, the object and the key.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gpucheck/core/json_text.hpp"

namespace gpucheck {

struct JsonLoadOptions {
  // Google Benchmark writes bare NaN / Infinity / -Infinity: they become these string
  // literals (the results reader's markers). Unset: they become "NaN", "Infinity",
  // "-Infinity", strings, which a field that wants a number then refuses by its type.
  const NonFiniteMarks* non_finite = nullptr;
  int max_depth = 64;
};

// False with "SOURCE: reason" in *err: "not valid JSON: ...", "JSON nested deeper than 64
// levels", "key \"k\" given twice in defaults (a parser keeps only the last)".
bool load_json(std::string_view text, const std::string& source, nlohmann::ordered_json* out, std::string* err,
               const JsonLoadOptions& options = {});

// The JSON type of a value in words, for messages ("a string", "a number", "null", ...).
std::string json_type_name(const nlohmann::ordered_json& v);

}  // namespace gpucheck
