// gshmem::host collectives (broadcast, fcollect, alltoall, alltoalls, reduce, reducescatter): argument checks, then
// the one implementation of each (gshmem/coll/algorithms.h) — run here by this thread on CPU PEs (host scope,
// CollEnv below), or as the stream kernel of transport/gpu_coll.cu on GPU PEs (block scope; the blocking form
// waits for it on the internal stream).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <type_traits>

#include "api/host_env.hpp"
#include "api/host_float16.hpp"
#include "gshmem/coll/algorithms.h"
#include "gshmem/gshmem.hpp"
#include "runtime/config.hpp"
#include "runtime/device_state.hpp"
#include "runtime/error.hpp"
#include "runtime/runtime.hpp"
#include "runtime/spin.hpp"
#include "team/team.hpp"
#include "transport/gpu.hpp"

namespace gshmem {
namespace host {
namespace {

// Bytes of one element of a reduction type.
std::size_t elem_size(ReduceType type) {
  switch (type) {
    case ReduceType::Int8: case ReduceType::Uint8: return 1;
    case ReduceType::Int16: case ReduceType::Uint16: case ReduceType::Half: case ReduceType::Bfloat16: return 2;
    case ReduceType::Int32: case ReduceType::Uint32: case ReduceType::Float: return 4;
    default: return 8;
  }
}

// What a member called a host collective with (CPU PEs). Each member writes its own into its heap's collective
// workspace (device_state::kCollArgsOffset, one per team slot) before the entry sync; after that sync
// (CollEnv::entered) every member reads every member's and compares. So a job whose members disagree (another
// element count, root, op or type, or another collective) ends on every member with both calls named, instead of
// moving the wrong bytes or waiting for syncs that never come (a reduction in place syncs once per pass). A member
// rewrites its entry only in its next collective on the slot, after the exit sync of this one, by which time every
// member has compared.
struct CallSignature {
  std::uint64_t what;   // family | op << 8 | type << 16 | (root + 1) << 24 | element bytes (alltoalls) << 56;
                        // reductions: | in place << 24 | two-shot << 25 (their sync counts differ: 2 or 3, or a
                        // pass each, so members that differ there would hang or race, not just disagree)
  std::uint64_t bytes;  // per member: one block (fcollect, alltoall(s)), the buffer (broadcast), the result (reduce)
  std::int64_t dst;     // alltoalls' strides (elements); 0 elsewhere
  std::int64_t sst;
  bool operator==(const CallSignature& o) const {
    return what == o.what && bytes == o.bytes && dst == o.dst && sst == o.sst;
  }
};
static_assert(sizeof(CallSignature) == device_state::kCollArgsBytes, "one workspace entry per team slot");
// Families: Coll's values, then the reductions.
inline constexpr std::uint64_t kFamilyReduce = 4, kFamilyReducescatter = 5, kNone = 0xff;

CallSignature exchange_signature(Coll kind, const coll::Exchange& x, int root) {
  if (kind == Coll::Broadcast)
    return {static_cast<std::uint64_t>(kind) | kNone << 8 | kNone << 16 |
            static_cast<std::uint64_t>(root + 1) << 24, x.elem * x.nelems, 0, 0};
  const bool strided = kind == Coll::Alltoalls;
  return {static_cast<std::uint64_t>(kind) | kNone << 8 | kNone << 16 | (strided ? x.elem << 56 : 0),
          x.elem * x.nelems, strided ? x.dst : 0, strided ? x.sst : 0};
}

// "alltoall of 12 bytes per member", "sum reduce of 5 int32", ...: a signature in words, for the mismatch error.
std::string describe(const CallSignature& c) {
  static constexpr const char* kFamilies[] = {"broadcast", "fcollect", "alltoall", "alltoalls", "reduce",
                                              "reducescatter"};
  static constexpr const char* kOps[] = {"and", "or", "xor", "max", "min", "sum", "prod"};
  static constexpr const char* kTypes[] = {"int8",   "int16",  "int32", "int64",  "uint8", "uint16",
                                           "uint32", "uint64", "float", "double", "half",  "bfloat16"};
  const std::uint64_t family = c.what & 0xff, op = c.what >> 8 & 0xff, type = c.what >> 16 & 0xff;
  if (family >= std::size(kFamilies)) return fmt::format("an unknown collective (signature {:#x})", c.what);
  if (family >= kFamilyReduce && op < std::size(kOps) && type < std::size(kTypes)) {
    const std::size_t elem = elem_size(static_cast<ReduceType>(type));
    return fmt::format("{} {} of {} {} ({} bytes){}{}{}", kOps[op], kFamilies[family], c.bytes / elem, kTypes[type],
                       c.bytes, family == kFamilyReducescatter ? " per member" : "",
                       c.what >> 24 & 1 ? ", in place" : "",
                       c.what >> 25 & 1 ? ", two-shot (GSHMEM_COLL_TWO_SHOT_BYTES)" : "");
  }
  if (family == static_cast<std::uint64_t>(Coll::Broadcast))
    return fmt::format("broadcast of {} bytes from team index {}", c.bytes,
                       static_cast<std::int64_t>(c.what >> 24 & 0xffffffff) - 1);
  if (family == static_cast<std::uint64_t>(Coll::Alltoalls)) {
    const std::uint64_t elem = c.what >> 56;
    return fmt::format("alltoalls of {} elements of {} bytes per member, dst={} sst={}", elem ? c.bytes / elem : 0,
                       elem, c.dst, c.sst);
  }
  return fmt::format("{} of {} bytes per member", kFamilies[family], c.bytes);
}

// The environment of gshmem/coll/algorithms.h on a CPU PE: host_env.hpp's peers, fences and waits, plus the sync
// flags in the collective workspace of each PE's heap (mapped here) and this PE's call signature, published before
// the entry sync and compared after it (entered).
struct CollEnv : HostPeerEnv {
  CallSignature sig;
  const char* ll_call;  // named by an LL wait that times out
  CollEnv(Runtime& rt, int slot, const CallSignature& s, const char* call) : HostPeerEnv{rt}, sig(s), ll_call(call) {
    *args(rt.my_pe, slot) = sig;  // ordered before the entry sync's flag stores by its release fence
  }
  CallSignature* args(int pe, int slot) const {
    return reinterpret_cast<CallSignature*>(r.heap->peer_bases()[static_cast<std::size_t>(pe)] +
                                            device_state::kCollArgsOffset) + slot;
  }
  void entered(const TeamValue& t, int slot, const char* call) const {
    for (int i = 0; i < t.size; ++i) {
      const int pe = team_world_pe(t, i);
      const CallSignature other = *args(pe, slot);  // written before pe's entry sync, which this PE acquired
      if (other == sig) continue;
      fail(GSHMEM_ERROR_MISMATCH, "{}: the members of the team did not make the same collective call: this PE (PE "
           "{}, team index {}) called {}, PE {} (team index {}) called {}. Fix: call each collective on every "
           "member of the team, in the same order, with the same element count, root, op and type (OpenSHMEM "
           "requires it), dest == source on every member or on none, and the same GSHMEM_COLL_TWO_SHOT_BYTES "
           "everywhere", call, r.my_pe, t.my_rank, describe(sig), pe, i, describe(other));
    }
  }
  std::uint64_t* flags(int pe, int slot) const {
    return reinterpret_cast<std::uint64_t*>(r.heap->peer_bases()[static_cast<std::size_t>(pe)] +
                                            device_state::kCollOffset) +
           static_cast<std::size_t>(slot) * coll::kSyncFlags;
  }
  std::uint64_t* epoch(int slot) const {
    return reinterpret_cast<std::uint64_t*>(r.heap->base() + device_state::kCollEpochOffset) + slot;
  }
  // LL (gshmem/coll/algorithms.h): off unless GSHMEM_COLL_LL_BYTES is set (device_state::coll_ll_limit).
  std::size_t ll = device_state::coll_ll_limit(false, "gshmem collective");
  std::size_t ll_limit() const { return ll; }
  std::uint64_t* ll_seq(int slot) const {
    return reinterpret_cast<std::uint64_t*>(r.heap->base() + device_state::kCollLLOffset) + slot;
  }
  std::uint64_t* ll_buf(int pe, int slot, unsigned parity) const {
    return reinterpret_cast<std::uint64_t*>(r.heap->peer_bases()[static_cast<std::size_t>(pe)] +
                                            device_state::kCollLLOffset + coll::kLLSeqBytes +
                                            coll::kLLBufBytes * (2 * static_cast<std::size_t>(slot) + parity));
  }
  std::uint64_t* chunk_flags(int pe, int slot) const {
    return reinterpret_cast<std::uint64_t*>(r.heap->peer_bases()[static_cast<std::size_t>(pe)] +
                                            device_state::kCollChunkOffset +
                                            coll::kBcastFlagBytes * static_cast<std::size_t>(slot));
  }
  // Staged (gshmem/coll/algorithms.h): off unless GSHMEM_COLL_STAGED_BYTES is set (device_state::coll_staged_limit).
  std::size_t staged = device_state::coll_staged_limit(false, "gshmem collective");
  std::size_t staged_limit() const { return staged; }
  std::uint64_t* staged_buf(int pe, int slot, unsigned parity) const {
    return reinterpret_cast<std::uint64_t*>(r.heap->peer_bases()[static_cast<std::size_t>(pe)] +
                                            device_state::kCollStagedOffset +
                                            coll::kStagedBufBytes * (2 * static_cast<std::size_t>(slot) + parity));
  }
  void ll_store(std::uint64_t* line, std::uint64_t w0, std::uint64_t w1) const {
    __atomic_store_n(line, w0, __ATOMIC_RELAXED);
    __atomic_store_n(line + 1, w1, __ATOMIC_RELAXED);
  }
  // Waits as wait_flag does: the Spinner ends the job naming `call` on a timeout or a dead peer, so this never gives
  // up (ll_fail is never reached).
  bool ll_wait(const std::uint64_t* line, std::uint32_t flag, std::uint64_t& w0, std::uint64_t& w1) const {
    auto load = [&] {
      w0 = __atomic_load_n(line, __ATOMIC_ACQUIRE);
      w1 = __atomic_load_n(line + 1, __ATOMIC_ACQUIRE);
      return static_cast<std::uint32_t>(w0 >> 32) == flag && static_cast<std::uint32_t>(w1 >> 32) == flag;
    };
    if (load()) return true;
    Spinner spin(r, ll_call);
    while (!load()) spin.pause();
    return true;
  }
  [[noreturn]] void ll_fail(const std::uint64_t* line, const char* call) const {
    fail(GSHMEM_ERROR_INTERNAL, "{}: gave up waiting for a team member's data at {} (LL)", call,
         static_cast<const void*>(line));
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
  // The heap is device memory on GPU PEs: only a source outside it costs the driver query (cudaPointerGetAttributes
  // took ~0.8 µs of host time a call, which bounded the 1 KiB stream forms: bench/NOTES.md entry 62).
  if (r.mode == Mode::Gpu && !r.heap->contains(src, src_bytes) && !gpu::device_accessible(r.gpu, src))
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
    // A broadcast's root on a team of 2, from GSHMEM_COLL_BCAST_CE_BYTES: its copies go by the copy engines, where
    // the source is symmetric (device memory; a pageable host source would make the copy wait for the stream).
    const std::size_t ce_bytes = config::get().coll_bcast_ce_bytes, bytes = c.x.elem * c.x.nelems;
    void* ce_peer_dest = nullptr;
    if (kind == Coll::Broadcast && c.team.size == 2 && c.team.my_rank == root && ce_bytes > 0 && bytes >= ce_bytes &&
        r.heap->contains(src, bytes))
      ce_peer_dest = r.peer(dest, team_world_pe(c.team, 1 - root));
    // fcollect and alltoall on a team of 2, from GSHMEM_COLL_EXCHANGE_CE_BYTES of dest: each member's copies go by
    // the copy engines, where its source is in the heap (as above).
    const std::size_t x_ce_bytes = config::get().coll_exchange_ce_bytes, src_bytes = kind == Coll::Alltoall ? 2 * bytes
                                                                                                            : bytes;
    if ((kind == Coll::Fcollect || kind == Coll::Alltoall) && c.team.size == 2 && x_ce_bytes > 0 &&
        2 * bytes >= x_ce_bytes && r.heap->contains(src, src_bytes))
      ce_peer_dest = r.peer(dest, team_world_pe(c.team, 1 - c.team.my_rank));
    gpu::collective_on_stream(r.gpu, static_cast<gpu::CollKind>(kind), device_state::current(), c.team, c.slot,
                              dest, src, c.x, root, s, call, ce_peer_dest);
    return;
  }
  CollEnv env(r, c.slot, exchange_signature(kind, c.x, root), call);
  if (kind == Coll::Broadcast)
    coll::broadcast<coll::HostThread>(env, c.team, c.slot, dest, src, c.x.nelems, root, call,
                                      config::get().coll_bcast_two_shot_bytes);
  else
    coll::exchange<coll::HostThread>(env, c.team, c.slot, dest, src, c.x, call);
}

void need_gpu(Runtime& r, const char* what, const char* blocking, const char* call) {
  if (r.mode != Mode::Gpu)
    fail(GSHMEM_ERROR_NOT_SUPPORTED, "{}: this PE is a CPU PE ({}), and stream-ordered calls need a GPU PE. Fix: "
         "use the blocking {} ({}) on CPU PEs", call, r.cpu_reason, what, blocking);
}

// Reductions: the checks of check() that apply, plus a symmetric source (peers read it).
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
void reduce_here(Runtime& r, ReduceOp op, ReduceType type, bool scatter, const TeamValue& t, int slot, void* dest,
                 const void* src, std::size_t nelems, const char* call) {
  const std::size_t threshold = config::get().coll_two_shot_bytes;
  const bool in_place = !scatter && dest == src;
  const bool two_shot = !scatter && coll::use_two_shot(t.size, nelems * sizeof(T), in_place, threshold);
  CollEnv env(r, slot,
              {(scatter ? kFamilyReducescatter : kFamilyReduce) | static_cast<std::uint64_t>(op) << 8 |
                   static_cast<std::uint64_t>(type) << 16 | static_cast<std::uint64_t>(in_place) << 24 |
                   static_cast<std::uint64_t>(two_shot) << 25,
               nelems * sizeof(T), 0, 0},
              call);
  T* d = static_cast<T*>(dest);
  const T* s = static_cast<const T*>(src);
  auto go = [&](auto op_c) {
    constexpr coll::ReduceOp O = decltype(op_c)::value;
    if (scatter) coll::reducescatter<coll::HostThread, O>(env, t, slot, d, s, nelems, call);
    else coll::reduce<coll::HostThread, O>(env, t, slot, d, s, nelems, call, threshold);
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
    // reduce on a team of 2 from GSHMEM_COLL_REDUCE_CE_BYTES: two-shot with its gather by the copy engine, into the
    // other member's dest (symmetric: checked).
    const std::size_t ce_bytes = config::get().coll_reduce_ce_bytes;
    void* ce_peer_dest = nullptr;
    if (!scatter && c.team.size == 2 && ce_bytes > 0 && c.nelems * elem_size(type) >= ce_bytes)
      ce_peer_dest = r.peer(dest, team_world_pe(c.team, 1 - c.team.my_rank));
    gpu::reduction_on_stream(r.gpu, static_cast<coll::ReduceOp>(op), static_cast<gpu::ReduceType>(type), scatter,
                             device_state::current(), c.team, c.slot, dest, src, c.nelems, s, call, ce_peer_dest);
    return;
  }
  auto go = [&](auto tag) {
    reduce_here<decltype(tag)>(r, op, type, scatter, c.team, c.slot, dest, src, c.nelems, call);
  };
  switch (type) {
    case ReduceType::Int8: return go(std::int8_t{});
    case ReduceType::Int16: return go(std::int16_t{});
    case ReduceType::Int32: return go(std::int32_t{});
    case ReduceType::Int64: return go(std::int64_t{});
    case ReduceType::Uint8: return go(std::uint8_t{});
    case ReduceType::Uint16: return go(std::uint16_t{});
    case ReduceType::Uint32: return go(std::uint32_t{});
    case ReduceType::Uint64: return go(std::uint64_t{});
    case ReduceType::Float: return go(float{});
    case ReduceType::Double: return go(double{});
    case ReduceType::Half: return go(Half{});
    case ReduceType::Bfloat16: return go(Bfloat16{});
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
