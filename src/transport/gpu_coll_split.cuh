// GPU PEs: a collective's data phase split over a stream kernel's CTAs, with the team syncs around it run by the
// kernel itself, so a split collective is one launch instead of three (a one-CTA sync kernel, the data grid, a
// one-CTA sync kernel: bench/NOTES.md entries 46-47). Internal to transport/.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include <cuda/atomic>

#include "gshmem/device/impl/coll.cuh"

namespace gshmem::gpu {

// Which team syncs a split kernel runs itself: none (it runs between one-CTA sync kernels: GSHMEM_COLL_SPLIT_SYNCS
// off), both, or only the entry sync (a phase that copies follow on the stream before a sync kernel: reduce's
// copy-engine gather).
enum class SplitSyncs : int { None, Both, Entry };
// The words are this PE's own and touched only by its GPU: GPU-scope atomics.
using SplitWord = ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>;

// Spins until the phase is opened (acquire at GPU scope). The opener, waiting in the entry sync, reports a member
// that never came (GSHMEM_WAIT_TIMEOUT) or a dead peer, and its trap ends the whole grid; so this wait's own bound
// is twice the timeout (a later start must not let it fire first and blame the wrong thing), and the peer-failure
// word.
__device__ __noinline__ inline void wait_opened(const dev::detail::CollEnv& env, unsigned long long* word,
                                               const char* call) {
  const SplitWord opened(*word);
  dev::detail::Spin spin(env.h);
  spin.limit = spin.limit > UINT64_MAX / 2 ? UINT64_MAX : 2 * spin.limit;
  while (opened.load(::cuda::memory_order_acquire) == 0) {
    if (spin.expired()) dev::detail::trap_timeout(env.h, call, word, "the CTA that runs the entry sync");
    if (env.abort != nullptr && (spin.polls & 1023) == 0 && *env.abort != 0)
      dev::detail::trap_coll_peer_failed(env.h, call);
  }
}

// Runs `data()` (the calling CTA's part of the phase) in every CTA of the grid, between the team's usual syncs
// (coll::team_sync, so the other members' kernels, whichever form they take, see the same sync count); `call`
// names the collective in timeout and peer-failure messages:
//  - Both and Entry: the first CTA to start runs the entry sync and then opens the phase; the others wait for the
//    opening.
//    "First to start" is a ticket, not block 0: a CTA holding a ticket is resident, so nobody waits for a CTA the
//    GPU has not started (no co-residency is assumed; the grid may be larger than the GPU holds at once).
//  - Both: the last CTA to finish runs the exit sync, with every CTA's stores ordered before it. (Entry: the last
//    CTA to finish only clears the words.)
// Ordering: inside this GPU by GPU-scope release and acquire (the opening flag; the finished CTAs' count, an acq_rel
// add after the CTA's barrier), towards the peers by the syncs' own system-scope fences. Causality order is
// transitive, so a peer that sees the exit sync's flag sees every CTA's stores, and every CTA's loads from peers
// follow the entry sync. One system-scope fence per sync, as in the sync kernels: the first form fenced at system
// scope in every CTA and in the opening (five fences in a row) and ran 3 us slower than the three launches it
// replaced (bench/NOTES.md entry 47).
// The three words (start tickets, opening, finished CTAs) are the slot's in the LL area's head (coll::kSplitOffset),
// this PE's own and touched only by its kernels on the slot, which a stream runs one after another (a member may
// not run two collectives on one team at once). The last CTA clears them for the next call; the next kernel on the
// stream starts after this one's memory operations are visible (stream order, or griddepcontrol.wait).
template <class Data>
__device__ __forceinline__ void run_split(const dev::detail::CollEnv& env, const TeamValue& t, int slot,
                                          SplitSyncs syncs, const char* call, Data&& data) {
  auto* w = reinterpret_cast<unsigned long long*>(env.h.heap_base + env.h.coll_ll_offset + coll::kSplitOffset) +
            coll::kSplitWords * static_cast<size_t>(slot);
  __shared__ unsigned long long ticket;
  if (syncs == SplitSyncs::Both || syncs == SplitSyncs::Entry) {
    if (threadIdx.x == 0) ticket = SplitWord(w[0]).fetch_add(1, ::cuda::memory_order_relaxed);
    __syncthreads();
    if (ticket == 0) {
      coll::team_sync<dev::Block>(env, t, slot, call);
      if (threadIdx.x == 0) SplitWord(w[1]).store(1, ::cuda::memory_order_release);
    } else if (threadIdx.x == 0) {
      wait_opened(env, w + 1, call);
    }
    __syncthreads();
  }
  data();  // one call site: inlined once per kernel (two made the reduction kernels' build 70 % slower, NOTES 49)
  if (syncs == SplitSyncs::None) return;
  __syncthreads();  // the CTA's stores precede thread 0's release (cumulative over what the barrier ordered)
  if (threadIdx.x == 0) ticket = SplitWord(w[2]).fetch_add(1, ::cuda::memory_order_acq_rel);
  __syncthreads();
  if (ticket != gridDim.x - 1) return;
  if (threadIdx.x == 0) {  // no CTA of this grid reads the words any more; the next kernel on the stream sees them
    SplitWord(w[0]).store(0, ::cuda::memory_order_relaxed);
    SplitWord(w[1]).store(0, ::cuda::memory_order_relaxed);
    SplitWord(w[2]).store(0, ::cuda::memory_order_relaxed);
  }
  if (syncs != SplitSyncs::Entry) coll::team_sync<dev::Block>(env, t, slot, call);
}

}  // namespace gshmem::gpu
