// Deciding whether a result is right, dtype by dtype. A benchmark compares sampled or full
// outputs with a reference in higher precision before it reports any figure; the rules that
// say "close enough" live here, pure and unit-tested.
#pragma once
#include <cstddef>
#include <string>

#include "gpucheck/core/dtype.hpp"

namespace gpucheck {

// An element passes when |got - ref| <= rel_out * |ref| + rel_acc * scale, where scale is
// the magnitude the error grows with (for a dot product, sum |a_i * b_i|), and the set
// passes when every element does, none is NaN/Inf, and ||got - ref|| / ||ref|| <= rel_l2.
struct Tolerance {
  double rel_out = 0;  // rounding of the stored output
  double rel_acc = 0;  // error of the inputs' math mode and accumulation, per unit of scale
  double rel_l2 = 0;   // bound on the relative L2 error over the checked set
};

// For a GEMM-like reduction of length k with inputs of dtype `in` (tf32 for fp32 storage
// with TF32 math), fp32 accumulation and output stored as `out`.
Tolerance reduction_tolerance(DType in, DType out, std::size_t k);

struct CheckReport {
  std::size_t checked = 0;
  std::size_t failed = 0;      // over the element bound
  std::size_t nonfinite = 0;   // NaN or Inf in the result where the reference is finite
  double worst_ratio = 0;      // max over elements of |err| / bound (> 1 fails)
  std::size_t worst_index = 0;
  double worst_ref = 0, worst_got = 0;
  double rel_l2 = 0;
  bool l2_ok = true;
  bool ok() const { return checked > 0 && failed == 0 && nonfinite == 0 && l2_ok; }
  // One line: "ok: 256 checked, rel_l2 1.2e-04" or what failed, with the worst element.
  std::string describe() const;
};

class SampleChecker {
 public:
  explicit SampleChecker(Tolerance tol) : tol_(tol) {}
  // Adds one element; index is only for the report. `allowance`: an absolute error the caller
  // knows the computation may add beyond the tolerance's model (bench_matmul: a split-K whose
  // partial sums are rounded to the output type), added to the element's bound.
  void add(std::size_t index, double ref, double got, double scale, double allowance = 0);
  CheckReport report() const;

 private:
  Tolerance tol_;
  CheckReport r_;
  double err2_ = 0, ref2_ = 0;
};

}  // namespace gpucheck
