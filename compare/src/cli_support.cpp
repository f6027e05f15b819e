// Shared pieces of the gpucheck commands: parsing, the compare options, warnings and errors.
#include "cli_support.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "gpucheck/compare/render.hpp"
#include "gpucheck/compare/suggest.hpp"
#include "gpucheck/compare/thresholds.hpp"

namespace gpucheck::compare::cli {

Expected<Args> parse_args(const std::vector<std::string>& in, std::size_t from, const OptionSet& known,
                          const std::string& command) {
  Args a;
  bool only_positional = false;
  for (std::size_t i = from; i < in.size(); ++i) {
    const std::string& s = in[i];
    if (only_positional || s.size() < 2 || s[0] != '-') {
      a.positional.push_back(s);
      continue;
    }
    if (s == "--") {
      only_positional = true;
      continue;
    }
    std::string key = s;
    std::optional<std::string> inline_value;
    if (const auto eq = s.find('='); eq != std::string::npos) {
      key = s.substr(0, eq);
      inline_value = s.substr(eq + 1);
    }
    const bool repeatable = known.repeatable.count(key) != 0;
    if (repeatable || known.with_value.count(key) != 0) {
      if (!repeatable && a.values.count(key) != 0) return Error{key, "given twice"};
      if (!inline_value && i + 1 >= in.size()) return Error{key, "needs a value"};
      std::string v = inline_value ? *inline_value : in[++i];
      if (repeatable)
        a.lists[key].push_back(std::move(v));
      else
        a.values[key] = std::move(v);
    } else if (known.flags.count(key) != 0) {
      if (inline_value) return Error{key, "takes no value"};
      a.flags.insert(key);
    } else {
      std::vector<std::string> names(known.with_value.begin(), known.with_value.end());
      names.insert(names.end(), known.flags.begin(), known.flags.end());
      names.insert(names.end(), known.repeatable.begin(), known.repeatable.end());
      const std::string hint = did_you_mean(key, names);
      return Error{key, "unknown option" + (hint.empty() ? " (see gpucheck " + command + " --help)" : hint)};
    }
  }
  return a;
}

std::optional<std::string> value(const Args& a, const std::string& key) {
  const auto it = a.values.find(key);
  if (it == a.values.end()) return std::nullopt;
  return it->second;
}

bool flag(const Args& a, const std::string& key) { return a.flags.count(key) != 0; }

Expected<double> parse_number(const std::string& opt, const std::string& s, double lo, double hi) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || v <= lo || v >= hi)
    return Error{opt, "bad value \"" + s + "\""};
  return v;
}

Expected<int> parse_count(const std::string& opt, const std::string& s, int lo, int hi) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi)
    return Error{opt, "bad value \"" + s + "\": expected a whole number from " + std::to_string(lo) + " to " +
                          std::to_string(hi)};
  return v;
}

ExitStatus fail(CliOutput& io, const Error& e) {
  std::string line = "gpucheck: " + e.str();
  std::replace(line.begin(), line.end(), '\n', ' ');
  io.err += line + "\n";
  return ExitStatus::BadInput;
}

void warn(CliOutput& io, const std::string& text) {
  std::string line = "gpucheck: warning: " + text;
  std::replace(line.begin(), line.end(), '\n', ' ');
  io.err += line + "\n";
}

const OptionSet& compare_options() {
  static const OptionSet o{{"--metric", "--threshold", "--thresholds", "--alpha", "--min-repetitions"},
                           {"--higher-is-better", "--lower-is-better", "--allow-missing", "--no-thresholds"}};
  return o;
}

OptionSet with(const OptionSet& a, const OptionSet& b) {
  OptionSet o = a;
  o.with_value.insert(b.with_value.begin(), b.with_value.end());
  o.flags.insert(b.flags.begin(), b.flags.end());
  o.repeatable.insert(b.repeatable.begin(), b.repeatable.end());
  return o;
}

std::vector<std::string> thresholds_search_from(const std::string& baseline_path) {
  std::vector<std::string> out;
  std::string dir = parent_path(baseline_path);
  for (int up = 0; up < 3; ++up) {
    out.push_back(join_path(dir, "thresholds.json"));
    const std::string next = parent_path(dir);
    if (next == dir) break;
    dir = next;
  }
  return out;
}

namespace {

Expected<Thresholds> read_thresholds(const FileSystem& fs, const Args& a, const std::vector<std::string>& search) {
  std::optional<std::string> file = value(a, "--thresholds");
  if (file && flag(a, "--no-thresholds")) return Error{"--thresholds", "cannot be combined with --no-thresholds"};
  if (!file && !flag(a, "--no-thresholds")) {
    for (const std::string& cand : search) {
      if (fs.kind(cand) == FileSystem::Kind::File) {
        file = cand;
        break;
      }
    }
  }
  Thresholds t;
  if (file) {
    auto text = fs.read(*file, std::size_t{16} << 20);
    if (!text) return text.error();
    auto parsed = parse_thresholds(*text, *file);
    if (!parsed) return parsed.error();
    t = std::move(*parsed);
  }
  if (const auto th = value(a, "--threshold")) {
    auto pct = parse_percent(*th);
    if (!pct) return Error{"--threshold", pct.error().message};
    t.default_pct = *pct;
  }
  return t;
}

}  // namespace

Expected<CompareOptions> read_compare_options(const FileSystem& fs, const Args& a, const std::vector<std::string>& search) {
  CompareOptions o;
  o.metric = value(a, "--metric").value_or("real_time");
  if (o.metric.empty()) return Error{"--metric", "needs a counter name"};
  const bool hib = flag(a, "--higher-is-better");
  const bool lib = flag(a, "--lower-is-better");
  if (hib && lib) return Error{"--higher-is-better", "cannot be combined with --lower-is-better"};
  if (hib || lib) {
    o.direction = hib ? Direction::HigherIsBetter : Direction::LowerIsBetter;
  } else if (const auto d = direction_for(o.metric)) {
    o.direction = *d;
  } else {
    return Error{"--metric", "cannot tell whether more " + o.metric +
                                 " is better; add --higher-is-better or --lower-is-better"};
  }
  if (const auto al = value(a, "--alpha")) {
    auto v = parse_number("--alpha", *al, 0.0, 1.0);
    if (!v) return v.error();
    o.alpha = *v;
  }
  if (const auto mr = value(a, "--min-repetitions")) {
    auto v = parse_count("--min-repetitions", *mr, 2, 1000000);
    if (!v) return v.error();
    o.min_repetitions_for_test = *v;
  }
  o.allow_missing = flag(a, "--allow-missing");
  auto t = read_thresholds(fs, a, search);
  if (!t) return t.error();
  o.thresholds = std::move(*t);
  return o;
}

void append_step_summary(FileSystem& fs, const CliEnvironment& env, CliOutput& io, const std::string& markdown) {
  if (!env.step_summary_path || env.step_summary_path->empty()) return;
  if (auto w = fs.append(*env.step_summary_path, markdown + "\n"); !w)
    warn(io, "GITHUB_STEP_SUMMARY not written: " + w.error().str() + " (the verdict stands)");
}

Expected<bool> colour_from(const Args& a, const CliEnvironment& env) {
  const std::string color = value(a, "--color").value_or("auto");
  if (color != "auto" && color != "always" && color != "never")
    return Error{"--color", "expected auto, always or never"};
  return color == "always" || (color == "auto" && env.stdout_is_tty && !env.no_color);
}

}  // namespace gpucheck::compare::cli
