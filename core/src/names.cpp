#include "gpucheck/core/names.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <stdexcept>

namespace gpucheck {

std::string bench_name(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) {
    if (p.empty()) throw std::invalid_argument("benchmark name has an empty part");
    for (char c : p)
      if (c == '/' || std::isspace(static_cast<unsigned char>(c)))
        throw std::invalid_argument("benchmark name part '" + std::string(p) +
                                    "' contains '/' or whitespace");
    if (!out.empty()) out += '/';
    out += p;
  }
  if (out.empty()) throw std::invalid_argument("benchmark name has no parts");
  return out;
}

std::string shape_mnk(std::int64_t m, std::int64_t n, std::int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

namespace {
constexpr std::array<std::pair<std::string_view, int>, 5> kUnits{{
    {"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}};
}

std::string bytes_label(std::uint64_t bytes) {
  for (const auto& [unit, shift] : kUnits) {
    const std::uint64_t scale = std::uint64_t{1} << shift;
    if (bytes >= scale && bytes % scale == 0) return std::to_string(bytes / scale) + std::string(unit);
  }
  return std::to_string(bytes) + "B";  // zero
}

bool parse_bytes_label(std::string_view s, std::uint64_t* bytes) {
  for (const auto& [unit, shift] : kUnits) {
    if (s.size() <= unit.size() || s.substr(s.size() - unit.size()) != unit) continue;
    std::string_view num = s.substr(0, s.size() - unit.size());
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || ptr != num.data() + num.size()) return false;
    if (shift > 0 && v > (~std::uint64_t{0} >> shift)) return false;
    *bytes = v << shift;
    return true;
  }
  return false;
}

std::vector<std::string> split_name(std::string_view name) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = name.find('/', start);
    out.emplace_back(name.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string dotted_version(std::uint64_t v) {
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

}  // namespace gpucheck
