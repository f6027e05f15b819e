// Slurm's host list syntax, expanded (scontrol show hostnames' order): comma-separated names at
// the top level, each with zero or more [a-b,c] groups.
#include <charconv>

#include "fleet/hostlist.hpp"

namespace gpucheck::compare::fleet {
namespace {

constexpr std::size_t kMaxNames = 1'000'000;

// "\"x\"", built by appending (g++ 12 warns, falsely, on "literal" + std::string at -O3).
std::string q(std::string_view x) {
  std::string s;
  s.reserve(x.size() + 2);
  s += '"';
  s.append(x);
  s += '"';
  return s;
}

// "001-064,7" -> {"001", ..., "064", "7"}
Expected<std::vector<std::string>> expand_ranges(std::string_view body, std::string_view whole) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= body.size()) {
    const std::size_t comma = std::min(body.find(',', at), body.size());
    const std::string_view part = body.substr(at, comma - at);
    at = comma + 1;
    const std::size_t dash = part.find('-');
    const std::string_view lo = part.substr(0, dash);
    const std::string_view hi = dash == std::string_view::npos ? lo : part.substr(dash + 1);
    unsigned long a = 0, b = 0;
    const auto r1 = std::from_chars(lo.data(), lo.data() + lo.size(), a);
    const auto r2 = std::from_chars(hi.data(), hi.data() + hi.size(), b);
    if (lo.empty() || hi.empty() || r1.ec != std::errc() || r1.ptr != lo.data() + lo.size() || r2.ec != std::errc() ||
        r2.ptr != hi.data() + hi.size())
      return Error{"--expect", q(part) + std::string(" in ") + q(whole) + " is not a number or range"};
    if (b < a) return Error{"--expect", std::string("range ") + q(part) + " runs backwards"};
    if (b - a >= kMaxNames) return Error{"--expect", std::string("range ") + q(part) + " is over a million names"};
    const std::size_t width = lo.size();
    for (unsigned long v = a; v <= b; ++v) {
      std::string s = std::to_string(v);
      if (s.size() < width) s.insert(0, width - s.size(), '0');
      out.push_back(std::move(s));
    }
  }
  return out;
}

Status expand_one(std::string_view name, std::vector<std::string>& out) {
  std::vector<std::string> acc{""};
  std::size_t at = 0;
  while (at < name.size()) {
    const std::size_t open = name.find('[', at);
    const std::string_view literal = name.substr(at, open == std::string_view::npos ? name.size() - at : open - at);
    if (literal.find(']') != std::string_view::npos) return Error{"--expect", std::string("unbalanced ']' in ") + q(name)};
    for (auto& a : acc) a += literal;
    if (open == std::string_view::npos) break;
    const std::size_t close = name.find(']', open);
    if (close == std::string_view::npos) return Error{"--expect", std::string("unclosed '[' in ") + q(name)};
    const std::string_view body = name.substr(open + 1, close - open - 1);
    if (body.find('[') != std::string_view::npos) return Error{"--expect", std::string("nested '[' in ") + q(name)};
    auto parts = expand_ranges(body, name);
    if (!parts) return parts.error();
    if (acc.size() * parts->size() > kMaxNames) return Error{"--expect", q(name) + " is over a million names"};
    std::vector<std::string> next;
    next.reserve(acc.size() * parts->size());
    for (const auto& a : acc)
      for (const auto& p : *parts) next.push_back(a + p);
    acc = std::move(next);
    at = close + 1;
  }
  if (out.size() + acc.size() > kMaxNames) return Error{"--expect", "over a million names"};
  for (auto& a : acc) out.push_back(std::move(a));
  return Done{};
}

}  // namespace

Expected<std::vector<std::string>> expand_hostlist(std::string_view list) {
  std::vector<std::string> out;
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
      if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '/')
        return Error{"--expect", q(name) + " is not a node name"};
    if (auto s = expand_one(name, out); !s) return s.error();
  }
  if (depth != 0) return Error{"--expect", std::string("unclosed '[' in ") + q(list)};
  return out;
}

}  // namespace gpucheck::compare::fleet
