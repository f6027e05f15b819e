// bench_bmm's tables: the shapes (with the suites they belong to) and the paths, one row per
// way of computing the same batched product, with theirs. Pure: the binary hands in each
// path's call (Run).
#pragma once
#include <string>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/bmm_model.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/measure.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/options.hpp"
#include "listing.hpp"

namespace gpucheck::bmm {

struct Shaped {
  DType dtype;
  BmmShape shape;
  Suites suites;
};

inline std::vector<Shaped> shapes() {
  using enum Suite;
  // Attention-like (b64 512^3, b512 128x128x64) and a wide MLP-like batch (b16 2048^2 x 128).
  std::vector<Shaped> r;
  for (DType t : {DType::fp16, DType::bf16, DType::fp32})
    for (BmmShape s : {BmmShape{64, 512, 512, 512}, BmmShape{512, 128, 128, 64}, BmmShape{16, 2048, 2048, 128}})
      r.push_back({t, s, {full}});
  r.front().suites = {quick, full};  // fp16 b64 512^3: the gate's one shape
  return r;  // acceptance and burn-in run other families
}

// How a path's output is verified against the strided reference.
enum class Check { reference_only, permuted_equal, exact, tolerance };

// `run` is one call of the path; the rate is TFLOPS for GEMM paths and GBps (bytes read +
// written) for the permute alone (`permute_only`).
template <class Run>
struct Path {
  std::string_view name;
  TimingMode timing;
  Run run;
  Check check;
  bool needs_out;  // writes its own C (every GEMM path but strided)
  bool permute_only;
  std::string_view label;
  Suites suites;
};

template <class Run>
std::vector<Path<Run>> paths(Run strided_bmk, Run strided_mbk, Run permute_bmm, Run permute, Run ptr_array, Run loop) {
  using enum Suite;
  const Suites all{quick, full};
  return {
      {"strided", TimingMode::held, strided_bmk, Check::reference_only, false, false, "", all},
      {"strided_mbk", TimingMode::held, strided_mbk, Check::tolerance, true, false, "A[m,b,k] read in place (lda=b*k)", all},
      {"permute_bmm", TimingMode::held, permute_bmm, Check::exact, true, false, "permute+strided timed together", all},
      {"permute", TimingMode::held, permute, Check::permuted_equal, false, true, "A[m,b,k]->[b,m,k] bytes=read+write", all},
      {"ptr_array", TimingMode::held, ptr_array, Check::tolerance, true, false, "", all},
      {"loop", TimingMode::per_call, loop, Check::tolerance, true, false, "host issue of every call included", all},
  };
}

template <class Run>
std::string case_name(const Path<Run>& p, const Shaped& s) {
  return bench_name({contract::family::bmm, p.name, to_string(s.dtype), bmm_shape_label(s.shape)});
}

template <class Run>
struct Case {
  Shaped shaped;
  const Path<Run>* path;
  std::string name() const { return case_name(*path, shaped); }
  Coordinates coordinates() const {
    const BmmShape& s = shaped.shape;
    return {{"dtype", std::string(to_string(shaped.dtype))}, {"batch", std::to_string(s.b)}, {"M", std::to_string(s.m)},
            {"N", std::to_string(s.n)}, {"K", std::to_string(s.k)}, {"path", std::string(path->name)}};
  }
};

// The axes --axis sets: a shape's every path side by side (path innermost); N follows M and
// K follows N unless given.
inline std::vector<axes::Axis> axis_table() {
  using axes::Kind;
  std::vector<std::string> names;
  for (const auto& p : paths(0, 0, 0, 0, 0, 0)) names.emplace_back(p.name);
  constexpr int kMax = 1 << 20;
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : ",") + n;
  return {
      {"dtype", Kind::dtype, "A, B and C", {"fp16", "bf16", "fp32"}, 1, 1, "fp16", "fp16,bf16,fp32"},
      {"batch", Kind::integer, "products per call", {}, 1, kMax, "64", "64"},
      {"M", Kind::integer, "rows of each A and C", {}, 1, kMax, "512", "512"},
      {"N", Kind::integer, "columns of each B and C", {}, 1, kMax, "", "", "M"},
      {"K", Kind::integer, "the reduced extent", {}, 1, kMax, "", "", "N"},
      {"path", Kind::word, "how the batched product is computed", names, 1, 1, all, all},
  };
}

// A suite's cases, in order: each shape of the suite with every path of it, or the axes' points.
template <class Run>
std::vector<Case<Run>> cases(const std::vector<Path<Run>>& ps, Suite s, const std::vector<axes::Point>* points) {
  std::vector<Case<Run>> out;
  if (!points) {
    for (const Shaped& sh : shapes())
      for (const auto& p : ps)
        if (sh.suites.has(s) && p.suites.has(s)) out.push_back({sh, &p});
    return out;
  }
  for (const axes::Point& pt : *points)
    for (const auto& p : ps)
      if (p.name == pt.text("path"))
        out.push_back({{*parse_dtype(pt.text("dtype")), {pt.n("batch"), pt.n("M"), pt.n("N"), pt.n("K")}, {s}}, &p});
  return out;
}

}  // namespace gpucheck::bmm
