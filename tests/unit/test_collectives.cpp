#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cases/nccl.hpp"
#include "gpucheck/core/collectives.hpp"
#include "gpucheck/core/contract.hpp"

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
  const auto ar1 = collective_expected_period(Collective::all_reduce, 0, 0, 1);
  ASSERT_EQ(ar1.size(), kCollectivePatternPeriod);
  EXPECT_EQ(ar1[5], collective_pattern(0, 0, 5));
  const auto ar8 = collective_expected_period(Collective::all_reduce, 5, 0, 8);
  for (std::size_t j : {std::size_t{0}, std::size_t{1}, kCollectivePatternPeriod - 1}) {
    float sum = 0;
    for (int q = 0; q < 8; ++q) sum += collective_pattern(q, 0, j);  // exact: small integers
    EXPECT_EQ(ar8[j], sum);
    EXPECT_LE(ar8[j], 120.0f);
  }
  // All-gather: output segment s is rank s's input, whichever rank holds it.
  const auto ag = collective_expected_period(Collective::all_gather, 2, 6, 8);
  EXPECT_EQ(ag[9], collective_pattern(6, 0, 9));
  EXPECT_EQ(ag, collective_expected_period(Collective::all_gather, 7, 6, 8));
  EXPECT_NE(ag, collective_expected_period(Collective::all_gather, 2, 5, 8));
  const auto rs = collective_expected_period(Collective::reduce_scatter, 2, 0, 3);
  EXPECT_EQ(rs[11], collective_pattern(0, 2, 11) + collective_pattern(1, 2, 11) + collective_pattern(2, 2, 11));
  // Reduce-scatter with one rank is the identity on segment 0.
  const auto rs1 = collective_expected_period(Collective::reduce_scatter, 0, 0, 1);
  EXPECT_EQ(rs1[100], collective_pattern(0, 0, 100));
}

TEST(Collectives, TableHasOneRowPerCollective) {
  const auto rows = collective_table();
  ASSERT_EQ(rows.size(), 3u);
  std::set<std::string_view> variants;
  for (const CollectiveSpec& r : rows) {
    EXPECT_EQ(&collective_spec(r.id), &r);
    variants.insert(r.variant);
    ASSERT_NE(r.bus_factor, nullptr);
    ASSERT_NE(r.expected, nullptr);
    EXPECT_GT(r.bus_factor(2), 0.0);
  }
  EXPECT_EQ(variants.size(), rows.size());  // names must not collide
  // The suites list the rows in table order: all-reduce first.
  EXPECT_EQ(rows[0].id, Collective::all_reduce);
  EXPECT_THROW(collective_spec(static_cast<Collective>(99)), std::invalid_argument);
}

TEST(Collectives, Segments) {
  // Reduce-scatter: n input segments (one per destination), one output segment.
  CollectiveCounts k = collective_counts(Collective::reduce_scatter, 64 * MiB, 4, 4);
  EXPECT_EQ(k.send_segments, 4);
  EXPECT_EQ(k.recv_segments, 1);
  EXPECT_EQ(k.send_segment_elems(), k.per_rank);
  EXPECT_EQ(k.recv_segment_elems(), k.per_rank);
  // All-gather: one input segment, n output segments (one per source rank).
  k = collective_counts(Collective::all_gather, 64 * MiB, 4, 4);
  EXPECT_EQ(k.send_segments, 1);
  EXPECT_EQ(k.recv_segments, 4);
  EXPECT_EQ(k.recv_segment_elems(), k.per_rank);
  // All-reduce: the whole buffer is one segment on both sides.
  k = collective_counts(Collective::all_reduce, 64 * MiB, 4, 4);
  EXPECT_EQ(k.send_segments, 1);
  EXPECT_EQ(k.recv_segments, 1);
  EXPECT_EQ(k.recv_segment_elems(), 16 * MiB);
  // Not runnable: no segments, no division by zero.
  k = collective_counts(Collective::all_gather, 4, 4, 8);
  EXPECT_EQ(k.send_segments, 0);
  EXPECT_EQ(k.recv_segment_elems(), 0u);
}

TEST(Collectives, PlacementOutOfPlace) {
  const CollectiveCounts k = collective_counts(Collective::all_gather, MiB, 4, 4);
  const CollectivePlacement p = collective_placement(Collective::all_gather, k, 3, false);
  EXPECT_EQ(p.a_elems, k.send_elems);
  EXPECT_EQ(p.b_elems, k.recv_elems);
  EXPECT_EQ(p.send_offset, 0u);
  EXPECT_EQ(p.recv_offset, 0u);
}

TEST(Collectives, PlacementInPlaceLikeNccl) {
  // All-gather in place: the input sits at this rank's share of the output.
  CollectiveCounts k = collective_counts(Collective::all_gather, MiB, 4, 4);
  CollectivePlacement p = collective_placement(Collective::all_gather, k, 3, true);
  EXPECT_EQ(p.a_elems, k.recv_elems);
  EXPECT_EQ(p.b_elems, 0u);
  EXPECT_EQ(p.send_offset, 3 * k.per_rank);
  EXPECT_EQ(p.recv_offset, 0u);
  EXPECT_LE(p.send_offset + k.send_elems, p.a_elems);
  // Reduce-scatter in place: the output sits at this rank's share of the input.
  k = collective_counts(Collective::reduce_scatter, MiB, 4, 4);
  p = collective_placement(Collective::reduce_scatter, k, 2, true);
  EXPECT_EQ(p.a_elems, k.send_elems);
  EXPECT_EQ(p.send_offset, 0u);
  EXPECT_EQ(p.recv_offset, 2 * k.per_rank);
  EXPECT_LE(p.recv_offset + k.recv_elems, p.a_elems);
  // All-reduce in place: one buffer, both at 0.
  k = collective_counts(Collective::all_reduce, MiB, 4, 4);
  p = collective_placement(Collective::all_reduce, k, 2, true);
  EXPECT_EQ(p.a_elems, k.send_elems);
  EXPECT_EQ(p.send_offset, 0u);
  EXPECT_EQ(p.recv_offset, 0u);
  // Rank 0 of any collective starts at 0.
  EXPECT_EQ(collective_placement(Collective::all_gather, k, 0, true).send_offset, 0u);
}

TEST(Collectives, MemoryPerCase) {
  // 1 GiB all-reduce out of place: 2 GiB of buffers, 64 MiB of tile and one period.
  const std::uint64_t scratch = (kCollectivePatternPeriod * 256 + kCollectivePatternPeriod) * 4;
  EXPECT_EQ(collective_case_bytes(Collective::all_reduce, false, GiB, 4, 2), 2 * GiB + scratch);
  // Small cases: the tile shrinks to the output segment.
  const CollectiveCounts small = collective_counts(Collective::all_gather, 4 * KiB, 4, 4);
  EXPECT_EQ(collective_verify_scratch_elems(small), small.per_rank + kCollectivePatternPeriod);
  EXPECT_EQ(collective_memory_budget(0), 0u);
  EXPECT_EQ(collective_memory_budget(2 * GiB), 0u);  // 90% of 2 GiB is under the reserve
  EXPECT_EQ(collective_memory_budget(100 * GiB), 100 * GiB / 10 * 9 - 2 * GiB);
  EXPECT_EQ(collective_memory_budget(~std::uint64_t{0}), ~std::uint64_t{0} / 10 * 9 - 2 * GiB);  // no overflow
}

TEST(Collectives, BufferCopiesSpanTwiceTheL2) {
  constexpr std::uint64_t l2 = 60 * MiB, lots = std::uint64_t{100} << 30;
  // All-reduce 1 MiB out of place: 2 MiB per copy, 60 copies span 120 MiB.
  EXPECT_EQ(collective_buffer_copies(2 * MiB, l2, lots), 60);
  // 16 MiB: 32 MiB per copy, 4 copies (128 MiB); 3 would span 96 MiB, under 120.
  EXPECT_EQ(collective_buffer_copies(32 * MiB, l2, lots), 4);
  // Exactly the span, one byte over and one byte under it.
  EXPECT_EQ(collective_buffer_copies(120 * MiB, l2, lots), 1);
  EXPECT_EQ(collective_buffer_copies(120 * MiB - 1, l2, lots), 2);
  EXPECT_EQ(collective_buffer_copies(60 * MiB, l2, lots), 2);
  // Beyond the span a buffer is cold anyway.
  EXPECT_EQ(collective_buffer_copies(1024 * MiB, l2, lots), 1);
  // Tiny cases stop at the cap.
  EXPECT_EQ(collective_buffer_copies(8, l2, lots), kCollectiveMaxCopies);
  // The extra copies must fit the budget: 59 more 2 MiB copies need 118 MiB.
  EXPECT_EQ(collective_buffer_copies(2 * MiB, l2, 118 * MiB), 60);
  EXPECT_EQ(collective_buffer_copies(2 * MiB, l2, 118 * MiB - 1), 1);
  // Degenerate inputs: nothing to rotate.
  EXPECT_EQ(collective_buffer_copies(0, l2, lots), 1);
  EXPECT_EQ(collective_buffer_copies(2 * MiB, 0, lots), 1);
}

TEST(Collectives, WhatMovesAndWhatCanBeCheckedTwice) {
  EXPECT_TRUE(collective_moves_data(false, 1));
  EXPECT_FALSE(collective_moves_data(true, 1));
  EXPECT_TRUE(collective_moves_data(true, 2));
  for (const CollectiveSpec& r : collective_table()) EXPECT_TRUE(collective_repeatable(r.id, false));
  EXPECT_FALSE(collective_repeatable(Collective::all_reduce, true));
  EXPECT_FALSE(collective_repeatable(Collective::reduce_scatter, true));
  EXPECT_TRUE(collective_repeatable(Collective::all_gather, true));
}

// A suite's names for a job of `nranks`, from the family's one case model
// (benchmarks/cases/nccl.hpp), named by core's collective_case_name.
std::vector<std::string> names_of(Suite s, int nranks) {
  std::vector<std::string> out;
  for (const nccl::Case& c : nccl::cases(s, nullptr, nranks)) {
    EXPECT_EQ(c.ranks, nranks);
    out.push_back(collective_case_name(c.c.coll, c.c.in_place, DType::fp32, c.c.bytes, nranks));
    EXPECT_EQ(out.back(), c.name());
  }
  return out;
}

TEST(Collectives, QuickSuiteNamesAreTheBaselineKeys) {
  const std::vector<std::string> g2 = {
      "nccl/allreduce/fp32/1MiB/g2",           "nccl/allreduce_inplace/fp32/1MiB/g2",
      "nccl/allreduce/fp32/64MiB/g2",          "nccl/allreduce_inplace/fp32/64MiB/g2",
      "nccl/allreduce/fp32/1GiB/g2",           "nccl/allreduce_inplace/fp32/1GiB/g2",
      "nccl/allgather/fp32/64MiB/g2",          "nccl/allgather_inplace/fp32/64MiB/g2",
      "nccl/reducescatter/fp32/64MiB/g2",      "nccl/reducescatter_inplace/fp32/64MiB/g2"};
  EXPECT_EQ(names_of(Suite::quick, 2), g2);
  std::vector<std::string> g8 = g2;  // any job of two ranks or more: the same cases
  for (std::string& n : g8) n.back() = '8';
  EXPECT_EQ(names_of(Suite::quick, 8), g8);
  const std::vector<std::string> g1 = {"nccl/allreduce/fp32/1MiB/g1", "nccl/allreduce/fp32/64MiB/g1",
                                       "nccl/allreduce/fp32/1GiB/g1", "nccl/allgather/fp32/64MiB/g1",
                                       "nccl/reducescatter/fp32/64MiB/g1"};
  EXPECT_EQ(names_of(Suite::quick, 1), g1);
}

TEST(Collectives, OtherSuites) {
  EXPECT_EQ(names_of(Suite::accept, 8), std::vector<std::string>{"nccl/allreduce/fp32/1GiB/g8"});
  // What acceptance reads (contract::accept_nccl_name) is what the accept suite registers.
  for (int n : {1, 2, 8}) EXPECT_EQ(names_of(Suite::accept, n), std::vector<std::string>{contract::accept_nccl_name(n)});
  EXPECT_TRUE(names_of(Suite::burn, 8).empty());
  const auto full = names_of(Suite::full, 2);
  EXPECT_EQ(full.size(), 3u * 31u * 2u);
  EXPECT_EQ(full.front(), "nccl/allreduce/fp32/8B/g2");
  EXPECT_EQ(full[1], "nccl/allreduce_inplace/fp32/8B/g2");
  EXPECT_EQ(full.back(), "nccl/reducescatter_inplace/fp32/8GiB/g2");
  EXPECT_EQ(std::set<std::string>(full.begin(), full.end()).size(), full.size());  // unique keys
  // The full suite keeps one rank's in-place cases (as nccl-tests does).
  EXPECT_EQ(names_of(Suite::full, 1).size(), full.size());
}

TEST(Collectives, TimingLikeNcclTestsWithSeveralRanks) {
  SamplingPlan d;  // the engine's defaults
  const CollectiveTiming t = collective_timing({Collective::all_reduce, false, MiB}, 2, d);
  EXPECT_EQ(t.mode, TimingMode::wall);
  EXPECT_EQ(t.plan.min_batch, 20);  // nccl-tests -n 20
  EXPECT_GE(t.plan.max_batch, t.plan.min_batch);
  EXPECT_GE(t.plan.warmup_calls, 5);  // -w 5
  EXPECT_EQ(t.plan.stop.min_samples, d.stop.min_samples);
  EXPECT_EQ(choose_batch(26e-6, t.plan.min_sample_s, t.plan.min_batch, t.plan.max_batch), 20);
  EXPECT_EQ(choose_batch(25e-3, t.plan.min_sample_s, t.plan.min_batch, t.plan.max_batch), 20);  // 8 GiB
  // Large sizes: 5 samples of 20 calls are enough.
  const CollectiveTiming big = collective_timing({Collective::all_gather, true, 256 * MiB}, 8, d);
  EXPECT_EQ(big.plan.stop.min_samples, 5);
  EXPECT_EQ(collective_timing({Collective::all_gather, true, 128 * MiB}, 8, d).plan.stop.min_samples,
            d.stop.min_samples);
  // A larger engine default is kept.
  SamplingPlan wide = d;
  wide.max_batch = 200;
  wide.warmup_calls = 9;
  const CollectiveTiming w = collective_timing({Collective::all_reduce, false, 8}, 2, wide);
  EXPECT_EQ(w.plan.max_batch, 200);
  EXPECT_EQ(w.plan.warmup_calls, 9);
  // An engine default below 20 calls is raised so the batch floor holds.
  SamplingPlan narrow = d;
  narrow.max_batch = 4;
  EXPECT_EQ(collective_timing({Collective::all_reduce, false, 8}, 2, narrow).plan.max_batch, 20);
}

TEST(Collectives, TimingOneRankIsDeviceTime) {
  SamplingPlan d;
  const CollectiveTiming t = collective_timing({Collective::all_reduce, false, MiB}, 1, d);
  EXPECT_EQ(t.mode, TimingMode::held);
  EXPECT_EQ(t.plan.min_batch, d.min_batch);  // batched to the minimum sample time
  EXPECT_EQ(t.plan.max_batch, d.max_batch);
  EXPECT_GE(t.plan.warmup_calls, 5);
  // In place with one rank nothing runs on the GPU: per call (the launch cost).
  EXPECT_EQ(collective_timing({Collective::all_reduce, true, MiB}, 1, d).mode, TimingMode::per_call);
  EXPECT_EQ(collective_timing({Collective::all_reduce, false, GiB}, 1, d).plan.stop.min_samples, 5);
}

TEST(Collectives, OneRanksShortCallsAreGraphReplaysWithTheirOwnMethod) {
  SamplingPlan d;
  const CollectiveTiming t = collective_timing({Collective::all_reduce, false, MiB}, 1, d);
  EXPECT_TRUE(t.graph);
  EXPECT_EQ(t.method, kCollectiveGraphMethod);
  EXPECT_EQ(kCollectiveGraphMethod, 2);
  EXPECT_TRUE(collective_timing({Collective::all_gather, false, 8 * MiB}, 1, d).graph);  // the boundary
  for (const CollectiveTiming& other : {collective_timing({Collective::all_reduce, false, 8 * MiB + 1}, 1, d),
                                        collective_timing({Collective::all_reduce, false, 64 * MiB}, 1, d),
                                        collective_timing({Collective::all_reduce, true, MiB}, 1, d),  // per call
                                        collective_timing({Collective::all_reduce, false, MiB}, 2, d)}) {
    EXPECT_FALSE(other.graph);
    EXPECT_EQ(other.method, 1);
  }
}

TEST(Collectives, ParseEnvInt) {
  EXPECT_EQ(parse_env_int("60", 1, 1 << 20), 60);
  EXPECT_EQ(parse_env_int("0", 0, 10), 0);
  EXPECT_EQ(parse_env_int("10", 0, 10), 10);
  EXPECT_FALSE(parse_env_int("0", 1, 10));
  EXPECT_FALSE(parse_env_int("11", 0, 10));
  EXPECT_FALSE(parse_env_int("", 0, 10));
  EXPECT_FALSE(parse_env_int("-1", -5, 10));  // digits only
  EXPECT_FALSE(parse_env_int("+1", 0, 10));
  EXPECT_FALSE(parse_env_int(" 1", 0, 10));
  EXPECT_FALSE(parse_env_int("1 ", 0, 10));
  EXPECT_FALSE(parse_env_int("1.5", 0, 10));
  EXPECT_FALSE(parse_env_int("1e3", 0, 10000));
  EXPECT_FALSE(parse_env_int("99999999999999999999999", 0, 10));  // overflow
}

}  // namespace
}  // namespace gpucheck
