#include "gpucheck/core/collectives.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "gpucheck/core/names.hpp"

namespace gpucheck {

std::string collective_variant(Collective c, bool in_place) {
  std::string v;
  switch (c) {
    case Collective::all_reduce: v = "allreduce"; break;
    case Collective::all_gather: v = "allgather"; break;
    case Collective::reduce_scatter: v = "reducescatter"; break;
  }
  return in_place ? v + "_inplace" : v;
}

double busbw_factor(Collective c, int nranks) {
  if (nranks <= 1) return 0.0;
  const double n = nranks;
  return c == Collective::all_reduce ? 2.0 * (n - 1) / n : (n - 1) / n;
}

CollectiveCounts collective_counts(Collective c, std::uint64_t nominal_bytes, std::size_t elem_size, int nranks) {
  CollectiveCounts r;
  if (elem_size == 0 || nranks <= 0) return r;
  const auto n = static_cast<std::size_t>(nranks);
  const std::size_t elems = static_cast<std::size_t>(nominal_bytes / elem_size);
  switch (c) {
    case Collective::all_reduce:
      r.count = r.send_elems = r.recv_elems = r.per_rank = elems;
      r.bytes = static_cast<std::uint64_t>(elems) * elem_size;
      break;
    case Collective::all_gather:
      r.count = r.per_rank = r.send_elems = elems / n;
      r.recv_elems = r.per_rank * n;
      r.bytes = static_cast<std::uint64_t>(r.recv_elems) * elem_size;
      break;
    case Collective::reduce_scatter:
      r.count = r.per_rank = r.recv_elems = elems / n;
      r.send_elems = r.per_rank * n;
      r.bytes = static_cast<std::uint64_t>(r.send_elems) * elem_size;
      break;
  }
  if (r.count == 0) r = CollectiveCounts{};
  return r;
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
  const CollectiveCounts k = collective_counts(c, nominal_bytes, elem_size, nranks);
  const std::uint64_t send = static_cast<std::uint64_t>(k.send_elems) * elem_size;
  const std::uint64_t recv = static_cast<std::uint64_t>(k.recv_elems) * elem_size;
  return in_place ? std::max(send, recv) : send + recv;
}

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
  std::string g = std::to_string(nranks);
  g.insert(g.begin(), 'g');  // not "g" + to_string(): GCC 12's -Wrestrict false positive
  return bench_name({"nccl", collective_variant(c, in_place), to_string(t), bytes_label(nominal_bytes), g});
}

CollectivePlan collective_plan(std::uint64_t bytes) {
  constexpr std::uint64_t kSampleBytes = std::uint64_t{64} << 20;
  CollectivePlan p;
  const std::uint64_t b = std::max<std::uint64_t>(bytes, 1);
  p.batch = static_cast<int>(std::clamp<std::uint64_t>((kSampleBytes + b - 1) / b, 1, 20));
  if (bytes <= (std::uint64_t{256} << 20)) p.samples = 20;
  else if (bytes <= (std::uint64_t{1} << 30)) p.samples = 10;
  else p.samples = 5;
  p.warmup = std::max(2, p.batch);
  return p;
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

std::vector<float> collective_expected_period(Collective c, int rank, int nranks) {
  std::vector<float> out(kCollectivePatternPeriod, 0.0f);
  for (std::size_t j = 0; j < kCollectivePatternPeriod; ++j) {
    switch (c) {
      case Collective::all_reduce: {
        double sum = 0;
        for (int q = 0; q < nranks; ++q) sum += collective_pattern(q, 0, j);
        out[j] = static_cast<float>(sum);
        break;
      }
      case Collective::all_gather: out[j] = collective_pattern(rank, 0, j); break;
      case Collective::reduce_scatter: {
        double sum = 0;
        for (int q = 0; q < nranks; ++q) sum += collective_pattern(q, rank, j);
        out[j] = static_cast<float>(sum);
        break;
      }
    }
  }
  return out;
}

}  // namespace gpucheck
