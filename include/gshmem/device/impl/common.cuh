// gshmem device API, implementation: cooperation groups, timing, bounded spins, peer addresses, cooperative copy.
// Included by <gshmem/device.cuh>; not a public header on its own.
#pragma once
#include <cuda/atomic>
#if !defined(__CUDACC_RTC__) /* NVRTC: no C library headers (gshmem.h has the types) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#endif

#include "gshmem/device/state.h"

namespace gshmem {
using DeviceHandle = gshmem_device_state_t;

namespace dev {

// Thread cooperation, passed as a template argument: every thread of the group calls the function with the same
// arguments. Warp: all 32 lanes of a warp (converged). Block: every thread of the block.
struct Thread {
  static __device__ __forceinline__ int rank() { return 0; }
  static __device__ __forceinline__ int size() { return 1; }
  static __device__ __forceinline__ void sync() {}
};
struct Warp {
  static __device__ __forceinline__ int rank() {
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return static_cast<int>(lane);
  }
  static __device__ __forceinline__ int size() { return 32; }
  static __device__ __forceinline__ void sync() { __syncwarp(); }
};
struct Block {
  static __device__ __forceinline__ int rank() {
    return static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
  }
  static __device__ __forceinline__ int size() { return static_cast<int>(blockDim.x * blockDim.y * blockDim.z); }
  static __device__ __forceinline__ void sync() { __syncthreads(); }
};

namespace detail {

template <typename T>
using sys_ref = ::cuda::atomic_ref<T, ::cuda::thread_scope_system>;

// Global-space address of a pointer into global memory (the symmetric heap), for PTX that names .global: a generic
// address makes atomics carry a shared/local-memory fallback that waits for their reply (amo.cuh).
__device__ __forceinline__ size_t gaddr(const void* p) { return __cvta_generic_to_global(p); }

__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

[[noreturn]] __device__ __noinline__ inline void trap_not_published(const char* call) {
  printf("gshmem: %s: the device state is not set (gshmem_init not called yet in this process, or this kernel was "
         "launched with a handle from before init); aborting the kernel. Fix: call gshmem_init() before launching "
         "kernels that use gshmem, and take the handle with gshmemx_device_handle() after it\n", call);
  __trap();
}

// A spin bounded by the state's timeout (GSHMEM_WAIT_TIMEOUT, default 600 s; published as UINT64_MAX for none). An
// unset state's timeout is 0, so its first wait that has to spin expires at once (at its 16th poll) and trap_timeout
// reports the unset state: waits carry no separate check (bench/NOTES.md entry 9).
// The timer is read at every 16th poll only: reading %globaltimer at each poll slowed a barrier ~40 ns (entry 10).
struct Spin {
  uint64_t start, limit;
  uint32_t polls = 0;
  __device__ __forceinline__ explicit Spin(const DeviceHandle& h) : start(globaltimer()), limit(h.timeout_ns) {}
  __device__ __forceinline__ bool expired() { return (++polls & 15) == 0 && globaltimer() - start > limit; }
};

[[noreturn]] __device__ __noinline__ inline void trap_timeout(const DeviceHandle& h, const char* call,
                                                              const void* addr, const char* waiting_for) {
  if (h.version != GSHMEM_DEVICE_STATE_VERSION) trap_not_published(call);
  printf("gshmem: %s on PE %d: waited %.1f s for %s (address %p) and it never happened (GSHMEM_WAIT_TIMEOUT); "
         "aborting the kernel. Fix: check that every PE makes the matching call (put/signal/barrier), or raise "
         "GSHMEM_WAIT_TIMEOUT (0 = no limit)\n", call, h.my_pe, static_cast<double>(h.timeout_ns) / 1e9,
         waiting_for, addr);
  __trap();
}

[[noreturn]] __device__ __noinline__ inline void trap_unreachable(const DeviceHandle& h, const char* call,
                                                                  const void* p, int pe) {
  printf("gshmem: %s on PE %d: address %p for PE %d is not reachable (pe out of 0..%d, PE not mapped, or the "
         "address is not in the symmetric heap); aborting the kernel. Fix: pass a symmetric address from "
         "gshmem_malloc and a PE from 0 to gshmem_n_pes()-1\n", call, h.my_pe, p, pe, h.n_pes - 1);
  __trap();
}

// Element types of the sized RMA calls (put8 ... put128): 1, 2, 4, 8 and 16 bytes. The 16-byte element needs only
// 8-byte alignment, as OpenSHMEM's 128-bit calls do (the bulk copy still uses 16-byte vectors where it can).
struct Bits128 {
  uint64_t lo, hi;
};
static_assert(sizeof(Bits128) == 16 && alignof(Bits128) == 8, "Bits128 is the 16-byte element of put128/iput128");
template <int BITS> struct SizedElem;
template <> struct SizedElem<8> { using type = uint8_t; };
template <> struct SizedElem<16> { using type = uint16_t; };
template <> struct SizedElem<32> { using type = uint32_t; };
template <> struct SizedElem<64> { using type = uint64_t; };
template <> struct SizedElem<128> { using type = Bits128; };

// PE pe's copy of address c through the peer table: the slow path of peer(), out of line, and
// where RMA, atomic and signal calls check that the state is set (an unset state is all zeros, so it lands here:
// the fast path tests nothing else). Inline, ptxas predicated this load into every translation, where it still
// delayed the address (bench/NOTES.md entry 9). Values, not the DeviceHandle: a reference to a kernel parameter or
// to __constant__ memory would make the caller copy the state to local memory.
__device__ __noinline__ inline char* peer_from_table(uint32_t version, char* const* bases, const char* heap_base,
                                                      const char* c, int pe) {
  if (version != GSHMEM_DEVICE_STATE_VERSION) trap_not_published("a gshmem put, get, atomic or signal call");
  return bases[pe] + (c - heap_base);
}

// Translates symmetric address p (valid on this PE) to PE pe's copy. No checks: the fast path of every RMA.
// Where the heaps lie at a fixed stride (one node: the usual case) this is arithmetic on values from the state;
// otherwise one load from the peer table.
template <typename T>
__device__ __forceinline__ T* peer(const DeviceHandle& h, T* p, int pe) {
  using C = typename ::cuda::std::conditional<::cuda::std::is_const<T>::value, const char, char>::type;
  C* c = reinterpret_cast<C*>(p);
  if (h.peer_stride != 0) return reinterpret_cast<T*>(c + static_cast<int64_t>(pe - h.my_pe) *
                                                          static_cast<int64_t>(h.peer_stride));
  return reinterpret_cast<T*>(peer_from_table(h.version, h.peer_bases, h.heap_base, c, pe));
}

// Base of PE pe's heap (same rule as peer()), for the barrier's flags: the table load stays inline there (as a
// call it made the barrier kernels spill under the 1024-thread bound; the barrier checks the state itself).
__device__ __forceinline__ char* peer_base(const DeviceHandle& h, int pe) {
  if (h.peer_stride != 0)
    return h.heap_base + static_cast<int64_t>(pe - h.my_pe) * static_cast<int64_t>(h.peer_stride);
  return h.peer_bases[pe];
}

template <typename T>
__device__ __forceinline__ bool compare(T a, int cmp, T b) {
  switch (cmp) {
    case GSHMEM_CMP_EQ: return a == b;
    case GSHMEM_CMP_NE: return a != b;
    case GSHMEM_CMP_GT: return a > b;
    case GSHMEM_CMP_LE: return a <= b;
    case GSHMEM_CMP_LT: return a < b;
    case GSHMEM_CMP_GE: return a >= b;
    default: return false;
  }
}

// Acquire load at system scope, for any wait type (2, 4 or 8 bytes).
template <typename T>
__device__ __forceinline__ T load_acquire(const T* p) {
  if constexpr (sizeof(T) == 2) {
    unsigned short v;
    asm volatile("ld.acquire.sys.u16 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    T r;
    memcpy(&r, &v, sizeof r);
    return r;
  } else {
    return sys_ref<T>(*const_cast<T*>(p)).load(::cuda::memory_order_acquire);
  }
}

// s[i] through L2 only (ld.global.cg): for data that peers write while the kernel reading it runs (the staged
// collectives' buffers), which a read-only-path load (ld.global.nc, which nvcc may pick for a const __restrict__
// source) or an L1 line another CTA of the SM filled earlier could serve stale.
template <typename V>
__device__ __forceinline__ V load_l2(const V* p) {
  if constexpr (sizeof(V) == 8) {
    const unsigned long long v = __ldcg(reinterpret_cast<const unsigned long long*>(p));
    V r;
    memcpy(&r, &v, 8);
    return r;
  } else {
    return __ldcg(p);
  }
}
// Copies n elements of V by `size` cooperating threads (this one is `rank`), U loads in flight per thread; L2: the
// loads by load_l2.
template <typename V, int U, bool L2 = false>
__device__ __forceinline__ void copy_elems(V* __restrict__ d, const V* __restrict__ s, size_t n, int rank, int size) {
  auto at = [s](size_t k) { if constexpr (L2) return load_l2(s + k); else return s[k]; };
  size_t i = static_cast<size_t>(rank);
  const size_t stride = static_cast<size_t>(size);
  for (; i + (U - 1) * stride < n; i += U * stride) {
    V r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = at(i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) d[i + u * stride] = r[u];
  }
  // 16-byte vectors: two left for this thread (a 1024-thread block copying 32 KiB) are both loaded before either
  // store, since a load issued after a store to a peer waits for that store (~150 ns, bench/NOTES.md entry 2).
  // Only here: a batched tail for every width spilled in 1024-thread kernels (entry 8).
  if constexpr (sizeof(V) == 16) {
    if (i + stride < n) {
      const V a = at(i), b = at(i + stride);
      d[i] = a;
      d[i + stride] = b;
      i += 2 * stride;
    }
  }
  for (; i < n; i += stride) d[i] = at(i);
}

// Everything but the one-element-per-thread cases of copy(): the 16-byte loop when both pointers and the size
// allow it, else the widest vectors first and what is left (fewer than 16 bytes) in the next widths the alignment
// allows, so a small remainder is one or two stores by rank 0 rather than a byte per thread. L2: loads by load_l2.
template <bool L2 = false>
__device__ __forceinline__ void copy_general(char* d, const char* s, size_t bytes, int rank, int size) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(d) | reinterpret_cast<uintptr_t>(s);
  if ((a & 15) == 0 && (bytes & 15) == 0) {
    copy_elems<uint4, 4, L2>(reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(s), bytes / 16, rank, size);
    return;
  }
  if ((a & 15) == 0) {
    const size_t n = bytes / 16;
    copy_elems<uint4, 4, L2>(reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(s), n, rank, size);
    d += n * 16;
    s += n * 16;
    bytes -= n * 16;
  }
  if ((a & 7) == 0) {
    const size_t n = bytes / 8;
    copy_elems<uint64_t, 8, L2>(reinterpret_cast<uint64_t*>(d), reinterpret_cast<const uint64_t*>(s), n, rank, size);
    d += n * 8;
    s += n * 8;
    bytes -= n * 8;
  }
  if ((a & 3) == 0) {
    const size_t n = bytes / 4;
    copy_elems<uint32_t, 8, L2>(reinterpret_cast<uint32_t*>(d), reinterpret_cast<const uint32_t*>(s), n, rank, size);
    d += n * 4;
    s += n * 4;
    bytes -= n * 4;
  }
  copy_elems<unsigned char, 8, L2>(reinterpret_cast<unsigned char*>(d), reinterpret_cast<const unsigned char*>(s),
                               bytes, rank, size);
}
// The same as a call: what warp and block copies use for more than one element per thread (below), up to sm_90.
// On sm_100 ptxas keeps too little in registers across such a call in 1024-thread kernels (bounded to 64
// registers, the bench's all-to-all kernels spilled 36-120 bytes, CI's compile.*_regs_1024 checks), so there the
// general path stays inline (not measured on a Blackwell GPU: none was available).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
#define GSHMEMI_COPY_CALL 0
#else
#define GSHMEMI_COPY_CALL 1
#endif
__device__ __noinline__ inline void copy_general_call(char* d, const char* s, size_t bytes, int rank, int size) {
  copy_general(d, s, bytes, rank, size);
}

// Cooperative memcpy. At most one element per thread (16-, 8- or 4-byte, as the pointers and size allow) is one
// load and one store per thread, inline and loop-free; more goes to copy_general, which warp and block scope call
// out of line. Measured (nvlink_probe --blockput, bench/NOTES.md entries 7-8): a loop anywhere in the inlined copy
// made every small group put slower even when the loop did not run (block 16 B-4 KiB 373-397 ns per message with
// the loops inline, 272-293 with them in a call, 234-272 for a bare one-vector store; warp 256 B 392 vs 314),
// while the call costs ~80 ns on a 64 KiB block copy (1651 vs 1730 ns). A thread's copy keeps everything inline, as
// do all copies on sm_100 and later (GSHMEMI_COPY_CALL).
template <typename Coop>
__device__ __forceinline__ void copy(void* dst, const void* src, size_t bytes) {
  const int rank = Coop::rank(), size = Coop::size();
  const uintptr_t a = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) | bytes;
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  if ((a & 15) == 0 && bytes / 16 <= static_cast<size_t>(size)) {
    if (static_cast<size_t>(rank) < bytes / 16)
      reinterpret_cast<uint4*>(d)[rank] = reinterpret_cast<const uint4*>(s)[rank];
    return;
  }
  // Small messages of whole 8- or 4-byte words (a signal word, a few ints).
  if ((a & 7) == 0 && bytes / 8 <= static_cast<size_t>(size)) {
    if (static_cast<size_t>(rank) < bytes / 8)
      reinterpret_cast<uint64_t*>(d)[rank] = reinterpret_cast<const uint64_t*>(s)[rank];
    return;
  }
  if ((a & 3) == 0 && bytes / 4 <= static_cast<size_t>(size)) {
    if (static_cast<size_t>(rank) < bytes / 4)
      reinterpret_cast<uint32_t*>(d)[rank] = reinterpret_cast<const uint32_t*>(s)[rank];
    return;
  }
  if constexpr (::cuda::std::is_same<Coop, Thread>::value || !GSHMEMI_COPY_CALL)
    copy_general(d, s, bytes, rank, size);
  else
    copy_general_call(d, s, bytes, rank, size);
}

// The cooperative copy of data that peers wrote during this kernel (load_l2): the staged collectives' copies out
// of their buffers (library stream kernels only; out of line).
__device__ __noinline__ inline void copy_landed_call(char* d, const char* s, size_t bytes, int rank, int size) {
  copy_general<true>(d, s, bytes, rank, size);
}
template <typename Coop>
__device__ __forceinline__ void copy_landed(void* dst, const void* src, size_t bytes) {
  copy_landed_call(static_cast<char*>(dst), static_cast<const char*>(src), bytes, Coop::rank(), Coop::size());
}

}  // namespace detail
}  // namespace dev
}  // namespace gshmem
