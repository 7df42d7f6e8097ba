// gshmem MoE dispatch / combine (pplx-kernels' semantics; docs/moe.md): written once over a cooperation scope and
// an environment, as the collectives are (gshmem/coll/algorithms.h).
//
// Instantiated by CPU PEs' host calls (scope coll::HostThread, environment host::HostPeerEnv of src/api/host_env.hpp,
// in src/api/moe.cpp), by the library's stream kernels on GPU PEs (a cooperative grid, dev::detail::MoeGrid, run
// on 2 x H200) and by the device entry (dev::Block or dev::Warp over dev::detail::MoeEnv: gshmem/moe/device.cuh;
// run on 2 x H200 by mp_moe_gpu's device_entry case). tests/mp/moe.cpp also runs it over a group of host threads.
// Peers are reached only through the environment: peer(), copy<Scope>(), release_fence(), store_relaxed() and
// wait_flag() (the subset of algorithms.h's environment without the team flags).
//
// Symbols (docs/moe.md has the whole protocol): W PEs (world), E experts, L = ceil(E / W) local experts per PE
// (expert e lives on PE e / L as its local expert e % L; with E not a multiple of W the last PEs hold fewer),
// D = dp_size PEs per data-parallel group (PE r is in group r / D, group rank r % D; members of a group hold the
// same tokens), G = W / D groups, T = max tokens per group and call, K = experts per token, m = live tokens.
//
// Every call number c (1, 2, ...: dispatch c then combine c) uses half h = c & 1 of each staging area, and every
// signal value carries c, so nothing is reset between calls. A PE writes half h of a peer only after every PE
// reported call c - 2 finished (done flags), which is off the critical path.
#pragma once
#if !defined(__CUDACC_RTC__)
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#endif

#include "gshmem/coll/algorithms.h"

#if defined(__CUDACC__)
#define GSHMEM_MOE_TEMPLATE(...) _Pragma("nv_exec_check_disable") template <__VA_ARGS__>
#else
#define GSHMEM_MOE_TEMPLATE(...) template <__VA_ARGS__>
#endif
// Device passes only: nvcc hands the host pass's pragmas to the host compiler, where gcc -Wall warns "ignoring
// #pragma unroll" (an error in users' -Werror builds of a .cu that includes this header).
#if defined(__CUDA_ARCH__)
#define GSHMEM_MOE_UNROLL _Pragma("unroll")
#else
#define GSHMEM_MOE_UNROLL
#endif

namespace gshmem {
namespace moe {

// Bytes of the meta words at the end of a dispatch staging row: the source token index and its expert slot k.
inline constexpr uint64_t kMetaBytes = 8;
// Largest experts_per_token accepted (pplx-kernels' configurations use up to 8).
inline constexpr uint64_t kMaxExpertsPerToken = 64;
// Most chunks the staging-index scan splits the entries into (scan_chunks_of: about sqrt of the entries).
inline constexpr uint64_t kScanChunks = 1024;
// At most one chunk per this many (token, k) entries (the chunks' prefix pass costs as much as a chunk).
inline constexpr uint64_t kScanChunkEntries = 8;
// Most (chunk, expert) pairs per thread for which a group scans by pairs; beyond, per chunk (dispatch step 2).
inline constexpr uint64_t kScanPairsPerThread = 64;
// Loads a serial pass (the scan's prefix over chunks, the numbering of received rows) issues before it stores:
// each pass stores into the workspace it loads from, so without this the compiler keeps one load in flight.
inline constexpr uint64_t kLoadsInFlight = 16;
// Most rows a part sends before one release fence and their flags (a batch of puts with signal).
inline constexpr uint64_t kBatchRows = 32;
// Dispatch with its receive overlapped (Plan::recv_share): the sending parts go through their rows in about this
// many waves of batches, so that rows land (and their receivers copy them) all along the send instead of at its end.
inline constexpr uint64_t kSendWaves = 8;
// Plan::recv_share's default: the percentage of a group's parts that copy received rows while the others send.
inline constexpr uint64_t kRecvShare = 50;
// Phase stamps, for timing dispatch's phases on a GPU: in a build with GSHMEM_MOE_STAMPS defined (the CMake option
// of that name, off by default; only the library's stream kernels, src/transport/gpu_moe.cu) each part marks when
// it finished a phase (Env::stamp) and the library prints the medians at exit; elsewhere a stamp is nothing.
#if defined(GSHMEM_MOE_STAMPS)
#define GSHMEM_MOE_STAMP(env, phase) (env).stamp(phase)
#else
#define GSHMEM_MOE_STAMP(env, phase) ((void)0)
#endif
inline constexpr int kStampScanned = 0;   // step 2 done (the staging indices)
inline constexpr int kStampNumbered = 1;  // step 5a done (count words in, rows numbered)
inline constexpr int kStampSent = 2;      // a sending part's last flag stored
inline constexpr int kStampReceived = 3;  // a receiving part's last row copied out
inline constexpr int kStamps = 4;
// Fewest bytes of a piece: while there are fewer rows (tokens) than parts, a row (token) is split among several
// parts, in pieces of at least this, on the receive side and (Plan::send_piece_bytes) on the send side.
inline constexpr uint64_t kPieceBytes = 1024;

// The call state of the GPU stream kernels (src/transport/gpu_moe.cu), words of this PE's own part of the workspace
// (zeroed at creation): the call number c lives in device memory, so a dispatch / combine captured in a CUDA graph
// and replayed advances it (a kernel argument would be replayed unchanged). CPU PEs keep it on the host instead.
// A count word is c << kCountShift | tokens: the tokens are at most max_num_tokens <= 2^24 (25 bits), so the call
// number keeps 39 bits and wraps after 2^39 calls (years at thousands a second; with 32 bits it wrapped after
// 2^32, ~27 days at 1800 calls a second, and the wait for c << 32 was then met by call c - 2's word).
inline constexpr unsigned kCountShift = 25;
inline constexpr uint64_t kCountMask = (uint64_t{1} << kCountShift) - 1;
inline constexpr uint64_t kStateDispatches = 0;  // dispatches finished: the call number of the last one
inline constexpr uint64_t kStateCombines = 1;    // combines finished (== dispatches between calls)
inline constexpr uint64_t kStateTokens = 2;      // m of the last dispatch (combine must pass the same)
inline constexpr uint64_t kStateGridBarrier = 3;  // the stream kernels' grid barrier (a 32-bit word; device.cuh)
inline constexpr uint64_t kStateWords = 4;

// Everything the routines need to know, computed once (make_plan) from the configuration and this PE's place:
// plain data, the same on host and device; offsets are into the symmetric workspace (the same on every PE).
struct Plan {
  uint64_t max_tokens;         // T
  uint64_t num_experts;        // E
  uint64_t experts_per_token;  // K
  uint64_t hidden_dim;         // elements of an expert output row (combine)
  uint64_t x_bytes;            // bytes of a token row (dispatch), a multiple of 16
  uint64_t scale_bytes;        // bytes of its scale row (0: no scales), a multiple of 16
  uint64_t row_stride;         // dispatch staging row: x, scale, meta; rounded up to 16
  uint64_t y_stride;           // combine staging row: hidden_dim elements of up to 4 bytes; rounded up to 16
  uint64_t recv_off;           // [2][L][G * T] dispatch staging rows (written by senders)
  uint64_t row_flag_off;       // [2][L][G * T] uint64: c once the row landed
  uint64_t count_off;          // [2][L][G] uint64: c << kCountShift | tokens group g sends local expert l
  uint64_t comb_off;           // [2][T][K] combine staging rows (written by the experts' PEs)
  uint64_t comb_flag_off;      // [2][T][K] uint64: c once the row landed
  uint64_t done_off;           // [W] uint64: c once PE p finished call c (combine)
  uint64_t slot_off;           // [T * K] uint32, this PE's own scratch: staging index of (token, k)
  uint64_t expert_count_off;   // [E] uint32, this PE's own scratch: tokens per expert this call
  uint64_t scan_off;           // [scan_chunks][E] uint32, this PE's own scratch: per-chunk counts of the index scan
  uint64_t recv_first_off;     // [L * G + 1] uint32, this PE's own scratch: first received row of each pair (l, g)
  uint64_t recv_remote_off;    // [L * G + 1] uint32, this PE's own scratch: the same over other groups' rows only
  uint64_t scan_chunks;        // most chunks the staging-index scan splits the (token, k) entries into
  uint64_t scan_chunk_entries; // fewest entries per chunk (kScanChunkEntries; the CPU tests lower it to 1)
  uint64_t piece_bytes;        // fewest bytes of a receive-side piece (kPieceBytes; the CPU tests lower it to 16)
  uint64_t send_piece_bytes;   // of a send-side piece (kPieceBytes; ~0: rows always sent whole; tests: 16)
  uint64_t recv_share;         // dispatch: % of the parts that receive while the others send (kRecvShare; 0: after)
  uint64_t state_off;          // [4] uint64, this PE's own: the GPU stream kernels' call state (kState*)
  uint64_t bytes;              // workspace size
  int32_t rank;                // this PE (world)
  int32_t world;               // W
  int32_t dp_size;             // D
  int32_t local_experts;       // L
  int32_t groups;              // G
  int32_t my_local_experts;    // experts this PE holds: min(L, max(0, E - rank * L))
};
static_assert(sizeof(Plan) == 26 * 8 + 6 * 4, "Plan is plain data crossing host and device");

GSHMEM_HD uint64_t round16(uint64_t v) { return (v + 15) / 16 * 16; }

// The plan of PE `rank` of `world`; the caller has checked the arguments (src/api/moe.cpp: moe_create).
GSHMEM_HD Plan make_plan(uint64_t max_tokens, uint64_t num_experts, uint64_t experts_per_token, uint64_t hidden_dim,
                         uint64_t x_bytes, uint64_t scale_bytes, int dp_size, int rank, int world) {
  Plan p{};
  p.max_tokens = max_tokens;
  p.num_experts = num_experts;
  p.experts_per_token = experts_per_token;
  p.hidden_dim = hidden_dim;
  p.x_bytes = x_bytes;
  p.scale_bytes = scale_bytes;
  p.rank = rank;
  p.world = world;
  p.dp_size = dp_size;
  const uint64_t w = static_cast<uint64_t>(world);
  p.local_experts = static_cast<int32_t>((num_experts + w - 1) / w);
  p.groups = world / dp_size;
  const int64_t left = static_cast<int64_t>(num_experts) - static_cast<int64_t>(rank) * p.local_experts;
  p.my_local_experts = static_cast<int32_t>(left < 0 ? 0 : left > p.local_experts ? p.local_experts : left);
  p.row_stride = round16(x_bytes + scale_bytes + kMetaBytes);
  p.y_stride = round16(hidden_dim * 4);
  const uint64_t rows = 2 * static_cast<uint64_t>(p.local_experts) * static_cast<uint64_t>(p.groups) * max_tokens;
  const uint64_t comb_rows = 2 * max_tokens * experts_per_token;
  uint64_t off = 0;
  p.recv_off = off;
  off += rows * p.row_stride;
  p.row_flag_off = off;
  off += rows * 8;
  p.count_off = off;
  off += 2 * static_cast<uint64_t>(p.local_experts) * static_cast<uint64_t>(p.groups) * 8;
  p.comb_off = off;
  off += comb_rows * p.y_stride;
  p.comb_flag_off = off;
  off += comb_rows * 8;
  p.done_off = off;
  off += static_cast<uint64_t>(world) * 8;
  p.slot_off = off;
  off += round16(max_tokens * experts_per_token * 4);
  p.expert_count_off = off;
  off += round16(num_experts * 4);
  // The scan's scratch stays within 4 MiB whatever E is (1 chunk from E = 2^20 up: the scan is then serial).
  p.scan_chunks = kScanChunks * num_experts <= (uint64_t{1} << 20) ? kScanChunks
                  : num_experts >= (uint64_t{1} << 20)           ? 1
                                                                  : (uint64_t{1} << 20) / num_experts;
  p.scan_chunk_entries = kScanChunkEntries;
  p.piece_bytes = kPieceBytes;
  p.send_piece_bytes = kPieceBytes;
  p.recv_share = kRecvShare;
  p.scan_off = off;
  off += round16(p.scan_chunks * num_experts * 4);
  p.recv_first_off = off;
  off += round16((static_cast<uint64_t>(p.local_experts) * static_cast<uint64_t>(p.groups) + 1) * 4);
  p.recv_remote_off = off;
  off += round16((static_cast<uint64_t>(p.local_experts) * static_cast<uint64_t>(p.groups) + 1) * 4);
  p.state_off = off;
  off += kStateWords * 8;
  p.bytes = off;
  return p;
}

// Addresses in the workspace `ws` (this PE's copy; env.peer() translates to another PE's).
GSHMEM_HD uint64_t row_index(const Plan& p, uint64_t h, uint64_t l, uint64_t g, uint64_t idx) {
  return (h * static_cast<uint64_t>(p.local_experts) + l) * static_cast<uint64_t>(p.groups) * p.max_tokens +
         g * p.max_tokens + idx;
}
GSHMEM_HD char* recv_row(const Plan& p, char* ws, uint64_t h, uint64_t l, uint64_t g, uint64_t idx) {
  return ws + p.recv_off + row_index(p, h, l, g, idx) * p.row_stride;
}
GSHMEM_HD uint64_t* row_flag(const Plan& p, char* ws, uint64_t h, uint64_t l, uint64_t g, uint64_t idx) {
  return reinterpret_cast<uint64_t*>(ws + p.row_flag_off) + row_index(p, h, l, g, idx);
}
GSHMEM_HD uint64_t* count_word(const Plan& p, char* ws, uint64_t h, uint64_t l, uint64_t g) {
  return reinterpret_cast<uint64_t*>(ws + p.count_off) +
         (h * static_cast<uint64_t>(p.local_experts) + l) * static_cast<uint64_t>(p.groups) + g;
}
GSHMEM_HD char* comb_row(const Plan& p, char* ws, uint64_t h, uint64_t i, uint64_t k) {
  return ws + p.comb_off + ((h * p.max_tokens + i) * p.experts_per_token + k) * p.y_stride;
}
GSHMEM_HD uint64_t* comb_flag(const Plan& p, char* ws, uint64_t h, uint64_t i, uint64_t k) {
  return reinterpret_cast<uint64_t*>(ws + p.comb_flag_off) + (h * p.max_tokens + i) * p.experts_per_token + k;
}
GSHMEM_HD uint64_t* done_flag(const Plan& p, char* ws, int pe) {
  return reinterpret_cast<uint64_t*>(ws + p.done_off) + pe;
}
GSHMEM_HD uint64_t* state_word(const Plan& p, char* ws, uint64_t word) {
  return reinterpret_cast<uint64_t*>(ws + p.state_off) + word;
}

// The parts of a cooperation scope that move rows independently: Parts<Scope>::Part is a scope of its own (rank,
// size, sync), index() which part this thread is in and count() how many there are. By default a scope is one part
// (the host thread, a warp); device.cuh makes the warps of a block (and of the stream kernels' grid) its parts, so
// the rows of a call go out and come in a warp each, in parallel.
template <class Scope>
struct Parts {
  using Part = Scope;
  static GSHMEM_HD int index() { return 0; }
  static GSHMEM_HD int count() { return 1; }
};

// The group waits until *f >= v (one thread polls; the sync orders the others' later reads after its acquire).
GSHMEM_MOE_TEMPLATE(class Scope, class Env)
GSHMEM_COLL_FN void wait_group(Env& env, const uint64_t* f, uint64_t v, const char* call) {
  if (Scope::rank() == 0) env.wait_flag(f, v, call);
  Scope::sync();
}


// Rows per batch of a part's sends: its share of `rows` (so while there are fewer rows than parts, one row per
// part), at most kBatchRows.
GSHMEM_HD uint64_t batch_rows(uint64_t rows, uint64_t parts) {
  const uint64_t b = (rows + parts - 1) / parts;
  return b == 0 ? 1 : b > kBatchRows ? kBatchRows : b;
}

// Length of the pieces a row of `len` units is received in when `items` rows are shared by `parts` parts: the
// whole row when there are rows enough, else about len / ceil(parts / items), at least `min_len`, a multiple of
// `align` (so a piece starts 16-byte aligned).
GSHMEM_HD uint64_t piece_len(uint64_t len, uint64_t items, uint64_t parts, uint64_t min_len, uint64_t align) {
  if (items == 0 || items >= parts || len <= min_len) return len;
  const uint64_t want = (parts + items - 1) / items;
  uint64_t pl = (len + want - 1) / want;
  if (pl < min_len) pl = min_len;
  pl = (pl + align - 1) / align * align;
  return pl < len ? pl : len;
}
GSHMEM_HD uint64_t pieces_of(uint64_t len, uint64_t piece) { return piece == 0 ? 1 : (len + piece - 1) / piece; }

// The end of a send in pieces (dispatch step 4, combine step 1, while there are fewer rows than parts): no row's
// flag may be stored before every piece of it landed, and its pieces came from several parts. So each part that
// sent pieces (`sent`) makes them visible (one release fence by one of its threads, after the part's sync), the
// whole group syncs, and then the group's threads store the flags of rows j = rank, rank + size, ... below n
// (flag_of(j): the flag's address at its PE), each after a release fence of its own. The flags wait for the
// slowest piece (one sync more than the batches' path), which is what the pieces pay for their spread. The
// sync is the group's: every thread must call this, and all with the same n.
GSHMEM_MOE_TEMPLATE(class Scope, class Env, class FlagOf)
GSHMEM_COLL_FN void flag_pieces(Env& env, uint64_t n, bool sent, uint64_t c, const FlagOf& flag_of) {
  using Part = typename Parts<Scope>::Part;
  Part::sync();
  if (sent && Part::rank() == 0) env.release_fence();
  Scope::sync();
  const uint64_t size = static_cast<uint64_t>(Scope::size()), rank = static_cast<uint64_t>(Scope::rank());
  if (rank < n) env.release_fence();
  for (uint64_t j = rank; j < n; j += size) env.store_relaxed(flag_of(j), c);
}

// Pair q = l * G + g's count word: count_word(p, ws, h, l, g) without dividing q (the words are contiguous in q).
GSHMEM_HD uint64_t* pair_count_word(const Plan& p, char* ws, uint64_t h, uint64_t q) {
  return reinterpret_cast<uint64_t*>(ws + p.count_off) +
         h * static_cast<uint64_t>(p.local_experts) * static_cast<uint64_t>(p.groups) + q;
}
// Rows group g sent local expert l in call c, q = l * G + g (its count word, acquired before this is read). No
// division: recv_first's pass issues kLoadsInFlight of these at once, and a 64-bit division per load serialised
// them (bench/NOTES.md entry 74).
GSHMEM_HD uint64_t pair_rows(const Plan& p, char* ws, uint64_t h, uint64_t q) {
  return *pair_count_word(p, ws, h, q) & kCountMask;
}
GSHMEM_HD uint64_t recv_pairs(const Plan& p) {
  return static_cast<uint64_t>(p.my_local_experts) * static_cast<uint64_t>(p.groups);
}
// [recv_pairs + 1]: the received rows of call c numbered in out_x's order (pair q = l * G + g in turn, the rows of
// each in order): recv_first[q] is pair q's first, recv_first[recv_pairs] the total. Written by dispatch.
GSHMEM_HD uint32_t* recv_first(const Plan& p, char* ws) { return reinterpret_cast<uint32_t*>(ws + p.recv_first_off); }
// [recv_pairs + 1]: the same numbering over the pairs of other groups than this PE's (its own group's pairs hold no
// rows in it): the rows an overlapped dispatch at dp_size 1 receives, its own having gone straight to out_x.
GSHMEM_HD uint32_t* recv_remote(const Plan& p, char* ws) {
  return reinterpret_cast<uint32_t*>(ws + p.recv_remote_off);
}

// Where received row r (below the total) is: pair q (local expert q / G, group q % G), row r - first of it, and
// its place in out_x (and expert_y) l * G * T + off + r - first, off being the rows of expert l's earlier groups.
// A binary search over a numbering `f` (recv_first, or recv_remote: first and end are then in its numbering, off
// still recv_first's); `cur` keeps the last answer (a part's rows mostly fall in the pair before).
struct RecvCursor {
  uint64_t q, first, end, off;
};
GSHMEM_HD void recv_seek(const Plan& p, char* ws, RecvCursor& cur, uint64_t r, const uint32_t* f) {
  if (r >= cur.first && r < cur.end) return;
  uint64_t lo = 0, hi = recv_pairs(p);  // the last q with f[q] <= r: f[q + 1] > r, so pair q holds r
  while (hi - lo > 1) {
    const uint64_t mid = (lo + hi) / 2;
    if (f[mid] <= r) lo = mid;
    else hi = mid;
  }
  const uint64_t G = static_cast<uint64_t>(p.groups);
  const uint32_t* first = recv_first(p, ws);
  cur = RecvCursor{lo, f[lo], f[lo + 1], first[lo] - first[lo / G * G]};
}
GSHMEM_HD void recv_seek(const Plan& p, char* ws, RecvCursor& cur, uint64_t r) {
  recv_seek(p, ws, cur, r, recv_first(p, ws));
}

// Rows per batch of a sending part while dispatch overlaps its receive: its share of `rows` over about kSendWaves
// batches (at least 1, at most kBatchRows), so rows land all along the send.
GSHMEM_HD uint64_t wave_rows(uint64_t rows, uint64_t parts) {
  const uint64_t b = rows / (parts * kSendWaves);
  return b == 0 ? 1 : b > kBatchRows ? kBatchRows : b;
}
// The parts' roles while dispatch overlaps its receive (Plan::recv_share = `share` %, 1..99): share % of the
// parts receive, spread evenly among the others (every other warp of a block at 50 %, so every SM both sends and
// copies out). Part `part` receives iff the count of receivers before it, part * share / 100, grows at it; its
// index among the receivers (or the senders) is then that count (or part minus it).
struct Roles {
  uint64_t receivers, senders;  // how many of each
  bool receives;                // this part's role
  uint64_t index;               // its index among its role's parts
};
GSHMEM_HD Roles roles_of(uint64_t part, uint64_t parts, uint64_t share) {
  const uint64_t before = part * share / 100, receivers = parts * share / 100;
  const bool receives = (part + 1) * share / 100 > before;
  return Roles{receivers, parts - receivers, receives, receives ? before : part - before};
}

// Chunks dispatch's staging-index scan splits its n (token, k) entries into: about sqrt(n), so that a chunk's
// entries (passes 1 and 3) and the chunks of an expert (pass 2) are about as many; at most scan_chunks and at most
// one per scan_chunk_entries entries; at least 1. Every thread runs this first, so the search for sqrt(n) stays
// below that cap (log2 of it in steps, none at one chunk): a search from 2^32 was a chain of ~500 dependent
// instructions, 1.4-2.6 us of a one-token dispatch (bench/NOTES.md entry 76).
GSHMEM_HD uint64_t scan_chunks_of(const Plan& p, uint64_t n) {
  uint64_t cap = (n + p.scan_chunk_entries - 1) / p.scan_chunk_entries;
  if (cap > p.scan_chunks) cap = p.scan_chunks;
  if (cap <= 1) return 1;
  uint64_t lo = 0, hi = cap;  // the least c <= cap with c * c >= n, else cap
  while (hi - lo > 1) {
    const uint64_t mid = (lo + hi) / 2;
    if (mid * mid >= n) hi = mid;
    else lo = mid;
  }
  return hi;
}
// use(i, load(i)) for i in [lo, hi) in order, kLoadsInFlight loads issued before use sees the first of them: the
// serial passes below store into memory the compiler cannot tell from what they load, so without this it would
// keep one load in flight.
GSHMEM_MOE_TEMPLATE(class Load, class Use)
GSHMEM_COLL_FN void in_flight(uint64_t lo, uint64_t hi, const Load& load, const Use& use) {
  for (uint64_t i0 = lo; i0 < hi; i0 += kLoadsInFlight) {
    const uint64_t n = hi - i0 < kLoadsInFlight ? hi - i0 : kLoadsInFlight;
    uint32_t here[kLoadsInFlight] = {};
    GSHMEM_MOE_UNROLL
    for (uint64_t u = 0; u < kLoadsInFlight; ++u)
      if (u < n) here[u] = load(i0 + u);
    GSHMEM_MOE_UNROLL
    for (uint64_t u = 0; u < kLoadsInFlight; ++u)
      if (u < n) use(i0 + u, here[u]);
  }
}
// f(n, indices[n]) for n in [lo, hi) in order, kLoadsInFlight at a time.
GSHMEM_MOE_TEMPLATE(class F)
GSHMEM_COLL_FN void for_entries(const uint32_t* indices, uint64_t lo, uint64_t hi, const F& f) {
  in_flight(lo, hi, [&](uint64_t n) { return indices[n]; }, f);
}

// Dispatch step 2's staging-index scan, pass by pass: thread `rank` of a group of `size` runs each pass after every
// thread of the group finished the one before (the group's sync between them, in dispatch). The shape is the same
// on every thread: the chunks, their entries and which way the group scans (step 2 says why).
struct ScanShape {
  uint64_t N, E, C, per;  // entries, experts, chunks, entries per chunk
  bool by_pairs;          // (chunk, expert) pairs with counts in registers; else a chunk a thread, counts in memory
};
GSHMEM_HD ScanShape scan_shape(const Plan& p, uint64_t N, uint64_t size) {
  const uint64_t E = p.num_experts;
  uint64_t C = scan_chunks_of(p, N);
  bool by_pairs = true;
  if (C * E > kScanPairsPerThread * size) {
    by_pairs = false;
    C = (N + p.scan_chunk_entries - 1) / p.scan_chunk_entries;
    if (C > p.scan_chunks) C = p.scan_chunks;
    if (C > size) C = size;
    if (C == 0) C = 1;
  }
  return ScanShape{N, E, C, (N + C - 1) / C, by_pairs};
}
// Pass 1: chunk_count[chunk][e] = the chunk's entries of expert e.
GSHMEM_HD void scan_count(const ScanShape& s, const uint32_t* indices, uint32_t* chunk_count, uint64_t rank,
                          uint64_t size) {
  const uint64_t N = s.N, E = s.E, C = s.C, per = s.per;
  if (s.by_pairs) {
    for (uint64_t t = rank; t < C * E; t += size) {  // each pair's count
      const uint64_t chunk = t / E, e = t % E, lo = chunk * per, hi = lo + per < N ? lo + per : N;
      uint32_t n = 0;
      for_entries(indices, lo, hi, [&](uint64_t, uint32_t idx) { n += idx == e; });
      chunk_count[t] = n;
    }
  } else if (rank < C) {  // each chunk's counts, its thread's own (zeroed and counted without a sync)
    const uint64_t lo = rank * per, hi = lo + per < N ? lo + per : N;
    for (uint64_t e = 0; e < E; ++e) chunk_count[rank * E + e] = 0;
    for (uint64_t n = lo; n < hi; ++n) ++chunk_count[rank * E + indices[n]];
  }
}
// Pass 2: chunk_count[chunk][e] becomes the entries of e in the chunks before (an exclusive prefix per expert,
// kLoadsInFlight chunks' loads issued before their stores), per_expert[e] the total.
GSHMEM_HD void scan_prefix(const ScanShape& s, uint32_t* chunk_count, uint32_t* per_expert, uint64_t rank,
                           uint64_t size) {
  const uint64_t E = s.E, C = s.C;
  for (uint64_t e = rank; e < E; e += size) {
    uint32_t sum = 0;
    in_flight(
        0, C, [&](uint64_t q) { return chunk_count[q * E + e]; },
        [&](uint64_t q, uint32_t v) {
          chunk_count[q * E + e] = sum;
          sum += v;
        });
    per_expert[e] = sum;
  }
}
// Pass 3: slot[n] = the entries before n of its expert.
GSHMEM_HD void scan_number(const ScanShape& s, const uint32_t* indices, uint32_t* chunk_count, uint32_t* slot,
                           uint64_t rank, uint64_t size) {
  const uint64_t N = s.N, E = s.E, C = s.C, per = s.per;
  if (s.by_pairs) {
    for (uint64_t t = rank; t < C * E; t += size) {  // each pair's entries numbered
      const uint64_t chunk = t / E, e = t % E, lo = chunk * per, hi = lo + per < N ? lo + per : N;
      uint32_t next = chunk_count[t];
      for_entries(indices, lo, hi, [&](uint64_t n, uint32_t idx) {
        if (idx == e) slot[n] = next++;
      });
    }
  } else if (rank < C) {  // each chunk's entries numbered from the chunk's start
    const uint64_t lo = rank * per, hi = lo + per < N ? lo + per : N;
    for (uint64_t n = lo; n < hi; ++n) slot[n] = chunk_count[rank * E + indices[n]]++;
  }
}

// dispatch step 5a: the count words of call c (the threads split the (local expert, group) pairs), a sync, the
// tokens per local expert into out_num_tokens, and the received rows numbered in out_x's order (recv_first: one
// thread, a pass over the count words, which are contiguous), for the parts to find their rows (and combine's send
// its rows) by a binary search; a sync.
GSHMEM_MOE_TEMPLATE(class Scope, class Env)
GSHMEM_COLL_FN void number_received(Env& env, const Plan& p, char* ws, uint64_t c, int32_t* out_num_tokens,
                                    const char* call) {
  const uint64_t h = c & 1, L = static_cast<uint64_t>(p.local_experts), G = static_cast<uint64_t>(p.groups);
  const uint64_t size = static_cast<uint64_t>(Scope::size()), rank = static_cast<uint64_t>(Scope::rank());
  const uint64_t P = recv_pairs(p);
  for (uint64_t q = rank; q < P; q += size) env.wait_flag(pair_count_word(p, ws, h, q), c << kCountShift, call);
  Scope::sync();
  for (uint64_t l = rank; l < L; l += size) {
    uint64_t total = 0;
    if (l < static_cast<uint64_t>(p.my_local_experts))
      for (uint64_t g = 0; g < G; ++g) total += pair_rows(p, ws, h, l * G + g);
    out_num_tokens[l] = static_cast<int32_t>(total);
  }
  uint32_t* first = recv_first(p, ws);
  uint32_t* remote = recv_remote(p, ws);
  if (rank == 0) {  // kLoadsInFlight count words loaded before their stores (the compiler cannot reorder them)
    const uint64_t my_group = static_cast<uint64_t>(p.rank / p.dp_size);
    uint32_t sum = 0, others = 0;
    uint64_t g = 0;  // q % G, counted (no division per pair)
    in_flight(
        0, P, [&](uint64_t q) { return static_cast<uint32_t>(pair_rows(p, ws, h, q)); },
        [&](uint64_t q, uint32_t rows) {
          first[q] = sum;
          remote[q] = others;
          sum += rows;
          if (g != my_group) others += rows;
          if (++g == G) g = 0;
        });
    first[P] = sum;
    remote[P] = others;
  }
  Scope::sync();
}

// dispatch, call number c (>= 1): this PE's `m` tokens (rows of x_bytes at x, of scale_bytes at x_scale; indices
// [m][K]: experts) go to the experts' PEs; this PE receives its local experts' tokens:
//   out_num_tokens[l]            tokens local expert l received (0 for l >= my_local_experts), l < L
//   out_x [L][G * T][x_bytes]    expert l's rows 0 .. out_num_tokens[l] - 1: group 0's tokens in token order, then
//                                group 1's, ... (deterministic); later rows are not written
//   out_scale [L][G * T][scale_bytes]   likewise (scale_bytes > 0)
// Members of a group hold the same tokens and indices: group rank d sends the tokens i with i % D == d and the
// count words of the experts e with e % D == d, so each expert receives one copy of each token.
// Requirements (checked by the host entry): m <= T, indices < E, no expert twice in one token's row.
GSHMEM_MOE_TEMPLATE(class Scope, class Env)
GSHMEM_COLL_FN void dispatch(Env& env, const Plan& p, char* ws, uint64_t c, int32_t* out_num_tokens, char* out_x,
                             char* out_scale, const char* x, const char* x_scale, const uint32_t* indices, uint64_t m,
                             const char* call) {
  const uint64_t h = c & 1, K = p.experts_per_token, L = static_cast<uint64_t>(p.local_experts);
  const uint64_t D = static_cast<uint64_t>(p.dp_size), my_group = static_cast<uint64_t>(p.rank) / D,
                 my_d = static_cast<uint64_t>(p.rank) % D;
  const uint64_t G = static_cast<uint64_t>(p.groups), GT = G * p.max_tokens;
  const uint64_t size = static_cast<uint64_t>(Scope::size()), rank = static_cast<uint64_t>(Scope::rank());
  using Part = typename Parts<Scope>::Part;
  const uint64_t part = static_cast<uint64_t>(Parts<Scope>::index());
  const uint64_t parts = static_cast<uint64_t>(Parts<Scope>::count());
  const uint64_t prank = static_cast<uint64_t>(Part::rank()), psize = static_cast<uint64_t>(Part::size());
  // 1. Half h is free on every PE: each finished call c - 2 (normally long ago). The scan's first sync orders
  //    these waits before anything is written to a peer (steps 3 and 4).
  if (c > 2)
    for (uint64_t q = rank; q < static_cast<uint64_t>(p.world); q += size)
      env.wait_flag(done_flag(p, ws, static_cast<int>(q)), c - 2, call);
  // 2. Staging index of each (token, k): the running count of its expert over the group's tokens in row-major
  //    order (the same on every member of the group), and the tokens per expert. The N = m * K entries are split
  //    into C contiguous chunks (scan_chunks_of: about sqrt(N)), and the threads take the (chunk, expert) pairs:
  //    a pair's thread counts its chunk's entries of its expert, an exclusive prefix over the chunks per expert
  //    gives each pair its starting index, and the pair's thread numbers its chunk's entries of its expert from
  //    there. The result is that of the serial scan (each entry's index = the entries before it with the same
  //    expert). Every pass keeps its count in a register and loads kLoadsInFlight entries at once: the former
  //    per-chunk histogram in memory made each entry a dependent load and store (bench/NOTES.md entry 76: 314 of
  //    the 1200 us of a 4096-token dispatch).
  //    The pairs cost each thread about N * E / size compares once there are more pairs than threads: a group
  //    with more than kScanPairsPerThread pairs a thread (a CPU PE's, a warp, a small block) scans per chunk
  //    instead, as before c2b373d (C = min(N / scan_chunk_entries, scan_chunks, size) chunks, a thread each,
  //    counted into the chunk's counts in memory; passes 1 and 3 differ, pass 2 is the same).
  uint32_t* slot = reinterpret_cast<uint32_t*>(ws + p.slot_off);
  uint32_t* per_expert = reinterpret_cast<uint32_t*>(ws + p.expert_count_off);
  uint32_t* chunk_count = reinterpret_cast<uint32_t*>(ws + p.scan_off);  // [C][E]
  {
    const ScanShape shape = scan_shape(p, m * K, size);
    scan_count(shape, indices, chunk_count, rank, size);
    Scope::sync();
    scan_prefix(shape, chunk_count, per_expert, rank, size);
    Scope::sync();
    scan_number(shape, indices, chunk_count, slot, rank, size);
  }
  Scope::sync();
  GSHMEM_MOE_STAMP(env, kStampScanned);
  // 3. Counts first (they tell a receiver how many rows to wait for, zero included): expert e's word goes to its
  //    PE from group rank e % D.
  for (uint64_t e = my_d + D * rank; e < p.num_experts; e += D * size) {
    const int dst = static_cast<int>(e / L);
    env.store_relaxed(env.peer(count_word(p, ws, h, e % L, my_group), dst), c << kCountShift | per_expert[e]);
  }
  // 4. Tokens: each (token, k) goes to slot (group, staging index) of its expert's PE, with the meta words (token
  //    index, k) for combine. The parts take batches of consecutive entries: a part copies its batch's rows, then
  //    each of its threads that has rows to flag makes the copies visible (one release fence) and stores flag c of
  //    rows j, j + part size, ...: one fence per batch instead of one per row.
  //    While there are fewer rows than parts (and rows wider than a piece), the parts send pieces of rows instead
  //    (piece_len, as the receive side splits them; the scale and meta with the first piece), and every row's flag
  //    is stored after a sync of the whole group (flag_pieces). The choice is the same on every thread: F, parts
  //    and the plan are.
  //    Overlap (Plan::recv_share, while every part has rows to send, so rows go whole): the rows are numbered
  //    first (step 5a: the count words were stored just above, on every PE), then recv_share % of the parts
  //    receive (step 5; roles_of) while the others send, in batches of wave_rows so that rows land all along the
  //    send; a PE's own choice (receivers wait only for flags, however the rows were sent). At dp_size 1 the
  //    senders write this PE's own rows straight into out_x (their places are known once the rows are numbered),
  //    and only their meta words into staging, for combine: the receivers then copy only other PEs' rows
  //    (recv_remote), instead of half of what they copy being rows this PE wrote into its own staging
  //    (bench/NOTES.md entry 76).
  const uint64_t my_tokens = m > my_d ? (m - my_d + D - 1) / D : 0;  // tokens i = my_d, my_d + D, ... below m
  const uint64_t F = my_tokens * K;
  const uint64_t xl = piece_len(p.x_bytes, F, parts, p.send_piece_bytes, 16);
  const uint64_t share = p.recv_share < 100 ? p.recv_share : 99;
  const bool overlap = share != 0 && parts * share >= 100 && F >= parts;  // at least one receiving part
  const Roles role = overlap ? roles_of(part, parts, share) : Roles{0, parts, false, part};
  const bool direct = overlap && D == 1;  // own rows straight into out_x
  if (overlap) {
    number_received<Scope>(env, p, ws, c, out_num_tokens, call);
    GSHMEM_MOE_STAMP(env, kStampNumbered);
  }
  if (xl < p.x_bytes) {
    const uint64_t Q = pieces_of(p.x_bytes, xl);
    for (uint64_t t = part; t < F * Q; t += parts) {
      const uint64_t j = t / Q, lo = (t % Q) * xl, len = p.x_bytes - lo < xl ? p.x_bytes - lo : xl;
      const uint64_t i = my_d + D * (j / K), k = j % K;
      const uint64_t e = indices[i * K + k];
      char* to = env.peer(recv_row(p, ws, h, e % L, my_group, slot[i * K + k]), static_cast<int>(e / L));
      env.template copy<Part>(to + lo, x + i * p.x_bytes + lo, len);
      if (lo == 0) {  // the first piece's part also sends the scale row and the meta words
        if (p.scale_bytes != 0) env.template copy<Part>(to + p.x_bytes, x_scale + i * p.scale_bytes, p.scale_bytes);
        if (prank == 0) {
          uint32_t* meta = reinterpret_cast<uint32_t*>(to + p.x_bytes + p.scale_bytes);
          meta[0] = static_cast<uint32_t>(i);
          meta[1] = static_cast<uint32_t>(k);
        }
      }
    }
    flag_pieces<Scope>(env, F, part < F * Q, c, [&](uint64_t j) {
      const uint64_t i = my_d + D * (j / K), k = j % K;
      const uint64_t e = indices[i * K + k];
      return env.peer(row_flag(p, ws, h, e % L, my_group, slot[i * K + k]), static_cast<int>(e / L));
    });
  } else if (!role.receives) {
    const uint64_t B = overlap ? wave_rows(F, role.senders) : batch_rows(F, parts);
    for (uint64_t b0 = role.index * B; b0 < F; b0 += role.senders * B) {
      const uint64_t n = F - b0 < B ? F - b0 : B;
      for (uint64_t j = 0; j < n; ++j) {
        const uint64_t i = my_d + D * ((b0 + j) / K), k = (b0 + j) % K;
        const uint64_t e = indices[i * K + k], l = e % L, s = slot[i * K + k];
        const int dst = static_cast<int>(e / L);
        char* to = recv_row(p, ws, h, l, my_group, s);
        if (direct && dst == p.rank) {  // own row: its place in out_x (dispatch's contract above; G * T = GT)
          const uint32_t* first = recv_first(p, ws);
          const uint64_t at = l * GT + first[l * G + my_group] - first[l * G] + s;
          if (p.x_bytes != 0) env.template copy<Part>(out_x + at * p.x_bytes, x + i * p.x_bytes, p.x_bytes);
          if (p.scale_bytes != 0)
            env.template copy<Part>(out_scale + at * p.scale_bytes, x_scale + i * p.scale_bytes, p.scale_bytes);
        } else {
          to = env.peer(to, dst);
          if (p.x_bytes != 0) env.template copy<Part>(to, x + i * p.x_bytes, p.x_bytes);
          if (p.scale_bytes != 0)
            env.template copy<Part>(to + p.x_bytes, x_scale + i * p.scale_bytes, p.scale_bytes);
        }
        if (prank == 0) {
          uint32_t* meta = reinterpret_cast<uint32_t*>(to + p.x_bytes + p.scale_bytes);
          meta[0] = static_cast<uint32_t>(i);
          meta[1] = static_cast<uint32_t>(k);
        }
      }
      Part::sync();
      if (prank < n) env.release_fence();
      for (uint64_t j = prank; j < n; j += psize) {
        const uint64_t i = my_d + D * ((b0 + j) / K), k = (b0 + j) % K;
        const uint64_t e = indices[i * K + k];
        env.store_relaxed(env.peer(row_flag(p, ws, h, e % L, my_group, slot[i * K + k]), static_cast<int>(e / L)),
                          c);
      }
    }
    GSHMEM_MOE_STAMP(env, kStampSent);
  }
  // 5. Receive: the rows numbered (step 5a, unless it came first), then each row copied out once its flag says it
  //    landed.
  if (!overlap) {
    number_received<Scope>(env, p, ws, c, out_num_tokens, call);
    GSHMEM_MOE_STAMP(env, kStampNumbered);
  }
  const uint64_t P = recv_pairs(p);
  const uint32_t* first = recv_first(p, ws);
  //    The rows: the parts take them in turn (pieces of rows while there are fewer rows than parts); each waits
  //    for its row's flag, then copies its piece (the scale row with the first piece). Overlapped, each receiving
  //    part takes a contiguous range of whole rows in order instead: a pair's rows land about in that order, wave
  //    by wave of its senders, so a receiver copies each row soon after it landed.
  const uint64_t R = first[P];
  uint64_t pl = piece_len(p.x_bytes, R, parts, p.piece_bytes, 16), Q = pieces_of(p.x_bytes, pl);
  uint64_t t_first = part, t_end = R * Q, t_step = parts;
  const uint32_t* numbering = first;
  if (overlap) {
    pl = p.x_bytes;
    Q = 1;
    if (direct) numbering = recv_remote(p, ws);  // other PEs' rows only
    const uint64_t Rn = numbering[P];
    t_first = role.receives ? Rn * role.index / role.receivers : 0;
    t_end = role.receives ? Rn * (role.index + 1) / role.receivers : 0;
    t_step = 1;
  }
  RecvCursor cur{0, 0, 0, 0};
  for (uint64_t t = t_first; t < t_end; t += t_step) {
    const uint64_t r = t / Q, lo = (t % Q) * pl;
    recv_seek(p, ws, cur, r, numbering);
    const uint64_t l = cur.q / G, g = cur.q % G, idx = r - cur.first, at = l * GT + cur.off + idx;
    wait_group<Part>(env, row_flag(p, ws, h, l, g, idx), c, call);
    const char* row = recv_row(p, ws, h, l, g, idx);
    const uint64_t len = p.x_bytes - lo < pl ? p.x_bytes - lo : pl;
    if (len != 0) env.template copy<Part>(out_x + at * p.x_bytes + lo, row + lo, len);
    if (lo == 0 && p.scale_bytes != 0)
      env.template copy<Part>(out_scale + at * p.scale_bytes, row + p.x_bytes, p.scale_bytes);
  }
  if (t_first < t_end) GSHMEM_MOE_STAMP(env, kStampReceived);
  Scope::sync();
}

// 16-bit floats through coll::Float16 (their arithmetic is float), float as is.
template <class T>
GSHMEM_HD float to_float(T v) {
  if constexpr (coll::Float16<T>::value) return coll::Float16<T>::to_float(v);
  else return static_cast<float>(v);
}
template <class T>
GSHMEM_HD T from_float(float f) {
  if constexpr (coll::Float16<T>::value) return coll::Float16<T>::from_float(f);
  else return static_cast<T>(f);
}

// Eight elements of T (2 or 4 bytes) from 16-byte aligned `src`: 16-byte loads on the device.
template <class T>
GSHMEM_HD void load8(T (&v)[8], const T* src) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "MoE combine types are 2 or 4 bytes");
#if defined(__CUDA_ARCH__)
  const uint4* s = reinterpret_cast<const uint4*>(src);
  uint4 a[sizeof(T) / 2];
GSHMEM_MOE_UNROLL
  for (unsigned u = 0; u < sizeof(T) / 2; ++u) a[u] = s[u];
  memcpy(v, a, sizeof v);
#else
  memcpy(v, src, sizeof v);
#endif
}
// Eight elements to `dst`: 16-byte stores on the device where dst allows.
template <class T>
GSHMEM_HD void store8(T* dst, const T (&v)[8]) {
#if defined(__CUDA_ARCH__)
  if ((reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
    uint4 a[sizeof(T) / 2];
    memcpy(a, v, sizeof v);
GSHMEM_MOE_UNROLL
    for (unsigned u = 0; u < sizeof(T) / 2; ++u) reinterpret_cast<uint4*>(dst)[u] = a[u];
    return;
  }
GSHMEM_MOE_UNROLL
  for (int e = 0; e < 8; ++e) dst[e] = v[e];
#else
  memcpy(dst, v, sizeof v);
#endif
}

// combine, call number c (after dispatch c): the experts' outputs go back to the tokens' groups, and each token's
// output is the weighted sum over its experts:
//   expert_y [L][G * T][hidden_dim] of TY: the output row of each row dispatch c delivered to out_x (same order)
//   out [m][hidden_dim] of TO: out[i][j] = TO(acc) with acc = 0.0f; acc = fmaf(weights[i][k], float(y_k[j]), acc)
//                                for k = 0, 1, ..., K - 1 (y_k: expert indices[i][k]'s output for token i)
// Every member of the group receives every row (its expert's PE sends D copies), so every member gets the whole
// out. indices, weights [m][K] (fp32) and m are dispatch c's. Each (token, k) has its own staging row, so the sum
// order is fixed and the result bit-identical on every member and between host and device (fmaf is exact IEEE
// fused multiply-add on both).
GSHMEM_MOE_TEMPLATE(class Scope, class TY, class TO, class Env)
GSHMEM_COLL_FN void combine(Env& env, const Plan& p, char* ws, uint64_t c, TO* out, const uint32_t* indices,
                            const float* weights, const TY* expert_y, uint64_t m, const char* call) {
  const uint64_t h = c & 1, K = p.experts_per_token, D = static_cast<uint64_t>(p.dp_size);
  const uint64_t G = static_cast<uint64_t>(p.groups), GT = G * p.max_tokens, H = p.hidden_dim;
  using Part = typename Parts<Scope>::Part;
  const uint64_t part = static_cast<uint64_t>(Parts<Scope>::index());
  const uint64_t parts = static_cast<uint64_t>(Parts<Scope>::count());
  const uint64_t prank = static_cast<uint64_t>(Part::rank()), psize = static_cast<uint64_t>(Part::size());
  // 1. Send: each row this PE's experts computed goes to staging row (token, k) of every member of its group. The
  //    parts take batches of consecutive rows (count words and meta of dispatch c, acquired there): a part copies
  //    its batch's rows, then each of its threads that has puts to flag fences once and stores flag c of puts
  //    j, j + part size, ... (put j: row j / D of the batch to member j % D). While there are fewer puts than
  //    parts (and rows wider than a piece), the parts send pieces of the puts instead and the flags follow a sync
  //    of the group, as in dispatch step 4 (flag_pieces; the same choice on every thread: R is this PE's own,
  //    numbered by dispatch c).
  const uint64_t R = recv_first(p, ws)[recv_pairs(p)];  // numbered by dispatch c
  const uint64_t YB = H * sizeof(TY), N = R * D, yl = piece_len(YB, N, parts, p.send_piece_bytes, 16);
  RecvCursor cur{0, 0, 0, 0};
  if (yl < YB) {
    const uint64_t Q = pieces_of(YB, yl);
    for (uint64_t t = part; t < N * Q; t += parts) {
      const uint64_t u = t / Q, lo = (t % Q) * yl, len = YB - lo < yl ? YB - lo : yl;
      recv_seek(p, ws, cur, u / D);
      const uint64_t l = cur.q / G, g = cur.q % G, idx = u / D - cur.first;
      const uint32_t* meta =
          reinterpret_cast<const uint32_t*>(recv_row(p, ws, h, l, g, idx) + p.x_bytes + p.scale_bytes);
      const char* y = reinterpret_cast<const char*>(expert_y + (l * GT + cur.off + idx) * H);
      env.template copy<Part>(env.peer(comb_row(p, ws, h, meta[0], meta[1]), static_cast<int>(g * D + u % D)) + lo,
                              y + lo, len);
    }
    flag_pieces<Scope>(env, N, part < N * Q, c, [&](uint64_t u) {
      recv_seek(p, ws, cur, u / D);
      const uint64_t l = cur.q / G, g = cur.q % G, idx = u / D - cur.first;
      const uint32_t* meta =
          reinterpret_cast<const uint32_t*>(recv_row(p, ws, h, l, g, idx) + p.x_bytes + p.scale_bytes);
      return env.peer(comb_flag(p, ws, h, meta[0], meta[1]), static_cast<int>(g * D + u % D));
    });
  } else {
    const uint64_t B = batch_rows(R, parts);
    for (uint64_t b0 = part * B; b0 < R; b0 += parts * B) {
      const uint64_t n = R - b0 < B ? R - b0 : B;
      for (uint64_t j = 0; j < n; ++j) {
        recv_seek(p, ws, cur, b0 + j);
        const uint64_t l = cur.q / G, g = cur.q % G, idx = b0 + j - cur.first;
        const uint32_t* meta =
            reinterpret_cast<const uint32_t*>(recv_row(p, ws, h, l, g, idx) + p.x_bytes + p.scale_bytes);
        const uint64_t i = meta[0], k = meta[1];
        const char* y = reinterpret_cast<const char*>(expert_y + (l * GT + cur.off + idx) * H);
        for (uint64_t d = 0; d < D; ++d)
          if (H != 0) env.template copy<Part>(env.peer(comb_row(p, ws, h, i, k), static_cast<int>(g * D + d)), y,
                                              H * sizeof(TY));
      }
      Part::sync();
      if (prank < n * D) env.release_fence();
      for (uint64_t u = prank; u < n * D; u += psize) {
        recv_seek(p, ws, cur, b0 + u / D);
        const uint64_t l = cur.q / G, g = cur.q % G, idx = b0 + u / D - cur.first;
        const uint32_t* meta =
            reinterpret_cast<const uint32_t*>(recv_row(p, ws, h, l, g, idx) + p.x_bytes + p.scale_bytes);
        env.store_relaxed(env.peer(comb_flag(p, ws, h, meta[0], meta[1]), static_cast<int>(g * D + u % D)), c);
      }
    }
  }
  // 2. Receive and sum: the parts take the tokens in turn (pieces of them, multiples of 8 elements, while there are
  //    fewer tokens than parts); a part waits for the token's K rows (its threads poll a flag each), then each
  //    thread sums vectors of 8 elements in k order.
  const uint64_t pl = piece_len(H, m, parts, p.piece_bytes / sizeof(TY), 8), Q = pieces_of(H, pl);
  for (uint64_t t = part; t < m * Q; t += parts) {
    const uint64_t i = t / Q, lo = (t % Q) * pl, hi = lo + pl < H ? lo + pl : H;
    for (uint64_t k = prank; k < K; k += psize) env.wait_flag(comb_flag(p, ws, h, i, k), c, call);
    Part::sync();
    const float* w = weights + i * K;
    TO* o = out + i * H;
    const uint64_t vecs = (hi - lo) / 8;
    for (uint64_t v = prank; v < vecs; v += psize) {
      const uint64_t j = lo + 8 * v;
      float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
      for (uint64_t k = 0; k < K; ++k) {
        TY y[8];
        load8(y, reinterpret_cast<const TY*>(comb_row(p, ws, h, i, k)) + j);
        const float wk = w[k];
GSHMEM_MOE_UNROLL
        for (int e = 0; e < 8; ++e) acc[e] = fmaf(wk, to_float(y[e]), acc[e]);
      }
      TO r[8];
GSHMEM_MOE_UNROLL
      for (int e = 0; e < 8; ++e) r[e] = from_float<TO>(acc[e]);
      store8(o + j, r);
    }
    for (uint64_t j = lo + 8 * vecs + prank; j < hi; j += psize) {
      float acc = 0.0f;
      for (uint64_t k = 0; k < K; ++k)
        acc = fmaf(w[k], to_float(reinterpret_cast<const TY*>(comb_row(p, ws, h, i, k))[j]), acc);
      o[j] = from_float<TO>(acc);
    }
  }
  (void)indices;  // the (token, k) staging rows make the expert ids unnecessary here; kept for pplx's signature
  // 3. Done with call c's halves (its staging rows, counts, meta): tell every PE, which may then reuse them in
  //    call c + 2. The sync and the fence order every thread's reads above before the flags.
  Scope::sync();
  if (Scope::rank() == 0) {
    env.release_fence();
    for (int q = 0; q < p.world; ++q) env.store_relaxed(env.peer(done_flag(p, ws, p.rank), q), c);
  }
}

}  // namespace moe
}  // namespace gshmem
