// HeapMemory: the address space and physical memory behind a SymmetricHeap (private to src/heap).
//
// One reservation of n_local * slot bytes; local PE i's heap is mapped at reservation + i * slot, backed from
// offset 0 up to size(). Two implementations: host memfd (heap_memory_host.cpp) and CUDA VMM
// (heap_memory_cuda.cpp, built only with GPU support). The allocator and the growth policy live in
// symmetric_heap.cpp; this layer only maps memory, collectively.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"

namespace gshmem::heap {

// Every slot base is aligned to at least this much (both backings), so gshmem_align up to this value gives
// the same answer on CPU and GPU PEs.
inline constexpr std::size_t kSlotAlignment = std::size_t{2} << 20;

struct Layout {
  std::size_t granularity = 0;   // unit of backing and growth (host: page size; CUDA: VMM granularity)
  std::size_t alignment = 0;     // alignment of every slot base: max(granularity, kSlotAlignment)
  std::size_t slot = 0;          // bytes of address space per PE: max_size rounded up to `alignment`
  std::size_t initial = 0;       // backed bytes at start: max(initial_size + internal_size, granularity), rounded
  int my_local = 0;              // my index among the local PEs
  int n_local = 1;
  std::vector<int> local_pes;    // global PE id of each local index
};

class HeapMemory {
 public:
  virtual ~HeapMemory() = default;
  // Base of local PE `local`'s heap in this process.
  virtual char* slot_base(int local) const = 0;
  // Backed bytes of every local PE's heap (the same on all of them).
  virtual std::size_t size() const = 0;
  virtual const char* kind() const = 0;  // "host memfd" / "CUDA VMM", for logs
  // Collective over all PEs (every PE calls it with the same new_size > size()): backs [size(), new_size) of
  // every local PE's heap. Returns "" on every PE if it worked; if some PE could not get the memory, the
  // memory is unchanged and every PE returns the same text naming that PE and the cause. Other failures
  // throw Error on every PE.
  virtual std::string grow(std::size_t new_size) = 0;
  // Collective over all PEs (every PE calls it with the same offset, bytes and tag): maps this PE's own buffer
  // `user` (bytes long, memory this process already has mapped: a CUDA VMM allocation with a POSIX-fd handle type on
  // GPU PEs, a MAP_SHARED file mapping on CPU PEs) at `offset` of my slot, exports it to the local peers and maps
  // theirs at `offset` of their slots: the registered region then translates to a peer like heap memory. Throws
  // Error (the same on every PE, naming `call` and the PE whose buffer was refused) with nothing left mapped if
  // any PE's buffer cannot be shared.
  virtual void map_external(std::size_t offset, void* user, std::size_t bytes, std::uint64_t tag,
                            const char* call) = 0;
  // Local: undoes map_external at `offset` in every slot (the address range goes back to the reservation).
  virtual void unmap_external(std::size_t offset) noexcept = 0;
};

// The outcome of one PE's step in a collective operation, gathered so that all PEs take the same decision.
struct StepStatus {
  std::int32_t code = 0;    // kOk, kNoMemory or kFailed
  std::int32_t status = 0;  // GSHMEM_ERROR_* to throw with when code is kFailed
  char text[504] = {};      // the cause, NUL-terminated (truncated if longer)
  static constexpr std::int32_t kOk = 0, kNoMemory = 1, kFailed = 2;
};
static_assert(sizeof(StepStatus) == 512, "StepStatus crosses process boundaries: keep its layout fixed");

StepStatus step_ok();
StepStatus step_error(std::int32_t code, const std::string& text, std::int32_t status = GSHMEM_ERROR_SYSTEM);

// Allgathers `mine` and returns the worst outcome (kFailed over kNoMemory; the lowest PE among equals) with
// "PE k: " prefixed to its text, or a status with code kOk if every PE succeeded. Every PE gets the same answer.
StepStatus agree(bootstrap::Bootstrap& boot, const StepStatus& mine);
// agree(), then throws Error(status, "<what>: PE k: <cause>") on every PE if some PE failed (kNoMemory is thrown
// as OUT_OF_MEMORY).
void agree_or_throw(bootstrap::Bootstrap& boot, const StepStatus& mine, const char* what);

// Backs a heap with host memory: one memfd per PE mapped by every local PE (heap_memory_host.cpp).
std::size_t host_granularity();
std::unique_ptr<HeapMemory> make_host_memory(const Layout& layout, bootstrap::Bootstrap& boot,
                                             bootstrap::FdExchange& fdx);

#ifdef GSHMEM_HAVE_CUDA
// Backs a heap with CUDA VMM chunks on device `device` (heap_memory_cuda.cpp).
std::size_t cuda_granularity(int device);
std::unique_ptr<HeapMemory> make_cuda_memory(const Layout& layout, int device, bootstrap::Bootstrap& boot,
                                             bootstrap::FdExchange& fdx);
#endif

// Tags for FdExchange::exchange, one per exchange the heap makes (chunk index in the low bits).
inline constexpr std::uint64_t kHostFdTag = 0x4748454150000000ull;  // "GHEAP" host memfd
inline constexpr std::uint64_t kCudaFdTag = 0x4748454143000000ull;  // "GHEAC" + chunk index
inline constexpr std::uint64_t kExternalFdTag = 0x4748454152000000ull;  // "GHEAR" + registration number

}  // namespace gshmem::heap
