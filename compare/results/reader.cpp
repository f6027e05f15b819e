// Reads Google Benchmark JSON (1.7 and 1.8+) into the results model: one file, or a folder of
// them merged (results/writer.cpp). Every problem becomes one Error naming the file and the
// entry; nothing here throws past its boundary.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <functional>
#include <numeric>
#include <type_traits>
#include <utility>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "base/filesystem.hpp"
#include "base/format.hpp"
#include "gpucheck/core/stats.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/json_load.hpp"
#include "gpucheck/core/json_text.hpp"
#include "results/json_text.hpp"
#include "results/results.hpp"

namespace gpucheck::compare {
namespace {

using json = nlohmann::ordered_json;
// An entry of "benchmarks", flat as the loader streams it (gpucheck/core/json_load.hpp).
using Flat = JsonFlatObject;

// No timer resolves a picosecond: a time under it is a broken file, and a ratio against it
// overflows (1e-320 ns printed as "0.000 ns, +inf%"). The raw value is checked first, so a
// subnormal never reaches a multiplication.
constexpr double kMinTimeNs = 1e-3;
constexpr double kMinTimeValue = 1e-12;

// Markers standing in for the bare tokens gbench writes and JSON forbids. They start with a
// control character, which a JSON string can only hold escaped, so no real name collides.
constexpr std::string_view kNaNMark = "\u0001NaN";
constexpr std::string_view kPosInfMark = "\u0001Infinity";
constexpr std::string_view kNegInfMark = "\u0001-Infinity";
// The same markers as JSON string literals, as the sanitizer writes them.
constexpr std::string_view kNaNJson = "\"\\u0001NaN\"";
constexpr std::string_view kPosInfJson = "\"\\u0001Infinity\"";
constexpr std::string_view kNegInfJson = "\"\\u0001-Infinity\"";

std::string type_name(const json& j) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == kNaNMark) return "NaN";
    if (s == kPosInfMark || s == kNegInfMark) return "infinite";
    return "a string";
  }
  if (j.is_boolean()) return "a boolean";
  if (j.is_null()) return "null";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  return "a number";
}

std::string entry_ref_of(std::size_t index, const Flat& e);

// A JSON number or one of the non-finite markers.
std::optional<double> as_double(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == kNaNMark) return std::numeric_limits<double>::quiet_NaN();
    if (s == kPosInfMark) return std::numeric_limits<double>::infinity();
    if (s == kNegInfMark) return -std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

// A field that decides whether a case ran (error_occurred, skipped): true or false, nothing
// else ("yes" read as false would pass an errored case).
Expected<bool> strict_bool(const std::string& src, std::size_t index, const Flat& e, const char* key) {
  const json* it = e.find(key);
  if (it == nullptr) return false;
  if (!it->is_boolean())
    return Error{src, entry_ref_of(index, e) + ": " + key + " is " + type_name(*it) + " (" + printable(it->dump(), 40) +
                          "), expected true or false"};
  return it->get<bool>();
}

// Fields of an entry that are not user counters. A linear scan over string_views: called
// for every key of every entry, it must not allocate or walk a tree.
bool is_reserved(std::string_view k) {
  static constexpr std::string_view kReserved[] = {
      "name",          "family_index",   "per_family_instance_index", "run_name",
      "run_type",      "repetitions",    "repetition_index",          "threads",
      "iterations",    "real_time",      "cpu_time",                  "time_unit",
      "aggregate_name", "aggregate_unit", "error_occurred",           "error_message",
      "skipped",       "skip_message",   "label",                     "big_o",
      "cpu_coefficient", "real_coefficient", "rms"};
  for (const auto r : kReserved)
    if (r.size() == k.size() && r == k) return true;
  return false;
}

std::string entry_ref(std::size_t index, const Flat& e) {
  std::string ref = "benchmark #" + std::to_string(index + 1);
  if (const json* it = e.find("name"); it != nullptr && it->is_string())
    ref += " \"" + printable(it->get_ref<const std::string&>()) + "\"";
  return ref;
}

std::string entry_ref_of(std::size_t index, const Flat& e) { return entry_ref(index, e); }

// Google Benchmark's own numeric fields: numbers (cpu_time like real_time may be a marker),
// counts whole and not negative; repetition_index below repetitions. A string "1000" where
// iterations belongs is a file something else wrote, and it is refused rather than guessed.
std::optional<Error> bad_reserved_field(const std::string& src, std::size_t index, const Flat& e) {
  const auto fail = [&](const std::string& what) { return Error{src, entry_ref(index, e) + ": " + what}; };
  if (const json* ct = e.find("cpu_time"); ct != nullptr) {
    const auto v = as_double(*ct);
    if (!v) return fail("cpu_time is " + type_name(*ct) + ", expected a number");
    if (std::isfinite(*v) && *v < 0) return fail("cpu_time is negative");
  }
  for (const char* key : {"iterations", "repetitions", "threads"}) {
    const json* it = e.find(key);
    if (it == nullptr) continue;
    if (!it->is_number_integer() || (it->is_number_integer() && !it->is_number_unsigned() && it->get<long long>() < 0))
      return fail(std::string(key) + " is " + (it->is_number() ? "not a whole number ≥ 0 (" + it->dump() + ")" : type_name(*it)) +
                  ", expected a count");
  }
  const json* ri = e.find("repetition_index");
  const json* reps = e.find("repetitions");
  if (ri != nullptr && reps != nullptr && ri->is_number_integer() && reps->is_number_integer() &&
      ri->get<long long>() >= reps->get<long long>())
    return fail("repetition_index " + ri->dump() + " is not below repetitions " + reps->dump());
  return std::nullopt;
}

// Time in ns from an entry that must hold a measured time.
Expected<double> read_time_ns(const std::string& src, std::size_t index, const Flat& e) {
  // The entry's reference is built only for an error (this runs for every entry).
  const auto fail = [&](const std::string& what) { return Error{src, entry_ref(index, e) + ": " + what}; };
  const json* rt = e.find("real_time");
  if (rt == nullptr) return fail("no real_time");
  const auto v = as_double(*rt);
  if (!v) return fail("real_time is " + type_name(*rt) + ", expected a number");
  if (std::isnan(*v)) return fail("real_time is NaN");
  if (!std::isfinite(*v)) return fail("real_time is infinite");
  if (*v < 0) return fail("real_time is negative");
  if (*v == 0) return fail("real_time is zero (and the run is not marked as errored)");
  if (*v < kMinTimeValue)
    return fail("real_time is " + rt->dump() + ", too small to be a measured time (every change against it would be infinite)");
  const json* tu = e.find("time_unit");
  if (tu == nullptr) return fail("no time_unit");
  if (!tu->is_string()) return fail("time_unit is " + type_name(*tu) + ", expected a string");
  const auto scale = ns_per_unit(tu->get_ref<const std::string&>());
  if (!scale)
    return fail("unknown time_unit \"" + printable(tu->get_ref<const std::string&>()) + "\" (expected ns, us, ms or s)");
  const double ns = *v * *scale;
  if (!std::isfinite(ns)) return fail("real_time overflows when converted to ns");
  if (ns < kMinTimeNs) return fail("real_time is " + rt->dump() + " " + tu->get<std::string>() + ", under 1 ps: not a measured time");
  return ns;
}

// A user counter's value, or nullopt where the member is Google Benchmark's own or no value
// (a NaN counter).
std::optional<double> counter_value(const JsonMember& m) {
  if (is_reserved(m.key)) return std::nullopt;
  const auto d = as_double(m.value);
  return d && std::isfinite(*d) ? d : std::nullopt;
}

// A NaN / Infinity counter is no value, but a judge that needs that counter says which it was
// (a GEMM whose TFLOPS is NaN did not measure, it is not a case without the counter).
void note_nonfinite(const JsonMember& m, std::map<std::string, double>& nonfinite) {
  if (is_reserved(m.key)) return;
  if (const auto d = as_double(m.value); d && !std::isfinite(*d)) nonfinite.emplace(m.key, *d);
}

// A counter's name with its first 8 bytes as a number (big-endian, zero-padded), so most
// comparisons of a sort are one integer compare; a tie falls to the whole name.
struct SortName {
  std::uint64_t prefix;
  const std::string* name;
  double value;
  bool operator<(const SortName& o) const { return prefix != o.prefix ? prefix < o.prefix : *name < *o.name; }
};

// Sorted first, then each inserted at the end: a wide entry's million counters in the order
// "c1, c10, c2" went into the tree by a search each.
std::map<std::string, double> read_counters(const Flat& e, std::map<std::string, double>& nonfinite) {
  std::vector<SortName> kept;
  kept.reserve(e.size);
  for (std::size_t i = 0; i < e.size; ++i) {
    const auto d = counter_value(e.members[i]);
    if (!d) {
      note_nonfinite(e.members[i], nonfinite);
      continue;
    }
    const std::string& k = e.members[i].key;
    std::uint64_t prefix = 0;
    for (std::size_t b = 0; b < 8; ++b) prefix = (prefix << 8) | (b < k.size() ? static_cast<unsigned char>(k[b]) : 0u);
    kept.push_back(SortName{prefix, &k, *d});
  }
  if (!std::is_sorted(kept.begin(), kept.end())) std::sort(kept.begin(), kept.end());
  std::map<std::string, double> out;
  for (const SortName& n : kept) out.emplace_hint(out.end(), *n.name, n.value);
  return out;
}

// The context's scalars as strings; JSON numbers printed the way the file had them.
// A NUL in a field (a label such as gpu_name) is refused: text is taken whole.
std::optional<Error> read_context(const json& ctx, Results& r, bool keep_raw, const std::string& src) {
  for (const auto& [k, v] : ctx.items()) {
    if (keep_raw) r.raw_context.emplace_back(k, v.dump());
    if (k.find('\0') != std::string::npos)
      return Error{src, "context key \"" + printable(k) + "\" holds a NUL (\\u0000): text is taken whole, never cut"};
    if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      if (s.find('\0') != std::string::npos)
        return Error{src, "context \"" + printable(k) + "\" holds a NUL (\\u0000): text is taken whole, never cut"};
      if (s == kNaNMark || s == kPosInfMark || s == kNegInfMark) continue;
      r.context[k] = visible_text(s);
    } else if (v.is_boolean()) {
      r.context[k] = v.get<bool>() ? "true" : "false";
    } else if (v.is_number()) {
      r.context[k] = v.dump();
    }
  }
  return std::nullopt;
}

// A user counter is a number (or the NaN / Infinity gbench writes, which is no value). A
// string, boolean, object, array or null where a counter belongs, or a negative value, is
// bad input: treating it as absent would let a broken benchmark pass the gate unseen.
std::optional<Error> bad_counter(const std::string& src, std::size_t index, const Flat& e) {
  for (std::size_t i = 0; i < e.size; ++i) {
    const std::string& k = e.members[i].key;
    const json& v = e.members[i].value;
    if (is_reserved(k)) continue;
    const auto d = as_double(v);
    if (!d)
      return Error{src, entry_ref(index, e) + ": counter \"" + printable(k) + "\" is " + type_name(v) +
                            ", expected a number"};
    if (std::isfinite(*d) && *d < 0)
      return Error{src, entry_ref(index, e) + ": counter \"" + printable(k) + "\" is negative (" + v.dump() +
                            "): a rate, time or count cannot be"};
  }
  return std::nullopt;
}

std::string label_of(const Flat& e) {
  const json* l = e.find("label");
  return l != nullptr && l->is_string() ? printable(l->get_ref<const std::string&>(), 200) : std::string();
}

// Drops non-finite counters so a stored baseline is strict JSON any reader accepts.
std::string raw_entry_text(const Flat& flat) {
  const json e = flat.to_json();
  bool marked = false;
  for (const auto& [k, v] : e.items())
    if (v.is_string() && !v.get_ref<const std::string&>().empty() &&
        v.get_ref<const std::string&>()[0] == '\x01')
      marked = true;
  if (!marked) return e.dump();
  json copy = json::object();
  for (const auto& [k, v] : e.items()) {
    // Only counters lose their NaN; a marker in a reserved field stays (as a string) so the
    // stored entry reads back exactly as this one did.
    const bool drop = v.is_string() && as_double(v).has_value() && !is_reserved(k);
    if (!drop) copy[k] = v;
  }
  return copy.dump();
}

// A benchmark name as every output shows it: control characters as \xNN, so an escape
// sequence or a bell in a name never reaches a terminal, a Markdown table or a chart raw.
// Both sides of a comparison are read alike, so names still match.
std::string visible_name(std::string_view s) { return visible_text(s); }

// Half a unit in the last decimal the file printed `v` with (the shortest fixed text that
// reads back as v): "100" gives 0.5, "130.25" gives 0.005.
double printed_half_unit(double v) {
  char buf[512];
  const auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::fixed);
  if (r.ec != std::errc()) return 0.0;
  const std::string_view t(buf, static_cast<std::size_t>(r.ptr - buf));
  const std::size_t dot = t.find('.');
  const std::size_t decimals = dot == std::string_view::npos ? 0 : t.size() - dot - 1;
  return 0.5 * std::pow(10.0, -static_cast<double>(decimals));
}

// What the fold reads of an aggregate entry (median, mean, cv), taken as it streams past: the
// entry itself is gone by then.
struct Taken {
  std::size_t index = 0;
  std::optional<Error> time_error;  // read_time_ns's refusal, reported only if the time is used
  double time_ns = 0.0;
  std::optional<double> real_time;  // the value as written (a marker read as NaN / infinite)
  std::map<std::string, double> counters;
  std::optional<std::string> time_unit;
  std::string label;
  std::optional<long long> repetitions;
  std::map<std::string, double> nonfinite = {};  // NaN / Infinity counters, as written
};

// A benchmark's entries as they arrive: the iterations folded in at once (samples, counters
// by name, the first one's label and unit), the aggregates kept as Taken.
struct Group {
  std::string key;
  std::size_t iterations = 0;
  std::vector<long long> repetition_indices;
  std::map<std::string, Taken> aggregates;
  bool errored = false;
  bool skipped = false;
  std::string message;
  std::optional<Error> time_error;  // the first iteration whose time is refused
  std::vector<double> samples_ns;
  std::map<std::string, std::vector<double>> counter_samples;
  // The first repetition's counters in the file's order, into counter_samples (a map's nodes
  // stay put as it grows and moves): the next repetitions, written in the same order, append
  // without a search.
  std::vector<std::pair<const std::string*, std::vector<double>*>> counter_order;
  std::map<std::string, double> first_counters;
  std::map<std::string, double> nonfinite;  // any repetition's NaN / Infinity counters
  std::optional<std::string> first_unit;
  std::string first_label;
};
static_assert(std::is_nothrow_move_constructible_v<Group>, "groups_ grows by moving: counter_order's pointers stay valid");

Taken take(const std::string& src, std::size_t index, const Flat& e, bool counters) {
  Taken t;
  t.index = index;
  auto ns = read_time_ns(src, index, e);
  if (ns) t.time_ns = *ns;
  else t.time_error = ns.error();
  if (const json* rt = e.find("real_time")) t.real_time = as_double(*rt);
  if (counters) t.counters = read_counters(e, t.nonfinite);
  if (const json* tu = e.find("time_unit"); tu != nullptr && tu->is_string()) t.time_unit = tu->get<std::string>();
  t.label = label_of(e);
  if (const json* reps = e.find("repetitions"); reps != nullptr && reps->is_number_integer())
    t.repetitions = reps->get<long long>();
  return t;
}

// One run into its group: its time (or the first refusal) and its counters, by name.
void fold_iteration(const std::string& src, std::size_t index, const Flat& e, Group& g) {
  if (g.time_error) return;  // the fold stops at the first refused time
  auto t = read_time_ns(src, index, e);
  if (!t) {
    g.time_error = t.error();
    return;
  }
  if (g.samples_ns.empty()) {
    // Room for the repetitions the entry announces, so 200,000 cases of 5 carry no doubling slack.
    std::size_t reps = 1;
    if (const json* r = e.find("repetitions"); r != nullptr && r->is_number_unsigned())
      reps = static_cast<std::size_t>(std::clamp<std::uint64_t>(r->get<std::uint64_t>(), 1, 1024));
    g.samples_ns.reserve(reps);
    g.samples_ns.push_back(*t);
    g.first_counters = read_counters(e, g.nonfinite);
    // In key order: each insertion is at the hint (linear in the counters).
    auto at = g.counter_samples.begin();
    for (const auto& [k, v] : g.first_counters) {
      at = g.counter_samples.try_emplace(at, k);
      at->second.reserve(reps);
      (at++)->second.push_back(v);
    }
    if (reps > 1) {
      g.counter_order.reserve(g.counter_samples.size());
      for (std::size_t i = 0; i < e.size; ++i)
        if (const auto it = g.counter_samples.find(e.members[i].key); it != g.counter_samples.end())
          g.counter_order.emplace_back(&it->first, &it->second);
    }
    return;
  }
  g.samples_ns.push_back(*t);
  std::size_t next = 0;  // in counter_order
  for (std::size_t i = 0; i < e.size; ++i) {
    const auto d = counter_value(e.members[i]);
    if (!d) {
      note_nonfinite(e.members[i], g.nonfinite);
      continue;
    }
    const std::string& k = e.members[i].key;
    if (next < g.counter_order.size() && *g.counter_order[next].first == k) g.counter_order[next++].second->push_back(*d);
    else g.counter_samples[k].push_back(*d);
  }
}

// A median or mean aggregate that disagrees with the repetitions it summarises (beyond a
// relative 1e-6 plus the precision it was printed with): one of them is not what was measured.
std::optional<Error> disagreeing_aggregate(const std::string& src, const Group& g, const std::vector<double>& samples_ns) {
  for (const char* which : {"median", "mean"}) {
    const auto a = g.aggregates.find(which);
    if (a == g.aggregates.end()) continue;
    if (a->second.time_error) return a->second.time_error;
    const double t = a->second.time_ns;
    const double own = std::string_view(which) == "median"
                           ? gpucheck::median(samples_ns).value_or(0.0)
                           : std::accumulate(samples_ns.begin(), samples_ns.end(), 0.0) / static_cast<double>(samples_ns.size());
    const double raw = a->second.real_time.value_or(0.0);
    const double ns_per = raw != 0.0 ? t / raw : 1.0;
    const double tolerance = 1e-6 * std::max(std::fabs(t), std::fabs(own)) + printed_half_unit(raw) * ns_per;
    if (std::fabs(t - own) > tolerance)
      return Error{src, "benchmark \"" + printable(g.key) + "\": its " + which + " aggregate (" + format_time_ns(t) +
                            ") disagrees with the " + which + " of its " + std::to_string(samples_ns.size()) +
                            " repetitions (" + format_time_ns(own) + "): which one was measured?"};
  }
  return std::nullopt;
}

// The figure and counters from the repetitions, or from a median / mean aggregate without them.
std::optional<Error> fold_figure(const std::string& src, Group& g, Benchmark& b, const Taken*& chosen) {
  if (!b.samples_ns.empty()) {
    // The figure is the repetitions' own; a stored median or mean must agree with them.
    b.real_time_ns = gpucheck::median(b.samples_ns).value_or(std::numeric_limits<double>::quiet_NaN());
    if (auto bad = disagreeing_aggregate(src, g, b.samples_ns)) return bad;
    if (b.samples_ns.size() == 1) {
      b.counters = std::move(g.first_counters);
    } else {
      for (const auto& [k, v] : b.counter_samples) b.counters[k] = gpucheck::median(v).value_or(std::numeric_limits<double>::quiet_NaN());
    }
    return std::nullopt;
  }
  auto m = g.aggregates.find("median");
  if (m == g.aggregates.end()) m = g.aggregates.find("mean");
  if (m == g.aggregates.end())
    return Error{src, "benchmark \"" + printable(g.key) + "\": only spread aggregates, no run, median or mean to compare"};
  chosen = &m->second;
  if (chosen->time_error) return chosen->time_error;
  b.real_time_ns = chosen->time_ns;
  b.counters = chosen->counters;
  return std::nullopt;
}

// The counter `method` (a whole number the binary writes per case, changed when the case's way
// of measuring changes) is not a figure: it becomes the case's method, so no comparison, stored
// baseline or history series spans two ways of measuring.
void take_method(Benchmark& b) {
  const auto m = b.counters.find("method");
  if (m == b.counters.end()) return;
  if (std::isfinite(m->second) && m->second >= 0 && m->second < 1e9 && m->second == std::floor(m->second))
    b.method = std::to_string(static_cast<long long>(m->second));
  else
    b.method = "?";
  b.counters.erase(m);
  b.counter_samples.erase("method");
  b.counter_cv.erase("method");
}

Expected<Benchmark> fold(const std::string& src, Group& g) {
  Benchmark b;
  b.name = visible_name(g.key);
  b.source = src;
  if (g.errored || g.skipped) {
    b.state = g.errored ? RunState::Errored : RunState::Skipped;
    b.message = printable(g.message, 200);
    return b;
  }
  if (g.time_error) return *g.time_error;
  b.samples_ns = std::move(g.samples_ns);
  b.counter_samples = std::move(g.counter_samples);
  const Taken* chosen = nullptr;
  if (auto bad = fold_figure(src, g, b, chosen)) return *bad;
  b.nonfinite_counters = chosen != nullptr ? chosen->nonfinite : std::move(g.nonfinite);
  if (g.iterations > 0) {
    b.label = g.first_label;
    if (g.first_unit) b.time_unit = *g.first_unit;
  } else {
    b.label = chosen->label;
    if (chosen->time_unit) b.time_unit = *chosen->time_unit;
  }
  b.repetitions = static_cast<int>(std::max<std::size_t>(1, g.iterations));
  if (auto c = g.aggregates.find("cv"); c != g.aggregates.end()) {
    if (const auto& v = c->second.real_time; v && std::isfinite(*v) && *v >= 0) b.cv = *v;
    b.counter_cv = c->second.counters;
    if (const auto& reps = c->second.repetitions)
      b.repetitions = std::max(b.repetitions, static_cast<int>(std::clamp<long long>(*reps, 1, 1 << 20)));
  }
  if (!b.cv) b.cv = gpucheck::coefficient_of_variation(b.samples_ns);
  take_method(b);
  return b;
}

// The envelope: an object with an optional "context" object and a non-empty "benchmarks" list.
// The list's entries were streamed: `count` says how many it held.
Status read_envelope(const json& doc, std::size_t count, const std::string& src, Results& r, bool keep_raw) {
  if (!doc.is_object())
    return Error{src, "not Google Benchmark output: the top level is " + type_name(doc) +
                          ", expected an object with \"context\" and \"benchmarks\""};
  if (const auto ctx = doc.find("context"); ctx != doc.end()) {
    if (!ctx->is_object())
      return Error{src, "not Google Benchmark output: \"context\" is " + type_name(*ctx) + ", expected an object"};
    if (auto bad = read_context(*ctx, r, keep_raw, src)) return *bad;
  }
  const auto bl = doc.find("benchmarks");
  if (bl == doc.end()) return Error{src, "not Google Benchmark output: no \"benchmarks\" list"};
  if (!bl->is_array())
    return Error{src, "not Google Benchmark output: \"benchmarks\" is " + type_name(*bl) + ", expected a list"};
  if (count == 0) return Error{src, "the \"benchmarks\" list is empty"};
  return Done{};
}

// Which benchmark an entry belongs to, and what kind of entry it is.
struct EntryId {
  std::string key;        // the benchmark's key (suffixes stripped)
  bool aggregate = false;
  std::string aggregate_name;
};

// A name is taken whole: a NUL would cut it wherever C strings reach (a glob, a file name),
// and a blank one names nothing.
std::optional<std::string> bad_name_text(std::string_view name) {
  if (name.find('\0') != std::string_view::npos)
    return "holds a NUL (\\u0000) at byte " + std::to_string(name.find('\0')) + ": a name is taken whole, never cut";
  if (name.find_first_not_of(" \t\r\n\v\f") == std::string_view::npos) return "is only whitespace";
  return std::nullopt;
}

Expected<EntryId> read_entry_id(const Flat& e, std::size_t i, const std::string& src) {
  // The entry's reference is built only for an error (this runs for every entry).
  const auto ref = [i] { return "benchmark #" + std::to_string(i + 1); };
  const json* nm = e.find("name");
  if (nm == nullptr) return Error{src, ref() + " has no name"};
  if (!nm->is_string()) return Error{src, ref() + ": name is " + type_name(*nm) + ", expected a string"};
  const auto& name = nm->get_ref<const std::string&>();
  if (name.empty() || name[0] == '\x01') return Error{src, ref() + ": name is empty"};
  if (auto bad = bad_name_text(name)) return Error{src, ref() + ": name " + *bad};

  EntryId id;
  if (const json* rt = e.find("run_type"); rt != nullptr) {
    if (!rt->is_string()) return Error{src, entry_ref(i, e) + ": run_type is " + type_name(*rt) + ", expected a string"};
    const std::string& run_type = rt->get_ref<const std::string&>();
    if (run_type != "iteration" && run_type != "aggregate")
      return Error{src, entry_ref(i, e) + ": unknown run_type \"" + printable(run_type) + "\""};
    id.aggregate = run_type == "aggregate";
  }
  if (id.aggregate) {
    const json* an = e.find("aggregate_name");
    if (an == nullptr || !an->is_string() || an->get_ref<const std::string&>().empty())
      return Error{src, entry_ref(i, e) + ": aggregate without an aggregate_name"};
    id.aggregate_name = an->get<std::string>();
  }
  std::string_view base = name;  // a view: the key is the one copy made
  if (const json* rn = e.find("run_name"); rn != nullptr) {
    if (!rn->is_string() || rn->get_ref<const std::string&>().empty())
      return Error{src, entry_ref(i, e) + ": run_name is " + type_name(*rn) + ", expected a name"};
    base = rn->get_ref<const std::string&>();
    if (auto bad = bad_name_text(base)) return Error{src, entry_ref(i, e) + ": run_name " + *bad};
  } else if (id.aggregate) {
    const std::string suffix = "_" + id.aggregate_name;
    if (base.size() > suffix.size() && base.ends_with(suffix)) base.remove_suffix(suffix.size());
  }
  id.key = benchmark_key(base);
  return id;
}

// An entry that did not run: errored, or skipped. Google Benchmark 1.7 has no SkipWithMessage:
// our binaries mark a case the device cannot run as an error whose message starts with the
// contract's skip prefix (docs/ARCHITECTURE.md), read here as a skip.
struct NotRun {
  bool errored = false, skipped = false;
  std::string message;
};

Expected<std::optional<NotRun>> read_not_run(const std::string& src, std::size_t index, const Flat& e) {
  NotRun n;
  auto errored = strict_bool(src, index, e, "error_occurred");
  if (!errored) return errored.error();
  auto skipped = strict_bool(src, index, e, "skipped");
  if (!skipped) return skipped.error();
  n.errored = *errored;
  n.skipped = *skipped;
  if (!n.errored && !n.skipped) return std::optional<NotRun>();
  const char* msg_key = n.errored ? "error_message" : "skip_message";
  if (const json* m = e.find(msg_key); m != nullptr && m->is_string()) n.message = m->get<std::string>();
  if (constexpr std::string_view kUnsupported = contract::kUnsupportedPrefix; n.errored && n.message.starts_with(kUnsupported)) {
    n.errored = false;
    n.skipped = true;
    n.message.erase(0, kUnsupported.size());
  }
  return std::optional<NotRun>(n);
}

// One repetition of an iteration entry into its group: repetition indices are counts, and the
// same one twice (or an unindexed entry beside others) is the same benchmark twice.
Status add_iteration(Group& g, const Flat& e, std::size_t i, const std::string& src) {
  long long rep = -1;
  if (const json* ri = e.find("repetition_index"); ri != nullptr) {
    if (!ri->is_number_integer() || ri->get<long long>() < 0)
      return Error{src, entry_ref(i, e) + ": repetition_index is " + type_name(*ri) + ", expected a count"};
    rep = ri->get<long long>();
  }
  const auto& reps = g.repetition_indices;
  const bool dup = rep < 0 ? !reps.empty()
                           : std::find(reps.begin(), reps.end(), rep) != reps.end() ||
                                 std::find(reps.begin(), reps.end(), -1LL) != reps.end();
  if (dup) return Error{src, "duplicate benchmark \"" + printable(g.key) + "\" (entry #" + std::to_string(i + 1) + ")"};
  g.repetition_indices.push_back(rep);
  if (g.iterations++ == 0) {
    g.first_label = label_of(e);
    if (const json* tu = e.find("time_unit"); tu != nullptr && tu->is_string()) g.first_unit = tu->get<std::string>();
  }
  fold_iteration(src, i, e, g);
  return Done{};
}

// The entries of "benchmarks" as the loader streams them: each checked and folded into its
// group at once. The first refusal is kept and the rest of the file still read, so an error
// the whole text decides (invalid JSON, a key given twice) and the envelope's come first, as
// they would from a whole document.
class EntryReader {
 public:
  EntryReader(const std::string& src, const ReadOptions& opt) : src_(src), opt_(opt) {}

  void entry(std::size_t i, const Flat* e, const json& other) {
    if (error_) return;
    try {
      if (e == nullptr) {
        error_ = Error{src_, "benchmark #" + std::to_string(i + 1) + " is " + type_name(other) + ", expected an object"};
        return;
      }
      if (auto st = add(i, *e); !st) error_ = st.error();
    } catch (const json::exception& x) {  // a type we did not expect somewhere: still one line
      error_ = Error{src_, "unexpected JSON content: " + printable(x.what(), 200)};
    }
  }

  Expected<Results> finish(const json& doc, std::size_t count) {
    Results r;
    r.source = src_;
    if (auto env = read_envelope(doc, count, src_, r, opt_.keep_raw); !env) return env.error();
    if (error_) return *error_;
    r.benchmarks.reserve(groups_.size());
    for (Group& g : groups_) {
      auto b = fold(src_, g);
      if (!b) return b.error();
      r.benchmarks.push_back(std::move(*b));
      g = Group{};  // its samples moved; the rest released as the list is walked
    }
    if (opt_.keep_raw) {
      r.raw_entries = std::move(raw_entries_);
      r.raw_keys = std::move(raw_keys_);
    }
    r.reindex();
    return r;
  }

 private:
  Status add(std::size_t i, const Flat& e) {
    auto id = read_entry_id(e, i, src_);
    if (!id) return id.error();
    if (auto bad = bad_counter(src_, i, e)) return *bad;
    if (auto bad = bad_reserved_field(src_, i, e)) return *bad;
    if (opt_.keep_raw) {
      raw_keys_.push_back(id->key);
      raw_entries_.push_back(raw_entry_text(e));
    }
    auto [slot, fresh] = by_key_.try_emplace(id->key, groups_.size());
    if (fresh) {
      groups_.emplace_back();
      groups_.back().key = id->key;
    }
    Group& g = groups_[slot->second];
    auto not_run_read = read_not_run(src_, i, e);
    if (!not_run_read) return not_run_read.error();
    if (const auto& not_run = *not_run_read) {
      if (!g.errored && !g.skipped) g.message = not_run->message;
      g.errored = g.errored || not_run->errored;
      g.skipped = g.skipped || not_run->skipped;
      return Done{};
    }
    if (!id->aggregate) return add_iteration(g, e, i, src_);
    const std::string& an = id->aggregate_name;
    if (g.aggregates.contains(an))
      return Error{src_, "duplicate benchmark \"" + printable(id->key) + "\" (aggregate " + printable(an) + " twice)"};
    // Only these three are read by the fold; any other (stddev, min, ...) is only counted.
    const bool read = an == "median" || an == "mean" || an == "cv";
    g.aggregates.emplace(an, read ? take(src_, i, e, true) : Taken{i, {}, 0.0, {}, {}, {}, {}, {}});
    return Done{};
  }

  const std::string& src_;
  const ReadOptions& opt_;
  std::optional<Error> error_;
  std::vector<Group> groups_;
  std::unordered_map<std::string, std::size_t> by_key_;
  std::vector<std::string> raw_keys_, raw_entries_;
};

}  // namespace

const Benchmark* Results::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &benchmarks[it->second];
}

std::string Results::context_value(const std::string& key) const {
  const auto it = context.find(key);
  return it == context.end() || it->second.empty() ? "unknown" : it->second;
}

void Results::reindex() {
  index_.clear();
  index_.reserve(benchmarks.size());
  for (std::size_t i = 0; i < benchmarks.size(); ++i) index_.emplace(benchmarks[i].name, i);
}

std::optional<double> ns_per_unit(std::string_view unit) {
  if (unit == "ns") return 1.0;
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  return std::nullopt;
}

std::string benchmark_key(std::string_view n) {
  static constexpr std::string_view kExact[] = {"manual_time", "real_time", "process_time"};
  static constexpr std::string_view kPrefix[] = {"min_time:", "min_warmup_time:", "iterations:", "repeats:"};
  while (true) {
    const std::size_t slash = n.rfind('/');
    if (slash == std::string_view::npos || slash == 0) break;
    const std::string_view last = n.substr(slash + 1);
    bool strip = std::find(std::begin(kExact), std::end(kExact), last) != std::end(kExact);
    for (const auto p : kPrefix) strip = strip || last.starts_with(p);
    if (!strip) break;
    n = n.substr(0, slash);
  }
  return std::string(n);
}

Sanitized sanitize_nonfinite(std::string_view in) {
  const NonFiniteSanitized s = sanitize_non_finite(in, {kNaNJson, kPosInfJson, kNegInfJson});
  return Sanitized{s.text, s.replaced, s.max_depth};
}

namespace {

// The loader's checks and the document; `owned`, when given, is the file's text, its pages
// released behind the scanner (a large file's text and its results are not kept at once), and
// `fs` reads the file again where a refusal must be worded from its whole text.
Expected<Results> parse_owned(std::string_view text, InputText* owned, const std::string& source,
                              const ReadOptions& options, const FileSystem* fs = nullptr) {
  const bool blank = std::all_of(text.begin(), text.end(),
                                 [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; });
  if (blank) return Error{source, "empty file"};
  if (text.size() > kMaxFileBytes) return Error{source, "file is larger than 1 GiB"};
  if (text.find('\0') != std::string_view::npos) return Error{source, "binary data (a NUL byte), not JSON"};
  // The one JSON loader (gpucheck/core/json_load.hpp): a key given twice (a user counter
  // named real_time after Google Benchmark's own) is an error, not the last one winning.
  static constexpr NonFiniteMarks kMarks{kNaNJson, kPosInfJson, kNegInfJson};
  json doc;
  std::string err;
  EntryReader entries(source, options);
  JsonStream stream;
  stream.list_key = "benchmarks";
  stream.element = [&entries](std::size_t i, const Flat* e, const json& other) { entries.entry(i, e, other); };
  JsonLoadOptions lo;
  lo.non_finite = &kMarks;
  lo.max_depth = kMaxJsonDepth;
  lo.stream = &stream;
  lo.release_behind = owned != nullptr && fs != nullptr;  // the file's text, dropped after the load
  if (lo.release_behind)
    lo.reread = [fs, &source](std::string* again) {
      auto t = fs->read(source, kMaxFileBytes);
      if (t) *again = std::move(*t);
      return t.ok();
    };
  if (!load_json(text, source, &doc, &err, lo)) return Error{source, err.substr(source.size() + 2)};
  if (owned != nullptr) owned->release();
  try {
    return entries.finish(doc, stream.count);
  } catch (const json::exception& e) {  // a type we did not expect somewhere: still one line
    return Error{source, "unexpected JSON content: " + printable(e.what(), 200)};
  }
}

// A file's text as the disk gave it: a file cut short while mapped read zeros past its new end,
// which would be refused as a NUL byte or worse; it is refused for what it is.
Expected<Results> parse_text(InputText* owned, const std::string& source, const ReadOptions& options,
                             const FileSystem& fs) {
  auto r = parse_owned(owned->text(), owned, source, options, &fs);
  owned->release();
  if (owned->cut()) return Error{source, "the file shrank while it was being read"};
  return r;
}

}  // namespace

Expected<Results> parse_results(std::string_view text, const std::string& source, const ReadOptions& options) {
  return parse_owned(text, nullptr, source, options);
}

std::optional<std::string> gate_folder_results(const FileSystem& fs, const std::string& dir) {
  const std::string results = join_path(dir, "results.json");
  if (fs.kind(results) == FileSystem::Kind::File && fs.kind(join_path(dir, "compare.json")) == FileSystem::Kind::File)
    return results;
  return std::nullopt;
}

Expected<Results> load_results(const FileSystem& fs, const std::string& path, const ReadOptions& options) {
  const auto kind = fs.kind(path);
  if (kind == FileSystem::Kind::Missing) return Error{path, "no such file or folder"};
  if (kind == FileSystem::Kind::Loop) return Error{path, "a symbolic link loop"};
  if (kind == FileSystem::Kind::Other) return fs.read(path, kMaxFileBytes).error();  // says what it is
  if (kind == FileSystem::Kind::File) {
    auto text = fs.read_text(path, kMaxFileBytes);
    if (!text) return text.error();
    return parse_text(&*text, path, options, fs);
  }
  if (const auto gate = gate_folder_results(fs, path)) return load_results(fs, *gate, options);
  auto names = fs.list(path);
  if (!names) return names.error();
  std::vector<Results> parts;
  for (const std::string& n : *names) {
    if (n.starts_with(".")) continue;
    const std::string full = join_path(path, n);
    const FileSystem::Kind k = fs.kind(full);
    if (k == FileSystem::Kind::Loop) return Error{full, "a symbolic link loop, inside the results folder " + path};
    if (k == FileSystem::Kind::Other) {  // the reader says what it is (a FIFO, a device, a socket)
      auto what = fs.read(full, kMaxFileBytes);
      return Error{full, (what ? std::string("not a regular file") : what.error().message) + ", inside the results folder " + path};
    }
    if (!n.ends_with(".json") || k != FileSystem::Kind::File)
      return Error{path, "folder holds \"" + printable(n) + "\", which is not a .json results file"};
    auto text = fs.read_text(full, kMaxFileBytes);
    if (!text) return text.error();
    auto r = parse_text(&*text, full, options, fs);
    if (!r) return r.error();
    parts.push_back(std::move(*r));
  }
  if (parts.empty()) return Error{path, "folder holds no .json results files"};
  return merge_results(std::move(parts), path);
}

}  // namespace gpucheck::compare
