// gshmem MoE dispatch / combine in device code: the one implementation (gshmem/moe/dispatch_combine.h) over the
// device API's environment (dev::detail::CollEnv: peers through the handle, system-scope fences, bounded waits).
//
// Two layers:
// - moe_dispatch / moe_combine: the algorithm, call number passed in by the caller (a user kernel that keeps its
//   own count). No argument checks: the caller guarantees m <= T, indices < E, distinct experts per token.
// - moe_dispatch_counted / moe_combine_counted: what the library's stream kernels run (src/transport/gpu_moe.cu:
//   the whole grid of a cooperative launch as one group, MoeGrid below): the call number and the dispatch's m live
//   in the workspace's state words (device memory), so a captured CUDA graph replays correctly; the token data are
//   checked on the device first, because the host entry cannot read device memory without synchronising (a bad
//   index, an expert twice in a token, bound_m above the rows given, dispatch twice, combine without dispatch or
//   with another m: a message naming the call, the cause and the fix, then a trap, as the device API's other
//   argument errors do).
//
// STATUS: the stream kernels' grid form (many blocks, batched fences) passed the MoE tests on 2 x H200 (2026-11-26,
// 737773d: ctest -R moe 26/26 with graph replay of the cooperative launch, pytest -k moe 11; docs/moe.md). The
// user device entry (dev::Block / dev::Warp) compiles for every type pairing (tests/compile/moe_device.cu, nvcc,
// no -rdc) and passed mp_moe_gpu's device_entry case on 2 x H200 (block of 256 and 64, a warp; 78be08e).
// Since then (branch moe-wide): rows sent in pieces while there are fewer rows than warps (one more grid / block
// sync per call then); CPU group-scope tests only, not yet run on a GPU.
//
// Every PE's group (the grid, one block, or one warp) calls with the same plan and workspace (symmetric), and call
// numbers 1, 2, ... alternating dispatch c / combine c, as the host form does. bound_m: the device-resident token
// count (pplx-kernels' bound_m), or null for m.
#pragma once
#include "gshmem/device.cuh"
#include "gshmem/moe/dispatch_combine.h"

namespace gshmem {
namespace dev {
namespace detail {

// The library's stream kernels run the algorithm over their whole grid (src/transport/gpu_moe.cu: launched
// cooperatively, so every block is resident and a grid-wide barrier cannot deadlock): MoeGrid is that scope, the
// grid's threads in order, its sync a barrier on a word of the MoE workspace (moe::kStateGridBarrier). What the
// barrier needs is in shared memory, set by moe_grid_begin() at the kernel's start; not for user kernels (those use
// dev::Block or dev::Warp).
struct MoeGridState {
  unsigned* word;       // the barrier word (this PE's workspace; zero at creation, back to 0 or 2^31 after a sync)
  uint64_t timeout_ns;  // GSHMEM_WAIT_TIMEOUT
  const char* call;     // the API call, for the timeout's message
  int my_pe;
};
__device__ __forceinline__ MoeGridState& moe_grid_state() {
  __shared__ MoeGridState state;
  return state;
}

[[noreturn]] __device__ __noinline__ inline void trap_moe_grid(const MoeGridState& s) {
  printf("gshmem: %s on PE %d: a block of the MoE kernel waited %.1f s at a grid-wide barrier for the others "
         "(GSHMEM_WAIT_TIMEOUT); aborting the kernel. Fix: another block is stuck in a wait (see its message), or "
         "the grid was not co-resident (it is launched cooperatively: report a bug)\n", s.call, s.my_pe,
         static_cast<double>(s.timeout_ns) / 1e9);
  __trap();
}

// Every thread of the grid arrives; none leaves before all arrived, and every write before it is visible to every
// read after it. Block 0 adds 2^31 - (blocks - 1), every other block 1: bit 31 of the word flips exactly when the
// last block arrives and the low bits return to 0, whatever the grid size (no reset, any number of kernels).
__device__ __forceinline__ void moe_grid_sync() {
  __syncthreads();
  // One block (1-2 tokens): the block barrier is the grid's. What other PEs read after it is released by a
  // system-scope fence of its own (row and done flags, flag_pieces) or carries its own value (a count word, stored
  // relaxed: its call number and count are the message), so the device fence and the word's round trip buy nothing.
  if (gridDim.x * gridDim.y * gridDim.z == 1) return;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const MoeGridState& s = moe_grid_state();
    const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    const bool first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
    ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_device> word(*s.word);
    // release: this block's writes (ordered before this thread by __syncthreads) before the arrival; the fence as
    // well as the release add, as CUDA's own grid barrier has it (cheap beside the barrier's round trips)
    __threadfence();
    const unsigned old = word.fetch_add(first ? 0x80000000u - (blocks - 1) : 1u, ::cuda::memory_order_release);
    if (((old ^ word.load(::cuda::memory_order_acquire)) & 0x80000000u) == 0) {
      const uint64_t start = globaltimer();
      uint32_t polls = 0;
      while (((old ^ word.load(::cuda::memory_order_acquire)) & 0x80000000u) == 0)
        if ((++polls & 1023) == 0 && globaltimer() - start > s.timeout_ns) trap_moe_grid(s);
    }
  }
  __syncthreads();
}

struct MoeGrid {
  static __device__ __forceinline__ int rank() {
    const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    return static_cast<int>(b) * Block::size() + Block::rank();
  }
  static __device__ __forceinline__ int size() {
    return static_cast<int>(gridDim.x * gridDim.y * gridDim.z) * Block::size();
  }
  static __device__ __forceinline__ void sync() { moe_grid_sync(); }
};

// First statement of a kernel over MoeGrid (after the stream entry): the barrier's state for its blocks.
__device__ __forceinline__ void moe_grid_begin(unsigned* word, uint64_t timeout_ns, int my_pe, const char* call) {
  if (Block::rank() == 0) moe_grid_state() = MoeGridState{word, timeout_ns, call, my_pe};
  __syncthreads();
}

}  // namespace detail
}  // namespace dev

namespace moe {
// A block's parts are its warps: each moves its own rows (a batch of puts with one fence and their flags, a wait
// and a copy per received row), so a block of W warps has W batches in flight. The block size must be a multiple
// of 32 (GSHMEM_MOE_THREADS is; the device entries below check it). The stream kernels' grid likewise.
template <>
struct Parts<dev::Block> {
  using Part = dev::Warp;
  static __device__ __forceinline__ int index() { return dev::Block::rank() / 32; }
  static __device__ __forceinline__ int count() { return dev::Block::size() / 32; }
};
template <>
struct Parts<dev::detail::MoeGrid> {
  using Part = dev::Warp;
  static __device__ __forceinline__ int index() { return dev::detail::MoeGrid::rank() / 32; }
  static __device__ __forceinline__ int count() { return dev::detail::MoeGrid::size() / 32; }
};
}  // namespace moe

namespace dev {
namespace detail {

#if defined(GSHMEM_MOE_STAMPS)
// Dispatch's phase stamps (gshmem/moe/dispatch_combine.h, GSHMEM_MOE_STAMP; a build with GSHMEM_MOE_STAMPS defined,
// in src/transport/gpu_moe.cu alone): moe_stamp_now[0] is ~0 minus the first block's start (atomicMax of ~t, so a
// zeroed word works), [1 + phase] the last part to finish each phase (atomicMax of t); after each dispatch the
// grid's rank 0 appends one row to moe_stamp_log (rows kStampLogRows, ring) and zeroes moe_stamp_now.
inline constexpr int kStampLogRows = 4096;
inline constexpr int kStampLogWords = 10;  // E, K, x_bytes, m, then each phase's end and the kernel's, ns from start
__device__ unsigned long long moe_stamp_now[1 + moe::kStamps];
__device__ unsigned long long moe_stamp_log[kStampLogRows][kStampLogWords];
__device__ unsigned long long moe_stamp_rows;
#endif

// The collectives' environment with the MoE's own timeout message (what a stuck wait was waiting for).
struct MoeEnv : CollEnv {
#if defined(GSHMEM_MOE_STAMPS)
  __device__ __forceinline__ void stamp(int phase) const {
    if ((threadIdx.x & 31) == 0) atomicMax(&moe_stamp_now[1 + phase], static_cast<unsigned long long>(globaltimer()));
  }
#endif
  __device__ __forceinline__ void wait_flag(const uint64_t* f, uint64_t value, const char* call) const {
    if (load_acquire(f) >= value) return;
    Spin spin(h);
    while (load_acquire(f) < value) {
      if (spin.expired())
        trap_timeout(h, call, f, "a peer's MoE count, row or done flag (every PE must make the same dispatch / "
                     "combine calls, in the same order)");
      if (abort != nullptr && (spin.polls & 1023) == 0 && *abort != 0) trap_coll_peer_failed(h, call);
    }
  }
};

[[noreturn]] __device__ __noinline__ inline void trap_moe_index(const DeviceHandle& h, const char* call, uint64_t i,
                                                                uint64_t k, uint32_t e, uint64_t num_experts) {
  printf("gshmem: %s on PE %d: indices[%llu][%llu]=%u is not an expert (0..%llu); aborting the kernel. Fix: pass "
         "expert ids below num_experts\n", call, h.my_pe, static_cast<unsigned long long>(i),
         static_cast<unsigned long long>(k), e, static_cast<unsigned long long>(num_experts - 1));
  __trap();
}

[[noreturn]] __device__ __noinline__ inline void trap_moe_duplicate(const DeviceHandle& h, const char* call,
                                                                    uint64_t i, uint32_t e, uint64_t k2, uint64_t k) {
  printf("gshmem: %s on PE %d: token %llu names expert %u twice (indices[%llu][%llu] and [%llu][%llu]); aborting "
         "the kernel. Fix: route each token to distinct experts (a top-k does)\n", call, h.my_pe,
         static_cast<unsigned long long>(i), e, static_cast<unsigned long long>(i),
         static_cast<unsigned long long>(k2), static_cast<unsigned long long>(i), static_cast<unsigned long long>(k));
  __trap();
}

[[noreturn]] __device__ __noinline__ inline void trap_moe_bound(const DeviceHandle& h, const char* call,
                                                                uint64_t bound, uint64_t rows, uint64_t max_tokens) {
  printf("gshmem: %s on PE %d: bound_m=%llu is more than the token rows passed (num_tokens=%llu; max_num_tokens=%llu); "
         "aborting the kernel. Fix: keep bound_m (the live token count) at most the rows of indices and dp_x\n",
         call, h.my_pe, static_cast<unsigned long long>(bound), static_cast<unsigned long long>(rows),
         static_cast<unsigned long long>(max_tokens));
  __trap();
}

[[noreturn]] __device__ __noinline__ inline void trap_moe_order(const DeviceHandle& h, const char* call, bool dispatch,
                                                                uint64_t dispatches, uint64_t combines) {
  if (dispatch)
    printf("gshmem: %s on PE %d: dispatch called twice without a combine between (dispatch %llu was not combined); "
           "aborting the kernel. Fix: call combine after each dispatch, on the same stream (or ordered after it): "
           "the two share staging buffers\n", call, h.my_pe, static_cast<unsigned long long>(dispatches));
  else
    printf("gshmem: %s on PE %d: combine without a dispatch before it (%llu dispatches, %llu combines so far); "
           "aborting the kernel. Fix: call dispatch, then combine, on the same stream (or ordered after it)\n",
           call, h.my_pe, static_cast<unsigned long long>(dispatches), static_cast<unsigned long long>(combines));
  __trap();
}

[[noreturn]] __device__ __noinline__ inline void trap_moe_tokens(const DeviceHandle& h, const char* call, uint64_t m,
                                                                 uint64_t dispatched) {
  printf("gshmem: %s on PE %d: combine of %llu tokens (bound_m) but the dispatch before had %llu; aborting the "
         "kernel. Fix: combine the tokens that were dispatched (same bound_m, indices)\n", call, h.my_pe,
         static_cast<unsigned long long>(m), static_cast<unsigned long long>(dispatched));
  __trap();
}

[[noreturn]] __device__ __noinline__ inline void trap_moe_block(const DeviceHandle& h, const char* call, int size) {
  printf("gshmem: %s on PE %d: a block of %d threads; the MoE routines split a block into warps, so its size must "
         "be a multiple of 32; aborting the kernel. Fix: launch 32, 64, ... threads per block\n", call, h.my_pe,
         size);
  __trap();
}

// Scopes the MoE routines run in: a warp, or a block of whole warps.
template <typename Coop>
__device__ __forceinline__ void moe_check_scope(const DeviceHandle& h, const char* call) {
  if (Coop::size() % 32 != 0) trap_moe_block(h, call, Coop::size());
}

// The live token count: *bound_m (device memory, pplx's one-element uint32 tensor) or `rows`; traps above rows.
__device__ __forceinline__ uint64_t moe_tokens(const DeviceHandle& h, const uint32_t* bound_m, uint64_t rows,
                                               const moe::Plan& p, const char* call) {
  if (bound_m == nullptr) return rows;
  const uint64_t m = *bound_m;
  if (m > rows) trap_moe_bound(h, call, m, rows, p.max_tokens);
  return m;
}

}  // namespace detail

template <typename Coop>
__device__ __forceinline__ void moe_dispatch(const DeviceHandle& h, const moe::Plan& p, void* ws, uint64_t call_no,
                                             int32_t* out_expert_num_tokens, void* out_expert_x,
                                             void* out_expert_x_scale, const void* dp_x, const void* dp_x_scale,
                                             const uint32_t* indices, const uint32_t* bound_m, uint32_t m,
                                             const char* call = "gshmem::dev::moe_dispatch") {
  detail::moe_check_scope<Coop>(h, call);
  detail::MoeEnv env{{h, nullptr}};
  const uint64_t n = bound_m != nullptr ? *bound_m : m;
  moe::dispatch<Coop>(env, p, static_cast<char*>(ws), call_no, out_expert_num_tokens,
                      static_cast<char*>(out_expert_x), static_cast<char*>(out_expert_x_scale),
                      static_cast<const char*>(dp_x), static_cast<const char*>(dp_x_scale), indices, n, call);
}

// TY, TO: float, __half or __nv_bfloat16 (coll::Float16 has CUDA's 16-bit types: device/impl/coll.cuh).
template <typename Coop, typename TY, typename TO>
__device__ __forceinline__ void moe_combine(const DeviceHandle& h, const moe::Plan& p, void* ws, uint64_t call_no,
                                            TO* out_tokens, const uint32_t* indices, const float* weights,
                                            const TY* expert_y, const uint32_t* bound_m, uint32_t m,
                                            const char* call = "gshmem::dev::moe_combine") {
  detail::moe_check_scope<Coop>(h, call);
  detail::MoeEnv env{{h, nullptr}};
  const uint64_t n = bound_m != nullptr ? *bound_m : m;
  moe::combine<Coop, TY, TO>(env, p, static_cast<char*>(ws), call_no, out_tokens, indices, weights, expert_y, n,
                             call);
}

// Checks one dispatch's routing on the device: every index below E, no expert twice in a token. The group splits
// the tokens; a bad one traps with the position (the host cannot read device indices without synchronising).
template <typename Coop>
__device__ __forceinline__ void moe_check_indices(const DeviceHandle& h, const moe::Plan& p, const uint32_t* indices,
                                                  uint64_t m, const char* call) {
  const uint64_t K = p.experts_per_token;
  for (uint64_t i = static_cast<uint64_t>(Coop::rank()); i < m; i += static_cast<uint64_t>(Coop::size()))
    for (uint64_t k = 0; k < K; ++k) {
      const uint32_t e = indices[i * K + k];
      if (e >= p.num_experts) detail::trap_moe_index(h, call, i, k, e, p.num_experts);
      for (uint64_t k2 = 0; k2 < k; ++k2)
        if (indices[i * K + k2] == e) detail::trap_moe_duplicate(h, call, i, e, k2, k);
    }
}

// The stream kernels' dispatch (the whole grid of src/transport/gpu_moe.cu as one group, MoeGrid; any group
// works): the call number from the workspace's state words, the data checked, the algorithm, then the state
// advanced. `rows`: token rows passed (<= T, checked by the host entry); bound_m (device) or rows is m. `abort`: the
// library's peer-failure word (its waits stop when a peer died). Every thread reads the state words itself (written
// by an earlier kernel, or by this one's rank 0 only after the algorithm's last sync).
template <typename Coop>
__device__ __forceinline__ void moe_dispatch_counted(const DeviceHandle& h, const moe::Plan& p, void* ws_,
                                                     int32_t* out_expert_num_tokens, void* out_expert_x,
                                                     void* out_expert_x_scale, const void* dp_x,
                                                     const void* dp_x_scale, const uint32_t* indices, uint64_t rows,
                                                     const uint32_t* bound_m, const volatile int* abort,
                                                     const char* call) {
  char* ws = static_cast<char*>(ws_);
  uint64_t* st = moe::state_word(p, ws, 0);
  detail::moe_check_scope<Coop>(h, call);
  const uint64_t m = detail::moe_tokens(h, bound_m, rows, p, call);
  const uint64_t d = st[moe::kStateDispatches], call_no = d + 1;
  if (Coop::rank() == 0 && d != st[moe::kStateCombines])
    detail::trap_moe_order(h, call, true, d, st[moe::kStateCombines]);
  moe_check_indices<Coop>(h, p, indices, m, call);
  Coop::sync();  // nothing is sent before every check passed
  detail::MoeEnv env{{h, abort}};
  moe::dispatch<Coop>(env, p, ws, call_no, out_expert_num_tokens, static_cast<char*>(out_expert_x),
                      static_cast<char*>(out_expert_x_scale), static_cast<const char*>(dp_x),
                      static_cast<const char*>(dp_x_scale), indices, m, call);
  // dispatch ends with a sync: every thread has read the state before this store.
  if (Coop::rank() == 0) {
    st[moe::kStateTokens] = m;
    st[moe::kStateDispatches] = call_no;
  }
}

template <typename Coop, typename TY, typename TO>
__device__ __forceinline__ void moe_combine_counted(const DeviceHandle& h, const moe::Plan& p, void* ws_,
                                                    TO* out_tokens, const uint32_t* indices, const float* weights,
                                                    const TY* expert_y, uint64_t rows, const uint32_t* bound_m,
                                                    const volatile int* abort, const char* call) {
  char* ws = static_cast<char*>(ws_);
  uint64_t* st = moe::state_word(p, ws, 0);
  detail::moe_check_scope<Coop>(h, call);
  const uint64_t m = detail::moe_tokens(h, bound_m, rows, p, call);
  const uint64_t call_no = st[moe::kStateDispatches];
  if (Coop::rank() == 0) {
    const uint64_t c = st[moe::kStateCombines];
    if (call_no != c + 1) detail::trap_moe_order(h, call, false, call_no, c);
    if (st[moe::kStateTokens] != m) detail::trap_moe_tokens(h, call, m, st[moe::kStateTokens]);
  }
  Coop::sync();  // nothing is sent before the checks passed
  detail::MoeEnv env{{h, abort}};
  moe::combine<Coop, TY, TO>(env, p, ws, call_no, out_tokens, indices, weights, expert_y, m, call);
  // combine ends with its done flags, stored by rank 0 after a sync: every thread has read the state before.
  if (Coop::rank() == 0) st[moe::kStateCombines] = call_no;
}

}  // namespace dev
}  // namespace gshmem
