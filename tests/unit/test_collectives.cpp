#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "gpucheck/core/collectives.hpp"

namespace gpucheck {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

TEST(Collectives, BusFactorsMatchNcclTests) {
  EXPECT_EQ(busbw_factor(Collective::all_reduce, 1), 0.0);
  EXPECT_EQ(busbw_factor(Collective::all_gather, 1), 0.0);
  EXPECT_EQ(busbw_factor(Collective::reduce_scatter, 1), 0.0);
  EXPECT_EQ(busbw_factor(Collective::all_reduce, 0), 0.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::all_reduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::all_gather, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::reduce_scatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::all_reduce, 16), 2.0 * 15 / 16);
}

TEST(Collectives, Rates) {
  // 1 GiB in 10 ms: 107.37 GB/s algbw; all-reduce on 8 ranks: x1.75.
  EXPECT_NEAR(algbw_GBps(GiB, 0.01), 107.374182, 1e-6);
  EXPECT_NEAR(busbw_GBps(Collective::all_reduce, GiB, 0.01, 8), 107.374182 * 1.75, 1e-6);
  EXPECT_EQ(busbw_GBps(Collective::all_reduce, GiB, 0.01, 1), 0.0);  // one GPU: like nccl-tests
  EXPECT_EQ(algbw_GBps(GiB, 0.0), 0.0);
  EXPECT_EQ(algbw_GBps(GiB, -1.0), 0.0);
}

TEST(Collectives, CountsAllReduce) {
  const CollectiveCounts k = collective_counts(Collective::all_reduce, 8, 4, 8);
  EXPECT_EQ(k.count, 2u);
  EXPECT_EQ(k.send_elems, 2u);
  EXPECT_EQ(k.recv_elems, 2u);
  EXPECT_EQ(k.bytes, 8u);
  const CollectiveCounts big = collective_counts(Collective::all_reduce, 8 * GiB, 4, 1);
  EXPECT_EQ(big.count, std::size_t{2} * GiB);
  EXPECT_EQ(big.bytes, 8 * GiB);
  EXPECT_FALSE(collective_counts(Collective::all_reduce, 2, 4, 1).runnable());
}

TEST(Collectives, CountsAllGatherPerRank) {
  // 1 MiB fp32 over 8 ranks: 32768 elements each, output 262144.
  CollectiveCounts k = collective_counts(Collective::all_gather, MiB, 4, 8);
  EXPECT_EQ(k.count, 32768u);
  EXPECT_EQ(k.send_elems, 32768u);
  EXPECT_EQ(k.recv_elems, 262144u);
  EXPECT_EQ(k.bytes, MiB);
  // Not divisible: 1 MiB over 3 ranks rounds down to a multiple of 3 elements.
  k = collective_counts(Collective::all_gather, MiB, 4, 3);
  EXPECT_EQ(k.per_rank, 262144u / 3);
  EXPECT_EQ(k.recv_elems, (262144u / 3) * 3);
  EXPECT_EQ(k.bytes, (262144u / 3) * 3 * 4);
  EXPECT_LT(k.bytes, MiB);
  // 8 B = 2 floats cannot be split over 8 ranks: no case.
  EXPECT_FALSE(collective_counts(Collective::all_gather, 8, 4, 8).runnable());
  EXPECT_TRUE(collective_counts(Collective::all_gather, 8, 4, 2).runnable());
  EXPECT_EQ(collective_counts(Collective::all_gather, 8, 4, 1).count, 2u);
}

TEST(Collectives, CountsReduceScatterPerRank) {
  CollectiveCounts k = collective_counts(Collective::reduce_scatter, 64 * MiB, 4, 8);
  EXPECT_EQ(k.count, 2u * MiB);
  EXPECT_EQ(k.recv_elems, 2u * MiB);
  EXPECT_EQ(k.send_elems, 16u * MiB);
  EXPECT_EQ(k.bytes, 64 * MiB);
  k = collective_counts(Collective::reduce_scatter, 40, 4, 3);  // 10 elements over 3
  EXPECT_EQ(k.count, 3u);
  EXPECT_EQ(k.send_elems, 9u);
  EXPECT_EQ(k.bytes, 36u);
  EXPECT_FALSE(collective_counts(Collective::reduce_scatter, 8, 4, 0).runnable());
  EXPECT_FALSE(collective_counts(Collective::reduce_scatter, 8, 0, 1).runnable());
}

TEST(Collectives, BufferBytes) {
  EXPECT_EQ(collective_buffer_bytes(Collective::all_reduce, false, GiB, 4, 8), 2 * GiB);
  EXPECT_EQ(collective_buffer_bytes(Collective::all_reduce, true, GiB, 4, 8), GiB);
  EXPECT_EQ(collective_buffer_bytes(Collective::all_gather, false, GiB, 4, 8), GiB + GiB / 8);
  EXPECT_EQ(collective_buffer_bytes(Collective::all_gather, true, GiB, 4, 8), GiB);
  EXPECT_EQ(collective_buffer_bytes(Collective::reduce_scatter, false, GiB, 4, 8), GiB + GiB / 8);
  EXPECT_EQ(collective_buffer_bytes(Collective::reduce_scatter, true, GiB, 4, 8), GiB);
  EXPECT_EQ(collective_buffer_bytes(Collective::all_gather, false, GiB, 4, 1), 2 * GiB);
}

TEST(Collectives, Sweeps) {
  const auto s = geometric_sizes(8, 8 * GiB, 2);
  ASSERT_EQ(s.size(), 31u);
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s.back(), 8 * GiB);
  const auto p = geometric_sizes(4 * KiB, GiB, 4);
  ASSERT_EQ(p.size(), 10u);
  EXPECT_EQ(p[4], MiB);
  EXPECT_EQ(p.back(), GiB);
  EXPECT_TRUE(geometric_sizes(16, 8, 2).empty());
  EXPECT_EQ(geometric_sizes(8, 8, 2).size(), 1u);
  // No overflow near the top of the range.
  EXPECT_EQ(geometric_sizes(std::uint64_t{1} << 62, ~std::uint64_t{0}, 2).size(), 2u);
  EXPECT_THROW(geometric_sizes(0, 8, 2), std::invalid_argument);
  EXPECT_THROW(geometric_sizes(1, 8, 1), std::invalid_argument);
}

TEST(Collectives, Names) {
  EXPECT_EQ(collective_case_name(Collective::all_reduce, false, DType::fp32, GiB, 1), "nccl/allreduce/fp32/1GiB/g1");
  EXPECT_EQ(collective_case_name(Collective::all_reduce, true, DType::fp32, GiB, 8),
            "nccl/allreduce_inplace/fp32/1GiB/g8");
  EXPECT_EQ(collective_case_name(Collective::all_gather, false, DType::fp32, 64 * MiB, 16),
            "nccl/allgather/fp32/64MiB/g16");
  EXPECT_EQ(collective_case_name(Collective::reduce_scatter, true, DType::fp32, 8, 2),
            "nccl/reducescatter_inplace/fp32/8B/g2");
}

TEST(Collectives, PlanIsFixedAndBounded) {
  for (std::uint64_t b : geometric_sizes(8, 8 * GiB, 2)) {
    const CollectivePlan p = collective_plan(b);
    EXPECT_GE(p.samples, 5) << b;
    EXPECT_GE(p.batch, 1) << b;
    EXPECT_LE(p.batch, 20) << b;
    EXPECT_GE(p.warmup, 2) << b;
  }
  EXPECT_EQ(collective_plan(8).batch, 20);
  EXPECT_EQ(collective_plan(64 * MiB).batch, 1);
  EXPECT_EQ(collective_plan(16 * MiB).batch, 4);
  EXPECT_EQ(collective_plan(GiB).samples, 10);
  EXPECT_EQ(collective_plan(8 * GiB).samples, 5);
  EXPECT_EQ(collective_plan(0).batch, 20);
}

TEST(Collectives, PatternIsSmallIntegersRankAndSegmentDependent) {
  std::set<float> values;
  int rank_differs = 0, segment_differs = 0;
  for (std::size_t j = 0; j < 4096; ++j) {
    const float v = collective_pattern(3, 1, j);
    EXPECT_GE(v, 1.0f);
    EXPECT_LE(v, 15.0f);
    EXPECT_EQ(v, std::floor(v));
    values.insert(v);
    rank_differs += v != collective_pattern(4, 1, j);
    segment_differs += v != collective_pattern(3, 2, j);
  }
  EXPECT_EQ(values.size(), 15u);
  EXPECT_GT(rank_differs, 3000);
  EXPECT_GT(segment_differs, 3000);
  // Periodic: element j and j + period hold the same value.
  EXPECT_EQ(collective_pattern(1, 0, 7), collective_pattern(1, 0, 7 + kCollectivePatternPeriod));
  // A shift by a power of two is visible.
  int shifted = 0;
  for (std::size_t j = 0; j < 4096; ++j) shifted += collective_pattern(0, 0, j) != collective_pattern(0, 0, j + 1024);
  EXPECT_GT(shifted, 3000);
}

TEST(Collectives, ExpectedPeriods) {
  const auto ar1 = collective_expected_period(Collective::all_reduce, 0, 1);
  ASSERT_EQ(ar1.size(), kCollectivePatternPeriod);
  EXPECT_EQ(ar1[5], collective_pattern(0, 0, 5));
  const auto ar8 = collective_expected_period(Collective::all_reduce, 5, 8);
  for (std::size_t j : {std::size_t{0}, std::size_t{1}, kCollectivePatternPeriod - 1}) {
    float sum = 0;
    for (int q = 0; q < 8; ++q) sum += collective_pattern(q, 0, j);  // exact: small integers
    EXPECT_EQ(ar8[j], sum);
    EXPECT_LE(ar8[j], 120.0f);
  }
  const auto ag = collective_expected_period(Collective::all_gather, 6, 8);
  EXPECT_EQ(ag[9], collective_pattern(6, 0, 9));
  const auto rs = collective_expected_period(Collective::reduce_scatter, 2, 3);
  EXPECT_EQ(rs[11], collective_pattern(0, 2, 11) + collective_pattern(1, 2, 11) + collective_pattern(2, 2, 11));
  // Reduce-scatter with one rank is the identity on segment 0.
  const auto rs1 = collective_expected_period(Collective::reduce_scatter, 0, 1);
  EXPECT_EQ(rs1[100], collective_pattern(0, 0, 100));
}

}  // namespace
}  // namespace gpucheck
