// gshmem C++ API: the host API with exceptions and RAII.
//
//   gshmem::Context ctx;                        // init (gshmemrun, mpirun, torchrun env, or single PE)
//   gshmem::Buffer<int> buf(ctx, 8);             // symmetric: every PE allocates, freed on destruction
//   buf.put(src, 8, (ctx.my_pe() + 1) % ctx.n_pes());
//   ctx.barrier_all();
//
// Every failure throws gshmem::Error carrying a GSHMEM_* status and a message naming the call, the cause and
// the fix. The free functions in gshmem::host are the layer both this header and the C API stand on.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "gshmem/gshmem.h"

namespace gshmem {

class GSHMEM_API Error : public std::runtime_error {
 public:
  Error(int status, std::string message) : std::runtime_error(std::move(message)), status_(status) {}
  ~Error() override;
  int status() const noexcept { return status_; }

 private:
  int status_;
};

// ---- the throwing host layer (exported by libgshmem) ----
namespace host {
enum class Wait : int { I16, U16, I32, U32, I64, U64 };  // how wait_until/test compare
enum class Amo : int { Fetch, Set, Swap, CompareSwap, FetchAdd, FetchAnd, FetchOr, FetchXor };

GSHMEM_API void init(unsigned flags, const gshmemx_init_attr_t* attr, int major, int minor, int patch);
GSHMEM_API void finalize();
// This PE ends without finalize: tells the other PEs now (they fail their waits naming it and `how`) instead of at
// exit(). For hosts whose own shutdown can block before exit() runs (a Python program ending on an unhandled
// exception while mpi4py's MPI_Finalize waits for the other ranks). Nothing happens when not initialised.
GSHMEM_API void leave(const char* how);
GSHMEM_API bool initialized();
GSHMEM_API int my_pe();
GSHMEM_API int n_pes();
GSHMEM_API void query_device(int* ordinal, int* count);
GSHMEM_API double init_ms();
GSHMEM_API void get_unique_id(gshmemx_uniqueid_t* uid);

GSHMEM_API void* malloc(std::size_t bytes, std::size_t alignment, bool zero, const char* call);
GSHMEM_API void free(void* p);
GSHMEM_API void* ptr(const void* p, int pe);
GSHMEM_API gshmemx_heap_usage_t heap_usage();

GSHMEM_API void putmem(void* dest, const void* src, std::size_t bytes, int pe, bool nbi, const char* call);
GSHMEM_API void getmem(void* dest, const void* src, std::size_t bytes, int pe, bool nbi, const char* call);
// Blocking read of one small object (g): `out` is host memory of `bytes`.
GSHMEM_API void g(void* out, const void* src, std::size_t bytes, int pe, const char* call);
// Strides are in elements of `elem` bytes.
GSHMEM_API void iput(void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t elem,
                     std::size_t nelems, int pe, const char* call);
GSHMEM_API void iget(void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t elem,
                     std::size_t nelems, int pe, const char* call);
// One atomic of `bytes` (4 or 8) on dest at pe; returns the old value where the op fetches.
GSHMEM_API std::uint64_t atomic(void* dest, int bytes, Amo op, std::uint64_t value, std::uint64_t cond, int pe,
                                const char* call);
// Waits on this PE's own symmetric `ivar` until (ivar cmp value); returns false from test() if not yet true.
GSHMEM_API void wait_until(const void* ivar, Wait kind, int cmp, std::uint64_t value, const char* call);
GSHMEM_API bool test(const void* ivar, Wait kind, int cmp, std::uint64_t value, const char* call);

GSHMEM_API void quiet();
GSHMEM_API void fence();
GSHMEM_API void barrier(gshmem_team_t team, bool with_quiet, const char* call);

GSHMEM_API void putmem_signal(void* dest, const void* src, std::size_t bytes, std::uint64_t* sig,
                              std::uint64_t signal, int sig_op, int pe, bool nbi, const char* call);
GSHMEM_API void signal_op(std::uint64_t* sig, std::uint64_t signal, int sig_op, int pe, const char* call);
GSHMEM_API std::uint64_t signal_fetch(const std::uint64_t* sig);
GSHMEM_API std::uint64_t signal_wait_until(std::uint64_t* sig, int cmp, std::uint64_t value);

GSHMEM_API int team_my_pe(gshmem_team_t team);
GSHMEM_API int team_n_pes(gshmem_team_t team);
GSHMEM_API int team_translate_pe(gshmem_team_t src, int src_pe, gshmem_team_t dest);
GSHMEM_API gshmem_team_t team_split_strided(gshmem_team_t parent, int start, int stride, int size);
GSHMEM_API void team_split_2d(gshmem_team_t parent, int xrange, gshmem_team_t* xteam, gshmem_team_t* yteam);
GSHMEM_API void team_destroy(gshmem_team_t team);
// gshmemx_team_get_uniqueid's value (random, never 0 or UINT64_MAX) and gshmemx_team_init (see gshmem.h).
GSHMEM_API std::uint64_t team_uniqueid();
GSHMEM_API gshmem_team_t team_init(std::uint64_t uniqueid, int npes, int pe_idx_in_team);

GSHMEM_API void putmem_on_stream(void* dest, const void* src, std::size_t bytes, int pe, gshmem_stream_t s,
                                 const char* call);
GSHMEM_API void getmem_on_stream(void* dest, const void* src, std::size_t bytes, int pe, gshmem_stream_t s,
                                 const char* call);
GSHMEM_API void p_on_stream(void* dest, std::uint64_t value, int bytes, int pe, gshmem_stream_t s,
                            const char* call);
GSHMEM_API void putmem_signal_on_stream(void* dest, const void* src, std::size_t bytes, std::uint64_t* sig,
                                        std::uint64_t signal, int sig_op, int pe, gshmem_stream_t s,
                                        const char* call);
GSHMEM_API void signal_op_on_stream(std::uint64_t* sig, std::uint64_t signal, int sig_op, int pe,
                                    gshmem_stream_t s);
GSHMEM_API void signal_wait_until_on_stream(std::uint64_t* sig, int cmp, std::uint64_t value, gshmem_stream_t s);
GSHMEM_API void quiet_on_stream(gshmem_stream_t s);
GSHMEM_API void barrier_on_stream(gshmem_team_t team, bool with_quiet, gshmem_stream_t s, const char* call);
// Strided transfer on the stream (strides in elements of `elem` bytes).
GSHMEM_API void iput_on_stream(void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t elem,
                               std::size_t nelems, int pe, gshmem_stream_t s, const char* call);
GSHMEM_API void iget_on_stream(void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t elem,
                               std::size_t nelems, int pe, gshmem_stream_t s, const char* call);
// Reads `bytes` (1..16) of PE pe's `src` after the work already on the stream; blocks until the stream got there.
GSHMEM_API void g_on_stream(void* out, const void* src, std::size_t bytes, int pe, gshmem_stream_t s,
                            const char* call);
// Stream-ordered waits on this PE's symmetric ivar(s); `values` (device-accessible) non-null for the _vector form.
GSHMEM_API void wait_until_on_stream(const void* ivar, Wait kind, int cmp, std::uint64_t value, gshmem_stream_t s,
                                     const char* call);
GSHMEM_API void wait_until_all_on_stream(const void* ivars, std::size_t n, const int* status, Wait kind, int cmp,
                                         std::uint64_t value, const void* values, gshmem_stream_t s,
                                         const char* call);

// Collectives (gshmem/coll/algorithms.h): every member of `team` calls with the same arguments; blocks of
// `nelems` elements of `elem` bytes; `root` is a team index (broadcast only). On return dest is complete on this
// PE and src may be reused. The _on_stream form enqueues the whole collective on `s` (GPU PEs). alltoalls: the
// strided alltoall (element l of block j at src + elem * sst * (j * nelems + l) lands at dest + elem * dst *
// (i * nelems + l) of member j; strides in elements, at least 1).
enum class Coll : int { Broadcast, Fcollect, Alltoall, Alltoalls };
GSHMEM_API void collective(Coll kind, gshmem_team_t team, void* dest, const void* src, std::size_t nelems,
                           std::size_t elem, int root, const char* call);
GSHMEM_API void collective_on_stream(Coll kind, gshmem_team_t team, void* dest, const void* src,
                                     std::size_t nelems, std::size_t elem, int root, gshmem_stream_t s,
                                     const char* call);
GSHMEM_API void alltoalls(gshmem_team_t team, void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst,
                          std::size_t nelems, std::size_t elem, const char* call);
// Reductions (gshmem/coll/algorithms.h): reduce (every member gets op over all members' source, nelems
// elements; dest == src allowed) and reducescatter (member i gets op over block i of every member's source of
// size * nelems elements). The element type by its kind and width (every C type of NVSHMEM's reduction lists is
// one of these; Half and Bfloat16 are CUDA's __half and __nv_bfloat16, combined in float and rounded to nearest
// even after every step); the op as gshmem::coll::ReduceOp orders them. The values are those of gshmem.h's
// GSHMEMI_REDUCE_* (the C entry gshmemi_reduction).
enum class ReduceOp : int { And, Or, Xor, Max, Min, Sum, Prod };
enum class ReduceType : int { Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Float, Double, Half, Bfloat16 };
GSHMEM_API void reduction(ReduceOp op, ReduceType type, bool scatter, gshmem_team_t team, void* dest,
                          const void* src, std::size_t nelems, const char* call);
GSHMEM_API void reduction_on_stream(ReduceOp op, ReduceType type, bool scatter, gshmem_team_t team, void* dest,
                                    const void* src, std::size_t nelems, gshmem_stream_t s, const char* call);

// MoE dispatch / combine with pplx-kernels' semantics (gshmem/moe/dispatch_combine.h, docs/moe.md). The
// configuration is pplx's AllToAll constructor's, less rank and world size (this PE and the world's). Every PE
// creates one with the same configuration (collective: it allocates a symmetric workspace), then calls dispatch
// and combine alternately, each on every PE. CPU PEs: blocking calls on host memory. GPU PEs: the workspace is in GPU
// memory and each call is one kernel; the buffers must be GPU-readable (device, managed or pinned memory); the
// blocking forms run it on an internal stream and wait, the _on_stream forms enqueue it on the program's stream
// (no host synchronisation, capturable in CUDA graphs: the call count lives in device memory). On GPU PEs the checks
// that need the token data (an index >= num_experts, an expert twice in a token, bound_m above num_tokens, dispatch
// and combine out of order, combine with another m) run in the kernel, which prints the call, cause and fix and
// traps; the blocking form then throws, the stream form's error shows at the program's next synchronisation.
// Passed on 2 x H200 (docs/moe.md, "Measured on 2 x H200").
struct MoeConfig {
  std::uint64_t max_num_tokens;          // tokens per data-parallel group and call, at most
  std::uint64_t num_experts;             // E over all PEs; PE p holds experts [p * L, p * L + L), L = ceil(E / W)
  std::uint64_t experts_per_token;       // K: columns of indices and weights (1..64)
  std::uint64_t hidden_dim;              // elements of an expert output row (combine)
  std::uint64_t hidden_dim_bytes;        // bytes of a token row (dispatch), a multiple of 16
  std::uint64_t hidden_dim_scale_bytes;  // bytes of a token's scale row (0: no scales), a multiple of 16
  std::int32_t dp_size;                  // PEs per data-parallel group (they hold the same tokens); divides W
  std::int32_t reserved;                 // 0
};
static_assert(sizeof(MoeConfig) == 56, "MoeConfig is plain data");
class MoeState;
GSHMEM_API MoeState* moe_create(const MoeConfig& config, const char* call);
GSHMEM_API void moe_destroy(MoeState* s, const char* call);
// dispatch: dp_x [num_tokens][hidden_dim_bytes] (+ dp_x_scale [num_tokens][hidden_dim_scale_bytes]) and indices
// [num_tokens][K] (expert ids) in; out_expert_num_tokens [L], out_expert_x [L][max_num_tokens * G]
// [hidden_dim_bytes] (+ out_expert_x_scale likewise) out, G = W / dp_size. num_tokens is pplx's bound_m.
GSHMEM_API void moe_dispatch(MoeState* s, std::int32_t* out_expert_num_tokens, void* out_expert_x,
                             void* out_expert_x_scale, const void* dp_x, const void* dp_x_scale,
                             const std::uint32_t* indices, std::size_t num_tokens, const char* call);
// combine: expert_y [L][max_num_tokens * G][hidden_dim] of y_type in (the rows of the last dispatch's out_expert_x,
// same order); out_tokens [num_tokens][hidden_dim] of out_type = the weighted sum over each token's experts
// (weights [num_tokens][K], fp32, summed in float in k order with fused multiply-adds). Types: Float, Half,
// Bfloat16. indices and num_tokens: the last dispatch's.
GSHMEM_API void moe_combine(MoeState* s, void* out_tokens, ReduceType out_type, const std::uint32_t* indices,
                            const float* weights, const void* expert_y, ReduceType y_type, std::size_t num_tokens,
                            const char* call);
// Stream forms (GPU PEs only): the same, enqueued on `stream` (0: CUDA's default stream). num_tokens: the rows of
// indices / dp_x / weights / out_tokens passed (<= max_num_tokens); bound_m: GPU memory holding the live token
// count m <= num_tokens (pplx's one-element uint32 tensor), read by the kernel, or null for m = num_tokens. Combine
// must follow its dispatch in stream order, with the same m.
GSHMEM_API void moe_dispatch_on_stream(MoeState* s, std::int32_t* out_expert_num_tokens, void* out_expert_x,
                                       void* out_expert_x_scale, const void* dp_x, const void* dp_x_scale,
                                       const std::uint32_t* indices, std::size_t num_tokens,
                                       const std::uint32_t* bound_m, gshmem_stream_t stream, const char* call);
GSHMEM_API void moe_combine_on_stream(MoeState* s, void* out_tokens, ReduceType out_type,
                                      const std::uint32_t* indices, const float* weights, const void* expert_y,
                                      ReduceType y_type, std::size_t num_tokens, const std::uint32_t* bound_m,
                                      gshmem_stream_t stream, const char* call);

GSHMEM_API void* realloc(void* p, std::size_t bytes);
// Thread level provided at init (GSHMEM_THREAD_*), and the level to report for the next init.
GSHMEM_API int thread_level();
GSHMEM_API void init_thread(int requested, int* provided, int major, int minor, int patch);
GSHMEM_API void buffer_register(void* addr, std::size_t length);
GSHMEM_API void buffer_unregister(void* addr);
GSHMEM_API void buffer_unregister_all();
GSHMEM_API void* buffer_register_symmetric(void* buf, std::size_t size, int flags);
GSHMEM_API void buffer_unregister_symmetric(void* mmap_ptr, std::size_t size);
}  // namespace host

// ---- RAII ----
class UniqueId {
 public:
  // On the rank that creates it (rank 0): a fresh id; share bytes() with the other ranks, which use from_bytes.
  static UniqueId create() {
    UniqueId u;
    host::get_unique_id(&u.id_);
    return u;
  }
  static UniqueId from_bytes(const void* bytes) {
    UniqueId u;
    std::memcpy(&u.id_, bytes, sizeof u.id_);
    return u;
  }
  const void* bytes() const { return &id_; }
  static constexpr std::size_t size() { return sizeof(gshmemx_uniqueid_t); }
  const gshmemx_uniqueid_t& raw() const { return id_; }

 private:
  gshmemx_uniqueid_t id_ = GSHMEMX_UNIQUEID_INITIALIZER;
};

class Team {
 public:
  Team() = default;
  explicit Team(gshmem_team_t handle, bool owned = false) : h_(handle), owned_(owned) {}
  Team(Team&& o) noexcept : h_(std::exchange(o.h_, GSHMEM_TEAM_INVALID)), owned_(std::exchange(o.owned_, false)) {}
  Team& operator=(Team&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, GSHMEM_TEAM_INVALID);
      owned_ = std::exchange(o.owned_, false);
    }
    return *this;
  }
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;
  ~Team() { reset(); }

  static Team world() { return Team(GSHMEM_TEAM_WORLD); }
  static Team node() { return Team(GSHMEMX_TEAM_NODE); }
  static Team shared() { return Team(GSHMEM_TEAM_SHARED); }

  gshmem_team_t handle() const { return h_; }
  bool valid() const { return h_ != GSHMEM_TEAM_INVALID; }
  int my_pe() const { return host::team_my_pe(h_); }
  int n_pes() const { return host::team_n_pes(h_); }
  int translate(int pe, const Team& to) const { return host::team_translate_pe(h_, pe, to.h_); }
  // Collective over this team; returns an invalid Team on PEs that are not members.
  Team split_strided(int start, int stride, int size) const {
    return Team(host::team_split_strided(h_, start, stride, size), true);
  }
  std::pair<Team, Team> split_2d(int xrange) const {
    gshmem_team_t x, y;
    host::team_split_2d(h_, xrange, &x, &y);
    return {Team(x, true), Team(y, true)};
  }
  void barrier() const { host::barrier(h_, true, "gshmem::Team::barrier"); }
  void sync() const { host::barrier(h_, false, "gshmem::Team::sync"); }
  void barrier_on_stream(gshmem_stream_t s) const { host::barrier_on_stream(h_, true, s, "gshmem::Team::barrier_on_stream"); }

 private:
  void reset() noexcept {
    if (owned_ && h_ != GSHMEM_TEAM_INVALID && host::initialized()) {
      try {
        host::team_destroy(h_);
      } catch (...) {
      }
    }
    h_ = GSHMEM_TEAM_INVALID;
    owned_ = false;
  }
  gshmem_team_t h_ = GSHMEM_TEAM_INVALID;
  bool owned_ = false;
};

// Initialises gshmem on construction (once per process) and finalises on destruction.
class Context {
 public:
  Context() { host::init(0, nullptr, GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH); cache(); }
  explicit Context(const UniqueId& id, int rank, int nranks) {
    gshmemx_init_attr_t attr = GSHMEMX_INIT_ATTR_INITIALIZER;
    attr.args.uid_args.myrank = rank;
    attr.args.uid_args.nranks = nranks;
    attr.args.uid_args.id = const_cast<gshmemx_uniqueid_t*>(&id.raw());  // only read
    host::init(GSHMEMX_INIT_WITH_UNIQUEID, &attr, GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH);
    cache();
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context() {
    try {
      host::finalize();
    } catch (...) {
    }
  }
  int my_pe() const { return pe_; }
  int n_pes() const { return n_; }
  // CUDA ordinal of this PE's GPU, or -1 for a CPU PE.
  int device() const {
    int d = -1;
    host::query_device(&d, nullptr);
    return d;
  }
  bool on_gpu() const { return device() >= 0; }
  void quiet() const { host::quiet(); }
  void fence() const { host::fence(); }
  void barrier_all() const { host::barrier(GSHMEM_TEAM_WORLD, true, "gshmem::Context::barrier_all"); }
  void sync_all() const { host::barrier(GSHMEM_TEAM_WORLD, false, "gshmem::Context::sync_all"); }
  void barrier_all_on_stream(gshmem_stream_t s) const {
    host::barrier_on_stream(GSHMEM_TEAM_WORLD, true, s, "gshmem::Context::barrier_all_on_stream");
  }
  void quiet_on_stream(gshmem_stream_t s) const { host::quiet_on_stream(s); }
  gshmemx_heap_usage_t heap_usage() const { return host::heap_usage(); }

 private:
  void cache() {
    pe_ = host::my_pe();
    n_ = host::n_pes();
  }
  int pe_ = 0, n_ = 1;
};

// A symmetric array of T: allocated collectively on construction, freed collectively on destruction.
template <typename T>
class Buffer {
  static_assert(std::is_trivially_copyable_v<T>, "gshmem::Buffer<T> needs a trivially copyable T");

 public:
  Buffer() = default;
  Buffer(const Context&, std::size_t count, bool zero = false)
      : p_(static_cast<T*>(host::malloc(count * sizeof(T), alignof(T) > 16 ? alignof(T) : 16, zero,
                                        "gshmem::Buffer"))),
        n_(count) {}
  Buffer(Buffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { release(); }

  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  // Direct pointer to PE pe's copy (device memory on GPU PEs), or nullptr.
  T* peer(int pe) const { return static_cast<T*>(host::ptr(p_, pe)); }

  // One-sided transfers of `count` elements starting at element `offset` of this buffer on PE pe.
  void put(const T* src, std::size_t count, int pe, std::size_t offset = 0) const {
    host::putmem(p_ + offset, src, count * sizeof(T), pe, false, "gshmem::Buffer::put");
  }
  void put_nbi(const T* src, std::size_t count, int pe, std::size_t offset = 0) const {
    host::putmem(p_ + offset, src, count * sizeof(T), pe, true, "gshmem::Buffer::put_nbi");
  }
  void get(T* dst, std::size_t count, int pe, std::size_t offset = 0) const {
    host::getmem(dst, p_ + offset, count * sizeof(T), pe, false, "gshmem::Buffer::get");
  }
  void p(std::size_t index, const T& v, int pe) const {
    host::putmem(p_ + index, &v, sizeof(T), pe, false, "gshmem::Buffer::p");
  }
  T g(std::size_t index, int pe) const {
    T v;
    host::g(&v, p_ + index, sizeof(T), pe, "gshmem::Buffer::g");
    return v;
  }
  void put_on_stream(const T* src, std::size_t count, int pe, gshmem_stream_t s, std::size_t offset = 0) const {
    host::putmem_on_stream(p_ + offset, src, count * sizeof(T), pe, s, "gshmem::Buffer::put_on_stream");
  }
  void get_on_stream(T* dst, std::size_t count, int pe, gshmem_stream_t s, std::size_t offset = 0) const {
    host::getmem_on_stream(dst, p_ + offset, count * sizeof(T), pe, s, "gshmem::Buffer::get_on_stream");
  }

 private:
  void release() noexcept {
    if (p_ && host::initialized()) {
      try {
        host::free(p_);
      } catch (...) {
      }
    }
    p_ = nullptr;
    n_ = 0;
  }
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// MoE all-to-all (pplx-kernels' AllToAll): created collectively, dispatch and combine alternately on every PE.
//   gshmem::MoeAllToAll ata({max_tokens, experts, topk, hidden, hidden * 2, 0, dp_size, 0});
//   ata.dispatch(counts, expert_x, nullptr, x, nullptr, indices, m);
//   ata.combine(out, host::ReduceType::Bfloat16, indices, weights, expert_y, host::ReduceType::Bfloat16, m);
// GPU PEs also: ata.dispatch_on_stream(..., m, bound_m, stream) / ata.combine_on_stream(..., m, bound_m, stream).
class MoeAllToAll {
 public:
  explicit MoeAllToAll(const host::MoeConfig& config) : s_(host::moe_create(config, "gshmem::MoeAllToAll")) {}
  MoeAllToAll(const MoeAllToAll&) = delete;
  MoeAllToAll& operator=(const MoeAllToAll&) = delete;
  ~MoeAllToAll() {
    if (s_ && host::initialized()) {
      try {
        host::moe_destroy(s_, "gshmem::MoeAllToAll::~MoeAllToAll");
      } catch (...) {
      }
    }
  }
  void dispatch(std::int32_t* out_expert_num_tokens, void* out_expert_x, void* out_expert_x_scale, const void* dp_x,
                const void* dp_x_scale, const std::uint32_t* indices, std::size_t num_tokens) const {
    host::moe_dispatch(s_, out_expert_num_tokens, out_expert_x, out_expert_x_scale, dp_x, dp_x_scale, indices,
                       num_tokens, "gshmem::MoeAllToAll::dispatch");
  }
  void combine(void* out_tokens, host::ReduceType out_type, const std::uint32_t* indices, const float* weights,
               const void* expert_y, host::ReduceType y_type, std::size_t num_tokens) const {
    host::moe_combine(s_, out_tokens, out_type, indices, weights, expert_y, y_type, num_tokens,
                      "gshmem::MoeAllToAll::combine");
  }
  // GPU PEs: enqueued on `stream` (a cudaStream_t; gshmem_stream_t is the same type). bound_m: device memory or null.
  void dispatch_on_stream(std::int32_t* out_expert_num_tokens, void* out_expert_x, void* out_expert_x_scale,
                          const void* dp_x, const void* dp_x_scale, const std::uint32_t* indices,
                          std::size_t num_tokens, const std::uint32_t* bound_m, gshmem_stream_t stream) const {
    host::moe_dispatch_on_stream(s_, out_expert_num_tokens, out_expert_x, out_expert_x_scale, dp_x, dp_x_scale,
                                 indices, num_tokens, bound_m, stream, "gshmem::MoeAllToAll::dispatch_on_stream");
  }
  void combine_on_stream(void* out_tokens, host::ReduceType out_type, const std::uint32_t* indices,
                         const float* weights, const void* expert_y, host::ReduceType y_type, std::size_t num_tokens,
                         const std::uint32_t* bound_m, gshmem_stream_t stream) const {
    host::moe_combine_on_stream(s_, out_tokens, out_type, indices, weights, expert_y, y_type, num_tokens, bound_m,
                                stream, "gshmem::MoeAllToAll::combine_on_stream");
  }

 private:
  host::MoeState* s_;
};

// Atomics on a symmetric T (4 or 8 bytes) at pe.
template <typename T>
T atomic_fetch_add(T* dest, T value, int pe) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "gshmem atomics take 32- or 64-bit types");
  std::uint64_t v = 0, r;
  std::memcpy(&v, &value, sizeof(T));
  r = host::atomic(dest, sizeof(T), host::Amo::FetchAdd, v, 0, pe, "gshmem::atomic_fetch_add");
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}
template <typename T>
T atomic_compare_swap(T* dest, T cond, T value, int pe) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "gshmem atomics take 32- or 64-bit types");
  std::uint64_t v = 0, c = 0, r;
  std::memcpy(&v, &value, sizeof(T));
  std::memcpy(&c, &cond, sizeof(T));
  r = host::atomic(dest, sizeof(T), host::Amo::CompareSwap, v, c, pe, "gshmem::atomic_compare_swap");
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

}  // namespace gshmem
