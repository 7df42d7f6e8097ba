// OffsetAllocator: deterministic first-fit allocator over heap offsets [begin, capacity).
//
// It hands out offsets, never touches memory, and its answers depend only on the sequence of calls: every PE
// that makes the same calls gets the same offsets, which is what makes the symmetric heap symmetric. Free space
// is a set of maximal (coalesced) ranges ordered by offset; allocate takes the lowest aligned offset where the
// block fits. Every size is rounded up to kMinAlignment and every offset is a multiple of it, so the free
// ranges stay kMinAlignment-aligned too.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

namespace gshmem::heap {

// Smallest alignment and size unit of a symmetric allocation: wide enough for any GPU vector access
// (16-byte loads, 128-byte lines) and for the cache-line separation of adjacent objects.
inline constexpr std::size_t kMinAlignment = 256;

class OffsetAllocator {
 public:
  struct Stats {
    std::uint64_t begin = 0;         // first offset handed out (the internal area lies below)
    std::uint64_t capacity = 0;      // end of the managed range
    std::uint64_t used = 0;          // bytes in live allocations (sizes rounded up to kMinAlignment)
    std::uint64_t requested = 0;     // bytes asked for by the live allocations
    std::uint64_t free = 0;          // bytes in free ranges
    std::uint64_t largest_free = 0;  // the largest free range
    std::uint64_t allocations = 0;   // live allocations
    std::uint64_t free_ranges = 0;   // number of (coalesced) free ranges
  };

  // Manages [round_up(begin, kMinAlignment), capacity). capacity may be below begin (nothing to hand out yet).
  OffsetAllocator(std::size_t begin, std::size_t capacity);

  // Rounds `alignment` to what allocate() uses: 0 means kMinAlignment; smaller powers of two are raised to it.
  // Throws Error(INVALID_VALUE) if alignment is not 0 or a power of two.
  static std::size_t effective_alignment(std::size_t alignment);
  // size rounded up to kMinAlignment, or 0 if that overflows.
  static std::size_t rounded_size(std::size_t size);

  // The offset of a new block of `size` bytes (size > 0) aligned to `alignment`, or nullopt if no free range
  // holds it. Throws Error(INVALID_VALUE) for size 0 or a bad alignment.
  std::optional<std::size_t> allocate(std::size_t size, std::size_t alignment);
  // The capacity that would let allocate(size, alignment) succeed by placing the block at the end (after the
  // tail free range's start, or after capacity() if the tail is in use). SIZE_MAX if it overflows.
  std::size_t capacity_needed(std::size_t size, std::size_t alignment) const;
  // Frees the block that starts at `offset`; returns its (rounded) size, or 0 if no live block starts there
  // (never allocated, already freed, or pointing inside a block). Neighbouring free ranges are merged.
  std::size_t free(std::size_t offset);
  // Rounded size of the live block at `offset`, 0 if none starts there.
  std::size_t size_of(std::size_t offset) const;
  // Extends the managed range to [begin, new_capacity); new_capacity below capacity() is INVALID_VALUE.
  void grow(std::size_t new_capacity);

  // A digest of the live blocks (offsets and rounded sizes), the same for the same set in any order of calls:
  // PEs compare it to know their heaps still hold the same objects (SymmetricHeap::allocate).
  std::uint64_t live_digest() const { return digest_; }

  std::size_t begin() const { return begin_; }
  std::size_t capacity() const { return capacity_; }
  Stats stats() const;

 private:
  void insert_free(std::size_t offset, std::size_t length);

  std::size_t begin_;
  std::size_t capacity_;
  std::map<std::size_t, std::size_t> free_;  // offset -> length; disjoint, non-adjacent, non-empty
  struct Block {
    std::size_t size;       // rounded
    std::size_t requested;  // as asked
  };
  std::map<std::size_t, Block> live_;  // offset -> block
  std::uint64_t used_ = 0;
  std::uint64_t requested_ = 0;
  std::uint64_t digest_ = 0;  // XOR of block_digest over live_
};

}  // namespace gshmem::heap
