// The pure half of bench_nccl: one row per collective (its name, nccl-tests' bandwidth model,
// how its buffers split among ranks, what its output must hold), and what follows from the
// rows: element counts, buffer placement, names, how each case is sampled, the memory it
// needs and the verification pattern. No CUDA or NCCL headers; the NCCL call of each row
// lives in benchmarks/bench_nccl.cpp.
//
// A case's size S is nccl-tests' "size" column: the all-reduce buffer, the all-gather output
// and the reduce-scatter input. algbw = S / time; busbw = algbw x factor, where the factor
// is 2(n-1)/n for all-reduce and (n-1)/n for all-gather and reduce-scatter: the rate each
// link must carry for the ring algorithm to move S in that time, comparable with the
// hardware's link bandwidth whatever n is. With one rank the factor is 0 (nothing crosses a link).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/core/dtype.hpp"
#include "gpucheck/core/measure.hpp"

namespace gpucheck {

enum class Collective { all_reduce, all_gather, reduce_scatter };

// How much of a collective's data a buffer holds: one rank's share, or every rank's share
// in rank order.
enum class Extent { share, all_shares };

// One row per collective. Adding a collective is a row here and its NCCL call in bench_nccl.
struct CollectiveSpec {
  Collective id;
  std::string_view variant;  // the name's variant: "allreduce"
  Extent send, recv;         // all-reduce: share and share (a "share" is then the whole buffer)
  bool reduces;              // combines values: in place, a second call changes the result
  // busbw / algbw for n >= 2 ranks (nccl-tests' factors).
  double (*bus_factor)(int nranks);
  // The value at element j of output segment `segment` on rank `rank`, when every rank q's
  // input segment s holds collective_pattern(q, s, j) (segments restart the pattern).
  float (*expected)(int rank, int segment, std::size_t j, int nranks);
};

// Every row, in the order the suites list them.
std::span<const CollectiveSpec> collective_table();
const CollectiveSpec& collective_spec(Collective c);

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
  int send_segments = 0;        // the input in pattern segments: n for reduce-scatter, else 1
  int recv_segments = 0;        // the output in expected segments: n for all-gather, else 1
  bool runnable() const { return count > 0; }
  std::size_t send_segment_elems() const { return send_segments > 0 ? send_elems / send_segments : 0; }
  std::size_t recv_segment_elems() const { return recv_segments > 0 ? recv_elems / recv_segments : 0; }
};
CollectiveCounts collective_counts(Collective c, std::uint64_t nominal_bytes, std::size_t elem_size, int nranks);

// Where one rank's data lie. Out of place: the input at the start of buffer A, the output at
// the start of buffer B. In place (nccl-tests' layout, the one NCCL defines): one buffer A
// of the larger size, the smaller side at this rank's share of it (all-gather: the input at
// share `rank` of the output; reduce-scatter: the output at share `rank` of the input).
struct CollectivePlacement {
  std::size_t a_elems = 0;      // buffer A: the input (in place: the only buffer)
  std::size_t b_elems = 0;      // buffer B: the output; 0 in place
  std::size_t send_offset = 0;  // in A
  std::size_t recv_offset = 0;  // in B, or in A in place
};
CollectivePlacement collective_placement(Collective c, const CollectiveCounts& k, int rank, bool in_place);

// Rates in GB/s (1e9 bytes/s); 0 when seconds <= 0.
double algbw_GBps(std::uint64_t bytes, double seconds);
double busbw_GBps(Collective c, std::uint64_t bytes, double seconds, int nranks);

// Device memory one rank needs for a case's send and receive buffers (one buffer in place),
// not counting NCCL's own buffers or the verification scratch.
std::uint64_t collective_buffer_bytes(Collective c, bool in_place, std::uint64_t nominal_bytes,
                                      std::size_t elem_size, int nranks);

// Verification compares the output with the expected values tiled into a scratch buffer of
// at most this many elements (a whole number of pattern periods), plus one period.
std::size_t collective_verify_scratch_elems(const CollectiveCounts& k);

// Everything a case allocates per GPU: buffers and verification scratch.
std::uint64_t collective_case_bytes(Collective c, bool in_place, std::uint64_t nominal_bytes, std::size_t elem_size,
                                    int nranks);

// What a case may allocate per GPU given the least free memory over the job's GPUs: 90% of
// it, less 2 GiB left to NCCL's own buffers and the CUDA contexts; 0 when that is negative.
std::uint64_t collective_memory_budget(std::uint64_t free_bytes);

// How many copies of a case's buffers the timed calls cycle through, one copy per call, so
// that no call finds its data in L2 from the call before: nccl-tests moves its buffers by one
// size per iteration inside its allocation ("to avoid cache effects"); reusing one buffer reads
// more busbw than nccl-tests at a few MiB (docs/MULTI_GPU.md). Enough copies for
// their span to reach twice the L2 (`footprint_bytes`: one copy's send and receive bytes per
// GPU), at least 1, at most kCollectiveMaxCopies, and 1 when the extra copies would not fit
// `budget_bytes` (what the case may allocate beyond its first copy).
inline constexpr int kCollectiveMaxCopies = 64;
int collective_buffer_copies(std::uint64_t footprint_bytes, std::uint64_t l2_bytes, std::uint64_t budget_bytes);

// Whether the call moves any data: with one rank an in-place collective is a no-op that
// NCCL returns from after the launch (its time is host dispatch only).
bool collective_moves_data(bool in_place, int nranks);

// Whether the output can be checked again after many calls: out of place every call writes
// the same result; in place only a collective that copies (all-gather) does.
bool collective_repeatable(Collective c, bool in_place);

// lo, lo*factor, ... up to and including hi (lo > 0, factor >= 2); empty if lo > hi.
std::vector<std::uint64_t> geometric_sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t factor);

// "nccl/allreduce/fp32/1GiB/g8", "nccl/allgather_inplace/fp32/64MiB/g1".
std::string collective_case_name(Collective c, bool in_place, DType t, std::uint64_t nominal_bytes, int nranks);

// One case: a collective, in place or not, at a nominal size. The suites' cases are declared
// once, as axis values, in benchmarks/cases/nccl.hpp.
struct CollectiveCase {
  Collective coll;
  bool in_place;
  std::uint64_t bytes;  // nominal size S
};

// How a case is sampled. With two ranks or more as nccl-tests does (`-w 5 -n 20`): wall time
// from before a batch of at least 20 back-to-back calls is issued until it completed on
// every GPU (host launch and the completion wait included: events per GPU read more busbw than
// nccl-tests at small sizes, docs/MULTI_GPU.md), at
// least 5 warm-up calls. One rank alone is a device-time case like
// any other: held and batched; one rank in place moves nothing and is timed per call (its
// launch cost). From 256 MiB up, 5 samples are enough (each is 20 calls of milliseconds).
inline constexpr int kCollectiveMinBatch = 20;
inline constexpr int kCollectiveWarmupCalls = 5;
inline constexpr int kCollectiveLargeMinSamples = 5;
inline constexpr std::uint64_t kCollectiveLargeBytes = std::uint64_t{256} << 20;
// One rank, a call of at most kCollectiveGraphMaxBytes: a few us, most of it the GPU's own
// cost of starting a kernel queued eagerly, which reads in two levels between processes (nccl
// 1MiB g1 1.88-2.12 us over 28 processes on 7 H200s, then gated at 17%; launch/eager_held +6.94% /
// -3.39% over 25), where a CUDA graph's replay holds still (launch/graph/* +1.42% / -0.28% over
// 20). Its held samples are graph replays of its calls, `method` kCollectiveGraphMethod.
inline constexpr std::uint64_t kCollectiveGraphMaxBytes = std::uint64_t{8} << 20;
inline constexpr int kCollectiveGraphMethod = 2;
struct CollectiveTiming {
  TimingMode mode = TimingMode::held;
  SamplingPlan plan;
  bool graph = false;  // held samples as CUDA graph replays (kCollectiveGraphMaxBytes)
  int method = 1;
};
CollectiveTiming collective_timing(const CollectiveCase& c, int nranks, const SamplingPlan& defaults);

// A decimal whole number in [lo, hi], digits only ("60"); nullopt for anything else (empty,
// sign, spaces, trailing text, out of range). For environment variables such as
// GPUCHECK_NCCL_TIMEOUT_S and the launchers' local-rank variables.
std::optional<int> parse_env_int(std::string_view s, int lo, int hi);

// Verification pattern: the value rank `rank` puts at element j (0 <= j < pattern period) of
// segment `segment` of its input. Small integers 1..15, so that any sum over up to 2^20
// ranks is exact in fp32 whatever order NCCL adds in; the data repeats with this period
// (a prime, so a shift by a power of two elements shows up as wrong elements).
inline constexpr std::size_t kCollectivePatternPeriod = 65521;
float collective_pattern(int rank, int segment, std::size_t j);

// One period of what output segment `segment` on rank `rank` holds (the row's expected rule
// over j = 0 .. period-1):
//  - all_reduce:     out[j]              = sum over q of pattern(q, 0, j)
//  - all_gather:     output segment s[j] = pattern(s, 0, j)
//  - reduce_scatter: out[j] on rank r    = sum over q of pattern(q, r, j)
std::vector<float> collective_expected_period(Collective c, int rank, int segment, int nranks);

}  // namespace gpucheck
