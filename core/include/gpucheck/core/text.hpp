// Text helpers shared by the core (sysfs files) and the tools (benchmark lists, logs, context
// values).
#pragma once
#include <string_view>

namespace gpucheck {

// `s` without leading and trailing ASCII whitespace (space, \t, \n, \v, \f, \r).
constexpr std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const std::size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

}  // namespace gpucheck
