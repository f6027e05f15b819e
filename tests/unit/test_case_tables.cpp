// The families' tables (benchmarks/cases/*.hpp) listed per suite without a GPU, against
// fixtures/case_names.txt: the names each family's code at b8ecbae registered per suite, in
// order (generated from that code before the tables became rows). A renamed case, a case
// moved to another suite or a changed order fails here. The binary may leave out what the
// device cannot hold (memory sizes under 4x L2) or register as skipped (fp8 before cc 8.9).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cases/attention.hpp"
#include "cases/bmm.hpp"
#include "cases/conv.hpp"
#include "cases/launch.hpp"
#include "cases/matmul.hpp"
#include "cases/memory.hpp"
#include "cases/pcie.hpp"
#include "gpucheck/core/contract.hpp"

namespace gpucheck {
namespace {

constexpr Suite kSuites[] = {Suite::quick, Suite::full, Suite::accept, Suite::burn};

// "suite<TAB>name" lines, families in the fixture's order.
std::vector<std::string> listed() {
  std::vector<std::string> out;
  auto add = [&](Suite s, const std::string& n) { out.push_back(std::string(to_string(s)) + "\t" + n); };
  for (Suite s : kSuites)
    for (const auto& c : matmul::rows())
      if (c.suites.has(s)) add(s, c.name());
  const auto variants = memory::variants(0, 0, 0, 0, 0);
  for (Suite s : kSuites)
    for (const auto& z : memory::sizes())
      for (const auto& v : variants)
        if (z.suites.has(s) && v.suites.has(s)) add(s, memory::case_name(v, z));
  for (Suite s : kSuites)
    for (const auto& c : pcie::rows())
      if (c.suites.has(s)) add(s, c.name());
  for (Suite s : kSuites)
    for (const auto& c : conv::rows())
      if (c.suites.has(s)) add(s, c.name());
  const auto backends = attention::backends(0, 0, 0, 0, 0, 0);
  for (Suite s : kSuites)
    for (const auto& c : attention::configs())
      for (const auto& b : backends)
        if (attention::pairs(c, b, s)) add(s, attention::case_name(c, b));
  const auto paths = bmm::paths(0, 0, 0, 0, 0, 0);
  for (Suite s : kSuites)
    for (const auto& sh : bmm::shapes())
      for (const auto& p : paths)
        if (sh.suites.has(s) && p.suites.has(s)) add(s, bmm::case_name(p, sh));
  const auto modes = launch::modes(0, 0, 0, 0, 0);
  for (Suite s : kSuites)
    for (const auto& c : launch::cases(modes, s)) add(s, c.name());
  return out;
}

TEST(CaseTables, EverySuiteListsTheNamesItRegisteredBefore) {
  std::ifstream in(GPUCHECK_CASE_NAMES);
  ASSERT_TRUE(in) << GPUCHECK_CASE_NAMES;
  std::vector<std::string> before;
  for (std::string line; std::getline(in, line);) before.push_back(line);
  const std::vector<std::string> now = listed();
  ASSERT_EQ(now.size(), before.size());
  for (std::size_t i = 0; i < now.size(); ++i) ASSERT_EQ(now[i], before[i]) << "line " << i + 1;
}

// Every name acceptance and the report judge by is one a family registers, in the suite
// that `gpucheck accept` runs (accept; the burn in burn).
TEST(CaseTables, TheJudgedNamesAreRegistered) {
  std::set<std::string> accept, burn, any;
  for (const std::string& l : listed()) {
    const std::string suite = l.substr(0, l.find('\t')), name = l.substr(l.find('\t') + 1);
    any.insert(name);
    if (suite == "accept") accept.insert(name);
    if (suite == "burn") burn.insert(name);
  }
  for (std::string_view k : contract::kAcceptGemmPeaks) EXPECT_EQ(accept.count(*contract::accept_gemm_name(k)), 1u) << k;
  for (std::string_view d : contract::kAcceptPcieDirections) EXPECT_EQ(accept.count(contract::accept_pcie_name(d)), 1u) << d;
  for (std::string_view v : contract::kAcceptMemoryVariants)
    EXPECT_EQ(accept.count(contract::accept_memory_name(v)), 1u) << v;
  EXPECT_EQ(burn.count(contract::burn_name()), 1u);
  // The report's pairs: each side is a segment some registered name has (the torch
  // reference's own names, fused/sdpa/einsum, come from ci/torch_reference.py).
  std::set<std::string> segments;
  for (const std::string& n : any)
    for (const std::string& s : split_name(n)) segments.insert(s);
  for (const auto& p : contract::kReportPairs)
    for (std::string_view side : {p.candidate, p.reference}) {
      if (side == "fused" || side == "sdpa" || side == "einsum" || side == "fp8") continue;
      EXPECT_EQ(segments.count(std::string(side)), 1u) << side;
    }
}

}  // namespace
}  // namespace gpucheck
