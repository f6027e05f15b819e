// The bandwidth model of NCCL collectives, as nccl-tests defines it, and the case plan of
// bench_nccl: element counts per rank, sweep sizes, names, fixed iteration counts, and the
// verification pattern. Pure: no CUDA or NCCL headers.
//
// A case's size S is nccl-tests' "size" column: the all-reduce buffer, the all-gather output
// and the reduce-scatter input. algbw = S / time; busbw = algbw x factor, where the factor
// is 2(n-1)/n for all-reduce and (n-1)/n for all-gather and reduce-scatter: the rate each
// link must carry for the ring algorithm to move S in that time, comparable with the
// hardware's link bandwidth whatever n is. With one rank the factor is 0 (nothing crosses a link).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/core/dtype.hpp"

namespace gpucheck {

enum class Collective { all_reduce, all_gather, reduce_scatter };

// "allreduce", "allgather", "reducescatter"; with in_place, "_inplace" is appended.
std::string collective_variant(Collective c, bool in_place);

// Bus-bandwidth factor for n ranks; 0 for n <= 1.
double busbw_factor(Collective c, int nranks);

// Element counts of one call for a nominal size in bytes, rounded down to whole elements
// and (all-gather, reduce-scatter) to a multiple of n, as nccl-tests does.
struct CollectiveCounts {
  std::size_t count = 0;        // the count argument of the NCCL call
  std::size_t send_elems = 0;   // per rank
  std::size_t recv_elems = 0;   // per rank
  std::size_t per_rank = 0;     // one rank's share (all-gather input, reduce-scatter output)
  std::uint64_t bytes = 0;      // S actually moved: what algbw divides by time
  bool runnable() const { return count > 0; }
};
CollectiveCounts collective_counts(Collective c, std::uint64_t nominal_bytes, std::size_t elem_size, int nranks);

// Rates in GB/s (1e9 bytes/s); 0 when seconds <= 0.
double algbw_GBps(std::uint64_t bytes, double seconds);
double busbw_GBps(Collective c, std::uint64_t bytes, double seconds, int nranks);

// Device memory one rank needs for a case: its send and receive buffers (one buffer in place),
// not counting NCCL's own buffers or the verification scratch.
std::uint64_t collective_buffer_bytes(Collective c, bool in_place, std::uint64_t nominal_bytes,
                                      std::size_t elem_size, int nranks);

// lo, lo*factor, ... up to and including hi (lo > 0, factor >= 2); empty if lo > hi.
std::vector<std::uint64_t> geometric_sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t factor);

// "nccl/allreduce/fp32/1GiB/g8", "nccl/allgather_inplace/fp32/64MiB/g1".
std::string collective_case_name(Collective c, bool in_place, DType t, std::uint64_t nominal_bytes, int nranks);

// Fixed iteration plan. Every rank of an MPI run must enqueue the same collectives, so the
// number of samples cannot adapt to measured time (Google Benchmark's default would);
// it is decided from the size alone. A sample is `batch` back-to-back collectives.
struct CollectivePlan {
  int samples = 0;  // Google Benchmark iterations
  int batch = 0;    // collectives per sample (small sizes: amortise the launch)
  int warmup = 0;   // untimed collectives before the first sample
};
CollectivePlan collective_plan(std::uint64_t bytes);

// Verification pattern: the value rank `rank` puts at element j (0 <= j < pattern period) of
// segment `segment` of its input. Small integers 1..15, so that any sum over up to 2^20
// ranks is exact in fp32 whatever order NCCL adds in; the data repeats with this period
// (a prime, so a shift by a power of two elements shows up as wrong elements).
inline constexpr std::size_t kCollectivePatternPeriod = 65521;
float collective_pattern(int rank, int segment, std::size_t j);

// One period of what a rank's output holds, given that every rank q filled segment s of its
// input with pattern(q, s, j mod period) (segments restart the period):
//  - all_reduce:     out[j]              = sum over q of pattern(q, 0, j)
//  - all_gather:     output segment s[j] = pattern(s, 0, j)      (pass the segment as `rank`)
//  - reduce_scatter: out[j] on rank r    = sum over q of pattern(q, r, j)
std::vector<float> collective_expected_period(Collective c, int rank, int nranks);

}  // namespace gpucheck
