#include "gpucheck/core/json_load.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "gpucheck/core/stop.hpp"
#include "json_scan.hpp"

namespace gpucheck {
namespace {

using json = nlohmann::ordered_json;

// The keys of a wide streamed element, for the duplicate check: open addressing over the
// members' indices with each key's hash beside it (a node-based set of a million keys was a
// third of the load of one wide entry: an allocation and a cache miss per key).
class KeyIndex {
 public:
  void clear() {
    slots_.clear();
    used_ = 0;
  }
  [[nodiscard]] bool empty() const { return used_ == 0; }
  // Adds members[i]'s key; false when an earlier member has the same one.
  bool insert(const std::vector<JsonMember>& members, std::size_t i) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    const auto hash = static_cast<std::uint32_t>(std::hash<std::string>()(members[i].key));
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
      Slot& s = slots_[at];
      if (s.index == 0) {
        s = Slot{static_cast<std::uint32_t>(i + 1), hash};
        ++used_;
        return true;
      }
      if (s.hash == hash && members[s.index - 1].key == members[i].key) return false;
    }
  }

 private:
  struct Slot {
    std::uint32_t index = 0;  // the member's index + 1; 0 is empty
    std::uint32_t hash = 0;
  };
  void grow() {
    std::vector<Slot> old(std::max<std::size_t>(64, slots_.size() * 2));
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.index == 0) continue;
      std::size_t at = s.hash & mask;
      while (slots_[at].index != 0) at = (at + 1) & mask;
      slots_[at] = s;
    }
  }
  std::vector<Slot> slots_;
  std::size_t used_ = 0;
};

// Builds the document from SAX events (json_scan.hpp's scanner, or nlohmann's parser where a
// refusal is worded) in linear time: a value is appended to its
// object without a search (the key was checked already), a key is checked against the
// object's keys by a scan while the object is small and by a hash set once it is large, and
// nothing is revisited when an object closes (nlohmann's callback parser scans the parent at
// every close, which made a 200,000-entry list quadratic). The stop flag is polled, so a
// stop signal ends a long load. With a JsonStream, the elements of the top-level list it
// names are handed over as they close (objects flat) and never enter the document.
class DomBuilder {
 public:
  DomBuilder(json* root, JsonStream* stream)
      : root_(root), stream_(stream) {}

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return put(json(v)); }
  bool string(json::string_t& v) {
    if (open_ > 0 && frames_[open_ - 1].kind == Kind::Flat) return flat_string(v);
    return put(json(std::move(v)));
  }
  bool binary(json::binary_t& v) { return put(json::binary(std::move(static_cast<json::binary_t::container_type&>(v)))); }
  bool start_object(std::size_t /*n*/) {
    if (open_ > 0 && frames_[open_ - 1].kind == Kind::Stream) return open_flat();
    return open(json::object(), Kind::Object);
  }
  bool start_array(std::size_t /*n*/) {
    const bool streamed = stream_ != nullptr && !stream_->seen && open_ == 1 && frames_[0].kind == Kind::Object &&
                          frames_[0].key == stream_->list_key;
    if (streamed) stream_->seen = true;
    return open(json::array(), streamed ? Kind::Stream : Kind::Array);
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    Frame& f = frames_[open_ - 1];
    const bool dup = f.kind == Kind::Flat ? flat_seen(k) : seen(f, k);
    if (duplicate_.empty() && dup) {
      duplicate_ = k;
      where_ = path();
    }
    if (f.kind != Kind::Flat) f.key = std::move(k);
    return duplicate_.empty() && poll();
  }
  bool parse_error(std::size_t /*pos*/, const std::string& /*token*/, const nlohmann::detail::exception& e) {
    error_ = e.what();
    return false;
  }

  const std::string& duplicate() const { return duplicate_; }
  const std::string& where() const { return where_; }
  const std::string& error() const { return error_; }
  bool stopped() const { return stopped_; }

 private:
  // An object of more keys than this keeps a hash set of them; a smaller one is scanned.
  static constexpr std::size_t kScanKeys = 16;
  // A streamed element's keys are scanned up to this many (a Google Benchmark entry has 20 to
  // 30: a hash set per entry cost more than the scans it saved); a wider one is hashed.
  static constexpr std::size_t kFlatScanKeys = 64;
  // Stream: the streamed list; Flat: one of its objects, its members in flat_.
  enum class Kind { Object, Array, Stream, Flat };
  struct Frame {
    json* value = nullptr;
    Kind kind = Kind::Object;
    std::size_t index = 0;
    std::string key;
    std::unordered_set<std::string> keys;
  };

  bool seen(Frame& f, const std::string& k) {
    if (f.kind != Kind::Object) return false;
    const auto& members = f.value->get_ref<const json::object_t&>();
    if (members.size() < kScanKeys)
      return std::any_of(members.begin(), members.end(), [&](const auto& m) { return m.first == k; });
    if (f.keys.empty())
      for (const auto& m : members) f.keys.insert(m.first);
    return !f.keys.insert(k).second;
  }
  // The key becomes the flat object's next member (its value comes with the next event).
  bool flat_seen(const std::string& k) {
    auto& members = flat_.members;
    const std::size_t n = flat_.size;
    if (n == members.size()) members.emplace_back();
    members[n].key.assign(k);  // its value is set by the next event (a key is always followed by one)
    const std::uint64_t tag = json_key_tag(k);
    members[n].tag = tag;
    flat_.size = n + 1;
    if (n < kFlatScanKeys)
      return std::any_of(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(n),
                         [&](const JsonMember& m) { return m.tag == tag && m.key == k; });
    if (flat_keys_.empty())
      for (std::size_t i = 0; i < n; ++i) (void)flat_keys_.insert(members, i);
    return !flat_keys_.insert(members, n);
  }
  // Where a new value goes: the root, the end of the open array, the open object's key, the
  // flat object's last member, or (in the streamed list) the element being built.
  json* slot(json&& v) {
    if (open_ == 0) {
      *root_ = std::move(v);
      return root_;
    }
    Frame& f = frames_[open_ - 1];
    switch (f.kind) {
      case Kind::Flat:
        flat_.members[flat_.size - 1].value = std::move(v);
        return &flat_.members[flat_.size - 1].value;
      case Kind::Stream:
        element_ = std::move(v);
        return &element_;
      case Kind::Array: {
        auto& items = f.value->get_ref<json::array_t&>();
        items.push_back(std::move(v));
        ++f.index;
        return &items.back();
      }
      case Kind::Object:
        break;
    }
    // The key is new (checked in key()): appended without ordered_map's linear search.
    auto& members = static_cast<json::object_t::Container&>(f.value->get_ref<json::object_t&>());
    members.emplace_back(std::move(f.key), std::move(v));
    f.key.clear();
    return &members.back().second;
  }
  // A string into the flat object: copied into the member's string where it has one (the
  // previous element's), and never moved out of the lexer's buffer: a million entries of five
  // strings each reuse their storage rather than allocate and free it.
  bool flat_string(const std::string& v) {
    json& at = flat_.members[flat_.size - 1].value;
    if (at.is_string()) at.get_ref<std::string&>().assign(v);
    else at = v;
    return poll();
  }
  bool put(json&& v) {
    (void)slot(std::move(v));
    if (open_ > 0 && frames_[open_ - 1].kind == Kind::Stream) emit(nullptr);
    return poll();
  }
  bool open(json&& v, Kind kind) {
    json* at = slot(std::move(v));
    return push(at, kind);
  }
  bool open_flat() {
    flat_.size = 0;
    if (!flat_keys_.empty()) flat_keys_.clear();
    return push(nullptr, Kind::Flat);
  }
  bool push(json* at, Kind kind) {
    if (open_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[open_++];
    f.value = at;
    f.kind = kind;
    f.index = 0;
    f.key.clear();
    f.keys.clear();
    return poll();
  }
  bool close() {
    if (open_ == 0) return true;
    Frame& f = frames_[--open_];
    if (!f.keys.empty()) std::unordered_set<std::string>().swap(f.keys);
    // A million entries of 20 members each: the doubling's slack would be a third of the document.
    if (f.kind == Kind::Object) static_cast<json::object_t::Container&>(f.value->get_ref<json::object_t&>()).shrink_to_fit();
    if (f.kind == Kind::Stream) stream_->count = f.index;
    if (open_ > 0 && frames_[open_ - 1].kind == Kind::Stream) emit(f.kind == Kind::Flat ? &flat_ : nullptr);
    return true;
  }
  // Hands the element just completed to the stream (the flat object, or element_).
  void emit(const JsonFlatObject* object) {
    Frame& list = frames_[open_ - 1];
    if (duplicate_.empty()) stream_->element(list.index, object, element_);
    ++list.index;
    element_ = nullptr;
  }
  bool poll() {
    if ((++events_ & 0xffff) == 0 && stop_signal() != 0) {
      stopped_ = true;
      return false;
    }
    return true;
  }
  // The object now open, as a path from the top: "defaults", "benchmarks[3]", "the top level".
  std::string path() const {
    std::string p;
    for (std::size_t i = 0; i + 1 < open_; ++i) {
      const Frame& f = frames_[i];
      // Appended piece by piece: g++ 12 warns (-Wrestrict, a false positive) on "." + string.
      if (f.kind == Kind::Array || f.kind == Kind::Stream) {
        p.append(1, '[').append(std::to_string(f.kind == Kind::Stream ? f.index : f.index - 1)).append(1, ']');
      } else {
        if (!p.empty()) p.append(1, '.');
        p.append(f.kind == Kind::Flat ? flat_.members[flat_.size - 1].key : f.key.empty() ? last_key(f) : f.key);
      }
    }
    return p.empty() ? "the top level" : p;
  }
  // The key of an object's last member (its key was moved into the member when it opened).
  static std::string last_key(const Frame& f) {
    const auto& members = f.value->get_ref<const json::object_t&>();
    return members.empty() ? std::string() : members.back().first;
  }

  json* root_;
  JsonStream* stream_;
  JsonFlatObject flat_;
  KeyIndex flat_keys_;
  json element_;
  std::vector<Frame> frames_;
  std::size_t open_ = 0;
  std::uint64_t events_ = 0;
  std::string duplicate_, where_, error_;
  bool stopped_ = false;
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

// The marks' strings, as the sanitizer's literals read back; false for a mark that is not a
// string literal (such a load is nlohmann's throughout).
bool decode_marks(const NonFiniteMarks& m, json_scan::Marks* out) {
  const auto one = [](std::string_view literal, std::string* to) {
    const json v = json::parse(literal.begin(), literal.end(), nullptr, false);
    if (!v.is_string()) return false;
    *to = v.get<std::string>();
    return true;
  };
  return one(m.nan, &out->nan) && one(m.pos_inf, &out->pos_inf) && one(m.neg_inf, &out->neg_inf);
}

// A refusal of the scanner, worded as nlohmann's parser words it under the same checks (the
// depth first, then the first duplicate key or syntax error in the text): the text is read
// again, from the caller where its pages were handed back, into a discarded document, and no
// element is handed over twice.
bool explain_refusal(std::string_view text, const std::string& source, std::string* err, const JsonLoadOptions& options,
                     bool released, std::size_t offset) {
  std::string again;
  if (released) {
    if (!options.reread(&again)) {
      *err = source + ": not valid JSON (at byte " + std::to_string(offset) + "), and the file could not be read again to say why";
      return false;
    }
    text = again;
  }
  JsonStream discard;
  JsonLoadOptions o = options;
  if (options.stream != nullptr) {
    discard.list_key = options.stream->list_key;
    discard.element = [](std::size_t, const JsonFlatObject*, const json&) {};
    o.stream = &discard;
  }
  json scratch;
  if (load_json_by_nlohmann(text, source, &scratch, err, o))  // the readers disagree (or the file changed): the scanner's place
    *err = source + ": not valid JSON: refused at byte " + std::to_string(offset);
  return false;
}

// A raw NUL is never JSON text (in a string it must be escaped). nlohmann's parser takes one as
// the end of the input, so "{...}\0anything" read as the object alone: both readers refuse it
// first, with one wording.
bool refuse_nul(std::string_view text, const std::string& source, std::string* err) {
  const std::size_t at = text.find('\0');
  if (at == std::string_view::npos) return false;
  *err = source + ": not valid JSON: a NUL byte at byte " + std::to_string(at);
  return true;
}

}  // namespace

bool load_json_by_nlohmann(std::string_view text, const std::string& source, json* out, std::string* err,
                           const JsonLoadOptions& options) {
  if (refuse_nul(text, source, err)) return false;
  const NonFiniteSanitized s = sanitize_non_finite(text, options.non_finite ? *options.non_finite : kNamed);
  if (s.max_depth > options.max_depth) {
    *err = source + ": JSON nested deeper than " + std::to_string(options.max_depth) + " levels";
    return false;
  }
  const std::string_view clean = s.replaced ? std::string_view(s.text) : text;
  DomBuilder dom(out, options.stream);
  const bool ok = json::sax_parse(clean.data(), clean.data() + clean.size(), &dom, json::input_format_t::json, true);
  if (dom.stopped()) {
    *err = source + ": reading stopped by signal " + std::to_string(stop_signal());
    return false;
  }
  if (!dom.duplicate().empty()) {
    *err = source + ": key \"" + parse_message(dom.duplicate()) + "\" given twice in " + dom.where() +
           " (a parser keeps only the last: which one was meant?)";
    return false;
  }
  if (!ok) {
    *err = source + ": not valid JSON: " + parse_message(dom.error());
    return false;
  }
  return true;
}

bool load_json(std::string_view text, const std::string& source, json* out, std::string* err,
               const JsonLoadOptions& options) {
  json_scan::Marks marks;
  if (!decode_marks(options.non_finite ? *options.non_finite : kNamed, &marks))
    return load_json_by_nlohmann(text, source, out, err, options);  // refuses a NUL itself
  if (refuse_nul(text, source, err)) return false;
  DomBuilder dom(out, options.stream);
  json_scan::Scanner<DomBuilder> scan(text, marks, options.max_depth, dom, options.release_behind && options.reread);
  const json_scan::Outcome outcome = scan.run();
  if (dom.stopped()) {
    *err = source + ": reading stopped by signal " + std::to_string(stop_signal());
    return false;
  }
  if (outcome == json_scan::Outcome::Accepted) return true;
  return explain_refusal(text, source, err, options, scan.released(), scan.offset(text.data()));
}

const json* JsonFlatObject::find(std::string_view key) const {
  const std::uint64_t tag = json_key_tag(key);
  for (std::size_t i = 0; i < size; ++i)
    if (members[i].tag == tag && members[i].key == key) return &members[i].value;
  return nullptr;
}

json JsonFlatObject::to_json() const {
  json out = json::object();
  auto& m = static_cast<json::object_t::Container&>(out.get_ref<json::object_t&>());
  m.reserve(size);
  for (std::size_t i = 0; i < size; ++i) m.emplace_back(members[i].key, members[i].value);
  return out;
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
