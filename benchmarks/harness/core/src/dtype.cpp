#include "gpucheck/core/dtype.hpp"

#include <array>
#include <utility>

namespace gpucheck {
namespace {
constexpr std::array<std::pair<DType, std::string_view>, 10> kNames{{
    {DType::fp64, "fp64"},
    {DType::fp32, "fp32"},
    {DType::tf32, "tf32"},
    {DType::fp16, "fp16"},
    {DType::bf16, "bf16"},
    {DType::fp8e4m3, "fp8e4m3"},
    {DType::fp8e5m2, "fp8e5m2"},
    {DType::i8, "i8"},
    {DType::u8, "u8"},
    {DType::i32, "i32"},
}};
}  // namespace

std::string_view to_string(DType t) {
  for (const auto& [d, n] : kNames)
    if (d == t) return n;
  return "unknown";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (const auto& [d, n] : kNames)
    if (n == s) return d;
  return std::nullopt;
}

std::size_t storage_bytes(DType t) {
  switch (t) {
    case DType::fp64: return 8;
    case DType::fp32:
    case DType::tf32:
    case DType::i32: return 4;
    case DType::fp16:
    case DType::bf16: return 2;
    case DType::fp8e4m3:
    case DType::fp8e5m2:
    case DType::i8:
    case DType::u8: return 1;
  }
  return 0;
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::fp64: return 0x1p-53;
    case DType::fp32: return 0x1p-24;
    case DType::tf32: return 0x1p-11;
    case DType::fp16: return 0x1p-11;
    case DType::bf16: return 0x1p-8;
    case DType::fp8e4m3: return 0x1p-4;
    case DType::fp8e5m2: return 0x1p-3;
    case DType::i8:
    case DType::u8:
    case DType::i32: return 0.0;
  }
  return 0.0;
}

std::string_view peak_key(DType t) {
  switch (t) {
    case DType::fp8e4m3:
    case DType::fp8e5m2: return "fp8";
    default: return to_string(t);
  }
}

}  // namespace gpucheck
