// GPU PEs: the collectives' stream kernels. One CTA runs the block-scope form of the one implementation of each
// collective (gshmem/coll/algorithms.h) with the device API's environment (device/impl/coll.cuh), so the stream
// forms, the blocking host forms (this kernel on the context's internal stream, waited for) and the device API
// share every line of the algorithm.
#include <cuda_runtime.h>

#include <atomic>
#include <type_traits>

#include "gshmem/device/impl/coll.cuh"
#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"
#include "transport/cuda_driver.hpp"
#include "transport/gpu.hpp"
#include "transport/gpu_coll_reduce.cuh"
#include "transport/gpu_coll_split.cuh"
#include "transport/stream_kernel.cuh"

namespace gshmem::gpu {
// The stream kernels' scope for broadcast, fcollect and alltoall: a block that runs the two-shot broadcast (the
// device API's block scope does not: coll::TwoShotScope).
struct CollCta : dev::Block {};
}  // namespace gshmem::gpu
template <>
struct gshmem::coll::TwoShotScope<gshmem::gpu::CollCta> {
  static constexpr bool value = true;
};
namespace gshmem::gpu {
namespace {

// What a launch of coll_kernel runs: the whole collective (one CTA, or the grid's parts of an LL call), the grid's
// parts of a staged call, or the grid's share of one data phase.
enum class CollPhase : int { Whole, Staged, Data, BroadcastTwoShot };

// The whole collective (one CTA, or part b of an LL call), or block b of the grid's share of one of its data phases.
__global__ void __launch_bounds__(kCollThreads) coll_kernel(gshmem_device_state_t h, TeamValue t, int slot, int kind,
                                                            void* dest, const void* src, coll::Exchange x, int root,
                                                            CollPhase phase, SplitSyncs syncs,
                                                            std::size_t bcast_two_shot_bytes,
                                                            const volatile int* abort_flag) {
  stream_kernel_entry();
  dev::detail::CollEnv env{h, abort_flag};
  const bool bcast = kind == static_cast<int>(CollKind::Broadcast);
  const std::size_t bytes = x.elem * x.nelems;
  const coll::Part part{static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)};
  auto data = [&] {
    if (phase == CollPhase::BroadcastTwoShot) {
      // The root with dest != src runs twice the parts (collective_on_stream): the first half sends as every
      // member's parts do (CTA b waits for the root's CTA b), the second half copies its own dest.
      const bool split = t.my_rank == root && dest != src;
      const int parts = split ? part.count / 2 : part.count;
      if (part.index >= parts)
        coll::broadcast_root_copy<CollCta>(env, dest, src, bytes, coll::Part{part.index - parts, parts});
      else
        coll::broadcast_two_shot_data<CollCta>(env, t, slot, dest, src, bytes, root, coll::Part{part.index, parts},
                                               "gshmem broadcast (stream kernel, two-shot)", !split);
    } else if (bcast) {
      coll::broadcast_data<CollCta>(env, t, dest, src, bytes, root, part);
    } else {
      coll::exchange_data<CollCta>(env, t, dest, src, x, part);
    }
  };
  // Named in the kernel's timeout and peer-failure messages (device string literals).
  const char* call = bcast                                          ? "gshmem broadcast (stream kernel)"
                     : kind == static_cast<int>(CollKind::Fcollect) ? "gshmem fcollect (stream kernel)"
                     : kind == static_cast<int>(CollKind::Alltoall) ? "gshmem alltoall (stream kernel)"
                                                                    : "gshmem alltoalls (stream kernel)";
  if (phase == CollPhase::Staged) {  // the launching host code picked it (coll::use_staged)
    if (bcast) coll::broadcast_staged<CollCta>(env, t, slot, dest, src, bytes, root, call, part);
    else coll::exchange_staged<CollCta>(env, t, slot, dest, src, x, call, part);
    return;
  }
  if (phase != CollPhase::Whole) return run_split(env, t, slot, syncs, call, data);
  if (gridDim.x > 1) {  // LL over several CTAs (collective_on_stream launches a grid whole for nothing else)
    if (bcast) coll::broadcast_ll<CollCta>(env, t, slot, dest, src, bytes, root, call, part);
    else coll::exchange_ll<CollCta>(env, t, slot, dest, src, x, call, part);
    return;
  }
  if (bcast) coll::broadcast<CollCta>(env, t, slot, dest, src, bytes, root, call, bcast_two_shot_bytes);
  else coll::exchange<CollCta>(env, t, slot, dest, src, x, call);
}

// The sync before or after a data phase split over CTAs.
__global__ void __launch_bounds__(kCollThreads) coll_sync_kernel(gshmem_device_state_t h, TeamValue t, int slot,
                                                                 const volatile int* abort_flag) {
  stream_kernel_entry();
  dev::detail::CollEnv env{h, abort_flag};
  coll::team_sync<dev::Block>(env, t, slot, "gshmem collective (stream kernel, sync of a multi-CTA collective)");
}

void wait_if_blocking(gshmem_stream_t s, cudaStream_t st, const char* call) {
  if (s) return;
  const cudaError_t w = cudaStreamSynchronize(st);
  if (w != cudaSuccess)
    fail(GSHMEM_ERROR_SYSTEM, "{}: the collective kernel failed: {}. Fix: a trap message above names the cause "
         "(a member that never called, GSHMEM_WAIT_TIMEOUT, or a dead peer); run with compute-sanitizer for a "
         "fault", call, cudaGetErrorString(w));
}

}  // namespace

cudaError_t launch_coll_sync(bool overlap, cudaStream_t st, const gshmem_device_state_t& h, const TeamValue& t,
                             int slot, const volatile int* abort_flag) {
  return launch_stream_kernel(overlap, coll_sync_kernel, kCollThreads, st, h, t, slot, abort_flag);
}

unsigned coll_ctas(std::size_t work_bytes) {
  const auto& cfg = config::get();
  const long long most = cfg.coll_ctas < 1 ? 1 : cfg.coll_ctas > 1024 ? 1024 : cfg.coll_ctas;
  const std::size_t per = cfg.coll_cta_bytes ? cfg.coll_cta_bytes : 1;
  const std::size_t n = work_bytes / per;
  return n < kCollMinSplit ? 1u : static_cast<unsigned>(n < static_cast<std::size_t>(most) ? n : most);
}

unsigned ll_ctas(std::size_t data_bytes) {
  return static_cast<unsigned>(coll::ll_parts(data_bytes, config::get().coll_ll_cta_bytes));
}

std::size_t staged_limit() {
  const long long v = config::get().coll_staged_bytes;  // checked at init (device_state::coll_staged_limit)
  return v < 0 ? coll::kStagedDefaultBytes : static_cast<std::size_t>(v);
}

unsigned staged_ctas(std::size_t data_bytes) {
  return static_cast<unsigned>(coll::staged_parts(data_bytes, config::get().coll_staged_cta_bytes));
}

void note_reduce_ce() {
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) log::info("reduce: two-shot, the gather by the copy engine (GSHMEM_COLL_REDUCE_CE_BYTES)");
}

void collective_on_stream(Context* c, CollKind kind, const gshmem_device_state_t& h, const TeamValue& t, int slot,
                          void* dest, const void* src, const coll::Exchange& x, int root, gshmem_stream_t s,
                          const char* call, void* ce_peer_dest) {
  const cuda::DeviceScope bind(device_of(c));
  cudaStream_t st = s ? reinterpret_cast<cudaStream_t>(s) : reinterpret_cast<cudaStream_t>(internal_stream(c));
  const bool ov = overlap_launch(c);
  const auto* abort_flag = static_cast<const volatile int*>(peer_failure_flag(c));
  const bool bcast = kind == CollKind::Broadcast;
  const std::size_t block = x.elem * x.nelems, bcast_two_shot_bytes = config::get().coll_bcast_two_shot_bytes;
  const bool bcast_two_shot = bcast && coll::broadcast_uses_two_shot(t.size, block, bcast_two_shot_bytes);
  const bool root_here = t.my_rank == root;
  // This PE's data: the root's copies to every member (broadcast), or its blocks to every member. Two-shot
  // broadcast: every member runs the same number of sending CTAs (CTA b waits for CTA b of the root), from the
  // data's size and settings that are equal on every PE (checked at init), at most coll::kBcastParts; the root with
  // dest != src as many again for its own copy.
  const std::size_t members = static_cast<std::size_t>(t.size);
  const std::size_t work = !bcast ? block * members : root_here ? block * members : 0;
  // LL (small calls, one flight without syncs) runs whole in one kernel: one CTA, or one per
  // GSHMEM_COLL_LL_CTA_BYTES of the lines' data (coll::ll_parts).
  const std::size_t ll = static_cast<std::size_t>(h.coll_ll_bytes);
  const bool by_ll = bcast ? coll::use_ll(t.size, block, ll) : coll::exchange_uses_ll(t.size, x, ll);
  // Staged (mid-sized calls, one flight through the receivers' buffers): every member the same number of CTAs, from
  // the data a receiver takes (a broadcast's block, otherwise every member's block) and settings equal everywhere.
  const std::size_t staged = staged_limit();
  const bool by_staged = !by_ll && (bcast ? coll::use_staged(slot, t.size, block, 1, staged)
                                          : coll::exchange_uses_staged(slot, t.size, x, staged));
  const unsigned most_parts = static_cast<unsigned>(coll::kBcastParts);
  const unsigned two_shot_ctas = bcast_two_shot ? coll_ctas(block) : 0u;
  // Two-shot: the root with dest != src runs a second set of CTAs for its own copy (coll_kernel), off the path of
  // the copies that feed the links (bench/NOTES.md entry 74).
  const unsigned two_shot_sets = root_here && dest != src ? 2u : 1u;
  const unsigned ctas = by_ll            ? ll_ctas(coll::ll_lines(block) * 8 * members)
                        : by_staged      ? staged_ctas(bcast ? block : block * members)
                        : bcast_two_shot ? two_shot_sets * (two_shot_ctas < most_parts ? two_shot_ctas : most_parts)
                                         : coll_ctas(work);
  cudaError_t e;
  if (by_staged) {
    e = launch_stream_grid(ov, coll_kernel, ctas, kCollThreads, st, h, t, slot, static_cast<int>(kind), dest, src, x,
                           root, CollPhase::Staged, SplitSyncs::None, bcast_two_shot_bytes, abort_flag);
  } else if (ce_peer_dest && bcast && root_here && !by_ll && !bcast_two_shot) {
    // The root of a team of 2 copies by the copy engines between the two syncs (GSHMEM_COLL_BCAST_CE_BYTES): the
    // member's copy on `st`, its own beside it. The other member runs its usual two syncs; only their number and
    // order have to match.
    // The exit sync is launched plainly: it follows copies, not a kernel (nothing to overlap with).
    e = launch_coll_sync(ov, st, h, t, slot, abort_flag);
    if (e == cudaSuccess)
      e = static_cast<cudaError_t>(
          copy_engine_broadcast(c, reinterpret_cast<gshmem_stream_t>(st), ce_peer_dest, dest, src, block));
    if (e == cudaSuccess) e = launch_coll_sync(false, st, h, t, slot, abort_flag);
  } else if (ce_peer_dest && !bcast && !by_ll) {
    // fcollect / alltoall on a team of 2 (GSHMEM_COLL_EXCHANGE_CE_BYTES): this member's block for the other member
    // (alltoall: block `other` of src) into block `mine` of its dest by the copy engine on `st`, its own block
    // locally on the second stream, between the two syncs. Only this member's way of copying changes.
    const std::size_t mine = static_cast<std::size_t>(t.my_rank), other = 1 - mine;
    const char* s8 = static_cast<const char*>(src);
    char* d8 = static_cast<char*>(dest);
    e = launch_coll_sync(ov, st, h, t, slot, abort_flag);
    if (e == cudaSuccess)
      e = static_cast<cudaError_t>(copy_engine_exchange(
          c, reinterpret_cast<gshmem_stream_t>(st), static_cast<char*>(ce_peer_dest) + mine * block,
          x.per_member ? s8 + other * block : s8, d8 + mine * block, x.per_member ? s8 + mine * block : s8, block));
    if (e == cudaSuccess) e = launch_coll_sync(false, st, h, t, slot, abort_flag);
  } else if (ctas == 1 || by_ll) {
    e = launch_stream_grid(ov, coll_kernel, ctas, kCollThreads, st, h, t, slot, static_cast<int>(kind), dest, src, x,
                           root, CollPhase::Whole, SplitSyncs::None, bcast_two_shot_bytes, abort_flag);
  } else {
    // The data phase over the grid, with its syncs inside (one launch), or between two sync kernels.
    const CollPhase phase = bcast_two_shot ? CollPhase::BroadcastTwoShot : CollPhase::Data;
    const bool inside = config::get().coll_split_syncs;
    e = inside ? cudaSuccess : launch_coll_sync(ov, st, h, t, slot, abort_flag);
    if (e == cudaSuccess)
      e = launch_stream_grid(ov, coll_kernel, ctas, kCollThreads, st, h, t, slot, static_cast<int>(kind), dest, src,
                             x, root, phase, inside ? SplitSyncs::Both : SplitSyncs::None, bcast_two_shot_bytes,
                             abort_flag);
    if (e == cudaSuccess && !inside) e = launch_coll_sync(ov, st, h, t, slot, abort_flag);
  }
  if (e != cudaSuccess)
    fail(GSHMEM_ERROR_SYSTEM, "{}: launching the collective kernel failed: {}. Fix: check that the GPU is healthy "
         "(nvidia-smi) and that no earlier kernel faulted", call, cudaGetErrorString(e));
  wait_if_blocking(s, st, call);
}

void reduction_on_stream(Context* c, coll::ReduceOp op, ReduceType type, bool scatter, const gshmem_device_state_t& h,
                         const TeamValue& t, int slot, void* dest, const void* src, std::size_t nelems,
                         gshmem_stream_t s, const char* call, void* ce_peer_dest) {
  const cuda::DeviceScope bind(device_of(c));
  cudaStream_t st = s ? reinterpret_cast<cudaStream_t>(s) : reinterpret_cast<cudaStream_t>(internal_stream(c));
  const bool ov = overlap_launch(c);
  const auto* abort_flag = static_cast<const volatile int*>(peer_failure_flag(c));
  auto typed = [&](auto zero) {
    using T = decltype(zero);
    // This PE's reads: every member's copy of its output elements (one-shot), or of its block (two-shot: about
    // nelems in all).
    // The copy-engine gather (ce_peer_dest) runs two-shot's reduction alone (the copy engine pushes).
    const std::size_t bytes = nelems * sizeof(T), threshold = config::get().coll_two_shot_bytes;
    const bool two_shot = !scatter && (ce_peer_dest || coll::use_two_shot(t.size, bytes, dest == src, threshold));
    const unsigned ctas = coll_ctas(two_shot ? bytes : bytes * static_cast<std::size_t>(t.size));
    return launch_reduce<T>(ov, op, st, h, t, slot, scatter, dest, src, nelems, ctas, threshold,
                            config::get().coll_split_syncs, abort_flag, ce_peer_dest);
  };
  cudaError_t e = cudaErrorInvalidValue;
  // Signed integers: only max and min differ from the unsigned type of the same width. Sum and prod wrap through
  // unsigned arithmetic (coll::Combine), and and/or/xor act on the bits, so those go to the unsigned kernels: the
  // same bits, and 20 fewer kernels to compile (gpu_coll_reduce_signed.cu took 115 s here with all seven ops).
  const bool by_sign = op == coll::ReduceOp::Max || op == coll::ReduceOp::Min;
  switch (type) {
    case ReduceType::Int8: e = by_sign ? typed(int8_t{}) : typed(uint8_t{}); break;
    case ReduceType::Int16: e = by_sign ? typed(int16_t{}) : typed(uint16_t{}); break;
    case ReduceType::Int32: e = by_sign ? typed(int32_t{}) : typed(uint32_t{}); break;
    case ReduceType::Int64: e = by_sign ? typed(int64_t{}) : typed(uint64_t{}); break;
    case ReduceType::Uint8: e = typed(uint8_t{}); break;
    case ReduceType::Uint16: e = typed(uint16_t{}); break;
    case ReduceType::Uint32: e = typed(uint32_t{}); break;
    case ReduceType::Uint64: e = typed(uint64_t{}); break;
    case ReduceType::Float: e = typed(float{}); break;
    case ReduceType::Double: e = typed(double{}); break;
    case ReduceType::Half: e = typed(__half{}); break;
    case ReduceType::Bfloat16: e = typed(__nv_bfloat16{}); break;
  }
  if (e != cudaSuccess)
    fail(GSHMEM_ERROR_SYSTEM, "{}: launching the reduction kernel failed: {}. Fix: check that the GPU is healthy "
         "(nvidia-smi) and that no earlier kernel faulted", call, cudaGetErrorString(e));
  wait_if_blocking(s, st, call);
}

}  // namespace gshmem::gpu
