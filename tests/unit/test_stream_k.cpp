// Stream-K's arithmetic for the hopper attention kernel (kernels/src/attention_stream_k.hpp):
// the share of the work tiles among the blocks, the rule that decides when a launch uses it,
// and the causal work order's groups of heads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attention_stream_k.hpp"

namespace gpucheck::kernels::detail {
namespace {

TEST(StreamK, BeginIsTheFloorOfTheExactProduct) {
  for (int T : {1, 7, 131, 132, 2176, 45056, 0x7ffffff0})
    for (int G : {1, 2, 7, 132, 133})
      for (int b = 0; b <= G; ++b) {
        const long long exact = static_cast<long long>(T) * b / G;
        EXPECT_EQ(stream_k_begin(T, G, b), exact) << T << " " << G << " " << b;
      }
  EXPECT_EQ(stream_k_begin(0, 132, 77), 0);
}

// The kernel's schedule replayed: whole rounds of tiles in snake order, then each block's tail
// parts. Every K/V step of every work tile is computed by exactly one block; a tile of the tail
// is cut among consecutive blocks (those with tail steps), the first computing its head (K/V
// tile 0 on) as its range's last part, each later one its part as its range's first (so a block
// hands over one partial at most); the head's block reaches exactly those later blocks
// (stream_k_in_reach()) and stream_k_shares() names exactly the ones with a part.
void check_cover(int n_work, int n_kv, int G) {
  SCOPED_TRACE(std::to_string(n_work) + " tiles of " + std::to_string(n_kv) + " on " + std::to_string(G));
  const int rounds = n_work / G;
  std::vector<int> seen(static_cast<std::size_t>(n_work) * n_kv, 0);
  std::vector<int> head_block(static_cast<std::size_t>(n_work), -1), last_block(static_cast<std::size_t>(n_work), -1);
  std::vector<std::vector<int>> parts(static_cast<std::size_t>(n_work));  // the blocks with a part of each tile
  for (int b = 0; b < G; ++b) {
    for (int k = 0; k < rounds; ++k) {
      const int w = k * G + ((k & 1) ? G - 1 - b : b);
      for (int j = 0; j < n_kv; ++j) ++seen[static_cast<std::size_t>(w) * n_kv + j];
    }
    int k = 0;
    for (StreamKPart sp = stream_k_part(n_work, n_kv, G, b, 0); sp.n > 0; sp = stream_k_part(n_work, n_kv, G, b, ++k)) {
      ASSERT_GE(sp.tile, rounds * G);
      ASSERT_LT(sp.tile, n_work);
      ASSERT_GE(sp.j0, 0);
      ASSERT_LE(sp.j0 + sp.n, n_kv);
      const auto t = static_cast<std::size_t>(sp.tile);
      if (sp.j0 > 0) {
        EXPECT_EQ(k, 0) << "block " << b << ": only a range's first part starts inside a tile";
        EXPECT_GE(last_block[t], 0) << "tile " << sp.tile << ": a later part before its head";
      } else {
        head_block[t] = b;
        if (sp.n < n_kv) {
          EXPECT_EQ(stream_k_part(n_work, n_kv, G, b, k + 1).n, 0) << "block " << b << ": a head is its last part";
        }
      }
      last_block[t] = b;
      parts[t].push_back(b);
      for (int j = sp.j0; j < sp.j0 + sp.n; ++j) ++seen[t * n_kv + j];
    }
  }
  for (std::size_t s = 0; s < seen.size(); ++s) ASSERT_EQ(seen[s], 1) << "step " << s;
  for (int t = rounds * G; t < n_work; ++t) {
    const auto& mine = parts[static_cast<std::size_t>(t)];
    ASSERT_FALSE(mine.empty()) << "tile " << t;
    const int h = mine.front(), l = mine.back();
    EXPECT_EQ(head_block[static_cast<std::size_t>(t)], h) << "tile " << t << ": the head is the first block's";
    std::vector<int> shared;
    int c = h + 1;
    for (; stream_k_in_reach(n_work, n_kv, G, c, t); ++c)
      if (stream_k_shares(n_work, n_kv, G, c, t)) shared.push_back(c);
    EXPECT_GT(c, l) << "tile " << t << ": the reach ends before its last part";
    EXPECT_EQ(shared, std::vector<int>(mine.begin() + 1, mine.end())) << "tile " << t;
  }
}

TEST(StreamK, PartsCoverEveryStepOnce) {
  check_cover(2048, 32, 132);  // b4 h16 s4096 d128: 15 rounds, 68 tiles left (16.5 steps a block)
  check_cover(1408, 32, 132);  // b4 h16 s4096 d64 (192-row tiles): 10 rounds, 88 left
  check_cover(768, 8, 132);    // b8 h16 s1024 d64
  check_cover(4096, 32, 132);  // grouped-query b4 h32/8 s4096 d128: 31 rounds, 4 tiles left in 132 parts
  check_cover(133, 1, 132);    // one K/V tile per work tile: nothing to cut
  check_cover(132, 5, 132);    // whole rounds only
  check_cover(1000, 7, 3);
  check_cover(134, 3, 132);    // 2 tiles of 3 steps left: most blocks have no part
}

TEST(StreamK, SharesNoneBeyondTheLastBlock) {
  EXPECT_FALSE(stream_k_in_reach(2048, 32, 132, 132, 2047));
  EXPECT_FALSE(stream_k_shares(2048, 32, 132, 132, 2047));
  EXPECT_FALSE(stream_k_shares(2048, 32, 132, 200, 2047));
}

TEST(StreamK, PaysWhereTheLastRoundIsPartlyEmpty) {
  EXPECT_TRUE(stream_k_pays(2048, 32, 132));   // b4 h16 s4096 d128: 16 x 32 = 512 steps against 15 x 32 + 17
  EXPECT_TRUE(stream_k_pays(1408, 32, 132));   // d64 (192-row tiles): 352 against 10 x 32 + 22
  EXPECT_FALSE(stream_k_pays(768, 8, 132));    // b8 h16 s1024 d64: 48 against 47, 1 step saved
  EXPECT_FALSE(stream_k_pays(4096, 32, 132));  // grouped-query: 4 tiles left, parts of 1 step
  EXPECT_FALSE(stream_k_pays(768, 4, 132));    // b16 h16 s512 d64: 24 steps either way
  EXPECT_FALSE(stream_k_pays(264, 32, 132));   // whole rounds: nothing to balance
  EXPECT_FALSE(stream_k_pays(132, 32, 132));   // a tile per block
  EXPECT_FALSE(stream_k_pays(64, 64, 132));    // fewer tiles than blocks (decode)
  EXPECT_FALSE(stream_k_pays(0, 32, 132));
  EXPECT_FALSE(stream_k_pays(2048, 0, 132));
  EXPECT_FALSE(stream_k_pays(2048, 32, 0));
  EXPECT_FALSE(stream_k_pays(1LL << 26, 64, 132));  // steps past 32 bits
}

TEST(StreamK, PaysOnlyWithAllThreeConditions) {
  // 2% of the busiest block's steps: 2 blocks, tiles of 1000 steps; 21 tiles save 500 of 11000,
  // 201 tiles 500 of 101000 (0.5%).
  EXPECT_TRUE(stream_k_pays(21, 1000, 2));
  EXPECT_FALSE(stream_k_pays(201, 1000, 2));
  // 8 steps: 2 blocks, 3 tiles; of 16 steps 8 saved (32 against 24), of 14 steps 7.
  EXPECT_TRUE(stream_k_pays(3, 16, 2));
  EXPECT_FALSE(stream_k_pays(3, 14, 2));
  // At most three parts a tile: 4 blocks, tiles of 16 steps; 6 tiles leave 8 steps a block
  // (2 x 8 >= 16), 5 tiles 4 (a tile in four parts) though 12 steps would be saved.
  EXPECT_TRUE(stream_k_pays(6, 16, 4));
  EXPECT_FALSE(stream_k_pays(5, 16, 4));
}

TEST(CausalOrder, HeavyFirstGroupsFollowTheL2AndTheScheduler) {
  // b4 h16 s4096 d128: K and V 2 MB per head, 64 heads. Taken as blocks free: 8 heads (16 MB).
  EXPECT_EQ(causal_heavy_group(0, 64, 2LL << 20, false), 8);
  // Static persistent shares: one heavy-first sequence over all heads, whatever the bytes.
  EXPECT_EQ(causal_heavy_group(0, 64, 2LL << 20, true), 64);
  EXPECT_EQ(causal_heavy_group(0, 64, 1LL << 40, true), 64);
  // s16384 d128: 8 MB a head, 2 together; past 16 MB a head: one, never zero.
  EXPECT_EQ(causal_heavy_group(0, 32, 8LL << 20, false), 2);
  EXPECT_EQ(causal_heavy_group(0, 32, (16LL << 20) + 1, false), 1);
  EXPECT_EQ(causal_heavy_group(0, 32, 1LL << 40, false), 1);
  // Small heads: at most all of them (the boundary: exactly 16 MB over 4 heads).
  EXPECT_EQ(causal_heavy_group(0, 4, 4LL << 20, false), 4);
  EXPECT_EQ(causal_heavy_group(0, 4, 1024, false), 4);
  EXPECT_EQ(causal_heavy_group(0, 5, 4LL << 20, false), 4);
  // An experiment's group, capped at the heads there are; one head: 1.
  EXPECT_EQ(causal_heavy_group(3, 64, 2LL << 20, true), 3);
  EXPECT_EQ(causal_heavy_group(100, 64, 2LL << 20, false), 64);
  EXPECT_EQ(causal_heavy_group(0, 1, 1024, false), 1);
  EXPECT_EQ(causal_heavy_group(7, 1, 1024, true), 1);
  // Degenerate bytes do not divide by zero.
  EXPECT_EQ(causal_heavy_group(0, 64, 0, false), 64);
}

}  // namespace
}  // namespace gpucheck::kernels::detail
