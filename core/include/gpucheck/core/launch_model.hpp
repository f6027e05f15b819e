// Pure model of the launch family: the per-launch figure, and what the small kernel's counters must read after a number of chains.
#pragma once
#include <cstdint>

namespace gpucheck {

// Microseconds per launch from a chain's seconds and its length.
double us_per_launch(double chain_seconds, std::int64_t n);

// The value every element of the small kernel's uint32 counter holds after `chains` chains of
// `n` increments each, starting from zero (wraps modulo 2^32 like the device arithmetic).
std::uint32_t expected_counter(std::uint64_t chains, std::uint64_t n);

}  // namespace gpucheck
