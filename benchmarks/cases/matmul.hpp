// bench_matmul's table: one row per GEMM case with the suites it belongs to. Pure (no CUDA):
// the binary registers these rows, tests/unit/test_case_tables.cpp lists them per suite.
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
  Suites suites;
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

// In a suite, the rows that have it, in this order.
inline std::vector<GemmCase> rows() {
  using enum Suite;
  constexpr std::int64_t A = contract::kAcceptGemmSize;  // 8192: what acceptance and the burn read
  const auto& dtypes = kDTypes;
  std::vector<GemmCase> r;
  // The gate's handful, and acceptance's GEMMs (every dtype with a tensor-core peak: not fp32).
  for (DType t : dtypes) r.push_back({t, A, A, A, Load::burst, t == DType::fp32 ? Suites{quick} : Suites{quick, accept}});
  r.push_back({DType::bf16, 4096, 14336, 4096, Load::burst, {quick}});
  r.push_back({DType::bf16, 16, 28672, 8192, Load::burst, {quick}});
  // The sweep: squares 1k-16k and transformer shapes (m = tokens): MLP up and down projections
  // of 8B- and 70B-class models, and a skinny decode step (16 tokens).
  for (DType t : dtypes) {
    for (std::int64_t n : {1024, 2048, 4096, 8192, 16384}) r.push_back({t, n, n, n, Load::burst, {full}});
    for (auto [m, n, k] : {std::array<std::int64_t, 3>{4096, 14336, 4096}, {4096, 4096, 14336}, {8192, 28672, 8192},
                           {8192, 8192, 28672}, {16, 28672, 8192}})
      r.push_back({t, m, n, k, Load::burst, {full}});
  }
  r.push_back({DType::bf16, A, A, A, Load::sustained, {quick, full}});
  r.push_back({contract::kBurnDType, A, A, A, Load::burn, {burn}});
  return r;
}

// The axes --axis sets (the layout is TN for every dtype: not an axis). N follows M and K
// follows N, so `-a M=2^[9:14]` is a sweep of squares. Without -a: the suite's rows above.
inline std::vector<axes::Axis> axis_table() {
  using axes::Kind;
  namespace seg = contract::segment;
  return {
      {"variant", Kind::word, "burst or sustained load", {std::string(seg::cublaslt), std::string(seg::cublaslt_sustained)},
       1, 1, "cublaslt,cublaslt_sustained", "cublaslt"},
      {"dtype", Kind::dtype, "input type (fp8e4m3: bf16 out)", dtype_names(kDTypes), 1, 1, "fp32,tf32,fp16,bf16,fp8e4m3", "fp32,tf32,fp16,bf16,fp8e4m3"},
      {"M", Kind::integer, "rows of A and C", {}, 1, 1 << 20, "8192", "2^[10:14]"},
      {"N", Kind::integer, "columns of B and C", {}, 1, 1 << 20, "", "", "M"},
      {"K", Kind::integer, "the reduced extent", {}, 1, 1 << 20, "", "", "N"},
  };
}

// A suite's cases, in order: its rows, or the axes' points.
inline std::vector<GemmCase> cases(Suite s, const std::vector<axes::Point>* points) {
  if (!points) return in_suite(rows(), s);
  std::vector<GemmCase> out;
  for (const axes::Point& p : *points)
    out.push_back({*parse_dtype(p.text("dtype")), p.n("M"), p.n("N"), p.n("K"),
                   p.text("variant") == contract::segment::cublaslt ? Load::burst : Load::sustained, {s}});
  return out;
}

}  // namespace gpucheck::matmul
