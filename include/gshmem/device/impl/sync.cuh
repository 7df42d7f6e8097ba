// gshmem device API, implementation: point-to-point waits, quiet/fence, and team barriers in device code.
#pragma once
#include "gshmem/device/impl/common.cuh"
#include "gshmem/team_value.h"

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

// ---- team barrier / sync ----
// barrier: one release (fence.acq_rel.sys, which completes every earlier put/AMO of the group: quiet's guarantee)
// followed by flag stores, and acquire loads of the flags the other members wrote. A system-scope fence costs
// ~0.6 us on H200 whether or not anything is outstanding (bench/NOTES.md, nvlink_probe), so the barrier issues
// exactly one, from the thread that then writes every flag (a release needs fence and store in the same thread;
// the group's earlier writes are covered through the group barrier before it).
// sync: OpenSHMEM's sync completes the caller's earlier *local* stores only (not its puts/AMOs, which take quiet
// or barrier), so its fence is GPU-scoped (fence.acq_rel.gpu, ~0.14 us): the group's stores to this GPU's memory
// reach its L2, which is where a peer's NVLink loads of that memory are served, before any flag leaves. The PTX
// memory model alone does not promise this across GPUs (a GPU-scope fence is not morally strong with a peer's
// system-scope acquire); it rests on that hardware fact, as NVSHMEM's sync (no fence at all) does. quiet + sync
// still orders puts: quiet's fence.sc.sys completes them first, called by every thread that put (quiet is per
// thread: one thread's quiet does not complete the others' puts).
//   flat (team size <= GSHMEM_DEVICE_MAX_ROUNDS): member r writes its epoch into flag [r] of every other member
//     and waits for flags [0, size) of its own (warp/block: lanes poll in parallel). One flight, one fence.
//   dissemination (larger teams): round k writes flag [k] of the member 2^k ahead (barrier: a release store;
//     sync: GPU fence + relaxed store) and waits
//     for its own flag [k].
// Epochs only grow (per team slot, in this PE's heap), so a fast member's later epoch also satisfies a wait.
// One barrier per PE and team at a time.
namespace detail {

__device__ __forceinline__ void fence_acq_rel_sys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
__device__ __forceinline__ void store_relaxed_sys(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void store_release_sys(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

[[noreturn]] __device__ __noinline__ inline void trap_bad_team(const DeviceHandle& h, int team, const char* call) {
  printf("gshmem: %s on PE %d: team %d is not a valid team this PE belongs to; aborting the kernel. Fix: pass "
         "GSHMEM_TEAM_WORLD or a team from gshmem_team_split_* that includes this PE (and launch after the "
         "split returned)\n", call, h.my_pe, team);
  __trap();
}

__device__ __forceinline__ gshmem_device_team_t load_team(const DeviceHandle& h, int team, const char* call) {
  if (h.version != GSHMEM_DEVICE_STATE_VERSION) trap_not_published(call);
  if (team == GSHMEM_TEAM_WORLD) return gshmem_device_team_t{0, 1, h.n_pes, h.my_pe};  // no table load
  if (team < 0 || team >= GSHMEM_DEVICE_MAX_TEAMS) trap_bad_team(h, team, call);
  const gshmem_device_team_t t = h.teams[team];
  if (t.size <= 0 || t.my_rank < 0) trap_bad_team(h, team, call);
  return t;
}

// Flag word `index` of team slot `team` in the heap that starts at `base`.
__device__ __forceinline__ uint64_t* barrier_flag(const DeviceHandle& h, char* base, int team, int index) {
  return reinterpret_cast<uint64_t*>(base + h.barrier_offset) + team * GSHMEM_DEVICE_MAX_ROUNDS + index;
}

__device__ __forceinline__ void wait_flag(const DeviceHandle& h, const uint64_t* f, uint64_t epoch,
                                          const char* call) {
  if (load_acquire(f) >= epoch) return;
  Spin spin(h);
  while (load_acquire(f) < epoch)
    if (spin.expired()) trap_timeout(h, call, f, "a team member to reach the barrier");
}

__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
// The arrival fence: system scope for a barrier, GPU scope for a sync (above).
template <bool Barrier>
__device__ __forceinline__ void arrival_fence() {
  if constexpr (Barrier) fence_acq_rel_sys();
  else fence_acq_rel_gpu();
}

// Fence, then this PE's flag in every other member (flat) — by one thread.
template <bool Barrier>
__device__ __forceinline__ void flat_arrive(const DeviceHandle& h, const gshmem_device_team_t& t, int team,
                                            uint64_t epoch) {
  arrival_fence<Barrier>();
  // The other members in staggered order (rank + 1, + 2, ...): no test per member, and members do not all write to
  // the same PE first. The plain loop with `r != my_rank` cost a 2-member barrier ~40-80 ns (entry 10).
#pragma unroll 1
  for (int k = 1; k < t.size; ++k) {
    const int r = t.my_rank + k < t.size ? t.my_rank + k : t.my_rank + k - t.size;
    store_relaxed_sys(barrier_flag(h, peer_base(h, team_world_pe(t, r)), team, t.my_rank), epoch);
  }
}

template <bool Barrier>
__device__ __forceinline__ void dissemination(const DeviceHandle& h, const gshmem_device_team_t& t, int team,
                                              uint64_t epoch, const char* call) {
  for (int k = 0; (1LL << k) < t.size; ++k) {
    const int dist = static_cast<int>((1LL << k) % t.size);
    const int to = team_world_pe(t, (t.my_rank + dist) % t.size);
    uint64_t* flag = barrier_flag(h, peer_base(h, to), team, k);
    if constexpr (Barrier) {
      store_release_sys(flag, epoch);
    } else {
      fence_acq_rel_gpu();
      store_relaxed_sys(flag, epoch);
    }
    wait_flag(h, barrier_flag(h, h.heap_base, team, k), epoch, call);
  }
}

// The whole barrier (or sync) by one thread of this PE. Inline, as the lanes form below: out of line, a handle the
// kernel got as a parameter (native API) had to be copied to local memory to be passed by reference, and every
// field read after the fence then missed L1 (the fence and the acquire polls invalidate it): barrier_all<Thread>
// 1.17 -> 1.05-1.06 us, <Block> 1.61 -> 1.51-1.52 on one H200 (bench/NOTES.md entry 10).
template <bool Barrier>
__device__ __forceinline__ void team_sync_one(const DeviceHandle& h, int team, const char* call) {
  const gshmem_device_team_t t = load_team(h, team, call);
  uint64_t* ep = h.barrier_epochs + team;
  const uint64_t epoch = *ep + 1;  // loaded before the fence, so its latency hides under it
  if (t.size == 1) {
    arrival_fence<Barrier>();
  } else if (t.size <= GSHMEM_DEVICE_MAX_ROUNDS) {
    flat_arrive<Barrier>(h, t, team, epoch);
#pragma unroll 1
    for (int k = 1; k < t.size; ++k) {
      const int r = t.my_rank + k < t.size ? t.my_rank + k : t.my_rank + k - t.size;
      wait_flag(h, barrier_flag(h, h.heap_base, team, r), epoch, call);
    }
  } else {
    dissemination<Barrier>(h, t, team, epoch, call);
  }
  *ep = epoch;
}

// The barrier by the first `width` lanes of one warp (mask = those lanes), all calling: lane 0 fences and writes
// the flags, then the lanes wait for the members' flags in parallel.
template <bool Barrier>
__device__ __forceinline__ void team_sync_lanes(const DeviceHandle& h, int team, unsigned mask, int lane, int width,
                                             const char* call) {
  const gshmem_device_team_t t = load_team(h, team, call);
  if (t.size == 1 || t.size > GSHMEM_DEVICE_MAX_ROUNDS) {
    if (lane == 0) team_sync_one<Barrier>(h, team, call);
    __syncwarp(mask);
    return;
  }
  uint64_t* ep = h.barrier_epochs + team;
  const uint64_t epoch = *ep + 1;  // every lane reads it before lane 0 updates it (below the syncwarp)
  __syncwarp(mask);
  if (lane == 0) {
    flat_arrive<Barrier>(h, t, team, epoch);
    *ep = epoch;
  }
  __syncwarp(mask);  // lane 0's fence and stores are not interleaved with the other lanes' spinning
  for (int r = lane; r < t.size; r += width)
    if (r != t.my_rank) wait_flag(h, barrier_flag(h, h.heap_base, team, r), epoch, call);
  __syncwarp(mask);
}

template <typename Coop, bool Barrier>
__device__ __forceinline__ void team_sync_group(const DeviceHandle& h, int team, const char* call) {
  Coop::sync();  // the group's earlier writes are ordered before the fence of the thread that signals
  if constexpr (::cuda::std::is_same<Coop, Thread>::value) {
    team_sync_one<Barrier>(h, team, call);
  } else if constexpr (::cuda::std::is_same<Coop, Warp>::value) {
    team_sync_lanes<Barrier>(h, team, 0xffffffffu, Warp::rank(), 32, call);
  } else {
    const int rank = Coop::rank(), size = Coop::size();
    if (rank < 32) {
      const int width = size < 32 ? size : 32;
      team_sync_lanes<Barrier>(h, team, width == 32 ? 0xffffffffu : (1u << width) - 1u, rank, width, call);
    }
    Coop::sync();
  }
}

}  // namespace detail

// Team barrier: every earlier put/AMO of the group is complete and visible, then the team synchronises. sync: the
// team synchronises and the group's earlier stores to this PE's memory are visible to the members (puts and AMOs
// are not completed: quiet first, or use the barrier). Called by one thread / warp / block per PE.
template <typename Coop>
__device__ __forceinline__ void team_sync(const DeviceHandle& h, gshmem_team_t team) {
  detail::team_sync_group<Coop, false>(h, team, "gshmem_team_sync");
}
template <typename Coop>
__device__ __forceinline__ void barrier(const DeviceHandle& h, gshmem_team_t team) {
  detail::team_sync_group<Coop, true>(h, team, "gshmem_barrier");
}
template <typename Coop>
__device__ __forceinline__ void barrier_all(const DeviceHandle& h) {
  detail::team_sync_group<Coop, true>(h, GSHMEM_TEAM_WORLD, "gshmem_barrier_all");
}
template <typename Coop>
__device__ __forceinline__ void sync_all(const DeviceHandle& h) {
  detail::team_sync_group<Coop, false>(h, GSHMEM_TEAM_WORLD, "gshmem_sync_all");
}

}  // namespace dev
}  // namespace gshmem
