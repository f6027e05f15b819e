// `gpucheck fleet pairs`: a plan for NCCL across nodes, two nodes at a time. Round one pairs the
// nodes off; from its results (which pairs' all-reduce was slow or failed), round two pairs each
// node of a failed pair with a node that passed, so the node at fault is the one that fails
// again (cluster-health-scanner's method). Pure: names in, pairs and verdicts out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace gpucheck::compare::fleet {

struct NodePair {
  std::string a, b;
};

struct PairResult {
  NodePair pair;
  bool passed = false;
};

// Adjacent nodes paired in order; an odd count pairs the last node with the first as well.
std::vector<NodePair> first_round(const std::vector<std::string>& nodes);

struct Isolation {
  std::vector<std::string> good;      // in a pair that passed
  std::vector<std::string> bad;       // failed beside a good node: at fault
  std::vector<std::string> suspects;  // in failed pairs only, not yet told apart
  std::vector<NodePair> next_round;   // each suspect beside a distinct good node where there are enough
  std::vector<std::string> untested;  // in no result
  std::vector<NodePair> unexplained;  // failed though both nodes passed elsewhere: the path between them
};

// From every result so far (round one's, and round two's when given): who is good, who is at
// fault, and the next round that tells the suspects apart. Errors: a result naming a node not in
// `nodes`, a node paired with itself, one pair (in either order) given as both pass and fail.
Expected<Isolation> isolate(const std::vector<std::string>& nodes, const std::vector<PairResult>& results);

// "A B pass" / "A B fail" lines (# comments, blank lines): a round's results.
Expected<std::vector<PairResult>> parse_pair_results(std::string_view text, const std::string& source);

}  // namespace gpucheck::compare::fleet
