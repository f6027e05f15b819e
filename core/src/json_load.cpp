#include "gpucheck/core/json_load.hpp"

#include <algorithm>
#include <vector>

namespace gpucheck {
namespace {

using json = nlohmann::ordered_json;

// Tracks the open objects and arrays while the parser reads, to see every key of an object
// and to say where a duplicate sits ("benchmarks[3]", "defaults").
class DuplicateKeys {
 public:
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: push(false); break;
      case json::parse_event_t::array_start: push(true); break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (open_ > 0) --open_;
        next_element();
        break;
      case json::parse_event_t::key: {
        if (open_ == 0 || !parsed.is_string()) break;
        Frame& f = frames_[open_ - 1];
        const auto& k = parsed.get_ref<const std::string&>();
        if (duplicate_.empty() && std::find(f.keys.begin(), f.keys.end(), k) != f.keys.end()) {
          duplicate_ = k;
          where_ = path();
        }
        f.keys.push_back(k);
        f.key = k;
        break;
      }
      case json::parse_event_t::value: next_element(); break;
    }
    return true;
  }
  const std::string& duplicate() const { return duplicate_; }
  const std::string& where() const { return where_; }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;
    std::string key;
    std::vector<std::string> keys;
  };
  void push(bool array) {
    if (open_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[open_++];
    f.array = array;
    f.index = 0;
    f.key.clear();
    f.keys.clear();
  }
  void next_element() {
    if (open_ > 0 && frames_[open_ - 1].array) ++frames_[open_ - 1].index;
  }
  // The object now open, as a path from the top: "defaults", "benchmarks[3]", "the top level".
  std::string path() const {
    std::string p;
    for (std::size_t i = 0; i + 1 < open_; ++i) {
      const Frame& f = frames_[i];
      // Appended piece by piece: g++ 12 warns (-Wrestrict, a false positive) on "." + string.
      if (f.array) {
        p.append(1, '[').append(std::to_string(f.index)).append(1, ']');
      } else {
        if (!p.empty()) p.append(1, '.');
        p.append(f.key);
      }
    }
    return p.empty() ? "the top level" : p;
  }
  std::vector<Frame> frames_;
  std::size_t open_ = 0;
  std::string duplicate_, where_;
};

constexpr NonFiniteMarks kNamed{"\"NaN\"", "\"Infinity\"", "\"-Infinity\""};

// nlohmann's message without its prefix and without the bytes it last read (noise at best,
// invalid UTF-8 at worst), printable and bounded.
std::string parse_message(std::string what) {
  if (what.starts_with("[json.exception.")) {
    if (const std::size_t close = what.find("] "); close != std::string::npos) what = what.substr(close + 2);
  }
  if (const std::size_t lr = what.find("; last read: "); lr != std::string::npos) {
    const std::size_t ex = what.rfind("; expected ");
    what = what.substr(0, lr) + (ex != std::string::npos && ex > lr ? what.substr(ex) : "");
  }
  std::string out;
  for (const char c : what) {
    if (out.size() >= 200) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  return out;
}

}  // namespace

bool load_json(std::string_view text, const std::string& source, json* out, std::string* err,
               const JsonLoadOptions& options) {
  const NonFiniteSanitized s = sanitize_non_finite(text, options.non_finite ? *options.non_finite : kNamed);
  if (s.max_depth > options.max_depth) {
    *err = source + ": JSON nested deeper than " + std::to_string(options.max_depth) + " levels";
    return false;
  }
  const std::string_view clean = s.replaced ? std::string_view(s.text) : text;
  DuplicateKeys dup;
  try {
    *out = json::parse(clean.begin(), clean.end(), std::ref(dup), true);
  } catch (const json::exception& e) {
    *err = source + ": not valid JSON: " + parse_message(e.what());
    return false;
  }
  if (!dup.duplicate().empty()) {
    *err = source + ": key \"" + parse_message(dup.duplicate()) + "\" given twice in " + dup.where() +
           " (a parser keeps only the last: which one was meant?)";
    return false;
  }
  return true;
}

std::string json_type_name(const json& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "a number";
}

}  // namespace gpucheck
