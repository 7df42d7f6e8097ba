// The NVSHMEM host collectives gshmem-bench's coll rows call (world team only), as thin adapters onto Open MPI 4.1
// OSHMEM's OpenSHMEM 1.4 active-set routines over all PEs (PE_start 0, logPE_stride 0, PE_size n). Included by
// oshmem_names.hpp; OSHMEM build only.
//
//   nvshmem_float_sum_reduce, nvshmem_int_sum_reduce  shmem_float_sum_to_all, shmem_int_sum_to_all (pWrk, pSync)
//   nvshmem_broadcastmem (bytes)                       shmem_broadcast64 (32 where the bytes are not a multiple of
//                                                      8), then a local copy source -> dest on the root: 1.4's
//                                                      broadcast leaves the root's dest alone, NVSHMEM's (a 1.5
//                                                      team broadcast) writes it
//   nvshmem_fcollectmem, nvshmem_alltoallmem (bytes)   shmem_fcollect64, shmem_alltoall64 (or the 32-bit forms)
//   nvshmem_float_sum_reducescatter                    none: OpenSHMEM 1.4 has no reduce-scatter (the row is left
//                                                      out of this build, BENCH_HOST_REDUCESCATTER 0 in api.hpp)
// A *mem byte count that is not a multiple of 4 has no 1.4 routine (there is no 8- or 16-bit broadcast, fcollect or
// alltoall): the adapter returns 2 and moves nothing (3: pSync/pWrk could not be allocated); host_rows.cpp leaves
// such rows out of this build (BENCH_HOST_COLL_MEM_GRAIN), so every OSHMEM row moves exactly the bytes of gshmem's
// row of the same name.
//
// pSync and pWrk, by the OpenSHMEM 1.4 rules (section "Collective Routines": the argument lists and Notes of
// SHMEM_BROADCAST, SHMEM_COLLECT/FCOLLECT, SHMEM_REDUCTIONS and SHMEM_ALLTOALL; Open MPI's man pages carry the same
// text): both are symmetric (here shmem_malloc'd); every pSync element holds SHMEM_SYNC_VALUE before any PE enters a
// routine with it (initialised here, then a barrier_all, the "some type of synchronization" the Notes ask for); a
// routine restores its pSync before it returns, so it is never re-initialised; and a pSync (with its pWrk) may be
// reused only when no PE of the active set is still inside the earlier call that used it. That last rule needs a
// barrier between calls on one set, except in the case the Notes name: successive calls with the same active set
// may alternate between two sets. Every call here has the same active set (all PEs), so each routine family
// (broadcast, fcollect, reduce, alltoall) alternates between kSets = 2 pSync sets (reductions: pSync + pWrk pairs),
// and back-to-back calls need no barrier, as back-to-back NVSHMEM team collectives need none. pWrk holds
// max(nreduce / 2 + 1, SHMEM_REDUCE_MIN_WRKDATA_SIZE) elements of the reduced type.
#pragma once
#include <shmem.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>

// NVSHMEM's team handle: only the world team exists here (the rows use no other).
typedef int nvshmem_team_t;
#define NVSHMEM_TEAM_WORLD 0

namespace bench::oshmem_coll {

enum Family : int { kBroadcast, kCollect, kReduce, kAlltoall, kFamilies };
inline constexpr int kSets = 2;  // alternated per family (see above)
inline constexpr std::size_t kSyncLongs = std::max({std::size_t(SHMEM_BCAST_SYNC_SIZE),
                                                   std::size_t(SHMEM_COLLECT_SYNC_SIZE),
                                                   std::size_t(SHMEM_REDUCE_SYNC_SIZE),
                                                   std::size_t(SHMEM_ALLTOALL_SYNC_SIZE)});

struct State {
  long* psync = nullptr;           // kFamilies x kSets x kSyncLongs, symmetric
  unsigned char* pwrk = nullptr;   // kSets x wrk_bytes, symmetric (reductions)
  std::size_t wrk_bytes = 0;       // per set
  unsigned next[kFamilies] = {};   // calls so far per family: the set is next % kSets
};
inline State& state() {
  static State s;
  return s;
}

// Collective (every PE, same arguments). pWrk for reductions of up to `reduce_bytes` of 4-byte elements (float,
// int); a larger reduction later grows it (collectively: all PEs make the same calls). False: shmem_malloc failed.
inline bool prepare(std::size_t reduce_bytes) {
  static_assert(sizeof(float) == 4 && sizeof(int) == 4, "pWrk is sized for 4-byte elements");
  State& s = state();
  bool init = false;
  if (!s.psync) {
    s.psync = static_cast<long*>(shmem_malloc(sizeof(long) * kFamilies * kSets * kSyncLongs));
    if (!s.psync) return false;
    for (std::size_t i = 0; i < std::size_t(kFamilies) * kSets * kSyncLongs; ++i) s.psync[i] = SHMEM_SYNC_VALUE;
    init = true;
  }
  const std::size_t elems = std::max<std::size_t>(reduce_bytes / 4 / 2 + 1, SHMEM_REDUCE_MIN_WRKDATA_SIZE);
  if (elems * 4 > s.wrk_bytes) {
    shmem_barrier_all();  // no PE may still be in a reduction on the old pWrk (it is about to be freed)
    if (s.pwrk) shmem_free(s.pwrk);
    s.wrk_bytes = elems * 4;
    s.pwrk = static_cast<unsigned char*>(shmem_malloc(kSets * s.wrk_bytes));
    if (!s.pwrk) {
      s.wrk_bytes = 0;
      return false;
    }
  }
  if (init) shmem_barrier_all();  // every PE's pSync holds SHMEM_SYNC_VALUE before any PE uses one
  return true;
}

// Collective: frees what prepare() allocated (after a barrier: no PE may still be in a collective).
inline void release() {
  State& s = state();
  shmem_barrier_all();
  if (s.pwrk) shmem_free(s.pwrk);
  if (s.psync) shmem_free(s.psync);
  s = State{};
}

// The pSync set (and its index, for the pWrk of a reduction) for the next call of family f; null where the
// arrays could not be allocated.
inline long* next_sync(Family f, int* set = nullptr) {
  State& s = state();
  if (!s.psync && !prepare(0)) return nullptr;
  const int i = int(s.next[f]++ % kSets);
  if (set) *set = i;
  return s.psync + (std::size_t(f) * kSets + std::size_t(i)) * kSyncLongs;
}

template <class T, class F>
int sum_to_all(nvshmem_team_t team, T* dest, const T* source, std::size_t nreduce, F routine) {
  if (team != NVSHMEM_TEAM_WORLD || nreduce > std::size_t(INT_MAX)) return 1;
  if (nreduce == 0) return 0;
  if (!prepare(nreduce * sizeof(T))) return 3;  // no-op unless this is larger than prepared
  int set = 0;
  long* ps = next_sync(kReduce, &set);
  if (!ps) return 3;
  T* wrk = reinterpret_cast<T*>(state().pwrk + std::size_t(set) * state().wrk_bytes);
  routine(dest, source, int(nreduce), 0, 0, shmem_n_pes(), wrk, ps);
  return 0;
}

}  // namespace bench::oshmem_coll

inline int nvshmem_float_sum_reduce(nvshmem_team_t team, float* dest, const float* source, std::size_t nreduce) {
  return bench::oshmem_coll::sum_to_all(team, dest, source, nreduce, shmem_float_sum_to_all);
}
inline int nvshmem_int_sum_reduce(nvshmem_team_t team, int* dest, const int* source, std::size_t nreduce) {
  return bench::oshmem_coll::sum_to_all(team, dest, source, nreduce, shmem_int_sum_to_all);
}

inline int nvshmem_broadcastmem(nvshmem_team_t team, void* dest, const void* source, std::size_t nelems,
                                int PE_root) {
  using namespace bench::oshmem_coll;
  if (team != NVSHMEM_TEAM_WORLD) return 1;
  if (nelems == 0) return 0;
  if (nelems % 4) return 2;
  long* ps = next_sync(kBroadcast);
  if (!ps) return 3;
  if (nelems % 8 == 0) shmem_broadcast64(dest, source, nelems / 8, PE_root, 0, 0, shmem_n_pes(), ps);
  else shmem_broadcast32(dest, source, nelems / 4, PE_root, 0, 0, shmem_n_pes(), ps);
  if (shmem_my_pe() == PE_root && dest != source) std::memcpy(dest, source, nelems);
  return 0;
}

inline int nvshmem_fcollectmem(nvshmem_team_t team, void* dest, const void* source, std::size_t nelems) {
  using namespace bench::oshmem_coll;
  if (team != NVSHMEM_TEAM_WORLD) return 1;
  if (nelems == 0) return 0;
  if (nelems % 4) return 2;
  long* ps = next_sync(kCollect);
  if (!ps) return 3;
  if (nelems % 8 == 0) shmem_fcollect64(dest, source, nelems / 8, 0, 0, shmem_n_pes(), ps);
  else shmem_fcollect32(dest, source, nelems / 4, 0, 0, shmem_n_pes(), ps);
  return 0;
}

inline int nvshmem_alltoallmem(nvshmem_team_t team, void* dest, const void* source, std::size_t nelems) {
  using namespace bench::oshmem_coll;
  if (team != NVSHMEM_TEAM_WORLD) return 1;
  if (nelems == 0) return 0;
  if (nelems % 4) return 2;
  long* ps = next_sync(kAlltoall);
  if (!ps) return 3;
  if (nelems % 8 == 0) shmem_alltoall64(dest, source, nelems / 8, 0, 0, shmem_n_pes(), ps);
  else shmem_alltoall32(dest, source, nelems / 4, 0, 0, shmem_n_pes(), ps);
  return 0;
}
