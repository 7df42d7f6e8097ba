// GPU PEs: the reductions' stream kernels, one per op and element type (the block-scope form of the one routine
// of gshmem/coll/algorithms.h), and launch_reduce<T>, which picks the op's kernel. Its instantiations are spread over
// gpu_coll_reduce_*.cu (explicit instantiation) so the 52 kernels compile in parallel; gpu_coll.cu sees only the
// declaration. Internal to transport/.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "gshmem/device/impl/coll.cuh"
#include "transport/gpu_coll_split.cuh"
#include "transport/stream_kernel.cuh"

namespace gshmem::gpu {

// Threads of the collectives' CTA: enough lanes for a flat sync of 32 members and for copies.
constexpr unsigned kCollThreads = 512;

// Stream kernels of more than one CTA split a collective's data phase (coll::Part) and run the team syncs around it
// themselves (gpu_coll_split.cuh), or, with GSHMEM_COLL_SPLIT_SYNCS=0 and for the copy-engine broadcast, run between
// two one-CTA kernels of coll::team_sync, stream order being the barrier between the phases. Either way the members'
// sync counts match whichever form each member picks.
cudaError_t launch_coll_sync(bool overlap, cudaStream_t st, const gshmem_device_state_t& h, const TeamValue& t,
                             int slot, const volatile int* abort_flag);
// CTAs for `work_bytes` of this PE's collective data: one per GSHMEM_COLL_CTA_BYTES, at most GSHMEM_COLL_CTAS, and
// 1 (one CTA, which runs the whole collective, syncs included) below kCollMinSplit of them.
constexpr std::size_t kCollMinSplit = 4;
unsigned coll_ctas(std::size_t work_bytes);
// CTAs of an LL call where this PE receives `data_bytes` in all: coll::ll_parts with GSHMEM_COLL_LL_CTA_BYTES.
unsigned ll_ctas(std::size_t data_bytes);
// GSHMEM_COLL_STAGED_BYTES as resolved on a GPU PE, and the CTAs of a staged call where this PE receives
// `data_bytes` in all (coll::staged_parts with GSHMEM_COLL_STAGED_CTA_BYTES).
std::size_t staged_limit();
unsigned staged_ctas(std::size_t data_bytes);
// Writes the INFO line that says a reduce took the copy-engine gather (once a process; the GPU tests look for it).
void note_reduce_ce();

// What one launch of reduce_kernel does: the whole reduction (one CTA, or an LL call's parts over the grid), a
// staged call's parts over the grid, or one data phase split over the grid's CTAs (coll::Part; its syncs inside,
// gpu_coll_split.cuh, or sync kernels around it): one-shot's, two-shot's (reduce the owned block and push it to the
// other members), or the owned block's reduction alone (the copy engine pushes it).
enum class ReducePhase : int { Whole, Staged, OneShotData, OwnedPush, OwnedReduce };

// Launches reduce_kernel<op, T>: reducescatter and small reduces one-shot, reduce from `two_shot_bytes` of data
// and in place two-shot (coll::use_two_shot); one CTA, or (ctas > 1) each data phase over ctas CTAs, the syncs
// inside (`split_syncs`: GSHMEM_COLL_SPLIT_SYNCS) or as sync kernels between; LL calls in one kernel of ll_ctas
// CTAs. `ce_peer_dest` (a reduce on a team of 2 above the LL and staged limits; else null): two-shot with the
// gather by the copy engine: one kernel runs the entry sync and reduces this member's block over `ctas` CTAs, then
// cudaMemcpyAsync copies that block into the other member's dest (ce_peer_dest), then a sync kernel. No sync between
// the phases: each member writes only its own block of its dest and the same block of the other's, which nobody
// reads during the call (in place too: a member's block of a source is read by that member alone, before its copy),
// and the exit sync follows each member's copy in its stream. cudaErrorInvalidValue for a bitwise op on a floating
// type (the host layer never asks for one).
template <typename T>
cudaError_t launch_reduce(bool overlap, coll::ReduceOp op, cudaStream_t st, const gshmem_device_state_t& h,
                          const TeamValue& t, int slot, bool scatter, void* dest, const void* src,
                          std::size_t nelems, unsigned ctas, std::size_t two_shot_bytes, bool split_syncs,
                          const volatile int* abort_flag, void* ce_peer_dest);

#if defined(GSHMEM_COLL_REDUCE_DEFINE)
// The reduction kernels' cooperation scope: a block, with the wide form of the data passes (two members' 16-byte
// chunks in flight, two-shot). The device API's scopes keep the narrow one, which fits users' 1024-thread kernels
// (coll::ReducePass).
struct ReduceCta : dev::Block {};
}  // namespace gshmem::gpu
namespace gshmem::coll {
template <>
struct ReducePass<gpu::ReduceCta> : DevicePass<4, true> {};
}  // namespace gshmem::coll
namespace gshmem::gpu {
// Reductions: one kernel per op and element type (the one routine of each, block scope), running `phase`.
template <coll::ReduceOp Op, typename T>
__global__ void __launch_bounds__(kCollThreads) reduce_kernel(gshmem_device_state_t h, TeamValue t, int slot,
                                                              bool scatter, T* dest, const T* src,
                                                              std::size_t nelems, ReducePhase phase,
                                                              SplitSyncs syncs, bool two_shot,
                                                              const volatile int* abort_flag) {
  stream_kernel_entry();
  dev::detail::CollEnv env{h, abort_flag};
  const std::size_t first = scatter ? static_cast<std::size_t>(t.my_rank) * nelems : 0;
  const coll::Part part{static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)};
  auto data = [&] {
    switch (phase) {
      case ReducePhase::OneShotData: return coll::reduce_data<ReduceCta, Op>(env, t, dest, src, first, nelems, part);
      case ReducePhase::OwnedReduce: return coll::reduce_owned_data<ReduceCta, Op>(env, t, dest, src, nelems, part);
      default: return coll::reduce_owned_push<ReduceCta, Op>(env, t, dest, src, nelems, part);
    }
  };
  const char* call = scatter ? "gshmem reducescatter (stream kernel)" : "gshmem reduce (stream kernel)";
  if (phase == ReducePhase::Staged)  // launch_reduce picked it (coll::reduce_uses_staged)
    return coll::reduce_staged<ReduceCta, Op>(env, t, slot, dest, src, nelems, scatter, call, part);
  if (phase != ReducePhase::Whole) return run_split(env, t, slot, syncs, call, data);
  if constexpr (sizeof(T) <= 8) {  // small: LL, as the device forms choose it (launch_reduce: one CTA or ll_ctas)
    if (coll::reduce_uses_ll<T>(t.size, nelems, env.ll_limit()))
      return coll::reduce_ll<ReduceCta, Op>(env, t, slot, dest, src, nelems, scatter, call, part);
  }
  if (two_shot) coll::reduce_two_shot<ReduceCta, Op>(env, t, slot, dest, src, nelems, call);
  else coll::reduce_one_shot<ReduceCta, Op>(env, t, slot, dest, src, first, nelems, call);
}

template <typename T>
cudaError_t launch_reduce(bool overlap, coll::ReduceOp op, cudaStream_t st, const gshmem_device_state_t& h,
                          const TeamValue& t, int slot, bool scatter, void* dest, const void* src,
                          std::size_t nelems, unsigned ctas, std::size_t two_shot_bytes, bool split_syncs,
                          const volatile int* abort_flag, void* ce_peer_dest) {
  using coll::ReduceOp;
  T* d = static_cast<T*>(dest);
  const T* s = static_cast<const T*>(src);
  const bool two_shot = !scatter && coll::use_two_shot(t.size, nelems * sizeof(T), dest == src, two_shot_bytes);
  const bool by_ll = coll::reduce_uses_ll<T>(t.size, nelems, static_cast<std::size_t>(h.coll_ll_bytes));
  const bool by_staged = !by_ll && coll::reduce_uses_staged(slot, t.size, nelems * sizeof(T), staged_limit());
  if (by_ll) ctas = ll_ctas(coll::ll_lines(nelems * sizeof(T)) * 8 * static_cast<std::size_t>(t.size));
  if (by_staged) ctas = staged_ctas(nelems * sizeof(T) * static_cast<std::size_t>(t.size));
  const bool by_ce = ce_peer_dest != nullptr && !scatter && t.size == 2 && !by_ll && !by_staged;
  auto go = [&](auto k) {
    if (by_ce) {
      cudaError_t e = launch_stream_grid(overlap, k, ctas, kCollThreads, st, h, t, slot, scatter, d, s, nelems,
                                         ReducePhase::OwnedReduce, SplitSyncs::Entry, true, abort_flag);
      std::size_t lo, hi;  // this member's block, as coll::reduce_owned_data takes it
      coll::Part{t.my_rank, t.size}.range(nelems, coll::kPartAlign, lo, hi);
      if (e == cudaSuccess && hi > lo)
        e = cudaMemcpyAsync(static_cast<T*>(ce_peer_dest) + lo, d + lo, (hi - lo) * sizeof(T), cudaMemcpyDefault, st);
      if (e != cudaSuccess) return e;
      note_reduce_ce();
      return launch_coll_sync(false, st, h, t, slot, abort_flag);  // plainly: it follows a copy, not a kernel
    }
    if (by_staged)
      return launch_stream_grid(overlap, k, ctas, kCollThreads, st, h, t, slot, scatter, d, s, nelems,
                                ReducePhase::Staged, SplitSyncs::None, two_shot, abort_flag);
    if (ctas <= 1 || by_ll)  // whole: one CTA, or LL's parts in one kernel
      return launch_stream_grid(overlap, k, ctas, kCollThreads, st, h, t, slot, scatter, d, s, nelems,
                                ReducePhase::Whole, SplitSyncs::None, two_shot, abort_flag);
    // The data phase over the grid (two-shot's too: coll::reduce_owned_push needs no sync inside). split_syncs:
    // the kernel runs the entry and exit syncs; otherwise a sync kernel before and after it.
    const ReducePhase phase = two_shot ? ReducePhase::OwnedPush : ReducePhase::OneShotData;
    cudaError_t e = split_syncs ? cudaSuccess : launch_coll_sync(overlap, st, h, t, slot, abort_flag);
    if (e == cudaSuccess)
      e = launch_stream_grid(overlap, k, ctas, kCollThreads, st, h, t, slot, scatter, d, s, nelems, phase,
                             split_syncs ? SplitSyncs::Both : SplitSyncs::None, two_shot, abort_flag);
    return e == cudaSuccess && !split_syncs ? launch_coll_sync(overlap, st, h, t, slot, abort_flag) : e;
  };
  switch (op) {
    case ReduceOp::Max: return go(reduce_kernel<ReduceOp::Max, T>);
    case ReduceOp::Min: return go(reduce_kernel<ReduceOp::Min, T>);
    default: break;
  }
  // Signed integers: max and min only (gpu_coll.cu sends their other ops to the unsigned kernels, the same bits).
  if constexpr (!(std::is_integral_v<T> && std::is_signed_v<T>)) {
    switch (op) {
      case ReduceOp::Sum: return go(reduce_kernel<ReduceOp::Sum, T>);
      case ReduceOp::Prod: return go(reduce_kernel<ReduceOp::Prod, T>);
      default: break;
    }
    if constexpr (std::is_integral_v<T>) {
      switch (op) {
        case ReduceOp::And: return go(reduce_kernel<ReduceOp::And, T>);
        case ReduceOp::Or: return go(reduce_kernel<ReduceOp::Or, T>);
        case ReduceOp::Xor: return go(reduce_kernel<ReduceOp::Xor, T>);
        default: break;
      }
    }
  }
  return cudaErrorInvalidValue;
}
// The explicit instantiation of launch_reduce<T> (gpu_coll_reduce_*.cu).
#define GSHMEM_INSTANTIATE_LAUNCH_REDUCE(T)                                                                       \
  template cudaError_t launch_reduce<T>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,         \
                                        const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,   \
                                        std::size_t, bool, const volatile int*, void*);
#endif  // GSHMEM_COLL_REDUCE_DEFINE

}  // namespace gshmem::gpu
