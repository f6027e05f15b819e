// Pure model of the launch family: how many timed chains a chain length gets, the per-launch
// figure, and what the small kernel's counters must read after a number of chains.
#pragma once
#include <cstdint>

namespace gpucheck {

// Timed chains (Google Benchmark iterations) for a chain of n launches: enough samples for a
// stable mean (at least 100) while keeping the case's wall time to a few hundred ms
// (about 20000 launches in all, at most 2000 chains). Throws std::invalid_argument for n <= 0.
std::int64_t launch_chain_iterations(std::int64_t n);

// Microseconds per launch from a chain's seconds and its length.
double us_per_launch(double chain_seconds, std::int64_t n);

// The value every element of the small kernel's uint32 counter holds after `chains` chains of
// `n` increments each, starting from zero (wraps modulo 2^32 like the device arithmetic).
std::uint32_t expected_counter(std::uint64_t chains, std::uint64_t n);

}  // namespace gpucheck
