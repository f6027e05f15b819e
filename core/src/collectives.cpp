#include "gpucheck/core/collectives.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <stdexcept>

#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"

namespace gpucheck {
namespace {

// nccl-tests' bus factors: what each link carries in the ring algorithm per byte of S.
double reduce_and_spread(int n) { return 2.0 * (n - 1) / n; }  // all-reduce: reduce-scatter + all-gather
double spread(int n) { return static_cast<double>(n - 1) / n; }

float sum_over_ranks(int segment, std::size_t j, int nranks) {
  double sum = 0;  // exact: small integers
  for (int q = 0; q < nranks; ++q) sum += collective_pattern(q, segment, j);
  return static_cast<float>(sum);
}
float all_reduce_expected(int /*rank*/, int /*segment*/, std::size_t j, int nranks) {
  return sum_over_ranks(0, j, nranks);
}
float all_gather_expected(int /*rank*/, int segment, std::size_t j, int /*nranks*/) {
  return collective_pattern(segment, 0, j);  // output segment s is rank s's input
}
float reduce_scatter_expected(int rank, int /*segment*/, std::size_t j, int nranks) {
  return sum_over_ranks(rank, j, nranks);  // rank r receives the sum of every rank's segment r
}

constexpr CollectiveSpec kTable[] = {
    {Collective::all_reduce, contract::segment::allreduce, Extent::share, Extent::share, true, reduce_and_spread, all_reduce_expected},
    {Collective::all_gather, "allgather", Extent::share, Extent::all_shares, false, spread, all_gather_expected},
    {Collective::reduce_scatter, "reducescatter", Extent::all_shares, Extent::share, true, spread,
     reduce_scatter_expected},
};

std::size_t shares(Extent e, std::size_t nranks) { return e == Extent::all_shares ? nranks : 1; }

}  // namespace

std::span<const CollectiveSpec> collective_table() { return kTable; }

const CollectiveSpec& collective_spec(Collective c) {
  for (const CollectiveSpec& s : kTable)
    if (s.id == c) return s;
  throw std::invalid_argument("collective_spec: no row for collective " + std::to_string(static_cast<int>(c)));
}

std::string collective_variant(Collective c, bool in_place) {
  std::string v(collective_spec(c).variant);
  return in_place ? v + "_inplace" : v;
}

double busbw_factor(Collective c, int nranks) {
  if (nranks <= 1) return 0.0;
  return collective_spec(c).bus_factor(nranks);
}

CollectiveCounts collective_counts(Collective c, std::uint64_t nominal_bytes, std::size_t elem_size, int nranks) {
  if (elem_size == 0 || nranks <= 0) return {};
  const CollectiveSpec& s = collective_spec(c);
  const auto n = static_cast<std::size_t>(nranks);
  const auto elems = static_cast<std::size_t>(nominal_bytes / elem_size);
  const bool split = s.send == Extent::all_shares || s.recv == Extent::all_shares;
  CollectiveCounts r;
  r.count = r.per_rank = split ? elems / n : elems;
  if (r.count == 0) return {};
  r.send_segments = static_cast<int>(shares(s.send, n));
  r.recv_segments = static_cast<int>(shares(s.recv, n));
  r.send_elems = r.per_rank * shares(s.send, n);
  r.recv_elems = r.per_rank * shares(s.recv, n);
  r.bytes = static_cast<std::uint64_t>(std::max(r.send_elems, r.recv_elems)) * elem_size;
  return r;
}

CollectivePlacement collective_placement(Collective c, const CollectiveCounts& k, int rank, bool in_place) {
  CollectivePlacement p;
  if (!in_place) {
    p.a_elems = k.send_elems;
    p.b_elems = k.recv_elems;
    return p;
  }
  const CollectiveSpec& s = collective_spec(c);
  const std::size_t my_share = static_cast<std::size_t>(std::max(rank, 0)) * k.per_rank;
  p.a_elems = std::max(k.send_elems, k.recv_elems);
  if (s.send == Extent::share && s.recv == Extent::all_shares) p.send_offset = my_share;
  if (s.recv == Extent::share && s.send == Extent::all_shares) p.recv_offset = my_share;
  return p;
}

double algbw_GBps(std::uint64_t bytes, double seconds) {
  if (!(seconds > 0)) return 0.0;
  return static_cast<double>(bytes) / seconds / 1e9;
}

double busbw_GBps(Collective c, std::uint64_t bytes, double seconds, int nranks) {
  return algbw_GBps(bytes, seconds) * busbw_factor(c, nranks);
}

std::uint64_t collective_buffer_bytes(Collective c, bool in_place, std::uint64_t nominal_bytes,
                                      std::size_t elem_size, int nranks) {
  const CollectivePlacement p =
      collective_placement(c, collective_counts(c, nominal_bytes, elem_size, nranks), 0, in_place);
  return static_cast<std::uint64_t>(p.a_elems + p.b_elems) * elem_size;
}

std::size_t collective_verify_scratch_elems(const CollectiveCounts& k) {
  constexpr std::size_t kTileElems = kCollectivePatternPeriod * 256;  // 64 MiB of fp32
  return std::min(kTileElems, k.recv_segment_elems()) + kCollectivePatternPeriod;
}

std::uint64_t collective_case_bytes(Collective c, bool in_place, std::uint64_t nominal_bytes, std::size_t elem_size,
                                    int nranks) {
  const CollectiveCounts k = collective_counts(c, nominal_bytes, elem_size, nranks);
  return collective_buffer_bytes(c, in_place, nominal_bytes, elem_size, nranks) +
         static_cast<std::uint64_t>(collective_verify_scratch_elems(k)) * elem_size;
}

std::uint64_t collective_memory_budget(std::uint64_t free_bytes) {
  constexpr std::uint64_t kReserve = std::uint64_t{2} << 30;
  const std::uint64_t usable = free_bytes / 10 * 9;
  return usable > kReserve ? usable - kReserve : 0;
}

int collective_buffer_copies(std::uint64_t footprint_bytes, std::uint64_t l2_bytes, std::uint64_t budget_bytes) {
  if (footprint_bytes == 0 || l2_bytes == 0) return 1;
  const std::uint64_t span = 2 * l2_bytes;
  const std::uint64_t want = std::min<std::uint64_t>((span + footprint_bytes - 1) / footprint_bytes,
                                                     static_cast<std::uint64_t>(kCollectiveMaxCopies));
  if (want <= 1) return 1;
  // The extra copies, checked without overflow (want <= 64, footprint below the span).
  return (want - 1) * footprint_bytes <= budget_bytes ? static_cast<int>(want) : 1;
}

bool collective_moves_data(bool in_place, int nranks) { return nranks > 1 || !in_place; }

bool collective_repeatable(Collective c, bool in_place) { return !in_place || !collective_spec(c).reduces; }

std::vector<std::uint64_t> geometric_sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t factor) {
  if (lo == 0 || factor < 2) throw std::invalid_argument("geometric_sizes: lo must be > 0 and factor >= 2");
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = lo; s <= hi; s *= factor) {
    out.push_back(s);
    if (s > std::numeric_limits<std::uint64_t>::max() / factor) break;
  }
  return out;
}

std::string collective_case_name(Collective c, bool in_place, DType t, std::uint64_t nominal_bytes, int nranks) {
  return contract::nccl_name(collective_variant(c, in_place), t, nominal_bytes, nranks);
}

CollectiveTiming collective_timing(const CollectiveCase& c, int nranks, const SamplingPlan& defaults) {
  CollectiveTiming t;
  t.plan = defaults;
  t.plan.warmup_calls = std::max(defaults.warmup_calls, kCollectiveWarmupCalls);
  if (c.bytes >= kCollectiveLargeBytes)
    t.plan.stop.min_samples = std::min(defaults.stop.min_samples, kCollectiveLargeMinSamples);
  if (nranks > 1) {
    t.mode = TimingMode::wall;
    t.plan.min_batch = std::max(defaults.min_batch, kCollectiveMinBatch);
    t.plan.max_batch = std::max(defaults.max_batch, t.plan.min_batch);
  } else {
    t.mode = collective_moves_data(c.in_place, nranks) ? TimingMode::held : TimingMode::per_call;
    t.graph = t.mode == TimingMode::held && c.bytes <= kCollectiveGraphMaxBytes;
    if (t.graph) t.method = kCollectiveGraphMethod;
  }
  return t;
}

std::optional<int> parse_env_int(std::string_view s, int lo, int hi) {
  if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;  // no sign, no space
  long long v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return static_cast<int>(v);
}

namespace {
std::uint32_t mix32(std::uint32_t x) {  // a 32-bit integer hash (xorshift-multiply)
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
}  // namespace

float collective_pattern(int rank, int segment, std::size_t j) {
  const std::uint32_t key = mix32(static_cast<std::uint32_t>(rank) * 0x9e3779b1U ^ mix32(static_cast<std::uint32_t>(segment) + 0x632be5abU)) ^
                            static_cast<std::uint32_t>(j % kCollectivePatternPeriod);
  return static_cast<float>(1 + mix32(key) % 15);
}

std::vector<float> collective_expected_period(Collective c, int rank, int segment, int nranks) {
  const CollectiveSpec& s = collective_spec(c);
  std::vector<float> out(kCollectivePatternPeriod);
  for (std::size_t j = 0; j < kCollectivePatternPeriod; ++j) out[j] = s.expected(rank, segment, j, nranks);
  return out;
}

}  // namespace gpucheck
