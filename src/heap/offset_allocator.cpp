#include "heap/offset_allocator.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "runtime/error.hpp"

namespace gshmem::heap {
namespace {

// Rounds v up to a multiple of the power of two a; SIZE_MAX if that overflows.
std::size_t align_up(std::size_t v, std::size_t a) {
  if (v > SIZE_MAX - (a - 1)) return SIZE_MAX;
  return (v + a - 1) & ~(a - 1);
}

}  // namespace

OffsetAllocator::OffsetAllocator(std::size_t begin, std::size_t capacity)
    : begin_(align_up(begin, kMinAlignment)), capacity_(std::max(capacity, begin_)) {
  if (begin_ == SIZE_MAX) fail(GSHMEM_ERROR_INVALID_VALUE, "heap allocator: begin offset {} is too large", begin);
  if (capacity_ > begin_) insert_free(begin_, capacity_ - begin_);
}

std::size_t OffsetAllocator::effective_alignment(std::size_t alignment) {
  if (alignment == 0) return kMinAlignment;
  if (!std::has_single_bit(alignment)) {
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "alignment {} is not a power of two. Fix: pass a power of two (or 0 for the default of {} bytes)",
         alignment, kMinAlignment);
  }
  return std::max(alignment, kMinAlignment);
}

std::size_t OffsetAllocator::rounded_size(std::size_t size) {
  std::size_t r = align_up(size, kMinAlignment);
  return r == SIZE_MAX ? 0 : r;
}

namespace {
// One live block's part of OffsetAllocator::live_digest (splitmix64 of offset and size): XORed in and out, so the
// digest depends on the set of blocks only.
std::uint64_t block_digest(std::size_t offset, std::size_t size) {
  std::uint64_t z = (static_cast<std::uint64_t>(offset) * 0x9E3779B97F4A7C15ull) ^ static_cast<std::uint64_t>(size);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

std::optional<std::size_t> OffsetAllocator::allocate(std::size_t size, std::size_t alignment) {
  if (size == 0) fail(GSHMEM_ERROR_INVALID_VALUE, "heap allocator: a block of 0 bytes was requested");
  const std::size_t a = effective_alignment(alignment);
  const std::size_t rs = rounded_size(size);
  if (rs == 0) return std::nullopt;  // larger than any address space
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const std::size_t start = it->first, end = it->first + it->second;
    const std::size_t at = align_up(start, a);
    if (at >= end || end - at < rs) continue;
    // Split [start, end) into [start, at) free, [at, at+rs) live, [at+rs, end) free.
    free_.erase(it);
    if (at > start) free_.emplace(start, at - start);
    if (at + rs < end) free_.emplace(at + rs, end - (at + rs));
    live_.emplace(at, Block{rs, size});
    digest_ ^= block_digest(at, rs);
    used_ += rs;
    requested_ += size;
    return at;
  }
  return std::nullopt;
}

std::size_t OffsetAllocator::capacity_needed(std::size_t size, std::size_t alignment) const {
  const std::size_t a = effective_alignment(alignment);
  const std::size_t rs = rounded_size(std::max<std::size_t>(size, 1));
  if (rs == 0) return SIZE_MAX;
  std::size_t tail = capacity_;
  if (!free_.empty()) {
    auto last = std::prev(free_.end());
    if (last->first + last->second == capacity_) tail = last->first;
  }
  const std::size_t at = align_up(tail, a);
  if (at == SIZE_MAX || at > SIZE_MAX - rs) return SIZE_MAX;
  return at + rs;
}

std::size_t OffsetAllocator::free(std::size_t offset) {
  auto it = live_.find(offset);
  if (it == live_.end()) return 0;
  const Block b = it->second;
  live_.erase(it);
  digest_ ^= block_digest(offset, b.size);
  used_ -= b.size;
  requested_ -= b.requested;
  insert_free(offset, b.size);
  return b.size;
}

std::size_t OffsetAllocator::size_of(std::size_t offset) const {
  auto it = live_.find(offset);
  return it == live_.end() ? 0 : it->second.size;
}

void OffsetAllocator::grow(std::size_t new_capacity) {
  if (new_capacity < capacity_) {
    fail(GSHMEM_ERROR_INVALID_VALUE, "heap allocator: cannot shrink from {} to {} bytes", capacity_,
         new_capacity);
  }
  if (new_capacity == capacity_) return;
  const std::size_t from = std::max(capacity_, begin_);
  capacity_ = new_capacity;
  if (new_capacity > from) insert_free(from, new_capacity - from);
}

// Adds [offset, offset+length) to the free set, merging it with an adjacent range on either side.
void OffsetAllocator::insert_free(std::size_t offset, std::size_t length) {
  auto next = free_.lower_bound(offset);
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      length += prev->second;
      free_.erase(prev);
    }
  }
  if (next != free_.end() && offset + length == next->first) {
    length += next->second;
    free_.erase(next);
  }
  free_.emplace(offset, length);
}

OffsetAllocator::Stats OffsetAllocator::stats() const {
  Stats s;
  s.begin = begin_;
  s.capacity = capacity_;
  s.used = used_;
  s.requested = requested_;
  s.allocations = live_.size();
  s.free_ranges = free_.size();
  for (const auto& [off, len] : free_) {
    s.free += len;
    s.largest_free = std::max<std::uint64_t>(s.largest_free, len);
  }
  return s;
}

}  // namespace gshmem::heap
