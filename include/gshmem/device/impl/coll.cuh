// gshmem device API, implementation: the collectives (broadcast, fcollect, alltoall, reduce, reducescatter) in
// device code, and the
// environment through which the one implementation of each (gshmem/coll/algorithms.h) reaches peers on a GPU.
// The library's stream kernels (src/transport/gpu_coll.cu) run the same routines with dev::Block.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gshmem/coll/algorithms.h"
#include "gshmem/device/impl/common.cuh"
#include "gshmem/device/impl/sync.cuh"
#include "gshmem/device/impl/team.cuh"

namespace gshmem {
namespace coll {
// CUDA's 16-bit floating types in the reductions (algorithms.h, Float16): combined in float.
template <>
struct Float16<__half> {
  static constexpr bool value = true;
  GSHMEM_HD static float to_float(__half v) { return __half2float(v); }
  GSHMEM_HD static __half from_float(float f) { return __float2half_rn(f); }
};
template <>
struct Float16<__nv_bfloat16> {
  static constexpr bool value = true;
  GSHMEM_HD static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  GSHMEM_HD static __nv_bfloat16 from_float(float f) { return __float2bfloat16_rn(f); }
};
}  // namespace coll

namespace dev {
namespace detail {

[[noreturn]] __device__ __noinline__ inline void trap_coll_peer_failed(const DeviceHandle& h, const char* call) {
  printf("gshmem: %s on PE %d: a peer PE died while this collective waited for the team; aborting the kernel\n",
         call, h.my_pe);
  __trap();
}

[[noreturn]] __device__ __noinline__ inline void trap_bad_root(const DeviceHandle& h, const char* call, int root,
                                                               int size) {
  printf("gshmem: %s on PE %d: PE_root=%d is not an index of the team (0..%d); aborting the kernel. Fix: pass the "
         "root's index in the team (gshmem_team_translate_pe converts a world PE)\n", call, h.my_pe, root, size - 1);
  __trap();
}

[[noreturn]] __device__ __noinline__ inline void trap_bad_stride(const DeviceHandle& h, const char* call,
                                                                 ptrdiff_t dst, ptrdiff_t sst) {
  printf("gshmem: %s on PE %d: strides dst=%lld sst=%lld; both must be at least 1 (elements); aborting the kernel. "
         "Fix: pass positive strides\n", call, h.my_pe, static_cast<long long>(dst), static_cast<long long>(sst));
  __trap();
}

[[noreturn]] __device__ __noinline__ inline void trap_overlap(const DeviceHandle& h, const char* call, const void* d,
                                                              size_t dn, const void* s, size_t sn) {
  printf("gshmem: %s on PE %d: dest [%p, +%llu) and source [%p, +%llu) overlap; aborting the kernel. Fix: use "
         "separate buffers (only reduce and broadcast allow dest == source)\n", call, h.my_pe, d,
         static_cast<unsigned long long>(dn), s, static_cast<unsigned long long>(sn));
  __trap();
}
// Traps when [d, d+dn) and [s, s+sn) share a byte (and `same_ok` does not excuse d == s).
__device__ __forceinline__ void check_overlap(const DeviceHandle& h, const char* call, const void* d, size_t dn,
                                              const void* s, size_t sn, bool same_ok) {
  const auto x = reinterpret_cast<uintptr_t>(d), y = reinterpret_cast<uintptr_t>(s);
  if (dn == 0 || sn == 0 || (same_ok && x == y)) return;
  if (x < y + sn && y < x + dn) trap_overlap(h, call, d, dn, s, sn);
}

// An LL wait that gave up: a dead peer (the library's abort word) or the timeout. One call, out of line.
[[noreturn]] __device__ __noinline__ inline void trap_ll(const DeviceHandle& h, const volatile int* abort,
                                                         const uint64_t* line, const char* call) {
  if (abort != nullptr && *abort != 0) trap_coll_peer_failed(h, call);
  trap_timeout(h, call, line, "a team member's data (a small collective, LL)");
}

// LL lines (gshmem/coll/algorithms.h): one 16-byte volatile load (not cached in L1: the line changes under the
// poller), and whether both words carry `flag`.
__device__ __forceinline__ bool ll_load(const uint64_t* line, uint32_t flag, uint64_t& w0, uint64_t& w1) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(w0), "=l"(w1) : "l"(line) : "memory");
  return static_cast<uint32_t>(w0 >> 32) == flag && static_cast<uint32_t>(w1 >> 32) == flag;
}

// The environment of gshmem/coll/algorithms.h on a GPU: flags in the collective workspace of each PE's heap
// (h.coll_offset), peers through the handle's translation, copies by the cooperating group, system-scope fences.
// `abort`: the library's peer-failure word (stream kernels), or null (user kernels: their waits end at the
// timeout).
struct CollEnv {
  const DeviceHandle& h;
  const volatile int* abort;
  __device__ __forceinline__ uint64_t* flags(int pe, int slot) const {
    return reinterpret_cast<uint64_t*>(peer_base(h, pe) + h.coll_offset) + slot * coll::kSyncFlags;
  }
  __device__ __forceinline__ uint64_t* epoch(int slot) const {
    return reinterpret_cast<uint64_t*>(h.heap_base + h.coll_offset) +
           static_cast<size_t>(coll::kSyncFlags) * GSHMEM_DEVICE_MAX_TEAMS + slot;
  }
  __device__ __forceinline__ void release_fence() const { fence_acq_rel_sys(); }
  __device__ __forceinline__ void store_relaxed(uint64_t* p, uint64_t v) const { store_relaxed_sys(p, v); }
  __device__ __forceinline__ void store_release(uint64_t* p, uint64_t v) const { store_release_sys(p, v); }
  __device__ __forceinline__ void wait_flag(const uint64_t* f, uint64_t epoch, const char* call) const {
    if (load_acquire(f) >= epoch) return;
    Spin spin(h);
    while (load_acquire(f) < epoch) {
      if (spin.expired()) trap_timeout(h, call, f, "a team member to reach the collective");
      if (abort != nullptr && (spin.polls & 1023) == 0 && *abort != 0) trap_coll_peer_failed(h, call);
    }
  }
  template <typename T>
  __device__ __forceinline__ T* peer(T* p, int pe) const {
    return static_cast<T*>(static_cast<void*>(detail::peer(h, static_cast<char*>(static_cast<void*>(p)), pe)));
  }
  // LL (gshmem/coll/algorithms.h): lines stored with one 16-byte volatile store (each 8-byte half lands whole).
  __device__ __forceinline__ size_t ll_limit() const { return static_cast<size_t>(h.coll_ll_bytes); }
  __device__ __forceinline__ uint64_t* ll_seq(int slot) const {
    return reinterpret_cast<uint64_t*>(h.heap_base + h.coll_ll_offset) + slot;
  }
  // An LL call run by `count` CTAs of a stream kernel (coll::ll_end): each CTA's rank 0 reports here once its CTA
  // is done; the last advances the slot's call count by one (no one else writes it during the call; every CTA
  // read it at its start) and clears the tally (coll::kLLTallyOffset in the LL area's head). The next kernel on
  // the stream sees both.
  __device__ __forceinline__ void ll_part_done(int slot, int count) const {
    unsigned* done = reinterpret_cast<unsigned*>(h.heap_base + h.coll_ll_offset + coll::kLLTallyOffset) + slot;
    __threadfence();
    if (atomicAdd(done, 1u) == static_cast<unsigned>(count - 1)) {
      __threadfence();
      atomicExch(done, 0u);
      volatile uint64_t* sp = ll_seq(slot);
      *sp = *sp + 1;
    }
  }
  __device__ __forceinline__ uint64_t* ll_buf(int pe, int slot, unsigned parity) const {
    return reinterpret_cast<uint64_t*>(peer_base(h, pe) + h.coll_ll_offset + coll::kLLSeqBytes +
                                       coll::kLLBufBytes * (2 * static_cast<size_t>(slot) + parity));
  }
  // The two-shot broadcast's chunk flags: right after the LL area (runtime/device_state.hpp).
  __device__ __forceinline__ uint64_t* chunk_flags(int pe, int slot) const {
    return reinterpret_cast<uint64_t*>(peer_base(h, pe) + h.coll_ll_offset + coll::kLLAreaBytes +
                                       coll::kBcastFlagBytes * static_cast<size_t>(slot));
  }
  // The staged buffers (coll::kStagedFromLL past the LL area; the stream kernels' staged calls).
  __device__ __forceinline__ uint64_t* staged_buf(int pe, int slot, unsigned parity) const {
    return reinterpret_cast<uint64_t*>(peer_base(h, pe) + h.coll_ll_offset + coll::kStagedFromLL +
                                       coll::kStagedBufBytes * (2 * static_cast<size_t>(slot) + parity));
  }
  __device__ __forceinline__ void ll_store(uint64_t* line, uint64_t w0, uint64_t w1) const {
    asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(line), "l"(w0), "l"(w1) : "memory");
  }
  __device__ __forceinline__ bool ll_wait(const uint64_t* line, uint32_t flag, uint64_t& w0, uint64_t& w1) const {
    if (ll_load(line, flag, w0, w1)) return true;
    Spin spin(h);
    while (!ll_load(line, flag, w0, w1)) {
      if (spin.expired()) return false;
      if (abort != nullptr && (spin.polls & 1023) == 0 && *abort != 0) return false;
    }
    return true;
  }
  [[noreturn]] __device__ __forceinline__ void ll_fail(const uint64_t* line, const char* call) const {
    trap_ll(h, abort, line, call);
  }
  template <typename Coop>
  __device__ __forceinline__ void copy(void* d, const void* s, size_t bytes) const {
    detail::copy<Coop>(d, s, bytes);
  }
  template <typename Coop>
  __device__ __forceinline__ void copy_landed(void* d, const void* s, size_t bytes) const {
    detail::copy_landed<Coop>(d, s, bytes);
  }
};

}  // namespace detail

// Collectives over `team`, called by every member PE's thread / warp / block with the same arguments; bytes per
// block. Semantics: gshmem.h ("collectives"). A bad team or root traps with a message naming `call`.
template <typename Coop>
__device__ __forceinline__ int broadcastmem(const DeviceHandle& h, gshmem_team_t team, void* dest, const void* src,
                                            size_t bytes, int root, const char* call = "gshmem_broadcastmem") {
  const gshmem_device_team_t t = detail::load_team(h, team, call);
  if (root < 0 || root >= t.size) detail::trap_bad_root(h, call, root, t.size);
  detail::check_overlap(h, call, dest, bytes, src, bytes, true);
  detail::CollEnv env{h, nullptr};
  coll::broadcast<Coop>(env, t, team, dest, src, bytes, root, call);
  return 0;
}
template <typename Coop>
__device__ __forceinline__ int exchange(const DeviceHandle& h, gshmem_team_t team, void* dest, const void* src,
                                        const coll::Exchange& x, const char* call) {
  const gshmem_device_team_t t = detail::load_team(h, team, call);
  if (x.dst == 1 && x.sst == 1) {  // strided blocks may interleave without sharing an element: dest == src only
    const size_t block = x.elem * x.nelems, n = static_cast<size_t>(t.size);
    detail::check_overlap(h, call, dest, block * n, src, x.per_member ? block * n : block, false);
  } else if (dest == src && x.nelems != 0) {
    detail::trap_overlap(h, call, dest, x.elem, src, x.elem);
  }
  detail::CollEnv env{h, nullptr};
  coll::exchange<Coop>(env, t, team, dest, src, x, call);
  return 0;
}
template <typename Coop>
__device__ __forceinline__ int fcollectmem(const DeviceHandle& h, gshmem_team_t team, void* dest, const void* src,
                                           size_t bytes, const char* call = "gshmem_fcollectmem") {
  return exchange<Coop>(h, team, dest, src, coll::Exchange{1, bytes, 1, 1, false}, call);
}
template <typename Coop>
__device__ __forceinline__ int alltoallmem(const DeviceHandle& h, gshmem_team_t team, void* dest, const void* src,
                                           size_t bytes, const char* call = "gshmem_alltoallmem") {
  return exchange<Coop>(h, team, dest, src, coll::Exchange{1, bytes, 1, 1, true}, call);
}
// Typed forms: nelems elements of T.
template <typename Coop, typename T>
__device__ __forceinline__ int broadcast(const DeviceHandle& h, gshmem_team_t team, T* dest, const T* src,
                                         size_t nelems, int root) {
  return broadcastmem<Coop>(h, team, dest, src, nelems * sizeof(T), root, "gshmem_broadcast");
}
template <typename Coop, typename T>
__device__ __forceinline__ int fcollect(const DeviceHandle& h, gshmem_team_t team, T* dest, const T* src,
                                        size_t nelems) {
  return fcollectmem<Coop>(h, team, dest, src, nelems * sizeof(T), "gshmem_fcollect");
}
template <typename Coop, typename T>
__device__ __forceinline__ int alltoall(const DeviceHandle& h, gshmem_team_t team, T* dest, const T* src,
                                        size_t nelems) {
  return alltoallmem<Coop>(h, team, dest, src, nelems * sizeof(T), "gshmem_alltoall");
}

// alltoalls: strided alltoall (element l of block j at src[sst * (j * nelems + l)] lands at
// dest[dst * (i * nelems + l)] of member j); strides of at least 1 (a smaller one traps).
template <typename Coop, typename T>
__device__ __forceinline__ int alltoalls(const DeviceHandle& h, gshmem_team_t team, T* dest, const T* src,
                                         ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                                         const char* call = "gshmem_<T>_alltoalls") {
  if (dst < 1 || sst < 1) detail::trap_bad_stride(h, call, dst, sst);
  return exchange<Coop>(h, team, dest, src, coll::Exchange{sizeof(T), nelems, dst, sst, true}, call);
}

// Reductions of nreduce elements of T with op Op (gshmem/coll/algorithms.h: reduce, reducescatter), called by
// every member PE's thread / warp / block with the same arguments. reduce: dest == src allowed.
template <typename Coop, coll::ReduceOp Op, typename T>
__device__ __forceinline__ int reduce(const DeviceHandle& h, gshmem_team_t team, T* dest, const T* src,
                                      size_t nreduce, const char* call = "gshmem_<T>_<op>_reduce") {
  const gshmem_device_team_t t = detail::load_team(h, team, call);
  detail::check_overlap(h, call, dest, nreduce * sizeof(T), src, nreduce * sizeof(T), true);
  detail::CollEnv env{h, nullptr};
  coll::reduce<Coop, Op>(env, t, team, dest, src, nreduce, call);
  return 0;
}
template <typename Coop, coll::ReduceOp Op, typename T>
__device__ __forceinline__ int reducescatter(const DeviceHandle& h, gshmem_team_t team, T* dest, const T* src,
                                             size_t nreduce, const char* call = "gshmem_<T>_<op>_reducescatter") {
  const gshmem_device_team_t t = detail::load_team(h, team, call);
  detail::check_overlap(h, call, dest, nreduce * sizeof(T), src, nreduce * sizeof(T) * static_cast<size_t>(t.size),
                        false);
  detail::CollEnv env{h, nullptr};
  coll::reducescatter<Coop, Op>(env, t, team, dest, src, nreduce, call);
  return 0;
}

}  // namespace dev
}  // namespace gshmem
