// SymmetricHeap: one VA reservation per process holding this PE's heap and every local peer's heap at fixed
// slots, so translating a symmetric address to a peer is peer_base[pe] + (ptr - base()). Backed by CUDA VMM
// (GPU PEs) or a memfd (CPU PEs); grows collectively in granularity-sized steps.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bootstrap/bootstrap.hpp"

namespace gshmem::heap {

enum class Backing { Host, Cuda };

struct Params {
  Backing backing = Backing::Host;
  int device = -1;                 // CUDA ordinal of this PE (Backing::Cuda)
  std::size_t initial_size = 0;    // bytes usable by the user at start (rounded up to granularity)
  std::size_t max_size = 0;        // per-PE slot size in the VA reservation (the most it can grow to)
  std::size_t internal_size = 0;   // bytes at offset 0 reserved for the library (flags); not given to users
  int my_pe = 0, n_pes = 1;
  std::vector<int> local_pes;      // global PE ids on this node, ascending; includes my_pe
};

struct Usage {
  std::uint64_t heap_size = 0;     // backed bytes (internal part included)
  std::uint64_t used = 0;          // bytes handed to users (with alignment padding)
  std::uint64_t max_size = 0;
  std::uint64_t internal = 0;
  std::uint64_t allocations = 0;
};

// The distance between consecutive PEs' heaps when PE p's heap lies at bases[0] + p * stride for every p (one
// node, PEs in local order, as every launcher starts them), else 0. Device code then translates addresses with
// arithmetic instead of a table load. One PE: 1, since any non-zero stride translates its only PE, itself, to
// offset 0 (with 0 every device put, get and atomic of a one-PE job took the table path's call: p and g to self
// 0.087 / 0.103 us against 0.056 / 0.058 for NVSHMEM on one H200, bench/NOTES.md entry 12).
inline std::uint64_t regular_peer_stride(const std::vector<char*>& bases) {
  if (bases.size() == 1 && bases[0] != nullptr) return 1;
  if (bases.size() < 2 || bases[0] == nullptr || bases[1] <= bases[0]) return 0;
  const std::ptrdiff_t stride = bases[1] - bases[0];
  for (std::size_t p = 0; p < bases.size(); ++p)
    if (bases[p] != bases[0] + static_cast<std::ptrdiff_t>(p) * stride) return 0;
  return static_cast<std::uint64_t>(stride);
}

class SymmetricHeap {
 public:
  // Collective over all PEs (uses boot for agreement and fdx to share memory with local peers).
  SymmetricHeap(const Params& p, bootstrap::Bootstrap& boot, bootstrap::FdExchange& fdx);
  ~SymmetricHeap();  // unmaps and releases everything; not collective
  SymmetricHeap(const SymmetricHeap&) = delete;
  SymmetricHeap& operator=(const SymmetricHeap&) = delete;

  char* base() const;                     // symmetric offset 0 on this PE (the internal area starts here)
  std::size_t size() const;               // backed bytes now
  bool contains(const void* p, std::size_t len = 0) const;  // [p, p+len) inside my backed heap
  std::size_t offset_of(const void* p) const;               // requires contains(p)
  // The address of symmetric address `p` (on this PE) in PE `pe`'s copy, mapped in this process; nullptr if pe is
  // not on this node. p must satisfy contains(p).
  void* peer_ptr(const void* p, int pe) const;
  // Base of each PE's heap in this process (nullptr for PEs not mapped), indexed by global PE id.
  const std::vector<char*>& peer_bases() const;
  Backing backing() const;

  // Collective: every PE passes the same size and alignment (checked across PEs: a mismatch is a MISMATCH error
  // on every PE naming the values). size 0 returns nullptr. Grows the heap when needed. `call` names the API call
  // for error messages (e.g. "gshmem_malloc").
  void* allocate(std::size_t size, std::size_t alignment, const char* call);
  // Collective: every PE frees the same symmetric object. nullptr is a no-op (still collective). A pointer that is
  // not the start of a live allocation is INVALID_VALUE on every PE.
  void free(void* p, const char* call);
  Usage usage() const;

  // Collective (gshmemx_buffer_register_symmetric): every PE passes its own buffer of the same `size` (GPU PEs: a
  // CUDA VMM allocation with a POSIX-fd handle type; CPU PEs: a MAP_SHARED file mapping), size and address
  // multiples of the granularity. The buffers are mapped at the same offset of every local PE's slot, above the
  // heap (placed top down from the slot's end, so the heap's growth stops below them), and that address on this PE
  // is returned: it translates to a peer like heap memory. Every check is made across PEs (MISMATCH for different
  // sizes, INVALID_VALUE naming the PE whose buffer cannot be shared), the same error on every PE.
  void* register_external(void* buf, std::size_t size, const char* call);
  // Collective: unmaps a region register_external returned (the same on every PE, with its size).
  void unregister_external(void* mmap_ptr, std::size_t size, const char* call);
  std::size_t granularity() const;
  // Bytes of the live allocation that starts at `p` (its size rounded up to kMinAlignment), 0 if no live
  // allocation starts there. Local: not collective.
  std::size_t allocation_size(const void* p) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gshmem::heap
