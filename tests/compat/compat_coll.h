// Shared by collectives.cu and host_collectives.cpp: the NVSHMEM collective names each test calls, gathered per
// (type, op) into small structs, the data every PE contributes, host references, and one checker per collective
// that takes "how to call it" (host, on a stream, in a kernel) as a function. NVSHMEM names only.
//
// Data: element i of world PE p in test s is compat::mix(seed, s, p, i) cut to the type. Floating-point values are
// small integers (|v| <= 1000 for sum/min/max, +-1 / +-2 for prod) so that every order of combining gives the same
// exact result: gshmem combines in team-index order, NVSHMEM promises no order. Integer sum and prod wrap modulo
// 2^bits (the reference computes in uint64_t and cuts). Outputs are poisoned (0xA5 bytes) and a guard tail past the
// result must stay poisoned.
#pragma once

#include "compat_util.h"

#include <type_traits>
#include <vector>

namespace coll {

enum class Op { band, bor, bxor, max, min, sum, prod };

// Whether this build checks the host and stream forms of a broadcast, fcollect, alltoall or reducescatter of n
// elements. NVIDIA NVSHMEM 3.4.5 ends the job on a reducescatter of 0 elements ("reducescatter_common.cuh:90: cuda
// failed with invalid argument", exit 255: a grid of no blocks; bench/NOTES.md entry 36) and, once that was left
// out, on a broadcast of 0 ("broadcast.cu:38", the same error; entry 39), so its build leaves out those four
// collectives' host and stream forms at 0 elements, saying so once (fcollect and alltoall of 0 were not reached
// there: left out unseen, since each failure ends the job). Its device forms and reduce keep 0 (they passed).
// gshmem's build (which defines GSHMEM_GSHMEM_H) checks every case: OpenSHMEM allows 0 elements.
inline bool checks_host_elements(size_t n) {
#if defined(GSHMEM_GSHMEM_H)
  (void)n;
  return true;
#else
  static bool said = false;
  if (n == 0 && !said && nvshmem_my_pe() == 0) {
    std::printf("%s: note: the host and stream broadcast, fcollect, alltoall and reducescatter of 0 elements are left "
                "out on NVIDIA NVSHMEM (reducescatter and broadcast end the job with cudaErrorInvalidValue)\n",
                compat::prog_name());
    said = true;
  }
  return n > 0;
#endif
}

template <typename T>
T value(uint64_t seed, uint64_t test, int world_pe, size_t i, Op op) {
  const uint64_t r = compat::mix(seed, test, (static_cast<uint64_t>(world_pe) << 32) ^ i);
  if constexpr (std::is_floating_point_v<T>) {
    if (op == Op::prod) return static_cast<T>((r & 1 ? -1 : 1) * ((r >> 1) & 1 ? 2 : 1));
    return static_cast<T>(static_cast<int64_t>(r % 2001) - 1000);
  } else {
    return static_cast<T>(r);
  }
}

template <typename T>
T combine(Op op, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case Op::max: return a > b ? a : b;
      case Op::min: return a < b ? a : b;
      case Op::sum: return a + b;
      default: return a * b;
    }
  } else {
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    switch (op) {
      case Op::band: return static_cast<T>(x & y);
      case Op::bor: return static_cast<T>(x | y);
      case Op::bxor: return static_cast<T>(x ^ y);
      case Op::max: return a > b ? a : b;
      case Op::min: return a < b ? a : b;
      case Op::sum: return static_cast<T>(x + y);
      default: return static_cast<T>(x * y);
    }
  }
}

// A team as this PE sees it: its size, this PE's index and every member's world PE.
struct Team {
  nvshmem_team_t team = NVSHMEM_TEAM_INVALID;
  const char* name = "";
  int n = 0, me = -1;
  std::vector<int> world;
};

inline Team describe(nvshmem_team_t t, const char* name) {
  Team d;
  d.team = t;
  d.name = name;
  if (t == NVSHMEM_TEAM_INVALID) return d;
  d.n = nvshmem_team_n_pes(t);
  d.me = nvshmem_team_my_pe(t);
  for (int j = 0; j < d.n; ++j) d.world.push_back(nvshmem_team_translate_pe(t, j, NVSHMEM_TEAM_WORLD));
  return d;
}

// The teams both programs run on: the world, the team of this PE's parity (every PE takes part in both splits
// of nvshmem_team_split_strided, so the even and the odd team work at once) and the node team. parity[] gets the
// split teams (destroy them at the end). False (after compat::fail) if this PE is not a member of one.
inline bool make_teams(int npes, int mype, nvshmem_team_t parity[2], Team teams[3]) {
  parity[0] = parity[1] = NVSHMEM_TEAM_INVALID;
  for (int p = 0; p < 2 && p < npes; ++p)
    if (nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, p, 2, (npes - p + 1) / 2, nullptr, 0, &parity[p]) != 0)
      compat::fail("nvshmem_team_split_strided(WORLD, %d, 2, %d) failed", p, (npes - p + 1) / 2);
  teams[0] = describe(NVSHMEM_TEAM_WORLD, "NVSHMEM_TEAM_WORLD");
  teams[1] = describe(parity[mype % 2], mype % 2 ? "odd PEs" : "even PEs");
  teams[2] = describe(NVSHMEMX_TEAM_NODE, "NVSHMEMX_TEAM_NODE");
  for (int i = 0; i < 3; ++i) {
    if (teams[i].team == NVSHMEM_TEAM_INVALID || teams[i].me < 0) {
      compat::fail("team %s: this PE is not a member", teams[i].name);
      return false;
    }
  }
  return true;
}

// How a program moves data between the host and symmetric memory (cudaMemcpy on GPUs; p/g on CPU PEs), and
// waits for a team (host-side nvshmem_barrier).
struct IO {
  void (*write)(void* sym, const void* host, size_t bytes);
  void (*read)(void* host, const void* sym, size_t bytes);
};

// Host programs (CPU PEs, or GPU PEs under NVSHMEM: device memory) move data with nvshmem_<T>_p / _g on their own
// PE. Eight bytes per call where both sides allow it (nvshmem_uint64_p / _g), single bytes at the edges.
inline void write_pg(void* sym, const void* host, size_t bytes) {
  const int me = nvshmem_my_pe();
  char* d = static_cast<char*>(sym);
  const char* s = static_cast<const char*>(host);
  size_t i = 0;
  for (; i < bytes && reinterpret_cast<uintptr_t>(d + i) % 8 != 0; ++i) nvshmem_char_p(d + i, s[i], me);
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, s + i, 8);
    nvshmem_uint64_p(reinterpret_cast<uint64_t*>(d + i), w, me);
  }
  for (; i < bytes; ++i) nvshmem_char_p(d + i, s[i], me);
  nvshmem_quiet();
}
inline void read_pg(void* host, const void* sym, size_t bytes) {
  const int me = nvshmem_my_pe();
  const char* s = static_cast<const char*>(sym);
  char* d = static_cast<char*>(host);
  size_t i = 0;
  for (; i < bytes && reinterpret_cast<uintptr_t>(s + i) % 8 != 0; ++i) d[i] = nvshmem_char_g(s + i, me);
  for (; i + 8 <= bytes; i += 8) {
    const uint64_t w = nvshmem_uint64_g(reinterpret_cast<const uint64_t*>(s + i), me);
    std::memcpy(d + i, &w, 8);
  }
  for (; i < bytes; ++i) d[i] = nvshmem_char_g(s + i, me);
}

constexpr unsigned char kPoison = 0xA5;
constexpr size_t kGuard = 8;  // elements past every result that must stay poisoned

inline void poison(const IO& io, void* sym, size_t bytes) {
  std::vector<unsigned char> p(bytes, kPoison);
  if (bytes) io.write(sym, p.data(), bytes);
}

// Compares dest (result elements, then kGuard guard elements) against want; reports at most 4 mismatches.
template <typename T>
void expect(const IO& io, const T* dest, const std::vector<T>& want, const char* what, const Team& t, size_t n) {
  std::vector<T> got(want.size() + kGuard);
  io.read(got.data(), dest, got.size() * sizeof(T));
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0 && bad++ < 4)
      compat::fail("%s on %s (team index %d of %d, n=%zu): element %zu is %.17g, expected %.17g", what, t.name, t.me,
                   t.n, n, i, static_cast<double>(got[i]), static_cast<double>(want[i]));
  }
  const unsigned char* g = reinterpret_cast<const unsigned char*>(got.data() + want.size());
  for (size_t b = 0; b < kGuard * sizeof(T); ++b)
    if (g[b] != kPoison && bad++ < 4)
      compat::fail("%s on %s (n=%zu): byte %zu past the result was written", what, t.name, n, b);
}

// Symmetric scratch every check uses (allocated once by every PE: nvshmem_malloc is collective over the world, the
// checks run on team members only). Interior pointers into one allocation, as NVSHMEM's perftests use them.
struct Buffers {
  char* a = nullptr;
  char* b = nullptr;
  size_t bytes = 0;
};

inline Buffers alloc_buffers(size_t bytes) {
  Buffers b;
  b.bytes = bytes;
  char* base = static_cast<char*>(nvshmem_malloc(2 * bytes));
  b.a = base;
  b.b = base + bytes;
  return b;
}

template <typename T>
std::vector<T> contribution(uint64_t seed, uint64_t test, int world_pe, size_t count, Op op) {
  std::vector<T> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = value<T>(seed, test, world_pe, i, op);
  return v;
}

// ---- the checks. `call(dest, source, n)` runs the collective to completion and returns its status. Every member
// writes its source and poisons its dest, then the team meets (nvshmem_barrier) so no member's collective can
// touch a dest that its owner is still poisoning. ----

template <typename T, typename Call>
void check_reduce(const IO& io, const Buffers& buf, const Team& t, Op op, size_t n, bool in_place, uint64_t seed,
                  uint64_t test, const char* what, Call call) {
  T* src = reinterpret_cast<T*>(buf.a);
  T* dst = in_place ? src : reinterpret_cast<T*>(buf.b);
  const std::vector<T> mine = contribution<T>(seed, test, t.world[t.me], n, op);
  poison(io, dst, (n + kGuard) * sizeof(T));
  if (n) io.write(src, mine.data(), n * sizeof(T));
  nvshmem_barrier(t.team);
  std::vector<T> want = contribution<T>(seed, test, t.world[0], n, op);
  for (int j = 1; j < t.n; ++j) {
    const std::vector<T> v = contribution<T>(seed, test, t.world[j], n, op);
    for (size_t i = 0; i < n; ++i) want[i] = combine(op, want[i], v[i]);
  }
  const int rc = call(dst, src, n);
  if (rc != 0) compat::fail("%s on %s returned %d", what, t.name, rc);
  expect(io, dst, want, what, t, n);
  nvshmem_barrier(t.team);  // every member has read its dest before the buffers are reused
}

template <typename T, typename Call>
void check_reducescatter(const IO& io, const Buffers& buf, const Team& t, Op op, size_t n, uint64_t seed,
                         uint64_t test, const char* what, Call call) {
  T* src = reinterpret_cast<T*>(buf.a);
  T* dst = reinterpret_cast<T*>(buf.b);
  const size_t total = n * static_cast<size_t>(t.n);
  const std::vector<T> mine = contribution<T>(seed, test, t.world[t.me], total, op);
  poison(io, dst, (n + kGuard) * sizeof(T));
  if (total) io.write(src, mine.data(), total * sizeof(T));
  nvshmem_barrier(t.team);
  std::vector<T> want(n);
  for (int j = 0; j < t.n; ++j) {
    const std::vector<T> v = contribution<T>(seed, test, t.world[j], total, op);
    for (size_t i = 0; i < n; ++i) want[i] = j == 0 ? v[t.me * n + i] : combine(op, want[i], v[t.me * n + i]);
  }
  const int rc = call(dst, src, n);
  if (rc != 0) compat::fail("%s on %s returned %d", what, t.name, rc);
  expect(io, dst, want, what, t, n);
  nvshmem_barrier(t.team);
}

// broadcast from team index `root`; in_place: dest == source (PRK, PyTorch), the root's data already there.
template <typename T, typename Call>
void check_broadcast(const IO& io, const Buffers& buf, const Team& t, int root, size_t n, bool in_place,
                     uint64_t seed, uint64_t test, const char* what, Call call) {
  T* src = reinterpret_cast<T*>(buf.a);
  T* dst = in_place ? src : reinterpret_cast<T*>(buf.b);
  const std::vector<T> mine = contribution<T>(seed, test, t.world[t.me], n, Op::sum);
  poison(io, dst, (n + kGuard) * sizeof(T));
  if (n && (!in_place || t.me == root)) io.write(src, mine.data(), n * sizeof(T));
  nvshmem_barrier(t.team);
  const std::vector<T> want = contribution<T>(seed, test, t.world[root], n, Op::sum);
  const int rc = call(dst, src, n, root);
  if (rc != 0) compat::fail("%s on %s returned %d", what, t.name, rc);
  expect(io, dst, want, what, t, n);
  nvshmem_barrier(t.team);
}

template <typename T, typename Call>
void check_fcollect(const IO& io, const Buffers& buf, const Team& t, size_t n, uint64_t seed, uint64_t test,
                    const char* what, Call call) {
  T* src = reinterpret_cast<T*>(buf.a);
  T* dst = reinterpret_cast<T*>(buf.b);
  const size_t total = n * static_cast<size_t>(t.n);
  const std::vector<T> mine = contribution<T>(seed, test, t.world[t.me], n, Op::sum);
  poison(io, dst, (total + kGuard) * sizeof(T));
  if (n) io.write(src, mine.data(), n * sizeof(T));
  nvshmem_barrier(t.team);
  std::vector<T> want;
  for (int j = 0; j < t.n; ++j) {
    const std::vector<T> v = contribution<T>(seed, test, t.world[j], n, Op::sum);
    want.insert(want.end(), v.begin(), v.end());
  }
  const int rc = call(dst, src, n);
  if (rc != 0) compat::fail("%s on %s returned %d", what, t.name, rc);
  expect(io, dst, want, what, t, total);
  nvshmem_barrier(t.team);
}

template <typename T, typename Call>
void check_alltoall(const IO& io, const Buffers& buf, const Team& t, size_t n, uint64_t seed, uint64_t test,
                    const char* what, Call call) {
  T* src = reinterpret_cast<T*>(buf.a);
  T* dst = reinterpret_cast<T*>(buf.b);
  const size_t total = n * static_cast<size_t>(t.n);
  const std::vector<T> mine = contribution<T>(seed, test, t.world[t.me], total, Op::sum);
  poison(io, dst, (total + kGuard) * sizeof(T));
  if (total) io.write(src, mine.data(), total * sizeof(T));
  nvshmem_barrier(t.team);
  std::vector<T> want;
  for (int j = 0; j < t.n; ++j) {  // block j of the result: member j's block for me
    const std::vector<T> v = contribution<T>(seed, test, t.world[j], total, Op::sum);
    want.insert(want.end(), v.begin() + t.me * n, v.begin() + (t.me + 1) * n);
  }
  const int rc = call(dst, src, n);
  if (rc != 0) compat::fail("%s on %s returned %d", what, t.name, rc);
  expect(io, dst, want, what, t, total);
  nvshmem_barrier(t.team);
}

}  // namespace coll

// ---- the names: one struct per (type, op) for reductions, one per type for data movement ----
#if defined(__CUDACC__)
#define COMPAT_RED_GPU(T, N, OP)                                                                               \
  static int reduce_on_stream(nvshmem_team_t t, T* d, const T* s, size_t n, cudaStream_t st) {                 \
    return nvshmemx_##N##_##OP##_reduce_on_stream(t, d, s, n, st);                                             \
  }                                                                                                            \
  static int reducescatter_on_stream(nvshmem_team_t t, T* d, const T* s, size_t n, cudaStream_t st) {          \
    return nvshmemx_##N##_##OP##_reducescatter_on_stream(t, d, s, n, st);                                      \
  }                                                                                                            \
  __device__ static int reduce_dev(int scope, nvshmem_team_t t, T* d, const T* s, size_t n) {                  \
    return scope == 0   ? nvshmem_##N##_##OP##_reduce(t, d, s, n)                                              \
           : scope == 1 ? nvshmemx_##N##_##OP##_reduce_warp(t, d, s, n)                                        \
                        : nvshmemx_##N##_##OP##_reduce_block(t, d, s, n);                                      \
  }                                                                                                            \
  __device__ static int reducescatter_dev(int scope, nvshmem_team_t t, T* d, const T* s, size_t n) {           \
    return scope == 0   ? nvshmem_##N##_##OP##_reducescatter(t, d, s, n)                                       \
           : scope == 1 ? nvshmemx_##N##_##OP##_reducescatter_warp(t, d, s, n)                                 \
                        : nvshmemx_##N##_##OP##_reducescatter_block(t, d, s, n);                               \
  }
#define COMPAT_DATA_GPU(T, N)                                                                                  \
  static int broadcast_on_stream(nvshmem_team_t t, T* d, const T* s, size_t n, int root, cudaStream_t st) {    \
    return nvshmemx_##N##_broadcast_on_stream(t, d, s, n, root, st);                                           \
  }                                                                                                            \
  static int fcollect_on_stream(nvshmem_team_t t, T* d, const T* s, size_t n, cudaStream_t st) {               \
    return nvshmemx_##N##_fcollect_on_stream(t, d, s, n, st);                                                  \
  }                                                                                                            \
  static int alltoall_on_stream(nvshmem_team_t t, T* d, const T* s, size_t n, cudaStream_t st) {               \
    return nvshmemx_##N##_alltoall_on_stream(t, d, s, n, st);                                                  \
  }                                                                                                            \
  __device__ static int broadcast_dev(int scope, nvshmem_team_t t, T* d, const T* s, size_t n, int root) {     \
    return scope == 0   ? nvshmem_##N##_broadcast(t, d, s, n, root)                                            \
           : scope == 1 ? nvshmemx_##N##_broadcast_warp(t, d, s, n, root)                                      \
                        : nvshmemx_##N##_broadcast_block(t, d, s, n, root);                                    \
  }                                                                                                            \
  __device__ static int fcollect_dev(int scope, nvshmem_team_t t, T* d, const T* s, size_t n) {                \
    return scope == 0   ? nvshmem_##N##_fcollect(t, d, s, n)                                                   \
           : scope == 1 ? nvshmemx_##N##_fcollect_warp(t, d, s, n)                                             \
                        : nvshmemx_##N##_fcollect_block(t, d, s, n);                                           \
  }                                                                                                            \
  __device__ static int alltoall_dev(int scope, nvshmem_team_t t, T* d, const T* s, size_t n) {                \
    return scope == 0   ? nvshmem_##N##_alltoall(t, d, s, n)                                                   \
           : scope == 1 ? nvshmemx_##N##_alltoall_warp(t, d, s, n)                                             \
                        : nvshmemx_##N##_alltoall_block(t, d, s, n);                                           \
  }
#else
#define COMPAT_RED_GPU(T, N, OP)
#define COMPAT_DATA_GPU(T, N)
#endif

// R_<name>_<op>: nvshmem_<name>_<op>_reduce / _reducescatter and (nvcc) their stream and device forms.
#define COMPAT_RED(T, N, OP, E)                                                                                \
  struct R_##N##_##OP {                                                                                        \
    using type = T;                                                                                            \
    static constexpr coll::Op op = coll::Op::E;                                                                \
    static constexpr const char* name = #N "_" #OP;                                                            \
    static int reduce(nvshmem_team_t t, T* d, const T* s, size_t n) {                                          \
      return nvshmem_##N##_##OP##_reduce(t, d, s, n);                                                          \
    }                                                                                                          \
    static int reducescatter(nvshmem_team_t t, T* d, const T* s, size_t n) {                                   \
      return nvshmem_##N##_##OP##_reducescatter(t, d, s, n);                                                   \
    }                                                                                                          \
    COMPAT_RED_GPU(T, N, OP)                                                                                   \
  };

// D_<name>: nvshmem_<name>_broadcast / _fcollect / _alltoall and (nvcc) their stream and device forms.
#define COMPAT_DATA(T, N)                                                                                      \
  struct D_##N {                                                                                               \
    using type = T;                                                                                            \
    static constexpr const char* name = #N;                                                                    \
    static int broadcast(nvshmem_team_t t, T* d, const T* s, size_t n, int root) {                             \
      return nvshmem_##N##_broadcast(t, d, s, n, root);                                                        \
    }                                                                                                          \
    static int fcollect(nvshmem_team_t t, T* d, const T* s, size_t n) { return nvshmem_##N##_fcollect(t, d, s, n); } \
    static int alltoall(nvshmem_team_t t, T* d, const T* s, size_t n) { return nvshmem_##N##_alltoall(t, d, s, n); } \
    COMPAT_DATA_GPU(T, N)                                                                                      \
  };

// The byte forms (nelems counts bytes): nvshmem_broadcastmem / fcollectmem / alltoallmem.
struct D_mem {
  using type = unsigned char;
  static constexpr const char* name = "mem";
  static int broadcast(nvshmem_team_t t, unsigned char* d, const unsigned char* s, size_t n, int root) {
    return nvshmem_broadcastmem(t, d, s, n, root);
  }
  static int fcollect(nvshmem_team_t t, unsigned char* d, const unsigned char* s, size_t n) {
    return nvshmem_fcollectmem(t, d, s, n);
  }
  static int alltoall(nvshmem_team_t t, unsigned char* d, const unsigned char* s, size_t n) {
    return nvshmem_alltoallmem(t, d, s, n);
  }
#if defined(__CUDACC__)
  static int broadcast_on_stream(nvshmem_team_t t, unsigned char* d, const unsigned char* s, size_t n, int root,
                                 cudaStream_t st) {
    return nvshmemx_broadcastmem_on_stream(t, d, s, n, root, st);
  }
  static int fcollect_on_stream(nvshmem_team_t t, unsigned char* d, const unsigned char* s, size_t n,
                                cudaStream_t st) {
    return nvshmemx_fcollectmem_on_stream(t, d, s, n, st);
  }
  static int alltoall_on_stream(nvshmem_team_t t, unsigned char* d, const unsigned char* s, size_t n,
                                cudaStream_t st) {
    return nvshmemx_alltoallmem_on_stream(t, d, s, n, st);
  }
  __device__ static int broadcast_dev(int scope, nvshmem_team_t t, unsigned char* d, const unsigned char* s,
                                      size_t n, int root) {
    // NVSHMEM 3.4.5's host/nvshmemx_coll_api.h declares nvshmemx_broadcastmem_warp / _block without PE_root; its
    // definitions (device/nvshmemx_coll_defines.cuh, device pass only) take PE_root. So, as with NVSHMEM, the call
    // is only seen by the device pass.
#if defined(__CUDA_ARCH__)
    return scope == 0   ? nvshmem_broadcastmem(t, d, s, n, root)
           : scope == 1 ? nvshmemx_broadcastmem_warp(t, d, s, n, root)
                        : nvshmemx_broadcastmem_block(t, d, s, n, root);
#else
    (void)scope, (void)t, (void)d, (void)s, (void)n, (void)root;
    return -1;
#endif
  }
  __device__ static int fcollect_dev(int scope, nvshmem_team_t t, unsigned char* d, const unsigned char* s,
                                     size_t n) {
    return scope == 0   ? nvshmem_fcollectmem(t, d, s, n)
           : scope == 1 ? nvshmemx_fcollectmem_warp(t, d, s, n)
                        : nvshmemx_fcollectmem_block(t, d, s, n);
  }
  __device__ static int alltoall_dev(int scope, nvshmem_team_t t, unsigned char* d, const unsigned char* s,
                                     size_t n) {
    return scope == 0   ? nvshmem_alltoallmem(t, d, s, n)
           : scope == 1 ? nvshmemx_alltoallmem_warp(t, d, s, n)
                        : nvshmemx_alltoallmem_block(t, d, s, n);
  }
#endif
};

// The reductions tested (NVSHMEM 3.4.5's lists: and/or/xor over the bitwise types, which have no plain int;
// max/min/sum/prod over those plus char, schar, short, int, long, longlong, float, double).
COMPAT_RED(int, int, sum, sum)
COMPAT_RED(int, int, prod, prod)
COMPAT_RED(int, int, max, max)
COMPAT_RED(long, long, min, min)
COMPAT_RED(long long, longlong, sum, sum)
COMPAT_RED(unsigned int, uint, and, band)
COMPAT_RED(unsigned int, uint, or, bor)
COMPAT_RED(unsigned long long, ulonglong, xor, bxor)
COMPAT_RED(uint64_t, uint64, xor, bxor)
COMPAT_RED(unsigned char, uchar, or, bor)
COMPAT_RED(int8_t, int8, and, band)
COMPAT_RED(int16_t, int16, sum, sum)
COMPAT_RED(short, short, prod, prod)
COMPAT_RED(signed char, schar, min, min)
COMPAT_RED(char, char, max, max)
COMPAT_RED(unsigned short, ushort, sum, sum)
COMPAT_RED(size_t, size, max, max)
COMPAT_RED(int32_t, int32, xor, bxor)
COMPAT_RED(int64_t, int64, sum, sum)
COMPAT_RED(uint32_t, uint32, prod, prod)
COMPAT_RED(float, float, sum, sum)
COMPAT_RED(float, float, max, max)
COMPAT_RED(float, float, prod, prod)
COMPAT_RED(double, double, sum, sum)
COMPAT_RED(double, double, min, min)
COMPAT_RED(double, double, prod, prod)

COMPAT_DATA(int, int)
COMPAT_DATA(double, double)
COMPAT_DATA(uint8_t, uint8)
COMPAT_DATA(int64_t, int64)
COMPAT_DATA(float, float)
COMPAT_DATA(short, short)
COMPAT_DATA(char, char)
COMPAT_DATA(int16_t, int16)
