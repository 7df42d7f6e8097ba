// gshmem collectives: every algorithm written once, over a cooperation scope and an environment.
//
// The same template runs in four places: CPU PEs' host calls (scope HostThread, environment host::CollEnv in
// src/api/collectives.cpp), the library's stream kernels (dev::Block), and the device API's thread / warp / block
// forms (dev::Thread / dev::Warp / dev::Block, environment dev::CollEnv in device/impl/coll.cuh). The team is a
// value (gshmem/team_value.h); peers are reached only through the environment's peer() and its flag operations,
// so a transport without mapped peers can provide another environment later.
//
// Scope: rank(), size(), sync() (every member of the group calls the routine with the same arguments).
// Environment (Env):
//   uint64_t* flags(int pe, int slot)     the sync flags [kSyncFlags] of team slot `slot` in world PE pe's heap
//   uint64_t* epoch(int slot)             this PE's sync count for the slot (its own heap; read and written by it)
//   void release_fence()                  this thread's and (after Scope::sync) its group's earlier stores, to
//                                         peers and local, are visible to whoever acquires a flag stored after it
//   void store_relaxed(uint64_t*, v) / store_release(uint64_t*, v) / wait_flag(const uint64_t*, epoch, call)
//                                         (acquire loads until >= epoch, bounded by GSHMEM_WAIT_TIMEOUT)
//   T* peer(T* p, int pe)                 PE pe's copy of symmetric address p
//   copy<Scope>(void* d, const void* s, size_t bytes)   the group copies (d and s do not overlap)
// Layout of the workspace the flags live in: src/runtime/device_state.hpp ("collective workspace").
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "gshmem/team_value.h"

// Host-and-device function templates whose scope or environment may be device-only: nvcc checks the callees of
// each instantiation only where it is used (nv_exec_check_disable), so the host instantiations (HostThread) and
// the device ones (Thread/Warp/Block) come from one template.
// GSHMEM_COLL_TEMPLATE opens each such template (the pragma must precede the declaration).
#if defined(__CUDACC__)
#define GSHMEM_COLL_TEMPLATE _Pragma("nv_exec_check_disable") template <class Scope, class Env>
#define GSHMEM_COLL_FN __host__ __device__ __forceinline__
#else
#define GSHMEM_COLL_TEMPLATE template <class Scope, class Env>
#define GSHMEM_COLL_FN inline
#endif

namespace gshmem {
namespace coll {

// Sync flags per team slot: one per member for teams of up to kSyncFlags (each member writes its own index in
// every other member: one flight), one per dissemination round above.
inline constexpr int kSyncFlags = GSHMEM_DEVICE_MAX_ROUNDS;

// One thread of a CPU PE (host calls on CPU PEs).
struct HostThread {
  static int rank() { return 0; }
  static int size() { return 1; }
  static void sync() {}
};

// Team sync with barrier ordering: on return every member has called it, and every store of every member's group
// before its call (local or to peers) is visible to this group. Flags: flat for teams of up to kSyncFlags
// members (member i writes its epoch into flag [i] of every other member, then waits for flags [0, size) of its
// own, the group's threads polling in parallel), dissemination rounds above (round k: flag [k] of the member 2^k
// ahead). Epochs only grow, so a member that is already one sync ahead also satisfies a wait.
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void team_sync(Env& env, const TeamValue& t, int slot, const char* call) {
  Scope::sync();  // the group's earlier stores are ordered before the fence of the thread that signals
  const int my_pe = team_world_pe(t, t.my_rank);
  uint64_t* ep = env.epoch(slot);
  const uint64_t epoch = *ep + 1;
  Scope::sync();  // every thread read the epoch before rank 0 advances it
  if (Scope::rank() == 0) {
    env.release_fence();
    if (t.size <= kSyncFlags) {
      for (int k = 1; k < t.size; ++k) {  // staggered: members do not all write to the same PE first
        const int r = t.my_rank + k < t.size ? t.my_rank + k : t.my_rank + k - t.size;
        env.store_relaxed(env.flags(team_world_pe(t, r), slot) + t.my_rank, epoch);
      }
    } else {
      for (int k = 0; (1LL << k) < t.size; ++k) {
        const int dist = static_cast<int>((1LL << k) % t.size);
        env.store_release(env.flags(team_world_pe(t, (t.my_rank + dist) % t.size), slot) + k, epoch);
        env.wait_flag(env.flags(my_pe, slot) + k, epoch, call);
      }
    }
    *ep = epoch;
  }
  if (t.size <= kSyncFlags) {
    for (int r = Scope::rank(); r < t.size; r += Scope::size())
      if (r != t.my_rank) env.wait_flag(env.flags(my_pe, slot) + r, epoch, call);
  }
  Scope::sync();
}

// broadcast: root's `bytes` at src land in dest of every member (the root's too; dest == src on the root is
// allowed). Root pushes into every member's dest (staggered from the next member), between two syncs: the first
// makes sure no member still uses its dest, the second that every copy has landed (and the root's src is free).
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void broadcast(Env& env, const TeamValue& t, int slot, void* dest, const void* src, size_t bytes,
                              int root, const char* call) {
  team_sync<Scope>(env, t, slot, call);
  if (t.my_rank == root && bytes != 0) {
    for (int k = 0; k < t.size; ++k) {
      const int r = t.my_rank + k < t.size ? t.my_rank + k : t.my_rank + k - t.size;
      if (r == root && dest == src) continue;
      env.template copy<Scope>(env.peer(dest, team_world_pe(t, r)), src, bytes);
    }
  }
  team_sync<Scope>(env, t, slot, call);
}

// fcollect: member i's `bytes` at src land at dest + i * bytes of every member. Each member pushes its block to
// every member (itself included), staggered, between two syncs.
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void fcollect(Env& env, const TeamValue& t, int slot, void* dest, const void* src, size_t bytes,
                             const char* call) {
  team_sync<Scope>(env, t, slot, call);
  if (bytes != 0) {
    char* mine = static_cast<char*>(dest) + static_cast<size_t>(t.my_rank) * bytes;
    for (int k = 0; k < t.size; ++k) {
      const int r = t.my_rank + k < t.size ? t.my_rank + k : t.my_rank + k - t.size;
      env.template copy<Scope>(env.peer(mine, team_world_pe(t, r)), src, bytes);
    }
  }
  team_sync<Scope>(env, t, slot, call);
}

// alltoall: block j of member i's src (bytes at src + j * bytes) lands at dest + i * bytes of member j.
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void alltoall(Env& env, const TeamValue& t, int slot, void* dest, const void* src, size_t bytes,
                             const char* call) {
  team_sync<Scope>(env, t, slot, call);
  if (bytes != 0) {
    char* mine = static_cast<char*>(dest) + static_cast<size_t>(t.my_rank) * bytes;
    for (int k = 0; k < t.size; ++k) {
      const int r = t.my_rank + k < t.size ? t.my_rank + k : t.my_rank + k - t.size;
      env.template copy<Scope>(env.peer(mine, team_world_pe(t, r)),
                               static_cast<const char*>(src) + static_cast<size_t>(r) * bytes, bytes);
    }
  }
  team_sync<Scope>(env, t, slot, call);
}

}  // namespace coll
}  // namespace gshmem
