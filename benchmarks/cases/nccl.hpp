// bench_nccl's case model: the axes (collective, dtype, bytes as nccl-tests' -b/-e/-f or
// --axis, in_place, ranks) and the suites as values of them, the one place they are declared
// (names are baseline keys: tests/unit/test_collectives.cpp and test_case_tables.cpp hold
// them). Pure: --list reads it without a GPU, with the ranks of the job (one GPU on the
// reference machine). The suites:
//  quick:  all-reduce 1 MiB, 64 MiB, 1 GiB; all-gather and reduce-scatter 64 MiB; out of
//          place and, with two ranks or more, in place (one rank in place moves nothing);
//  full:   every collective from 8 B to 8 GiB by factors of 2, out of and in place;
//  accept: all-reduce 1 GiB out of place (the link's figure `gpucheck accept` judges);
//  burn:   none (the NCCL family has no sustained-load case).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/collectives.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"
#include "listing.hpp"

namespace gpucheck::nccl {

struct Case {
  CollectiveCase c;
  int ranks;  // of the case's name; a case for other ranks than the job's is skipped
  std::string name() const { return collective_case_name(c.coll, c.in_place, DType::fp32, c.bytes, ranks); }
  Coordinates coordinates() const {
    return {{"collective", std::string(collective_spec(c.coll).variant)},
            {"dtype", "fp32"},
            {"bytes", bytes_label(c.bytes)},
            {"in_place", c.in_place ? "true" : "false"},
            {"ranks", std::to_string(ranks)}};
  }
};

inline axes::CaseModel model() {
  using axes::Kind;
  using enum Suite;
  std::vector<std::string> names;
  for (const CollectiveSpec& s : collective_table()) names.emplace_back(s.variant);
  const std::string all = value_list(names), ar(collective_spec(Collective::all_reduce).variant);
  const std::string ag(collective_spec(Collective::all_gather).variant), rs(collective_spec(Collective::reduce_scatter).variant);
  axes::SuiteAxes q{quick,
                    {{"collective", all}, {"dtype", "fp32"}, {"bytes", "1MiB,64MiB,1GiB"}, {"in_place", "false"}, {"ranks", "0"}},
                    {}};
  for (const std::string b : {"1MiB", "64MiB", "1GiB"}) q.sets.push_back({{"collective", ar}, {"bytes", b}, {"in_place", "false,true"}});
  for (const std::string& c : {ag, rs}) q.sets.push_back({{"collective", c}, {"bytes", "64MiB"}, {"in_place", "false,true"}});
  axes::SuiteAxes f{full,
                    {{"collective", all}, {"dtype", "fp32"}, {"bytes", "2^[3:33]"}, {"in_place", "false,true"}, {"ranks", "0"}},
                    {{}}};
  const axes::SuiteAxes a{accept,
                          {},
                          {{{"collective", ar}, {"dtype", "fp32"}, {"bytes", bytes_label(contract::kAcceptNcclBytes)},
                            {"in_place", "false"}, {"ranks", "0"}}}};
  return {std::string(contract::family::nccl),
          {{"collective", Kind::word, "the NCCL call", names, 1, 1},
           {"dtype", Kind::dtype, "elements (the check's pattern is fp32)", {"fp32"}, 1, 1},
           {"bytes", Kind::bytes, "nominal size S (nccl-tests' -b/-e/-f)", {}, 1, std::int64_t{1} << 36},
           {"in_place", Kind::boolean, "output over the input", {}, 0, 1},
           {"ranks", Kind::integer, "GPUs of the job (0: all of them, the default)", {}, 0, 1 << 16}},
          {q, f, a}};
}

// A suite's cases (or the user's points), for a job of `nranks`. With one rank an in-place
// collective moves no data (a launch, no bandwidth): the gate's suite leaves it out; the full
// suite keeps it, as nccl-tests does.
inline std::vector<Case> cases(Suite s, const std::vector<axes::Point>* user, int nranks) {
  std::vector<Case> out;
  for (const axes::Point& p : points_of(model(), s, user)) {
    Collective coll = Collective::all_reduce;
    for (const CollectiveSpec& row : collective_table())
      if (row.variant == p.text("collective")) coll = row.id;
    const bool in_place = p.n("in_place") != 0;
    if (!user && s == Suite::quick && in_place && nranks == 1) continue;
    const int r = p.n("ranks") == 0 ? nranks : static_cast<int>(p.n("ranks"));
    out.push_back({{coll, in_place, static_cast<std::uint64_t>(p.n("bytes"))}, r});
  }
  return out;
}

}  // namespace gpucheck::nccl
