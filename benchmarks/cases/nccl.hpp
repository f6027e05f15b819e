// bench_nccl's cases: core's collective_rows() (the suites), or the user's axes (collective,
// dtype, bytes as nccl-tests' -b/-e/-f or --axis, in_place, ranks). Pure: --list reads it
// without a GPU, with the ranks of the job (one GPU on the reference machine).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/collectives.hpp"
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

inline std::vector<axes::Axis> axis_table() {
  using axes::Kind;
  std::vector<std::string> names;
  for (const CollectiveSpec& s : collective_table()) names.emplace_back(s.variant);
  return {
      {"collective", Kind::word, "the NCCL call", names, 1, 1, "allreduce,allgather,reducescatter",
       "allreduce,allgather,reducescatter"},
      {"dtype", Kind::dtype, "elements (the check's pattern is fp32)", {"fp32"}, 1, 1, "fp32", "fp32"},
      {"bytes", Kind::bytes, "nominal size S (nccl-tests' -b/-e/-f)", {}, 1, std::int64_t{1} << 36, "1MiB,64MiB,1GiB",
       "2^[3:33]"},
      {"in_place", Kind::boolean, "output over the input", {}, 0, 1, "false", "false,true"},
      {"ranks", Kind::integer, "GPUs of the job (0: all of them, the default)", {}, 0, 1 << 16, "0", "0"},
  };
}

// The suite's cases (core's rows) or the axes' points, for a job of `nranks`.
inline std::vector<Case> cases(Suite s, const std::vector<axes::Point>* points, int nranks) {
  std::vector<Case> out;
  if (!points) {
    for (const CollectiveCase& c : collective_cases(s, nranks)) out.push_back({c, nranks});
    return out;
  }
  for (const axes::Point& p : *points) {
    Collective coll = Collective::all_reduce;
    for (const CollectiveSpec& row : collective_table())
      if (row.variant == p.text("collective")) coll = row.id;
    const int r = p.n("ranks") == 0 ? nranks : static_cast<int>(p.n("ranks"));
    out.push_back({{coll, p.n("in_place") != 0, static_cast<std::uint64_t>(p.n("bytes"))}, r});
  }
  return out;
}

}  // namespace gpucheck::nccl
