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
