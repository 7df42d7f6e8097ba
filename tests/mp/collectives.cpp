// mp_collectives: broadcast, fcollect and alltoall (mem and typed forms) through the host API, on every team
// shape (world, strided splits, a team of one), sizes 0 / 1 / odd / 1 MiB, several types. Fresh random data per
// call, poisoned destinations with guard elements on both sides, exact comparison against what every member sent
// (computed here from the same seed), and the source checked unchanged. Runs on CPU PEs (CI) and, as
// gpu.mp.collectives.*, on GPU PEs (host forms = the stream kernel on the internal stream, waited for).
//
// `coll_bad CASE` (argv) makes one bad collective call instead; tests/mp/CMakeLists.txt expects the job to end
// with a message naming the call (expect_fail.py).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "harness.hpp"

namespace {

enum class Kind { Broadcast, Fcollect, Alltoall };

// A team this test made, with its value as the test computes it (world PEs start + i * stride).
struct TeamShape {
  const char* name;
  gshmem_team_t handle;  // GSHMEM_TEAM_INVALID on non-members
  int start, stride, size;
  int index_of(int pe) const {
    if (size == 1) return pe == start ? 0 : -1;
    const int d = pe - start;
    return d >= 0 && d % stride == 0 && d / stride < size ? d / stride : -1;
  }
};

// The typed call for T (or the mem form for unsigned char, counted in bytes).
template <typename T>
int call(Kind k, gshmem_team_t team, T* d, const T* s, std::size_t n, int root, bool mem);
#define MPT_COLL_CALL(T, N)                                                                                    \
  template <>                                                                                                  \
  int call<T>(Kind k, gshmem_team_t team, T * d, const T* s, std::size_t n, int root, bool mem) {              \
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

const char* kind_name(Kind k) {
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
    const int root_pe = team.start + root * (team.size == 1 ? 0 : team.stride);
    for (std::size_t j = 0; j < dest_n; ++j) {
      if (k == Kind::Broadcast) {
        want[kGuard + j] = sent(root_pe, j);
      } else {
        const std::size_t from = j / (n ? n : 1), e = j % (n ? n : 1);
        const int p = team.start + static_cast<int>(from) * team.stride;
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

std::vector<TeamShape> make_teams() {
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
  return t;
}
void destroy(std::vector<TeamShape>& teams) {
  for (auto& t : teams)
    if (t.handle != GSHMEM_TEAM_WORLD && t.handle != GSHMEM_TEAM_INVALID) gshmem_team_destroy(t.handle);
  gshmem_barrier_all();
}

const std::size_t kSizes[] = {0, 1, 7, 1000};

template <typename T>
void all_kinds(const TeamShape& team, std::uint64_t salt) {
  for (std::size_t n : kSizes) {
    run<T>(Kind::Fcollect, team, n, 0, false, false, salt + n);
    run<T>(Kind::Alltoall, team, n, 0, false, false, salt + n);
    run<T>(Kind::Broadcast, team, n, 0, false, false, salt + n);
    run<T>(Kind::Broadcast, team, n, team.size - 1, false, false, salt + n + 1);
  }
}

}  // namespace

MPT_CASE(typed_every_team) {
  auto teams = make_teams();
  for (const auto& t : teams) {
    all_kinds<int>(t, 1);
    all_kinds<double>(t, 2);
    all_kinds<unsigned char>(t, 3);
    all_kinds<int64_t>(t, 4);
    all_kinds<uint16_t>(t, 5);
  }
  destroy(teams);
}

MPT_CASE(mem_forms) {
  auto teams = make_teams();
  for (const auto& t : teams)
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(13), std::size_t(4096 + 3)}) {
      run<unsigned char>(Kind::Fcollect, t, n, 0, true, false, 10 + n);
      run<unsigned char>(Kind::Alltoall, t, n, 0, true, false, 11 + n);
      run<unsigned char>(Kind::Broadcast, t, n, t.size / 2, true, false, 12 + n);
    }
  destroy(teams);
}

MPT_CASE(broadcast_in_place) {
  auto teams = make_teams();
  for (const auto& t : teams)
    for (int root : {0, t.size - 1})
      for (std::size_t n : {std::size_t(1), std::size_t(33)}) {
        run<int>(Kind::Broadcast, t, n, root, false, true, 20 + n);
        run<unsigned char>(Kind::Broadcast, t, n, root, true, true, 21 + n);
      }
  destroy(teams);
}

// 1 MiB blocks (alltoall/fcollect: 1 MiB per member).
MPT_CASE(large) {
  std::vector<TeamShape> world{{"world", GSHMEM_TEAM_WORLD, 0, 1, mpt::npes()}};
  const std::size_t mib = std::size_t(1) << 20;
  run<unsigned char>(Kind::Fcollect, world[0], mib, 0, true, false, 30);
  run<unsigned char>(Kind::Alltoall, world[0], mib, 0, true, false, 31);
  run<unsigned char>(Kind::Broadcast, world[0], mib, mpt::npes() - 1, true, false, 32);
  run<int64_t>(Kind::Fcollect, world[0], mib / 8 + 1, 0, false, false, 33);
}

// Back-to-back collectives on the same buffers, each result read before the next call: a member that returns
// early must not overwrite a destination another member has not read yet (the entry sync).
MPT_CASE(back_to_back) {
  const int n = mpt::npes();
  const std::size_t e = 257;
  int* src = static_cast<int*>(gshmem_malloc(e * n * sizeof(int)));
  int* dest = static_cast<int*>(gshmem_malloc(e * n * sizeof(int)));
  mpt::require(src && dest, "gshmem_malloc");
  const int iters = mpt::scaled(40, 8);
  for (int it = 0; it < iters; ++it) {
    std::vector<int> mine(e * n);
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = mpt::gen<int>(99, it, mpt::me(), i);
    mpt::local_write(src, mine.data(), mine.size() * sizeof(int));
    const bool a2a = it % 2 == 0;
    if (a2a) gshmem_int_alltoall(GSHMEM_TEAM_WORLD, dest, src, e);
    else gshmem_int_fcollect(GSHMEM_TEAM_WORLD, dest, src, e);
    std::vector<int> got = mpt::local_vec(dest, e * n), want(e * n);
    for (int p = 0; p < n; ++p)
      for (std::size_t i = 0; i < e; ++i)
        want[p * e + i] = mpt::gen<int>(99, it, p, a2a ? mpt::me() * e + i : i);
    MPT_CHECK_ARRAY(std::string(a2a ? "alltoall" : "fcollect") + " iteration " + std::to_string(it), got.data(),
                    want.data(), want.size());
  }
  gshmem_barrier_all();
  gshmem_free(dest);
  gshmem_free(src);
}

namespace {
// One bad call (argv[1] == "coll_bad", argv[2] == case); returns only if the library accepted it.
int bad(const std::string& c) {
  if (gshmem_init() != GSHMEM_SUCCESS) return 2;
  const int n = gshmem_n_pes();
  int* buf = static_cast<int*>(gshmem_malloc(64 * sizeof(int) * n));
  if (c == "not_member") {  // PE 0 is not in the team of the others (or of nobody at 1 PE) and calls anyway
    gshmem_team_t t = GSHMEM_TEAM_INVALID;
    gshmem_team_split_strided(GSHMEM_TEAM_WORLD, n > 1 ? 1 : 0, 1, n > 1 ? n - 1 : 1, nullptr, 0, &t);
    if (gshmem_my_pe() == 0) gshmem_int_fcollect(n > 1 ? t : GSHMEM_TEAM_INVALID, buf, buf + 32 * n, 1);
    else gshmem_int_fcollect(t, buf, buf + 32 * n, 1);
  } else if (c == "bad_root") {
    gshmem_broadcastmem(GSHMEM_TEAM_WORLD, buf, buf + 32, 4, n);
  } else if (c == "negative_nelems") {
    const long count = -3;
    gshmem_int_alltoall(GSHMEM_TEAM_WORLD, buf, buf + 32 * n, static_cast<std::size_t>(count));
  } else if (c == "overlap") {
    gshmem_fcollectmem(GSHMEM_TEAM_WORLD, buf, buf + 1, 8);
  } else if (c == "nonsymmetric_dest") {
    int local[8];
    gshmem_int_broadcast(GSHMEM_TEAM_WORLD, local, buf, 2, 0);
  } else if (c == "on_stream_cpu") {
    gshmemx_int_fcollect_on_stream(GSHMEM_TEAM_WORLD, buf, buf + 32 * n, 1, nullptr);
  } else {
    std::fprintf(stderr, "coll_bad: unknown case %s\n", c.c_str());
    return 2;
  }
  std::fprintf(stderr, "coll_bad: UNCAUGHT: the bad call of case '%s' returned normally\n", c.c_str());
  gshmem_finalize();
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "coll_bad") return bad(argv[2]);
  return mpt::main(argc, argv);
}
