// Shared pieces of the gpucheck commands: parsing, warnings and errors, colour, the step summary.
#include "base/args.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/format.hpp"
#include "gpucheck/core/options.hpp"
#include "gpucheck/core/text.hpp"

namespace gpucheck::compare::cli {

Expected<Args> parse_args(const std::vector<std::string>& in, std::size_t from, const OptionSet& known,
                          const std::string& command) {
  Args a;
  gpucheck::args::ParseError e;
  const std::span<const std::string> rest(in.data() + std::min(from, in.size()), in.size() - std::min(from, in.size()));
  if (gpucheck::args::parse(rest, known, &a, &e)) return a;
  if (e.message == "unknown option" && !e.hint)
    return Error{e.option, "unknown option" + (e.suggestion ? " (did you mean " + *e.suggestion + "?)"
                                                            : " (see gpucheck " + command + " --help)")};
  if (e.message == "unknown option") return Error{e.option, "unknown option (" + *e.hint + ")"};
  return Error{e.option, e.message};
}

std::optional<std::string> value(const Args& a, const std::string& key) { return a.value(key); }

bool flag(const Args& a, const std::string& key) { return a.flag(key); }

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

Expected<std::optional<Regex>> parse_filter(const Args& a) {
  const auto f = value(a, "--filter");
  if (!f) return std::optional<Regex>();
  if (f->empty()) return Error{"--filter", "needs a regular expression"};
  std::string why;
  std::optional<Regex> re = Regex::compile(*f, &why);
  if (!re) return Error{"--filter", "bad regular expression \"" + *f + "\": " + why};
  return re;
}

ExitStatus fail(CliOutput& io, const Error& e) {
  std::string line = "gpucheck: " + e.str();
  std::replace(line.begin(), line.end(), '\n', ' ');
  io.err += visible_text(line) + "\n";  // an argument's escape sequence never reaches the terminal raw
  return ExitStatus::BadInput;
}

void warn(CliOutput& io, const std::string& text) {
  std::string line = "gpucheck: warning: " + text;
  std::replace(line.begin(), line.end(), '\n', ' ');
  io.err += line + "\n";
}

namespace {
std::vector<std::string> data_file_candidates(const std::string& name) {
  const std::string exe = executable_dir();
  return {join_path("baselines", name), join_path((exe.empty() ? std::string(".") : exe) + "/../share/gpucheck", name)};
}
}  // namespace

std::optional<std::string> find_data_file(const FileSystem& fs, const std::optional<std::string>& given,
                                          const std::string& name) {
  if (given) return given;
  for (const std::string& p : data_file_candidates(name))
    if (fs.kind(p) == FileSystem::Kind::File) return p;
  return std::nullopt;
}

std::string data_file_places(const std::string& name) {
  std::string s = "looked for ";
  const std::vector<std::string> c = data_file_candidates(name);
  for (std::size_t i = 0; i < c.size(); ++i) s += (i == 0 ? "" : " and ") + c[i];
  return s;
}

OptionSet with(const OptionSet& a, const OptionSet& b) {
  OptionSet o = a;
  o.with_value.insert(b.with_value.begin(), b.with_value.end());
  o.flags.insert(b.flags.begin(), b.flags.end());
  o.repeatable.insert(b.repeatable.begin(), b.repeatable.end());
  o.aliases.insert(b.aliases.begin(), b.aliases.end());
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
