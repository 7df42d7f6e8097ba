// gshmem device API, implementation: point-to-point waits, quiet/fence, and team barriers in device code.
#pragma once
#include "gshmem/device/impl/common.cuh"

namespace gshmem {
namespace dev {

template <typename T>
__device__ __forceinline__ void wait_until(const DeviceHandle& h, const T* ivar, int cmp, T value) {
  if (detail::compare(detail::load_acquire(ivar), cmp, value)) return;
  detail::Spin spin(h);
  while (!detail::compare(detail::load_acquire(ivar), cmp, value))
    if (spin.expired()) detail::trap_timeout(h, "gshmem_wait_until", ivar, "a symmetric variable");
}

template <typename T>
__device__ __forceinline__ int test(const DeviceHandle&, const T* ivar, int cmp, T value) {
  return detail::compare(detail::load_acquire(ivar), cmp, value) ? 1 : 0;
}

// ---- wait_until_{all,any,some}[_vector] and test_{all,any,some}[_vector] (OpenSHMEM 1.5, NVSHMEM) ----
// ivars[0..n) on this PE; status may be NULL, else status[i] != 0 excludes ivars[i]. The scalar forms compare every
// element with one value, the _vector forms ivars[i] with values[i]. Each element is read with an acquire load.
//   wait_until_all: returns once every included element has satisfied the comparison (at once if none included).
//   wait_until_any: returns the index of an included element that satisfies it (the lowest seen), or SIZE_MAX at
//                   once if none is included.
//   wait_until_some: waits until at least one included element satisfies it, writes the indices of all included
//                    elements that satisfy it (ascending) to indices[] and returns their count (0 if none included).
//   test_all: 1 if every included element satisfies it now (1 if none included), else 0.
//   test_any: index of the lowest included element that satisfies it now, or SIZE_MAX.
//   test_some: as wait_until_some without waiting (may return 0).
// Called by one thread; every wait is bounded by GSHMEM_WAIT_TIMEOUT.
namespace detail {

template <typename T>
struct OneValue {
  T v;
  __device__ __forceinline__ T operator[](size_t) const { return v; }
};
template <typename T>
struct PerElement {
  const T* v;
  __device__ __forceinline__ T operator[](size_t i) const { return v[i]; }
};

__device__ __forceinline__ bool included(const int* status, size_t i) { return status == nullptr || status[i] == 0; }

template <typename T, typename V>
__device__ __forceinline__ bool satisfied(const T* ivars, size_t i, int cmp, const V& values) {
  return compare(load_acquire(&ivars[i]), cmp, values[i]);
}

template <typename T, typename V>
__device__ __forceinline__ int test_all(const T* ivars, size_t n, const int* status, int cmp, const V& values) {
  for (size_t i = 0; i < n; ++i)
    if (included(status, i) && !satisfied(ivars, i, cmp, values)) return 0;
  return 1;
}

template <typename T, typename V>
__device__ __forceinline__ size_t test_any(const T* ivars, size_t n, const int* status, int cmp, const V& values) {
  for (size_t i = 0; i < n; ++i)
    if (included(status, i) && satisfied(ivars, i, cmp, values)) return i;
  return SIZE_MAX;
}

template <typename T, typename V>
__device__ __forceinline__ size_t test_some(const T* ivars, size_t n, size_t* indices, const int* status, int cmp,
                                            const V& values) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i)
    if (included(status, i) && satisfied(ivars, i, cmp, values)) indices[count++] = i;
  return count;
}

__device__ __forceinline__ bool any_included(size_t n, const int* status) {
  for (size_t i = 0; i < n; ++i)
    if (included(status, i)) return true;
  return false;
}

template <typename T, typename V>
__device__ __noinline__ void wait_until_all(const DeviceHandle& h, const T* ivars, size_t n, const int* status,
                                            int cmp, V values, const char* call) {
  Spin spin(h);
  for (size_t i = 0; i < n; ++i) {
    if (!included(status, i)) continue;
    while (!satisfied(ivars, i, cmp, values))
      if (spin.expired()) trap_timeout(h, call, &ivars[i], "every included element of the ivars array");
  }
}

template <typename T, typename V>
__device__ __noinline__ size_t wait_until_any(const DeviceHandle& h, const T* ivars, size_t n, const int* status,
                                              int cmp, V values, const char* call) {
  if (!any_included(n, status)) return SIZE_MAX;
  Spin spin(h);
  for (;;) {
    const size_t i = test_any(ivars, n, status, cmp, values);
    if (i != SIZE_MAX) return i;
    if (spin.expired()) trap_timeout(h, call, ivars, "any included element of the ivars array");
  }
}

template <typename T, typename V>
__device__ __noinline__ size_t wait_until_some(const DeviceHandle& h, const T* ivars, size_t n, size_t* indices,
                                               const int* status, int cmp, V values, const char* call) {
  if (!any_included(n, status)) return 0;
  Spin spin(h);
  for (;;) {
    const size_t c = test_some(ivars, n, indices, status, cmp, values);
    if (c != 0) return c;
    if (spin.expired()) trap_timeout(h, call, ivars, "some included element of the ivars array");
  }
}

}  // namespace detail

template <typename T>
__device__ __forceinline__ void wait_until_all(const DeviceHandle& h, const T* ivars, size_t n, const int* status,
                                               int cmp, T value) {
  detail::wait_until_all(h, ivars, n, status, cmp, detail::OneValue<T>{value}, "gshmem_wait_until_all");
}
template <typename T>
__device__ __forceinline__ size_t wait_until_any(const DeviceHandle& h, const T* ivars, size_t n, const int* status,
                                                 int cmp, T value) {
  return detail::wait_until_any(h, ivars, n, status, cmp, detail::OneValue<T>{value}, "gshmem_wait_until_any");
}
template <typename T>
__device__ __forceinline__ size_t wait_until_some(const DeviceHandle& h, const T* ivars, size_t n, size_t* indices,
                                                  const int* status, int cmp, T value) {
  return detail::wait_until_some(h, ivars, n, indices, status, cmp, detail::OneValue<T>{value},
                                 "gshmem_wait_until_some");
}
template <typename T>
__device__ __forceinline__ void wait_until_all_vector(const DeviceHandle& h, const T* ivars, size_t n,
                                                      const int* status, int cmp, const T* values) {
  detail::wait_until_all(h, ivars, n, status, cmp, detail::PerElement<T>{values}, "gshmem_wait_until_all_vector");
}
template <typename T>
__device__ __forceinline__ size_t wait_until_any_vector(const DeviceHandle& h, const T* ivars, size_t n,
                                                        const int* status, int cmp, const T* values) {
  return detail::wait_until_any(h, ivars, n, status, cmp, detail::PerElement<T>{values},
                                "gshmem_wait_until_any_vector");
}
template <typename T>
__device__ __forceinline__ size_t wait_until_some_vector(const DeviceHandle& h, const T* ivars, size_t n,
                                                         size_t* indices, const int* status, int cmp,
                                                         const T* values) {
  return detail::wait_until_some(h, ivars, n, indices, status, cmp, detail::PerElement<T>{values},
                                 "gshmem_wait_until_some_vector");
}
template <typename T>
__device__ __forceinline__ int test_all(const DeviceHandle&, const T* ivars, size_t n, const int* status, int cmp,
                                        T value) {
  return detail::test_all(ivars, n, status, cmp, detail::OneValue<T>{value});
}
template <typename T>
__device__ __forceinline__ size_t test_any(const DeviceHandle&, const T* ivars, size_t n, const int* status,
                                           int cmp, T value) {
  return detail::test_any(ivars, n, status, cmp, detail::OneValue<T>{value});
}
template <typename T>
__device__ __forceinline__ size_t test_some(const DeviceHandle&, const T* ivars, size_t n, size_t* indices,
                                            const int* status, int cmp, T value) {
  return detail::test_some(ivars, n, indices, status, cmp, detail::OneValue<T>{value});
}
template <typename T>
__device__ __forceinline__ int test_all_vector(const DeviceHandle&, const T* ivars, size_t n, const int* status,
                                               int cmp, const T* values) {
  return detail::test_all(ivars, n, status, cmp, detail::PerElement<T>{values});
}
template <typename T>
__device__ __forceinline__ size_t test_any_vector(const DeviceHandle&, const T* ivars, size_t n, const int* status,
                                                  int cmp, const T* values) {
  return detail::test_any(ivars, n, status, cmp, detail::PerElement<T>{values});
}
template <typename T>
__device__ __forceinline__ size_t test_some_vector(const DeviceHandle&, const T* ivars, size_t n, size_t* indices,
                                                   const int* status, int cmp, const T* values) {
  return detail::test_some(ivars, n, indices, status, cmp, detail::PerElement<T>{values});
}

// quiet: every put/AMO this thread issued is complete and visible at its target. fence: ordered per target
// (on NVLink loads/stores the same system-scope fence gives both).
__device__ __forceinline__ void quiet() { asm volatile("fence.sc.sys;" ::: "memory"); }
__device__ __forceinline__ void fence() { asm volatile("fence.sc.sys;" ::: "memory"); }

namespace detail {

// Dissemination barrier over team slot `team` by one thread of this PE: in round k, signal the member 2^k ahead
// (store of this barrier's epoch, release) and wait for the member 2^k behind (acquire). Epochs only grow, so a
// fast peer's later epoch also satisfies the wait. One caller per PE and team at a time.
__device__ __noinline__ inline void team_sync_one(const DeviceHandle& h, int team, const char* call) {
  if (h.version != GSHMEM_DEVICE_STATE_VERSION) trap_not_published(call);
  if (team < 0 || team >= GSHMEM_DEVICE_MAX_TEAMS || h.teams[team].size <= 0 || h.teams[team].my_rank < 0) {
    printf("gshmem: %s on PE %d: team %d is not a valid team this PE belongs to; aborting the kernel. Fix: pass "
           "GSHMEM_TEAM_WORLD or a team from gshmem_team_split_* that includes this PE (and launch after the "
           "split returned)\n", call, h.my_pe, team);
    __trap();
  }
  const gshmem_device_team_t t = h.teams[team];
  if (t.size == 1) return;
  const uint64_t epoch = ++h.barrier_epochs[team];
  uint64_t* mine = reinterpret_cast<uint64_t*>(h.heap_base + h.barrier_offset) + team * GSHMEM_DEVICE_MAX_ROUNDS;
  for (int k = 0; (1LL << k) < t.size; ++k) {
    const int dist = static_cast<int>((1LL << k) % t.size);
    const int to = t.start + ((t.my_rank + dist) % t.size) * t.stride;
    uint64_t* theirs = reinterpret_cast<uint64_t*>(h.peer_bases[to] + h.barrier_offset) +
                       team * GSHMEM_DEVICE_MAX_ROUNDS;
    sys_ref<uint64_t>(theirs[k]).store(epoch, ::cuda::memory_order_release);
    if (load_acquire(&mine[k]) >= epoch) continue;
    Spin spin(h);
    while (load_acquire(&mine[k]) < epoch)
      if (spin.expired()) trap_timeout(h, call, &mine[k], "a team member to reach the barrier");
  }
}

}  // namespace detail

// Team barrier: quiet, then synchronise the team. sync: synchronise only (no completion of earlier puts is
// promised beyond what the flags' release/acquire order gives). Called by one thread / warp / block per PE.
template <typename Coop>
__device__ __forceinline__ void team_sync(const DeviceHandle& h, gshmem_team_t team) {
  Coop::sync();
  if (Coop::rank() == 0) detail::team_sync_one(h, team, "gshmem_team_sync");
  Coop::sync();
}
template <typename Coop>
__device__ __forceinline__ void barrier(const DeviceHandle& h, gshmem_team_t team) {
  quiet();
  Coop::sync();
  if (Coop::rank() == 0) detail::team_sync_one(h, team, "gshmem_barrier");
  Coop::sync();
}
template <typename Coop>
__device__ __forceinline__ void barrier_all(const DeviceHandle& h) {
  quiet();
  Coop::sync();
  if (Coop::rank() == 0) detail::team_sync_one(h, GSHMEM_TEAM_WORLD, "gshmem_barrier_all");
  Coop::sync();
}
template <typename Coop>
__device__ __forceinline__ void sync_all(const DeviceHandle& h) {
  Coop::sync();
  if (Coop::rank() == 0) detail::team_sync_one(h, GSHMEM_TEAM_WORLD, "gshmem_sync_all");
  Coop::sync();
}

}  // namespace dev
}  // namespace gshmem
