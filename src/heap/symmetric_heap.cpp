// SymmetricHeap: layout, cross-PE argument checks, the allocator and the growth policy. The memory itself is
// mapped by heap_memory_host.cpp (CPU PEs) or heap_memory_cuda.cpp (GPU PEs).
#include "heap/symmetric_heap.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "heap/heap_memory.hpp"
#include "heap/offset_allocator.hpp"
#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"

namespace gshmem::heap {
namespace {

constexpr std::uint32_t kHeapCallMagic = 0x47485043;    // "GHPC"
constexpr std::uint32_t kHeapConfigMagic = 0x47485046;  // "GHPF"

enum HeapOp : std::uint32_t { kOpAllocate = 1, kOpFree = 2, kOpRegister = 3, kOpUnregister = 4 };
// register_external / unregister_external: what a PE found wrong with its own arguments.
enum RegisterFlags : std::uint32_t { kRegNull = 1, kRegSizeZero = 2, kRegMisaligned = 4, kRegUnknown = 8,
                                     kRegWrongSize = 16 };
enum FreeFlags : std::uint32_t { kFreeNull = 1, kFreeOutside = 2 };

// What each PE contributes to a collective allocate/free; every PE checks every record.
struct HeapCall {
  std::uint32_t magic;      // kHeapCallMagic: tells a heap call from another subsystem's gather
  std::uint32_t op;         // HeapOp
  std::uint64_t sequence;   // number of collective heap calls this PE made before this one
  std::uint64_t size;       // allocate: bytes asked for
  std::uint64_t alignment;  // allocate: alignment asked for (0 = default)
  std::uint64_t offset;     // free: heap offset of the pointer; allocate: OffsetAllocator::live_digest()
  std::uint64_t address;    // free: the pointer as passed (for messages)
  std::uint32_t flags;      // free: FreeFlags
  std::uint32_t reserved;
};
static_assert(sizeof(HeapCall) == 56, "HeapCall crosses process boundaries: keep its layout fixed");

// Heap settings each PE was started with; they must agree, or the heaps cannot be symmetric.
struct HeapConfig {
  std::uint32_t magic;
  std::uint32_t backing;  // Backing
  std::uint64_t initial_size;
  std::uint64_t max_size;
  std::uint64_t internal_size;
  std::uint64_t granularity;  // of this PE's memory; the heap uses the largest
  std::int32_t n_pes;
  std::int32_t reserved;
};
static_assert(sizeof(HeapConfig) == 48, "HeapConfig crosses process boundaries: keep its layout fixed");

std::size_t round_up(std::size_t v, std::size_t a) {
  if (v > SIZE_MAX - (a - 1)) return SIZE_MAX;
  return (v + a - 1) / a * a;
}

const char* backing_name(std::uint32_t b) {
  return b == static_cast<std::uint32_t>(Backing::Cuda) ? "GPU memory" : "host memory";
}

// "PE 0 <v0>, PE 3 <v3>, ..." for PE 0 and every PE whose value differs from PE 0's (at most 8 listed).
template <typename T, typename Same, typename Text>
std::string list_differences(const std::vector<T>& all, Same same, Text text) {
  std::string out = fmt::format("PE 0 {}", text(all[0]));
  int listed = 0, more = 0;
  for (std::size_t pe = 1; pe < all.size(); ++pe) {
    if (same(all[0], all[pe])) continue;
    if (listed < 8) {
      out += fmt::format(", PE {} {}", pe, text(all[pe]));
      ++listed;
    } else {
      ++more;
    }
  }
  if (more) out += fmt::format(" (and {} more PEs differ)", more);
  return out;
}

std::string call_text(const HeapCall& c) {
  if (c.magic != kHeapCallMagic) return "is in another collective call (not a heap call)";
  if (c.op == kOpAllocate) return fmt::format("allocates (size={}, heap call #{})", c.size, c.sequence);
  if (c.op == kOpRegister)
    return fmt::format("registers a buffer (size={}, heap call #{})", c.size, c.sequence);
  if (c.op == kOpUnregister)
    return fmt::format("unregisters {:#x} (heap call #{})", c.address, c.sequence);
  if (c.flags & kFreeNull) return fmt::format("frees nullptr (heap call #{})", c.sequence);
  return fmt::format("frees {:#x} (heap call #{})", c.address, c.sequence);
}

}  // namespace

struct SymmetricHeap::Impl {
  Params params;
  bootstrap::Bootstrap& boot;
  Layout layout;
  std::unique_ptr<HeapMemory> memory;
  std::unique_ptr<OffsetAllocator> alloc;
  char* base = nullptr;
  std::atomic<std::size_t> backed{0};  // backed bytes; read without the lock by contains()
  std::vector<char*> peer_bases;
  std::mutex mu;                       // serialises allocate/free/usage within the process
  std::uint64_t sequence = 0;
  // The first collective free since the last allocation in which PEs freed different objects (empty: none), for
  // the message if their heaps still differ at the next allocation.
  std::string diverged;
  // Registered buffers (register_external), offset -> size, placed top down from the slot's end; the heap's
  // backed size stays below `floor` (the lowest offset, or the slot). Read by contains() under reg_mu.
  mutable std::mutex reg_mu;
  std::map<std::size_t, std::size_t> registered;
  std::atomic<std::size_t> floor{0};
  std::uint64_t registrations = 0;     // registrations made: tags of their fd exchanges

  Impl(const Params& p, bootstrap::Bootstrap& b) : params(p), boot(b) {}

  std::vector<HeapCall> gather(const HeapCall& mine);
  void check_same_call(const std::vector<HeapCall>& all, const char* call) const;
  void grow_for(std::size_t size, std::size_t alignment, const char* call);
};

namespace {

// Checks the parameters this PE was given; returns the granularity of its memory.
std::size_t check_params_and_granularity(const Params& p, const bootstrap::Bootstrap& boot) {
  if (p.n_pes != boot.size() || p.my_pe != boot.rank()) {
    fail(GSHMEM_ERROR_INTERNAL, "heap parameters say PE {} of {}, the bootstrap says rank {} of {}", p.my_pe,
         p.n_pes, boot.rank(), boot.size());
  }
  if (!std::is_sorted(p.local_pes.begin(), p.local_pes.end()) ||
      std::adjacent_find(p.local_pes.begin(), p.local_pes.end()) != p.local_pes.end() ||
      std::find(p.local_pes.begin(), p.local_pes.end(), p.my_pe) == p.local_pes.end() ||
      (!p.local_pes.empty() && (p.local_pes.front() < 0 || p.local_pes.back() >= p.n_pes))) {
    fail(GSHMEM_ERROR_INTERNAL, "heap parameters: local PE list must be ascending, unique, within [0, {}) and "
         "include PE {}", p.n_pes, p.my_pe);
  }
  if (p.max_size == 0) {
    fail(GSHMEM_ERROR_INVALID_VALUE, "GSHMEM_MAX_HEAP_SIZE is 0. Fix: set it to the most each PE's symmetric heap "
         "may grow to (e.g. GSHMEM_MAX_HEAP_SIZE=64G)");
  }
  if (p.backing == Backing::Host) return host_granularity();
#ifdef GSHMEM_HAVE_CUDA
  if (p.device < 0) fail(GSHMEM_ERROR_INTERNAL, "heap parameters: a GPU heap needs a device ordinal, got {}", p.device);
  return cuda_granularity(p.device);
#else
  fail(GSHMEM_ERROR_NOT_SUPPORTED, "a GPU symmetric heap was requested but this gshmem was built without GPU "
       "support. Fix: rebuild with the CUDA toolkit (-DGSHMEM_WITH_CUDA=ON), or use CPU PEs (GSHMEM_DEVICE=cpu)");
#endif
}

}  // namespace

SymmetricHeap::SymmetricHeap(const Params& p, bootstrap::Bootstrap& boot, bootstrap::FdExchange& fdx)
    : impl_(std::make_unique<Impl>(p, boot)) {
  Impl& m = *impl_;
  // 1. Each PE checks what it was given and learns its memory's granularity; a failure is reported on all.
  std::size_t my_granularity = 0;
  StepStatus st = step_ok();
  try {
    my_granularity = check_params_and_granularity(p, boot);
  } catch (const Error& e) {
    st = step_error(StepStatus::kFailed, e.what(), e.status());
  }
  agree_or_throw(boot, st, "symmetric heap");

  // 2. Every PE must use the same settings, or the heaps could not stay symmetric.
  HeapConfig mine{kHeapConfigMagic, static_cast<std::uint32_t>(p.backing), p.initial_size, p.max_size,
                  p.internal_size, my_granularity, p.n_pes, 0};
  std::vector<HeapConfig> all(static_cast<std::size_t>(boot.size()));
  boot.allgather(&mine, all.data(), sizeof(HeapConfig));
  auto same = [](const HeapConfig& a, const HeapConfig& b) {
    return a.magic == b.magic && a.backing == b.backing && a.initial_size == b.initial_size &&
           a.max_size == b.max_size && a.internal_size == b.internal_size && a.n_pes == b.n_pes;
  };
  for (const HeapConfig& c : all) {
    if (same(all[0], c)) continue;
    fail(GSHMEM_ERROR_MISMATCH,
         "symmetric heap: PEs were started with different heap settings: {}. Fix: start every PE with the same "
         "GSHMEM_SYMMETRIC_SIZE and GSHMEM_MAX_HEAP_SIZE, and all on GPUs or all on CPUs (GSHMEM_DEVICE)",
         list_differences(all, same, [](const HeapConfig& c) {
           return fmt::format("{} GSHMEM_SYMMETRIC_SIZE={} GSHMEM_MAX_HEAP_SIZE={} internal={}",
                              backing_name(c.backing), config::format_size(c.initial_size),
                              config::format_size(c.max_size), c.internal_size);
         }));
  }

  // 3. Layout, the same on every PE.
  std::size_t g = 0;
  for (const HeapConfig& c : all) g = std::max<std::size_t>(g, c.granularity);
  if (!std::has_single_bit(g)) fail(GSHMEM_ERROR_INTERNAL, "symmetric heap: granularity {} is not a power of two", g);
  Layout& l = m.layout;
  l.granularity = g;
  l.alignment = std::max(g, kSlotAlignment);
  l.slot = round_up(p.max_size, l.alignment);
  l.local_pes = p.local_pes;
  l.n_local = static_cast<int>(p.local_pes.size());
  l.my_local = static_cast<int>(std::find(p.local_pes.begin(), p.local_pes.end(), p.my_pe) - p.local_pes.begin());
  const std::size_t wanted = p.initial_size > SIZE_MAX - p.internal_size ? SIZE_MAX : p.initial_size + p.internal_size;
  l.initial = round_up(std::max(wanted, g), g);
  if (l.slot == SIZE_MAX || l.slot > SIZE_MAX / static_cast<std::size_t>(l.n_local)) {
    fail(GSHMEM_ERROR_INVALID_VALUE, "GSHMEM_MAX_HEAP_SIZE={} is too large for the address space of {} local PEs. "
         "Fix: lower GSHMEM_MAX_HEAP_SIZE", p.max_size, l.n_local);
  }
  if (l.initial > l.slot) {
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "GSHMEM_SYMMETRIC_SIZE={} (plus {} bytes the library keeps) does not fit in GSHMEM_MAX_HEAP_SIZE={}. Fix: "
         "raise GSHMEM_MAX_HEAP_SIZE or lower GSHMEM_SYMMETRIC_SIZE",
         config::format_size(p.initial_size), p.internal_size, config::format_size(p.max_size));
  }

  // 4. Memory, then the allocator over [internal_size, backed size).
#ifdef GSHMEM_HAVE_CUDA
  if (p.backing == Backing::Cuda) m.memory = make_cuda_memory(l, p.device, boot, fdx);
#endif
  if (p.backing == Backing::Host) m.memory = make_host_memory(l, boot, fdx);
  m.base = m.memory->slot_base(l.my_local);
  m.backed = m.memory->size();
  m.alloc = std::make_unique<OffsetAllocator>(p.internal_size, m.memory->size());
  m.floor = l.slot;
  m.peer_bases.assign(static_cast<std::size_t>(p.n_pes), nullptr);
  for (int i = 0; i < l.n_local; ++i) m.peer_bases[static_cast<std::size_t>(l.local_pes[i])] = m.memory->slot_base(i);
  log::info("symmetric heap: {} at {}, {} backed, up to {} per PE, granularity {}, {} local PE(s)",
            m.memory->kind(), static_cast<void*>(m.base), config::format_size(m.backed.load()),
            config::format_size(l.slot), config::format_size(g), l.n_local);
}

SymmetricHeap::~SymmetricHeap() = default;

char* SymmetricHeap::base() const { return impl_->base; }
std::size_t SymmetricHeap::size() const { return impl_->backed.load(std::memory_order_acquire); }
Backing SymmetricHeap::backing() const { return impl_->params.backing; }
const std::vector<char*>& SymmetricHeap::peer_bases() const { return impl_->peer_bases; }

bool SymmetricHeap::contains(const void* p, std::size_t len) const {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const auto b = reinterpret_cast<std::uintptr_t>(impl_->base);
  const std::size_t n = size();
  if (a < b) return false;
  if (a - b < n) return len <= n - (a - b);
  // A registered buffer (above the heap, below the slot's end)?
  const std::size_t off = a - b;
  if (off < impl_->floor.load(std::memory_order_acquire) || off >= impl_->layout.slot) return false;
  std::lock_guard<std::mutex> lock(impl_->reg_mu);
  auto it = impl_->registered.upper_bound(off);
  if (it == impl_->registered.begin()) return false;
  --it;
  return off - it->first < it->second && len <= it->second - (off - it->first);
}

std::size_t SymmetricHeap::granularity() const { return impl_->layout.granularity; }

std::size_t SymmetricHeap::offset_of(const void* p) const {
  return static_cast<std::size_t>(static_cast<const char*>(p) - impl_->base);
}

void* SymmetricHeap::peer_ptr(const void* p, int pe) const {
  if (pe < 0 || pe >= impl_->params.n_pes) return nullptr;
  char* peer = impl_->peer_bases[static_cast<std::size_t>(pe)];
  return peer ? peer + offset_of(p) : nullptr;
}

std::vector<HeapCall> SymmetricHeap::Impl::gather(const HeapCall& mine) {
  std::vector<HeapCall> all(static_cast<std::size_t>(boot.size()));
  boot.allgather(&mine, all.data(), sizeof(HeapCall));
  ++sequence;
  return all;
}

void SymmetricHeap::Impl::check_same_call(const std::vector<HeapCall>& all, const char* call) const {
  auto same = [](const HeapCall& a, const HeapCall& b) {
    return a.magic == b.magic && a.op == b.op && a.sequence == b.sequence;
  };
  for (const HeapCall& c : all) {
    if (same(all[0], c)) continue;
    fail(GSHMEM_ERROR_MISMATCH,
         "{}: the PEs are not in the same collective heap call: {}. Fix: every PE must call the collective "
         "allocation functions (gshmem_malloc/calloc/align/free) the same number of times, in the same order, and "
         "no other collective in between",
         call, list_differences(all, same, call_text));
  }
}

void* SymmetricHeap::allocate(std::size_t size, std::size_t alignment, const char* call) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  HeapCall mine{kHeapCallMagic, kOpAllocate, m.sequence, size, alignment, m.alloc->live_digest(), 0, 0, 0};
  const std::vector<HeapCall> all = m.gather(mine);
  m.check_same_call(all, call);
  auto same = [](const HeapCall& a, const HeapCall& b) { return a.size == b.size && a.alignment == b.alignment; };
  for (const HeapCall& c : all) {
    if (same(all[0], c)) continue;
    const bool alignments_differ =
        std::any_of(all.begin(), all.end(), [&](const HeapCall& x) { return x.alignment != all[0].alignment; });
    fail(GSHMEM_ERROR_MISMATCH,
         "{}: PEs called it with different arguments: {}. Fix: collective allocations need the same size (and "
         "alignment) on every PE, in the same order",
         call, list_differences(all, same, [&](const HeapCall& x) {
           return alignments_differ ? fmt::format("size={} alignment={}", x.size, x.alignment)
                                    : fmt::format("size={}", x.size);
         }));
  }
  // Frees may name different objects on different PEs (see free()), but by now every PE must hold the same ones,
  // or the first-fit allocator would hand out different offsets.
  for (const HeapCall& c : all) {
    if (c.offset == all[0].offset) continue;
    fail(GSHMEM_ERROR_MISMATCH,
         "{}: the PEs' symmetric heaps hold different objects, so no allocation can be symmetric: {}, and the PEs "
         "have not freed the same objects since. Fix: every PE must free the same objects before the next "
         "gshmem_malloc/calloc/align (the frees may come in a different order on different PEs)",
         call, m.diverged.empty() ? std::string("the objects differ") : m.diverged);
  }
  m.diverged.clear();
  if (size == 0) return nullptr;

  std::size_t a = 0;
  try {
    a = OffsetAllocator::effective_alignment(alignment);
  } catch (const Error& e) {
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: {}", call, e.what());
  }
  if (a > m.layout.alignment) {
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "{}: alignment {} is larger than the symmetric heap can guarantee ({} bytes). Fix: ask for an alignment "
         "of at most {} bytes",
         call, alignment, m.layout.alignment, m.layout.alignment);
  }
  std::optional<std::size_t> off = m.alloc->allocate(size, a);
  if (!off) {
    m.grow_for(size, a, call);
    off = m.alloc->allocate(size, a);
    if (!off) fail(GSHMEM_ERROR_INTERNAL, "{}: the heap grew but {} bytes still do not fit", call, size);
  }
  log::trace("{}: {} bytes (alignment {}) at heap offset {}", call, size, a, *off);
  return m.base + *off;
}

// Growth policy: double the backed size (so a heap reaches any size in few chunks), but at least what the
// request needs, rounded to the granularity and capped by the slot. If the doubled size cannot be had (GPU out
// of memory), try once more with just what is needed.
void SymmetricHeap::Impl::grow_for(std::size_t size, std::size_t alignment, const char* call) {
  const std::size_t current = memory->size();
  const std::size_t needed = round_up(alloc->capacity_needed(size, alignment), layout.granularity);
  const OffsetAllocator::Stats s = alloc->stats();
  auto state = [&] {
    return fmt::format("the heap has {} bytes backed, {} bytes used by {} allocations, largest free block {} bytes",
                       current, s.used, s.allocations, s.largest_free);
  };
  const std::size_t limit = floor.load();  // the slot, or the lowest registered buffer
  if (needed > limit) {
    // Which cause applies: the request alone cannot fit under the limit, or the objects in the heap fill it.
    const std::size_t usable = limit > params.internal_size ? limit - params.internal_size : 0;
    const std::size_t alone = size > SIZE_MAX - params.internal_size - alignment
                                  ? SIZE_MAX
                                  : round_up(params.internal_size + size + alignment, layout.granularity);
    const std::size_t suggest = std::bit_ceil(std::min<std::size_t>(std::max(needed, alone), SIZE_MAX / 2 + 1));
    const std::string registered =
        limit < layout.slot ? fmt::format("; buffers registered with gshmemx_buffer_register_symmetric take the "
                                          "slot's top {} bytes", layout.slot - limit)
                            : std::string();
    if (size > usable)
      fail(GSHMEM_ERROR_OUT_OF_MEMORY,
           "{}(size={}): the request ({}) is larger than the symmetric heap's limit: each PE's heap may grow to at "
           "most GSHMEM_MAX_HEAP_SIZE={} ({} bytes in use now{}). Fix: raise GSHMEM_MAX_HEAP_SIZE above the "
           "request (e.g. GSHMEM_MAX_HEAP_SIZE={}, if the machine has the memory), or allocate less",
           call, size, config::format_size(size), config::format_size(params.max_size), s.used, registered,
           config::format_size(suggest));
    fail(GSHMEM_ERROR_OUT_OF_MEMORY,
         "{}(size={}): the symmetric heap is full: {} bytes are in use by {} allocations, and this request would "
         "make it grow to {} bytes, past GSHMEM_MAX_HEAP_SIZE={} ({}{}). Fix: free symmetric objects you no longer "
         "need, or raise GSHMEM_MAX_HEAP_SIZE (e.g. GSHMEM_MAX_HEAP_SIZE={})",
         call, size, s.used, s.allocations, needed, config::format_size(params.max_size), state(), registered,
         config::format_size(suggest));
  }
  const std::size_t doubled = current > SIZE_MAX / 2 ? SIZE_MAX : round_up(2 * current, layout.granularity);
  const std::size_t preferred = std::min(limit, std::max(needed, doubled));
  std::string why = memory->grow(preferred);
  std::size_t got = preferred;
  if (!why.empty() && preferred > needed) {
    log::info("symmetric heap: could not grow to {} bytes ({}); trying {}", preferred, why, needed);
    why = memory->grow(needed);
    got = needed;
  }
  if (!why.empty()) {
    fail(GSHMEM_ERROR_OUT_OF_MEMORY,
         "{}(size={}): the symmetric heap could not grow from {} to {} bytes: {} ({}; GSHMEM_MAX_HEAP_SIZE={}). "
         "Fix: free symmetric objects you no longer need, or free {} memory used elsewhere",
         call, size, current, needed, why, state(), config::format_size(params.max_size),
         params.backing == Backing::Cuda ? "GPU" : "host");
  }
  alloc->grow(got);
  backed.store(got, std::memory_order_release);
  log::info("symmetric heap grew from {} to {} bytes for {}(size={})", current, got, call, size);
}

void SymmetricHeap::free(void* p, const char* call) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  HeapCall mine{kHeapCallMagic, kOpFree, m.sequence, 0, 0, 0, reinterpret_cast<std::uintptr_t>(p), 0, 0};
  if (!p) {
    mine.flags = kFreeNull;
  } else if (!contains(p)) {
    mine.flags = kFreeOutside;
  } else {
    mine.offset = offset_of(p);
  }
  const std::vector<HeapCall> all = m.gather(mine);
  m.check_same_call(all, call);
  for (std::size_t pe = 0; pe < all.size(); ++pe) {
    if (all[pe].flags & kFreeOutside) {
      fail(GSHMEM_ERROR_INVALID_VALUE,
           "{}: PE {} passed {:#x}, which is not in its symmetric heap. Fix: pass a pointer returned by "
           "gshmem_malloc/calloc/align (the same object on every PE)",
           call, pe, all[pe].address);
    }
  }
  // PEs may free different objects in one call, as NVSHMEM allows (its free compares nothing): programs free from
  // destructors whose order garbage collection decides (PyTorch, flux, bindings). Each PE frees its own; the heaps
  // must hold the same objects again by the next allocation, which checks it.
  auto same = [](const HeapCall& a, const HeapCall& b) { return a.flags == b.flags && a.offset == b.offset; };
  if (std::any_of(all.begin(), all.end(), [&](const HeapCall& c) { return !same(all[0], c); })) {
    const std::string which = list_differences(all, same, [](const HeapCall& x) {
      return (x.flags & kFreeNull) ? std::string("nullptr") : fmt::format("{:#x} (heap offset {})", x.address, x.offset);
    });
    if (m.diverged.empty()) m.diverged = fmt::format("{} (heap call #{}) freed different objects: {}", call,
                                                     mine.sequence, which);
    log::info("{}: PEs free different objects ({}); allowed if every PE has freed the same objects by the next "
              "allocation", call, which);
  }
  if (!p) return;
  const std::size_t off = mine.offset;
  if (m.alloc->free(off) == 0) {
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "{}: {} (symmetric heap offset {}) is not the start of a live symmetric allocation: it was freed already, "
         "never allocated, or points inside an object. Fix: pass exactly the pointer gshmem_malloc/calloc/align "
         "returned, and free it once",
         call, p, off);
  }
  log::trace("{}: freed heap offset {}", call, off);
}

std::size_t SymmetricHeap::allocation_size(const void* p) const {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  if (!p || !contains(p)) return 0;
  return m.alloc->size_of(offset_of(p));
}

void* SymmetricHeap::register_external(void* buf, std::size_t size, const char* call) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  const std::size_t g = m.layout.granularity;
  HeapCall mine{kHeapCallMagic, kOpRegister, m.sequence, size, 0, 0, reinterpret_cast<std::uintptr_t>(buf), 0, 0};
  if (!buf) mine.flags |= kRegNull;
  if (size == 0) mine.flags |= kRegSizeZero;
  if (size % g != 0 || reinterpret_cast<std::uintptr_t>(buf) % g != 0) mine.flags |= kRegMisaligned;
  const std::vector<HeapCall> all = m.gather(mine);
  m.check_same_call(all, call);
  for (std::size_t pe = 0; pe < all.size(); ++pe) {
    const HeapCall& c = all[pe];
    if (c.flags & kRegNull)
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: PE {} passed buf_ptr=NULL. Fix: pass the address of the buffer each PE "
           "mapped (the same size on every PE)", call, pe);
    if (c.flags & kRegSizeZero)
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: PE {} passed size=0. Fix: pass the buffer's size in bytes", call, pe);
    if (c.flags & kRegMisaligned)
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: PE {} passed buf_ptr={:#x} size={}, which are not multiples of the "
           "granularity of {} bytes. Fix: allocate and map the buffer in whole granules ({}) and pass its start",
           call, pe, c.address, c.size, g,
           m.params.backing == Backing::Cuda ? "cuMemGetAllocationGranularity; 2 MiB on H100/H200"
                                           : "the page size, as mmap does");
  }
  auto same = [](const HeapCall& a, const HeapCall& b) { return a.size == b.size; };
  for (const HeapCall& c : all) {
    if (same(all[0], c)) continue;
    fail(GSHMEM_ERROR_MISMATCH, "{}: PEs registered buffers of different sizes: {}. Fix: every PE registers a "
         "buffer of the same size (it becomes one symmetric object)",
         call, list_differences(all, same, [](const HeapCall& x) { return fmt::format("size={}", x.size); }));
  }
  // Placement, the same on every PE (the same calls in the same order): the highest gap between registered
  // buffers that fits, else below the lowest; always above the heap's backed size.
  std::size_t off = 0;
  bool placed = false;
  {
    std::size_t top = m.layout.slot;
    for (auto it = m.registered.rbegin(); it != m.registered.rend() && !placed; ++it) {
      if (top - (it->first + it->second) >= size) {
        off = top - size;
        placed = true;
      }
      top = it->first;
    }
    if (!placed && top >= size && top - size >= m.memory->size()) {
      off = top - size;
      placed = true;
    }
  }
  if (!placed)
    fail(GSHMEM_ERROR_OUT_OF_MEMORY, "{}(size={}): the symmetric address space has no room for it above the heap "
         "({} bytes backed) within GSHMEM_MAX_HEAP_SIZE={}. Fix: raise GSHMEM_MAX_HEAP_SIZE, or unregister buffers "
         "you no longer need", call, size, m.memory->size(), config::format_size(m.params.max_size));
  m.memory->map_external(off, buf, size, kExternalFdTag + m.registrations++, call);
  {
    std::lock_guard<std::mutex> rl(m.reg_mu);
    m.registered[off] = size;
    m.floor = m.registered.begin()->first;
  }
  log::info("{}: {} bytes at {} mapped at symmetric offset {:#x} (address {})", call, size, buf, off,
            static_cast<void*>(m.base + off));
  return m.base + off;
}

void SymmetricHeap::unregister_external(void* mmap_ptr, std::size_t size, const char* call) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  HeapCall mine{kHeapCallMagic, kOpUnregister, m.sequence, size, 0, 0, reinterpret_cast<std::uintptr_t>(mmap_ptr),
                0, 0};
  const auto a = reinterpret_cast<std::uintptr_t>(mmap_ptr);
  const auto b = reinterpret_cast<std::uintptr_t>(m.base);
  std::size_t known = 0;
  if (!mmap_ptr) {
    mine.flags = kRegNull;
  } else {
    std::lock_guard<std::mutex> rl(m.reg_mu);
    auto it = a >= b ? m.registered.find(a - b) : m.registered.end();
    if (it == m.registered.end()) {
      mine.flags = kRegUnknown;
    } else {
      mine.offset = it->first;
      known = it->second;
      if (size != known) mine.flags = kRegWrongSize;
    }
  }
  mine.alignment = known;  // the registered size, for the message
  const std::vector<HeapCall> all = m.gather(mine);
  m.check_same_call(all, call);
  for (std::size_t pe = 0; pe < all.size(); ++pe) {
    const HeapCall& c = all[pe];
    if (c.flags & kRegNull)
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: PE {} passed mmap_ptr=NULL. Fix: pass the address "
           "gshmemx_buffer_register_symmetric returned", call, pe);
    if (c.flags & kRegUnknown)
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: PE {} passed mmap_ptr={:#x}, which is not a registered symmetric "
           "buffer (never registered, unregistered already, or not its start). Fix: pass exactly the address "
           "gshmemx_buffer_register_symmetric returned, once", call, pe, c.address);
    if (c.flags & kRegWrongSize)
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: PE {} passed size={} for the buffer at {:#x}, registered with size={}. "
           "Fix: pass the size it was registered with", call, pe, c.size, c.address, c.alignment);
  }
  auto same = [](const HeapCall& x, const HeapCall& y) { return x.offset == y.offset; };
  for (const HeapCall& c : all) {
    if (same(all[0], c)) continue;
    fail(GSHMEM_ERROR_MISMATCH, "{}: PEs unregistered different buffers: {}. Fix: every PE unregisters the same "
         "symmetric buffer, in the same order", call,
         list_differences(all, same, [](const HeapCall& x) { return fmt::format("{:#x}", x.address); }));
  }
  {
    std::lock_guard<std::mutex> rl(m.reg_mu);
    m.registered.erase(mine.offset);
    m.floor = m.registered.empty() ? m.layout.slot : m.registered.begin()->first;
  }
  m.memory->unmap_external(mine.offset);
}

Usage SymmetricHeap::usage() const {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  const OffsetAllocator::Stats s = m.alloc->stats();
  Usage u;
  u.heap_size = m.memory->size();
  u.used = s.used;
  u.max_size = m.layout.slot;
  u.internal = m.params.internal_size;
  u.allocations = s.allocations;
  return u;
}

}  // namespace gshmem::heap
