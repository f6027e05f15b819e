// bench_matmul's case model: the axes of a GEMM and the suites as values of them. Pure (no
// CUDA): the binary registers the cases, tests/unit/test_case_tables.cpp lists them per suite.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "listing.hpp"
#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/options.hpp"

namespace gpucheck::matmul {

enum class Load { burst, sustained, burn };

struct GemmCase {
  DType dtype;
  std::int64_t m, n, k;
  Load load = Load::burst;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
  std::string_view variant() const {
    namespace seg = contract::segment;
    return load == Load::burst ? seg::cublaslt : load == Load::sustained ? seg::cublaslt_sustained : seg::burn;
  }
  std::string name() const { return contract::matmul_name(variant(), dtype, m, n, k); }
  Coordinates coordinates() const {
    return {{"variant", std::string(variant())}, {"dtype", std::string(to_string(dtype))},
            {"M", std::to_string(m)}, {"N", std::to_string(n)}, {"K", std::to_string(k)}};
  }
};

inline constexpr std::array<DType, 5> kDTypes{DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8e4m3};

// The axes (the layout is TN for every dtype: not an axis). N follows M and K follows N, so
// `-a M=2^[9:14]` is a sweep of squares. The suites, in the order their cases run: the gate's
// handful; acceptance's GEMMs (every dtype with a tensor-core peak: not fp32); the sweep
// (squares 1k-16k and transformer shapes, m = tokens: MLP up and down projections of 8B- and
// 70B-class models, and a skinny decode step of 16 tokens); the burn.
inline axes::CaseModel model() {
  using axes::Kind;
  using enum Suite;
  namespace seg = contract::segment;
  const std::string A = std::to_string(contract::kAcceptGemmSize);  // 8192: what acceptance and the burn read
  const std::string all = "fp32,tf32,fp16,bf16,fp8e4m3";
  const std::string burst(seg::cublaslt), sustained(seg::cublaslt_sustained);
  axes::Axis variant{"variant", Kind::word, "burst or sustained load", {burst, sustained}, 1, 1};
  variant.suite_words = {std::string(seg::burn)};
  axes::CaseModel m{std::string(contract::family::matmul),
                    {variant,
                     {"dtype", Kind::dtype, "input type (fp8e4m3: bf16 out)", dtype_names(kDTypes), 1, 1},
                     {"M", Kind::integer, "rows of A and C", {}, 1, 1 << 20},
                     {"N", Kind::integer, "columns of B and C", {}, 1, 1 << 20, "M"},
                     {"K", Kind::integer, "the reduced extent", {}, 1, 1 << 20, "N"}},
                    {}};
  axes::SuiteAxes q{quick, {{"variant", burst + "," + sustained}, {"dtype", all}, {"M", A}}, {}};
  q.sets = {{{"variant", burst}},
            {{"variant", burst}, {"dtype", "bf16"}, {"M", "4096"}, {"N", "14336"}, {"K", "4096"}},
            {{"variant", burst}, {"dtype", "bf16"}, {"M", "16"}, {"N", "28672"}, {"K", "8192"}},
            {{"variant", sustained}, {"dtype", "bf16"}}};
  axes::SuiteAxes f{full, {{"variant", burst}, {"dtype", all}, {"M", "2^[10:14]"}}, {}};
  for (DType t : kDTypes) {
    const std::string d(to_string(t));
    f.sets.push_back({{"dtype", d}});
    for (auto [mm, n, k] : {std::array<int, 3>{4096, 14336, 4096}, {4096, 4096, 14336}, {8192, 28672, 8192},
                            {8192, 8192, 28672}, {16, 28672, 8192}})
      f.sets.push_back({{"dtype", d}, {"M", std::to_string(mm)}, {"N", std::to_string(n)}, {"K", std::to_string(k)}});
  }
  f.sets.push_back({{"variant", sustained}, {"dtype", "bf16"}, {"M", A}});
  const axes::SuiteAxes a{accept, {}, {{{"variant", burst}, {"dtype", "tf32,fp16,bf16,fp8e4m3"}, {"M", A}}}};
  const axes::SuiteAxes b{burn, {}, {{{"variant", std::string(seg::burn)}, {"dtype", std::string(to_string(contract::kBurnDType))}, {"M", A}}}};
  m.suites = {q, f, a, b};
  return m;
}

// A suite's cases (or the user's points), in order.
inline std::vector<GemmCase> cases(Suite s, const std::vector<axes::Point>* user) {
  namespace seg = contract::segment;
  std::vector<GemmCase> out;
  for (const axes::Point& p : points_of(model(), s, user)) {
    const std::string& v = p.text("variant");
    out.push_back({*parse_dtype(p.text("dtype")), p.n("M"), p.n("N"), p.n("K"),
                   v == seg::cublaslt ? Load::burst : v == seg::burn ? Load::burn : Load::sustained});
  }
  return out;
}

}  // namespace gpucheck::matmul
