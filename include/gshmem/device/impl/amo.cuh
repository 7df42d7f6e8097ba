// gshmem device API, implementation: atomics on any PE's symmetric word (32- and 64-bit), system scope.
// OpenSHMEM AMOs order nothing by themselves (relaxed); fence/quiet order them with other operations.
//
// Every AMO names the .global state space (the symmetric heap is global memory on every PE). With a generic
// address the compiler cannot rule out shared or local memory, so an atomic becomes ATOM plus a software fallback
// whose branch waits for the atomic's reply: a thread's fetch_adds then run one round trip each (0.88 us on
// NVLink) even when their results are not needed yet, and a non-fetching add (RED) waits as if it fetched. With
// .global they are ATOMG / REDG: a thread's independent AMOs overlap (0.17 us apart) and adds are fire-and-forget
// (bench/NOTES.md, entry 8).
#pragma once
#if !defined(__CUDACC_RTC__) /* NVRTC: no C library headers (gshmem.h has the types) */
#include <string.h>
#endif

#include "gshmem/device/impl/common.cuh"

namespace gshmem {
namespace dev {
namespace detail {

// The 32- or 64-bit word an AMO operand travels in (every AMO type is 4 or 8 bytes: integers, float, double).
template <typename T>
using amo_word = typename ::cuda::std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
template <typename T>
__device__ __forceinline__ amo_word<T> to_word(T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "gshmem AMOs take 4- or 8-byte types");
  amo_word<T> w;
  memcpy(&w, &v, sizeof w);
  return w;
}
template <typename T>
__device__ __forceinline__ T from_word(amo_word<T> w) {
  T v;
  memcpy(&v, &w, sizeof v);
  return v;
}

// Fetching AMO: atom.relaxed.sys.global.<OP>.<b32|b64|u32|u64>
#define GSHMEMI_ATOM_FETCH(NAME, OP, T32, T64)                                                                 \
  template <typename T>                                                                                        \
  __device__ __forceinline__ T NAME(T* p, T v) {                                                               \
    amo_word<T> r;                                                                                             \
    if constexpr (sizeof(T) == 4)                                                                              \
      asm volatile("atom.relaxed.sys.global." OP "." T32 " %0, [%1], %2;"                                    \
                   : "=r"(r) : "l"(gaddr(p)), "r"(to_word(v)) : "memory");                                     \
    else                                                                                                       \
      asm volatile("atom.relaxed.sys.global." OP "." T64 " %0, [%1], %2;"                                    \
                   : "=l"(r) : "l"(gaddr(p)), "l"(to_word(v)) : "memory");                                     \
    return from_word<T>(r);                                                                                    \
  }
// Non-fetching AMO: red.relaxed.sys.global.<OP>.<type> (nothing comes back, so nothing waits for the reply)
#define GSHMEMI_RED(NAME, OP, T32, T64)                                                                        \
  template <typename T>                                                                                        \
  __device__ __forceinline__ void NAME(T* p, T v) {                                                            \
    if constexpr (sizeof(T) == 4)                                                                              \
      asm volatile("red.relaxed.sys.global." OP "." T32 " [%0], %1;" ::"l"(gaddr(p)), "r"(to_word(v))         \
                   : "memory");                                                                                \
    else                                                                                                       \
      asm volatile("red.relaxed.sys.global." OP "." T64 " [%0], %1;" ::"l"(gaddr(p)), "l"(to_word(v))         \
                   : "memory");                                                                                \
  }
GSHMEMI_ATOM_FETCH(g_fetch_add, "add", "u32", "u64")
GSHMEMI_ATOM_FETCH(g_swap, "exch", "b32", "b64")
GSHMEMI_ATOM_FETCH(g_fetch_and, "and", "b32", "b64")
GSHMEMI_ATOM_FETCH(g_fetch_or, "or", "b32", "b64")
GSHMEMI_ATOM_FETCH(g_fetch_xor, "xor", "b32", "b64")
GSHMEMI_RED(g_add, "add", "u32", "u64")
GSHMEMI_RED(g_and, "and", "b32", "b64")
GSHMEMI_RED(g_or, "or", "b32", "b64")
GSHMEMI_RED(g_xor, "xor", "b32", "b64")
#undef GSHMEMI_ATOM_FETCH
#undef GSHMEMI_RED

template <typename T>
__device__ __forceinline__ T g_compare_swap(T* p, T cond, T v) {
  amo_word<T> r;
  if constexpr (sizeof(T) == 4)
    asm volatile("atom.relaxed.sys.global.cas.b32 %0, [%1], %2, %3;"
                 : "=r"(r) : "l"(gaddr(p)), "r"(to_word(cond)), "r"(to_word(v)) : "memory");
  else
    asm volatile("atom.relaxed.sys.global.cas.b64 %0, [%1], %2, %3;"
                 : "=l"(r) : "l"(gaddr(p)), "l"(to_word(cond)), "l"(to_word(v)) : "memory");
  return from_word<T>(r);
}
template <typename T>
__device__ __forceinline__ T g_load(const T* p) {
  amo_word<T> r;
  if constexpr (sizeof(T) == 4)
    asm volatile("ld.relaxed.sys.global.b32 %0, [%1];" : "=r"(r) : "l"(gaddr(p)) : "memory");
  else
    asm volatile("ld.relaxed.sys.global.b64 %0, [%1];" : "=l"(r) : "l"(gaddr(p)) : "memory");
  return from_word<T>(r);
}
template <typename T>
__device__ __forceinline__ void g_store(T* p, T v) {
  if constexpr (sizeof(T) == 4)
    asm volatile("st.relaxed.sys.global.b32 [%0], %1;" ::"l"(gaddr(p)), "r"(to_word(v)) : "memory");
  else
    asm volatile("st.relaxed.sys.global.b64 [%0], %1;" ::"l"(gaddr(p)), "l"(to_word(v)) : "memory");
}

}  // namespace detail

template <typename T>
__device__ __forceinline__ T atomic_fetch(const DeviceHandle& h, const T* src, int pe) {
  return detail::g_load(detail::peer(h, src, pe));
}
template <typename T>
__device__ __forceinline__ void atomic_set(const DeviceHandle& h, T* dst, T v, int pe) {
  detail::g_store(detail::peer(h, dst, pe), v);
}
template <typename T>
__device__ __forceinline__ T atomic_swap(const DeviceHandle& h, T* dst, T v, int pe) {
  return detail::g_swap(detail::peer(h, dst, pe), v);
}
template <typename T>
__device__ __forceinline__ T atomic_compare_swap(const DeviceHandle& h, T* dst, T cond, T v, int pe) {
  return detail::g_compare_swap(detail::peer(h, dst, pe), cond, v);  // the old value either way
}
template <typename T>
__device__ __forceinline__ T atomic_fetch_add(const DeviceHandle& h, T* dst, T v, int pe) {
  return detail::g_fetch_add(detail::peer(h, dst, pe), v);
}
template <typename T>
__device__ __forceinline__ void atomic_add(const DeviceHandle& h, T* dst, T v, int pe) {
  detail::g_add(detail::peer(h, dst, pe), v);
}
template <typename T>
__device__ __forceinline__ T atomic_fetch_inc(const DeviceHandle& h, T* dst, int pe) {
  return detail::g_fetch_add(detail::peer(h, dst, pe), T(1));
}
template <typename T>
__device__ __forceinline__ void atomic_inc(const DeviceHandle& h, T* dst, int pe) {
  detail::g_add(detail::peer(h, dst, pe), T(1));
}
template <typename T>
__device__ __forceinline__ T atomic_fetch_and(const DeviceHandle& h, T* dst, T v, int pe) {
  return detail::g_fetch_and(detail::peer(h, dst, pe), v);
}
template <typename T>
__device__ __forceinline__ void atomic_and(const DeviceHandle& h, T* dst, T v, int pe) {
  detail::g_and(detail::peer(h, dst, pe), v);
}
template <typename T>
__device__ __forceinline__ T atomic_fetch_or(const DeviceHandle& h, T* dst, T v, int pe) {
  return detail::g_fetch_or(detail::peer(h, dst, pe), v);
}
template <typename T>
__device__ __forceinline__ void atomic_or(const DeviceHandle& h, T* dst, T v, int pe) {
  detail::g_or(detail::peer(h, dst, pe), v);
}
template <typename T>
__device__ __forceinline__ T atomic_fetch_xor(const DeviceHandle& h, T* dst, T v, int pe) {
  return detail::g_fetch_xor(detail::peer(h, dst, pe), v);
}
template <typename T>
__device__ __forceinline__ void atomic_xor(const DeviceHandle& h, T* dst, T v, int pe) {
  detail::g_xor(detail::peer(h, dst, pe), v);
}

}  // namespace dev
}  // namespace gshmem
