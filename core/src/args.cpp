#include "gpucheck/core/args.hpp"

#include <algorithm>
#include <charconv>

#include "gpucheck/core/suggest.hpp"
#include "gpucheck/core/text.hpp"

namespace gpucheck::args {

std::optional<std::string> Parsed::value(const std::string& opt) const {
  const auto it = values.find(opt);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

bool Parsed::flag(const std::string& opt) const { return flags.count(opt) != 0; }

const std::vector<std::string>& Parsed::list(const std::string& opt) const {
  static const std::vector<std::string> kNone;
  const auto it = lists.find(opt);
  return it == lists.end() ? kNone : it->second;
}

std::string ParseError::str() const {
  // The option as typed may hold anything (a control character, 1 MB): one short line.
  std::string s = option.empty() ? message : visible_excerpt(option) + ": " + message;
  if (hint) s += " (" + *hint + ")";
  else if (suggestion) s += " (did you mean " + *suggestion + "?)";
  return s;
}

std::optional<std::string> foreign_flag_hint(std::string_view option) {
  struct Habit {
    std::string_view flag, hint;
  };
  static constexpr Habit kHabits[] = {
      {"-g", "nccl-tests' GPUs per process: gpucheck uses every visible GPU; pick them with CUDA_VISIBLE_DEVICES, "
             "or --devices LIST in gpucheck accept and watch"},
      {"--ngpus", "nccl-tests' GPUs per process: gpucheck uses every visible GPU; pick them with "
                  "CUDA_VISIBLE_DEVICES, or --devices LIST in gpucheck accept and watch"},
  };
  for (const Habit& h : kHabits)
    if (h.flag == option) return std::string(h.hint);
  return std::nullopt;
}

namespace {
bool fail(ParseError* err, std::string option, std::string message, std::optional<std::string> suggestion = {}) {
  if (err) {
    std::optional<std::string> hint = message == "unknown option" ? foreign_flag_hint(option) : std::nullopt;
    *err = ParseError{std::move(option), std::move(message), std::move(suggestion), std::move(hint)};
  }
  return false;
}

bool starts_with_any(std::string_view s, const std::vector<std::string>& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return s.starts_with(p); });
}
}  // namespace

bool parse(std::span<const std::string> in, const OptionSet& known, Parsed* out, ParseError* err) {
  Parsed p;
  bool only_positional = false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::string& s = in[i];
    if (only_positional || s.size() < 2 || s[0] != '-') {
      if (known.pass_unknown) p.passed.push_back(i);
      else p.positional.push_back(s);
      continue;
    }
    if (s == "--") {
      if (known.pass_unknown) {
        for (; i < in.size(); ++i) p.passed.push_back(i);
        break;
      }
      only_positional = true;
      continue;
    }
    if (starts_with_any(s, known.pass_prefixes)) {
      p.passed.push_back(i);
      continue;
    }
    std::string key = s;
    std::optional<std::string> inline_value;
    if (const auto eq = s.find('='); eq != std::string::npos) {
      key = s.substr(0, eq);
      inline_value = s.substr(eq + 1);
    }
    if (const auto alias = known.aliases.find(key); alias != known.aliases.end()) key = alias->second;
    const bool repeatable = known.repeatable.count(key) != 0;
    const std::size_t at = i;
    if (repeatable || known.with_value.count(key) != 0) {
      if (!repeatable && !known.last_wins && p.values.count(key) != 0) return fail(err, key, "given twice");
      if (!inline_value && i + 1 >= in.size()) return fail(err, key, "needs a value");
      std::string v = inline_value ? *inline_value : in[++i];
      if (repeatable) p.lists[key].push_back(std::move(v));
      else p.values[key] = std::move(v);
    } else if (known.flags.count(key) != 0) {
      if (inline_value) return fail(err, key, "takes no value");
      p.flags.insert(key);
    } else if (known.pass_unknown) {
      p.passed.push_back(i);
      continue;
    } else {
      std::vector<std::string> names(known.with_value.begin(), known.with_value.end());
      names.insert(names.end(), known.flags.begin(), known.flags.end());
      names.insert(names.end(), known.repeatable.begin(), known.repeatable.end());
      return fail(err, key, "unknown option", nearest(key, names));
    }
    if (known.pass_also.count(key) != 0)
      for (std::size_t j = at; j <= i; ++j) p.passed.push_back(j);
  }
  *out = std::move(p);
  return true;
}

std::vector<std::string> from_argv(int argc, char* const* argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) out.emplace_back(argv[i]);
  return out;
}

void keep_passed(int* argc, char** argv, const Parsed& p) {
  std::vector<char*> keep{argv[0]};
  for (std::size_t i : p.passed) keep.push_back(argv[i + 1]);
  for (std::size_t j = 0; j < keep.size(); ++j) argv[j] = keep[j];
  *argc = static_cast<int>(keep.size());
  argv[*argc] = nullptr;
}

std::optional<long long> to_integer(std::string_view s) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> to_number(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace gpucheck::args
