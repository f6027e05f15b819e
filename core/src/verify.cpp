#include "gpucheck/core/verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpucheck {

Tolerance reduction_tolerance(DType in, DType out, std::size_t k) {
  Tolerance t;
  // Output is rounded once to its storage format (twice the unit roundoff leaves room for
  // a scaled epilogue).
  t.rel_out = 2.0 * unit_roundoff(storage_dtype(out));
  // Inputs are exact in their own dtype (the reference reads the stored values), so the
  // error comes from the math mode (tf32 rounds fp32 inputs to 10 mantissa bits) and from
  // fp32 accumulation, which grows like sqrt(k) for random signs; worst case is linear.
  const double acc = 0x1p-23 * std::sqrt(static_cast<double>(std::max<std::size_t>(k, 1)));
  switch (in) {
    case DType::tf32: t.rel_acc = 2.0 * unit_roundoff(DType::tf32) + acc; break;
    // Hopper accumulates fp8 products with fewer than 23 mantissa bits.
    case DType::fp8e4m3:
    case DType::fp8e5m2: t.rel_acc = 0x1p-12 + acc; break;
    default: t.rel_acc = acc + 4.0 * unit_roundoff(DType::fp32); break;
  }
  // The L2 bound sits well above rounding and far below what a wrong index or a missing
  // tile gives (errors of the order of the values themselves, rel_l2 ~ 1).
  const double u = std::max(unit_roundoff(storage_dtype(out)),
                             info(in).math_mode ? unit_roundoff(in) : 0.0);
  t.rel_l2 = std::max(1e-5, 8.0 * u);
  if (in == DType::fp8e4m3 || in == DType::fp8e5m2) t.rel_l2 = std::max(t.rel_l2, 2e-2);
  return t;
}

void SampleChecker::add(std::size_t index, double ref, double got, double scale, double allowance) {
  ++r_.checked;
  if (!std::isfinite(got) && std::isfinite(ref)) {
    ++r_.nonfinite;
    if (r_.worst_ratio < INFINITY) {
      r_.worst_ratio = INFINITY;
      r_.worst_index = index;
      r_.worst_ref = ref;
      r_.worst_got = got;
    }
    return;
  }
  const double err = std::fabs(got - ref);
  const double bound = tol_.rel_out * std::fabs(ref) + tol_.rel_acc * std::fabs(scale) + std::fabs(allowance);
  const double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0);
  if (err > bound) ++r_.failed;
  if (ratio > r_.worst_ratio) {
    r_.worst_ratio = ratio;
    r_.worst_index = index;
    r_.worst_ref = ref;
    r_.worst_got = got;
  }
  err2_ += err * err;
  ref2_ += ref * ref;
}

CheckReport SampleChecker::report() const {
  CheckReport r = r_;
  r.rel_l2 = ref2_ > 0 ? std::sqrt(err2_ / ref2_) : (err2_ > 0 ? INFINITY : 0.0);
  r.l2_ok = r.rel_l2 <= tol_.rel_l2;
  return r;
}

std::string CheckReport::describe() const {
  char buf[320];
  if (checked == 0) return "nothing was checked";
  if (ok()) {
    std::snprintf(buf, sizeof buf, "ok: %zu checked, rel_l2 %.2e, worst %.2f of bound", checked,
                  rel_l2, worst_ratio);
  } else {
    std::snprintf(buf, sizeof buf,
                  "%zu of %zu elements over tolerance, %zu non-finite, rel_l2 %.2e%s; worst at "
                  "%zu: got %.6g, want %.6g",
                  failed, checked, nonfinite, rel_l2, l2_ok ? "" : " (over its bound)",
                  worst_index, worst_got, worst_ref);
  }
  return buf;
}

}  // namespace gpucheck
