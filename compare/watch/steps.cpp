#include "watch/steps.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "gpucheck/core/stats.hpp"

namespace gpucheck::compare::watch {

Expected<StepParser> StepParser::make(const std::string& regex) {
  std::string err;
  if (pcre2::load(&err) == nullptr) return Error{"--step", err};
  auto re = Pcre2Pattern::compile(regex, &err);
  if (!re) return Error{"--step", "not a regular expression: \"" + regex + "\" (" + err + ")"};
  return StepParser(std::move(re));
}

namespace {

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The number starting at or after `from`: [-]digits[.digits][e[+-]digits] or .digits.
std::optional<std::pair<double, std::size_t>> first_number(std::string_view s, std::size_t from) {
  for (std::size_t i = from; i < s.size(); ++i) {
    const bool starts = digit(s[i]) || (s[i] == '.' && i + 1 < s.size() && digit(s[i + 1]));
    if (!starts) continue;
    std::size_t j = i;
    while (j < s.size() && digit(s[j])) ++j;
    if (j < s.size() && s[j] == '.') {
      ++j;
      while (j < s.size() && digit(s[j])) ++j;
    }
    if (j + 1 < s.size() && (s[j] == 'e' || s[j] == 'E') && (digit(s[j + 1]) || ((s[j + 1] == '-' || s[j + 1] == '+') && j + 2 < s.size() && digit(s[j + 2])))) {
      j += 2;
      while (j < s.size() && digit(s[j])) ++j;
    }
    const std::string text(s.substr(i, j - i));
    return std::make_pair(std::strtod(text.c_str(), nullptr), j);
  }
  return std::nullopt;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The unit right after the number (spaces allowed): milliseconds per unit, 0 for a rate,
// nullopt for no unit we know (read as ms).
std::optional<double> unit_ms(std::string_view rest) {
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  auto word_ends = [&](std::size_t n) { return rest.size() == n || !std::isalpha(static_cast<unsigned char>(rest[n])); };
  // A rate: "it/s", "img/s", "samples/s", "/s".
  std::size_t k = 0;
  while (k < rest.size() && std::isalpha(static_cast<unsigned char>(rest[k]))) ++k;
  const std::string_view after = rest.substr(k);
  if (starts_with(after, "/s") && (after.size() == 2 || !std::isalpha(static_cast<unsigned char>(after[2]))) &&
      !starts_with(rest, "s/"))
    return 0.0;
  if (starts_with(rest, "s/it")) return 1000.0;
  if (starts_with(rest, "ms") && word_ends(2)) return 1.0;
  if (starts_with(rest, "us") && word_ends(2)) return 1e-3;
  if (starts_with(rest, "\xc2\xb5s") && word_ends(3)) return 1e-3;  // µs
  if (starts_with(rest, "ns") && word_ends(2)) return 1e-6;
  if (starts_with(rest, "sec") || (starts_with(rest, "s") && word_ends(1))) return 1000.0;
  return std::nullopt;
}

}  // namespace

StepLine StepParser::parse(std::string_view line) const {
  StepLine out;
  std::size_t from = 0, group1 = 0;
  switch (re_->search(line, &from, &group1)) {
    case Pcre2Pattern::Result::NoMatch: return out;
    case Pcre2Pattern::Result::Limit: out.kind = StepLine::Kind::Limit; return out;
    case Pcre2Pattern::Result::Match: break;
  }
  if (group1 != std::string_view::npos) from = group1;
  const auto num = first_number(line, from);
  if (!num) {
    out.kind = StepLine::Kind::NoNumber;
    return out;
  }
  const auto unit = unit_ms(line.substr(num->second));
  if (unit && *unit == 0.0) {
    out.kind = StepLine::Kind::Rate;
    return out;
  }
  if (!std::isfinite(num->first)) {
    out.kind = StepLine::Kind::NoNumber;
    return out;
  }
  out.kind = StepLine::Kind::Time;
  out.ms = num->first * unit.value_or(1.0);
  return out;
}

int warmup_steps(int seen) {
  if (seen < 3) return 0;
  return std::clamp(static_cast<int>(std::ceil(seen * 0.1)), 1, 10);
}

std::optional<double> percentile(std::vector<double> xs, double p) {
  if (xs.empty()) return std::nullopt;
  std::sort(xs.begin(), xs.end());
  const double pos = p / 100.0 * static_cast<double>(xs.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (xs[hi] - xs[lo]) * (pos - static_cast<double>(lo));
}

StepStats step_stats(const std::vector<double>& all_ms, int rate_lines, int unparsed_lines) {
  StepStats s;
  s.seen = static_cast<int>(all_ms.size());
  s.warmup = warmup_steps(s.seen);
  s.rate_lines = rate_lines;
  s.unparsed_lines = unparsed_lines;
  s.ms.assign(all_ms.begin() + s.warmup, all_ms.end());
  s.median_ms = gpucheck::median(s.ms);
  s.mean_ms = gpucheck::mean(s.ms);
  s.cv = gpucheck::coefficient_of_variation(s.ms);
  s.p10_ms = percentile(s.ms, 10);
  s.p90_ms = percentile(s.ms, 90);
  return s;
}

std::optional<gpucheck::watch::Window> steps_window(const std::vector<double>& at_s, const std::vector<double>& ms, int warmup) {
  if (at_s.size() != ms.size() || warmup < 0 || static_cast<std::size_t>(warmup) + 2 > at_s.size()) return std::nullopt;
  const double from = warmup > 0 ? at_s[static_cast<std::size_t>(warmup) - 1] : at_s.front() - ms.front() / 1e3;
  const double to = at_s.back();
  if (!(std::isfinite(from) && std::isfinite(to) && to > from)) return std::nullopt;
  return gpucheck::watch::Window{std::max(0.0, from), to};
}

}  // namespace gpucheck::compare::watch
