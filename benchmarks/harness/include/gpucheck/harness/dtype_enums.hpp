// The CUDA libraries' enums for our dtypes, mapped from the dtype table (gpucheck/core/dtype.hpp)
// in this one header: every family and kernel wrapper asks here. A dtype's storage decides
// the data type (tf32 is stored as fp32); its math mode decides the compute type. The cuDNN
// mapping is there when cuDNN's header is (families that link gpucheck::harness_cudnn).
#pragma once
#include <cublas_api.h>
#include <library_types.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "gpucheck/core/dtype.hpp"

#if __has_include(<cudnn.h>)
#include <cudnn.h>
#define GPUCHECK_DTYPE_ENUMS_CUDNN 1
#endif

namespace gpucheck::harness {

[[noreturn]] inline void unsupported_dtype(DType t, std::string_view who) {
  throw std::invalid_argument(std::string(who) + ": unsupported dtype " + std::string(to_string(t)));
}

// The CUDA data type of a stored element of t (tf32: CUDA_R_32F).
inline cudaDataType_t cuda_data_type(DType t) {
  switch (storage_dtype(t)) {
    case DType::fp64: return CUDA_R_64F;
    case DType::fp32: return CUDA_R_32F;
    case DType::fp16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::fp8e4m3: return CUDA_R_8F_E4M3;
    case DType::fp8e5m2: return CUDA_R_8F_E5M2;
    case DType::i8: return CUDA_R_8I;
    case DType::u8: return CUDA_R_8U;
    case DType::i32: return CUDA_R_32I;
    case DType::tf32: break;  // a math mode: its storage is fp32
  }
  unsupported_dtype(t, "cuda_data_type");
}

// As above, for the dtypes a caller supports (fp32, fp16, bf16: cuBLAS's classic GEMMs);
// any other throws std::invalid_argument "<who>: unsupported dtype <t>".
inline cudaDataType_t cuda_data_type(DType t, std::string_view who) {
  if (t != DType::fp32 && t != DType::fp16 && t != DType::bf16) unsupported_dtype(t, who);
  return cuda_data_type(t);
}

// cuBLAS's compute type of a GEMM over t with fp32 accumulation: tf32 asks for the fast TF32
// path, every other dtype plain fp32 (fp32 stays fp32: no TF32).
inline cublasComputeType_t cublas_compute_type(DType t) {
  return t == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

#ifdef GPUCHECK_DTYPE_ENUMS_CUDNN
// cuDNN's data type of a stored element of t (tf32: float; its math mode is the
// convolution's math type).
inline cudnnDataType_t cudnn_data_type(DType t, std::string_view who) {
  switch (storage_dtype(t)) {
    case DType::fp64: return CUDNN_DATA_DOUBLE;
    case DType::fp32: return CUDNN_DATA_FLOAT;
    case DType::fp16: return CUDNN_DATA_HALF;
    case DType::bf16: return CUDNN_DATA_BFLOAT16;
    case DType::fp8e4m3: return CUDNN_DATA_FP8_E4M3;
    case DType::fp8e5m2: return CUDNN_DATA_FP8_E5M2;
    case DType::i8: return CUDNN_DATA_INT8;
    case DType::u8: return CUDNN_DATA_UINT8;
    case DType::i32: return CUDNN_DATA_INT32;
    case DType::tf32: break;
  }
  unsupported_dtype(t, who);
}
#endif

}  // namespace gpucheck::harness
