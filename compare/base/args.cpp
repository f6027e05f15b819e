// Shared pieces of the gpucheck commands: parsing, warnings and errors, colour, the step summary.
#include "base/args.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/format.hpp"
#include "gpucheck/core/suggest.hpp"

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

OptionSet with(const OptionSet& a, const OptionSet& b) {
  OptionSet o = a;
  o.with_value.insert(b.with_value.begin(), b.with_value.end());
  o.flags.insert(b.flags.begin(), b.flags.end());
  o.repeatable.insert(b.repeatable.begin(), b.repeatable.end());
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
