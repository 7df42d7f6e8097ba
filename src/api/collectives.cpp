// gshmem::host collectives (broadcast, fcollect, alltoall, alltoalls, reduce, reducescatter): argument checks, then
// the one implementation of each (gshmem/coll/algorithms.h) — run here by this thread on CPU PEs (host scope,
// CollEnv below), or as the stream kernel of transport/gpu_coll.cu on GPU PEs (block scope; the blocking form
// waits for it on the internal stream).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gshmem/coll/algorithms.h"
#include "gshmem/gshmem.hpp"
#include "runtime/device_state.hpp"
#include "runtime/error.hpp"
#include "runtime/runtime.hpp"
#include "runtime/spin.hpp"
#include "team/team.hpp"
#include "transport/gpu.hpp"

namespace gshmem {
namespace host {
namespace {
// CPU PEs' storage for CUDA's __half and __nv_bfloat16 (the same 16 bits; this file does not need CUDA).
struct Half {
  std::uint16_t bits;
};
struct Bfloat16 {
  std::uint16_t bits;
};
}  // namespace
}  // namespace host

// Their arithmetic for the reductions (algorithms.h, Float16): IEEE binary16 through the compiler's _Float16;
// bfloat16 is a float's upper 16 bits, rounded to nearest even (NaN stays a quiet NaN). Both match CUDA's
// __half2float / __float2half_rn and __bfloat162float / __float2bfloat16_rn, so CPU and GPU PEs agree bit for bit.
template <>
struct coll::Float16<host::Half> {
  static constexpr bool value = true;
  static float to_float(host::Half v) {
    _Float16 h;
    std::memcpy(&h, &v.bits, sizeof h);
    return static_cast<float>(h);
  }
  static host::Half from_float(float f) {
    const _Float16 h = static_cast<_Float16>(f);
    host::Half v;
    std::memcpy(&v.bits, &h, sizeof h);
    return v;
  }
};
template <>
struct coll::Float16<host::Bfloat16> {
  static constexpr bool value = true;
  static float to_float(host::Bfloat16 v) {
    const std::uint32_t u = static_cast<std::uint32_t>(v.bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
  static host::Bfloat16 from_float(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((u >> 16) | 0x40u)};  // NaN: quiet
    u += 0x7fffu + ((u >> 16) & 1u);
    return {static_cast<std::uint16_t>(u >> 16)};
  }
};

namespace host {
namespace {

// The environment of gshmem/coll/algorithms.h on a CPU PE: flags in the collective workspace of each PE's heap
// (mapped here), C++ atomics, waits through Spinner (yields, notices dead peers, GSHMEM_WAIT_TIMEOUT).
struct CollEnv {
  Runtime& r;
  std::uint64_t* flags(int pe, int slot) const {
    return reinterpret_cast<std::uint64_t*>(r.heap->peer_bases()[static_cast<std::size_t>(pe)] +
                                            device_state::kCollOffset) +
           static_cast<std::size_t>(slot) * coll::kSyncFlags;
  }
  std::uint64_t* epoch(int slot) const {
    return reinterpret_cast<std::uint64_t*>(r.heap->base() + device_state::kCollEpochOffset) + slot;
  }
  void release_fence() const { std::atomic_thread_fence(std::memory_order_seq_cst); }
  void store_relaxed(std::uint64_t* p, std::uint64_t v) const { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
  void store_release(std::uint64_t* p, std::uint64_t v) const { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
  void wait_flag(const std::uint64_t* f, std::uint64_t epoch, const char* call) const {
    if (__atomic_load_n(f, __ATOMIC_ACQUIRE) >= epoch) return;
    Spinner spin(r, call);
    while (__atomic_load_n(f, __ATOMIC_ACQUIRE) < epoch) spin.pause();
  }
  template <typename T>
  T* peer(T* p, int pe) const {
    return static_cast<T*>(r.peer(p, pe));
  }
  template <typename Scope>
  void copy(void* d, const void* s, std::size_t bytes) const {
    std::memcpy(d, s, bytes);
  }
};

const char* kind_name(Coll kind) {
  switch (kind) {
    case Coll::Broadcast: return "broadcast";
    case Coll::Fcollect: return "fcollect";
    case Coll::Alltoall: return "alltoall";
    case Coll::Alltoalls: return "alltoalls";
  }
  return "collective";
}

bool overlap(const void* a, std::size_t an, const void* b, std::size_t bn) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return an != 0 && bn != 0 && x < y + bn && y < x + an;
}

// Bytes of one block of `nelems` elements of `elem` bytes, checked: a count that came from a negative value, and
// `blocks` such blocks (the team's size where a buffer holds one block per member) past the address space, end the
// job naming `call` (`count` is the argument's name, `what` what it counts).
std::size_t block_bytes(std::size_t nelems, std::size_t elem, std::size_t blocks, const char* count, const char* what,
                        const char* call) {
  if (nelems > static_cast<std::size_t>(PTRDIFF_MAX) / elem)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: {}={} ({} as a signed value) is too large for {}-byte elements: a negative "
         "count converted to size_t? Fix: pass {} (0 or more)", call, count, nelems,
         static_cast<std::ptrdiff_t>(nelems), elem, what);
  const std::size_t bytes = nelems * elem;
  if (blocks > 1 && bytes > static_cast<std::size_t>(PTRDIFF_MAX) / blocks)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: {} blocks of {} bytes overflow the address space. Fix: pass {}", call,
         blocks, bytes, what);
  return bytes;
}

// Bytes spanned by `count` elements of `elem` bytes `stride` elements apart (elem * (stride * (count - 1) + 1); 0
// for none); a span past the address space ends the job naming `call`.
std::size_t span(std::size_t count, std::size_t elem, std::ptrdiff_t stride, const char* which, const char* call) {
  if (count == 0 || elem == 0) return 0;
  const auto limit = static_cast<std::size_t>(PTRDIFF_MAX) / elem;
  const auto s = static_cast<std::size_t>(stride);
  if (count - 1 > (limit - 1) / s)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: {} elements {} apart in {} overflow the address space. Fix: pass smaller "
         "counts or strides", call, count, stride, which);
  return elem * (s * (count - 1) + 1);
}

struct Checked {
  TeamValue team;
  int slot;
  coll::Exchange x;  // broadcast: its block is x.elem * x.nelems bytes (x.elem = 1)
};

// Every check a member can make alone; a failure ends the job (the C layer), so no member waits for this one.
// dst/sst: element strides (alltoalls; 1 for the others).
Checked check(Runtime& r, Coll kind, gshmem_team_t team, void* dest, const void* src, std::size_t nelems,
              std::size_t elem, int root, std::ptrdiff_t dst, std::ptrdiff_t sst, const char* call) {
  const TeamInfo& ti = r.teams->get(team, call);  // INVALID, destroyed, or a team this PE is not in
  const TeamValue t = ti;
  const std::size_t n = static_cast<std::size_t>(t.size);
  const std::size_t bytes = block_bytes(nelems, elem, kind == Coll::Broadcast ? 1 : n, "nelems",
                                        "the number of elements per PE", call);
  if (kind == Coll::Broadcast && (root < 0 || root >= t.size))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: PE_root={} is not an index of the team (0..{}). Fix: pass the root's "
         "index in the team, not its world PE (gshmem_team_translate_pe converts)", call, root, t.size - 1);
  if (dst < 1 || sst < 1)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: strides dst={} sst={}; both must be at least 1 (they count elements). "
         "Fix: pass positive strides", call, dst, sst);
  const Checked c{t, team,
                  kind == Coll::Broadcast ? coll::Exchange{1, bytes, 1, 1, false}
                                          : coll::Exchange{elem, nelems, dst, sst, kind != Coll::Fcollect}};
  if (bytes == 0) return c;
  const std::size_t dest_bytes = kind == Coll::Broadcast ? bytes : span(n * nelems, elem, dst, "dest", call);
  const std::size_t src_bytes = kind == Coll::Broadcast  ? bytes
                                : kind == Coll::Fcollect ? bytes
                                                         : span(n * nelems, elem, sst, "source", call);
  r.check_symmetric(dest, dest_bytes, "dest", call);
  if (!src)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: source is NULL for blocks of {} bytes. Fix: pass the source buffer",
         call, bytes);
  if (r.mode == Mode::Gpu && !gpu::device_accessible(r.gpu, src))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: source={} is ordinary host memory, which the collective's kernel cannot "
         "read on a GPU PE. Fix: pass symmetric memory (gshmem_malloc), as OpenSHMEM requires", call, src);
  // Strided blocks may interleave without sharing an element, so alltoalls checks only dest == source.
  const bool bad = kind == Coll::Broadcast   ? dest != src && overlap(dest, dest_bytes, src, src_bytes)
                   : kind == Coll::Alltoalls ? dest == src
                                             : overlap(dest, dest_bytes, src, src_bytes);
  if (bad)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: dest [{}, +{}) and source [{}, +{}) overlap{}. Fix: use separate "
         "buffers", call, dest, dest_bytes, src, src_bytes,
         kind == Coll::Broadcast ? " (only dest == source is allowed for broadcast)" : "");
  return c;
}

// Runs a checked collective: the stream kernel on GPU PEs (s null: blocking, on the internal stream), this thread
// on CPU PEs.
void run(Runtime& r, Coll kind, const Checked& c, void* dest, const void* src, int root, gshmem_stream_t s,
         bool on_stream, const char* call) {
  if (r.mode == Mode::Gpu) {
    if (!on_stream) gpu::quiet(r.gpu);  // the program's earlier nbi operations from the host are complete first
    gpu::collective_on_stream(r.gpu, static_cast<gpu::CollKind>(kind), device_state::current(), c.team, c.slot,
                              dest, src, c.x, root, s, call);
    return;
  }
  CollEnv env{r};
  if (kind == Coll::Broadcast)
    coll::broadcast<coll::HostThread>(env, c.team, c.slot, dest, src, c.x.nelems, root, call);
  else
    coll::exchange<coll::HostThread>(env, c.team, c.slot, dest, src, c.x, call);
}

void need_gpu(Runtime& r, const char* what, const char* blocking, const char* call) {
  if (r.mode != Mode::Gpu)
    fail(GSHMEM_ERROR_NOT_SUPPORTED, "{}: this PE is a CPU PE ({}), and stream-ordered calls need a GPU PE. Fix: "
         "use the blocking {} ({}) on CPU PEs", call, r.cpu_reason, what, blocking);
}

// Reductions: the checks of check() that apply, plus a symmetric source (peers read it).
std::size_t elem_size(ReduceType type) {
  switch (type) {
    case ReduceType::Int8: case ReduceType::Uint8: return 1;
    case ReduceType::Int16: case ReduceType::Uint16: case ReduceType::Half: case ReduceType::Bfloat16: return 2;
    case ReduceType::Int32: case ReduceType::Uint32: case ReduceType::Float: return 4;
    default: return 8;
  }
}

struct CheckedReduction {
  TeamValue team;
  int slot;
  std::size_t nelems;  // 0: nothing to combine (the members still sync)
};

bool is_floating(ReduceType type) {
  return type == ReduceType::Float || type == ReduceType::Double || type == ReduceType::Half ||
         type == ReduceType::Bfloat16;
}

CheckedReduction check_reduction(Runtime& r, ReduceOp op, ReduceType type, bool scatter, gshmem_team_t team,
                                 void* dest, const void* src, std::size_t nelems, std::size_t elem, const char* call) {
  if (static_cast<int>(op) < 0 || op > ReduceOp::Prod || static_cast<int>(type) < 0 || type > ReduceType::Bfloat16)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: unknown reduction op {} or element type {}. Fix: pass one of "
         "GSHMEMI_REDUCE_AND..PROD and GSHMEMI_REDUCE_INT8..BFLOAT16", call, static_cast<int>(op),
         static_cast<int>(type));
  if (op <= ReduceOp::Xor && is_floating(type))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: the bitwise ops (and, or, xor) apply to integer types only. Fix: use max, "
         "min, sum or prod on floating-point data", call);
  const TeamInfo& ti = r.teams->get(team, call);
  const TeamValue t = ti;
  const std::size_t n = static_cast<std::size_t>(t.size);
  const std::size_t bytes = block_bytes(nelems, elem, scatter ? n : 1, "nreduce",
                                        "the number of elements each member receives", call);
  const std::size_t src_bytes = scatter ? bytes * n : bytes;
  if (bytes == 0) return {t, team, 0};
  r.check_symmetric(dest, bytes, "dest", call);
  if (!src)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: source is NULL for {} bytes. Fix: pass the source buffer", call,
         src_bytes);
  r.check_symmetric(src, src_bytes, "source", call);
  if (scatter ? overlap(dest, bytes, src, src_bytes) : (dest != src && overlap(dest, bytes, src, src_bytes)))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: dest [{}, +{}) and source [{}, +{}) overlap{}. Fix: use separate "
         "buffers", call, dest, bytes, src, src_bytes,
         scatter ? "" : " (only dest == source is allowed for reduce)");
  return {t, team, nelems};
}

template <typename T>
void reduce_here(Runtime& r, ReduceOp op, bool scatter, const TeamValue& t, int slot, void* dest, const void* src,
                 std::size_t nelems, const char* call) {
  CollEnv env{r};
  T* d = static_cast<T*>(dest);
  const T* s = static_cast<const T*>(src);
  auto go = [&](auto op_c) {
    constexpr coll::ReduceOp O = decltype(op_c)::value;
    if (scatter) coll::reducescatter<coll::HostThread, O>(env, t, slot, d, s, nelems, call);
    else coll::reduce<coll::HostThread, O>(env, t, slot, d, s, nelems, call);
  };
  using coll::ReduceOp;
  switch (op) {
    case gshmem::host::ReduceOp::Max: return go(std::integral_constant<ReduceOp, ReduceOp::Max>{});
    case gshmem::host::ReduceOp::Min: return go(std::integral_constant<ReduceOp, ReduceOp::Min>{});
    case gshmem::host::ReduceOp::Sum: return go(std::integral_constant<ReduceOp, ReduceOp::Sum>{});
    case gshmem::host::ReduceOp::Prod: return go(std::integral_constant<ReduceOp, ReduceOp::Prod>{});
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case gshmem::host::ReduceOp::And: return go(std::integral_constant<ReduceOp, ReduceOp::And>{});
      case gshmem::host::ReduceOp::Or: return go(std::integral_constant<ReduceOp, ReduceOp::Or>{});
      case gshmem::host::ReduceOp::Xor: return go(std::integral_constant<ReduceOp, ReduceOp::Xor>{});
      default: break;
    }
  }
  fail(GSHMEM_ERROR_INTERNAL, "{}: reduction op {} on this element type is not provided", call,
       static_cast<int>(op));
}

static_assert(static_cast<int>(ReduceOp::Prod) == static_cast<int>(coll::ReduceOp::Prod) &&
              static_cast<int>(ReduceOp::And) == static_cast<int>(coll::ReduceOp::And) &&
              static_cast<int>(ReduceOp::Max) == static_cast<int>(coll::ReduceOp::Max));
static_assert(static_cast<int>(ReduceType::Double) == static_cast<int>(gpu::ReduceType::Double) &&
              static_cast<int>(ReduceType::Bfloat16) == static_cast<int>(gpu::ReduceType::Bfloat16) &&
              static_cast<int>(ReduceType::Bfloat16) == GSHMEMI_REDUCE_BFLOAT16 &&
              static_cast<int>(ReduceType::Half) == GSHMEMI_REDUCE_HALF &&
              static_cast<int>(ReduceOp::Prod) == GSHMEMI_REDUCE_PROD &&
              static_cast<int>(Coll::Alltoalls) == GSHMEMI_COLL_ALLTOALLS &&
              static_cast<int>(Coll::Broadcast) == GSHMEMI_COLL_BROADCAST &&
              static_cast<int>(ReduceType::Uint8) == static_cast<int>(gpu::ReduceType::Uint8) &&
              static_cast<int>(ReduceType::Float) == static_cast<int>(gpu::ReduceType::Float));

}  // namespace

void collective(Coll kind, gshmem_team_t team, void* dest, const void* src, std::size_t nelems, std::size_t elem,
                int root, const char* call) {
  Runtime& r = Runtime::get(call);
  const Checked c = check(r, kind, team, dest, src, nelems, elem, root, 1, 1, call);
  run(r, kind, c, dest, src, root, nullptr, false, call);
}

void collective_on_stream(Coll kind, gshmem_team_t team, void* dest, const void* src, std::size_t nelems,
                          std::size_t elem, int root, gshmem_stream_t s, const char* call) {
  Runtime& r = Runtime::get(call);
  need_gpu(r, kind_name(kind), kind == Coll::Broadcast ? "gshmem_broadcastmem / gshmem_<T>_broadcast"
                               : kind == Coll::Fcollect ? "gshmem_fcollectmem / gshmem_<T>_fcollect"
                                                        : "gshmem_alltoallmem / gshmem_<T>_alltoall", call);
  const Checked c = check(r, kind, team, dest, src, nelems, elem, root, 1, 1, call);
  run(r, kind, c, dest, src, root, s, true, call);
}

void alltoalls(gshmem_team_t team, void* dest, const void* src, std::ptrdiff_t dst, std::ptrdiff_t sst,
               std::size_t nelems, std::size_t elem, const char* call) {
  Runtime& r = Runtime::get(call);
  const Checked c = check(r, Coll::Alltoalls, team, dest, src, nelems, elem, 0, dst, sst, call);
  run(r, Coll::Alltoalls, c, dest, src, 0, nullptr, false, call);
}

namespace {
// Runs a checked reduction: the stream kernel on GPU PEs (s null: blocking, on the internal stream), this thread on
// CPU PEs.
void run_reduction(Runtime& r, ReduceOp op, ReduceType type, bool scatter, const CheckedReduction& c, void* dest,
                   const void* src, gshmem_stream_t s, bool on_stream, const char* call) {
  if (r.mode == Mode::Gpu) {
    if (!on_stream) gpu::quiet(r.gpu);
    gpu::reduction_on_stream(r.gpu, static_cast<coll::ReduceOp>(op), static_cast<gpu::ReduceType>(type), scatter,
                             device_state::current(), c.team, c.slot, dest, src, c.nelems, s, call);
    return;
  }
  const std::size_t n = c.nelems;
  switch (type) {
    case ReduceType::Int8: return reduce_here<std::int8_t>(r, op, scatter, c.team, c.slot, dest, src, n, call);
    case ReduceType::Int16: return reduce_here<std::int16_t>(r, op, scatter, c.team, c.slot, dest, src, n, call);
    case ReduceType::Int32: return reduce_here<std::int32_t>(r, op, scatter, c.team, c.slot, dest, src, n, call);
    case ReduceType::Int64: return reduce_here<std::int64_t>(r, op, scatter, c.team, c.slot, dest, src, n, call);
    case ReduceType::Uint8: return reduce_here<std::uint8_t>(r, op, scatter, c.team, c.slot, dest, src, n, call);
    case ReduceType::Uint16: return reduce_here<std::uint16_t>(r, op, scatter, c.team, c.slot, dest, src, n, call);
    case ReduceType::Uint32: return reduce_here<std::uint32_t>(r, op, scatter, c.team, c.slot, dest, src, n, call);
    case ReduceType::Uint64: return reduce_here<std::uint64_t>(r, op, scatter, c.team, c.slot, dest, src, n, call);
    case ReduceType::Float: return reduce_here<float>(r, op, scatter, c.team, c.slot, dest, src, n, call);
    case ReduceType::Double: return reduce_here<double>(r, op, scatter, c.team, c.slot, dest, src, n, call);
    case ReduceType::Half: return reduce_here<Half>(r, op, scatter, c.team, c.slot, dest, src, n, call);
    case ReduceType::Bfloat16: return reduce_here<Bfloat16>(r, op, scatter, c.team, c.slot, dest, src, n, call);
  }
}
}  // namespace

void reduction(ReduceOp op, ReduceType type, bool scatter, gshmem_team_t team, void* dest, const void* src,
               std::size_t nelems, const char* call) {
  Runtime& r = Runtime::get(call);
  const CheckedReduction c = check_reduction(r, op, type, scatter, team, dest, src, nelems, elem_size(type), call);
  run_reduction(r, op, type, scatter, c, dest, src, nullptr, false, call);
}

void reduction_on_stream(ReduceOp op, ReduceType type, bool scatter, gshmem_team_t team, void* dest, const void* src,
                         std::size_t nelems, gshmem_stream_t s, const char* call) {
  Runtime& r = Runtime::get(call);
  need_gpu(r, scatter ? "reducescatter" : "reduce",
           scatter ? "gshmem_<T>_<op>_reducescatter" : "gshmem_<T>_<op>_reduce", call);
  const CheckedReduction c = check_reduction(r, op, type, scatter, team, dest, src, nelems, elem_size(type), call);
  run_reduction(r, op, type, scatter, c, dest, src, s, true, call);
}

}  // namespace host
}  // namespace gshmem
