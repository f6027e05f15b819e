// bench_bmm's case model: the paths, one row per way of computing the same batched product,
// the axes, and the suites as values of them. Pure: the binary maps a path's name to its call.
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
};

// How a path's output is verified against the strided reference.
enum class Check { reference_only, permuted_equal, exact, tolerance };

// The rate is TFLOPS for GEMM paths and GBps (bytes read + written) for the permute alone
// (`permute_only`).
struct Path {
  std::string_view name;
  TimingMode timing;
  Check check;
  bool needs_out;  // writes its own C (every GEMM path but strided)
  bool permute_only;
  std::string_view label;
};

inline const std::vector<Path>& paths() {
  static const std::vector<Path> p{
      {"strided", TimingMode::held, Check::reference_only, false, false, ""},
      {"strided_mbk", TimingMode::held, Check::tolerance, true, false, "A[m,b,k] read in place (lda=b*k)"},
      {"permute_bmm", TimingMode::held, Check::exact, true, false, "permute+strided timed together"},
      {"permute", TimingMode::held, Check::permuted_equal, false, true, "A[m,b,k]->[b,m,k] bytes=read+write"},
      {"ptr_array", TimingMode::held, Check::tolerance, true, false, ""},
      {"loop", TimingMode::per_call, Check::tolerance, true, false, "host issue of every call included"},
  };
  return p;
}

inline std::string case_name(const Path& p, const Shaped& s) {
  return bench_name({contract::family::bmm, p.name, to_string(s.dtype), bmm_shape_label(s.shape)});
}

struct Case {
  Shaped shaped;
  const Path* path;
  std::string name() const { return case_name(*path, shaped); }
  Coordinates coordinates() const {
    const BmmShape& s = shaped.shape;
    return {{"dtype", std::string(to_string(shaped.dtype))}, {"batch", std::to_string(s.b)}, {"M", std::to_string(s.m)},
            {"N", std::to_string(s.n)}, {"K", std::to_string(s.k)}, {"path", std::string(path->name)}};
  }
};

// The axes: a shape's every path side by side (path innermost); N follows M and K follows N
// unless given. The suites: attention-like (b64 512^3, b512 128x128x64) and a wide MLP-like
// batch (b16 2048^2 x 128) per dtype; the gate's one shape is fp16 b64 512^3.
inline axes::CaseModel model() {
  using axes::Kind;
  using enum Suite;
  std::vector<std::string> names;
  for (const Path& p : paths()) names.emplace_back(p.name);
  constexpr int kMax = 1 << 20;
  axes::SuiteAxes f{full, {{"dtype", "fp16,bf16,fp32"}, {"batch", "64"}, {"M", "512"}, {"path", value_list(names)}}, {}};
  for (const std::string t : {"fp16", "bf16", "fp32"}) {
    f.sets.push_back({{"dtype", t}, {"batch", "64"}, {"M", "512"}});
    f.sets.push_back({{"dtype", t}, {"batch", "512"}, {"M", "128"}, {"N", "128"}, {"K", "64"}});
    f.sets.push_back({{"dtype", t}, {"batch", "16"}, {"M", "2048"}, {"N", "2048"}, {"K", "128"}});
  }
  return {std::string(contract::family::bmm),
          {{"dtype", Kind::dtype, "A, B and C", {"fp16", "bf16", "fp32"}, 1, 1},
           {"batch", Kind::integer, "products per call", {}, 1, kMax},
           {"M", Kind::integer, "rows of each A and C", {}, 1, kMax},
           {"N", Kind::integer, "columns of each B and C", {}, 1, kMax, "M"},
           {"K", Kind::integer, "the reduced extent", {}, 1, kMax, "N"},
           {"path", Kind::word, "how the batched product is computed", names, 1, 1}},
          {{quick, {{"dtype", "fp16"}, {"batch", "64"}, {"M", "512"}, {"path", value_list(names)}}, {{}}}, f}};
}

// A suite's cases (or the user's points), in order.
inline std::vector<Case> cases(Suite s, const std::vector<axes::Point>* user) {
  std::vector<Case> out;
  for (const axes::Point& pt : points_of(model(), s, user))
    for (const Path& p : paths())
      if (p.name == pt.text("path"))
        out.push_back({{*parse_dtype(pt.text("dtype")), {pt.n("batch"), pt.n("M"), pt.n("N"), pt.n("K")}}, &p});
  return out;
}

}  // namespace gpucheck::bmm
