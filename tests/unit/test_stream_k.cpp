// Stream-K's arithmetic for the hopper attention kernel (kernels/src/hopper/stream_k.hpp):
// the share of the work tiles among the blocks, the rule that decides among how many blocks a
// launch cuts the rest (if any),
// and the causal work order's groups of heads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hopper/stream_k.hpp"

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
// (stream_k_in_reach()) and stream_k_shares() names exactly the ones with a part. The rest is
// cut among the first P blocks: the others have no tail part.
void check_cover(int n_work, int n_kv, int G, int P) {
  SCOPED_TRACE(std::to_string(n_work) + " tiles of " + std::to_string(n_kv) + " on " + std::to_string(G) +
               ", the rest among " + std::to_string(P));
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
    for (StreamKPart sp = stream_k_part(n_work, n_kv, G, P, b, 0); sp.n > 0; sp = stream_k_part(n_work, n_kv, G, P, b, ++k)) {
      ASSERT_LT(b, P) << "a block past the first P with a tail part";
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
          EXPECT_EQ(stream_k_part(n_work, n_kv, G, P, b, k + 1).n, 0) << "block " << b << ": a head is its last part";
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
    for (; stream_k_in_reach(n_work, n_kv, G, P, c, t); ++c)
      if (stream_k_shares(n_work, n_kv, G, P, c, t)) shared.push_back(c);
    EXPECT_GT(c, l) << "tile " << t << ": the reach ends before its last part";
    EXPECT_LE(c, P) << "tile " << t << ": the reach goes past the blocks that share the rest";
    EXPECT_EQ(shared, std::vector<int>(mine.begin() + 1, mine.end())) << "tile " << t;
    // No more parts than stream_k_max_parts() counts for the cut (the rule's cost model).
    EXPECT_LE(static_cast<long long>(mine.size()), stream_k_max_parts(n_work % G, n_kv, P)) << "tile " << t;
  }
}

TEST(StreamK, PartsCoverEveryStepOnce) {
  // The rest among all blocks.
  check_cover(2048, 32, 132, 132);  // b4 h16 s4096 d128: 15 rounds, 68 tiles left (16.5 steps a block)
  check_cover(1408, 32, 132, 132);  // b4 h16 s4096 d64 (192-row tiles): 10 rounds, 88 left
  check_cover(768, 8, 132, 132);    // b8 h16 s1024 d64
  check_cover(4096, 32, 132, 132);  // grouped-query b4 h32/8 s4096 d128: 31 rounds, 4 tiles left in 132 parts
  check_cover(133, 1, 132, 132);    // one K/V tile per work tile: nothing to cut
  check_cover(132, 5, 132, 132);    // whole rounds only
  check_cover(1000, 7, 3, 3);
  check_cover(134, 3, 132, 132);    // 2 tiles of 3 steps left: most blocks have no part
  // The rest among fewer blocks (stream_k_blocks()'s P = m R: each tile in exactly m parts).
  check_cover(4096, 103, 132, 32);  // b1 h32 s16384 d128, 160-key tiles: 4 tiles left in 8 parts each
  check_cover(4096, 32, 132, 16);   // grouped-query: 4 parts each
  check_cover(4096, 103, 132, 4);   // m = 1: each tile of the rest whole, to one block
  check_cover(2048, 64, 132, 100);  // P not a multiple of R (68): tiles in 2 or 3 parts, 32 blocks idle
  check_cover(4096, 32, 132, 3);    // P < R: a block's range spans tiles (a later part, a whole tile, a head)
  check_cover(4096, 32, 132, 1);    // one block takes the whole rest
  check_cover(137, 5, 132, 12);     // 5 tiles of 5 steps among 12 blocks
  check_cover(1000, 7, 3, 2);
  // Fewer tiles than blocks (decode): no whole rounds; the launch is the P blocks of the cut.
  check_cover(64, 52, 128, 128);  // b8 h32/8 s1 over 8192 keys, 160-key tiles: 2 parts a tile
  check_cover(4, 52, 24, 24);     // b2 h8/2 s1 over 8192: 6 parts a tile
  check_cover(1, 200, 12, 12);    // one tile in 12 parts
  check_cover(5, 3, 15, 15);      // one step a part
}

TEST(StreamK, FewerTilesThanBlocksLeaveEveryBlockAPart) {
  // The launch runs exactly stream_k_blocks() blocks (the consumers take their first item
  // unchecked): each must have a part.
  for (long long n_work : {1LL, 4LL, 16LL, 64LL, 100LL, 131LL})
    for (long long n_kv : {1LL, 8LL, 9LL, 26LL, 52LL, 103LL, 2000LL}) {
      const int P = stream_k_blocks(n_work, n_kv, 132);
      if (P == 0) continue;
      EXPECT_GT(P, n_work) << n_work << " " << n_kv;
      EXPECT_LE(P, 132) << n_work << " " << n_kv;
      for (int b = 0; b < P; ++b)
        EXPECT_GT(stream_k_part(static_cast<int>(n_work), static_cast<int>(n_kv), P, P, b, 0).n, 0)
            << n_work << " tiles of " << n_kv << " among " << P << ": block " << b;
    }
}

TEST(StreamK, SharesNoneBeyondTheBlocksOfTheCut) {
  EXPECT_FALSE(stream_k_in_reach(2048, 32, 132, 132, 132, 2047));
  EXPECT_FALSE(stream_k_shares(2048, 32, 132, 132, 132, 2047));
  EXPECT_FALSE(stream_k_shares(2048, 32, 132, 132, 200, 2047));
  // Cut among 32 blocks: block 31 has the last part, 32 and on none.
  EXPECT_TRUE(stream_k_shares(4096, 103, 132, 32, 31, 4095));
  EXPECT_FALSE(stream_k_in_reach(4096, 103, 132, 32, 32, 4095));
  const StreamKPart idle = stream_k_part(4096, 103, 132, 32, 32, 0);
  EXPECT_EQ(idle.n, 0);
  const StreamKPart last = stream_k_part(4096, 103, 132, 32, 31, 0);
  EXPECT_EQ(last.tile, 4095);
  EXPECT_EQ(last.j0 + last.n, 103);
}

TEST(StreamK, MaxPartsCountsTheRangesATileSpans) {
  EXPECT_EQ(stream_k_max_parts(4, 103, 32), 8);    // P = 8 R: exactly 8 parts a tile
  EXPECT_EQ(stream_k_max_parts(4, 32, 4), 1);      // P = R: whole tiles
  EXPECT_EQ(stream_k_max_parts(4, 32, 132), 32);   // 128 steps in 132 ranges of 0 or 1 step: 32 a tile
  EXPECT_EQ(stream_k_max_parts(68, 32, 132), 3);   // 16.5 steps a range: 2 or 3 a tile
  EXPECT_EQ(stream_k_max_parts(1, 10, 1), 1);
  EXPECT_EQ(stream_k_max_parts(0, 10, 4), 0);
  EXPECT_EQ(stream_k_max_parts(4, 10, 0), 0);
}

TEST(StreamK, BlocksWhereTheLastRoundIsPartlyEmpty) {
  EXPECT_EQ(stream_k_blocks(2048, 32, 132), 132);  // b4 h16 s4096 d128: 512 steps against 15 x 32 + 17 + 2 parts
  EXPECT_EQ(stream_k_blocks(1408, 32, 132), 132);  // d64 (192-row tiles): 352 against 10 x 32 + 22 + 1 part
  EXPECT_EQ(stream_k_blocks(1280, 32, 132), 132);  // d64 s4096's 192-row launch of the split: 9 rounds, 92 left
  EXPECT_EQ(stream_k_blocks(768, 8, 132), 0);      // b8 h16 s1024 d64: 1 step saved, less than a part costs
  EXPECT_EQ(stream_k_blocks(512, 8, 132), 0);      // d64 s1024's 192-row launch: 116 of 132 in the last round
  EXPECT_EQ(stream_k_blocks(768, 4, 132), 0);      // b16 h16 s512 d64: 4 steps either way
  // Few tiles left, many steps each: cut among m R blocks, m parts a tile (m = 8: 13 steps and
  // 7 parts' cost against 103 steps; all 132 blocks would give 33 parts of 3-4 steps).
  EXPECT_EQ(stream_k_blocks(4096, 103, 132), 32);  // b1 h32 s16384 d128, 160-key tiles
  EXPECT_EQ(stream_k_blocks(133, 64, 132), 8);     // one tile left of 64 steps: 8 parts of 8
  // Grouped-query b4 h32/8 s4096 d128: 4 tiles left; among 16 blocks (4 parts each: 8 steps
  // with 128-key tiles, 7 with 160-key ones), measured +0.9% and +1.6% over no cut; among all
  // 132 (33 parts of one step) +0.2%.
  EXPECT_EQ(stream_k_blocks(4096, 32, 132), 16);
  EXPECT_EQ(stream_k_blocks(4096, 26, 132), 16);
  EXPECT_EQ(stream_k_blocks(264, 32, 132), 0);     // whole rounds: nothing to balance
  // Fewer tiles than blocks (decode over a long K/V): each tile in m parts, m R blocks.
  EXPECT_EQ(stream_k_blocks(64, 52, 132), 128);    // b8 h32/8 s1 over 8192 keys: 2 parts of 26
  EXPECT_EQ(stream_k_blocks(64, 64, 132), 128);
  EXPECT_EQ(stream_k_blocks(16, 52, 132), 96);     // 6 parts of 9 (8 would be 7 steps and 7 parts)
  EXPECT_EQ(stream_k_blocks(1, 200, 132), 12);     // one tile: 12 parts of 17
  EXPECT_EQ(stream_k_blocks(64, 8, 132), 0);       // d64 b1 h16 s1024: 4 steps saved
  EXPECT_EQ(stream_k_blocks(100, 1, 132), 0);      // fewer steps than blocks
  EXPECT_EQ(stream_k_blocks(132, 52, 132), 0);     // a tile per block
  EXPECT_EQ(stream_k_blocks(133, 4, 132), 0);      // one tile of 4 steps left: fewer than 8 steps to save
  EXPECT_EQ(stream_k_blocks(0, 32, 132), 0);
  EXPECT_EQ(stream_k_blocks(2048, 0, 132), 0);
  EXPECT_EQ(stream_k_blocks(2048, 32, 0), 0);
  EXPECT_EQ(stream_k_blocks(1LL << 26, 64, 132), 0);  // steps past 32 bits
}

TEST(StreamK, BlocksOnlyWhereTheCutSavesOnePercentAndEightSteps) {
  // 2 blocks, tiles of 1000 steps, one tile left: cut in 2, 500 steps less a part's cost saved,
  // of 11000 (21 tiles) but not of 101000 (201 tiles: 0.49%).
  EXPECT_EQ(stream_k_blocks(21, 1000, 2), 2);
  EXPECT_EQ(stream_k_blocks(201, 1000, 2), 0);
  // The cheapest cut: 4 blocks, one tile of 16 steps left: 4 parts of 4 (4 + 3 parts' cost)
  // against 2 of 8 (8 + 1) and 3 blocks (6 + 2).
  EXPECT_EQ(stream_k_blocks(5, 16, 4), 4);
  // P = G is a candidate beside m R: 4 blocks, 2 tiles of 16 left: 2 parts of 8 each.
  EXPECT_EQ(stream_k_blocks(6, 16, 4), 4);
  // 8 steps saved without the parts' cost, at least: 2 blocks, one tile left of 16 steps
  // saves 8, of 14 steps 7.
  EXPECT_EQ(stream_k_blocks(3, 16, 2), 2);
  EXPECT_EQ(stream_k_blocks(3, 14, 2), 0);
}

TEST(KeyTile, OneHundredSixtyKeysWhereTheirPaddingCostsAtMostThreePercent) {
  EXPECT_TRUE(prefer_160_key_tiles(2048));    // 13 tiles, 2080 keys against 2048
  EXPECT_TRUE(prefer_160_key_tiles(3000));    // 3040 against 3072
  EXPECT_TRUE(prefer_160_key_tiles(4096));    // 4160 against 4096 (1.6%)
  EXPECT_TRUE(prefer_160_key_tiles(8192));
  EXPECT_TRUE(prefer_160_key_tiles(16384));   // 16480 against 16384
  EXPECT_FALSE(prefer_160_key_tiles(1024));   // 1120 against 1024 (9%: measured -4.3%)
  EXPECT_FALSE(prefer_160_key_tiles(1500));   // 1600 against 1536
  EXPECT_FALSE(prefer_160_key_tiles(128));    // one 128-key tile exactly
  EXPECT_TRUE(prefer_160_key_tiles(160));     // one tile against two
  EXPECT_TRUE(prefer_160_key_tiles(1280));    // 8 tiles of 160 against 10 of 128
  // The boundary: 160 keys padded times 0.97 against 128 keys padded.
  EXPECT_TRUE(prefer_160_key_tiles(1249));    // 1280 x 0.97 = 1241.6 <= 1280
  EXPECT_FALSE(prefer_160_key_tiles(1));
  EXPECT_FALSE(prefer_160_key_tiles(0));
  EXPECT_FALSE(prefer_160_key_tiles(-5));
}

TEST(KeyTile, WideKeysWhereTilesRunSeveralRoundsOrAreSplit) {
  // (n_work 128-row tiles, n_kv 160-key steps, SMs)
  EXPECT_TRUE(wide_keys_pay(2048, 26, 132));   // b4 h16 s4096: 16 rounds
  EXPECT_TRUE(wide_keys_pay(4096, 103, 132));  // b1 h32 s16384
  EXPECT_TRUE(wide_keys_pay(133, 7, 132));     // one tile past a round
  EXPECT_TRUE(wide_keys_pay(64, 52, 132));     // decode b8 h32/8 s1 over 8192 keys: 2 parts a tile
  EXPECT_TRUE(wide_keys_pay(8, 205, 132));     // b1 h32/8 s1 over 32768 keys: 13 parts
  EXPECT_FALSE(wide_keys_pay(132, 52, 132));   // one round of whole tiles: the 176-key tile
  EXPECT_FALSE(wide_keys_pay(64, 8, 132));     // 1280 keys, 8 steps a tile: a cut saves too little
  EXPECT_FALSE(wide_keys_pay(100, 1, 132));    // one step a tile: nothing to cut
  EXPECT_FALSE(wide_keys_pay(0, 52, 132));
  EXPECT_FALSE(wide_keys_pay(64, 0, 132));
  EXPECT_FALSE(wide_keys_pay(64, 52, 0));
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
