// gshmem device API, implementation: the NVSHMEM-style free functions (gshmem_* / gshmemx_*), which take their
// state from this translation unit's own copy, gshmemi_dstate.
//
// Why this works without -rdc: gshmemi_dstate is `static`, so every .cu file that includes this header has its
// own copy in its own module, and a static registrar object (below) hands the library a host function of this
// file that copies the state into that copy. The library calls it at init end, whenever the state changes, and at
// registration if init already happened. With -rdc the copies stay per file (internal linkage), so both builds
// behave the same.
//
// Names that the host C API (gshmem.h) already declares (gshmem_int_p, gshmem_putmem, gshmem_barrier_all, ...) are
// redeclared for the device pass only, which makes them __host__ __device__ as in NVSHMEM; the host pass keeps
// the library's host function. Device-only names (the _warp/_block forms, gshmemx_*) are plain device functions.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#if !defined(__CUDACC_RTC__) /* NVRTC: no C library headers (gshmem.h has the types) */
#include <cuda_runtime.h>
#endif
#include <nv/target>

#include "gshmem/device/impl/amo.cuh"
#include "gshmem/device/impl/coll.cuh"
#include "gshmem/device/impl/common.cuh"
#include "gshmem/device/impl/rma.cuh"
#include "gshmem/device/impl/sync.cuh"
#include "gshmem/device/impl/team.cuh"

// The 16-bit floating-point RMA types NVSHMEM adds to OpenSHMEM's list (X(TYPE, TYPENAME)); device.cuh only, since
// the C host header knows no CUDA types.
#define GSHMEM_HALF_RMA_TYPES(X) X(__half, half) X(__nv_bfloat16, bfloat16)

namespace gshmem {
namespace dev {
// Hopper's warpgroup (NVSHMEM's _warpgroup scope): 4 consecutive warps, 128 threads, of a block whose size is a
// multiple of 128; every thread of the warpgroup calls. Warpgroup w of a block synchronises on named barrier 1 + w
// (ids 1..8; 0 is __syncthreads), so a kernel using _warpgroup calls must leave those ids to gshmem.
namespace detail {
[[noreturn]] __device__ __noinline__ inline void trap_warpgroup_block(int threads) {
  printf("gshmem: a _warpgroup call (e.g. gshmemx_barrier_warpgroup) in a block of %d threads: a warpgroup is 128 "
         "threads of a block whose size is a multiple of 128, else its named barrier never completes; aborting the "
         "kernel. Fix: launch with a multiple of 128 threads per block\n", threads);
  __trap();
}
}  // namespace detail
struct WarpGroup {
  static __device__ __forceinline__ int rank() { return Block::rank() % 128; }
  static __device__ __forceinline__ int size() { return 128; }
  static __device__ __forceinline__ void sync() {
    if (Block::size() % 128 != 0) detail::trap_warpgroup_block(Block::size());  // ids stay 1..8 (<= 1024 threads)
    asm volatile("bar.sync %0, 128;" ::"r"(1 + Block::rank() / 128) : "memory");
  }
};
}  // namespace dev
}  // namespace gshmem

// This translation unit's device state (constant bank: uniform reads from every thread are cached).
static __constant__ gshmem_device_state_t gshmemi_dstate;

// The state for a query (my_pe, n_pes, ptr, team queries), which would otherwise return zeros from an unset state.
// RMA, atomic, signal and wait calls take gshmemi_dstate unchecked (GSHMEMI_S): they check on their slow paths
// instead (the peer-table translation, a wait that has to spin, the barrier's team load), which every unset state
// reaches, so the fast path carries no test (bench/NOTES.md entry 9: ~20 ns per call in a dependent chain).
static __device__ __forceinline__ const gshmem_device_state_t& gshmemi_state(const char* call) {
  if (gshmemi_dstate.version != GSHMEM_DEVICE_STATE_VERSION) gshmem::dev::detail::trap_not_published(call);
  return gshmemi_dstate;
}

// Under NVRTC there is no host code: the program registers the loaded module with gshmemx_cumodule_init /
// gshmemx_culibrary_init (Python: gshmem.core.module_init), which finds gshmemi_dstate by name.
#if !defined(__CUDACC_RTC__)
namespace {
// Copies the library's state into this file's gshmemi_dstate, with the PE's GPU current (this file's CUDA runtime,
// which may be a different copy from the library's). Returns 0 or the cudaError_t.
int gshmemi_set_dstate(const gshmem_device_state_t* s) {
  int prev = -1;
  cudaError_t e = cudaGetDevice(&prev);
  if (e != cudaSuccess) return static_cast<int>(e);
  if (prev != s->device && (e = cudaSetDevice(s->device)) != cudaSuccess) return static_cast<int>(e);
  e = cudaMemcpyToSymbol(gshmemi_dstate, s, sizeof *s);
  if (prev != s->device) {
    const cudaError_t r = cudaSetDevice(prev);
    if (e == cudaSuccess) e = r;
  }
  return static_cast<int>(e);
}
struct gshmemi_dstate_registrar {
  gshmemi_dstate_registrar() { gshmemi_register_device_state_setter(&gshmemi_set_dstate); }
  ~gshmemi_dstate_registrar() { gshmemi_unregister_device_state_setter(&gshmemi_set_dstate); }
};
gshmemi_dstate_registrar gshmemi_dstate_registrar_instance;
}  // namespace
#endif  // !__CUDACC_RTC__

#define GSHMEMI_S(call) gshmemi_dstate
#define GSHMEMI_Q(call) gshmemi_state(call)

// ---- names shared with the host API: device pass only ----
#if defined(__CUDA_ARCH__)
#pragma nv_diagnostic push
#pragma nv_diag_suppress 20039
extern "C" {
#define GSHMEMI_DEV extern "C" __device__ __forceinline__
GSHMEMI_DEV int gshmem_my_pe(void) { return GSHMEMI_Q("gshmem_my_pe").my_pe; }
GSHMEMI_DEV int gshmem_n_pes(void) { return GSHMEMI_Q("gshmem_n_pes").n_pes; }
GSHMEMI_DEV void* gshmem_ptr(const void* dest, int pe) {
  return const_cast<void*>(gshmem::dev::ptr(GSHMEMI_Q("gshmem_ptr"), dest, pe));
}
GSHMEMI_DEV void gshmem_putmem(void* d, const void* s, size_t n, int pe) {
  gshmem::dev::putmem<gshmem::dev::Thread>(GSHMEMI_S("gshmem_putmem"), d, s, n, pe);
}
GSHMEMI_DEV void gshmem_getmem(void* d, const void* s, size_t n, int pe) {
  gshmem::dev::getmem<gshmem::dev::Thread>(GSHMEMI_S("gshmem_getmem"), d, s, n, pe);
}
GSHMEMI_DEV void gshmem_putmem_nbi(void* d, const void* s, size_t n, int pe) {
  gshmem::dev::putmem_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_putmem_nbi"), d, s, n, pe);
}
GSHMEMI_DEV void gshmem_getmem_nbi(void* d, const void* s, size_t n, int pe) {
  gshmem::dev::getmem_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_getmem_nbi"), d, s, n, pe);
}
GSHMEMI_DEV void gshmem_putmem_signal(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) {
  gshmem::dev::putmem_signal<gshmem::dev::Thread>(GSHMEMI_S("gshmem_putmem_signal"), d, s, n, sig, v, op, pe);
}
GSHMEMI_DEV void gshmem_putmem_signal_nbi(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, int op,
                                          int pe) {
  gshmem::dev::putmem_signal_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_putmem_signal_nbi"), d, s, n, sig, v, op, pe);
}
GSHMEMI_DEV void gshmemx_signal_op(uint64_t* sig, uint64_t v, int op, int pe) {
  gshmem::dev::signal_op(GSHMEMI_S("gshmemx_signal_op"), sig, v, op, pe);
}
GSHMEMI_DEV uint64_t gshmem_signal_fetch(uint64_t* sig) {
  return gshmem::dev::signal_fetch(GSHMEMI_S("gshmem_signal_fetch"), sig);
}
GSHMEMI_DEV uint64_t gshmem_signal_wait_until(uint64_t* sig, int cmp, uint64_t v) {
  return gshmem::dev::signal_wait_until(GSHMEMI_S("gshmem_signal_wait_until"), sig, cmp, v);
}
GSHMEMI_DEV void gshmem_quiet(void) { gshmem::dev::quiet(); }
GSHMEMI_DEV void gshmem_fence(void) { gshmem::dev::fence(); }
GSHMEMI_DEV void gshmem_barrier_all(void) { gshmem::dev::barrier_all<gshmem::dev::Thread>(GSHMEMI_S("gshmem_barrier_all")); }
GSHMEMI_DEV void gshmem_sync_all(void) { gshmem::dev::sync_all<gshmem::dev::Thread>(GSHMEMI_S("gshmem_sync_all")); }
GSHMEMI_DEV int gshmem_barrier(gshmem_team_t team) {
  gshmem::dev::barrier<gshmem::dev::Thread>(GSHMEMI_S("gshmem_barrier"), team);
  return 0;
}
GSHMEMI_DEV int gshmem_team_sync(gshmem_team_t team) {
  gshmem::dev::team_sync<gshmem::dev::Thread>(GSHMEMI_S("gshmem_team_sync"), team);
  return 0;
}

GSHMEMI_DEV int gshmem_team_my_pe(gshmem_team_t team) {
  return gshmem::dev::team_my_pe(GSHMEMI_Q("gshmem_team_my_pe"), team);
}
GSHMEMI_DEV int gshmem_team_n_pes(gshmem_team_t team) {
  return gshmem::dev::team_n_pes(GSHMEMI_Q("gshmem_team_n_pes"), team);
}
GSHMEMI_DEV int gshmem_team_translate_pe(gshmem_team_t src_team, int src_pe, gshmem_team_t dest_team) {
  return gshmem::dev::team_translate_pe(GSHMEMI_Q("gshmem_team_translate_pe"), src_team, src_pe, dest_team);
}

// Sized RMA (element size in bits): thread scope, device pass.
#define GSHMEMI_DEV_SIZED(BITS)                                                                                \
  GSHMEMI_DEV void gshmem_put##BITS(void* d, const void* s, size_t n, int pe) {                               \
    gshmem::dev::putmem<gshmem::dev::Thread>(GSHMEMI_S("gshmem_put" #BITS), d, s, n * (BITS / 8), pe);         \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_get##BITS(void* d, const void* s, size_t n, int pe) {                               \
    gshmem::dev::getmem<gshmem::dev::Thread>(GSHMEMI_S("gshmem_get" #BITS), d, s, n * (BITS / 8), pe);         \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_put##BITS##_nbi(void* d, const void* s, size_t n, int pe) {                         \
    gshmem::dev::putmem_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_put" #BITS "_nbi"), d, s, n * (BITS / 8), pe); \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_get##BITS##_nbi(void* d, const void* s, size_t n, int pe) {                         \
    gshmem::dev::getmem_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_get" #BITS "_nbi"), d, s, n * (BITS / 8), pe); \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_iput##BITS(void* d, const void* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { \
    using E = gshmem::dev::detail::SizedElem<BITS>::type;                                                      \
    gshmem::dev::iput<gshmem::dev::Thread>(GSHMEMI_S("gshmem_iput" #BITS), static_cast<E*>(d),                 \
                                           static_cast<const E*>(s), dst, sst, n, pe);                         \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_iget##BITS(void* d, const void* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { \
    using E = gshmem::dev::detail::SizedElem<BITS>::type;                                                      \
    gshmem::dev::iget<gshmem::dev::Thread>(GSHMEMI_S("gshmem_iget" #BITS), static_cast<E*>(d),                 \
                                           static_cast<const E*>(s), dst, sst, n, pe);                         \
  }
GSHMEMI_DEV_SIZED(8)
GSHMEMI_DEV_SIZED(16)
GSHMEMI_DEV_SIZED(32)
GSHMEMI_DEV_SIZED(64)
GSHMEMI_DEV_SIZED(128)
#undef GSHMEMI_DEV_SIZED
#define GSHMEMI_DEV_SIZED_SIGNAL(BITS)                                                                         \
  GSHMEMI_DEV void gshmem_put##BITS##_signal(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, int op, \
                                             int pe) {                                                         \
    gshmem::dev::putmem_signal<gshmem::dev::Thread>(GSHMEMI_S("gshmem_put" #BITS "_signal"), d, s, n * (BITS / 8), \
                                                    sig, v, op, pe);                                           \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_put##BITS##_signal_nbi(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v,    \
                                                 int op, int pe) {                                             \
    gshmem::dev::putmem_signal_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_put" #BITS "_signal_nbi"), d, s,       \
                                                        n * (BITS / 8), sig, v, op, pe);                       \
  }
GSHMEMI_DEV_SIZED_SIGNAL(8)
GSHMEMI_DEV_SIZED_SIGNAL(16)
GSHMEMI_DEV_SIZED_SIGNAL(32)
GSHMEMI_DEV_SIZED_SIGNAL(64)
GSHMEMI_DEV_SIZED_SIGNAL(128)
#undef GSHMEMI_DEV_SIZED_SIGNAL
// No NVLink multicast in gshmem (docs/migration.md): NULL, NVSHMEM's answer where multicast is unavailable.
GSHMEMI_DEV void* gshmemx_mc_ptr(gshmem_team_t, const void*) { return nullptr; }

#define GSHMEMI_DEV_RMA(T, N)                                                                                  \
  GSHMEMI_DEV void gshmem_##N##_p(T* d, T v, int pe) { gshmem::dev::p(GSHMEMI_S("gshmem_" #N "_p"), d, v, pe); } \
  GSHMEMI_DEV T gshmem_##N##_g(const T* s, int pe) { return gshmem::dev::g(GSHMEMI_S("gshmem_" #N "_g"), s, pe); } \
  GSHMEMI_DEV void gshmem_##N##_put(T* d, const T* s, size_t n, int pe) {                                     \
    gshmem::dev::put<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_put"), d, s, n, pe);                                     \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_get(T* d, const T* s, size_t n, int pe) {                                     \
    gshmem::dev::get<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_get"), d, s, n, pe);                                     \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_put_nbi(T* d, const T* s, size_t n, int pe) {                                 \
    gshmem::dev::put_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_put_nbi"), d, s, n, pe);                             \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_get_nbi(T* d, const T* s, size_t n, int pe) {                                 \
    gshmem::dev::get_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_get_nbi"), d, s, n, pe);                             \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_put_signal(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) { \
    gshmem::dev::put_signal<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_put_signal"), d, s, n, sig, v, op, pe);           \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_put_signal_nbi(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, int op,   \
                                               int pe) {                                                       \
    gshmem::dev::put_signal_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_put_signal_nbi"), d, s, n, sig, v, op, pe);   \
  }
GSHMEM_RMA_TYPES(GSHMEMI_DEV_RMA)
#undef GSHMEMI_DEV_RMA
#define GSHMEMI_DEV_IRMA(T, N)                                                                                 \
  GSHMEMI_DEV void gshmem_##N##_iput(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {       \
    gshmem::dev::iput<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_iput"), d, s, dst, sst, n, pe);            \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_iget(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {       \
    gshmem::dev::iget<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_iget"), d, s, dst, sst, n, pe);            \
  }
GSHMEM_RMA_TYPES(GSHMEMI_DEV_IRMA)
#undef GSHMEMI_DEV_IRMA

#define GSHMEMI_DEV_AMO_STANDARD(T, N)                                                                         \
  GSHMEMI_DEV T gshmem_##N##_atomic_fetch_inc(T* d, int pe) {                                                 \
    return gshmem::dev::atomic_fetch_inc(GSHMEMI_S("gshmem_" #N "_atomic_fetch_inc"), d, pe);                  \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_atomic_inc(T* d, int pe) {                                                    \
    gshmem::dev::atomic_inc(GSHMEMI_S("gshmem_" #N "_atomic_inc"), d, pe);                                     \
  }                                                                                                            \
  GSHMEMI_DEV T gshmem_##N##_atomic_fetch_add(T* d, T v, int pe) {                                            \
    return gshmem::dev::atomic_fetch_add(GSHMEMI_S("gshmem_" #N "_atomic_fetch_add"), d, v, pe);               \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_atomic_add(T* d, T v, int pe) {                                               \
    gshmem::dev::atomic_add(GSHMEMI_S("gshmem_" #N "_atomic_add"), d, v, pe);                                  \
  }                                                                                                            \
  GSHMEMI_DEV T gshmem_##N##_atomic_compare_swap(T* d, T cond, T v, int pe) {                                 \
    return gshmem::dev::atomic_compare_swap(GSHMEMI_S("gshmem_" #N "_atomic_compare_swap"), d, cond, v, pe);   \
  }
#define GSHMEMI_DEV_AMO_EXTENDED(T, N)                                                                         \
  GSHMEMI_DEV T gshmem_##N##_atomic_fetch(const T* s, int pe) {                                               \
    return gshmem::dev::atomic_fetch(GSHMEMI_S("gshmem_" #N "_atomic_fetch"), s, pe);                          \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_atomic_set(T* d, T v, int pe) {                                               \
    gshmem::dev::atomic_set(GSHMEMI_S("gshmem_" #N "_atomic_set"), d, v, pe);                                  \
  }                                                                                                            \
  GSHMEMI_DEV T gshmem_##N##_atomic_swap(T* d, T v, int pe) {                                                 \
    return gshmem::dev::atomic_swap(GSHMEMI_S("gshmem_" #N "_atomic_swap"), d, v, pe);                         \
  }
#define GSHMEMI_DEV_AMO_BITWISE(T, N)                                                                          \
  GSHMEMI_DEV T gshmem_##N##_atomic_fetch_and(T* d, T v, int pe) {                                            \
    return gshmem::dev::atomic_fetch_and(GSHMEMI_S("gshmem_" #N "_atomic_fetch_and"), d, v, pe);               \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_atomic_and(T* d, T v, int pe) {                                               \
    gshmem::dev::atomic_and(GSHMEMI_S("gshmem_" #N "_atomic_and"), d, v, pe);                                  \
  }                                                                                                            \
  GSHMEMI_DEV T gshmem_##N##_atomic_fetch_or(T* d, T v, int pe) {                                             \
    return gshmem::dev::atomic_fetch_or(GSHMEMI_S("gshmem_" #N "_atomic_fetch_or"), d, v, pe);                 \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_atomic_or(T* d, T v, int pe) {                                                \
    gshmem::dev::atomic_or(GSHMEMI_S("gshmem_" #N "_atomic_or"), d, v, pe);                                    \
  }                                                                                                            \
  GSHMEMI_DEV T gshmem_##N##_atomic_fetch_xor(T* d, T v, int pe) {                                            \
    return gshmem::dev::atomic_fetch_xor(GSHMEMI_S("gshmem_" #N "_atomic_fetch_xor"), d, v, pe);               \
  }                                                                                                            \
  GSHMEMI_DEV void gshmem_##N##_atomic_xor(T* d, T v, int pe) {                                               \
    gshmem::dev::atomic_xor(GSHMEMI_S("gshmem_" #N "_atomic_xor"), d, v, pe);                                  \
  }
GSHMEM_AMO_STANDARD_TYPES(GSHMEMI_DEV_AMO_STANDARD)
GSHMEM_AMO_EXTENDED_TYPES(GSHMEMI_DEV_AMO_EXTENDED)
GSHMEM_AMO_BITWISE_TYPES(GSHMEMI_DEV_AMO_BITWISE)
#undef GSHMEMI_DEV_AMO_STANDARD
#undef GSHMEMI_DEV_AMO_EXTENDED
#undef GSHMEMI_DEV_AMO_BITWISE

#define GSHMEMI_DEV_WAIT(T, N)                                                                                 \
  GSHMEMI_DEV void gshmem_##N##_wait_until(T* ivar, int cmp, T v) {                                           \
    gshmem::dev::wait_until(GSHMEMI_S("gshmem_" #N "_wait_until"), ivar, cmp, v);                              \
  }                                                                                                            \
  GSHMEMI_DEV int gshmem_##N##_test(T* ivar, int cmp, T v) {                                                  \
    return gshmem::dev::test(GSHMEMI_S("gshmem_" #N "_test"), ivar, cmp, v);                                   \
  }
GSHMEM_WAIT_TYPES(GSHMEMI_DEV_WAIT)
#undef GSHMEMI_DEV_WAIT

// Collectives, thread scope (the host API's names; device/impl/coll.cuh).
GSHMEMI_DEV int gshmem_broadcastmem(gshmem_team_t team, void* d, const void* s, size_t n, int root) {
  return gshmem::dev::broadcastmem<gshmem::dev::Thread>(GSHMEMI_S("gshmem_broadcastmem"), team, d, s, n, root,
                                                        "gshmem_broadcastmem");
}
GSHMEMI_DEV int gshmem_fcollectmem(gshmem_team_t team, void* d, const void* s, size_t n) {
  return gshmem::dev::fcollectmem<gshmem::dev::Thread>(GSHMEMI_S("gshmem_fcollectmem"), team, d, s, n,
                                                       "gshmem_fcollectmem");
}
GSHMEMI_DEV int gshmem_alltoallmem(gshmem_team_t team, void* d, const void* s, size_t n) {
  return gshmem::dev::alltoallmem<gshmem::dev::Thread>(GSHMEMI_S("gshmem_alltoallmem"), team, d, s, n,
                                                       "gshmem_alltoallmem");
}
#define GSHMEMI_DEV_COLL(T, N)                                                                                 \
  GSHMEMI_DEV int gshmem_##N##_broadcast(gshmem_team_t team, T* d, const T* s, size_t n, int root) {          \
    return gshmem::dev::broadcastmem<gshmem::dev::Thread>(GSHMEMI_S(""), team, d, s, n * sizeof(T), root,      \
                                                          "gshmem_" #N "_broadcast");                          \
  }                                                                                                            \
  GSHMEMI_DEV int gshmem_##N##_fcollect(gshmem_team_t team, T* d, const T* s, size_t n) {                     \
    return gshmem::dev::fcollectmem<gshmem::dev::Thread>(GSHMEMI_S(""), team, d, s, n * sizeof(T),             \
                                                         "gshmem_" #N "_fcollect");                            \
  }                                                                                                            \
  GSHMEMI_DEV int gshmem_##N##_alltoall(gshmem_team_t team, T* d, const T* s, size_t n) {                     \
    return gshmem::dev::alltoallmem<gshmem::dev::Thread>(GSHMEMI_S(""), team, d, s, n * sizeof(T),            \
                                                         "gshmem_" #N "_alltoall");                            \
  }
GSHMEM_RMA_TYPES(GSHMEMI_DEV_COLL)
#undef GSHMEMI_DEV_COLL
#define GSHMEMI_DEV_ALLTOALLS(T, N)                                                                            \
  GSHMEMI_DEV int gshmem_##N##_alltoalls(gshmem_team_t team, T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst,   \
                                         size_t n) {                                                           \
    return gshmem::dev::alltoalls<gshmem::dev::Thread>(GSHMEMI_S(""), team, d, s, dst, sst, n,                 \
                                                       "gshmem_" #N "_alltoalls");                             \
  }
GSHMEM_RMA_TYPES(GSHMEMI_DEV_ALLTOALLS)
#undef GSHMEMI_DEV_ALLTOALLS
#define GSHMEMI_DEV_REDUCE_OP(T, N, OP, O)                                                                     \
  GSHMEMI_DEV int gshmem_##N##_##OP##_reduce(gshmem_team_t team, T* d, const T* s, size_t n) {                \
    return gshmem::dev::reduce<gshmem::dev::Thread, gshmem::coll::ReduceOp::O>(GSHMEMI_S(""), team, d, s, n,   \
                                                                               "gshmem_" #N "_" #OP "_reduce"); \
  }                                                                                                            \
  GSHMEMI_DEV int gshmem_##N##_##OP##_reducescatter(gshmem_team_t team, T* d, const T* s, size_t n) {         \
    return gshmem::dev::reducescatter<gshmem::dev::Thread, gshmem::coll::ReduceOp::O>(                        \
        GSHMEMI_S(""), team, d, s, n, "gshmem_" #N "_" #OP "_reducescatter");                                  \
  }
#define GSHMEMI_DEV_REDUCE_BITWISE(T, N) GSHMEM_REDUCE_BITWISE_OPS(GSHMEMI_DEV_REDUCE_OP, T, N)
#define GSHMEMI_DEV_REDUCE_STANDARD(T, N) GSHMEM_REDUCE_ARITH_OPS(GSHMEMI_DEV_REDUCE_OP, T, N)
GSHMEM_REDUCE_BITWISE_TYPES(GSHMEMI_DEV_REDUCE_BITWISE)
GSHMEM_REDUCE_STANDARD_TYPES(GSHMEMI_DEV_REDUCE_STANDARD)
#undef GSHMEMI_DEV_REDUCE_STANDARD
#undef GSHMEMI_DEV_REDUCE_BITWISE
#undef GSHMEMI_DEV_REDUCE_OP
#undef GSHMEMI_DEV
}  // extern "C"
#pragma nv_diagnostic pop
#endif  // __CUDA_ARCH__

// ---- device-only names (warp and block forms): both passes ----
#define GSHMEMI_DEVX static __device__ __forceinline__
#define GSHMEMI_DEVX_SCOPED(SUFFIX, COOP)                                                                      \
  GSHMEMI_DEVX void gshmemx_putmem##SUFFIX(void* d, const void* s, size_t n, int pe) {                        \
    gshmem::dev::putmem<COOP>(GSHMEMI_S("gshmemx_putmem" #SUFFIX), d, s, n, pe);                               \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_getmem##SUFFIX(void* d, const void* s, size_t n, int pe) {                        \
    gshmem::dev::getmem<COOP>(GSHMEMI_S("gshmemx_getmem" #SUFFIX), d, s, n, pe);                               \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_putmem_nbi##SUFFIX(void* d, const void* s, size_t n, int pe) {                    \
    gshmem::dev::putmem_nbi<COOP>(GSHMEMI_S("gshmemx_putmem_nbi" #SUFFIX), d, s, n, pe);                       \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_getmem_nbi##SUFFIX(void* d, const void* s, size_t n, int pe) {                    \
    gshmem::dev::getmem_nbi<COOP>(GSHMEMI_S("gshmemx_getmem_nbi" #SUFFIX), d, s, n, pe);                       \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_putmem_signal##SUFFIX(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, \
                                                  int op, int pe) {                                            \
    gshmem::dev::putmem_signal<COOP>(GSHMEMI_S("gshmemx_putmem_signal" #SUFFIX), d, s, n, sig, v, op, pe);     \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_putmem_signal_nbi##SUFFIX(void* d, const void* s, size_t n, uint64_t* sig,         \
                                                      uint64_t v, int op, int pe) {                            \
    gshmem::dev::putmem_signal_nbi<COOP>(GSHMEMI_S("gshmemx_putmem_signal_nbi" #SUFFIX), d, s, n, sig, v, op,  \
                                         pe);                                                                  \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_barrier_all##SUFFIX() {                                                           \
    gshmem::dev::barrier_all<COOP>(GSHMEMI_S("gshmemx_barrier_all" #SUFFIX));                                  \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_sync_all##SUFFIX() { gshmem::dev::sync_all<COOP>(GSHMEMI_S("gshmemx_sync_all" #SUFFIX)); } \
  GSHMEMI_DEVX int gshmemx_barrier##SUFFIX(gshmem_team_t t) {                                                 \
    gshmem::dev::barrier<COOP>(GSHMEMI_S("gshmemx_barrier" #SUFFIX), t);                                       \
    return 0;                                                                                                  \
  }                                                                                                            \
  GSHMEMI_DEVX int gshmemx_team_sync##SUFFIX(gshmem_team_t t) {                                               \
    gshmem::dev::team_sync<COOP>(GSHMEMI_S("gshmemx_team_sync" #SUFFIX), t);                                   \
    return 0;                                                                                                  \
  }
GSHMEMI_DEVX_SCOPED(_warp, gshmem::dev::Warp)
GSHMEMI_DEVX_SCOPED(_block, gshmem::dev::Block)
#undef GSHMEMI_DEVX_SCOPED
// No TMA in gshmem (gshmem.h, gshmemx_ask_smem): a CTA's shared memory handed to the library is not used.
GSHMEMI_DEVX void gshmemx_give_smem(void*, size_t) {}
GSHMEMI_DEVX void gshmemx_release_smem(void) {}
// Team barrier by one warpgroup (128 threads, 4 consecutive warps; see gshmem::dev::WarpGroup) per PE.
GSHMEMI_DEVX int gshmemx_barrier_warpgroup(gshmem_team_t t) {
  gshmem::dev::barrier<gshmem::dev::WarpGroup>(GSHMEMI_S("gshmemx_barrier_warpgroup"), t);
  return 0;
}

// Collectives, warp and block scope (device only, as NVSHMEM names them; device/impl/coll.cuh).
#define GSHMEMI_DEVX_COLL_SCOPED(SUFFIX, COOP)                                                                 \
  GSHMEMI_DEVX int gshmemx_broadcastmem##SUFFIX(gshmem_team_t team, void* d, const void* s, size_t n, int root) { \
    return gshmem::dev::broadcastmem<COOP>(GSHMEMI_S(""), team, d, s, n, root, "gshmemx_broadcastmem" #SUFFIX); \
  }                                                                                                            \
  GSHMEMI_DEVX int gshmemx_fcollectmem##SUFFIX(gshmem_team_t team, void* d, const void* s, size_t n) {         \
    return gshmem::dev::fcollectmem<COOP>(GSHMEMI_S(""), team, d, s, n, "gshmemx_fcollectmem" #SUFFIX);        \
  }                                                                                                            \
  GSHMEMI_DEVX int gshmemx_alltoallmem##SUFFIX(gshmem_team_t team, void* d, const void* s, size_t n) {         \
    return gshmem::dev::alltoallmem<COOP>(GSHMEMI_S(""), team, d, s, n, "gshmemx_alltoallmem" #SUFFIX);        \
  }
GSHMEMI_DEVX_COLL_SCOPED(_warp, gshmem::dev::Warp)
GSHMEMI_DEVX_COLL_SCOPED(_block, gshmem::dev::Block)
#undef GSHMEMI_DEVX_COLL_SCOPED
#define GSHMEMI_DEVX_COLL_TYPED(T, N, SUFFIX, COOP)                                                            \
  GSHMEMI_DEVX int gshmemx_##N##_broadcast##SUFFIX(gshmem_team_t team, T* d, const T* s, size_t n, int root) { \
    return gshmem::dev::broadcastmem<COOP>(GSHMEMI_S(""), team, d, s, n * sizeof(T), root,                     \
                                           "gshmemx_" #N "_broadcast" #SUFFIX);                                \
  }                                                                                                            \
  GSHMEMI_DEVX int gshmemx_##N##_fcollect##SUFFIX(gshmem_team_t team, T* d, const T* s, size_t n) {           \
    return gshmem::dev::fcollectmem<COOP>(GSHMEMI_S(""), team, d, s, n * sizeof(T),                            \
                                          "gshmemx_" #N "_fcollect" #SUFFIX);                                  \
  }                                                                                                            \
  GSHMEMI_DEVX int gshmemx_##N##_alltoall##SUFFIX(gshmem_team_t team, T* d, const T* s, size_t n) {           \
    return gshmem::dev::alltoallmem<COOP>(GSHMEMI_S(""), team, d, s, n * sizeof(T),                            \
                                          "gshmemx_" #N "_alltoall" #SUFFIX);                                  \
  }
#define GSHMEMI_DEVX_COLL(T, N)                                                                                \
  GSHMEMI_DEVX_COLL_TYPED(T, N, _warp, gshmem::dev::Warp) GSHMEMI_DEVX_COLL_TYPED(T, N, _block, gshmem::dev::Block)
GSHMEM_RMA_TYPES(GSHMEMI_DEVX_COLL)
GSHMEM_HALF_RMA_TYPES(GSHMEMI_DEVX_COLL)
#undef GSHMEMI_DEVX_COLL
#undef GSHMEMI_DEVX_COLL_TYPED
#define GSHMEMI_DEVX_REDUCE_OP_SCOPED(T, N, OP, O, SUFFIX, COOP)                                               \
  GSHMEMI_DEVX int gshmemx_##N##_##OP##_reduce##SUFFIX(gshmem_team_t team, T* d, const T* s, size_t n) {      \
    return gshmem::dev::reduce<COOP, gshmem::coll::ReduceOp::O>(GSHMEMI_S(""), team, d, s, n,                  \
                                                                "gshmemx_" #N "_" #OP "_reduce" #SUFFIX);      \
  }                                                                                                            \
  GSHMEMI_DEVX int gshmemx_##N##_##OP##_reducescatter##SUFFIX(gshmem_team_t team, T* d, const T* s, size_t n) { \
    return gshmem::dev::reducescatter<COOP, gshmem::coll::ReduceOp::O>(                                       \
        GSHMEMI_S(""), team, d, s, n, "gshmemx_" #N "_" #OP "_reducescatter" #SUFFIX);                         \
  }
#define GSHMEMI_DEVX_REDUCE_OP(T, N, OP, O)                                                                    \
  GSHMEMI_DEVX_REDUCE_OP_SCOPED(T, N, OP, O, _warp, gshmem::dev::Warp)                                        \
  GSHMEMI_DEVX_REDUCE_OP_SCOPED(T, N, OP, O, _block, gshmem::dev::Block)
#define GSHMEMI_DEVX_REDUCE_BITWISE(T, N) GSHMEM_REDUCE_BITWISE_OPS(GSHMEMI_DEVX_REDUCE_OP, T, N)
#define GSHMEMI_DEVX_REDUCE_STANDARD(T, N) GSHMEM_REDUCE_ARITH_OPS(GSHMEMI_DEVX_REDUCE_OP, T, N)
GSHMEM_REDUCE_BITWISE_TYPES(GSHMEMI_DEVX_REDUCE_BITWISE)
GSHMEM_REDUCE_STANDARD_TYPES(GSHMEMI_DEVX_REDUCE_STANDARD)
GSHMEM_HALF_RMA_TYPES(GSHMEMI_DEVX_REDUCE_STANDARD)
// NVSHMEM's maxloc (block scope only): pairs {x: value, y: location}; the larger x, on equal x the smaller y.
GSHMEMI_DEVX int gshmemx_double2_maxloc_reduce_block(gshmem_team_t team, double2* d, const double2* s, size_t n) {
  return gshmem::dev::reduce<gshmem::dev::Block, gshmem::coll::ReduceOp::MaxLoc>(
      GSHMEMI_S(""), team, d, s, n, "gshmemx_double2_maxloc_reduce_block");
}
#undef GSHMEMI_DEVX_REDUCE_STANDARD
#undef GSHMEMI_DEVX_REDUCE_BITWISE
#undef GSHMEMI_DEVX_REDUCE_OP
#undef GSHMEMI_DEVX_REDUCE_OP_SCOPED

#define GSHMEMI_DEVX_SIZED_SCOPED(BITS, SUFFIX, COOP)                                                          \
  GSHMEMI_DEVX void gshmemx_put##BITS##SUFFIX(void* d, const void* s, size_t n, int pe) {                     \
    gshmem::dev::putmem<COOP>(GSHMEMI_S("gshmemx_put" #BITS #SUFFIX), d, s, n * (BITS / 8), pe);               \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_get##BITS##SUFFIX(void* d, const void* s, size_t n, int pe) {                     \
    gshmem::dev::getmem<COOP>(GSHMEMI_S("gshmemx_get" #BITS #SUFFIX), d, s, n * (BITS / 8), pe);               \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_put##BITS##_nbi##SUFFIX(void* d, const void* s, size_t n, int pe) {               \
    gshmem::dev::putmem_nbi<COOP>(GSHMEMI_S("gshmemx_put" #BITS "_nbi" #SUFFIX), d, s, n * (BITS / 8), pe);    \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_get##BITS##_nbi##SUFFIX(void* d, const void* s, size_t n, int pe) {               \
    gshmem::dev::getmem_nbi<COOP>(GSHMEMI_S("gshmemx_get" #BITS "_nbi" #SUFFIX), d, s, n * (BITS / 8), pe);    \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_iput##BITS##SUFFIX(void* d, const void* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, \
                                               int pe) {                                                       \
    using E = gshmem::dev::detail::SizedElem<BITS>::type;                                                      \
    gshmem::dev::iput<COOP>(GSHMEMI_S("gshmemx_iput" #BITS #SUFFIX), static_cast<E*>(d),                       \
                            static_cast<const E*>(s), dst, sst, n, pe);                                        \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_iget##BITS##SUFFIX(void* d, const void* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, \
                                               int pe) {                                                       \
    using E = gshmem::dev::detail::SizedElem<BITS>::type;                                                      \
    gshmem::dev::iget<COOP>(GSHMEMI_S("gshmemx_iget" #BITS #SUFFIX), static_cast<E*>(d),                       \
                            static_cast<const E*>(s), dst, sst, n, pe);                                        \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_put##BITS##_signal##SUFFIX(void* d, const void* s, size_t n, uint64_t* sig,        \
                                                       uint64_t v, int op, int pe) {                           \
    gshmem::dev::putmem_signal<COOP>(GSHMEMI_S("gshmemx_put" #BITS "_signal" #SUFFIX), d, s, n * (BITS / 8),   \
                                     sig, v, op, pe);                                                          \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_put##BITS##_signal_nbi##SUFFIX(void* d, const void* s, size_t n, uint64_t* sig,    \
                                                           uint64_t v, int op, int pe) {                       \
    gshmem::dev::putmem_signal_nbi<COOP>(GSHMEMI_S("gshmemx_put" #BITS "_signal_nbi" #SUFFIX), d, s,           \
                                         n * (BITS / 8), sig, v, op, pe);                                      \
  }
#define GSHMEMI_DEVX_SIZED(BITS)                                                                               \
  GSHMEMI_DEVX_SIZED_SCOPED(BITS, _warp, gshmem::dev::Warp) GSHMEMI_DEVX_SIZED_SCOPED(BITS, _block, gshmem::dev::Block)
GSHMEMI_DEVX_SIZED(8)
GSHMEMI_DEVX_SIZED(16)
GSHMEMI_DEVX_SIZED(32)
GSHMEMI_DEVX_SIZED(64)
GSHMEMI_DEVX_SIZED(128)
#undef GSHMEMI_DEVX_SIZED
#undef GSHMEMI_DEVX_SIZED_SCOPED

// wait_until_{all,any,some}[_vector] and test_{all,any,some}[_vector] for the wait types (device only; the host
// API has no such calls). Semantics: gshmem/device/impl/sync.cuh.
#define GSHMEMI_DEVX_WAIT(T, N)                                                                                \
  GSHMEMI_DEVX void gshmem_##N##_wait_until_all(T* ivars, size_t n, const int* status, int cmp, T v) {        \
    gshmem::dev::detail::wait_until_all(GSHMEMI_S("gshmem_" #N "_wait_until_all"), ivars, n, status, cmp,      \
                                        gshmem::dev::detail::OneValue<T>{v}, "gshmem_" #N "_wait_until_all");  \
  }                                                                                                            \
  GSHMEMI_DEVX size_t gshmem_##N##_wait_until_any(T* ivars, size_t n, const int* status, int cmp, T v) {      \
    return gshmem::dev::detail::wait_until_any(GSHMEMI_S("gshmem_" #N "_wait_until_any"), ivars, n, status,    \
                                               cmp, gshmem::dev::detail::OneValue<T>{v},                       \
                                               "gshmem_" #N "_wait_until_any");                                \
  }                                                                                                            \
  GSHMEMI_DEVX size_t gshmem_##N##_wait_until_some(T* ivars, size_t n, size_t* indices, const int* status,    \
                                                   int cmp, T v) {                                             \
    return gshmem::dev::detail::wait_until_some(GSHMEMI_S("gshmem_" #N "_wait_until_some"), ivars, n, indices, \
                                                status, cmp, gshmem::dev::detail::OneValue<T>{v},              \
                                                "gshmem_" #N "_wait_until_some");                              \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmem_##N##_wait_until_all_vector(T* ivars, size_t n, const int* status, int cmp,        \
                                                       T* values) {                                            \
    gshmem::dev::detail::wait_until_all(GSHMEMI_S("gshmem_" #N "_wait_until_all_vector"), ivars, n, status,    \
                                        cmp, gshmem::dev::detail::PerElement<T>{values},                       \
                                        "gshmem_" #N "_wait_until_all_vector");                                \
  }                                                                                                            \
  GSHMEMI_DEVX size_t gshmem_##N##_wait_until_any_vector(T* ivars, size_t n, const int* status, int cmp,      \
                                                         T* values) {                                          \
    return gshmem::dev::detail::wait_until_any(GSHMEMI_S("gshmem_" #N "_wait_until_any_vector"), ivars, n,     \
                                               status, cmp, gshmem::dev::detail::PerElement<T>{values},        \
                                               "gshmem_" #N "_wait_until_any_vector");                         \
  }                                                                                                            \
  GSHMEMI_DEVX size_t gshmem_##N##_wait_until_some_vector(T* ivars, size_t n, size_t* indices,                \
                                                          const int* status, int cmp, T* values) {             \
    return gshmem::dev::detail::wait_until_some(GSHMEMI_S("gshmem_" #N "_wait_until_some_vector"), ivars, n,   \
                                                indices, status, cmp,                                          \
                                                gshmem::dev::detail::PerElement<T>{values},                    \
                                                "gshmem_" #N "_wait_until_some_vector");                       \
  }                                                                                                            \
  GSHMEMI_DEVX int gshmem_##N##_test_all(T* ivars, size_t n, const int* status, int cmp, T v) {               \
    return gshmem::dev::test_all(GSHMEMI_S("gshmem_" #N "_test_all"), ivars, n, status, cmp, v);               \
  }                                                                                                            \
  GSHMEMI_DEVX size_t gshmem_##N##_test_any(T* ivars, size_t n, const int* status, int cmp, T v) {            \
    return gshmem::dev::test_any(GSHMEMI_S("gshmem_" #N "_test_any"), ivars, n, status, cmp, v);               \
  }                                                                                                            \
  GSHMEMI_DEVX size_t gshmem_##N##_test_some(T* ivars, size_t n, size_t* indices, const int* status, int cmp, \
                                             T v) {                                                            \
    return gshmem::dev::test_some(GSHMEMI_S("gshmem_" #N "_test_some"), ivars, n, indices, status, cmp, v);    \
  }                                                                                                            \
  GSHMEMI_DEVX int gshmem_##N##_test_all_vector(T* ivars, size_t n, const int* status, int cmp, T* values) {  \
    return gshmem::dev::test_all_vector(GSHMEMI_S("gshmem_" #N "_test_all_vector"), ivars, n, status, cmp,     \
                                        values);                                                               \
  }                                                                                                            \
  GSHMEMI_DEVX size_t gshmem_##N##_test_any_vector(T* ivars, size_t n, const int* status, int cmp,            \
                                                   T* values) {                                                \
    return gshmem::dev::test_any_vector(GSHMEMI_S("gshmem_" #N "_test_any_vector"), ivars, n, status, cmp,     \
                                        values);                                                               \
  }                                                                                                            \
  GSHMEMI_DEVX size_t gshmem_##N##_test_some_vector(T* ivars, size_t n, size_t* indices, const int* status,   \
                                                    int cmp, T* values) {                                      \
    return gshmem::dev::test_some_vector(GSHMEMI_S("gshmem_" #N "_test_some_vector"), ivars, n, indices,       \
                                         status, cmp, values);                                                 \
  }
GSHMEM_WAIT_TYPES(GSHMEMI_DEVX_WAIT)
#undef GSHMEMI_DEVX_WAIT

#define GSHMEMI_DEVX_RMA_SCOPED(T, N, SUFFIX, COOP)                                                            \
  GSHMEMI_DEVX void gshmemx_##N##_put##SUFFIX(T* d, const T* s, size_t n, int pe) {                           \
    gshmem::dev::put<COOP>(GSHMEMI_S("gshmemx_" #N "_put" #SUFFIX), d, s, n, pe);                              \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_##N##_get##SUFFIX(T* d, const T* s, size_t n, int pe) {                           \
    gshmem::dev::get<COOP>(GSHMEMI_S("gshmemx_" #N "_get" #SUFFIX), d, s, n, pe);                              \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_##N##_put_nbi##SUFFIX(T* d, const T* s, size_t n, int pe) {                       \
    gshmem::dev::put_nbi<COOP>(GSHMEMI_S("gshmemx_" #N "_put_nbi" #SUFFIX), d, s, n, pe);                      \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_##N##_get_nbi##SUFFIX(T* d, const T* s, size_t n, int pe) {                       \
    gshmem::dev::get_nbi<COOP>(GSHMEMI_S("gshmemx_" #N "_get_nbi" #SUFFIX), d, s, n, pe);                      \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_##N##_put_signal##SUFFIX(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v,   \
                                                     int op, int pe) {                                         \
    gshmem::dev::put_signal<COOP>(GSHMEMI_S("gshmemx_" #N "_put_signal" #SUFFIX), d, s, n, sig, v, op, pe);    \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_##N##_put_signal_nbi##SUFFIX(T* d, const T* s, size_t n, uint64_t* sig,           \
                                                         uint64_t v, int op, int pe) {                         \
    gshmem::dev::put_signal_nbi<COOP>(GSHMEMI_S("gshmemx_" #N "_put_signal_nbi" #SUFFIX), d, s, n, sig, v, op, \
                                      pe);                                                                     \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_##N##_iput##SUFFIX(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n,       \
                                               int pe) {                                                       \
    gshmem::dev::iput<COOP>(GSHMEMI_S("gshmemx_" #N "_iput" #SUFFIX), d, s, dst, sst, n, pe);                  \
  }                                                                                                            \
  GSHMEMI_DEVX void gshmemx_##N##_iget##SUFFIX(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n,       \
                                               int pe) {                                                       \
    gshmem::dev::iget<COOP>(GSHMEMI_S("gshmemx_" #N "_iget" #SUFFIX), d, s, dst, sst, n, pe);                  \
  }
#define GSHMEMI_DEVX_RMA(T, N) GSHMEMI_DEVX_RMA_SCOPED(T, N, _warp, gshmem::dev::Warp) \
  GSHMEMI_DEVX_RMA_SCOPED(T, N, _block, gshmem::dev::Block)
GSHMEM_RMA_TYPES(GSHMEMI_DEVX_RMA)
#undef GSHMEMI_DEVX_RMA
// ---- half and bfloat16 (NVSHMEM's gshmem_half_* / gshmem_bfloat16_*) ----
// The host library's C API has no CUDA types, so these are defined here for both sides: on the device they are the
// native calls, on the host the sized host calls of the same element size (gshmem_put16, gshmem_iput16, ...).
#define GSHMEMI_HD static __host__ __device__ __forceinline__
#define GSHMEMI_HALF_RMA(T, N)                                                                                 \
  GSHMEMI_HD void gshmem_##N##_p(T* d, T v, int pe) {                                                         \
    NV_IF_TARGET(NV_IS_DEVICE, (gshmem::dev::p(GSHMEMI_S("gshmem_" #N "_p"), d, v, pe);),                     \
                 (gshmem_putmem(d, &v, sizeof(T), pe);))                                                       \
  }                                                                                                            \
  GSHMEMI_HD T gshmem_##N##_g(const T* s, int pe) {                                                           \
    NV_IF_TARGET(NV_IS_DEVICE, (return gshmem::dev::g(GSHMEMI_S("gshmem_" #N "_g"), s, pe);),                 \
                 (T v; gshmem_getmem(&v, s, sizeof(T), pe); return v;))                                        \
  }                                                                                                            \
  GSHMEMI_HD void gshmem_##N##_put(T* d, const T* s, size_t n, int pe) {                                      \
    NV_IF_TARGET(NV_IS_DEVICE, (gshmem::dev::put<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_put"), d, s, n, pe);), \
                 (gshmem_put16(d, s, n, pe);))                                                                 \
  }                                                                                                            \
  GSHMEMI_HD void gshmem_##N##_get(T* d, const T* s, size_t n, int pe) {                                      \
    NV_IF_TARGET(NV_IS_DEVICE, (gshmem::dev::get<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_get"), d, s, n, pe);), \
                 (gshmem_get16(d, s, n, pe);))                                                                 \
  }                                                                                                            \
  GSHMEMI_HD void gshmem_##N##_put_nbi(T* d, const T* s, size_t n, int pe) {                                  \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (gshmem::dev::put_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_put_nbi"), d, s, n, pe);), \
                 (gshmem_put16_nbi(d, s, n, pe);))                                                             \
  }                                                                                                            \
  GSHMEMI_HD void gshmem_##N##_get_nbi(T* d, const T* s, size_t n, int pe) {                                  \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (gshmem::dev::get_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_get_nbi"), d, s, n, pe);), \
                 (gshmem_get16_nbi(d, s, n, pe);))                                                             \
  }                                                                                                            \
  GSHMEMI_HD void gshmem_##N##_iput(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {        \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (gshmem::dev::iput<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_iput"), d, s, dst, sst, n, pe);), \
                 (gshmem_iput16(d, s, dst, sst, n, pe);))                                                      \
  }                                                                                                            \
  GSHMEMI_HD void gshmem_##N##_iget(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {        \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (gshmem::dev::iget<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_iget"), d, s, dst, sst, n, pe);), \
                 (gshmem_iget16(d, s, dst, sst, n, pe);))                                                      \
  }                                                                                                            \
  GSHMEMI_HD void gshmem_##N##_put_signal(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, int op,      \
                                          int pe) {                                                            \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (gshmem::dev::put_signal<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_put_signal"), d, s, n, sig, \
                                                              v, op, pe);),                                    \
                 (gshmem_putmem_signal(d, s, n * sizeof(T), sig, v, op, pe);))                                 \
  }                                                                                                            \
  GSHMEMI_HD void gshmem_##N##_put_signal_nbi(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, int op,  \
                                              int pe) {                                                        \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (gshmem::dev::put_signal_nbi<gshmem::dev::Thread>(GSHMEMI_S("gshmem_" #N "_put_signal_nbi"), d, s, \
                                                                  n, sig, v, op, pe);),                        \
                 (gshmem_putmem_signal_nbi(d, s, n * sizeof(T), sig, v, op, pe);))                             \
  }                                                                                                            \
  GSHMEMI_DEVX_RMA_SCOPED(T, N, _warp, gshmem::dev::Warp)                                                      \
  GSHMEMI_DEVX_RMA_SCOPED(T, N, _block, gshmem::dev::Block)
GSHMEM_HALF_RMA_TYPES(GSHMEMI_HALF_RMA)
#undef GSHMEMI_HALF_RMA
#undef GSHMEMI_HD
// Stream-ordered half/bfloat16 (host only): the 2-byte sized and ushort stream calls of the library.
#define GSHMEMI_H GSHMEMI_HOST_INLINE
#define GSHMEMI_HALF_STREAM(T, N)                                                                              \
  GSHMEMI_H void gshmemx_##N##_put_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {           \
    gshmemx_put16_on_stream(d, s, n, pe, st);                                                                  \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_get_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {           \
    gshmemx_get16_on_stream(d, s, n, pe, st);                                                                  \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_put_nbi_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {       \
    gshmemx_put16_nbi_on_stream(d, s, n, pe, st);                                                              \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_get_nbi_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {       \
    gshmemx_get16_nbi_on_stream(d, s, n, pe, st);                                                              \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_p_on_stream(T* d, const T v, int pe, cudaStream_t st) {                        \
    unsigned short b;                                                                                          \
    memcpy(&b, static_cast<const void*>(&v), sizeof b);                                                        \
    gshmemx_ushort_p_on_stream(reinterpret_cast<unsigned short*>(d), b, pe, st);                               \
  }                                                                                                            \
  GSHMEMI_H T gshmemx_##N##_g_on_stream(const T* s, int pe, cudaStream_t st) {                                \
    const unsigned short b = gshmemx_ushort_g_on_stream(reinterpret_cast<const unsigned short*>(s), pe, st);   \
    T v;                                                                                                       \
    memcpy(static_cast<void*>(&v), &b, sizeof v);                                                              \
    return v;                                                                                                  \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_iput_on_stream(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe, \
                                              cudaStream_t st) {                                               \
    gshmemx_iput16_on_stream(d, s, dst, sst, n, pe, st);                                                       \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_iget_on_stream(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe, \
                                              cudaStream_t st) {                                               \
    gshmemx_iget16_on_stream(d, s, dst, sst, n, pe, st);                                                       \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_put_signal_on_stream(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v,    \
                                                    int op, int pe, cudaStream_t st) {                         \
    gshmemx_put16_signal_on_stream(d, s, n, sig, v, op, pe, st);                                               \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_put_signal_nbi_on_stream(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, \
                                                        int op, int pe, cudaStream_t st) {                     \
    gshmemx_put16_signal_nbi_on_stream(d, s, n, sig, v, op, pe, st);                                           \
  }
GSHMEM_HALF_RMA_TYPES(GSHMEMI_HALF_STREAM)
#undef GSHMEMI_HALF_STREAM
#undef GSHMEMI_H
// Collectives over half and bfloat16: thread form on both sides (the device routine; on the host the library's
// entries by element size and type code, gshmemi_collective / gshmemi_reduction, which name the user's call in
// errors), the host's _on_stream forms; the _warp/_block forms are above with the other types'.
#define GSHMEMI_HD static __host__ __device__ __forceinline__
#define GSHMEMI_HALF_COLL(T, N)                                                                                \
  GSHMEMI_HD int gshmem_##N##_broadcast(gshmem_team_t team, T* d, const T* s, size_t n, int root) {           \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (return gshmem::dev::broadcastmem<gshmem::dev::Thread>(GSHMEMI_S(""), team, d, s, n * sizeof(T), \
                                                                        root, "gshmem_" #N "_broadcast");),    \
                 (return gshmemi_collective(GSHMEMI_COLL_BROADCAST, team, d, s, n, sizeof(T), root, 1, 1, 0,    \
                                            nullptr, "gshmem_" #N "_broadcast");))                             \
  }                                                                                                            \
  GSHMEMI_HD int gshmem_##N##_fcollect(gshmem_team_t team, T* d, const T* s, size_t n) {                      \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (return gshmem::dev::fcollectmem<gshmem::dev::Thread>(GSHMEMI_S(""), team, d, s, n * sizeof(T), \
                                                                       "gshmem_" #N "_fcollect");),            \
                 (return gshmemi_collective(GSHMEMI_COLL_FCOLLECT, team, d, s, n, sizeof(T), 0, 1, 1, 0,       \
                                            nullptr, "gshmem_" #N "_fcollect");))                              \
  }                                                                                                            \
  GSHMEMI_HD int gshmem_##N##_alltoall(gshmem_team_t team, T* d, const T* s, size_t n) {                      \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (return gshmem::dev::alltoallmem<gshmem::dev::Thread>(GSHMEMI_S(""), team, d, s, n * sizeof(T), \
                                                                       "gshmem_" #N "_alltoall");),            \
                 (return gshmemi_collective(GSHMEMI_COLL_ALLTOALL, team, d, s, n, sizeof(T), 0, 1, 1, 0,       \
                                            nullptr, "gshmem_" #N "_alltoall");))                              \
  }                                                                                                            \
  GSHMEMI_HD int gshmem_##N##_alltoalls(gshmem_team_t team, T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst,    \
                                        size_t n) {                                                            \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (return gshmem::dev::alltoalls<gshmem::dev::Thread>(GSHMEMI_S(""), team, d, s, dst, sst, n,   \
                                                                     "gshmem_" #N "_alltoalls");),             \
                 (return gshmemi_collective(GSHMEMI_COLL_ALLTOALLS, team, d, s, n, sizeof(T), 0, dst, sst, 0,  \
                                            nullptr, "gshmem_" #N "_alltoalls");))                             \
  }                                                                                                            \
  GSHMEMI_HOST_INLINE int gshmemx_##N##_broadcast_on_stream(gshmem_team_t team, T* d, const T* s, size_t n, \
                                                              int root, cudaStream_t st) {                     \
    return gshmemi_collective(GSHMEMI_COLL_BROADCAST, team, d, s, n, sizeof(T), root, 1, 1, 1, st,              \
                              "gshmemx_" #N "_broadcast_on_stream");                                           \
  }                                                                                                            \
  GSHMEMI_HOST_INLINE int gshmemx_##N##_fcollect_on_stream(gshmem_team_t team, T* d, const T* s, size_t n,  \
                                                             cudaStream_t st) {                                \
    return gshmemi_collective(GSHMEMI_COLL_FCOLLECT, team, d, s, n, sizeof(T), 0, 1, 1, 1, st,                 \
                              "gshmemx_" #N "_fcollect_on_stream");                                            \
  }                                                                                                            \
  GSHMEMI_HOST_INLINE int gshmemx_##N##_alltoall_on_stream(gshmem_team_t team, T* d, const T* s, size_t n,  \
                                                             cudaStream_t st) {                                \
    return gshmemi_collective(GSHMEMI_COLL_ALLTOALL, team, d, s, n, sizeof(T), 0, 1, 1, 1, st,                 \
                              "gshmemx_" #N "_alltoall_on_stream");                                            \
  }                                                                                                            \
  GSHMEM_REDUCE_ARITH_OPS(GSHMEMI_HALF_REDUCE, T, N)
// The library's type code of T (gshmemi_reduction).
template <typename T>
__host__ __device__ constexpr int gshmemi_float16_code();
template <>
__host__ __device__ constexpr int gshmemi_float16_code<__half>() { return GSHMEMI_REDUCE_HALF; }
template <>
__host__ __device__ constexpr int gshmemi_float16_code<__nv_bfloat16>() { return GSHMEMI_REDUCE_BFLOAT16; }
#define GSHMEMI_F16_OP(O, T) static_cast<int>(gshmem::coll::ReduceOp::O), gshmemi_float16_code<T>()
#define GSHMEMI_HALF_REDUCE(T, N, OP, O)                                                                       \
  GSHMEMI_HD int gshmem_##N##_##OP##_reduce(gshmem_team_t team, T* d, const T* s, size_t n) {                 \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (return gshmem::dev::reduce<gshmem::dev::Thread, gshmem::coll::ReduceOp::O>(                  \
                      GSHMEMI_S(""), team, d, s, n, "gshmem_" #N "_" #OP "_reduce");),                         \
                 (return gshmemi_reduction(GSHMEMI_F16_OP(O, T), 0, team, d, s, n, 0, \
                                           nullptr, "gshmem_" #N "_" #OP "_reduce");))                         \
  }                                                                                                            \
  GSHMEMI_HD int gshmem_##N##_##OP##_reducescatter(gshmem_team_t team, T* d, const T* s, size_t n) {          \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                 \
                 (return gshmem::dev::reducescatter<gshmem::dev::Thread, gshmem::coll::ReduceOp::O>(           \
                      GSHMEMI_S(""), team, d, s, n, "gshmem_" #N "_" #OP "_reducescatter");),                  \
                 (return gshmemi_reduction(GSHMEMI_F16_OP(O, T), 1, team, d, s, n, 0, \
                                           nullptr, "gshmem_" #N "_" #OP "_reducescatter");))                  \
  }                                                                                                            \
  GSHMEMI_HOST_INLINE int gshmemx_##N##_##OP##_reduce_on_stream(gshmem_team_t team, T* d, const T* s,       \
                                                                  size_t n, cudaStream_t st) {                 \
    return gshmemi_reduction(GSHMEMI_F16_OP(O, T), 0, team, d, s, n, 1, st,   \
                             "gshmemx_" #N "_" #OP "_reduce_on_stream");                                       \
  }                                                                                                            \
  GSHMEMI_HOST_INLINE int gshmemx_##N##_##OP##_reducescatter_on_stream(gshmem_team_t team, T* d, const T* s, \
                                                                         size_t n, cudaStream_t st) {          \
    return gshmemi_reduction(GSHMEMI_F16_OP(O, T), 1, team, d, s, n, 1, st,   \
                             "gshmemx_" #N "_" #OP "_reducescatter_on_stream");                                \
  }
GSHMEM_HALF_RMA_TYPES(GSHMEMI_HALF_COLL)
#undef GSHMEMI_HALF_COLL
#undef GSHMEMI_HALF_REDUCE
#undef GSHMEMI_F16_OP
#undef GSHMEMI_HD
#undef GSHMEMI_DEVX_RMA_SCOPED

#undef GSHMEMI_DEVX
#undef GSHMEMI_S
#undef GSHMEMI_Q
