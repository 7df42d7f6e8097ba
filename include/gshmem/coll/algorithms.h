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
//   copy_landed<Scope>(d, s, bytes)       the same, from memory peers wrote during this call (staged buffers: on
//                                         the GPU loads through L2 only, never the read-only path)
//   optional: void entered(const TeamValue&, int slot, const char* call)   called after the entry sync (below)
//   uint64_t* chunk_flags(int pe, int slot)   the two-shot broadcast's chunk flags [kBcastChunks][kBcastParts] of
//                                         the slot in world PE pe's heap (host and stream forms only)
//   LL (small collectives in one flight, below):
//   size_t ll_limit()                     data bytes per call below which LL is used (0: never; at most
//                                         kLLBufBytes / 2); the same on every PE (GSHMEM_COLL_LL_BYTES)
//   uint64_t* ll_seq(int slot)            this PE's LL call count for the slot (its own heap)
//   uint64_t* ll_buf(int pe, int slot, unsigned parity)   buffer `parity` (0, 1) of the slot in world PE pe's heap
//   void ll_store(uint64_t* line, uint64_t w0, uint64_t w1)   one 16-byte line, each 8-byte word stored whole
//   bool ll_wait(const uint64_t* line, uint32_t flag, uint64_t& w0, uint64_t& w1)
//                                         loads the line until both words' high halves equal flag; false when it
//                                         gave up (GSHMEM_WAIT_TIMEOUT, a dead peer): the routine then ends in
//   void ll_fail(const uint64_t* line, const char* call)   which reports it (never returns); called after the
//                                         routine's loops (on the GPU a call inside them cost registers)
//   optional: void ll_part_done(int slot, int count)   an LL call run in `count` parts (stream kernels): each
//                                         part reports its end; the last advances ll_seq(slot) (ll_end, below)
// Reductions need nothing more: the op is a template argument (ReduceOp below), the group's threads combine in
// registers, reading peers' sources through peer().
// Layout of the workspace the flags live in: src/runtime/device_state.hpp ("collective workspace").
#pragma once
#if !defined(__CUDACC_RTC__) /* NVRTC: no C library headers (gshmem.h has the types) */
#include <stddef.h>
#include <stdint.h>
#endif

#include "gshmem/team_value.h"

// Host-and-device function templates whose scope or environment may be device-only: nvcc checks the callees of
// each instantiation only where it is used (nv_exec_check_disable), so the host instantiations (HostThread) and
// the device ones (Thread/Warp/Block) come from one template.
// GSHMEM_COLL_TEMPLATE opens each such template (the pragma must precede the declaration).
#if defined(__CUDACC__)
#define GSHMEM_COLL_TEMPLATE _Pragma("nv_exec_check_disable") template <class Scope, class Env>
#define GSHMEM_COLL_SCOPE_TEMPLATE _Pragma("nv_exec_check_disable") template <class Scope>
#define GSHMEM_COLL_REDUCE_TEMPLATE \
  _Pragma("nv_exec_check_disable") template <class Scope, ReduceOp Op, class T, class Env>
#define GSHMEM_COLL_STORE_TEMPLATE _Pragma("nv_exec_check_disable") template <class Scope, class T, int K>
#define GSHMEM_COLL_FN __host__ __device__ __forceinline__
#define GSHMEM_COLL_OUTLINE_FN __host__ __device__ __noinline__
#else
#define GSHMEM_COLL_STORE_TEMPLATE template <class Scope, class T, int K>
#define GSHMEM_COLL_TEMPLATE template <class Scope, class Env>
#define GSHMEM_COLL_SCOPE_TEMPLATE template <class Scope>
#define GSHMEM_COLL_REDUCE_TEMPLATE template <class Scope, ReduceOp Op, class T, class Env>
#define GSHMEM_COLL_FN inline
#define GSHMEM_COLL_OUTLINE_FN inline
#endif

namespace gshmem {
namespace coll {

// Sync flags per team slot: one per member for teams of up to kSyncFlags (each member writes its own index in
// every other member: one flight), one per dissemination round above.
inline constexpr int kSyncFlags = GSHMEM_DEVICE_MAX_ROUNDS;

#if !defined(__CUDACC_RTC__)
// One thread of a CPU PE (host calls on CPU PEs).
struct HostThread {
  static int rank() { return 0; }
  static int size() { return 1; }
  static void sync() {}
};
#endif

// A share of one collective's data phase: part `index` of `count` (several CTAs of a stream kernel split the data;
// the kernel's first and last CTA run the syncs around them, or separate sync kernels do: src/transport/
// gpu_coll_split.cuh). Whole() is the only part.
struct Part {
  int index;
  int count;
  static constexpr GSHMEM_HD Part whole() { return Part{0, 1}; }
  // [lo, hi) of this part of n units, the parts' bounds multiples of `align` units (so copies stay aligned).
  GSHMEM_HD void range(size_t n, size_t align, size_t& lo, size_t& hi) const {
    size_t per = (n + static_cast<size_t>(count) - 1) / static_cast<size_t>(count);
    per = (per + align - 1) / align * align;
    lo = per * static_cast<size_t>(index);
    hi = lo + per;
    if (lo > n) lo = n;
    if (hi > n) hi = n;
  }
};
// The member k places after team index `from` (0 <= k < size), wrapping past the last member: the staggered order
// in which every member walks the others, so they do not all write to the same PE first.
GSHMEM_HD constexpr int member_after(const TeamValue& t, int from, int k) {
  return from + k < t.size ? from + k : from + k - t.size;
}
// Step j (0 <= j < size) of part `part`'s walk over the members, as an offset for member_after: part b starts b
// members further on, so the parts of a split copy to different members at once (the local copy and the links
// busy together).
GSHMEM_HD constexpr int part_step(const TeamValue& t, const Part& part, int j) {
  return member_after(t, part.index % t.size, j);
}
// Bytes a part's boundaries align to in contiguous copies (vector copies stay 16-byte aligned where the buffers are).
inline constexpr size_t kPartAlign = 256;
// Data bytes from which reduce goes two-shot on teams of more than 2 (use_two_shot, below) where the setting is
// automatic (GSHMEM_COLL_TWO_SHOT_BYTES 0, the default; the same on every PE, checked at init). Broadcast's own:
// kBroadcastTwoShotBytes.
inline constexpr size_t kTwoShotBytes = size_t(1) << 20;
// The same on a team of 2: two-shot moves the same bytes over the link as one-shot there, but each PE reads half
// of every source instead of all of it. On 2 x H200, with the fused two-shot (reduce_owned_push, no middle sync),
// 4 / 16 MiB took 21.1 / 58.4 us against one-shot's 22.5 / 61.6, 1 MiB 11.6 either way (bench/NOTES.md entry 75).
inline constexpr size_t kTwoShotBytesPair = size_t(4) << 20;
// At 4 PEs on 4 x H100 two-shot broadcast was slower at 1 MiB (23.6 against 19.7 us) and faster from 4 MiB (40
// against 48): bench/NOTES.md entry 33.
inline constexpr size_t kBroadcastTwoShotBytes = size_t(4) << 20;

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
        const int r = member_after(t, t.my_rank, k);
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

// After a collective's entry sync: an environment with a member `void entered(const TeamValue&, int slot, const char*
// call)` checks there that every member called the same collective with the same arguments (host::CollEnv on CPU
// PEs: each member published its call before the sync). Environments without one (the device ones) skip it, so
// their code is what it was without the check.
template <class...>
struct VoidOf {
  using type = void;
};
template <class Env, class = void>
struct HasEntered {
  static constexpr bool value = false;
};
template <class Env>
struct HasEntered<Env, typename VoidOf<decltype(&Env::entered)>::type> {
  static constexpr bool value = true;
};
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void entered(Env& env, const TeamValue& t, int slot, const char* call) {
  if constexpr (HasEntered<Env>::value) env.entered(t, slot, call);
}

// ---- LL: small collectives in one flight ----
// Up to Env::ll_limit() bytes of data per call (GSHMEM_COLL_LL_BYTES: 128 KiB on GPU PEs, the most), broadcast,
// fcollect, alltoall, reduce and reducescatter skip both team syncs and the reads from peers. Each sender writes its
// data straight into a buffer in each receiver's heap as LL lines: 16 bytes carrying 8 data bytes in two 8-byte words,
// each word 4 data bytes below a 32-bit flag (the call's number on the team slot). An aligned 8-byte store lands whole
// (over NVLink and PCIe, and in CPU caches), so a receiver that sees the flag in a word has its data too: it polls its
// own buffer, and the call costs one one-way trip instead of two syncs (each a round trip) and remote loads. Sender m's
// data go to section m of the receiver's buffer (ll_lines(bytes) lines a section).
// Two buffers per slot, used by alternate calls: a member writes call n + 2 into the buffer a receiver read call n
// from only after its own call n + 1 completed, which needed a line from that receiver's call n + 1 (every LL call
// has every member send to every other: data, or a broadcast's flag line), which the receiver sends only after its
// whole group finished call n (ll_begin syncs the group first). So no buffer is overwritten while read, without
// any other handshake. The choice of LL depends only on the call's arguments, the team's size and
// ll_limit(), so every member, and every form (host, stream kernel, device scopes), makes the same one.
// Return: this member's dest is complete and its source reusable (no member reads it); nothing is implied about
// other members' progress (as NVSHMEM documents for these calls).
// Parts: a stream kernel may run an LL call over several CTAs (Part: CTA b of count takes lines b * group size +
// rank, stepping by count * group size; ll_parts). Lines are addressed by index, so the receivers need not split
// them as the senders did. The buffer argument holds call by call, since a PE's next call is the next kernel on
// its stream, which starts after every CTA of this one finished. Every part reads the call count at its start;
// the last part to finish advances it (Env::ll_part_done), so the count moves once per call.
inline constexpr size_t kLLBufBytes = 256 * 1024;  // one buffer of LL lines: 128 KiB of data (16 KiB until 2026-11-27)
// GSHMEM_COLL_LL_BYTES unset on GPU PEs: 128 KiB, the buffers' whole (16 KiB until 2026-11-27, 8 KiB until
// 2026-11-26). At 2 PEs on 2 x H100 the stream forms from 16 KiB to the limit went from 8.6-11.1 us synced to
// 5.0-6.5 us by LL over several CTAs, one CTA 5.6-19.6 (bench/NOTES.md entries 36, 37, 44).
inline constexpr size_t kLLDefaultBytes = 128 * 1024;
inline constexpr size_t kLLSeqBytes = 4096;  // the area's head: this PE's LL call counts, part tallies, split words
inline constexpr size_t kLLTallyOffset = 8 * GSHMEM_DEVICE_MAX_TEAMS;  // the tallies (uint32 per slot) in the head
// The words of a multi-CTA stream kernel's own syncs (gpu_coll_split.cuh, src/transport): uint64 [kSplitWords] per
// slot in the head (start tickets, the phase's opening, finished CTAs; the fourth pads a slot's to 32 bytes), this
// PE's own.
inline constexpr size_t kSplitOffset = 1024;
inline constexpr size_t kSplitWords = 4;
inline constexpr size_t kLLAreaBytes = kLLSeqBytes + 2 * kLLBufBytes * GSHMEM_DEVICE_MAX_TEAMS;
GSHMEM_HD constexpr size_t ll_lines(size_t bytes) { return (bytes + 7) / 8; }
// Most CTAs of one LL call (stream kernels), and how many a call takes where this PE receives `data_bytes` in all
// (each sender's block times the team's size): one per `cta_bytes` (GSHMEM_COLL_LL_CTA_BYTES), at least 1.
inline constexpr int kLLMaxParts = 16;
GSHMEM_HD constexpr int ll_parts(size_t data_bytes, size_t cta_bytes) {
  const size_t per = cta_bytes > 0 ? cta_bytes : 1, n = (data_bytes + per - 1) / per;
  return n < 1 ? 1 : n > static_cast<size_t>(kLLMaxParts) ? kLLMaxParts : static_cast<int>(n);
}
// Whether a call where each member receives `bytes` from each sender goes by LL (a section per member).
GSHMEM_HD constexpr bool use_ll(int size, size_t bytes, size_t limit) {
  return size > 1 && bytes > 0 && ll_lines(bytes) * 8 * static_cast<size_t>(size) <= limit &&
         ll_lines(bytes) * 16 * static_cast<size_t>(size) <= kLLBufBytes;
}
// Reductions by LL: elements of 1, 2, 4 or 8 bytes (a line holds whole elements; double2 maxloc does not fit).
template <class T>
GSHMEM_HD constexpr bool reduce_uses_ll(int size, size_t nelems, size_t limit) {
  return sizeof(T) <= 8 && use_ll(size, nelems * sizeof(T), limit);
}

struct LLCall {
  uint32_t flag;    // in every word of this call's lines: never 0 (fresh buffers), different from the last 2^32 - 2
  unsigned parity;  // the buffer of this call
  uint64_t number;  // the call's number on the slot (1, 2, ...): a staged call's flag value (below)
};
// The lines a thread of the group takes: first, first + step, ... (Parts, above).
struct LLLanes {
  size_t first;
  size_t step;
};
template <class Scope>
GSHMEM_COLL_FN LLLanes ll_lanes(const Part& p) {
  const size_t g = static_cast<size_t>(Scope::size());
  return LLLanes{static_cast<size_t>(p.index) * g + static_cast<size_t>(Scope::rank()),
                 g * static_cast<size_t>(p.count)};
}
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN LLCall ll_begin(Env& env, int slot, const Part& part) {
  Scope::sync();  // the group is done with its previous call's buffer (above)
  uint64_t* sp = env.ll_seq(slot);
  const uint64_t n = *sp + 1;
  Scope::sync();  // every thread read the count before rank 0 advances it
  if (part.count == 1 && Scope::rank() == 0) *sp = n;  // several parts: the last to finish does (ll_end)
  return LLCall{static_cast<uint32_t>(n % 0xFFFFFFFFull) + 1u, static_cast<unsigned>(n & 1), n};
}
template <class Env, class = void>
struct HasLLPartDone {
  static constexpr bool value = false;
};
template <class Env>
struct HasLLPartDone<Env, typename VoidOf<decltype(&Env::ll_part_done)>::type> {
  static constexpr bool value = true;
};
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void ll_end(Env& env, int slot, const Part& part) {
  Scope::sync();
  if constexpr (HasLLPartDone<Env>::value) {  // environments without it run whole calls only
    if (part.count > 1 && Scope::rank() == 0) env.ll_part_done(slot, part.count);
  }
}
// The n < 8 bytes at p (8 when n >= 8) as a little-endian word, zero above them; one load where aligned.
GSHMEM_COLL_FN uint64_t ll_load_data(const char* p, size_t n) {
  if (n >= 8 && (reinterpret_cast<uintptr_t>(p) & 7) == 0) return *reinterpret_cast<const uint64_t*>(p);
  uint64_t v = 0;
  for (size_t b = 0; b < n && b < 8; ++b) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[b])) << (8 * b);
  return v;
}
GSHMEM_COLL_FN void ll_store_data(char* p, uint64_t v, size_t n) {
  if (n >= 8 && (reinterpret_cast<uintptr_t>(p) & 7) == 0) {
    *reinterpret_cast<uint64_t*>(p) = v;
    return;
  }
  for (size_t b = 0; b < n && b < 8; ++b) p[b] = static_cast<char>(v >> (8 * b));
}
// A line's 8 data bytes as 8 / sizeof(T) elements and back (byte copies: no aliasing of the word as T).
template <class T>
GSHMEM_COLL_FN void ll_unpack(T (&v)[8 / sizeof(T)], uint64_t data) {
#if defined(__CUDA_ARCH__)
  memcpy(v, &data, 8);
#else
  __builtin_memcpy(v, &data, 8);
#endif
}
// The ne <= 8 / sizeof(T) elements at p as a line's data (typed loads: p is T-aligned), zero above them.
template <class T>
GSHMEM_COLL_FN uint64_t ll_pack(const T* p, size_t ne) {
  T v[8 / sizeof(T)] = {};
  for (size_t j = 0; j < 8 / sizeof(T); ++j)
    if (j < ne) v[j] = p[j];
  uint64_t data;
#if defined(__CUDA_ARCH__)
  memcpy(&data, v, 8);
#else
  __builtin_memcpy(&data, v, 8);
#endif
  return data;
}
// The n data words line(0), line(1), ... into section `section` (n lines a section) of `buf` (a receiver's
// buffer) as LL lines of `flag`, the group's threads taking the lines of `ln`.
template <class Env, class Line>
GSHMEM_COLL_FN void ll_push_lines(Env& env, uint64_t* buf, size_t section, size_t n, uint32_t flag, LLLanes ln,
                                  Line line) {
  uint64_t* out = buf + 2 * section * n;
  const uint64_t f = static_cast<uint64_t>(flag) << 32;
  for (size_t l = ln.first; l < n; l += ln.step) {
    const uint64_t v = line(l);
    env.ll_store(out + 2 * l, f | (v & 0xFFFFFFFFull), f | (v >> 32));
  }
}
// `bytes` at src, 8 a line.
template <class Env>
GSHMEM_COLL_FN void ll_push(Env& env, uint64_t* buf, size_t section, const void* src, size_t bytes, uint32_t flag,
                           LLLanes ln) {
  const char* s = static_cast<const char*>(src);
  ll_push_lines(env, buf, section, ll_lines(bytes), flag, ln,
                [&](size_t l) { return ll_load_data(s + 8 * l, bytes - 8 * l); });
}
// Line l of section `section` (n lines a section) of this PE's buffer `buf`: its 8 data bytes into `data` once
// they landed; false when the wait gave up (the caller stops and ends in Env::ll_fail).
template <class Env>
GSHMEM_COLL_FN bool ll_pull(Env& env, const uint64_t* buf, size_t section, size_t n, size_t l, uint32_t flag,
                            uint64_t& data) {
  uint64_t w0, w1;
  if (!env.ll_wait(buf + 2 * (section * n + l), flag, w0, w1)) return false;
  data = (w0 & 0xFFFFFFFFull) | (w1 << 32);
  return true;
}
// The receiving half: sections [0, size) but `skip` of this PE's buffer, n lines each, line l of section m to
// dest + m * stride + 8 * l (bytes of a section: `bytes`). The group's threads take the (section, line) pairs of
// `ln`.
template <class Env>
GSHMEM_COLL_FN void ll_receive(Env& env, const uint64_t* buf, int size, int skip, char* dest, size_t stride,
                               size_t bytes, uint32_t flag, LLLanes ln, const char* call) {
  const size_t n = ll_lines(bytes), total = n * static_cast<size_t>(size);
  const uint64_t* bad = nullptr;  // a line whose wait gave up
  for (size_t i = ln.first; i < total; i += ln.step) {
    const size_t m = i / n, l = i % n;
    if (static_cast<int>(m) == skip) continue;
    uint64_t data;
    if (!ll_pull(env, buf, m, n, l, flag, data)) {
      bad = buf + 2 * i;
      break;
    }
    ll_store_data(dest + m * stride + 8 * l, data, bytes - 8 * l);
  }
  if (bad != nullptr) env.ll_fail(bad, call);
}

// ---- Staged: mid-sized collectives in one flight ----
// From LL's limit up to Env::staged_limit() bytes (GSHMEM_COLL_STAGED_BYTES: 2 MiB on GPU PEs, off on CPU PEs),
// broadcast, fcollect, alltoall, reduce and reducescatter run LL's protocol with bulk data: each sender copies its
// block straight into a buffer in each receiver's heap (section `its index`; a broadcast's data in section 0), then
// stores the call's number into one flag per (sender, part) at a fixed place of that buffer; the receiver waits for
// the flags, then copies or reduces out of its own buffer. No team sync and no reads from peers: the split path's
// two syncs cost ~5 us at 2 PEs against 0.5-1 us of data at 256 KiB (bench/NOTES.md entries 50-51).
// Buffers: two per staged slot (parity: LL's, since staged and LL calls share the slot's call count), each
// kStagedFlagBytes of flags [kStagedMaxMembers][kStagedMaxParts] uint64 then kStagedDataBytes of sections.
// Flags sit at fixed places whatever a call's size, and each buffer's flags only grow (the numbers of the calls
// that used it), so a flag never shows a value left over from a call of another size. The two-buffer argument is
// LL's (above): every staged call has every member hear from every other (data flags, or a broadcast's bare ones),
// and a member's next call on a slot starts after its previous one finished reading.
// Parts: a stream kernel runs a staged call over P CTAs (staged_parts: every member the same P, from the call's size
// and GSHMEM_COLL_STAGED_CTA_BYTES, equal on every PE). CTA p of a sender copies part p of its block (Part::range)
// to every receiver, fences and stores flag [sender][p] there; CTA p of a receiver waits for flag [m][p] of each
// sender m and takes part p of each section: pairs of CTAs pass their part without hearing from the others. Each
// CTA fences once, the CTAs side by side.
// Where: the host forms of CPU PEs (StagedScope) and the library's stream kernels (which GPU PEs' host forms run):
// their members pick it by the same rule (use_staged, after use_ll). The device API's scopes keep their paths, so
// in the staged range the members of one call must use one family of forms (host / stream, or device scope), as
// they do in practice.
// Only the predefined slots below kStagedSlots (world, shared, node) have buffers: 2 x 2 MiB a slot.
inline constexpr int kStagedSlots = 3;
inline constexpr int kStagedMaxMembers = 64;
inline constexpr int kStagedMaxParts = 32;
inline constexpr size_t kStagedFlagBytes = sizeof(uint64_t) * kStagedMaxMembers * kStagedMaxParts;  // 16 KiB
inline constexpr size_t kStagedDefaultBytes = size_t(2) << 20;  // GSHMEM_COLL_STAGED_BYTES unset, and its most
// A section per member, each padded to 16 bytes plus 16 for alignment (staged_stride): room for the limit's data.
inline constexpr size_t kStagedDataBytes = kStagedDefaultBytes + 32 * kStagedMaxMembers;
inline constexpr size_t kStagedBufBytes = kStagedFlagBytes + kStagedDataBytes;
inline constexpr size_t kStagedAreaBytes = 2 * kStagedBufBytes * kStagedSlots;
// The staged area's heap offset from the LL area's (after the LL area and the two-shot broadcast's chunk flags,
// rounded to 64 KiB); runtime/device_state.hpp places them.
inline constexpr size_t kStagedFromLL =
    (kLLAreaBytes + 16 * 32 * sizeof(uint64_t) * GSHMEM_DEVICE_MAX_TEAMS + 0xFFFF) / 0x10000 * 0x10000;
// Bytes between sections: a block padded to 16, plus 16 (a section starts at the block's own address modulo 16).
GSHMEM_HD constexpr size_t staged_stride(size_t bytes) { return (bytes + 15) / 16 * 16 + 16; }
// Whether a call on slot `slot` whose receiver takes `sections` blocks of `block` bytes (the team's size; a
// broadcast: 1) goes staged: a staged slot, 2 to kStagedMaxMembers members, data up to `limit` in all that fits a
// buffer. Callers ask use_ll first.
GSHMEM_HD constexpr bool use_staged(int slot, int size, size_t block, size_t sections, size_t limit) {
  return slot >= 0 && slot < kStagedSlots && size > 1 && size <= kStagedMaxMembers && block > 0 &&
         block * sections <= limit && staged_stride(block) * sections <= kStagedDataBytes;
}
// Reductions, staged: any element type, a block of `bytes` from each member.
GSHMEM_HD constexpr bool reduce_uses_staged(int slot, int size, size_t bytes, size_t limit) {
  return use_staged(slot, size, bytes, static_cast<size_t>(size), limit);
}
// Parts (CTAs) of a staged call whose receiver takes `data_bytes` in all: one per `cta_bytes`, 1 to kStagedMaxParts.
GSHMEM_HD constexpr int staged_parts(size_t data_bytes, size_t cta_bytes) {
  const size_t per = cta_bytes > 0 ? cta_bytes : 1, n = (data_bytes + per - 1) / per;
  return n < 1 ? 1 : n > static_cast<size_t>(kStagedMaxParts) ? kStagedMaxParts : static_cast<int>(n);
}
// Which scopes run staged calls themselves (their dispatchers below ask use_staged): the host's one thread. The
// stream kernels run them when the launching host code picked them (src/transport/gpu_coll.cu), the device API's
// scopes never.
template <class Scope>
struct StagedScope {
  static constexpr bool value = false;
};
#if !defined(__CUDACC_RTC__)
template <>
struct StagedScope<HostThread> {
  static constexpr bool value = true;
};
#endif
// Flag [member][part] and section `section` (at byte `off` modulo 16) of a staged buffer.
GSHMEM_COLL_FN uint64_t* staged_flag(uint64_t* buf, int member, int part) {
  return buf + static_cast<size_t>(member) * kStagedMaxParts + static_cast<size_t>(part);
}
GSHMEM_COLL_FN char* staged_section(uint64_t* buf, size_t section, size_t stride, size_t off) {
  return reinterpret_cast<char*>(buf) + kStagedFlagBytes + section * stride + off;
}
// A block's place modulo 16: its section starts there too, so copies into and out of sections keep the 16-byte
// vectors where the block's own addresses allow them (symmetric addresses: the same on every member).
GSHMEM_COLL_FN size_t staged_offset(const void* p) { return reinterpret_cast<uintptr_t>(p) & 15; }
// After the group's copies of part `part`: one fence, then this member's flag [my index][part] in every other
// member's buffer.
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void staged_signal(Env& env, const TeamValue& t, int slot, const LLCall& c, int part) {
  Scope::sync();  // the group's copies precede the fence of the thread that signals
  if (Scope::rank() != 0) return;
  env.release_fence();
  for (int k = 1; k < t.size; ++k) {
    const int r = member_after(t, t.my_rank, k);
    env.store_relaxed(staged_flag(env.staged_buf(team_world_pe(t, r), slot, c.parity), t.my_rank, part), c.number);
  }
}
// Waits (the group's threads side by side) for flag [m][part] of every member m that `from(m)` selects in this
// member's buffer, then syncs the group: their data is visible to all of it.
template <class Scope, class Env, class From>
GSHMEM_COLL_FN void staged_wait(Env& env, const TeamValue& t, uint64_t* buf, const LLCall& c, int part, From from,
                                const char* call) {
  for (int m = Scope::rank(); m < t.size; m += Scope::size())
    if (m != t.my_rank && from(m)) env.wait_flag(staged_flag(buf, m, part), c.number, call);
  Scope::sync();
}
// broadcast, staged: the root copies its part of src into section 0 of every other member's buffer and signals
// them; every non-root signals every other member with part 0's flag alone (the two-buffer argument needs every
// call to hear from every member, as broadcast_ll's flag lines). Non-roots wait for the root's flag of their part
// (and, in part 0, the other non-roots'), then copy their part out; the root waits in part 0 for the non-roots'.
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_OUTLINE_FN void broadcast_staged(Env env, TeamValue t, int slot, void* dest, const void* src,
                                             size_t bytes, int root, const char* call, Part part) {
  const LLCall c = ll_begin<Scope>(env, slot, part);
  const size_t stride = staged_stride(bytes), off = staged_offset(dest);
  size_t lo, hi;
  part.range(bytes, kPartAlign, lo, hi);
  const bool is_root = t.my_rank == root;
  if (is_root) {
    for (int k = 1; k < t.size; ++k) {  // part b starts b members further on: the links busy together
      const int r = member_after(t, root, 1 + (part.index + k - 1) % (t.size - 1));
      if (hi > lo)
        env.template copy<Scope>(staged_section(env.staged_buf(team_world_pe(t, r), slot, c.parity), 0, stride, off) +
                                     lo, static_cast<const char*>(src) + lo, hi - lo);
    }
    if (hi > lo && dest != src)
      env.template copy<Scope>(static_cast<char*>(dest) + lo, static_cast<const char*>(src) + lo, hi - lo);
  }
  if (is_root || part.index == 0) staged_signal<Scope>(env, t, slot, c, part.index);
  uint64_t* buf = env.staged_buf(team_world_pe(t, t.my_rank), slot, c.parity);
  staged_wait<Scope>(env, t, buf, c, part.index,
                     [&](int m) { return is_root ? part.index == 0 : m == root || part.index == 0; }, call);
  if (!is_root && hi > lo) env.template copy_landed<Scope>(static_cast<char*>(dest) + lo,
                                                            staged_section(buf, 0, stride, off) + lo, hi - lo);
  ll_end<Scope>(env, slot, part);
}

// broadcast by LL: the root pushes to every other member's section `root`; each copies it out. Every non-root also
// stores one flag line (line 0 of section `its index`) in every other member's buffer and waits for the others':
// the two-buffer argument needs every call to hear from every member (a root that heard from nobody could run two
// broadcasts ahead and overwrite the buffer a late member has still to read). Of several parts, part 0 sends and
// waits for the flag lines.
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_OUTLINE_FN void broadcast_ll(Env env, TeamValue t, int slot, void* dest, const void* src, size_t bytes,
                                         int root, const char* call, Part part) {
  const LLCall c = ll_begin<Scope>(env, slot, part);
  const LLLanes ln = ll_lanes<Scope>(part);
  const size_t n = ll_lines(bytes);
  if (t.my_rank == root) {
    for (int k = 1; k < t.size; ++k) {
      const int r = member_after(t, root, k);
      ll_push(env, env.ll_buf(team_world_pe(t, r), slot, c.parity), static_cast<size_t>(root), src, bytes, c.flag, ln);
    }
    if (dest != src) {
      size_t lo, hi;
      part.range(bytes, kPartAlign, lo, hi);
      if (hi > lo) env.template copy<Scope>(static_cast<char*>(dest) + lo, static_cast<const char*>(src) + lo, hi - lo);
    }
  } else if (part.index == 0) {
    const uint64_t f = static_cast<uint64_t>(c.flag) << 32;
    for (int r = Scope::rank(); r < t.size; r += Scope::size())
      if (r != t.my_rank)
        env.ll_store(env.ll_buf(team_world_pe(t, r), slot, c.parity) + 2 * n * static_cast<size_t>(t.my_rank), f, f);
  }
  const uint64_t* buf = env.ll_buf(team_world_pe(t, t.my_rank), slot, c.parity);
  const uint64_t* bad = nullptr;  // a line whose wait gave up
  for (int m = Scope::rank(); part.index == 0 && m < t.size && bad == nullptr; m += Scope::size()) {  // flag lines
    uint64_t unused;
    if (m != root && m != t.my_rank && !ll_pull(env, buf, static_cast<size_t>(m), n, 0, c.flag, unused))
      bad = buf + 2 * n * static_cast<size_t>(m);
  }
  if (bad == nullptr && t.my_rank != root) {  // root's data, line by line
    char* d = static_cast<char*>(dest);
    for (size_t l = ln.first; l < n; l += ln.step) {
      uint64_t data;
      if (!ll_pull(env, buf, static_cast<size_t>(root), n, l, c.flag, data)) {
        bad = buf + 2 * (static_cast<size_t>(root) * n + l);
        break;
      }
      ll_store_data(d + 8 * l, data, bytes - 8 * l);
    }
  }
  if (bad != nullptr) env.ll_fail(bad, call);
  ll_end<Scope>(env, slot, part);
}

// broadcast: root's `bytes` at src land in dest of every member (the root's too; dest == src on the root is
// allowed). One-shot: root pushes into every member's dest (staggered from the next member; part b of a split
// starts b members further, so the local copy and the links run at once), between two syncs: the first makes sure
// no member still uses its dest, the second that every copy has landed (and the root's src is free).
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void broadcast_data(Env& env, const TeamValue& t, void* dest, const void* src, size_t bytes, int root,
                                   Part part) {
  if (t.my_rank != root || bytes == 0) return;
  size_t lo, hi;
  part.range(bytes, kPartAlign, lo, hi);
  if (lo == hi) return;
  for (int j = 0; j < t.size; ++j) {
    const int k = part_step(t, part, j);
    const int r = member_after(t, t.my_rank, k);
    if (r == root && dest == src) continue;
    env.template copy<Scope>(static_cast<char*>(env.peer(dest, team_world_pe(t, r))) + lo,
                             static_cast<const char*>(src) + lo, hi - lo);
  }
}

// Two-shot broadcast (more than 2 members, from `two_shot_bytes` of data: GSHMEM_COLL_BCAST_TWO_SHOT_BYTES, 4 MiB;
// host and stream forms): one-shot sends the data (size - 1) times over the root's links, so at 4 PEs it runs at a
// third of their speed (bench/NOTES.md entry 32). Here the data is cut into size - 1 pieces, piece j owned by the
// member j + 1 places after the root, and each piece into `chunks` chunks (broadcast_chunks). The root copies chunk
// c of every piece into its owner's dest, then stores the call's epoch into each owner's chunk flag [c] (and copies
// chunk c of all of src into its own dest unless in place); each owner waits for its flag [c], then forwards chunk c
// of its piece from its dest into every other non-root's dest. So the forward of chunk c runs while the root sends
// chunk c + 1: the root's links carry the data once, each other member's (size - 2) / (size - 1) of it, in about
// one copy time (entry 33's unpipelined form, a team sync between the phases, took 1.5 ms at 256 MiB against
// NVSHMEM's 0.78). Only the entry and exit syncs; the exit sync completes the forwards.
// Split over CTAs (stream kernels), part b of every chunk is copied, flagged ([c][b]) and forwarded by CTA b on
// every member, so a CTA waits only for the same CTA of the root: every member runs the same number of parts
// (min(coll_ctas(bytes), kBcastParts) in gpu::collective_on_stream, from settings checked equal at init). The flag
// value is the slot's sync epoch after the entry sync (the same on every member, larger than any earlier call's).
// Host and stream forms only: the device API's scopes are inlined into users' kernels, and the two phases pushed
// the block and warp broadcast past 64 registers a thread (spills under __launch_bounds__(1024), the
// compile.*regs_1024 checks), so they stay one-shot, as their reduce does (NOTES 27). TwoShotScope says which
// scopes run it: HostThread here, the stream kernels' scope in src/transport/gpu_coll.cu.
template <class Scope>
struct TwoShotScope {
  static constexpr bool value = false;
};
#if !defined(__CUDACC_RTC__)
template <>
struct TwoShotScope<HostThread> {
  static constexpr bool value = true;
};
#endif
GSHMEM_HD constexpr bool broadcast_uses_two_shot(int size, size_t bytes, size_t threshold) {
  return size > 2 && bytes >= threshold;
}
// Chunk flags per team slot: [kBcastChunks][kBcastParts] uint64 in every PE's heap (runtime/device_state.hpp).
inline constexpr int kBcastChunks = 16;
inline constexpr int kBcastParts = 32;
inline constexpr size_t kBcastFlagBytes = sizeof(uint64_t) * kBcastChunks * kBcastParts;
// Chunks of a two-shot broadcast of `bytes`: each chunk costs a CTA a fence and a flag (~1.5 us on NVLink) and the
// pipeline's fill and drain cost a chunk's copy time, so about sqrt(bytes / 512 KiB) of them (time ~ copy * (1 +
// 1/K) + K * fence is least at K ~ sqrt(copy / fence)): 2 at 4 MiB, 5 at 16 MiB, 11 at 64 MiB, 16 from 128 MiB.
GSHMEM_HD constexpr int broadcast_chunks(size_t bytes) {
  int k = 1;
  while (k < kBcastChunks && static_cast<size_t>(k + 1) * static_cast<size_t>(k + 1) * (size_t(512) << 10) <= bytes)
    ++k;
  return k;
}
// [lo, hi): the piece of team member r of a two-shot broadcast of `bytes` (r != root: the root owns no piece).
GSHMEM_HD void broadcast_piece(const TeamValue& t, int root, int r, size_t bytes, size_t& lo, size_t& hi) {
  const int j = r > root ? r - root - 1 : r - root - 1 + t.size;
  Part{j, t.size - 1}.range(bytes, kPartAlign, lo, hi);
}
// [lo, hi): part `part` of chunk c (of `chunks`) of member r's piece.
GSHMEM_HD void broadcast_chunk_part(const TeamValue& t, int root, int r, size_t bytes, int chunks, int c,
                                    Part part, size_t& lo, size_t& hi) {
  size_t plo, phi, clo, chi;
  broadcast_piece(t, root, r, bytes, plo, phi);
  Part{c, chunks}.range(phi - plo, kPartAlign, clo, chi);
  part.range(chi - clo, kPartAlign, lo, hi);
  lo += plo + clo;
  hi += plo + clo;
}
// The data phase between the entry and exit syncs (every member, part `part` of part.count; at most kBcastParts).
// The root also copies its own dest chunk by chunk after each chunk's flags, unless `root_copies` is false: the
// stream kernel gives that copy to CTAs of its own (broadcast_root_copy), so the copies that feed the links do not
// wait for it (bench/NOTES.md entry 74).
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void broadcast_two_shot_data(Env& env, const TeamValue& t, int slot, void* dest, const void* src,
                                            size_t bytes, int root, Part part, const char* call,
                                            bool root_copies = true) {
  if (bytes == 0) return;
  const uint64_t epoch = *env.epoch(slot);
  const int chunks = broadcast_chunks(bytes);
  char* d = static_cast<char*>(dest);
  const size_t flag = static_cast<size_t>(part.index);  // + c * kBcastParts
  if (t.my_rank == root) {
    const char* s = static_cast<const char*>(src);
    for (int c = 0; c < chunks; ++c) {
      for (int j = 0; j < t.size - 1; ++j) {  // part b starts b owners further on: the links busy together
        const int r = member_after(t, root, 1 + (part.index + j) % (t.size - 1));
        size_t lo, hi;
        broadcast_chunk_part(t, root, r, bytes, chunks, c, part, lo, hi);
        char* to = static_cast<char*>(env.peer(dest, team_world_pe(t, r)));
        if (lo < hi) env.template copy<Scope>(to + lo, s + lo, hi - lo);
      }
      Scope::sync();
      if (Scope::rank() == 0) {
        env.release_fence();
        for (int k = 1; k < t.size; ++k) {
          const int r = member_after(t, root, k);
          uint64_t* f = env.chunk_flags(team_world_pe(t, r), slot) + flag + static_cast<size_t>(c) * kBcastParts;
          env.store_relaxed(f, epoch);
        }
      }
      if (root_copies && dest != src) {
        for (int k = 1; k < t.size; ++k) {
          size_t lo, hi;
          broadcast_chunk_part(t, root, member_after(t, root, k), bytes, chunks, c, part, lo, hi);
          if (lo < hi) env.template copy<Scope>(d + lo, s + lo, hi - lo);
        }
      }
    }
    return;
  }
  const uint64_t* mine = env.chunk_flags(team_world_pe(t, t.my_rank), slot) + flag;
  for (int c = 0; c < chunks; ++c) {
    if (Scope::rank() == 0) env.wait_flag(mine + static_cast<size_t>(c) * kBcastParts, epoch, call);
    Scope::sync();  // the root's chunk landed, for the whole group
    size_t lo, hi;
    broadcast_chunk_part(t, root, t.my_rank, bytes, chunks, c, part, lo, hi);
    if (lo == hi) continue;
    for (int k = 1; k < t.size; ++k) {  // staggered from the next member
      const int r = member_after(t, t.my_rank, k);
      if (r == root) continue;
      env.template copy<Scope>(static_cast<char*>(env.peer(dest, team_world_pe(t, r))) + lo, d + lo, hi - lo);
    }
  }
}
// The root's own copy of a two-shot broadcast when broadcast_two_shot_data leaves it out: part `part` of src into
// dest (dest != src), between the same syncs.
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void broadcast_root_copy(Env& env, void* dest, const void* src, size_t bytes, Part part) {
  size_t lo, hi;
  part.range(bytes, kPartAlign, lo, hi);
  if (lo < hi) env.template copy<Scope>(static_cast<char*>(dest) + lo, static_cast<const char*>(src) + lo, hi - lo);
}
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void broadcast(Env& env, const TeamValue& t, int slot, void* dest, const void* src, size_t bytes,
                              int root, const char* call, size_t two_shot_bytes = kBroadcastTwoShotBytes) {
  if (use_ll(t.size, bytes, env.ll_limit()))
    return broadcast_ll<Scope>(env, t, slot, dest, src, bytes, root, call, Part::whole());
  if constexpr (StagedScope<Scope>::value) {
    if (use_staged(slot, t.size, bytes, 1, env.staged_limit()))
      return broadcast_staged<Scope>(env, t, slot, dest, src, bytes, root, call, Part::whole());
  }
  team_sync<Scope>(env, t, slot, call);
  entered<Scope>(env, t, slot, call);
  if constexpr (TwoShotScope<Scope>::value) {
    if (broadcast_uses_two_shot(t.size, bytes, two_shot_bytes)) {
      broadcast_two_shot_data<Scope>(env, t, slot, dest, src, bytes, root, Part::whole(), call);
      return team_sync<Scope>(env, t, slot, call);
    }
  }
  broadcast_data<Scope>(env, t, dest, src, bytes, root, Part::whole());
  team_sync<Scope>(env, t, slot, call);
}

// The data-movement collectives fcollect, alltoall and alltoalls, as one description: member i sends member j
// `nelems` elements of `elem` bytes. Element l is read at src + elem * sst * (b * nelems + l), where b = j when
// `per_member` (alltoall(s): src holds one block per member) or 0 (fcollect: one block for all), and written at
// dest + elem * dst * (i * nelems + l) of member j. dst == sst == 1: contiguous blocks (fcollect, alltoall).
struct Exchange {
  size_t elem;
  size_t nelems;
  ptrdiff_t dst;
  ptrdiff_t sst;
  bool per_member;
};

// Copies n elements of `elem` bytes from s (step sstep bytes) to d (step dstep bytes), the group's threads taking
// every Scope::size()-th element. Elements of 1, 2, 4, 8 bytes move as one aligned load and store (typed data is
// aligned to its size); other sizes byte by byte.
GSHMEM_COLL_SCOPE_TEMPLATE
GSHMEM_COLL_FN void copy_strided(char* d, ptrdiff_t dstep, const char* s, ptrdiff_t sstep, size_t elem, size_t n) {
  for (size_t l = static_cast<size_t>(Scope::rank()); l < n; l += static_cast<size_t>(Scope::size())) {
    char* o = d + static_cast<ptrdiff_t>(l) * dstep;
    const char* i = s + static_cast<ptrdiff_t>(l) * sstep;
    switch (elem) {
      case 1: *o = *i; break;
      case 2: *reinterpret_cast<uint16_t*>(o) = *reinterpret_cast<const uint16_t*>(i); break;
      case 4: *reinterpret_cast<uint32_t*>(o) = *reinterpret_cast<const uint32_t*>(i); break;
      case 8: *reinterpret_cast<uint64_t*>(o) = *reinterpret_cast<const uint64_t*>(i); break;
      default:
        for (size_t b = 0; b < elem; ++b) o[b] = i[b];
    }
  }
}

// The one routine of fcollect, alltoall and alltoalls (Exchange above). Each member pushes its block(s) to every
// member (itself included), staggered from the next member, between two syncs: the first makes sure no member
// still uses its dest, the second that every block has landed (and src may be reused). exchange_data is the
// pushes alone, for `part` of every block.
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void exchange_data(Env& env, const TeamValue& t, void* dest, const void* src, const Exchange& x,
                                  Part part) {
  if (x.nelems == 0 || x.elem == 0) return;
  const bool contiguous = x.dst == 1 && x.sst == 1;
  const ptrdiff_t dstep = x.dst * static_cast<ptrdiff_t>(x.elem), sstep = x.sst * static_cast<ptrdiff_t>(x.elem);
  size_t lo, hi;  // bytes of a contiguous block, elements of a strided one
  if (contiguous) part.range(x.elem * x.nelems, kPartAlign, lo, hi);
  else part.range(x.nelems, 1, lo, hi);
  if (lo == hi) return;
  char* mine = static_cast<char*>(dest) + static_cast<ptrdiff_t>(t.my_rank) * static_cast<ptrdiff_t>(x.nelems) * dstep;
  for (int j = 0; j < t.size; ++j) {
    const int k = part_step(t, part, j);
    const int r = member_after(t, t.my_rank, k);
    const char* block = static_cast<const char*>(src) +
                        (x.per_member ? static_cast<ptrdiff_t>(r) * static_cast<ptrdiff_t>(x.nelems) * sstep : 0);
    char* to = env.peer(mine, team_world_pe(t, r));
    if (contiguous)
      env.template copy<Scope>(to + lo, block + lo, hi - lo);
    else
      copy_strided<Scope>(to + static_cast<ptrdiff_t>(lo) * dstep, dstep, block + static_cast<ptrdiff_t>(lo) * sstep,
                          sstep, x.elem, hi - lo);
  }
}
// fcollect and alltoall by LL (contiguous blocks): each member pushes its block(s) to every other member's section
// `its index`, copies its own block locally, and copies the others' out of its buffer.
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_OUTLINE_FN void exchange_ll(Env env, TeamValue t, int slot, void* dest, const void* src, Exchange x,
                                        const char* call, Part part) {
  const LLCall c = ll_begin<Scope>(env, slot, part);
  const LLLanes ln = ll_lanes<Scope>(part);
  const size_t bytes = x.elem * x.nelems, me = static_cast<size_t>(t.my_rank);
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dest);
  for (int k = 1; k < t.size; ++k) {
    const int r = member_after(t, t.my_rank, k);
    ll_push(env, env.ll_buf(team_world_pe(t, r), slot, c.parity), me,
            s + (x.per_member ? static_cast<size_t>(r) * bytes : 0), bytes, c.flag, ln);
  }
  size_t lo, hi;
  part.range(bytes, kPartAlign, lo, hi);
  if (hi > lo) env.template copy<Scope>(d + me * bytes + lo, s + (x.per_member ? me * bytes : 0) + lo, hi - lo);
  ll_receive(env, env.ll_buf(team_world_pe(t, t.my_rank), slot, c.parity), t.size, t.my_rank, d, bytes, bytes,
             c.flag, ln, call);
  ll_end<Scope>(env, slot, part);
}
GSHMEM_HD constexpr bool exchange_uses_ll(int size, const Exchange& x, size_t limit) {
  return x.dst == 1 && x.sst == 1 && use_ll(size, x.elem * x.nelems, limit);
}
// fcollect and alltoall, staged (contiguous blocks; "Staged" above): each member copies its part of its block(s)
// into section `its index` of every other member's buffer and signals them, copies its own block locally, then
// waits for the others' flags of its part and copies their parts out of its buffer. Section m starts at the
// address modulo 16 of block m of dest (symmetric, so sender and receiver compute the same; the source need not
// be symmetric, nor at the same place on every member).
GSHMEM_HD constexpr bool exchange_uses_staged(int slot, int size, const Exchange& x, size_t limit) {
  return x.dst == 1 && x.sst == 1 && use_staged(slot, size, x.elem * x.nelems, static_cast<size_t>(size), limit);
}
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_OUTLINE_FN void exchange_staged(Env env, TeamValue t, int slot, void* dest, const void* src, Exchange x,
                                            const char* call, Part part) {
  const LLCall c = ll_begin<Scope>(env, slot, part);
  const size_t bytes = x.elem * x.nelems, me = static_cast<size_t>(t.my_rank), stride = staged_stride(bytes);
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dest);
  auto block = [&](int r) { return s + (x.per_member ? static_cast<size_t>(r) * bytes : 0); };  // for member r
  size_t lo, hi;
  part.range(bytes, kPartAlign, lo, hi);
  for (int k = 1; k < t.size && hi > lo; ++k) {  // part b starts b members further on: the links busy together
    const int r = member_after(t, t.my_rank, 1 + (part.index + k - 1) % (t.size - 1));
    env.template copy<Scope>(
        staged_section(env.staged_buf(team_world_pe(t, r), slot, c.parity), me, stride, staged_offset(d + me * bytes)) +
            lo, block(r) + lo, hi - lo);
  }
  staged_signal<Scope>(env, t, slot, c, part.index);
  if (hi > lo) env.template copy<Scope>(d + me * bytes + lo, block(t.my_rank) + lo, hi - lo);
  uint64_t* buf = env.staged_buf(team_world_pe(t, t.my_rank), slot, c.parity);
  staged_wait<Scope>(env, t, buf, c, part.index, [](int) { return true; }, call);
  for (int k = 1; k < t.size && hi > lo; ++k) {
    const size_t r = static_cast<size_t>(member_after(t, t.my_rank, k));
    char* to = d + r * bytes;
    env.template copy_landed<Scope>(to + lo, staged_section(buf, r, stride, staged_offset(to)) + lo, hi - lo);
  }
  ll_end<Scope>(env, slot, part);
}
GSHMEM_COLL_TEMPLATE
GSHMEM_COLL_FN void exchange(Env& env, const TeamValue& t, int slot, void* dest, const void* src, const Exchange& x,
                             const char* call) {
  if (exchange_uses_ll(t.size, x, env.ll_limit()))
    return exchange_ll<Scope>(env, t, slot, dest, src, x, call, Part::whole());
  if constexpr (StagedScope<Scope>::value) {
    if (exchange_uses_staged(slot, t.size, x, env.staged_limit()))
      return exchange_staged<Scope>(env, t, slot, dest, src, x, call, Part::whole());
  }
  team_sync<Scope>(env, t, slot, call);
  entered<Scope>(env, t, slot, call);
  exchange_data<Scope>(env, t, dest, src, x, Part::whole());
  team_sync<Scope>(env, t, slot, call);
}

// ---- reductions ----

// The ops of NVSHMEM's <T>_<op>_reduce / _reducescatter (and/or/xor: integer types; the others: integer and
// floating types; MaxLoc: double2_maxloc only). Integer sum and prod wrap modulo 2^bits for signed types too: they
// are computed in an unsigned type of at least T's width and at least unsigned int's (UnsignedOf), so neither
// signed overflow nor a promotion to int can occur; the conversion back to T keeps the low bits (two's complement).
enum class ReduceOp : int { And, Or, Xor, Max, Min, Sum, Prod, MaxLoc };

// 16-bit floating types (half, bfloat16): a specialisation with value = true and to_float / from_float (round to
// nearest even) marks T as one. They combine in float, rounded back to T after every step, on host and device
// alike, so CPU PEs and GPU PEs compute the same bits. The specialisations live where the types do:
// device/impl/coll.cuh (CUDA's __half, __nv_bfloat16), src/api/collectives.cpp (the CPU PEs' storage types).
template <class T>
struct Float16 {
  static constexpr bool value = false;
};

template <class T, bool Floating = (static_cast<T>(1) / static_cast<T>(2) != static_cast<T>(0))>
struct UnsignedOf {  // integer T
  using type = unsigned long long;
};
template <class T>
struct UnsignedOf<T, true> {  // floating T: arithmetic as is
  using type = T;
};

template <ReduceOp Op>
struct Combine;
template <>
struct Combine<ReduceOp::And> {
  template <class T>
  GSHMEM_HD static T apply(T a, T b) { return static_cast<T>(a & b); }
};
template <>
struct Combine<ReduceOp::Or> {
  template <class T>
  GSHMEM_HD static T apply(T a, T b) { return static_cast<T>(a | b); }
};
template <>
struct Combine<ReduceOp::Xor> {
  template <class T>
  GSHMEM_HD static T apply(T a, T b) { return static_cast<T>(a ^ b); }
};
template <>
struct Combine<ReduceOp::Max> {
  template <class T>
  GSHMEM_HD static T apply(T a, T b) {
    if constexpr (Float16<T>::value) return Float16<T>::to_float(a) < Float16<T>::to_float(b) ? b : a;
    else return a < b ? b : a;
  }
};
template <>
struct Combine<ReduceOp::Min> {
  template <class T>
  GSHMEM_HD static T apply(T a, T b) {
    if constexpr (Float16<T>::value) return Float16<T>::to_float(b) < Float16<T>::to_float(a) ? b : a;
    else return b < a ? b : a;
  }
};
template <>
struct Combine<ReduceOp::Sum> {
  template <class T>
  GSHMEM_HD static T apply(T a, T b) {
    if constexpr (Float16<T>::value) {
      return Float16<T>::from_float(Float16<T>::to_float(a) + Float16<T>::to_float(b));
    } else {
      using U = typename UnsignedOf<T>::type;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    }
  }
};
template <>
struct Combine<ReduceOp::Prod> {
  template <class T>
  GSHMEM_HD static T apply(T a, T b) {
    if constexpr (Float16<T>::value) {
      return Float16<T>::from_float(Float16<T>::to_float(a) * Float16<T>::to_float(b));
    } else {
      using U = typename UnsignedOf<T>::type;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    }
  }
};
// MaxLoc over pairs {x: value, y: location} (CUDA's double2): the larger x; equal x: the smaller y (MPI_MAXLOC's
// rule), so the result does not depend on the order members combine in.
template <>
struct Combine<ReduceOp::MaxLoc> {
  template <class T>
  GSHMEM_HD static T apply(T a, T b) {
    if (a.x != b.x) return a.x < b.x ? b : a;
    return b.y < a.y ? b : a;
  }
};

// Elements each thread of a group combines in registers per pass (a pass covers Scope::size() * this many).
// kBounded: the pass's loops run to the end of the data instead of over all K slots with a test in each — for
// HostThread, whose K (1024) is a cache-sized block rather than registers: a reduce of 2 elements then costs 2
// steps per member, not 1024 (CPU PEs, 8 bytes: 3.1 -> 0.4 us; bench/NOTES.md entry 19). The device scopes keep
// the fixed K (unrolled, in registers).
// kChunks: 16-byte chunks each thread of a device scope combines per pass where the data allows them
// (reduce_chunks; 0: the element loop only). kPairs: two members' chunks are loaded before either is combined
// (2 * kChunks loads in flight instead of kChunks). kTwoShot: the scope may run two-shot (large and in-place
// reduces); without it a reduce is one-shot and in place goes pass by pass with a team sync per pass
// (reduce_in_place).
// The default, DevicePass<0, false>, is the device API's scopes (thread, warp, block), inlined into users' kernels,
// where a 1024-thread kernel has 64 registers a thread: the wide form took 98 there and spilled 280-420 bytes
// under __launch_bounds__(1024), and narrower chunk passes still spilled in a kernel that loops over the call
// (gshmem-bench's; bench/NOTES.md entry 27), so the device API keeps the element loop. The library's stream
// kernels (512 threads, up to 128 registers) use a scope of their own with the wide form, DevicePass<4, true>
// (gpu::ReduceCta, src/transport/gpu_coll_reduce.cuh).
template <int Chunks, bool Wide>
struct DevicePass {
  static constexpr int kPerThread = 8;
  static constexpr bool kBounded = false;
  static constexpr int kChunks = Chunks;
  static constexpr bool kPairs = Wide;
  static constexpr bool kTwoShot = Wide;
};
template <class Scope>
struct ReducePass : DevicePass<0, false> {};
#if !defined(__CUDACC_RTC__)
template <>
struct ReducePass<HostThread> {
  static constexpr int kPerThread = 1024;
  static constexpr bool kBounded = true;
  static constexpr int kChunks = 0;
  static constexpr bool kPairs = false;
  static constexpr bool kTwoShot = true;
};
#endif

// acc[j] = p[j] (first) or Combine(acc[j], p[j]), j < n: the bounded passes' loop (inlined where n is a constant,
// so the compiler vectorises it at -O2 too).
template <ReduceOp Op, class T>
GSHMEM_COLL_FN void combine_run(T* acc, const T* p, size_t n, bool first) {
  if (first) {
    for (size_t j = 0; j < n; ++j) acc[j] = p[j];
  } else {
    for (size_t j = 0; j < n; ++j) acc[j] = Combine<Op>::apply(acc[j], p[j]);
  }
}

// One combining pass of the reductions, elements [base, hi) up to Scope::size() * K of them: thread r of the group
// takes base + r, base + r + size, ... (K in registers) and combines every member's source in team-index order.
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_FN void reduce_pass(Env& env, const TeamValue& t, const T* src, size_t first, size_t base, size_t hi,
                                T (&acc)[ReducePass<Scope>::kPerThread]) {
  constexpr int K = ReducePass<Scope>::kPerThread;
  if constexpr (ReducePass<Scope>::kBounded) {  // one thread: elements [base, base + n) in order, acc[i - base]
    const size_t n = hi - base < static_cast<size_t>(K) ? hi - base : static_cast<size_t>(K);
    for (int r = 0; r < t.size; ++r) {
      const T* p = env.peer(const_cast<T*>(src), team_world_pe(t, r)) + first + base;
      if (n == static_cast<size_t>(K)) combine_run<Op>(acc, p, static_cast<size_t>(K), r == 0);  // count known:
      else combine_run<Op>(acc, p, n, r == 0);                                                  // vectorised
    }
  } else {  // device scopes
    // Types of 4 bytes or less: the K elements of two members are loaded before either is combined, so a pass waits
    // for one round trip to the peers a member pair instead of one a member (reduce_chunks' kPairs on the element
    // loop; 2K loaded values a thread, which the device API's 64 registers hold for these types, not for 8-byte
    // ones, whose paired loop spilled in compile.device_regs_1024: bench/NOTES.md entry 64). The element count a
    // thread has in the pass (nk) is computed once, so the loads index from one pointer a member (a 64-bit bound
    // test per load spilled the half reduce there). The combine order stays member by member in team-index order.
    const size_t step = static_cast<size_t>(Scope::size());
    const size_t mine = base + static_cast<size_t>(Scope::rank());
    if constexpr (sizeof(T) <= 4) {
      // this thread's elements below hi: mine, mine + step, ... (nk of them, at most K)
      const int nk = mine >= hi ? 0 : (hi - mine - 1) / step + 1 < static_cast<size_t>(K)
                                           ? static_cast<int>((hi - mine - 1) / step + 1) : K;
      for (int r = 0; r < t.size; r += 2) {
        const bool two = r + 1 < t.size;
        const T* a = env.peer(const_cast<T*>(src), team_world_pe(t, r)) + first + mine;
        const T* b = two ? env.peer(const_cast<T*>(src), team_world_pe(t, r + 1)) + first + mine : a;
        T va[K], vb[K];
        for (int k = 0; k < K; ++k) {
          if (k < nk) {
            va[k] = a[static_cast<size_t>(k) * step];
            if (two) vb[k] = b[static_cast<size_t>(k) * step];
          }
        }
        for (int k = 0; k < K; ++k) {
          if (k < nk) {
            acc[k] = r == 0 ? va[k] : Combine<Op>::apply(acc[k], va[k]);
            if (two) acc[k] = Combine<Op>::apply(acc[k], vb[k]);
          }
        }
      }
    } else {
      for (int r = 0; r < t.size; ++r) {
        const T* p = env.peer(const_cast<T*>(src), team_world_pe(t, r)) + first;
        for (int k = 0; k < K; ++k) {
          const size_t i = mine + static_cast<size_t>(k) * step;
          if (i < hi) acc[k] = r == 0 ? p[i] : Combine<Op>::apply(acc[k], p[i]);
        }
      }
    }
  }
}
// Writes a pass's combined elements (reduce_pass's layout) to dest, those below hi.
GSHMEM_COLL_STORE_TEMPLATE
GSHMEM_COLL_FN void store_pass(T* dest, const T (&acc)[K], size_t base, size_t hi) {
  if constexpr (ReducePass<Scope>::kBounded) {
    const size_t end = hi - base < static_cast<size_t>(K) ? hi : base + static_cast<size_t>(K);
    for (size_t i = base; i < end; ++i) dest[i] = acc[i - base];
    return;
  }
  const size_t step = static_cast<size_t>(Scope::size());
  const size_t mine = base + static_cast<size_t>(Scope::rank());
  for (int k = 0; k < K; ++k) {
    const size_t i = mine + static_cast<size_t>(k) * step;
    if (i < hi) dest[i] = acc[k];
  }
}
// dest[i] = op over members of src[first + i], i in [lo, hi), element by element (reduce_pass / store_pass).
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_FN void reduce_elements(Env& env, const TeamValue& t, T* dest, const T* src, size_t first, size_t lo,
                                    size_t hi) {
  constexpr int K = ReducePass<Scope>::kPerThread;
  const size_t step = static_cast<size_t>(Scope::size());
  for (size_t base = lo; base < hi; base += step * K) {
    T acc[K] = {};
    reduce_pass<Scope, Op>(env, t, src, first, base, hi, acc);
    store_pass<Scope>(dest, acc, base, hi);
  }
}

// 16 bytes moved by one load or store (device code: one 128-bit access).
struct alignas(16) Chunk16 {
  uint64_t w[2];
};
// Elements of T in a Chunk16; 0 where T does not tile 16 bytes with more than one element (double2: the element
// loop already moves 16 bytes at a time).
template <class T>
struct ChunkLanes {
  static constexpr int value = sizeof(T) < 16 && 16 % sizeof(T) == 0 ? static_cast<int>(16 / sizeof(T)) : 0;
};
template <ReduceOp Op, class T>
GSHMEM_COLL_FN Chunk16 combine_chunk(Chunk16 a, const Chunk16& b) {
  T* x = reinterpret_cast<T*>(&a);
  const T* y = reinterpret_cast<const T*>(&b);
  for (int j = 0; j < ChunkLanes<T>::value; ++j) x[j] = Combine<Op>::apply(x[j], y[j]);
  return a;
}
// Device scopes: chunk i of dest (16-byte aligned) = op over members, in team-index order, of chunk i at src (the
// same 16-byte alignment, in each member's heap), i < nchunks. Thread r of the group takes chunks r, r + size, ...
// kChunks per pass; with kPairs the chunks of two members are loaded before either is combined, so the loads from
// peers overlap (a member's loads waiting on the last one's combine leave the links idle: bench/NOTES.md entry 21).
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_FN void reduce_chunks(Env& env, const TeamValue& t, T* dest, const T* src, size_t nchunks) {
  constexpr int K = ReducePass<Scope>::kChunks;
  const size_t step = static_cast<size_t>(Scope::size());
  Chunk16* d = reinterpret_cast<Chunk16*>(dest);
  for (size_t base = static_cast<size_t>(Scope::rank()); base < nchunks; base += step * K) {
    Chunk16 acc[K];
    constexpr int kStep = ReducePass<Scope>::kPairs ? 2 : 1;
    for (int r = 0; r < t.size; r += kStep) {
      const bool two = kStep == 2 && r + 1 < t.size;
      const Chunk16* a = reinterpret_cast<const Chunk16*>(env.peer(const_cast<T*>(src), team_world_pe(t, r)));
      const Chunk16* b = two ? reinterpret_cast<const Chunk16*>(env.peer(const_cast<T*>(src), team_world_pe(t, r + 1)))
                             : a;
      Chunk16 va[K], vb[K];
      for (int k = 0; k < K; ++k) {
        const size_t i = base + static_cast<size_t>(k) * step;
        if (i < nchunks) {
          va[k] = a[i];
          if (two) vb[k] = b[i];
        }
      }
      for (int k = 0; k < K; ++k) {
        const size_t i = base + static_cast<size_t>(k) * step;
        if (i < nchunks) {
          acc[k] = r == 0 ? va[k] : combine_chunk<Op, T>(acc[k], va[k]);
          if (two) acc[k] = combine_chunk<Op, T>(acc[k], vb[k]);
        }
      }
    }
    for (int k = 0; k < K; ++k) {
      const size_t i = base + static_cast<size_t>(k) * step;
      if (i < nchunks) d[i] = acc[k];
    }
  }
}

// The data phase of a reduction: `part` of dest[i] = op over members of src[first + i], i < nelems. On device
// scopes the stretch where dest and the sources share their 16-byte alignment goes by reduce_chunks (the elements
// before and after it, and data without a shared alignment, element by element). Each output element is read and
// written by one thread, which loads it from every member before it stores it: dest may equal src + first on
// this member (two-shot in place), as long as no other member reads these elements meanwhile.
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_FN void reduce_data(Env& env, const TeamValue& t, T* dest, const T* src, size_t first, size_t nelems,
                                Part part) {
  size_t lo, hi;
  part.range(nelems, kPartAlign, lo, hi);
  if (lo >= hi) return;
  if constexpr (ReducePass<Scope>::kChunks > 0 && ChunkLanes<T>::value > 0) {
    constexpr size_t L = static_cast<size_t>(ChunkLanes<T>::value);
    const uintptr_t s = reinterpret_cast<uintptr_t>(src + first + lo), d = reinterpret_cast<uintptr_t>(dest + lo);
    if ((s & 15) == (d & 15) && s % sizeof(T) == 0) {
      size_t head = ((16 - (s & 15)) & 15) / sizeof(T);
      if (head > hi - lo) head = hi - lo;
      const size_t nchunks = (hi - lo - head) / L, mid = lo + head, tail = mid + nchunks * L;
      reduce_elements<Scope, Op>(env, t, dest, src, first, lo, mid);
      reduce_chunks<Scope, Op>(env, t, dest + mid, src + first + mid, nchunks);
      reduce_elements<Scope, Op>(env, t, dest, src, first, tail, hi);
      return;
    }
  }
  reduce_elements<Scope, Op>(env, t, dest, src, first, lo, hi);
}

// ---- one-shot and two-shot ----
// One-shot (reducescatter always; reduce below the two-shot threshold): each member reads its output elements
// from every member's source and combines them, between two syncs: the first makes sure every source is ready
// (and no member still reads a dest), the second that no member still reads this member's source when the call
// returns. Every member's output element i is op(op(s0[i], s1[i]), s2[i])... in team-index order, so every member
// computes the bit-identical result, floating point included.
// Two-shot (reduce at and above the threshold, and in place): member m owns block m of the elements (Part{m,
// size}: blocks of ceil(nelems / size), rounded up to kPartAlign elements); between the same two syncs, each group
// reduces its part of the block from every member's source into its own dest (the same team-index order, so the
// same bits) and pushes those elements into every other member's dest (reduce_owned_push, below). Each member
// reads nelems in total instead of nelems * size and each link carries each element once each way.
// In place (dest == source, the same on every member since the addresses are symmetric) is safe with two-shot
// alone: block m of every source is read by member m alone, by the group that then overwrites it, after its
// reads. (One-shot in place would let a member overwrite elements a peer still reads.)
// The threshold (GSHMEM_COLL_TWO_SHOT_BYTES): 0, the default, is automatic: on a team of 2 two-shot from
// kTwoShotBytesPair (while it still had a middle sync it lost there at every size: on 2 x H100 one-shot took 14.6 /
// 24.1 / 63.4 us at 1 / 4 / 16 MiB against two-shot's 20.8 / 30.0 / 68.2, bench/NOTES.md entry 41), on larger
// teams from kTwoShotBytes. Any other value applies to every team size (1: always two-shot).
GSHMEM_HD constexpr bool use_two_shot(int size, size_t bytes, bool in_place, size_t threshold) {
  return size > 1 &&
         (in_place || bytes >= (threshold != 0 ? threshold : size > 2 ? kTwoShotBytes : kTwoShotBytesPair));
}

// In place on a scope without two-shot (ReducePass::kTwoShot false, the device API's scopes): each pass is combined
// into registers, then a team sync (every member has read the pass's elements of every source), then written; the
// next pass reads other elements. One team sync per pass of Scope::size() * kPerThread elements.
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_FN void reduce_in_place(Env& env, const TeamValue& t, int slot, T* dest, const T* src, size_t nelems,
                                    const char* call) {
  constexpr int K = ReducePass<Scope>::kPerThread;
  const size_t step = static_cast<size_t>(Scope::size());
  for (size_t base = 0; base < nelems; base += step * K) {
    T acc[K] = {};
    reduce_pass<Scope, Op>(env, t, src, 0, base, nelems, acc);
    team_sync<Scope>(env, t, slot, call);
    store_pass<Scope>(dest, acc, base, nelems);
  }
}

// Two-shot, first phase's data: `part` of this member's block, reduced from every member's source into its dest.
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_FN void reduce_owned_data(Env& env, const TeamValue& t, T* dest, const T* src, size_t nelems, Part part) {
  size_t lo, hi;
  Part{t.my_rank, t.size}.range(nelems, kPartAlign, lo, hi);
  reduce_data<Scope, Op>(env, t, dest + lo, src, lo, hi - lo, part);
}
// Two-shot's data in one phase: `part` of this member's block reduced from every member's source into its dest,
// then the same elements pushed into every other member's dest (staggered from the next member), with no team sync
// between. A member writes only its own block of the others' dests, which nobody reads during the call; in place,
// block m of a source is read by member m alone, and by the same group that then overwrites it. So the sync the
// two phases had between them (bench/NOTES.md entry 74) bought nothing.
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_FN void reduce_owned_push(Env& env, const TeamValue& t, T* dest, const T* src, size_t nelems, Part part) {
  size_t blo, bhi, lo, hi;
  Part{t.my_rank, t.size}.range(nelems, kPartAlign, blo, bhi);
  part.range(bhi - blo, kPartAlign, lo, hi);
  if (lo >= hi) return;
  T* mine = dest + blo + lo;
  reduce_data<Scope, Op>(env, t, mine, src, blo + lo, hi - lo, Part::whole());
  Scope::sync();  // the group's reduced elements are in dest before any of its threads copies them out
  for (int k = 1; k < t.size; ++k) {
    const int r = member_after(t, t.my_rank, k);
    env.template copy<Scope>(env.peer(mine, team_world_pe(t, r)), mine, (hi - lo) * sizeof(T));
  }
}

GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_FN void reduce_one_shot(Env& env, const TeamValue& t, int slot, T* dest, const T* src, size_t first,
                                    size_t nelems, const char* call) {
  team_sync<Scope>(env, t, slot, call);
  entered<Scope>(env, t, slot, call);
  reduce_data<Scope, Op>(env, t, dest, src, first, nelems, Part::whole());
  team_sync<Scope>(env, t, slot, call);
}
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_FN void reduce_two_shot(Env& env, const TeamValue& t, int slot, T* dest, const T* src, size_t nelems,
                                    const char* call) {
  team_sync<Scope>(env, t, slot, call);
  entered<Scope>(env, t, slot, call);
  reduce_owned_push<Scope, Op>(env, t, dest, src, nelems, Part::whole());
  team_sync<Scope>(env, t, slot, call);
}

// reduce (scatter false) and reducescatter (true) by LL: each member pushes its source (reducescatter: block r of
// it) to every other member r's section `its index`; each combines line by line in team-index order, its own
// elements read from its source (so every member computes the bits the one-shot path does). In place is safe: the
// group pushes every line of its lanes before it writes them to dest, and no member reads another's source.
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_OUTLINE_FN void reduce_ll(Env env, TeamValue t, int slot, T* dest, const T* src, size_t nelems,
                                      bool scatter, const char* call, Part part) {
  constexpr size_t E = 8 / sizeof(T);  // elements per line
  const LLCall c = ll_begin<Scope>(env, slot, part);
  const LLLanes ln = ll_lanes<Scope>(part);
  const size_t bytes = nelems * sizeof(T), n = ll_lines(bytes);
  for (int k = 1; k < t.size; ++k) {
    const int r = member_after(t, t.my_rank, k);
    const T* from = src + (scatter ? static_cast<size_t>(r) * nelems : 0);
    ll_push_lines(env, env.ll_buf(team_world_pe(t, r), slot, c.parity), static_cast<size_t>(t.my_rank), n, c.flag,
                  ln, [&](size_t l) { return ll_pack(from + l * E, nelems - l * E); });
  }
  // In place: every line of the group's lanes pushed before dest (= src) changes. The group writes only lines of
  // its own lanes, so other parts need not wait.
  Scope::sync();
  const T* mine = src + (scatter ? static_cast<size_t>(t.my_rank) * nelems : 0);
  const uint64_t* buf = env.ll_buf(team_world_pe(t, t.my_rank), slot, c.parity);
  const uint64_t* bad = nullptr;  // a line whose wait gave up
  for (size_t l = ln.first; l < n; l += ln.step) {
    const size_t e0 = l * E, ne = nelems - e0 < E ? nelems - e0 : E;
    T acc[E] = {};
    for (int r = 0; r < t.size; ++r) {
      uint64_t data = 0;
      if (r == t.my_rank) data = ll_pack(mine + e0, ne);
      else if (!ll_pull(env, buf, static_cast<size_t>(r), n, l, c.flag, data)) {
        bad = buf + 2 * (static_cast<size_t>(r) * n + l);
        break;
      }
      T got[E];
      ll_unpack(got, data);
      for (size_t j = 0; j < E; ++j)  // a constant count: acc and got stay in registers
        if (j < ne) acc[j] = r == 0 ? got[j] : Combine<Op>::apply(acc[j], got[j]);
    }
    if (bad != nullptr) break;
    for (size_t j = 0; j < E; ++j)
      if (j < ne) dest[e0 + j] = acc[j];
  }
  if (bad != nullptr) env.ll_fail(bad, call);
  ll_end<Scope>(env, slot, part);
}

// The staged buffer as reduce_data's environment: peer(p, pe) is where member pe's copy of p lies for this call
// (own: this member's block as is; p - own bytes into the section member pe's block landed in); the rest is env's.
template <class Env>
struct StagedView {
  Env& env;
  const TeamValue& t;
  const char* own;
  uint64_t* buf;
  size_t stride;
  size_t off;
  template <class T>
  GSHMEM_COLL_FN T* peer(T* p, int pe) const {
    const int r = team_rank_of(t, pe);
    if (r == t.my_rank) return p;
    char* at = staged_section(buf, static_cast<size_t>(r), stride, off) + (reinterpret_cast<const char*>(p) - own);
    return reinterpret_cast<T*>(at);
  }
};
// reduce (scatter false) and reducescatter (true), staged ("Staged" above): each member copies its part of its
// source (reducescatter: of block r) into section `its index` of every other member r's buffer and signals; then
// waits for the others' flags of its part and combines its part (reduce_data, the one-shot path's code: the same
// team-index order, so the same bits) from its own block and the sections. In place (reduce) is safe: a part's
// elements are pushed before the group writes them, and each part writes only its own elements.
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_OUTLINE_FN void reduce_staged(Env env, TeamValue t, int slot, T* dest, const T* src, size_t nelems,
                                          bool scatter, const char* call, Part part) {
  const LLCall c = ll_begin<Scope>(env, slot, part);
  const size_t me = static_cast<size_t>(t.my_rank), stride = staged_stride(nelems * sizeof(T));
  size_t lo, hi;  // elements, as reduce_data splits them
  part.range(nelems, kPartAlign, lo, hi);
  for (int k = 1; k < t.size && hi > lo; ++k) {
    const int r = member_after(t, t.my_rank, 1 + (part.index + k - 1) % (t.size - 1));
    const T* from = src + (scatter ? static_cast<size_t>(r) * nelems : 0);
    env.template copy<Scope>(
        staged_section(env.staged_buf(team_world_pe(t, r), slot, c.parity), me, stride, staged_offset(from)) +
            lo * sizeof(T), from + lo, (hi - lo) * sizeof(T));
  }
  staged_signal<Scope>(env, t, slot, c, part.index);
  uint64_t* buf = env.staged_buf(team_world_pe(t, t.my_rank), slot, c.parity);
  staged_wait<Scope>(env, t, buf, c, part.index, [](int) { return true; }, call);
  const T* mine = src + (scatter ? me * nelems : 0);
  StagedView<Env> view{env, t, reinterpret_cast<const char*>(mine), buf, stride, staged_offset(mine)};
  reduce_data<Scope, Op>(view, t, dest, mine, 0, nelems, part);
  ll_end<Scope>(env, slot, part);
}

// reduce (allreduce): dest[i] = op over members 0..size-1 of source[i], i < nelems, on every member. dest ==
// source allowed; otherwise they must not overlap. Two-shot from `two_shot_bytes` of data and in place where the
// scope has it (ReducePass::kTwoShot); otherwise one-shot, and in place pass by pass.
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_FN void reduce(Env& env, const TeamValue& t, int slot, T* dest, const T* src, size_t nelems,
                           const char* call, size_t two_shot_bytes = 0) {
  if constexpr (sizeof(T) <= 8) {
    if (reduce_uses_ll<T>(t.size, nelems, env.ll_limit()))
      return reduce_ll<Scope, Op>(env, t, slot, dest, src, nelems, false, call, Part::whole());
  }
  if constexpr (StagedScope<Scope>::value) {
    if (reduce_uses_staged(slot, t.size, nelems * sizeof(T), env.staged_limit()))
      return reduce_staged<Scope, Op>(env, t, slot, dest, src, nelems, false, call, Part::whole());
  }
  const bool in_place = static_cast<const T*>(dest) == src;
  if constexpr (ReducePass<Scope>::kTwoShot) {
    if (use_two_shot(t.size, nelems * sizeof(T), in_place, two_shot_bytes))
      return reduce_two_shot<Scope, Op>(env, t, slot, dest, src, nelems, call);
  } else if (in_place && t.size > 1) {
    team_sync<Scope>(env, t, slot, call);
    entered<Scope>(env, t, slot, call);
    reduce_in_place<Scope, Op>(env, t, slot, dest, src, nelems, call);
    return team_sync<Scope>(env, t, slot, call);
  }
  reduce_one_shot<Scope, Op>(env, t, slot, dest, src, 0, nelems, call);
}

// reducescatter: member m's dest[i] = op over members of source[m * nelems + i], i < nelems (source holds size
// blocks of nelems). dest and source must not overlap. One-shot: each member reads only its own block.
GSHMEM_COLL_REDUCE_TEMPLATE
GSHMEM_COLL_FN void reducescatter(Env& env, const TeamValue& t, int slot, T* dest, const T* src, size_t nelems,
                                  const char* call) {
  if constexpr (sizeof(T) <= 8) {
    if (reduce_uses_ll<T>(t.size, nelems, env.ll_limit()))
      return reduce_ll<Scope, Op>(env, t, slot, dest, src, nelems, true, call, Part::whole());
  }
  if constexpr (StagedScope<Scope>::value) {
    if (reduce_uses_staged(slot, t.size, nelems * sizeof(T), env.staged_limit()))
      return reduce_staged<Scope, Op>(env, t, slot, dest, src, nelems, true, call, Part::whole());
  }
  reduce_one_shot<Scope, Op>(env, t, slot, dest, src, static_cast<size_t>(t.my_rank) * nelems, nelems, call);
}

}  // namespace coll
}  // namespace gshmem
