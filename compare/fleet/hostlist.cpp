// Slurm's host list syntax, expanded (scontrol show hostnames' order): comma-separated names at
// the top level, each with zero or more [a-b,c] groups. Every name's count is worked out from its
// ranges before one string is built, so a list over the cap is refused at once, whatever its
// ranges hold; a bound is at most 18 digits, so no count or value can overflow.
#include <algorithm>
#include <charconv>
#include <string>

#include "fleet/hostlist.hpp"

namespace gpucheck::compare::fleet {
namespace {

constexpr std::size_t kMaxDigits = 18;  // 10^18 - 1 fits an unsigned 64-bit value with room
constexpr std::size_t kMaxGroups = 8;   // [...] groups in one name (rack[1-4]-n[01-16] has two)

// "\"x\"", built by appending (g++ 12 warns, falsely, on "literal" + std::string at -O3).
std::string q(std::string_view x) {
  std::string s;
  s.reserve(x.size() + 2);
  s += '"';
  s.append(x);
  s += '"';
  return s;
}

struct Range {
  unsigned long long lo = 0, count = 0;  // lo, lo + 1, ..., lo + count - 1
  std::size_t width = 0;                 // the first bound's digits: zero padding
};

// One piece of a name: literal text, then the ranges of the bracket after it (none at the end).
struct Piece {
  std::string_view literal;
  std::vector<Range> ranges;
  unsigned long long count = 1;  // names the bracket adds (1: no bracket)
};

Expected<unsigned long long> bound(std::string_view s, std::string_view part, std::string_view whole) {
  if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }) && s.size() > kMaxDigits)
    return Error{"--expect", q(s) + std::string(" in ") + q(whole) + " has more than " + std::to_string(kMaxDigits) + " digits"};
  unsigned long long v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
    return Error{"--expect", q(part) + std::string(" in ") + q(whole) + " is not a number or range"};
  return v;
}

// "001-064,7" -> {001..064 (width 3), 7..7}, counted, not expanded.
Expected<std::vector<Range>> parse_ranges(std::string_view body, std::string_view whole) {
  std::vector<Range> out;
  std::size_t at = 0;
  while (at <= body.size()) {
    const std::size_t comma = std::min(body.find(',', at), body.size());
    const std::string_view part = body.substr(at, comma - at);
    at = comma + 1;
    const std::size_t dash = part.find('-');
    const std::string_view lo = part.substr(0, dash);
    const std::string_view hi = dash == std::string_view::npos ? lo : part.substr(dash + 1);
    auto a = bound(lo, part, whole);
    if (!a) return a.error();
    auto b = bound(hi, part, whole);
    if (!b) return b.error();
    if (*b < *a) return Error{"--expect", std::string("range ") + q(part) + " runs backwards"};
    out.push_back(Range{*a, *b - *a + 1, lo.size()});
  }
  return out;
}

// The name's pieces, each bracket's count; errors for unbalanced or nested brackets.
Expected<std::vector<Piece>> parse_name(std::string_view name) {
  std::vector<Piece> out;
  std::size_t at = 0;
  while (at <= name.size()) {
    const std::size_t open = name.find('[', at);
    Piece p;
    p.literal = name.substr(at, open == std::string_view::npos ? name.size() - at : open - at);
    if (p.literal.find(']') != std::string_view::npos) return Error{"--expect", std::string("unbalanced ']' in ") + q(name)};
    if (open == std::string_view::npos) {
      out.push_back(p);
      break;
    }
    const std::size_t close = name.find(']', open);
    if (close == std::string_view::npos) return Error{"--expect", std::string("unclosed '[' in ") + q(name)};
    const std::string_view body = name.substr(open + 1, close - open - 1);
    if (body.find('[') != std::string_view::npos) return Error{"--expect", std::string("nested '[' in ") + q(name)};
    auto ranges = parse_ranges(body, name);
    if (!ranges) return ranges.error();
    p.ranges = std::move(*ranges);
    p.count = 0;
    for (const Range& r : p.ranges) p.count = std::min<unsigned long long>(p.count + r.count, kMaxHostlistNames + 1);
    out.push_back(std::move(p));
    if (out.size() > kMaxGroups)
      return Error{"--expect", q(name) + " has more than " + std::to_string(kMaxGroups) + " [...] groups"};
    at = close + 1;
  }
  return out;
}

std::string padded(unsigned long long v, std::size_t width) {
  std::string s = std::to_string(v);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// The product of the pieces' ranges, in order (the last bracket varies fastest).
void expand_pieces(const std::vector<Piece>& pieces, std::size_t i, std::string& prefix, std::vector<std::string>& out) {
  const std::size_t keep = prefix.size();
  prefix.append(pieces[i].literal);
  if (pieces[i].ranges.empty()) {
    if (i + 1 == pieces.size()) out.push_back(prefix);
    else expand_pieces(pieces, i + 1, prefix, out);
  }
  for (const Range& r : pieces[i].ranges)
    for (unsigned long long k = 0; k < r.count; ++k) {
      const std::size_t at = prefix.size();
      prefix += padded(r.lo + k, r.width);
      if (i + 1 == pieces.size()) out.push_back(prefix);
      else expand_pieces(pieces, i + 1, prefix, out);
      prefix.resize(at);
    }
  prefix.resize(keep);
}

}  // namespace

Status append_hostlist(std::string_view list, std::vector<std::string>& out) {
  std::vector<std::vector<Piece>> names;  // every name parsed and counted before any is expanded
  std::size_t total = out.size();
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) return Error{"--expect", std::string("unbalanced ']' in ") + q(list)};
    if (c != ',' || depth > 0) continue;
    const std::string_view name = list.substr(start, i - start);
    start = i + 1;
    if (name.empty()) return Error{"--expect", std::string("an empty name in ") + q(list)};
    for (char ch : name)
      if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '/' || static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
        return Error{"--expect", q(name) + " is not a node name"};
    auto pieces = parse_name(name);
    if (!pieces) return pieces.error();
    unsigned long long count = 1;  // each factor at most the cap + 1: the product stays below 2^64
    for (const Piece& p : *pieces) count = std::min<unsigned long long>(count * p.count, kMaxHostlistNames + 1);
    if (count > kMaxHostlistNames - std::min(total, kMaxHostlistNames)) return Error{"--expect", "over a million names (at " + q(name) + ")"};
    total += count;
    names.push_back(std::move(*pieces));
  }
  if (depth != 0) return Error{"--expect", std::string("unclosed '[' in ") + q(list)};
  out.reserve(total);
  std::string prefix;
  for (const auto& pieces : names) expand_pieces(pieces, 0, prefix, out);
  return Done{};
}

Expected<std::vector<std::string>> expand_hostlist(std::string_view list) {
  std::vector<std::string> out;
  if (auto s = append_hostlist(list, out); !s) return s.error();
  return out;
}

}  // namespace gpucheck::compare::fleet
