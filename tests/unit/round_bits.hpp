// Rounds x to a float format with `mantissa_bits` explicit mantissa bits (round to nearest),
// for tests that simulate a reduced-precision computation on the host.
#pragma once
#include <cmath>

namespace gpucheck::test {

inline double round_bits(double x, int mantissa_bits) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  const double m = std::frexp(x, &e);
  const double scale = std::ldexp(1.0, mantissa_bits + 1);
  return std::ldexp(std::nearbyint(m * scale) / scale, e);
}

}  // namespace gpucheck::test
