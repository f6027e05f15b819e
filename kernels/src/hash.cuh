// Counter-based generators shared by fill (writes) and verify (checks), host and device.
#pragma once
#include <cstddef>
#include <cstdint>

namespace gpucheck::kernels::detail {

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__host__ __device__ inline float uniform01(std::uint64_t seed, std::size_t i) {
  // 24 random bits: exactly representable as a float in [0, 1).
  const std::uint64_t h = splitmix64(seed * 0xD1B54A32D192ED03ull + static_cast<std::uint64_t>(i));
  return static_cast<float>(h >> 40) * 0x1p-24f;
}

__host__ __device__ inline std::uint8_t pattern_byte(std::uint32_t seed, std::size_t i) {
  const std::uint64_t h = splitmix64((static_cast<std::uint64_t>(seed) << 32) ^ (i >> 3));
  return static_cast<std::uint8_t>(h >> (8 * (i & 7)));
}

}  // namespace gpucheck::kernels::detail
