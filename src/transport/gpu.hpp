// GPU transport for GPU PEs: device selection, the per-PE CUDA context (streams, pinned scratch), host-blocking
// copies and atomics on NVLink-mapped peer memory, and the stream-ordered operations. Implemented in
// gpu_*_cuda.cpp / *.cu with CUDA; gpu_nocuda.cpp reports "built without GPU support" in CPU-only builds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "gshmem/gshmem.h"
#include "gshmem/coll/algorithms.h"
#include "gshmem/moe/dispatch_combine.h"
#include "gshmem/team_value.h"

namespace gshmem {
class Runtime;
}

namespace gshmem::gpu {

struct Context;

// Whether GPU PEs are possible here; `why` gets the reason when not.
bool available(std::string* why);
int device_count();
// Binds this process to a GPU: the device of the CUDA context already current on this thread (the program chose
// one), else local_index % device_count(). Fills the PCI bus id ("0000:18:00.0").
int select_device(int local_index, int local_size, char pci_bus_id[16]);

Context* create_context(Runtime& rt);
void destroy_context(Context* ctx) noexcept;

// ---- host-initiated, blocking unless noted ----
void copy(Context* ctx, void* dst, const void* src, std::size_t bytes, bool nbi);
void copy_strided(Context* ctx, void* dst, const void* src, std::size_t elem, std::ptrdiff_t dst_stride,
                  std::ptrdiff_t src_stride, std::size_t n, bool nbi);
void memset_zero(Context* ctx, void* dst, std::size_t bytes);
// Reads `bytes` (at most kLoadMax) at `src` (device memory, possibly a peer's) into host memory at `out` through
// the context's pinned scratch: cheaper than a copy into pageable memory (bench/NOTES.md entry 14).
inline constexpr std::size_t kLoadMax = 64;
void load(Context* ctx, void* out, const void* src, std::size_t bytes);
void quiet(Context* ctx);  // completes every nbi operation this PE issued from the host
// Called by the runtime's watchdog when a peer PE died: library kernels spinning on peers stop (trap) at once.
void signal_peer_failure(Context* ctx) noexcept;
// The mapped pinned word behind signal_peer_failure (host address == device address), for device-side waits.
int* peer_failure_flag(Context* ctx);
// The PE's GPU (CUDA ordinal): every entry point here makes it current on the calling thread (cuda::DeviceScope).
int device_of(Context* ctx);
// Whether this PE's stream kernels are launched overlapped with the previous kernel (transport/stream_kernel.cuh).
bool overlap_launch(Context* ctx);
// The in-order stream of host-initiated operations (the blocking host collectives run their kernel on it).
gshmem_stream_t internal_stream(Context* ctx);
// A broadcast root's copies by the copy engines (collective_on_stream's ce_peer_dest): `bytes` from src (device
// memory) to peer_dest on `s`, and to dest (unless dest == src) on a second stream of `s`'s own at the same time,
// forked from and joined back into `s` with events (so stream order and graph capture hold, and calls on other
// streams stay independent). Returns the first CUDA error (a cudaError_t).
int copy_engine_broadcast(Context* ctx, gshmem_stream_t s, void* peer_dest, void* dest, const void* src,
                          std::size_t bytes);
// fcollect's and alltoall's copies on a team of 2 by the copy engines (collective_on_stream's ce_peer_dest): `bytes`
// from peer_src to peer_dest on `s` and from src to dest on the second stream, the same way.
int copy_engine_exchange(Context* ctx, gshmem_stream_t s, void* peer_dest, const void* peer_src, void* dest,
                         const void* src, std::size_t bytes);
// cudaDeviceSynchronize with a checked result naming `call`: waits for the program's stream work as well.
void synchronize_device(Context* ctx, const char* call);
// A team slot is being (re)used by a new team: zero this PE's stream-barrier flags and epoch for it.
void reset_team_slot(Context* ctx, int slot);

enum class AmoOp : int { Fetch, Set, Swap, CompareSwap, FetchAdd, FetchAnd, FetchOr, FetchXor };
// One atomic on `target` (an address mapped in this process, possibly a peer's), 4 or 8 bytes wide.
std::uint64_t amo(Context* ctx, void* target, int bytes, AmoOp op, std::uint64_t value, std::uint64_t cond);
// A signal update (GSHMEM_SIGNAL_SET or _ADD) on `sig` (mapped, possibly a peer's) from the in-order stream of
// host-initiated operations, after everything issued before it; not waited for (quiet completes it).
void signal_nbi(Context* ctx, std::uint64_t* sig, std::uint64_t value, int sig_op);

// ---- stream-ordered (capturable in CUDA graphs) ----
void copy_on_stream(Context* ctx, void* dst, const void* src, std::size_t bytes, gshmem_stream_t s);
void store_on_stream(Context* ctx, void* dst, std::uint64_t value, int bytes, gshmem_stream_t s);
void signal_on_stream(Context* ctx, std::uint64_t* sig, std::uint64_t value, int sig_op, gshmem_stream_t s);
// `bytes` from src (this PE's memory) to dst, then the signal at sig (dst and sig: the target PE's, translated):
// one kernel where 0 < bytes <= GSHMEM_PUT_SIGNAL_KERNEL_BYTES and src is device memory of this GPU (known when
// src_in_heap, else asked of CUDA), else copy_on_stream then signal_on_stream.
void put_signal_on_stream(Context* ctx, void* dst, const void* src, std::size_t bytes, bool src_in_heap,
                          std::uint64_t* sig, std::uint64_t value, int sig_op, gshmem_stream_t s);
void wait_on_stream(Context* ctx, std::uint64_t* sig, int cmp, std::uint64_t value, gshmem_stream_t s);
void quiet_on_stream(Context* ctx, gshmem_stream_t s);
// Barrier over team slot `slot` on the stream (team value t: strided or a member list, t.my_rank this PE): one
// release, then flat flags up to kMaxRounds members, dissemination above; graph-replay safe (epochs live in device
// memory).
void barrier_on_stream(Context* ctx, int slot, const TeamValue& t, gshmem_stream_t s);

}  // namespace gshmem::gpu

// ==== Stream-ordered strided copies, reads and typed waits for the NVSHMEM-compatible host calls. ====
// Implemented in gpu_stream_wait.cu (CUDA builds) and gpu_stream_nocuda.cpp (CPU-only builds, "not supported").
namespace gshmem::gpu {

enum class WaitType : int { I16, U16, I32, U32, I64, U64 };  // element type of a stream-ordered wait

// Strided copy (cudaMemcpy2DAsync) on the user's stream; strides in elements of `elem` bytes.
void copy_strided_on_stream(Context* ctx, void* dst, const void* src, std::size_t elem, std::ptrdiff_t dst_stride,
                            std::ptrdiff_t src_stride, std::size_t n, gshmem_stream_t s, const char* call);
// Blocks until everything enqueued on `s` so far has run; refused (naming `call`) while `s` is being captured.
void synchronize_stream(Context* ctx, gshmem_stream_t s, const char* call);
// Refuses (naming `call`) a call that must block on `s` while `s` is being captured into a CUDA graph.
void refuse_capture(Context* ctx, gshmem_stream_t s, const char* call);
// Whether a kernel on this PE's GPU can read `p` (device, managed or pinned memory, or pageable memory on systems
// with pageable-memory access).
bool device_accessible(Context* ctx, const void* p);
// Enqueues a one-thread kernel that waits until ivars[i] (cmp) value -- or values[i] when `values` is non-null --
// holds for every i < n with status == nullptr or status[i] == 0. Bounded by GSHMEM_WAIT_TIMEOUT; stops at once
// when a peer PE failed (peer_failure_flag). `call` names the API call in the kernel's messages.
void wait_all_on_stream(Context* ctx, const void* ivars, std::size_t n, const int* status, WaitType type, int cmp,
                        std::uint64_t value, const void* values, gshmem_stream_t s, const char* call);

}  // namespace gshmem::gpu
// ==== end of the stream-ordered compat block ====

// ==== Collectives (gshmem/coll/algorithms.h) on GPU PEs: gpu_coll.cu; gpu_stream_nocuda.cpp in CPU-only builds ====
namespace gshmem::gpu {
enum class CollKind : int { Broadcast, Fcollect, Alltoall, Alltoalls };
// One CTA on `s` runs the collective's block-scope routine over team value `t` (slot = its handle) with the device
// state `h` (its peer translation and collective workspace): coll::broadcast of x.elem * x.nelems bytes from team
// index `root`, or coll::exchange of `x` (the others). `s` null: on the context's internal stream, waited for (the
// blocking host forms). Bounded by GSHMEM_WAIT_TIMEOUT; stops when a peer died. `ce_peer_dest` (broadcast on a
// team of 2, root only; fcollect and alltoall on a team of 2; else null): the other member's dest; this member then
// copies by the copy engines between the two syncs (GSHMEM_COLL_BCAST_CE_BYTES, GSHMEM_COLL_EXCHANGE_CE_BYTES)
// instead of by its kernel (above the LL and staged limits).
void collective_on_stream(Context* ctx, CollKind kind, const gshmem_device_state_t& h, const TeamValue& t, int slot,
                          void* dest, const void* src, const coll::Exchange& x, int root, gshmem_stream_t s,
                          const char* call, void* ce_peer_dest = nullptr);
// Element types of the reductions (the order of gshmem::host::ReduceType).
enum class ReduceType : int { Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Float, Double, Half, Bfloat16 };
// The same for coll::reduce (scatter false) / coll::reducescatter (true) of `op` over `nelems` elements of `type`
// (and/or/xor on a floating type: not called; the host layer's type lists exclude it). `ce_peer_dest` (reduce on a
// team of 2 from GSHMEM_COLL_REDUCE_CE_BYTES, else null): the other member's dest; the reduce then runs two-shot
// with its gather by the copy engine (launch_reduce).
void reduction_on_stream(Context* ctx, coll::ReduceOp op, ReduceType type, bool scatter,
                         const gshmem_device_state_t& h, const TeamValue& t, int slot, void* dest, const void* src,
                         std::size_t nelems, gshmem_stream_t s, const char* call, void* ce_peer_dest = nullptr);
}  // namespace gshmem::gpu

// ==== MoE dispatch / combine (gshmem/moe/device.cuh) on GPU PEs: gpu_moe.cu; gpu_stream_nocuda.cpp in CPU-only
// builds ====
namespace gshmem::gpu {
// A cooperative grid of GSHMEM_MOE_THREADS-thread blocks on `s` runs dev::moe_dispatch_counted /
// moe_combine_counted over plan `p` and the symmetric workspace `ws` (the call number and the dispatch's m in its
// state words: graph-replay safe). `rows`: token rows passed (<= T); bound_m: device memory with the live count, or
// null for rows. Types: Float, Half or Bfloat16. `blocking`: on the context's internal stream, waited for (the
// blocking host forms); otherwise on `s` (0: CUDA's default stream) and nothing here waits (capturable). `call`
// names the API call in launch errors and in the kernel's messages (device traps on bad indices, bound_m above
// rows, dispatch / combine out of order, and GSHMEM_WAIT_TIMEOUT).
void moe_dispatch_on_stream(Context* ctx, const gshmem_device_state_t& h, const moe::Plan& p, void* ws,
                            std::int32_t* out_expert_num_tokens, void* out_expert_x, void* out_expert_x_scale,
                            const void* dp_x, const void* dp_x_scale, const std::uint32_t* indices, std::size_t rows,
                            const std::uint32_t* bound_m, gshmem_stream_t s, bool blocking, const char* call);
void moe_combine_on_stream(Context* ctx, const gshmem_device_state_t& h, const moe::Plan& p, void* ws,
                           void* out_tokens, ReduceType out_type, const std::uint32_t* indices, const float* weights,
                           const void* expert_y, ReduceType y_type, std::size_t rows, const std::uint32_t* bound_m,
                           gshmem_stream_t s, bool blocking, const char* call);
}  // namespace gshmem::gpu
