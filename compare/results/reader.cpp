// Reads Google Benchmark JSON (1.7 and 1.8+) into the results model: one file, or a folder of
// them merged (results/writer.cpp). Every problem becomes one Error naming the file and the
// entry; nothing here throws past its boundary.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <numeric>
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

std::string entry_ref_of(std::size_t index, const json& e);

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
Expected<bool> strict_bool(const std::string& src, std::size_t index, const json& e, const char* key) {
  const auto it = e.find(key);
  if (it == e.end()) return false;
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

struct Entry {
  std::size_t index;  // position in "benchmarks", for messages
  const json* j;
};

struct Group {
  std::string key;
  std::vector<Entry> iterations;
  std::vector<long long> repetition_indices;
  std::map<std::string, Entry> aggregates;
  bool errored = false;
  bool skipped = false;
  std::string message;
  std::string first_unit;
};

std::string entry_ref(std::size_t index, const json& e) {
  std::string ref = "benchmark #" + std::to_string(index + 1);
  if (const auto it = e.find("name"); it != e.end() && it->is_string())
    ref += " \"" + printable(it->get_ref<const std::string&>()) + "\"";
  return ref;
}

std::string entry_ref_of(std::size_t index, const json& e) { return entry_ref(index, e); }

// Google Benchmark's own numeric fields: numbers (cpu_time like real_time may be a marker),
// counts whole and not negative; repetition_index below repetitions. A string "1000" where
// iterations belongs is a file something else wrote, and it is refused rather than guessed.
std::optional<Error> bad_reserved_field(const std::string& src, std::size_t index, const json& e) {
  const auto fail = [&](const std::string& what) { return Error{src, entry_ref(index, e) + ": " + what}; };
  if (const auto ct = e.find("cpu_time"); ct != e.end()) {
    const auto v = as_double(*ct);
    if (!v) return fail("cpu_time is " + type_name(*ct) + ", expected a number");
    if (std::isfinite(*v) && *v < 0) return fail("cpu_time is negative");
  }
  for (const char* key : {"iterations", "repetitions", "threads"}) {
    const auto it = e.find(key);
    if (it == e.end()) continue;
    if (!it->is_number_integer() || (it->is_number_integer() && !it->is_number_unsigned() && it->get<long long>() < 0))
      return fail(std::string(key) + " is " + (it->is_number() ? "not a whole number ≥ 0 (" + it->dump() + ")" : type_name(*it)) +
                  ", expected a count");
  }
  const auto ri = e.find("repetition_index");
  const auto reps = e.find("repetitions");
  if (ri != e.end() && reps != e.end() && ri->is_number_integer() && reps->is_number_integer() &&
      ri->get<long long>() >= reps->get<long long>())
    return fail("repetition_index " + ri->dump() + " is not below repetitions " + reps->dump());
  return std::nullopt;
}

// Time in ns from an entry that must hold a measured time.
Expected<double> read_time_ns(const std::string& src, std::size_t index, const json& e) {
  // The entry's reference is built only for an error (this runs for every entry).
  const auto fail = [&](const std::string& what) { return Error{src, entry_ref(index, e) + ": " + what}; };
  const auto rt = e.find("real_time");
  if (rt == e.end()) return fail("no real_time");
  const auto v = as_double(*rt);
  if (!v) return fail("real_time is " + type_name(*rt) + ", expected a number");
  if (std::isnan(*v)) return fail("real_time is NaN");
  if (!std::isfinite(*v)) return fail("real_time is infinite");
  if (*v < 0) return fail("real_time is negative");
  if (*v == 0) return fail("real_time is zero (and the run is not marked as errored)");
  if (*v < kMinTimeValue)
    return fail("real_time is " + rt->dump() + ", too small to be a measured time (every change against it would be infinite)");
  const auto tu = e.find("time_unit");
  if (tu == e.end()) return fail("no time_unit");
  if (!tu->is_string()) return fail("time_unit is " + type_name(*tu) + ", expected a string");
  const auto scale = ns_per_unit(tu->get_ref<const std::string&>());
  if (!scale)
    return fail("unknown time_unit \"" + printable(tu->get_ref<const std::string&>()) + "\" (expected ns, us, ms or s)");
  const double ns = *v * *scale;
  if (!std::isfinite(ns)) return fail("real_time overflows when converted to ns");
  if (ns < kMinTimeNs) return fail("real_time is " + rt->dump() + " " + tu->get<std::string>() + ", under 1 ps: not a measured time");
  return ns;
}

std::map<std::string, double> read_counters(const json& e) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : e.items()) {
    if (is_reserved(k)) continue;
    const auto d = as_double(v);
    if (d && std::isfinite(*d)) out.emplace(k, *d);  // a NaN counter is no value
  }
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
std::optional<Error> bad_counter(const std::string& src, std::size_t index, const json& e) {
  for (const auto& [k, v] : e.items()) {
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

std::string label_of(const json& e) {
  const auto l = e.find("label");
  return l != e.end() && l->is_string() ? printable(l->get_ref<const std::string&>(), 200) : std::string();
}

// Drops non-finite counters so a stored baseline is strict JSON any reader accepts.
std::string raw_entry_text(const json& e) {
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

// A median or mean aggregate that disagrees with the repetitions it summarises (beyond a
// relative 1e-6 plus the precision it was printed with): one of them is not what was measured.
std::optional<Error> disagreeing_aggregate(const std::string& src, const Group& g, const std::vector<double>& samples_ns) {
  for (const char* which : {"median", "mean"}) {
    const auto a = g.aggregates.find(which);
    if (a == g.aggregates.end()) continue;
    auto t = read_time_ns(src, a->second.index, *a->second.j);
    if (!t) return t.error();
    const double own = std::string_view(which) == "median"
                           ? gpucheck::median(samples_ns).value_or(0.0)
                           : std::accumulate(samples_ns.begin(), samples_ns.end(), 0.0) / static_cast<double>(samples_ns.size());
    const double raw = as_double(*a->second.j->find("real_time")).value_or(0.0);
    const double ns_per = raw != 0.0 ? *t / raw : 1.0;
    const double tolerance = 1e-6 * std::max(std::fabs(*t), std::fabs(own)) + printed_half_unit(raw) * ns_per;
    if (std::fabs(*t - own) > tolerance)
      return Error{src, "benchmark \"" + printable(g.key) + "\": its " + which + " aggregate (" + format_time_ns(*t) +
                            ") disagrees with the " + which + " of its " + std::to_string(samples_ns.size()) +
                            " repetitions (" + format_time_ns(own) + "): which one was measured?"};
  }
  return std::nullopt;
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
  std::map<std::string, double> first_counters;  // a single run's counters are the figure's
  for (const Entry& it : g.iterations) {
    auto t = read_time_ns(src, it.index, *it.j);
    if (!t) return t.error();
    b.samples_ns.push_back(*t);
    std::map<std::string, double> c = read_counters(*it.j);
    // Both maps are in key order: each insertion is at the hint (linear in the counters).
    auto at = b.counter_samples.begin();
    for (const auto& [k, v] : c) {
      at = b.counter_samples.try_emplace(at, k);
      (at++)->second.push_back(v);
    }
    if (b.samples_ns.size() == 1) first_counters = std::move(c);
  }
  const Entry* chosen = nullptr;
  if (!b.samples_ns.empty()) {
    // The figure is the repetitions' own; a stored median or mean must agree with them.
    b.real_time_ns = gpucheck::median(b.samples_ns).value_or(std::numeric_limits<double>::quiet_NaN());
    if (auto bad = disagreeing_aggregate(src, g, b.samples_ns)) return *bad;
    if (b.samples_ns.size() == 1) {
      b.counters = std::move(first_counters);
    } else {
      for (const auto& [k, v] : b.counter_samples) b.counters[k] = gpucheck::median(v).value_or(std::numeric_limits<double>::quiet_NaN());
    }
  } else if (auto m = g.aggregates.find("median"); m != g.aggregates.end()) {
    chosen = &m->second;
    auto t = read_time_ns(src, chosen->index, *chosen->j);
    if (!t) return t.error();
    b.real_time_ns = *t;
    b.counters = read_counters(*chosen->j);
  } else if (auto m2 = g.aggregates.find("mean"); m2 != g.aggregates.end()) {
    auto t = read_time_ns(src, m2->second.index, *m2->second.j);
    if (!t) return t.error();
    b.real_time_ns = *t;
    b.counters = read_counters(*m2->second.j);
  } else {
    return Error{src, "benchmark \"" + printable(g.key) +
                          "\": only spread aggregates, no run, median or mean to compare"};
  }
  const Entry& unit_from = chosen != nullptr ? *chosen : (g.iterations.empty() ? g.aggregates.begin()->second : g.iterations.front());
  b.label = label_of(g.iterations.empty() ? *unit_from.j : *g.iterations.front().j);
  if (const auto tu = unit_from.j->find("time_unit"); tu != unit_from.j->end() && tu->is_string())
    b.time_unit = tu->get<std::string>();
  b.repetitions = static_cast<int>(std::max<std::size_t>(1, g.iterations.size()));
  if (auto c = g.aggregates.find("cv"); c != g.aggregates.end()) {
    if (const auto rt = c->second.j->find("real_time"); rt != c->second.j->end()) {
      const auto v = as_double(*rt);
      if (v && std::isfinite(*v) && *v >= 0) b.cv = *v;
    }
    b.counter_cv = read_counters(*c->second.j);
    if (const auto reps = c->second.j->find("repetitions"); reps != c->second.j->end() && reps->is_number_integer())
      b.repetitions = std::max(b.repetitions, static_cast<int>(std::clamp<long long>(reps->get<long long>(), 1, 1 << 20)));
  }
  if (!b.cv) b.cv = gpucheck::coefficient_of_variation(b.samples_ns);
  return b;
}

// The envelope: an object with an optional "context" object and a non-empty "benchmarks" list.
Expected<const json*> read_envelope(const json& doc, const std::string& src, Results& r, bool keep_raw) {
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
  if (bl->empty()) return Error{src, "the \"benchmarks\" list is empty"};
  return &*bl;
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

Expected<EntryId> read_entry_id(const json& e, std::size_t i, const std::string& src) {
  const std::string ref = "benchmark #" + std::to_string(i + 1);
  if (!e.is_object()) return Error{src, ref + " is " + type_name(e) + ", expected an object"};
  const auto nm = e.find("name");
  if (nm == e.end()) return Error{src, ref + " has no name"};
  if (!nm->is_string()) return Error{src, ref + ": name is " + type_name(*nm) + ", expected a string"};
  const auto& name = nm->get_ref<const std::string&>();
  if (name.empty() || name[0] == '\x01') return Error{src, ref + ": name is empty"};
  if (auto bad = bad_name_text(name)) return Error{src, ref + ": name " + *bad};

  EntryId id;
  if (const auto rt = e.find("run_type"); rt != e.end()) {
    if (!rt->is_string()) return Error{src, entry_ref(i, e) + ": run_type is " + type_name(*rt) + ", expected a string"};
    const std::string run_type = rt->get<std::string>();
    if (run_type != "iteration" && run_type != "aggregate")
      return Error{src, entry_ref(i, e) + ": unknown run_type \"" + printable(run_type) + "\""};
    id.aggregate = run_type == "aggregate";
  }
  if (id.aggregate) {
    const auto an = e.find("aggregate_name");
    if (an == e.end() || !an->is_string() || an->get_ref<const std::string&>().empty())
      return Error{src, entry_ref(i, e) + ": aggregate without an aggregate_name"};
    id.aggregate_name = an->get<std::string>();
  }
  std::string base = name;
  if (const auto rn = e.find("run_name"); rn != e.end()) {
    if (!rn->is_string() || rn->get_ref<const std::string&>().empty())
      return Error{src, entry_ref(i, e) + ": run_name is " + type_name(*rn) + ", expected a name"};
    base = rn->get<std::string>();
    if (auto bad = bad_name_text(base)) return Error{src, entry_ref(i, e) + ": run_name " + *bad};
  } else if (id.aggregate) {
    const std::string suffix = "_" + id.aggregate_name;
    if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0)
      base.resize(base.size() - suffix.size());
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

Expected<std::optional<NotRun>> read_not_run(const std::string& src, std::size_t index, const json& e) {
  NotRun n;
  auto errored = strict_bool(src, index, e, "error_occurred");
  if (!errored) return errored.error();
  auto skipped = strict_bool(src, index, e, "skipped");
  if (!skipped) return skipped.error();
  n.errored = *errored;
  n.skipped = *skipped;
  if (!n.errored && !n.skipped) return std::optional<NotRun>();
  const char* msg_key = n.errored ? "error_message" : "skip_message";
  if (const auto m = e.find(msg_key); m != e.end() && m->is_string()) n.message = m->get<std::string>();
  if (constexpr std::string_view kUnsupported = contract::kUnsupportedPrefix; n.errored && n.message.starts_with(kUnsupported)) {
    n.errored = false;
    n.skipped = true;
    n.message.erase(0, kUnsupported.size());
  }
  return std::optional<NotRun>(n);
}

// One repetition of an iteration entry into its group: repetition indices are counts, and the
// same one twice (or an unindexed entry beside others) is the same benchmark twice.
Status add_iteration(Group& g, const json& e, std::size_t i, const std::string& src) {
  long long rep = -1;
  if (const auto ri = e.find("repetition_index"); ri != e.end()) {
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
  g.iterations.push_back(Entry{i, &e});
  return Done{};
}

Expected<Results> parse_document(const json& doc, const std::string& src, const ReadOptions& opt) {
  Results r;
  r.source = src;
  const auto envelope = read_envelope(doc, src, r, opt.keep_raw);
  if (!envelope) return envelope.error();
  const json& bl = **envelope;

  std::vector<Group> groups;
  std::unordered_map<std::string, std::size_t> by_key;
  std::vector<std::string> keys;
  if (opt.keep_raw) keys.reserve(bl.size());
  for (std::size_t i = 0; i < bl.size(); ++i) {
    const json& e = bl[i];
    auto id = read_entry_id(e, i, src);
    if (!id) return id.error();
    if (auto bad = bad_counter(src, i, e)) return *bad;
    if (auto bad = bad_reserved_field(src, i, e)) return *bad;
    if (opt.keep_raw) keys.push_back(id->key);
    auto [slot, fresh] = by_key.try_emplace(id->key, groups.size());
    if (fresh) groups.push_back(Group{id->key, {}, {}, {}, false, false, {}, {}});
    Group& g = groups[slot->second];

    auto not_run_read = read_not_run(src, i, e);
    if (!not_run_read) return not_run_read.error();
    if (const auto& not_run = *not_run_read) {
      if (!g.errored && !g.skipped) g.message = not_run->message;
      g.errored = g.errored || not_run->errored;
      g.skipped = g.skipped || not_run->skipped;
    } else if (id->aggregate) {
      if (!g.aggregates.emplace(id->aggregate_name, Entry{i, &e}).second)
        return Error{src, "duplicate benchmark \"" + printable(id->key) + "\" (aggregate " +
                              printable(id->aggregate_name) + " twice)"};
    } else if (auto added = add_iteration(g, e, i, src); !added) {
      return added.error();
    }
  }

  r.benchmarks.reserve(groups.size());
  for (Group& g : groups) {
    auto b = fold(src, g);
    if (!b) return b.error();
    r.benchmarks.push_back(std::move(*b));
  }
  if (opt.keep_raw) {
    r.raw_entries.reserve(bl.size());
    for (const json& e : bl) r.raw_entries.push_back(raw_entry_text(e));
    r.raw_keys = std::move(keys);
  }
  r.reindex();
  return r;
}

}  // namespace

const Benchmark* Results::find(std::string_view name) const {
  const auto it = index_.find(std::string(name));
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

// The loader's checks and the document; `owned`, when given, is the text, released once the
// document holds it (a large file's text and its document are not kept at once).
Expected<Results> parse_text(std::string_view text, std::string* owned, const std::string& source,
                             const ReadOptions& options) {
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
  JsonLoadOptions lo;
  lo.non_finite = &kMarks;
  lo.max_depth = kMaxJsonDepth;
  if (!load_json(text, source, &doc, &err, lo)) return Error{source, err.substr(source.size() + 2)};
  if (owned != nullptr) std::string().swap(*owned);
  try {
    return parse_document(doc, source, options);
  } catch (const json::exception& e) {  // a type we did not expect somewhere: still one line
    return Error{source, "unexpected JSON content: " + printable(e.what(), 200)};
  }
}

}  // namespace

Expected<Results> parse_results(std::string_view text, const std::string& source, const ReadOptions& options) {
  return parse_text(text, nullptr, source, options);
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
    auto text = fs.read(path, kMaxFileBytes);
    if (!text) return text.error();
    return parse_text(*text, &*text, path, options);
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
    auto text = fs.read(full, kMaxFileBytes);
    if (!text) return text.error();
    auto r = parse_text(*text, &*text, full, options);
    if (!r) return r.error();
    parts.push_back(std::move(*r));
  }
  if (parts.empty()) return Error{path, "folder holds no .json results files"};
  return merge_results(std::move(parts), path);
}

}  // namespace gpucheck::compare
