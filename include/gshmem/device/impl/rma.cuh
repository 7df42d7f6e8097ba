// gshmem device API, implementation: queries, RMA and signals (native API, state from a DeviceHandle).
#pragma once
#include "gshmem/device/impl/common.cuh"

namespace gshmem {
namespace dev {

__device__ __forceinline__ int my_pe(const DeviceHandle& h) { return h.my_pe; }
__device__ __forceinline__ int n_pes(const DeviceHandle& h) { return h.n_pes; }

template <typename T>
__device__ __forceinline__ T* ptr(const DeviceHandle& h, T* p, int pe) {
  const uint64_t off = static_cast<uint64_t>(reinterpret_cast<const char*>(p) - h.heap_base);
  if (pe < 0 || pe >= h.n_pes || off >= h.heap_max || h.peer_bases[pe] == nullptr) return nullptr;
  return detail::peer(h, p, pe);
}

template <typename T>
__device__ __forceinline__ void p(const DeviceHandle& h, T* dst, T value, int pe) {
  *detail::peer(h, dst, pe) = value;
}

template <typename T>
__device__ __forceinline__ T g(const DeviceHandle& h, const T* src, int pe) {
  return *detail::peer(h, src, pe);
}

template <typename Coop>
__device__ __forceinline__ void putmem(const DeviceHandle& h, void* dst, const void* src, size_t bytes, int pe) {
  Coop::sync();  // the group's writes to src (e.g. shared memory) are done before anyone copies them
  detail::copy<Coop>(detail::peer(h, dst, pe), src, bytes);
  Coop::sync();
}

template <typename Coop>
__device__ __forceinline__ void getmem(const DeviceHandle& h, void* dst, const void* src, size_t bytes, int pe) {
  Coop::sync();  // the group is done reading dst before it is overwritten
  detail::copy<Coop>(dst, detail::peer(h, src, pe), bytes);
  Coop::sync();
}

// Non-blocking forms: on NVLink peers a store is complete once issued; quiet() makes them visible at the target.
// Like NVSHMEM's, the group synchronises before and after, so one thread may fence and signal right after the
// call and the signal still follows every thread's data.
template <typename Coop>
__device__ __forceinline__ void putmem_nbi(const DeviceHandle& h, void* dst, const void* src, size_t bytes, int pe) {
  Coop::sync();
  detail::copy<Coop>(detail::peer(h, dst, pe), src, bytes);
  Coop::sync();
}

template <typename Coop>
__device__ __forceinline__ void getmem_nbi(const DeviceHandle& h, void* dst, const void* src, size_t bytes, int pe) {
  Coop::sync();
  detail::copy<Coop>(dst, detail::peer(h, src, pe), bytes);
  Coop::sync();
}

template <typename Coop, typename T>
__device__ __forceinline__ void put(const DeviceHandle& h, T* dst, const T* src, size_t n, int pe) {
  putmem<Coop>(h, dst, src, n * sizeof(T), pe);
}
template <typename Coop, typename T>
__device__ __forceinline__ void get(const DeviceHandle& h, T* dst, const T* src, size_t n, int pe) {
  getmem<Coop>(h, dst, src, n * sizeof(T), pe);
}
template <typename Coop, typename T>
__device__ __forceinline__ void put_nbi(const DeviceHandle& h, T* dst, const T* src, size_t n, int pe) {
  putmem_nbi<Coop>(h, dst, src, n * sizeof(T), pe);
}
template <typename Coop, typename T>
__device__ __forceinline__ void get_nbi(const DeviceHandle& h, T* dst, const T* src, size_t n, int pe) {
  getmem_nbi<Coop>(h, dst, src, n * sizeof(T), pe);
}

// Strided forms (OpenSHMEM iput/iget): element i goes from src[i * src_stride] to dst[i * dst_stride]; strides
// are in elements and may be any non-zero value. The group's threads split the elements.
template <typename Coop, typename T>
__device__ __forceinline__ void iput(const DeviceHandle& h, T* dst, const T* src, ptrdiff_t dst_stride,
                                     ptrdiff_t src_stride, size_t n, int pe) {
  Coop::sync();
  T* d = detail::peer(h, dst, pe);
  for (size_t i = static_cast<size_t>(Coop::rank()); i < n; i += static_cast<size_t>(Coop::size()))
    d[static_cast<ptrdiff_t>(i) * dst_stride] = src[static_cast<ptrdiff_t>(i) * src_stride];
  Coop::sync();
}
template <typename Coop, typename T>
__device__ __forceinline__ void iget(const DeviceHandle& h, T* dst, const T* src, ptrdiff_t dst_stride,
                                     ptrdiff_t src_stride, size_t n, int pe) {
  Coop::sync();
  const T* s = detail::peer(h, src, pe);
  for (size_t i = static_cast<size_t>(Coop::rank()); i < n; i += static_cast<size_t>(Coop::size()))
    dst[static_cast<ptrdiff_t>(i) * dst_stride] = s[static_cast<ptrdiff_t>(i) * src_stride];
  Coop::sync();
}

// ---- signals ----

// Signal updates. Two orders: put_signal's update is a system-scope release (every write the thread made before,
// and through a group barrier its group's, is visible at the target before the signal is); signal_op's is relaxed,
// as NVSHMEM's is (its documentation orders a put before a signal_op with quiet): a release costs a system-scope
// fence, ~0.9 us per call on H200, where a relaxed store pipelines at ~0.005-0.03 us (bench row signal_set and
// bench/experiments/flag_probe.cu, NOTES 71).
namespace detail {
[[noreturn]] __device__ __noinline__ inline void trap_signal_op(int op, int pe) {
  printf("gshmem: signal operation on PE %d: sig_op=%d is neither GSHMEM_SIGNAL_SET (%d) nor GSHMEM_SIGNAL_ADD (%d); "
         "aborting the kernel. Fix: pass one of those constants\n", pe, op, GSHMEM_SIGNAL_SET, GSHMEM_SIGNAL_ADD);
  __trap();
}
// The signal update on an already translated address (target: PE pe's copy of the signal word): with release order
// (put_signal) or relaxed, atomic at system scope and ordered after nothing (signal_op, fire-and-forget like the other
// non-fetching AMOs).
template <bool Release>
__device__ __forceinline__ void signal_store(uint64_t* target, uint64_t value, int op, int pe) {
  // .global: with a generic address the add would wait for its reply (a software fallback for shared memory).
  if (op == GSHMEM_SIGNAL_ADD) {
    if constexpr (Release)
      asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(gaddr(target)), "l"(value) : "memory");
    else
      asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(gaddr(target)), "l"(value) : "memory");
  } else if (op == GSHMEM_SIGNAL_SET) {
    if constexpr (Release)
      asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(gaddr(target)), "l"(value) : "memory");
    else
      asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(gaddr(target)), "l"(value) : "memory");
  } else {
    trap_signal_op(op, pe);
  }
}
}  // namespace detail

// SIGNAL_SET or SIGNAL_ADD on PE pe's signal word: relaxed (see above). Data written before it needs fence() or
// quiet() in between, or put_signal, to be visible before the signal.
__device__ __forceinline__ void signal_op(const DeviceHandle& h, uint64_t* sig, uint64_t value, int op, int pe) {
  detail::signal_store<false>(detail::peer(h, sig, pe), value, op, pe);
}

__device__ __forceinline__ uint64_t signal_fetch(const DeviceHandle&, const uint64_t* sig) {
  return detail::load_acquire(sig);
}

// Waits until this PE's *sig satisfies (cmp, value); returns the value seen. Bounded (GSHMEM_WAIT_TIMEOUT).
__device__ __forceinline__ uint64_t signal_wait_until(const DeviceHandle& h, const uint64_t* sig, int cmp,
                                                      uint64_t value) {
  uint64_t v = detail::load_acquire(sig);
  if (detail::compare(v, cmp, value)) return v;
  detail::Spin spin(h);
  while (!detail::compare(v = detail::load_acquire(sig), cmp, value))
    if (spin.expired()) detail::trap_timeout(h, "gshmem_signal_wait_until", sig, "a signal value");
  return v;
}

// Data then signal: the group synchronises after its stores, and one thread then updates the signal with a
// release at system scope, which orders every store of the group before it (cumulativity through the group
// barrier), so the signal is never visible before the data. One fence in all: a system-scope fence costs ~0.6 us
// however few stores are outstanding (bench/NOTES.md), so fencing in every thread was 1.2 us slower.
template <typename Coop>
__device__ __forceinline__ void putmem_signal_nbi(const DeviceHandle& h, void* dst, const void* src, size_t bytes,
                                                  uint64_t* sig, uint64_t value, int op, int pe) {
  Coop::sync();
  detail::copy<Coop>(detail::peer(h, dst, pe), src, bytes);
  Coop::sync();
  if (Coop::rank() == 0) detail::signal_store<true>(detail::peer(h, sig, pe), value, op, pe);
  // The group synchronises on return, as NVSHMEM's does: a thread that fences and stores after the call must find
  // the signal already issued (removing this barrier measured no gain: bench/NOTES.md, entry 4).
  Coop::sync();
}

template <typename Coop>
__device__ __forceinline__ void putmem_signal(const DeviceHandle& h, void* dst, const void* src, size_t bytes,
                                              uint64_t* sig, uint64_t value, int op, int pe) {
  putmem_signal_nbi<Coop>(h, dst, src, bytes, sig, value, op, pe);
}

template <typename Coop, typename T>
__device__ __forceinline__ void put_signal(const DeviceHandle& h, T* dst, const T* src, size_t n, uint64_t* sig,
                                           uint64_t value, int op, int pe) {
  putmem_signal<Coop>(h, dst, src, n * sizeof(T), sig, value, op, pe);
}
template <typename Coop, typename T>
__device__ __forceinline__ void put_signal_nbi(const DeviceHandle& h, T* dst, const T* src, size_t n, uint64_t* sig,
                                               uint64_t value, int op, int pe) {
  putmem_signal_nbi<Coop>(h, dst, src, n * sizeof(T), sig, value, op, pe);
}

}  // namespace dev
}  // namespace gshmem
