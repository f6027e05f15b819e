#include "gpucheck/core/dtype.hpp"

namespace gpucheck {

std::optional<DType> parse_dtype(std::string_view s) {
  for (const DTypeInfo& r : kDTypes)
    if (r.name == s) return r.dtype;
  return std::nullopt;
}

std::optional<DType> dtype_for_peak_key(std::string_view key) {
  for (const DTypeInfo& r : kDTypes)
    if (r.peak_key == key) return r.dtype;
  return std::nullopt;
}

}  // namespace gpucheck
