// The collectives' choices (gshmem/coll/algorithms.h). Reduce: one-shot or two-shot by team size, size, in place
// and GSHMEM_COLL_TWO_SHOT_BYTES (0: automatic). The two-shot broadcast's split of the data: pieces per non-root,
// chunks per piece, parts per chunk. Every byte must be sent by the root exactly once and forwarded by exactly one
// owner, whatever the team size, root, size and part count (a gap would leave stale bytes in dest, an overlap would
// be two writers); chunk and part ranges stay aligned to kPartAlign from the piece's start; the chunk count follows
// the documented model (2 at 4 MiB, 5 at 16 MiB, 11 at 64 MiB, 16 from 128 MiB). And the reductions' data phase
// of the device scopes and the stream kernels, run on the host over a fake scope and fake peers (end of file).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gshmem/coll/algorithms.h"

namespace {

using gshmem::TeamValue;
namespace coll = gshmem::coll;

TEST(ReduceTwoShot, Automatic) {
  const std::size_t mib = std::size_t(1) << 20;
  for (std::size_t bytes : {std::size_t(8), mib - 1, mib, 4 * mib - 1, 4 * mib, 16 * mib, 256 * mib}) {
    EXPECT_EQ(coll::use_two_shot(2, bytes, false, 0), bytes >= coll::kTwoShotBytesPair) << bytes << " bytes at 2 PEs";
    EXPECT_TRUE(coll::use_two_shot(2, bytes, true, 0)) << bytes << " bytes at 2 PEs, in place";
    for (int size : {3, 4, 8}) {
      EXPECT_EQ(coll::use_two_shot(size, bytes, false, 0), bytes >= coll::kTwoShotBytes) << bytes << " at " << size;
      EXPECT_TRUE(coll::use_two_shot(size, bytes, true, 0));
    }
    EXPECT_FALSE(coll::use_two_shot(1, bytes, true, 0)) << "a team of one never syncs";
  }
}

TEST(ReduceTwoShot, SetValueAppliesToEveryTeamSize) {
  for (int size : {2, 3, 8}) {
    EXPECT_TRUE(coll::use_two_shot(size, 1, false, 1)) << "1 means always, at " << size;
    EXPECT_TRUE(coll::use_two_shot(size, 4096, false, 4096));
    EXPECT_FALSE(coll::use_two_shot(size, 4095, false, 4096));
    EXPECT_TRUE(coll::use_two_shot(size, 4095, true, 4096)) << "in place is always two-shot";
  }
}

// LL calls on a stream: one CTA per GSHMEM_COLL_LL_CTA_BYTES (16 KiB unless set) of the data a PE receives, 1 to
// kLLMaxParts; the buffers hold 128 KiB of data (the largest GSHMEM_COLL_LL_BYTES).
TEST(LL, Parts) {
  EXPECT_EQ(coll::ll_parts(0, 16384), 1);
  EXPECT_EQ(coll::ll_parts(8, 16384), 1);
  EXPECT_EQ(coll::ll_parts(16384, 16384), 1);
  EXPECT_EQ(coll::ll_parts(16392, 16384), 2);
  EXPECT_EQ(coll::ll_parts(65536, 16384), 4);
  EXPECT_EQ(coll::ll_parts(65536, 1024), coll::kLLMaxParts);
  EXPECT_EQ(coll::ll_parts(65536, 0), coll::kLLMaxParts);
  EXPECT_EQ(coll::kLLBufBytes / 2, std::size_t(131072));
  EXPECT_TRUE(coll::use_ll(2, 65536, 131072));
  EXPECT_FALSE(coll::use_ll(2, 65544, 131072));
  EXPECT_TRUE(coll::use_ll(8, 16384, 131072));
  EXPECT_FALSE(coll::use_ll(2, 65536, 65536));
}

// A group of 96 threads whose rank the test sets.
struct Group {
  static int size() { return 96; }
  static int rank() { return r; }
  static inline int r = 0;
};

// Every line of every section goes to exactly one thread of one part, whatever the group size and part count.
TEST(LL, LanesCoverEveryLineOnce) {
  for (int count : {1, 2, 3, 16})
    for (std::size_t lines : {std::size_t(1), std::size_t(95), std::size_t(4096), std::size_t(8191)}) {
      std::vector<int> hits(lines, 0);
      for (int b = 0; b < count; ++b)
        for (Group::r = 0; Group::r < Group::size(); ++Group::r) {
          const coll::LLLanes ln = coll::ll_lanes<Group>(coll::Part{b, count});
          for (std::size_t l = ln.first; l < lines; l += ln.step) ++hits[l];
        }
      std::size_t bad = 0;
      for (int h : hits) bad += h != 1;
      EXPECT_EQ(bad, 0u) << lines << " lines over " << count << " parts";
    }
}

TEST(BroadcastTwoShot, ChunkCounts) {
  EXPECT_EQ(coll::broadcast_chunks(0), 1);
  EXPECT_EQ(coll::broadcast_chunks(std::size_t(2) << 20), 2);
  EXPECT_EQ(coll::broadcast_chunks((std::size_t(2) << 20) - 1), 1);
  EXPECT_EQ(coll::broadcast_chunks(std::size_t(4) << 20), 2);
  EXPECT_EQ(coll::broadcast_chunks(std::size_t(16) << 20), 5);
  EXPECT_EQ(coll::broadcast_chunks(std::size_t(64) << 20), 11);
  EXPECT_EQ(coll::broadcast_chunks(std::size_t(128) << 20), 16);
  EXPECT_EQ(coll::broadcast_chunks(std::size_t(256) << 20), coll::kBcastChunks);
}

TEST(BroadcastTwoShot, RangesCoverTheDataOnce) {
  const std::vector<std::size_t> sizes = {1, 64, 255, 256, 4097, 16389, (std::size_t(1) << 20) + 8,
                                          (std::size_t(9) << 20) + 24};
  for (int size : {3, 4, 5, 8}) {
    for (int root : {0, 1, size - 1}) {
      for (std::size_t bytes : sizes) {
        for (int parts : {1, 3, 7, coll::kBcastParts}) {
          const int chunks = coll::broadcast_chunks(bytes);
          std::vector<int> hits(bytes, 0);
          for (int r = 0; r < size; ++r) {
            if (r == root) continue;
            const TeamValue t{0, 1, size, r};
            for (int c = 0; c < chunks; ++c) {
              for (int b = 0; b < parts; ++b) {
                std::size_t lo = 0, hi = 0;
                coll::broadcast_chunk_part(t, root, r, bytes, chunks, c, coll::Part{b, parts}, lo, hi);
                ASSERT_LE(lo, hi);
                ASSERT_LE(hi, bytes);
                std::size_t plo = 0, phi = 0;
                coll::broadcast_piece(t, root, r, bytes, plo, phi);
                ASSERT_TRUE(lo == hi || (lo >= plo && hi <= phi)) << "a part outside its owner's piece";
                if (lo < hi) {
                  ASSERT_EQ((lo - plo) % coll::kPartAlign, 0u) << "unaligned part start";
                }
                for (std::size_t i = lo; i < hi; ++i) ++hits[i];
              }
            }
          }
          std::size_t bad = 0;
          for (std::size_t i = 0; i < bytes; ++i) bad += hits[i] != 1;
          EXPECT_EQ(bad, 0u) << "bytes sent zero or several times: size " << size << ", root " << root << ", "
                             << bytes << " bytes, " << parts << " parts";
        }
      }
    }
  }
}

}  // namespace

// Staged: which calls take it (slot, team size, data against the limit and the buffer), the part count, and that
// every member's sections with their 16-byte offsets fit one buffer's data region at the limit, for every team size
// it allows.
TEST(Staged, Choice) {
  const std::size_t lim = coll::kStagedDefaultBytes;
  EXPECT_TRUE(coll::use_staged(0, 2, lim / 2, 2, lim));
  EXPECT_FALSE(coll::use_staged(0, 2, lim / 2 + 1, 2, lim)) << "over the limit";
  EXPECT_TRUE(coll::use_staged(0, 2, lim, 1, lim)) << "a broadcast: the block alone";
  EXPECT_FALSE(coll::use_staged(0, 2, 64, 2, 0)) << "limit 0: off";
  EXPECT_FALSE(coll::use_staged(0, 1, 64, 1, lim)) << "a team of one";
  EXPECT_FALSE(coll::use_staged(0, 2, 0, 2, lim)) << "no data";
  for (int slot : {0, 1, 2}) EXPECT_TRUE(coll::use_staged(slot, 4, 1000, 4, lim)) << "slot " << slot;
  for (int slot : {-1, 3, 6, 63}) EXPECT_FALSE(coll::use_staged(slot, 4, 1000, 4, lim)) << "slot " << slot;
  EXPECT_TRUE(coll::use_staged(0, coll::kStagedMaxMembers, 16, coll::kStagedMaxMembers, lim));
  EXPECT_FALSE(coll::use_staged(0, coll::kStagedMaxMembers + 1, 16, coll::kStagedMaxMembers + 1, lim));
  // At the limit the padded sections still fit, for every team size and block size up to it.
  for (int size = 2; size <= coll::kStagedMaxMembers; ++size) {
    const std::size_t block = lim / static_cast<std::size_t>(size);
    ASSERT_TRUE(coll::use_staged(0, size, block, static_cast<std::size_t>(size), lim)) << size;
    EXPECT_LE(coll::staged_stride(block) * static_cast<std::size_t>(size), coll::kStagedDataBytes);
    EXPECT_GE(coll::staged_stride(block), block + 16) << "room for a 15-byte offset";
    EXPECT_EQ(coll::staged_stride(block) % 16, 0u);
  }
  EXPECT_EQ(coll::kStagedBufBytes % 16, 0u);
  EXPECT_TRUE(coll::reduce_uses_staged(0, 2, 1000, lim));
  EXPECT_FALSE(coll::exchange_uses_staged(0, 2, coll::Exchange{4, 100, 2, 1, true}, lim)) << "strided: not staged";
  EXPECT_TRUE(coll::exchange_uses_staged(0, 2, coll::Exchange{4, 100, 1, 1, true}, lim));
}

TEST(Staged, Parts) {
  EXPECT_EQ(coll::staged_parts(1, 16384), 1);
  EXPECT_EQ(coll::staged_parts(16384, 16384), 1);
  EXPECT_EQ(coll::staged_parts(16385, 16384), 2);
  EXPECT_EQ(coll::staged_parts(std::size_t(2) << 20, 16384), coll::kStagedMaxParts);
  EXPECT_EQ(coll::staged_parts(100, 0), coll::kStagedMaxParts) << "0 bytes a part: as 1";
  // Sender and receiver split a block with the same Part::range: together the parts cover it once.
  for (std::size_t bytes : {std::size_t(1), std::size_t(255), std::size_t(4097), std::size_t(1) << 20}) {
    for (int count : {1, 3, 32}) {
      std::size_t next = 0;
      for (int p = 0; p < count; ++p) {
        std::size_t lo, hi;
        coll::Part{p, count}.range(bytes, coll::kPartAlign, lo, hi);
        EXPECT_EQ(lo, next) << bytes << " bytes, part " << p << " of " << count;
        EXPECT_LE(lo, hi);
        next = hi;
      }
      EXPECT_EQ(next, bytes);
    }
  }
}

// The device scopes' element loop (reduce_elements / reduce_pass with DevicePass's 8 elements a thread), run on the
// host one thread at a time over a fake scope and fake peers: the types of 4 bytes or less load two members before
// combining either (bench/NOTES.md entry 64), 8-byte types one member at a time. Either way every element in
// [lo, hi) must be op(op(m0, m1), m2)... in team-index order, bit for bit (float sums are order-sensitive), and
// nothing outside [lo, hi) written — at team sizes 1-5 (odd ones end on a member alone), group sizes that leave
// threads with 0 < nk < 8 elements, and ranges that start and end anywhere.
namespace {

template <int N>
struct Threads {
  static int size() { return N; }
  static int rank() { return r; }
  static inline int r = 0;
};
// The same with the library's stream-kernel form (gpu::ReduceCta's DevicePass<4, true>): 16-byte chunks, two
// members' chunks loaded before either is combined, the element loop for what does not tile 16 bytes.
template <int N>
struct WideThreads : Threads<N> {};

// Member m's source is bufs[m], the calling member's bufs[0]: p in bufs[0] stands at the same offset in member m's
// (symmetric addresses); a world PE maps to its member by the team's start and stride.
template <class T>
struct FakePeers {
  const TeamValue* t;
  std::vector<std::vector<T>>* bufs;
  T* peer(T* p, int pe) {
    return (*bufs)[static_cast<std::size_t>((pe - t->start) / t->stride)].data() + (p - (*bufs)[0].data());
  }
};

template <class T>
T draw(std::mt19937_64& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::uniform_real_distribution<double>(-1e3, 1e3)(rng));
  } else {
    return static_cast<T>(rng());
  }
}

// Elements of out that are not what they should be: out[i] for i in [lo, hi) is op over members of
// bufs[m][i + shift] in team-index order, bit for bit; every other element still holds its poison.
template <coll::ReduceOp Op, class T>
std::size_t mismatches(const std::vector<T>& out, const std::vector<T>& poison,
                       const std::vector<std::vector<T>>& bufs, std::size_t lo, std::size_t hi, std::ptrdiff_t shift) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    T want = poison[i];
    if (i >= lo && i < hi) {
      const std::size_t j = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(i) + shift);
      want = bufs[0][j];
      for (std::size_t m = 1; m < bufs.size(); ++m) want = coll::Combine<Op>::apply(want, bufs[m][j]);
    }
    bad += std::memcmp(&want, &out[i], sizeof(T)) != 0;
  }
  return bad;
}

template <int N, coll::ReduceOp Op, class T>
void check_element_loop(std::mt19937_64& rng) {
  const std::size_t len = 3 * N * 8 + 37;  // three passes and a partial one
  for (int size = 1; size <= 5; ++size) {
    const TeamValue t{1, 2, size, 0};  // world PEs 1, 3, 5, ...
    std::vector<std::vector<T>> bufs(static_cast<std::size_t>(size), std::vector<T>(len + 5));
    for (auto& b : bufs)
      for (T& v : b) v = draw<T>(rng);
    FakePeers<T> env{&t, &bufs};
    for (std::size_t first : {std::size_t(0), std::size_t(5)})
      for (auto [lo, hi] : {std::pair<std::size_t, std::size_t>{0, len}, {0, 1}, {3, 3}, {7, N * 8 + 1},
                            {N + 2, len - 3}}) {
        std::vector<T> dest(len, T{});
        std::memset(dest.data(), 0xA5, len * sizeof(T));  // poison
        const std::vector<T> poison = dest;
        for (Threads<N>::r = 0; Threads<N>::r < N; ++Threads<N>::r)
          coll::reduce_elements<Threads<N>, Op>(env, t, dest.data(), bufs[0].data(), first, lo, hi);
        const std::size_t bad = mismatches<Op>(dest, poison, bufs, lo, hi, static_cast<std::ptrdiff_t>(first));
        EXPECT_EQ(bad, 0u) << sizeof(T) << "-byte type, op " << static_cast<int>(Op) << ", team of " << size << ", "
                           << N << " threads, first " << first << ", [" << lo << ", " << hi << ")";
      }
  }
}

// reduce_data in the wide form over every part of `parts`: dest[i] for i < n is op over members of src[first + i];
// `first` and dest's offset move the sources' 16-byte alignment against dest's (shared: chunks in the middle and
// elements at both ends; not shared: elements only).
template <int N, coll::ReduceOp Op, class T>
void check_wide_form(std::mt19937_64& rng) {
  const std::size_t len = 4 * N * 4 * (16 / sizeof(T)) + 29;
  for (int size = 1; size <= 5; ++size) {
    const TeamValue t{0, 1, size, 0};
    // room for the largest `first` (ASan in scripts/sanitize-cpu.sh found the reads past a shorter buffer)
    std::vector<std::vector<T>> bufs(static_cast<std::size_t>(size), std::vector<T>(len + 16 / sizeof(T)));
    for (auto& b : bufs)
      for (T& v : b) v = draw<T>(rng);
    FakePeers<T> env{&t, &bufs};
    for (std::size_t first : {std::size_t(0), std::size_t(1), std::size_t(16 / sizeof(T))})
      for (std::size_t at : {std::size_t(0), std::size_t(1)})
        for (int parts : {1, 3})
          for (std::size_t n : {len, std::size_t(1), std::size_t(0), std::size_t(N * 4 + 5)}) {
            std::vector<T> out(len + 2);
            std::memset(out.data(), 0x5A, out.size() * sizeof(T));  // poison
            const std::vector<T> poison = out;
            for (int b = 0; b < parts; ++b)
              for (WideThreads<N>::r = 0; WideThreads<N>::r < N; ++WideThreads<N>::r)
                coll::reduce_data<WideThreads<N>, Op>(env, t, out.data() + at, bufs[0].data(), first, n,
                                                      coll::Part{b, parts});
            const std::ptrdiff_t shift = static_cast<std::ptrdiff_t>(first) - static_cast<std::ptrdiff_t>(at);
            const std::size_t bad = mismatches<Op>(out, poison, bufs, at, at + n, shift);
            EXPECT_EQ(bad, 0u) << sizeof(T) << "-byte type, op " << static_cast<int>(Op) << ", team of " << size
                               << ", " << N << " threads, " << parts << " parts, first " << first << ", dest + " << at
                               << ", " << n << " elements";
          }
  }
}

}  // namespace

namespace gshmem::coll {
template <int N>
struct ReducePass<WideThreads<N>> : DevicePass<4, true> {};
}  // namespace gshmem::coll

TEST(ReduceElementLoop, TeamIndexOrderBitForBit) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  check_element_loop<96, coll::ReduceOp::Sum, float>(rng);
  check_element_loop<7, coll::ReduceOp::Sum, float>(rng);
  check_element_loop<7, coll::ReduceOp::Prod, int32_t>(rng);
  check_element_loop<5, coll::ReduceOp::Max, int8_t>(rng);
  check_element_loop<32, coll::ReduceOp::Xor, uint16_t>(rng);
  check_element_loop<7, coll::ReduceOp::Sum, double>(rng);
  check_element_loop<5, coll::ReduceOp::Min, int64_t>(rng);
}

TEST(ReduceWideForm, ChunksPairsAndPartsBitForBit) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  check_wide_form<32, coll::ReduceOp::Sum, float>(rng);
  check_wide_form<7, coll::ReduceOp::Sum, float>(rng);
  check_wide_form<7, coll::ReduceOp::Prod, int32_t>(rng);
  check_wide_form<5, coll::ReduceOp::Max, int8_t>(rng);
  check_wide_form<7, coll::ReduceOp::Sum, double>(rng);
  check_wide_form<5, coll::ReduceOp::Xor, uint64_t>(rng);
}
