#include "gpucheck/core/axes.hpp"

#include <array>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "gpucheck/core/dtype.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/regex.hpp"
#include "gpucheck/core/suggest.hpp"
#include "gpucheck/core/text.hpp"

namespace gpucheck::axes {
namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

bool checked_mul(std::int64_t a, std::int64_t b, std::int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// Unit suffixes of a size: binary (KiB, K as nccl-tests writes it) and decimal (KB).
struct Unit {
  std::string_view suffix;
  std::int64_t scale;
};
constexpr std::int64_t K2 = 1024, K10 = 1000;
constexpr std::array<Unit, 14> kUnits{{{"KiB", K2},
                                       {"MiB", K2 * K2},
                                       {"GiB", K2 * K2 * K2},
                                       {"TiB", K2 * K2 * K2 * K2},
                                       {"KB", K10},
                                       {"MB", K10 * K10},
                                       {"GB", K10 * K10 * K10},
                                       {"TB", K10 * K10 * K10 * K10},
                                       {"K", K2},
                                       {"M", K2 * K2},
                                       {"G", K2 * K2 * K2},
                                       {"T", K2 * K2 * K2 * K2},
                                       {"k", K2},
                                       {"B", 1}}};

bool parse_int(std::string_view s, std::int64_t* out) {
  if (s.empty()) return false;
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return false;
  *out = v;
  return true;
}

// Text from the command line as an error line quotes it: one short line, nothing raw.
std::string shown(std::string_view s) { return visible_excerpt(s); }

std::string kind_word(Kind k) {
  switch (k) {
    case Kind::integer: return "a whole number";
    case Kind::bytes: return "a size (4096, 4KiB, 1GiB)";
    case Kind::dtype: return "a dtype";
    case Kind::word: return "one of its values";
    case Kind::boolean: return "true or false";
  }
  return "?";
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Splits at commas outside brackets: "[1:4],8" -> "[1:4]", "8".
std::vector<std::string_view> split_list(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] == '[') ++depth;
    if (i < s.size() && s[i] == ']') --depth;
    if (i == s.size() || (s[i] == ',' && depth == 0)) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string bound_text(const Axis& a, std::int64_t v) {
  return a.kind == Kind::bytes && v > 0 ? bytes_label(static_cast<std::uint64_t>(v)) : std::to_string(v);
}

// One scalar of a numeric axis: a number (with a unit on a bytes axis).
bool scalar(const Axis& a, std::string_view s, std::int64_t* v, std::string* err) {
  if (a.kind == Kind::bytes ? parse_size(s, v) : parse_int(s, v)) return true;
  std::int64_t ignored = 0;
  *err = a.kind == Kind::integer && parse_size(s, &ignored) ? "'" + shown(s) + "' has a unit; " + a.name +
                                                                  " is a count"
                                                            : "'" + shown(s) + "' is not " + kind_word(a.kind);
  return false;
}

// The numbers one item names: N, [a:b], [a:b:s], [a,b,c], 2^N, 2^[a:b(:s)]; exponents when pow2.
// `budget`: the most values the item may name (what is left of kMaxCases for the list).
bool numbers(const Axis& a, std::string_view item, bool pow2, std::size_t budget, std::vector<std::int64_t>* out,
             std::string* err) {
  bool exp = pow2;
  if (item.substr(0, 2) == "2^") {
    if (pow2) {
      *err = "'" + shown(item) + "': 2^ inside [pow2] (give the exponents only)";
      return false;
    }
    exp = true;
    item.remove_prefix(2);
  }
  // Exponents are plain integers; sizes only where the item is a value itself.
  Axis as = a;
  if (exp) as.kind = Kind::integer;
  std::vector<std::int64_t> raw;
  if (!item.empty() && item.front() == '[') {
    if (item.back() != ']') {
      *err = "'" + shown(item) + "' opens a range without closing it";
      return false;
    }
    const std::string_view body = item.substr(1, item.size() - 2);
    if (body.find(',') != std::string_view::npos) {  // nvbench's [a,b,c]
      for (std::string_view x : split_list(body)) {
        std::int64_t v = 0;
        if (!scalar(as, x, &v, err)) return false;
        raw.push_back(v);
      }
    } else {
      std::vector<std::string_view> parts;
      std::size_t start = 0;
      for (std::size_t i = 0; i <= body.size(); ++i)
        if (i == body.size() || body[i] == ':') {
          parts.push_back(body.substr(start, i - start));
          start = i + 1;
        }
      if (parts.size() < 2 || parts.size() > 3) {
        *err = "'" + shown(item) + "' is not a range [start:stop] or [start:stop:step]";
        return false;
      }
      std::int64_t lo = 0, hi = 0, step = 1;
      if (!scalar(as, parts[0], &lo, err) || !scalar(as, parts[1], &hi, err)) return false;
      if (parts.size() == 3 && !scalar(as, parts[2], &step, err)) return false;
      if (step <= 0) {
        *err = "'" + shown(item) + "': the step must be positive";
        return false;
      }
      if (lo > hi) {
        *err = "'" + shown(item) + "' is an empty range (start after stop)";
        return false;
      }
      // In uint64: hi - lo of [-9e18:9e18] does not fit in int64, and a range is counted
      // before any value of it is made.
      const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
      if (span / static_cast<std::uint64_t>(step) >= budget) {  // +1 first would wrap at [INT64_MIN:INT64_MAX]
        *err = "'" + shown(item) + (budget == kMaxCases ? "' has more than " : "' takes the list past ") +
               std::to_string(kMaxCases) + " values";
        return false;
      }
      const std::uint64_t count = span / static_cast<std::uint64_t>(step) + 1;
      for (std::uint64_t i = 0; i < count; ++i)
        raw.push_back(static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + i * static_cast<std::uint64_t>(step)));
    }
  } else {
    std::int64_t v = 0;
    if (!scalar(as, item, &v, err)) return false;
    raw.push_back(v);
  }
  for (std::int64_t v : raw) {
    if (!exp) {
      out->push_back(v);
      continue;
    }
    if (v < 0 || v > 62) {
      *err = "2^" + std::to_string(v) + " is out of range (exponents 0 to 62)";
      return false;
    }
    out->push_back(std::int64_t{1} << v);
  }
  return true;
}

bool word_value(const Axis& a, std::string_view s, Value* v, std::string* err) {
  std::string w(s);
  if (a.kind == Kind::boolean) {
    if (w == "true" || w == "1" || w == "yes") *v = {1, "true"};
    else if (w == "false" || w == "0" || w == "no") *v = {0, "false"};
    else {
      *err = "'" + shown(w) + "' is not true or false";
      return false;
    }
    return true;
  }
  for (const std::string& known : a.words)
    if (known == w) {
      *v = {0, w};
      return true;
    }
  *err = "'" + shown(w) + "' is not one of " + join(a.words);
  return false;
}

std::vector<std::string> names_of(const std::vector<Axis>& axes) {
  std::vector<std::string> out;
  for (const Axis& a : axes) out.push_back(a.name);
  return out;
}

std::string fail_line(std::string_view family, const std::vector<Axis>& axes, const std::string& arg,
                      const std::string& why) {
  return "--axis " + shown(arg) + ": " + why + " (" + std::string(family) + "'s axes: " + axis_names(axes) + ")";
}

}  // namespace

const Value& Point::at(std::string_view name) const {
  if (names)
    for (std::size_t i = 0; i < names->size() && i < values.size(); ++i)
      if ((*names)[i] == name) return values[i];
  throw std::out_of_range("no axis " + std::string(name));
}

bool parse_size(std::string_view s, std::int64_t* out) {
  std::int64_t scale = 1;
  for (const Unit& u : kUnits)
    if (s.size() > u.suffix.size() && s.substr(s.size() - u.suffix.size()) == u.suffix) {
      scale = u.scale;
      s.remove_suffix(u.suffix.size());
      break;
    }
  std::int64_t v = 0;
  return parse_int(s, &v) && checked_mul(v, scale, out);
}

bool parse_override(std::string_view arg, Override* out, std::string* err) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string_view::npos) {
    *err = "--axis " + shown(arg) + ": wants NAME=VALUES (M=1024,4096, seq_q=2^[10:13], bytes=[4KiB:1GiB])";
    return false;
  }
  Override o;
  o.arg = std::string(arg);
  std::string_view name = arg.substr(0, eq);
  constexpr std::string_view pow2 = "[pow2]";
  if (name.size() >= pow2.size() && name.substr(name.size() - pow2.size()) == pow2) {
    o.pow2 = true;
    name.remove_suffix(pow2.size());
  }
  if (name.empty()) {
    *err = "--axis " + shown(o.arg) + ": the axis has no name";
    return false;
  }
  o.name = std::string(name);
  o.values = std::string(arg.substr(eq + 1));
  *out = std::move(o);
  return true;
}

bool expand(const Axis& a, std::string_view values, bool pow2, std::vector<Value>* out, std::string* err) {
  std::vector<Value> vs;
  std::set<std::string> seen;  // a duplicate would register one name twice
  std::size_t named = 0;       // values the items named so far, duplicates included
  auto add = [&vs, &seen](Value v) {
    if (seen.insert(v.text).second) vs.push_back(std::move(v));
  };
  const bool numeric = a.kind == Kind::integer || a.kind == Kind::bytes;
  if (pow2 && !numeric) {
    *err = a.name + "[pow2]: " + a.name + " is not a number";
    return false;
  }
  std::string_view body = values;
  // nvbench writes a list in brackets too: T=[F16,F32]; for numbers [a,b] is handled as a list item.
  if (!numeric && body.size() >= 2 && body.front() == '[' && body.back() == ']') body = body.substr(1, body.size() - 2);
  for (std::string_view item : split_list(body)) {
    // Counted before dedup, so that a list of many large ranges stops at kMaxCases named
    // values, not after making every one (a 100 KB list of [1:99999] was minutes and GBs).
    if (named >= kMaxCases) {
      *err = "'" + shown(values) + "' names more than " + std::to_string(kMaxCases) + " values";
      return false;
    }
    if (item.empty()) {
      *err = values.empty() ? "no values" : "an empty value in '" + shown(values) + "'";
      return false;
    }
    if (!numeric) {
      Value v;
      if (!word_value(a, item, &v, err)) return false;
      ++named;
      add(std::move(v));
      continue;
    }
    std::vector<std::int64_t> ns;
    if (!numbers(a, item, pow2, kMaxCases - named, &ns, err)) return false;
    named += ns.size();
    for (std::int64_t n : ns) {
      if (n < a.min || n > a.max) {
        *err = std::to_string(n) + " is out of range for " + a.name + " (" + bound_text(a, a.min) + " to " +
               bound_text(a, a.max) + ")";
        return false;
      }
      add({n, a.kind == Kind::bytes ? bytes_label(static_cast<std::uint64_t>(n)) : std::to_string(n)});
    }
  }
  if (vs.size() > kMaxCases) {
    *err = "more than " + std::to_string(kMaxCases) + " values";
    return false;
  }
  *out = std::move(vs);
  return true;
}

namespace {

// The values `defaults` gives axis `a` ("" when it names none).
const std::string* default_of(const Values& defaults, const std::string& axis) {
  for (const auto& [name, values] : defaults)
    if (name == axis) return &values;
  return nullptr;
}

// The product of `given` and `defaults` over the axes: the one path of a suite's sets and of
// the user's -a. `suite`: a suite's own set, which may name an axis's suite_words.
bool product(std::string_view family, const std::vector<Axis>& axes, const std::vector<Override>& given,
             const Values& defaults, bool suite, std::vector<Point>* out, std::string* err) {
  std::vector<std::vector<Value>> values(axes.size());
  std::vector<bool> set(axes.size(), false);
  for (const Override& o : given) {
    std::size_t i = 0;
    while (i < axes.size() && axes[i].name != o.name) ++i;
    if (i == axes.size()) {
      *err = fail_line(family, axes, o.arg, "unknown axis '" + shown(o.name) + "'" + did_you_mean(o.name, names_of(axes)));
      return false;
    }
    if (set[i]) {
      *err = fail_line(family, axes, o.arg, shown(o.name) + " given twice (give one list: " + shown(o.name) + "=A,B)");
      return false;
    }
    Axis a = axes[i];
    if (suite) a.words.insert(a.words.end(), a.suite_words.begin(), a.suite_words.end());
    std::string why;
    if (!expand(a, o.values, o.pow2, &values[i], &why)) {
      *err = fail_line(family, axes, o.arg, why);
      return false;
    }
    set[i] = true;
  }
  std::vector<std::size_t> leader(axes.size(), axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const Axis& a = axes[i];
    if (!a.follows.empty()) {
      for (std::size_t j = 0; j < i; ++j)
        if (axes[j].name == a.follows) leader[i] = j;
      if (leader[i] == axes.size()) throw std::logic_error(a.name + " follows " + a.follows + ", not an earlier axis");
      if (!set[i]) continue;  // takes its leader's value in each point
    }
    if (set[i]) continue;
    const std::string* d = default_of(defaults, a.name);
    std::string why;
    if (!d || !expand(a, *d, false, &values[i], &why))
      throw std::logic_error(std::string(family) + " axis " + a.name + " default: " + (d ? why : "none"));
  }
  std::uint64_t total = 1;
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (leader[i] == axes.size() || set[i]) {
      total *= values[i].size();  // each at most kMaxCases, checked each step: no overflow
      if (total > kMaxCases) {
        *err = "--axis: the axes make more than " + std::to_string(kMaxCases) + " cases; narrow one (" +
               std::string(family) + "'s axes: " + axis_names(axes) + ")";
        return false;
      }
    }
  std::vector<std::size_t> free_axes;
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (leader[i] == axes.size() || set[i]) free_axes.push_back(i);
  auto names = std::make_shared<std::vector<std::string>>();
  for (const Axis& a : axes) names->push_back(a.name);
  std::vector<Point> points;
  std::vector<std::size_t> idx(axes.size(), 0);
  while (true) {
    Point p{std::vector<Value>(axes.size()), names};
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (leader[i] != axes.size() && !set[i]) {
        const Value& l = p.values[leader[i]];
        const Axis& a = axes[i];
        const std::int64_t n = a.follow ? a.follow(l.n) : l.n;
        p.values[i] = a.follow ? Value{n, std::to_string(n)} : l;
      } else {
        p.values[i] = values[i][idx[i]];
      }
    }
    points.push_back(std::move(p));
    // Odometer over the free axes (not followers), the last fastest.
    bool done = true;
    for (std::size_t k = free_axes.size(); k-- > 0;) {
      if (++idx[free_axes[k]] < values[free_axes[k]].size()) {
        done = false;
        break;
      }
      idx[free_axes[k]] = 0;
    }
    if (done) break;
  }
  *out = std::move(points);
  return true;
}

// A set of values as the overrides -a would make of it.
std::vector<Override> overrides_of(const Values& set) {
  std::vector<Override> out;
  for (const auto& [name, values] : set) out.push_back({name, false, values, name + "=" + values});
  return out;
}

}  // namespace

const SuiteAxes* CaseModel::find(Suite s) const {
  for (const SuiteAxes& x : suites)
    if (x.suite == s) return &x;
  return nullptr;
}

bool select(const CaseModel& model, Suite s, const std::vector<Override>& given, std::vector<Point>* out,
            std::string* err) {
  const SuiteAxes* suite = model.find(s);
  if (!given.empty() && (!suite || suite->defaults.empty())) {
    *err = "--axis " + shown(given.front().arg) + ": the " + std::string(to_string(s)) +
           " suite's cases are fixed (acceptance judges them); axes apply to --suite quick or full";
    return false;
  }
  if (!given.empty()) return product(model.family, model.axes, given, suite->defaults, false, out, err);
  out->clear();
  if (!suite) return true;
  for (const Values& set : suite->sets) {
    std::vector<Point> points;
    if (!product(model.family, model.axes, overrides_of(set), suite->defaults, true, &points, err)) return false;
    out->insert(out->end(), std::make_move_iterator(points.begin()), std::make_move_iterator(points.end()));
  }
  return true;
}

std::vector<Point> suite_points(const CaseModel& model, Suite s) {
  std::vector<Point> out;
  std::string err;
  if (!select(model, s, {}, &out, &err)) throw std::logic_error(model.family + " " + std::string(to_string(s)) + " suite: " + err);
  return out;
}

std::string axis_names(const std::vector<Axis>& axes) {
  std::string out;
  for (const Axis& a : axes) out += (out.empty() ? "" : ", ") + a.name;
  return out;
}

namespace {
std::string suite_default(const CaseModel& m, Suite s, const std::string& axis) {
  const SuiteAxes* x = m.find(s);
  const std::string* d = x ? default_of(x->defaults, axis) : nullptr;
  return d ? *d : std::string();
}
}  // namespace

std::string axes_help(const CaseModel& model) {
  std::string out;
  for (const Axis& a : model.axes) {
    std::string line = "  " + a.name;
    line.resize(std::max<std::size_t>(line.size() + 1, 14), ' ');
    line += a.help;
    if (a.kind == Kind::dtype || a.kind == Kind::word) line += " (" + join(a.words) + ")";
    if (!a.follows.empty()) line += "; follows " + a.follows + " unless given";
    else
      line += "; quick: " + suite_default(model, Suite::quick, a.name) + "; full: " + suite_default(model, Suite::full, a.name);
    out += line + "\n";
  }
  return out;
}

std::string listed_json(const CaseModel& model, Suite suite, const std::vector<Listed>& cases, bool reference) {
  constexpr std::array<std::string_view, 5> kinds{"integer", "bytes", "dtype", "word", "boolean"};
  nlohmann::ordered_json doc;
  doc["family"] = model.family;
  doc["suite"] = to_string(suite);
  doc["device"] = reference ? "reference" : "this";
  doc["axes"] = nlohmann::ordered_json::array();
  for (const Axis& a : model.axes) {
    nlohmann::ordered_json j;
    j["name"] = a.name;
    j["kind"] = kinds[static_cast<std::size_t>(a.kind)];
    j["help"] = a.help;
    if (!a.words.empty()) j["values"] = a.words;
    if (!a.follows.empty()) j["follows"] = a.follows;
    else
      j["defaults"] = {{"quick", suite_default(model, Suite::quick, a.name)}, {"full", suite_default(model, Suite::full, a.name)}};
    doc["axes"].push_back(std::move(j));
  }
  doc["cases"] = nlohmann::ordered_json::array();
  for (const Listed& c : cases) {
    nlohmann::ordered_json j;
    j["name"] = c.name;
    j["axes"] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : c.axes) j["axes"][k] = v;
    doc["cases"].push_back(std::move(j));
  }
  return doc.dump(2) + "\n";
}

bool filter_names(std::string_view filter, std::vector<Listed>* cases, std::string* err) {
  if (filter.empty() || filter == "all") return true;
  const std::string_view given = filter;
  const bool negate = filter.front() == '-';
  if (negate) filter.remove_prefix(1);
  if (negate && filter.empty()) {  // the empty regex matches every name: '-' alone would keep none
    *err = "--benchmark_filter=-: no regex after '-' (-REGEX keeps the names REGEX does not match)";
    return false;
  }
  std::string why;
  const std::optional<Regex> re = Regex::compile(std::string(filter), &why);
  if (!re) {
    *err = "--benchmark_filter=" + shown(given) + ": not a regex (" + why + ")";
    return false;
  }
  std::erase_if(*cases, [&](const Listed& c) { return re->search(c.name) == negate; });
  return true;
}

bool bytes_range_override(std::string_view min, std::string_view max, std::string_view factor, Override* out,
                          std::string* err) {
  std::int64_t lo = 0, hi = 0, f = 0;
  if (!parse_size(min, &lo) || lo <= 0) {
    *err = "-b " + shown(min) + ": wants a size (8, 4K, 1GiB)";
    return false;
  }
  if (!parse_size(max, &hi) || hi < lo) {
    *err = "-e " + shown(max) + ": wants a size at least -b's";
    return false;
  }
  if (!parse_int(factor, &f) || f < 2) {
    *err = "-f " + shown(factor) + ": wants a whole factor of 2 or more";
    return false;
  }
  std::string list;
  for (std::int64_t v = lo;;) {
    list += (list.empty() ? "" : ",") + std::to_string(v);
    if (!checked_mul(v, f, &v) || v > hi) break;
  }
  *out = {"bytes", false, list, "bytes=" + std::string(min) + ".." + std::string(max) + " (x" + std::string(factor) + ")"};
  return true;
}

}  // namespace gpucheck::axes
