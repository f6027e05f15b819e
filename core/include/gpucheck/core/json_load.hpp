// The one way a JSON file is read, by the binaries (specs.json) and by the tool (results,
// baselines, thresholds, specs, the accept config): strict JSON, nested no deeper than a
// bound, and no key given twice in one object. nlohmann's parser keeps the last of two equal
// keys without a word, so `"pcie_bandwidth_fraction": 0.8, "pcie_bandwidth_fraction": 0.01`
// or a user counter named `real_time` after Google Benchmark's own would silently change a
// verdict; here it is an error naming the file, the object and the key.
// The text is read by our own scanner (strict RFC 8259, one pass, no allocation per token);
// a refusal is worded by nlohmann's parser, so its line reads as nlohmann's always did.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/core/json_text.hpp"

namespace gpucheck {

// A key's length and first and last 8 bytes in one word: equal keys have equal tags, so a scan
// compares a key's bytes only where the tags agree (a memcmp per member was a fifth of a load).
inline std::uint64_t json_key_tag(std::string_view k) {
  std::uint64_t first = 0, last = 0;
  const std::size_t n = k.size() < 8 ? k.size() : 8;
  std::memcpy(&first, k.data(), n);
  std::memcpy(&last, k.data() + (k.size() - n), n);
  return (first * 0x9E3779B97F4A7C15ULL) ^ (last + k.size() * 0x100000001B3ULL);
}

// One element of a streamed list, as it closes. An object arrives flat: its members in file
// order, each value a scalar or a nested document (no document per element, and the storage
// is reused by the next one). Keys are checked for duplicates as in any object.
struct JsonMember {
  std::string key;
  nlohmann::ordered_json value;
  std::uint64_t tag = 0;  // json_key_tag(key): the scans compare it before the key
};
struct JsonFlatObject {
  std::vector<JsonMember> members;  // the first `size` are this element's; the rest is reused storage
  std::size_t size = 0;
  // The value of `key`, or nullptr: a scan of the tags (an element's fields are few; a large one is walked once).
  [[nodiscard]] const nlohmann::ordered_json* find(std::string_view key) const;
  // The element as a document again (for a caller that keeps what was written).
  [[nodiscard]] nlohmann::ordered_json to_json() const;
};
// The elements of the top-level object's array `list_key` go to `element` as they close, in
// order, never into the document, which holds an empty array in their place: a file of a
// million entries is read in the memory of one. `element` gets the element's index and either
// the object (flat) or, for an element that is not an object, `object` null and the value.
struct JsonStream {
  std::string list_key;
  std::function<void(std::size_t index, const JsonFlatObject* object, const nlohmann::ordered_json& other)> element;
  std::size_t count = 0;  // set by the load: how many elements the list held
  bool seen = false;      // set by the load: the list was streamed
};

struct JsonLoadOptions {
  // Google Benchmark writes bare NaN / Infinity / -Infinity: they become these string
  // literals (the results reader's markers). Unset: they become "NaN", "Infinity",
  // "-Infinity", strings, which a field that wants a number then refuses by its type.
  const NonFiniteMarks* non_finite = nullptr;
  int max_depth = 64;
  JsonStream* stream = nullptr;
  // The caller owns the text and discards it after the load: the pages the scanner has passed
  // are handed back to the system as it goes (a 650 MB file is not held whole to the end), and
  // the bytes behind it read as zeros afterwards (a mapped file's, as the file again). Only with
  // `reread`, which puts the text in its argument again (false where it cannot): a refusal is
  // worded from the whole text.
  bool release_behind = false;
  std::function<bool(std::string*)> reread;
};

// False with "SOURCE: reason" in *err: "not valid JSON: ...", "JSON nested deeper than 64
// levels", "key \"k\" given twice in defaults (a parser keeps only the last)".
bool load_json(std::string_view text, const std::string& source, nlohmann::ordered_json* out, std::string* err,
               const JsonLoadOptions& options = {});

// The same load by nlohmann's parser (the bare tokens replaced by sanitize_non_finite first):
// the reference that load_json's scanner agrees with, and the wording of its refusals (nlohmann's
// messages with their line and column). For the differential tests and the fuzzer.
bool load_json_by_nlohmann(std::string_view text, const std::string& source, nlohmann::ordered_json* out,
                           std::string* err, const JsonLoadOptions& options = {});

// The JSON type of a value in words, for messages ("a string", "a number", "null", ...).
std::string json_type_name(const nlohmann::ordered_json& v);

}  // namespace gpucheck
