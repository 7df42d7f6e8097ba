// MoE dispatch's staging-index scan (gshmem/moe/dispatch_combine.h, step 2), pass by pass over a group of `size`
// threads run one after another, each pass after every thread finished the one before (as the group's syncs order
// them): slot[n] must be the number of entries before n with the same expert, per_expert[e] the count of e, for
// group sizes from one thread to a large GPU grid's, both ways of scanning (pairs, and a chunk a thread), chunk caps
// from 1 to kScanChunks and 0 to 50000 entries; nothing may be written past the [scan_chunks][E] scratch. Fresh
// random routings (uniform, one hot expert, all to one expert), poisoned outputs, exact comparison.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gshmem/moe/dispatch_combine.h"

namespace {

namespace moe = gshmem::moe;

constexpr uint32_t kPoison = 0xabababab;
constexpr std::size_t kGuard = 64;  // words after the scratch that must stay poisoned

struct Case {
  uint64_t n, experts, size, scan_chunks, chunk_entries;
  int routing;  // 0 uniform, 1 one hot expert (half the entries), 2 all to one expert
};

// Runs the three passes as dispatch does; `shape` gets the shape it used. Fails the test on a wrong slot or count.
void run_case(const Case& c, std::mt19937_64& rng, uint64_t seed, moe::ScanShape& shape) {
  moe::Plan p{};
  p.num_experts = c.experts;
  p.scan_chunks = c.scan_chunks;
  p.scan_chunk_entries = c.chunk_entries;
  std::vector<uint32_t> indices(c.n);
  const uint32_t hot = static_cast<uint32_t>(rng() % c.experts);
  for (auto& v : indices) {
    v = static_cast<uint32_t>(rng() % c.experts);
    if (c.routing == 2 || (c.routing == 1 && rng() % 2 == 0)) v = hot;
  }
  std::vector<uint32_t> slot(c.n, kPoison), per_expert(c.experts, kPoison);
  std::vector<uint32_t> chunk_count(c.scan_chunks * c.experts + kGuard, kPoison);
  shape = moe::scan_shape(p, c.n, c.size);
  for (uint64_t r = 0; r < c.size; ++r) moe::scan_count(shape, indices.data(), chunk_count.data(), r, c.size);
  for (uint64_t r = 0; r < c.size; ++r) moe::scan_prefix(shape, chunk_count.data(), per_expert.data(), r, c.size);
  for (uint64_t r = 0; r < c.size; ++r)
    moe::scan_number(shape, indices.data(), chunk_count.data(), slot.data(), r, c.size);

  std::vector<uint32_t> seen(c.experts, 0);
  const auto where = [&] {
    return ::testing::Message() << "seed " << seed << ", " << c.n << " entries, " << c.experts << " experts, group of "
                                << c.size << ", scan_chunks " << c.scan_chunks << ", chunk entries "
                                << c.chunk_entries << ", routing " << c.routing << ", " << shape.C << " chunks "
                                << (shape.by_pairs ? "by pairs" : "a thread each");
  };
  for (uint64_t n = 0; n < c.n; ++n) {
    ASSERT_EQ(slot[n], seen[indices[n]]++) << where() << ": slot of entry " << n;
  }
  for (uint64_t e = 0; e < c.experts; ++e) ASSERT_EQ(per_expert[e], seen[e]) << where() << ": count of expert " << e;
  for (std::size_t i = c.scan_chunks * c.experts; i < chunk_count.size(); ++i)
    ASSERT_EQ(chunk_count[i], kPoison) << where() << ": scratch word " << i << " past [scan_chunks][E]";
  EXPECT_GE(shape.C, 1u) << where();
  EXPECT_LE(shape.C, c.scan_chunks) << where();
}

moe::ScanShape checked(const Case& c, std::mt19937_64& rng, uint64_t seed) {
  moe::ScanShape shape{};
  run_case(c, rng, seed, shape);
  return shape;
}

TEST(MoeScan, ChunkCount) {
  // About sqrt(n), at most the cap and one per chunk_entries entries, at least 1.
  for (uint64_t cap : {1ull, 2ull, 7ull, 1024ull})
    for (uint64_t entries : {1ull, 8ull})
      for (uint64_t n = 0; n < 70000; ++n) {
        moe::Plan p{};
        p.scan_chunks = cap;
        p.scan_chunk_entries = entries;
        uint64_t want = 1;
        while (want * want < n) ++want;
        want = std::min({want, (n + entries - 1) / entries, cap});
        if (want == 0) want = 1;
        ASSERT_EQ(moe::scan_chunks_of(p, n), want) << n << " entries, cap " << cap << ", " << entries << " a chunk";
      }
}

TEST(MoeScan, MatchesTheSerialScan) {
  const uint64_t seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  bool pairs = false, chunks = false;
  const uint64_t sizes[] = {1, 2, 3, 8, 31, 32, 100, 1024, 70000};
  const uint64_t experts[] = {1, 3, 8, 64, 256, 1000};
  const uint64_t ns[] = {0, 1, 7, 8, 9, 17, 64, 100, 1023, 4096, 50000};
  for (int round = 0; round < 400; ++round) {
    Case c{};
    c.n = ns[rng() % std::size(ns)];
    c.experts = experts[rng() % std::size(experts)];
    c.size = sizes[rng() % std::size(sizes)];
    const uint64_t caps[] = {1, 7, moe::kScanChunks};
    c.scan_chunks = caps[rng() % std::size(caps)];
    c.chunk_entries = rng() % 2 == 0 ? 1 : moe::kScanChunkEntries;
    c.routing = static_cast<int>(rng() % 3);
    moe::ScanShape s{};
    run_case(c, rng, seed, s);
    if (HasFatalFailure()) return;
    (s.by_pairs ? pairs : chunks) = true;
  }
  EXPECT_TRUE(pairs) << "seed " << seed << ": no case scanned by pairs";
  EXPECT_TRUE(chunks) << "seed " << seed << ": no case scanned a chunk a thread";
}

TEST(MoeScan, BothWaysAtTheirEdges) {
  // A group of 1 with more pairs than kScanPairsPerThread scans a chunk a thread; one with few pairs, and a grid of
  // many threads, by pairs (a GPU's grid: 4096 tokens x 8 of 256 experts, 182 chunks).
  const uint64_t seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  EXPECT_FALSE(checked({32768, 256, 1, moe::kScanChunks, moe::kScanChunkEntries, 0}, rng, seed).by_pairs);
  EXPECT_TRUE(checked({8, 8, 1, moe::kScanChunks, moe::kScanChunkEntries, 0}, rng, seed).by_pairs);
  const moe::ScanShape grid = checked({32768, 256, 67584, moe::kScanChunks, moe::kScanChunkEntries, 1}, rng, seed);
  EXPECT_TRUE(grid.by_pairs);
  EXPECT_EQ(grid.C, 182u);
  EXPECT_TRUE(checked({50000, 1000, 8, 7, 1, 2}, rng, seed).C <= 7);
}

}  // namespace
