// Edit distance with two rows: names here are short (options, keys, counters).
#include "gpucheck/compare/suggest.hpp"

#include <algorithm>

namespace gpucheck::compare {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const auto& c : candidates) {
    if (c == word) continue;
    const std::size_t d = edit_distance(word, c);
    const std::size_t longer = std::max(word.size(), c.size());
    if (d > 3 || d * 3 > longer) continue;
    if (!best || d < best_d) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const auto n = nearest(word, candidates);
  return n ? " (did you mean " + *n + "?)" : std::string();
}

}  // namespace gpucheck::compare
