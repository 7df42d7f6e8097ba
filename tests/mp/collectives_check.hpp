// The checks of mp_collectives (collectives.cpp, CPU and GPU PEs, host forms) and mp_collectives_gpu
// (collectives_gpu.cu: the _on_stream and device forms): one collective per run() / run_red(), fresh random data,
// poisoned destination with guards, exact comparison, source unchanged, non-members untouched. Reductions are
// compared bit for bit with a reference computed here in the library's order (team index 0, 1, ..., size-1).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness.hpp"

namespace mpc {

enum class Kind { Broadcast, Fcollect, Alltoall };

// A team this test made, with its value as the test computes it (world PEs start + i * stride).
struct TeamShape {
  const char* name;
  gshmem_team_t handle;  // GSHMEM_TEAM_INVALID on non-members
  int start, stride, size;
  std::vector<int> list;  // the world PE of each index for a team made from a member list (then start/stride unused)
  // (a constructor, not aggregate initialization: nvcc's front end drops an empty trailing `{}`, and the host
  // compiler then warns of a missing initializer)
  TeamShape(const char* n, gshmem_team_t h, int a, int b, int c, std::vector<int> l = {})
      : name(n), handle(h), start(a), stride(b), size(c), list(std::move(l)) {}
  int pe(int i) const {
    return list.empty() ? start + i * (size == 1 ? 0 : stride) : list[static_cast<std::size_t>(i)];
  }
  int index_of(int pe) const {
    for (std::size_t i = 0; i < list.size(); ++i)
      if (list[i] == pe) return static_cast<int>(i);
    if (!list.empty()) return -1;
    if (size == 1) return pe == start ? 0 : -1;
    const int d = pe - start;
    return d >= 0 && d % stride == 0 && d / stride < size ? d / stride : -1;
  }
};

// How the collective is called: the host's typed or mem form (CPU and GPU PEs), or (collectives_gpu.cu) the
// _on_stream form or a kernel calling the device form of a scope.
// HostNamed: the host's typed names where they are header-only (half, bfloat16: gshmem/device.cuh).
enum class Mode { Host, Stream, DeviceThread, DeviceWarp, DeviceBlock, HostNamed };
inline Mode g_mode = Mode::Host;
// Defined by the program: the calls of the modes other than Host (mem: the *mem form over the bytes).
template <typename T>
int call_other(Mode m, Kind k, gshmem_team_t team, T* d, const T* s, std::size_t n, int root, bool mem);

// The typed call for T (or the mem form, counted in bytes).
template <typename T>
int call(Kind k, gshmem_team_t team, T* d, const T* s, std::size_t n, int root, bool mem);
#define MPT_COLL_CALL(T, N)                                                                                    \
  template <>                                                                                                  \
  inline int call<T>(Kind k, gshmem_team_t team, T * d, const T* s, std::size_t n, int root, bool mem) {       \
    if (g_mode != Mode::Host) return call_other<T>(g_mode, k, team, d, s, n, root, mem);                       \
    if (mem) {                                                                                                 \
      const std::size_t b = n * sizeof(T);                                                                     \
      return k == Kind::Broadcast  ? gshmem_broadcastmem(team, d, s, b, root)                                  \
             : k == Kind::Fcollect ? gshmem_fcollectmem(team, d, s, b)                                         \
                                   : gshmem_alltoallmem(team, d, s, b);                                        \
    }                                                                                                          \
    return k == Kind::Broadcast  ? gshmem_##N##_broadcast(team, d, s, n, root)                                 \
           : k == Kind::Fcollect ? gshmem_##N##_fcollect(team, d, s, n)                                        \
                                 : gshmem_##N##_alltoall(team, d, s, n);                                       \
  }
MPT_COLL_CALL(unsigned char, uchar)
MPT_COLL_CALL(int, int)
MPT_COLL_CALL(double, double)
MPT_COLL_CALL(int64_t, int64)
MPT_COLL_CALL(uint16_t, uint16)
#undef MPT_COLL_CALL

inline const char* kind_name(Kind k) {
  return k == Kind::Broadcast ? "broadcast" : k == Kind::Fcollect ? "fcollect" : "alltoall";
}

constexpr std::size_t kGuard = 5;  // guard elements on each side of dest

// One collective on `team`, checked. Every world PE calls (the allocations are world-collective); members make
// the collective call. `inplace`: broadcast with dest == source.
template <typename T>
void run(Kind k, const TeamShape& team, std::size_t n, int root, bool mem, bool inplace, std::uint64_t salt) {
  const int me = mpt::me();
  const int idx = team.index_of(me);
  const std::size_t blocks = static_cast<std::size_t>(team.size);
  const std::size_t dest_n = k == Kind::Broadcast ? n : n * blocks;
  const std::size_t src_n = k == Kind::Alltoall ? n * blocks : n;
  T* dest = static_cast<T*>(gshmem_malloc((dest_n + 2 * kGuard) * sizeof(T)));
  T* src = inplace ? dest + kGuard : static_cast<T*>(gshmem_malloc((src_n + 1) * sizeof(T)));
  mpt::require(dest && src, "gshmem_malloc for the collective's buffers");
  const std::uint64_t tag = mpt::tag_of(kind_name(k)) ^ salt;
  // What world PE p sends as element i of its source.
  auto sent = [&](int p, std::size_t i) { return mpt::gen<T>(tag, static_cast<std::uint64_t>(p), i); };
  std::vector<T> want(dest_n + 2 * kGuard), mysrc(src_n);
  for (std::size_t i = 0; i < kGuard; ++i) {
    want[i] = mpt::gen<T>(tag, 1000 + static_cast<std::uint64_t>(me), i);
    want[kGuard + dest_n + i] = mpt::gen<T>(tag, 2000 + static_cast<std::uint64_t>(me), i);
  }
  if (idx >= 0) {
    const int root_pe = team.pe(root);
    for (std::size_t j = 0; j < dest_n; ++j) {
      if (k == Kind::Broadcast) {
        want[kGuard + j] = sent(root_pe, j);
      } else {
        const std::size_t from = j / (n ? n : 1), e = j % (n ? n : 1);
        const int p = team.pe(static_cast<int>(from));
        want[kGuard + j] = sent(p, k == Kind::Fcollect ? e : static_cast<std::size_t>(idx) * n + e);
      }
    }
    for (std::size_t i = 0; i < src_n; ++i) mysrc[i] = sent(me, i);
  }
  // dest: guards + poison (every byte differs from what must arrive); source: this PE's data.
  std::vector<T> init(want);
  mpt::poison_of(init.data() + kGuard, want.data() + kGuard, dest_n * sizeof(T));
  if (inplace && idx == root) std::copy(mysrc.begin(), mysrc.end(), init.begin() + kGuard);
  mpt::local_write(dest, init.data(), init.size() * sizeof(T));
  if (!inplace && src_n) mpt::local_write(src, mysrc.data(), src_n * sizeof(T));
  gshmem_barrier_all();
  if (idx >= 0) {
    const int s = call<T>(k, team.handle, dest + kGuard, src, n, root, mem);
    MPT_CHECK(s == GSHMEM_SUCCESS) << kind_name(k) << "returned" << s;
  }
  std::vector<T> got = mpt::local_vec(dest, want.size());
  const std::string what = std::string(kind_name(k)) + (mem ? "mem" : "") + " team " + team.name + " n " +
                           std::to_string(n) + " root " + std::to_string(root) + (inplace ? " in place" : "") +
                           " elem " + std::to_string(sizeof(T));
  if (idx >= 0) {
    MPT_CHECK_ARRAY(what + " (dest with guards)", got.data(), want.data(), want.size());
  } else {  // not a member: nothing may have been written
    MPT_CHECK_ARRAY(what + " (non-member's dest)", got.data(), init.data(), init.size());
  }
  if (!inplace && idx >= 0 && src_n) {
    std::vector<T> s = mpt::local_vec(src, src_n);
    MPT_CHECK_ARRAY(what + " (source unchanged)", s.data(), mysrc.data(), src_n);
  }
  gshmem_barrier_all();  // every PE has read its buffers before they are freed
  if (!inplace) gshmem_free(src);
  gshmem_free(dest);
}

inline std::vector<TeamShape> make_teams() {
  const int n = mpt::npes();
  std::vector<TeamShape> t;
  t.push_back({"world", GSHMEM_TEAM_WORLD, 0, 1, n});
  auto split = [&](const char* name, int start, int stride, int size) {
    gshmem_team_t h = GSHMEM_TEAM_INVALID;
    const int s = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, start, stride, size, nullptr, 0, &h);
    mpt::require(s == GSHMEM_SUCCESS, "gshmem_team_split_strided");
    t.push_back({name, h, start, size == 1 ? 1 : stride, size});
  };
  if (n >= 2) split("odd", 1, 2, n / 2);        // strided: world PEs 1, 3, 5, ...
  if (n >= 3) split("even", 0, 2, (n + 1) / 2);  // strided, odd size at 3 PEs
  split("one", n - 1, 1, 1);                     // a team of one: the last PE
  if (n >= 2) {
    // a member list (gshmemx_team_init): every PE in decreasing world order, PE 0's unique ID handed out through
    // the heap; the collectives then reach members only through the list (host and device code alike)
    auto* box = static_cast<std::uint64_t*>(gshmem_malloc(sizeof(std::uint64_t)));
    mpt::require(box != nullptr, "gshmem_malloc");
    if (mpt::me() == 0) {
      gshmemx_team_uniqueid_t id = 0;
      mpt::require(gshmemx_team_get_uniqueid(&id) == GSHMEM_SUCCESS, "gshmemx_team_get_uniqueid");
      for (int p = 0; p < n; ++p) gshmem_uint64_p(box, id, p);
      gshmem_quiet();
    }
    gshmem_barrier_all();
    gshmem_team_config_t cfg = GSHMEM_TEAM_CONFIG_INITIALIZER;
    cfg.uniqueid = gshmem_uint64_g(box, mpt::me());
    gshmem_team_t h = GSHMEM_TEAM_INVALID;
    mpt::require(gshmemx_team_init(&h, &cfg, GSHMEM_TEAM_CONFIG_MASK_UNIQUEID, n, n - 1 - mpt::me()) ==
                     GSHMEM_SUCCESS, "gshmemx_team_init");
    TeamShape r{"reversed", h, n - 1, 0, n};
    for (int p = n - 1; p >= 0; --p) r.list.push_back(p);
    t.push_back(r);
    gshmem_barrier_all();
    gshmem_free(box);
  }
  return t;
}
inline void destroy(std::vector<TeamShape>& teams) {
  for (auto& t : teams)
    if (t.handle != GSHMEM_TEAM_WORLD && t.handle != GSHMEM_TEAM_INVALID) gshmem_team_destroy(t.handle);
  gshmem_barrier_all();
}

inline const std::size_t kSizes[] = {0, 1, 7, 1000};

template <typename T>
void all_kinds(const TeamShape& team, std::uint64_t salt) {
  for (std::size_t n : kSizes) {
    run<T>(Kind::Fcollect, team, n, 0, false, false, salt + n);
    run<T>(Kind::Alltoall, team, n, 0, false, false, salt + n);
    run<T>(Kind::Broadcast, team, n, 0, false, false, salt + n);
    run<T>(Kind::Broadcast, team, n, team.size - 1, false, false, salt + n + 1);
  }
}

// ---- alltoalls (strided) ----
// Defined by the program: the modes other than Host (only the device thread form exists besides the host's).
template <typename T>
int alltoalls_other(Mode m, gshmem_team_t team, T* d, const T* s, std::ptrdiff_t dst, std::ptrdiff_t sst,
                    std::size_t n);
template <typename T>
int alltoalls_call(gshmem_team_t team, T* d, const T* s, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t n);
#define MPT_ALLTOALLS_CALL(T, N)                                                                               \
  template <>                                                                                                  \
  inline int alltoalls_call<T>(gshmem_team_t team, T * d, const T* s, std::ptrdiff_t dst, std::ptrdiff_t sst,  \
                               std::size_t n) {                                                                \
    if (g_mode != Mode::Host) return alltoalls_other<T>(g_mode, team, d, s, dst, sst, n);                      \
    return gshmem_##N##_alltoalls(team, d, s, dst, sst, n);                                                    \
  }
MPT_ALLTOALLS_CALL(int, int)
MPT_ALLTOALLS_CALL(double, double)
MPT_ALLTOALLS_CALL(unsigned char, uchar)
#undef MPT_ALLTOALLS_CALL

// alltoalls on `team`: element l of block j of member i's source (src[sst * (j * n + l)]) must land at
// dest[dst * (i * n + l)] of member j; every other element of dest keeps its poison, the source is unchanged.
template <typename T>
void run_strided(const TeamShape& team, std::size_t n, std::ptrdiff_t dst, std::ptrdiff_t sst, std::uint64_t salt) {
  const int me = mpt::me();
  const int idx = team.index_of(me);
  const std::size_t blocks = static_cast<std::size_t>(team.size);
  const std::size_t count = n * blocks;  // elements sent and received by each member
  const std::size_t dest_n = count ? static_cast<std::size_t>(dst) * (count - 1) + 1 : 0;
  const std::size_t src_n = count ? static_cast<std::size_t>(sst) * (count - 1) + 1 : 0;
  T* dest = static_cast<T*>(gshmem_malloc((dest_n + 2 * kGuard) * sizeof(T)));
  T* src = static_cast<T*>(gshmem_malloc((src_n + 1) * sizeof(T)));
  mpt::require(dest && src, "gshmem_malloc for alltoalls' buffers");
  const std::uint64_t tag = mpt::tag_of("alltoalls") ^ salt;
  auto sent = [&](int p, std::size_t k) { return mpt::gen<T>(tag, static_cast<std::uint64_t>(p), k); };
  // init: guards and every element of dest's span a value no member sends (poison of what arrives, else fresh).
  std::vector<T> init(dest_n + 2 * kGuard), want, mysrc(src_n);
  for (std::size_t i = 0; i < init.size(); ++i) init[i] = mpt::gen<T>(tag, 5000 + static_cast<std::uint64_t>(me), i);
  want = init;
  if (idx >= 0) {
    for (std::size_t i = 0; i < blocks; ++i)
      for (std::size_t l = 0; l < n; ++l) {
        const int p = team.pe(static_cast<int>(i));
        const std::size_t at = kGuard + static_cast<std::size_t>(dst) * (i * n + l);
        want[at] = sent(p, static_cast<std::size_t>(sst) * (static_cast<std::size_t>(idx) * n + l));
        mpt::poison_of(&init[at], &want[at], sizeof(T));
      }
    for (std::size_t k = 0; k < src_n; ++k) mysrc[k] = sent(me, k);
  }
  mpt::local_write(dest, init.data(), init.size() * sizeof(T));
  if (src_n) mpt::local_write(src, mysrc.data(), src_n * sizeof(T));
  gshmem_barrier_all();
  if (idx >= 0) {
    const int s = alltoalls_call<T>(team.handle, dest + kGuard, src, dst, sst, n);
    MPT_CHECK(s == GSHMEM_SUCCESS) << "alltoalls returned" << s;
  }
  std::vector<T> got = mpt::local_vec(dest, want.size());
  const std::string what = std::string("alltoalls team ") + team.name + " n " + std::to_string(n) + " dst " +
                           std::to_string(dst) + " sst " + std::to_string(sst) + " elem " + std::to_string(sizeof(T));
  MPT_CHECK_ARRAY(what + (idx >= 0 ? " (dest with gaps and guards)" : " (non-member's dest)"), got.data(),
                  (idx >= 0 ? want : init).data(), want.size());
  if (idx >= 0 && src_n) {
    std::vector<T> sv = mpt::local_vec(src, src_n);
    MPT_CHECK_ARRAY(what + " (source unchanged)", sv.data(), mysrc.data(), src_n);
  }
  gshmem_barrier_all();
  gshmem_free(src);
  gshmem_free(dest);
}

// ---- reductions ----
enum class Op { And, Or, Xor, Max, Min, Sum, Prod };
static_assert(static_cast<int>(Op::And) == GSHMEMI_REDUCE_AND && static_cast<int>(Op::Prod) == GSHMEMI_REDUCE_PROD,
              "the test's op order is the library's type codes'");

// half and bfloat16 as the tests hold them: bit patterns. F16<T> (defined by the program: CUDA's conversions in
// collectives_gpu.cu, the compiler's _Float16 and the test's own bfloat16 rounding in collectives.cpp) gives
// to_float / from_float (round to nearest even) and the library's type code.
struct Half16 {
  std::uint16_t bits;
};
struct Bf16 {
  std::uint16_t bits;
};
template <typename T>
struct F16;
template <typename T>
inline constexpr bool kIsF16 = std::is_same_v<T, Half16> || std::is_same_v<T, Bf16>;
template <typename T>
constexpr int f16_code() {
  return std::is_same_v<T, Half16> ? GSHMEMI_REDUCE_HALF : GSHMEMI_REDUCE_BFLOAT16;
}
inline const char* op_name(Op o) {
  static const char* const names[] = {"and", "or", "xor", "max", "min", "sum", "prod"};
  return names[static_cast<int>(o)];
}
inline constexpr Op kBitwiseOps[] = {Op::And, Op::Or, Op::Xor};
inline constexpr Op kStandardOps[] = {Op::Max, Op::Min, Op::Sum, Op::Prod};

// Defined by the program: the modes other than Host. scatter: reducescatter, else reduce.
template <typename T>
int red_call_other(Mode m, Op op, bool scatter, gshmem_team_t team, T* d, const T* s, std::size_t n);
template <typename T>
int red_call(Op op, bool scatter, gshmem_team_t team, T* d, const T* s, std::size_t n);
#define MPT_RED_CASE(N, OP, O)                                                                                 \
  case Op::O:                                                                                                  \
    return scatter ? gshmem_##N##_##OP##_reducescatter(team, d, s, n) : gshmem_##N##_##OP##_reduce(team, d, s, n);
#define MPT_RED_STANDARD(N)                                                                                    \
  MPT_RED_CASE(N, max, Max) MPT_RED_CASE(N, min, Min) MPT_RED_CASE(N, sum, Sum) MPT_RED_CASE(N, prod, Prod)
#define MPT_RED_BITWISE(N) MPT_RED_CASE(N, and, And) MPT_RED_CASE(N, or, Or) MPT_RED_CASE(N, xor, Xor)
#define MPT_RED_NONE(N)
#define MPT_RED_CALL(T, N, BITWISE)                                                                            \
  template <>                                                                                                  \
  inline int red_call<T>(Op op, bool scatter, gshmem_team_t team, T * d, const T* s, std::size_t n) {          \
    if (g_mode != Mode::Host) return red_call_other<T>(g_mode, op, scatter, team, d, s, n);                    \
    switch (op) {                                                                                              \
      MPT_RED_STANDARD(N)                                                                                      \
      BITWISE(N)                                                                                               \
      default: break;                                                                                          \
    }                                                                                                          \
    mpt::require(false, "the test called a reduction op its type does not have");                             \
    return -1;                                                                                                 \
  }
MPT_RED_CALL(int, int, MPT_RED_NONE)
MPT_RED_CALL(long, long, MPT_RED_NONE)
MPT_RED_CALL(float, float, MPT_RED_NONE)
MPT_RED_CALL(double, double, MPT_RED_NONE)
MPT_RED_CALL(unsigned int, uint, MPT_RED_BITWISE)
MPT_RED_CALL(int8_t, int8, MPT_RED_BITWISE)
#undef MPT_RED_CALL
// half / bfloat16 from the host: the library's entry by type code (the typed names gshmem_half_sum_reduce, ... are
// header-only wrappers over it in gshmem/device.cuh, which collectives_gpu.cu calls by name).
#define MPT_RED_CALL_F16(T)                                                                                    \
  template <>                                                                                                  \
  inline int red_call<T>(Op op, bool scatter, gshmem_team_t team, T * d, const T* s, std::size_t n) {          \
    if (g_mode != Mode::Host) return red_call_other<T>(g_mode, op, scatter, team, d, s, n);                    \
    return gshmemi_reduction(static_cast<int>(op), f16_code<T>(), scatter, team, d, s, n, 0, nullptr,          \
                             "the test's " #T " reduction");                                                   \
  }
MPT_RED_CALL_F16(Half16)
MPT_RED_CALL_F16(Bf16)
#undef MPT_RED_CALL_F16
#undef MPT_RED_NONE
#undef MPT_RED_BITWISE
#undef MPT_RED_STANDARD
#undef MPT_RED_CASE

// The reference op, written independently of the library's: integers through uint64_t (wrapping), floats as is,
// half and bfloat16 in float rounded after every step.
template <typename T>
T ref_op(Op op, T a, T b) {
  if constexpr (kIsF16<T>) {
    const float x = F16<T>::to_float(a), y = F16<T>::to_float(b);
    switch (op) {
      case Op::Max: return x < y ? b : a;
      case Op::Min: return y < x ? b : a;
      case Op::Sum: return F16<T>::from_float(x + y);
      default: return F16<T>::from_float(x * y);
    }
  } else if (op == Op::Max) {
    return a < b ? b : a;
  } else if (op == Op::Min) {
    return b < a ? b : a;
  } else if constexpr (std::is_floating_point_v<T>) {
    return op == Op::Sum ? a + b : a * b;
  } else {
    const std::uint64_t x = static_cast<std::uint64_t>(a), y = static_cast<std::uint64_t>(b);
    const std::uint64_t v = op == Op::And ? x & y : op == Op::Or ? x | y : op == Op::Xor ? x ^ y
                          : op == Op::Sum ? x + y : x * y;
    return static_cast<T>(v);
  }
}
// Source values: any bits for integers; for floats nonzero values of varying exponents (sums round, so the order
// of combination shows in the result), small enough that no product of 8 overflows to a NaN through inf * 0.
template <typename T>
T red_value(std::uint64_t tag, int pe, std::size_t i) {
  const std::uint64_t r = mpt::rnd(tag, static_cast<std::uint64_t>(pe), i);
  if constexpr (kIsF16<T>) {  // +-[0.5, 2): sums round, products of 8 stay finite
    const float m = 1.0f + static_cast<float>(r % 4096) / 4096.0f;
    return F16<T>::from_float((r >> 20) & 1 ? m : -m / 2);
  } else if constexpr (std::is_floating_point_v<T>) {
    T v = mpt::value_of<T>(r);
    if (v == T(0)) v = T(1);
    const int e = static_cast<int>((r >> 40) % 16) - 8;
    for (int k = 0; k < (e < 0 ? -e : e); ++k) v = e < 0 ? v / T(2) : v * T(2);
    return v + static_cast<T>(((r >> 50) % 1000) + 1) / T(3);  // an inexact part
  } else {
    return mpt::value_of<T>(r);
  }
}

// One reduction (scatter: reducescatter) on `team` of n elements per member, checked bit for bit. Every world PE
// calls; members make the call. inplace: dest == source (reduce only).
template <typename T>
// shifted: the source starts kGuard elements into its allocation, as dest + kGuard does, so both share their
// misalignment to 16 bytes (the GPU's 16-byte passes then start after a few elements one by one); else the source
// is the allocation's start and the two differ.
void run_red(Op op, bool scatter, const TeamShape& team, std::size_t n, bool inplace, std::uint64_t salt,
             bool shifted = false) {
  const int me = mpt::me();
  const int idx = team.index_of(me);
  const std::size_t src_n = scatter ? n * static_cast<std::size_t>(team.size) : n;
  const std::size_t shift = shifted ? kGuard : 0;
  T* dest = static_cast<T*>(gshmem_malloc((n + 2 * kGuard) * sizeof(T)));
  T* src_base = inplace ? nullptr : static_cast<T*>(gshmem_malloc((src_n + 1 + shift) * sizeof(T)));
  T* src = inplace ? dest + kGuard : src_base + shift;
  mpt::require(dest && (inplace || src_base), "gshmem_malloc for the reduction's buffers");
  const std::uint64_t tag = mpt::tag_of(op_name(op)) ^ (scatter ? 0x5c : 0x7e) ^ (salt << 8);
  auto sent = [&](int p, std::size_t i) { return red_value<T>(tag, p, i); };
  std::vector<T> want(n + 2 * kGuard), mysrc(src_n);
  for (std::size_t i = 0; i < kGuard; ++i) {
    want[i] = mpt::gen<T>(tag, 1000 + static_cast<std::uint64_t>(me), i);
    want[kGuard + n + i] = mpt::gen<T>(tag, 2000 + static_cast<std::uint64_t>(me), i);
  }
  if (idx >= 0) {
    const std::size_t first = scatter ? static_cast<std::size_t>(idx) * n : 0;
    for (std::size_t i = 0; i < n; ++i) {
      T acc = sent(team.pe(0), first + i);
      for (int r = 1; r < team.size; ++r) acc = ref_op(op, acc, sent(team.pe(r), first + i));
      want[kGuard + i] = acc;
    }
    for (std::size_t i = 0; i < src_n; ++i) mysrc[i] = sent(me, i);
  }
  std::vector<T> init(want);
  mpt::poison_of(init.data() + kGuard, want.data() + kGuard, n * sizeof(T));
  if (inplace && idx >= 0) std::copy(mysrc.begin(), mysrc.end(), init.begin() + kGuard);
  mpt::local_write(dest, init.data(), init.size() * sizeof(T));
  if (!inplace && src_n) mpt::local_write(src, mysrc.data(), src_n * sizeof(T));
  gshmem_barrier_all();
  if (idx >= 0) {
    // MPT_TRACE=1: each call named on stderr before it starts, so a hang shows which one (coll-bisect-gpu.sh)
    static const bool trace = std::getenv("MPT_TRACE") != nullptr;
    if (trace)
      std::fprintf(stderr, "[PE %d] calling %s%s team %s n %zu%s%s elem %zu\n", me, op_name(op),
                   scatter ? "_reducescatter" : "_reduce", team.name, n, inplace ? " in place" : "",
                   shifted ? " shifted" : "", sizeof(T));
    const int s = red_call<T>(op, scatter, team.handle, dest + kGuard, src, n);
    MPT_CHECK(s == GSHMEM_SUCCESS) << op_name(op) << "returned" << s;
  }
  std::vector<T> got = mpt::local_vec(dest, want.size());
  const std::string what = std::string(op_name(op)) + (scatter ? "_reducescatter" : "_reduce") + " team " +
                           team.name + " n " + std::to_string(n) + (inplace ? " in place" : "") + " elem " +
                           std::to_string(sizeof(T)) + (std::is_floating_point_v<T> || kIsF16<T> ? " float" : "") +
                           (shifted ? " shifted" : "");
  if (idx >= 0) {
    MPT_CHECK_ARRAY(what + " (dest with guards)", got.data(), want.data(), want.size());
  } else {
    MPT_CHECK_ARRAY(what + " (non-member's dest)", got.data(), init.data(), init.size());
  }
  if (!inplace && idx >= 0 && src_n) {
    std::vector<T> s = mpt::local_vec(src, src_n);
    MPT_CHECK_ARRAY(what + " (source unchanged)", s.data(), mysrc.data(), src_n);
  }
  gshmem_barrier_all();
  if (!inplace) gshmem_free(src_base);
  gshmem_free(dest);
}

// Every op of T's group at the sizes of kSizes, reduce and reducescatter.
template <typename T>
void all_ops(const TeamShape& team, bool bitwise, std::uint64_t salt) {
  for (std::size_t n : kSizes)
    for (bool scatter : {false, true}) {
      for (Op op : kStandardOps) run_red<T>(op, scatter, team, n, false, salt + n);
      if (bitwise)
        for (Op op : kBitwiseOps) run_red<T>(op, scatter, team, n, false, salt + n);
    }
}

}  // namespace mpc
