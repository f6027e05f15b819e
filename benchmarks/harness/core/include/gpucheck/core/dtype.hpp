// Element types as they appear in benchmark names and in tolerance rules.
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace gpucheck {

// tf32 is a math mode over fp32 storage; it is a dtype here because it is an axis of the
// names (`matmul/cublaslt/tf32/...`) and has its own peak and tolerance.
enum class DType { fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2, i8, u8, i32 };

std::string_view to_string(DType t);
std::optional<DType> parse_dtype(std::string_view s);
// Bytes per stored element (tf32 is stored as fp32).
std::size_t storage_bytes(DType t);
// Unit roundoff of the stored format: half the distance from 1 to the next value.
double unit_roundoff(DType t);
// The key of this dtype's peak in baselines/specs.json ("fp8" for both fp8 formats).
std::string_view peak_key(DType t);

}  // namespace gpucheck
