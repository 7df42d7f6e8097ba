// mp_collectives: broadcast, fcollect and alltoall (mem and typed forms) and the reductions (reduce,
// reducescatter: every op over int, long, unsigned, float, double, int8_t) through the host API, on every team
// shape (world, strided splits, a team of one), sizes 0 / 1 / odd / 1 MiB, several types. Fresh random data per
// call, poisoned destinations with guard elements on both sides, exact comparison against what every member sent
// (computed here from the same seed), and the source checked unchanged. Runs on CPU PEs (CI) and, as
// gpu.mp.collectives.*, on GPU PEs (host forms = the stream kernel on the internal stream, waited for).
//
// `coll_bad CASE` (argv) makes one bad collective call instead; tests/mp/CMakeLists.txt expects the job to end
// with a message naming the call (expect_fail.py).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "collectives_check.hpp"

using namespace mpc;

// Host mode only: the other modes are collectives_gpu.cu's.
template <typename T>
int mpc::call_other(Mode, Kind, gshmem_team_t, T*, const T*, std::size_t, int, bool) {
  mpt::require(false, "mp_collectives calls the host forms only");
  return -1;
}

template <typename T>
int mpc::red_call_other(Mode, Op, bool, gshmem_team_t, T*, const T*, std::size_t) {
  mpt::require(false, "mp_collectives calls the host forms only");
  return -1;
}
template <typename T>
int mpc::alltoalls_other(Mode, gshmem_team_t, T*, const T*, std::ptrdiff_t, std::ptrdiff_t, std::size_t) {
  mpt::require(false, "mp_collectives calls the host forms only");
  return -1;
}

// The test's half and bfloat16: IEEE binary16 through the compiler's _Float16; bfloat16 as a float's upper half,
// rounded to nearest even by adding half an ulp (less when the kept part is even) before truncating.
template <>
struct mpc::F16<mpc::Half16> {
  static float to_float(Half16 v) {
    _Float16 h;
    std::memcpy(&h, &v.bits, 2);
    return static_cast<float>(h);
  }
  static Half16 from_float(float f) {
    const _Float16 h = static_cast<_Float16>(f);
    Half16 v;
    std::memcpy(&v.bits, &h, 2);
    return v;
  }
};
template <>
struct mpc::F16<mpc::Bf16> {
  static float to_float(Bf16 v) {
    std::uint32_t u = std::uint32_t{v.bits} << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static Bf16 from_float(float f) {  // the test's values are finite
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    const std::uint32_t kept_odd = (u >> 16) & 1;
    return Bf16{static_cast<std::uint16_t>((u + 0x8000u - (kept_odd ^ 1)) >> 16)};
  }
};

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

// Broadcast on every team, from the first, a middle and the last member, in place on the root and not. Under
// mp.collectives.two_shot.* (GSHMEM_COLL_BCAST_TWO_SHOT_BYTES=64) teams of 3 or more go two-shot (the root
// scatters pieces chunk by chunk, each member forwards its own as its chunks land) at every size here: 300 bytes
// at 4 members leaves one piece empty, 4097, 16 KiB + 5, 4 MiB + 8 (two chunks a piece) and 5 MiB + 24 (three, the
// root in place) split unevenly. By default only the last two calls are two-shot (at 3 or more PEs).
MPT_CASE(broadcast_two_shot) {
  auto teams = make_teams();
  std::uint64_t salt = 40;
  for (const auto& t : teams)
    for (int root : {0, t.size / 2, t.size - 1})
      for (std::size_t n : {std::size_t(64), std::size_t(300), std::size_t(4097), std::size_t(16389)})
        for (bool inplace : {false, true}) run<unsigned char>(Kind::Broadcast, t, n, root, true, inplace, ++salt);
  const TeamShape world{"world", GSHMEM_TEAM_WORLD, 0, 1, mpt::npes()};
  run<int64_t>(Kind::Broadcast, world, (std::size_t(1) << 19) + 1, world.size / 2, false, false, ++salt);
  // 5 MiB + 24: three chunks per piece (coll::broadcast_chunks), the root in place.
  run<int64_t>(Kind::Broadcast, world, (std::size_t(5) << 17) + 3, 0, false, true, ++salt);
  destroy(teams);
}

// A member that arrives late to a burst of small calls (the others run ahead through them): broadcasts from one
// root and from alternating roots, then an fcollect, each checked. By LL (mp.collectives.ll.*) a root hears from
// no one unless the non-roots send it a line: without that, a root two broadcasts ahead overwrote the buffer the
// late member had still to read, and the late member waited forever (found in review of the LL change). Round 0
// (one root, PE 1 late) is the one where the root runs ahead; later rounds change roots. The non-roots' waits for
// each other's lines are caught only when PEs share cores (CI): a narrow window.
MPT_CASE(late_member) {
  const int n = mpt::npes();
  const std::size_t e = 16;
  int* src = static_cast<int*>(gshmem_malloc(e * n * sizeof(int)));
  int* dest = static_cast<int*>(gshmem_malloc(e * n * sizeof(int)));
  mpt::require(src && dest, "gshmem_malloc");
  const int rounds = n > 1 ? 3 : 1;
  for (int round = 0; round < rounds; ++round) {
    if (n > 1 && mpt::me() == (round + 1) % n) std::this_thread::sleep_for(std::chrono::milliseconds(150));
    for (int it = 0; it < 8; ++it) {
      const int root = round == 0 ? 0 : (it * 7 + round) % n;  // round 0: one root; then roots change
      std::vector<int> mine(e);
      for (std::size_t i = 0; i < e; ++i) mine[i] = mpt::gen<int>(98, round * 8 + it, mpt::me(), i);
      mpt::local_write(src, mine.data(), e * sizeof(int));
      std::vector<int> poison(e, -7);
      mpt::local_write(dest, poison.data(), e * sizeof(int));
      gshmem_int_broadcast(GSHMEM_TEAM_WORLD, dest, src, e, root);
      std::vector<int> got = mpt::local_vec(dest, e), want(e);
      for (std::size_t i = 0; i < e; ++i) want[i] = mpt::gen<int>(98, round * 8 + it, root, i);
      MPT_CHECK_ARRAY("broadcast round " + std::to_string(round) + " call " + std::to_string(it) + " root " +
                          std::to_string(root),
                      got.data(), want.data(), e);
    }
    std::vector<int> mine(e);
    for (std::size_t i = 0; i < e; ++i) mine[i] = mpt::gen<int>(97, round, mpt::me(), i);
    mpt::local_write(src, mine.data(), e * sizeof(int));
    gshmem_int_fcollect(GSHMEM_TEAM_WORLD, dest, src, e);
    std::vector<int> got = mpt::local_vec(dest, e * n), want(e * n);
    for (int p = 0; p < n; ++p)
      for (std::size_t i = 0; i < e; ++i) want[p * e + i] = mpt::gen<int>(97, round, p, i);
    MPT_CHECK_ARRAY("fcollect after the broadcasts, round " + std::to_string(round), got.data(), want.data(),
                    want.size());
  }
  gshmem_barrier_all();
  gshmem_free(dest);
  gshmem_free(src);
}

// A team slot used again: an odd number of calls on a team (so its LL buffers were last used in one parity), the
// team destroyed, and a split that takes the same slot with other members and another size, then more calls, each
// checked. By LL a slot's call count and buffers must start afresh in the new team on every member.
MPT_CASE(slot_reuse) {
  const int n = mpt::npes();
  const std::size_t e = 24;
  int* src = static_cast<int*>(gshmem_malloc(e * sizeof(int)));
  int* dest = static_cast<int*>(gshmem_malloc(e * n * sizeof(int)));
  mpt::require(src && dest, "gshmem_malloc");
  for (int round = 0; round < 4; ++round) {
    // rounds alternate: every PE, then every PE but the first (one PE alone when n == 1)
    const int start = round % 2 == 1 && n > 1 ? 1 : 0, size = round % 2 == 1 && n > 1 ? n - 1 : n;
    gshmem_team_t t = GSHMEM_TEAM_INVALID;
    mpt::require(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, start, 1, size, nullptr, 0, &t) == GSHMEM_SUCCESS,
                 "gshmem_team_split_strided");
    if (t != GSHMEM_TEAM_INVALID) {
      const int calls = 3 + 2 * round;  // odd
      for (int c = 0; c < calls; ++c) {
        const std::size_t m = e - static_cast<std::size_t>(c % 3) * 5;  // 24, 19, 14 ints
        std::vector<int> mine(m);
        for (std::size_t i = 0; i < m; ++i) mine[i] = mpt::gen<int>(96, round * 100 + c, mpt::me(), i);
        mpt::local_write(src, mine.data(), m * sizeof(int));
        std::vector<int> poison(m * size, -9);
        mpt::local_write(dest, poison.data(), poison.size() * sizeof(int));
        gshmem_int_fcollect(t, dest, src, m);
        std::vector<int> got = mpt::local_vec(dest, m * size), want(m * size);
        for (int p = 0; p < size; ++p)
          for (std::size_t i = 0; i < m; ++i) want[p * m + i] = mpt::gen<int>(96, round * 100 + c, start + p, i);
        MPT_CHECK_ARRAY("fcollect on a reused slot, round " + std::to_string(round) + " call " + std::to_string(c),
                        got.data(), want.data(), want.size());
      }
      gshmem_team_destroy(t);
    }
    gshmem_barrier_all();
  }
  gshmem_free(dest);
  gshmem_free(src);
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

// fcollect and alltoall whose source lies at another address on each PE, modulo 16 too (a heap buffer at an
// offset of 0-3 ints by PE; NVSHMEM asks only dest to be symmetric): the staged path places blocks by dest, so a
// receiver finds them where the sender put them (placed by the source, 1-3 of every 4 PEs read shifted data).
MPT_CASE(src_offsets) {
  const int n = mpt::npes(), me = mpt::me();
  for (const std::size_t e : {std::size_t{1001}, std::size_t{40001}}) {
    int* base = static_cast<int*>(gshmem_malloc((e * n + 4) * sizeof(int)));
    int* dest = static_cast<int*>(gshmem_malloc(e * n * sizeof(int)));
    mpt::require(base && dest, "gshmem_malloc");
    int* src = base + me % 4;
    for (int a2a = 0; a2a < 2; ++a2a) {
      std::vector<int> mine(e * n);
      for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = mpt::gen<int>(97, static_cast<int>(e) + a2a, me, i);
      mpt::local_write(src, mine.data(), (a2a ? e * n : e) * sizeof(int));
      std::vector<int> poison(e * n, -5);
      mpt::local_write(dest, poison.data(), poison.size() * sizeof(int));
      if (a2a) gshmem_int_alltoall(GSHMEM_TEAM_WORLD, dest, src, e);
      else gshmem_int_fcollect(GSHMEM_TEAM_WORLD, dest, src, e);
      std::vector<int> got = mpt::local_vec(dest, e * n), want(e * n);
      for (int p = 0; p < n; ++p)
        for (std::size_t i = 0; i < e; ++i)
          want[p * e + i] = mpt::gen<int>(97, static_cast<int>(e) + a2a, p, a2a ? me * e + i : i);
      MPT_CHECK_ARRAY(std::string(a2a ? "alltoall" : "fcollect") + " of " + std::to_string(e) +
                          " ints from a source at int offset " + std::to_string(me % 4),
                      got.data(), want.data(), want.size());
    }
    gshmem_barrier_all();
    gshmem_free(dest);
    gshmem_free(base);
  }
}

MPT_CASE(reduce_every_team) {
  auto teams = make_teams();
  for (const auto& t : teams) {
    all_ops<int>(t, false, 40);
    all_ops<long>(t, false, 41);
    all_ops<unsigned int>(t, true, 42);
    all_ops<float>(t, false, 43);
    all_ops<double>(t, false, 44);
    all_ops<int8_t>(t, true, 45);
  }
  destroy(teams);
}

// half and bfloat16: every op of theirs (max, min, sum, prod), reduce and reducescatter, on every team.
MPT_CASE(reduce_float16) {
  auto teams = make_teams();
  for (const auto& t : teams) {
    all_ops<Half16>(t, false, 46);
    all_ops<Bf16>(t, false, 47);
  }
  const TeamShape world{"world", GSHMEM_TEAM_WORLD, 0, 1, mpt::npes()};
  run_red<Half16>(Op::Sum, false, world, 3000, true, 48);  // in place, several passes
  destroy(teams);
}
// alltoalls: strides 1 and more on either side, every team, sizes 0, 1, odd.
MPT_CASE(alltoalls) {
  auto teams = make_teams();
  for (const auto& t : teams)
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(100)}) {
      run_strided<int>(t, n, 1, 1, 70 + n);
      run_strided<int>(t, n, 2, 3, 71 + n);
      run_strided<double>(t, n, 3, 1, 72 + n);
      run_strided<unsigned char>(t, n, 1, 2, 73 + n);
    }
  destroy(teams);
}
// dest == source: sizes below, at and above one pass of the host scope (1024 elements), so several passes run. At
// 33 elements a two-shot split (blocks of 256 elements) leaves the second member's block empty; the float sum runs
// that size out of place too (the copy-engine reduce's gather of an empty block: gpu.mp.collectives.reduce_ce.*).
MPT_CASE(reduce_in_place) {
  auto teams = make_teams();
  for (const auto& t : teams)
    for (std::size_t n : {std::size_t(1), std::size_t(33), std::size_t(1024), std::size_t(2500)}) {
      run_red<float>(Op::Sum, false, t, n, false, 54 + n);
      run_red<double>(Op::Sum, false, t, n, true, 50 + n);
      run_red<int>(Op::Prod, false, t, n, true, 51 + n);
      run_red<unsigned int>(Op::Xor, false, t, n, true, 52 + n);
      run_red<int8_t>(Op::Min, false, t, n, true, 53 + n);
    }
  destroy(teams);
}

// The predefined teams that have staged buffers besides the world's (GSHMEM_TEAM_SHARED, GSHMEMX_TEAM_NODE; slots 1
// and 2), as DeepEP and NVSHMEM's examples use the node team: every kind and op at the small sizes, and calls big
// enough to go staged by default on GPU PEs (96 KiB + 3 blocks, 40000 floats: above LL's 128 KiB at 2 PEs).
MPT_CASE(predefined_teams) {
  for (gshmem_team_t h : {GSHMEM_TEAM_SHARED, GSHMEMX_TEAM_NODE}) {
    const int size = gshmem_team_n_pes(h);
    mpt::require(size >= 1, "gshmem_team_n_pes of a predefined team");
    const int start = gshmem_team_translate_pe(h, 0, GSHMEM_TEAM_WORLD);
    const int stride = size > 1 ? gshmem_team_translate_pe(h, 1, GSHMEM_TEAM_WORLD) - start : 1;
    const TeamShape t{h == GSHMEM_TEAM_SHARED ? "shared" : "node", h, start, stride, size};
    all_kinds<int>(t, 70 + h);
    all_ops<float>(t, false, 72 + h);
    const std::size_t big = (std::size_t(96) << 10) + 3;
    run<unsigned char>(Kind::Fcollect, t, big, 0, true, false, 74 + h);
    run<unsigned char>(Kind::Alltoall, t, big, 0, true, false, 76 + h);
    run<unsigned char>(Kind::Broadcast, t, 2 * big, size - 1, true, false, 78 + h);
    for (bool scatter : {false, true}) run_red<float>(Op::Sum, scatter, t, 40000, false, 80 + h);
    run_red<float>(Op::Sum, false, t, 40001, true, 82 + h);
  }
}

// 64K elements per member (reducescatter: per block).
MPT_CASE(reduce_large) {
  const TeamShape world{"world", GSHMEM_TEAM_WORLD, 0, 1, mpt::npes()};
  const std::size_t n = std::size_t(1) << 16;
  for (bool scatter : {false, true}) {
    run_red<float>(Op::Sum, scatter, world, n, false, 60);
    run_red<int>(Op::Sum, scatter, world, n, false, 61);
    run_red<double>(Op::Max, scatter, world, n + 3, false, 62);
    run_red<unsigned int>(Op::And, scatter, world, n, false, 63);
    run_red<int8_t>(Op::Prod, scatter, world, n, false, 64);
  }
  run_red<float>(Op::Sum, false, world, n + 1, true, 65);
}

// At the largest LL limit, the GPU default (GSHMEM_COLL_LL_BYTES=131072: the data of a call, each member's block
// times the team's size, up to 128 KiB; mp.collectives.ll.* on CPU PEs) every kind at the edge and one line past it,
// on every team: the calls at the edge fill the 256 KiB buffers (or to within a line), and on GPU PEs their stream
// forms run as several CTAs (GSHMEM_COLL_LL_CTA_BYTES), reduce in place included. Under other limits these are plain
// calls.
MPT_CASE(ll_edge) {
  auto teams = make_teams();
  for (const auto& t : teams) {
    const std::size_t edge = (std::size_t(128) << 10) / static_cast<std::size_t>(t.size);  // bytes a member
    for (std::size_t bytes : {edge / 8 * 8, edge / 8 * 8 + 8}) {
      run<unsigned char>(Kind::Fcollect, t, bytes, 0, true, false, 90 + bytes);
      run<unsigned char>(Kind::Alltoall, t, bytes, 0, true, false, 91 + bytes);
      run<unsigned char>(Kind::Broadcast, t, bytes, t.size - 1, true, false, 92 + bytes);
      run<unsigned char>(Kind::Broadcast, t, bytes, 0, true, true, 93 + bytes);
      run_red<double>(Op::Sum, false, t, bytes / 8, false, 94 + bytes);
      run_red<double>(Op::Sum, false, t, bytes / 8, true, 95 + bytes);
      run_red<int>(Op::Max, true, t, bytes / 4, false, 96 + bytes);
      run_red<int8_t>(Op::Min, false, t, bytes, true, 97 + bytes);
    }
  }
  destroy(teams);
}

// From 1 MiB on teams of more than 2 (GSHMEM_COLL_TWO_SHOT_BYTES automatic; at 2 PEs from 4 MiB, in place, or where
// the setting is given, as mp.collectives.two_shot.* does): reduce goes two-shot (each member reduces its block, then
// pushes it to the others), in place too; sizes that split unevenly into blocks, sources that share dest's misalignment and
// sources that do not, narrow and 16-bit floating types. reducescatter (one-shot) at the same sizes.
MPT_CASE(reduce_two_shot) {
  const TeamShape world{"world", GSHMEM_TEAM_WORLD, 0, 1, mpt::npes()};
  const std::size_t n = (std::size_t(1) << 18) + 3;  // 1 MiB + 12 bytes of float
  run_red<float>(Op::Sum, false, world, n, false, 70);
  run_red<float>(Op::Sum, false, world, n, false, 71, true);
  run_red<double>(Op::Sum, false, world, n / 2 + 5, true, 72);  // in place (always two-shot)
  run_red<int8_t>(Op::Prod, false, world, 4 * n + 1, false, 73, true);
  run_red<Half16>(Op::Sum, false, world, 2 * n, false, 74, true);
  run_red<unsigned int>(Op::Xor, true, world, n, false, 75, true);
  run_red<int64_t>(Op::Max, false, world, n / 2, false, 76);
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
  } else if (c == "reduce_not_member") {
    gshmem_team_t t = GSHMEM_TEAM_INVALID;
    gshmem_team_split_strided(GSHMEM_TEAM_WORLD, n > 1 ? 1 : 0, 1, n > 1 ? n - 1 : 1, nullptr, 0, &t);
    if (gshmem_my_pe() == 0) gshmem_int_sum_reduce(n > 1 ? t : GSHMEM_TEAM_INVALID, buf, buf + 32 * n, 1);
    else gshmem_int_sum_reduce(t, buf, buf + 32 * n, 1);
  } else if (c == "reduce_negative") {
    const long count = -2;
    gshmem_double_max_reduce(GSHMEM_TEAM_WORLD, reinterpret_cast<double*>(buf), reinterpret_cast<double*>(buf + 32),
                             static_cast<std::size_t>(count));
  } else if (c == "reduce_overlap") {
    gshmem_int_sum_reduce(GSHMEM_TEAM_WORLD, buf, buf + 1, 8);
  } else if (c == "reducescatter_in_place") {
    gshmem_uint_xor_reducescatter(GSHMEM_TEAM_WORLD, reinterpret_cast<unsigned int*>(buf),
                                  reinterpret_cast<unsigned int*>(buf), 4);
  } else if (c == "reduce_nonsymmetric_source") {
    int local[8] = {};
    gshmem_int_max_reduce(GSHMEM_TEAM_WORLD, buf, local, 8);
  } else if (c == "reduce_on_stream_cpu") {
    gshmemx_float_sum_reduce_on_stream(GSHMEM_TEAM_WORLD, reinterpret_cast<float*>(buf),
                                       reinterpret_cast<float*>(buf + 32), 1, nullptr);
  } else if (c == "alltoalls_stride") {
    gshmem_int_alltoalls(GSHMEM_TEAM_WORLD, buf, buf + 32 * n, 0, 1, 2);
  } else if (c == "alltoalls_in_place") {
    gshmem_int_alltoalls(GSHMEM_TEAM_WORLD, buf, buf, 1, 1, 2);
  } else if (c == "half_bitwise") {
    gshmemi_reduction(GSHMEMI_REDUCE_XOR, GSHMEMI_REDUCE_HALF, 0, GSHMEM_TEAM_WORLD, buf, buf + 32, 4, 0, nullptr,
                      "the test's half xor");
  } else if (c == "mismatch_nelems") {  // members disagree on the count (n >= 2: every member names both calls)
    gshmem_int_alltoall(GSHMEM_TEAM_WORLD, buf, buf + 32 * n, gshmem_my_pe() == 0 ? 2 : 3);
  } else if (c == "mismatch_root") {
    gshmem_int_broadcast(GSHMEM_TEAM_WORLD, buf, buf + 32, 4, gshmem_my_pe() == 0 ? 0 : 1);
  } else if (c == "mismatch_kind") {  // one member calls another collective
    if (gshmem_my_pe() == 0) gshmem_int_fcollect(GSHMEM_TEAM_WORLD, buf, buf + 32 * n, 2);
    else gshmem_int_alltoall(GSHMEM_TEAM_WORLD, buf, buf + 32 * n, 2);
  } else if (c == "mismatch_type") {  // same bytes, another element type
    if (gshmem_my_pe() == 0) gshmem_int_sum_reduce(GSHMEM_TEAM_WORLD, buf, buf + 32, 8);
    else gshmem_float_sum_reduce(GSHMEM_TEAM_WORLD, reinterpret_cast<float*>(buf), reinterpret_cast<float*>(buf + 32),
                                 8);
  } else if (c == "mismatch_in_place") {  // in place the members would sync once per pass: without the check, a hang
    long* big = static_cast<long*>(gshmem_malloc(5000 * sizeof(long)));
    gshmem_long_max_reduce(GSHMEM_TEAM_WORLD, big, big, gshmem_my_pe() == n - 1 ? 5000 : 10);
  } else if (c == "mismatch_in_place_one") {  // one member in place (two-shot: 3 syncs), the others not (one-shot: 2)
    long* big = static_cast<long*>(gshmem_malloc(20 * sizeof(long)));
    gshmem_long_max_reduce(GSHMEM_TEAM_WORLD, big, gshmem_my_pe() == 0 ? big : big + 10, 10);
  } else if (c == "mismatch_alltoalls") {  // strides differ
    gshmem_int_alltoalls(GSHMEM_TEAM_WORLD, buf, buf + 32 * n, 1, gshmem_my_pe() == 0 ? 1 : 2, 2);
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
