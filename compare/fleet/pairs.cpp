// A node that passes with anyone is good (an all-reduce between two nodes is as slow as its
// slower end); a node that fails beside a good node is at fault. Everything else is a suspect
// and goes beside a good node in the next round.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "fleet/pairs.hpp"

namespace gpucheck::compare::fleet {

std::vector<NodePair> first_round(const std::vector<std::string>& nodes) {
  std::vector<NodePair> out;
  for (std::size_t i = 0; i + 1 < nodes.size(); i += 2) out.push_back({nodes[i], nodes[i + 1]});
  if (nodes.size() % 2 == 1 && nodes.size() > 1) out.push_back({nodes.back(), nodes.front()});
  return out;
}

Expected<Isolation> isolate(const std::vector<std::string>& nodes, const std::vector<PairResult>& results) {
  const std::set<std::string> known(nodes.begin(), nodes.end());
  std::set<std::string> good, tested;
  std::map<std::pair<std::string, std::string>, bool> verdicts;  // a pair in either order
  for (const PairResult& r : results) {
    for (const std::string* n : {&r.pair.a, &r.pair.b})
      if (!known.count(*n)) return Error{"pairs", "a result names \"" + *n + "\", not one of the nodes given"};
    if (r.pair.a == r.pair.b) return Error{"pairs", "\"" + r.pair.a + "\" is paired with itself"};
    const auto [it, added] = verdicts.emplace(std::minmax(r.pair.a, r.pair.b), r.passed);
    if (!added && it->second != r.passed)
      return Error{"pairs", "the pair \"" + r.pair.a + " " + r.pair.b + "\" is given as both pass and fail"};
    tested.insert(r.pair.a);
    tested.insert(r.pair.b);
    if (r.passed) {
      good.insert(r.pair.a);
      good.insert(r.pair.b);
    }
  }
  std::set<std::string> bad;
  Isolation iso;
  for (const auto& [pair, passed] : verdicts)  // each failed pair once, whatever order it was given in
    if (!passed) {
      const bool a_good = good.count(pair.first) != 0, b_good = good.count(pair.second) != 0;
      if (a_good && !b_good) bad.insert(pair.second);
      if (b_good && !a_good) bad.insert(pair.first);
      if (a_good && b_good) iso.unexplained.push_back({pair.first, pair.second});
    }
  for (const std::string& n : nodes) {  // in the order given
    if (good.count(n)) iso.good.push_back(n);
    else if (bad.count(n)) iso.bad.push_back(n);
    else if (tested.count(n)) iso.suspects.push_back(n);
    else iso.untested.push_back(n);
  }
  // Each suspect beside a good node; with fewer good nodes than suspects, the good ones serve
  // again (a later slot of the same round: listed after the first pass through them).
  for (std::size_t i = 0; i < iso.suspects.size() && !iso.good.empty(); ++i)
    iso.next_round.push_back({iso.suspects[i], iso.good[i % iso.good.size()]});
  return iso;
}

Expected<std::vector<PairResult>> parse_pair_results(std::string_view text, const std::string& source) {
  std::vector<PairResult> out;
  std::istringstream in{std::string(text)};
  std::string line;
  int no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string a, b, verdict, extra;
    if (!(words >> a)) continue;
    if (!(words >> b >> verdict) || (words >> extra) || (verdict != "pass" && verdict != "fail"))
      return Error{source, "line " + std::to_string(no) + ": expected \"NODE NODE pass\" or \"NODE NODE fail\""};
    out.push_back({{a, b}, verdict == "pass"});
  }
  return out;
}

}  // namespace gpucheck::compare::fleet
