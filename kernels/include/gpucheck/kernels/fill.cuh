// Random inputs generated on the device: a counter-based hash, so the same seed gives the
// same data on any GPU and a reference can regenerate any element on the host.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpucheck/core/dtype.hpp"

namespace gpucheck::kernels {

// Uniform values in [lo, hi) rounded to dtype t (fp32, tf32 (fp32 storage), fp16, bf16, fp8
// e4m3/e5m2, fp64). Throws std::invalid_argument for integer dtypes.
void fill_uniform(void* dst, std::size_t n, DType t, std::uint64_t seed, float lo, float hi,
                  cudaStream_t stream);

// Host twin of the generator: the float value fill_uniform draws for element i before
// rounding to the dtype.
float uniform_at(std::uint64_t seed, std::size_t i, float lo, float hi);

// A byte pattern that differs per element and per seed (never all zeros), for copy checks.
void fill_pattern_u8(void* dst, std::size_t bytes, std::uint32_t seed, cudaStream_t stream);
std::uint8_t pattern_u8_at(std::uint32_t seed, std::size_t i);

// Sets every byte to 0xFF: fp16/bf16/fp32 NaN, so an output the benchmark did not write
// fails verification instead of passing as a stale value.
void poison(void* dst, std::size_t bytes, cudaStream_t stream);

}  // namespace gpucheck::kernels
