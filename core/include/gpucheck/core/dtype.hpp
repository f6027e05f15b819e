// Element types: one row per dtype (its name in benchmark names, how it is stored, its peak's
// key in specs.json, its unit roundoff). Everything that asks "how is a bf16 stored?" or
// "is tf32 a storage type?" reads this table; the CUDA library enums map from it in one
// harness header (gpucheck/harness/dtype_enums.hpp).
#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace gpucheck {

// tf32 is a math mode over fp32 storage; it is a dtype here because it is an axis of the
// names (`matmul/cublaslt/tf32/...`) and has its own peak and tolerance.
enum class DType { fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2, i8, u8, i32 };

struct DTypeInfo {
  DType dtype;
  std::string_view name;          // as in benchmark names: "bf16"
  std::string_view storage_type;  // the C++/CUDA element type it is stored as: "__nv_bfloat16"
  std::size_t bytes;              // per stored element
  DType storage;                  // the dtype its elements are stored as (tf32: fp32)
  std::string_view peak_key;      // its peak in baselines/specs.json ("fp8" for both fp8 formats)
  double unit_roundoff;           // of its format (tf32: of the math mode's 10-bit mantissa); 0 for integers
  bool math_mode;                 // a way of computing over another dtype's storage (tf32), not a storage type
  bool floating;
};

inline constexpr std::array<DTypeInfo, 10> kDTypes{{
    {DType::fp64, "fp64", "double", 8, DType::fp64, "fp64", 0x1p-53, false, true},
    {DType::fp32, "fp32", "float", 4, DType::fp32, "fp32", 0x1p-24, false, true},
    {DType::tf32, "tf32", "float", 4, DType::fp32, "tf32", 0x1p-11, true, true},
    {DType::fp16, "fp16", "__half", 2, DType::fp16, "fp16", 0x1p-11, false, true},
    {DType::bf16, "bf16", "__nv_bfloat16", 2, DType::bf16, "bf16", 0x1p-8, false, true},
    {DType::fp8e4m3, "fp8e4m3", "__nv_fp8_e4m3", 1, DType::fp8e4m3, "fp8", 0x1p-4, false, true},
    {DType::fp8e5m2, "fp8e5m2", "__nv_fp8_e5m2", 1, DType::fp8e5m2, "fp8", 0x1p-3, false, true},
    {DType::i8, "i8", "int8_t", 1, DType::i8, "i8", 0.0, false, false},
    {DType::u8, "u8", "uint8_t", 1, DType::u8, "u8", 0.0, false, false},
    {DType::i32, "i32", "int32_t", 4, DType::i32, "i32", 0.0, false, false},
}};

// The row of t (every DType has one; the table is in enum order).
constexpr const DTypeInfo& info(DType t) { return kDTypes[static_cast<std::size_t>(t)]; }
static_assert([] {
  for (std::size_t i = 0; i < kDTypes.size(); ++i)
    if (static_cast<std::size_t>(kDTypes[i].dtype) != i) return false;
  return true;
}(), "kDTypes must list every DType in enum order");

constexpr std::string_view to_string(DType t) { return info(t).name; }
std::optional<DType> parse_dtype(std::string_view s);
// Bytes per stored element (tf32 is stored as fp32).
constexpr std::size_t storage_bytes(DType t) { return info(t).bytes; }
// The dtype a tensor of t holds (tf32 -> fp32; every other dtype is its own storage).
constexpr DType storage_dtype(DType t) { return info(t).storage; }
// Unit roundoff of the format: half the distance from 1 to the next value (tf32: of its
// 10-bit mantissa, the math mode's rounding; its stored values are fp32's).
constexpr double unit_roundoff(DType t) { return info(t).unit_roundoff; }
// The key of this dtype's peak in baselines/specs.json ("fp8" for both fp8 formats).
constexpr std::string_view peak_key(DType t) { return info(t).peak_key; }
// The first dtype whose peak key is `key` ("fp8" -> fp8e4m3, the format GEMMs are measured in).
std::optional<DType> dtype_for_peak_key(std::string_view key);

}  // namespace gpucheck
