// Storage types per DType, for kernels templated over the element type.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <stdexcept>
#include <string>

#include "gpucheck/core/dtype.hpp"

namespace gpucheck::kernels::detail {

__host__ __device__ inline float to_float(float v) { return v; }
__host__ __device__ inline float to_float(double v) { return static_cast<float>(v); }
__host__ __device__ inline float to_float(__half v) { return __half2float(v); }
__host__ __device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__host__ __device__ inline float to_float(__nv_fp8_e4m3 v) { return static_cast<float>(v); }
__host__ __device__ inline float to_float(__nv_fp8_e5m2 v) { return static_cast<float>(v); }

__host__ __device__ inline double to_double(double v) { return v; }
template <typename T>
__host__ __device__ inline double to_double(T v) { return static_cast<double>(to_float(v)); }

template <typename T>
__host__ __device__ inline T from_float(float v) { return T(v); }
template <>
__host__ __device__ inline __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__host__ __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__host__ __device__ inline __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v); }
template <>
__host__ __device__ inline __nv_fp8_e5m2 from_float<__nv_fp8_e5m2>(float v) { return __nv_fp8_e5m2(v); }

// Calls f(T{}) with the storage type of a floating dtype (the dtype table's storage: tf32
// is stored as fp32). The types are the table's storage_type names.
template <typename F>
void dispatch_float(DType t, F&& f) {
  switch (storage_dtype(t)) {
    case DType::fp64: f(double{}); return;
    case DType::fp32: f(float{}); return;
    case DType::fp16: f(__half{}); return;
    case DType::bf16: f(__nv_bfloat16{}); return;
    case DType::fp8e4m3: f(__nv_fp8_e4m3{}); return;
    case DType::fp8e5m2: f(__nv_fp8_e5m2{}); return;
    default: break;
  }
  throw std::invalid_argument("dtype " + std::string(to_string(t)) + " is not a floating type");
}

}  // namespace gpucheck::kernels::detail
