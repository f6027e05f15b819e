// Edit distance over three rows of the table: names here are short (options, keys, counters).
#include "gpucheck/core/suggest.hpp"

#include <algorithm>

namespace gpucheck {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  // Three rows: the swap of two neighbours looks two rows back.
  std::vector<std::size_t> two(m + 1), one(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) one[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({one[j] + 1, cur[j - 1] + 1, one[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], two[j - 2] + 1);
    }
    std::swap(two, one);
    std::swap(one, cur);
  }
  return one[m];
}

std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates) {
  // The same word in another case ("tflops" for TFLOPS) is the likeliest meaning of all.
  auto lower = [](std::string_view s) {
    std::string r(s);
    for (char& ch : r) ch = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
    return r;
  };
  const std::string lw = lower(word);
  for (const auto& c : candidates)
    if (c != word && lower(c) == lw) return c;
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

}  // namespace gpucheck
