// Host-side collectives only (runs on CPU PEs too, so CI without a GPU exercises them): nvshmem_<T>_<op>_reduce
// (in place and not) and _reducescatter, nvshmem_<T>_broadcast / _fcollect / _alltoall and the byte forms
// broadcastmem / fcollectmem / alltoallmem, on NVSHMEM_TEAM_WORLD, on the team of my parity (the even and the odd
// PEs split with nvshmem_team_split_strided run their collectives at the same time) and on NVSHMEMX_TEAM_NODE, with
// 0, 1, 13 and 64 elements per PE. Symmetric memory is written and read only through nvshmem_char_p / _g (GPU PEs
// under NVSHMEM: device memory). Checks: compat_coll.h.
//
// How programs in the wild call these (read for this test, none of their code copied), each a check below:
//   - in-place broadcast, dest == source, root given by the caller: ParRes/Kernels Cxx11/prk_nvshmem.h
//     (nvshmem_broadcastmem(NVSHMEM_TEAM_WORLD, buf, buf, bytes, root)); PyTorch
//     torch/csrc/distributed/c10d/symm_mem/nvshmem_extension.cu (the same on a stream, root < team size).
//   - alltoall with buffers allocated for the call, block size = bytes / world size, read right after the call
//     with only nvshmem_quiet (no barrier), then both freed: ppl-ai/pplx-kernels csrc/core/distributed.cpp
//     (DistributedNVSHMEM::allToAllImpl).
//   - in-place nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, h, h, 16) of a histogram after nvshmem_barrier_all, only
//     PE 0 reading the result (a histogram course example found by nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, ...)).
//   - a one-element sum reduce that decides a loop on every PE (BFS frontier count: reduce, read, barrier_all,
//     stop at 0), the loop count therefore identical on all PEs (a user BFS program, same search).
//   - min / max / sum of one value per PE as "stats" and "is_same" helpers: ParRes/Kernels Cxx11/prk_nvshmem.h.
//     (It passes addresses of stack variables, which NVSHMEM does not allow: not reproduced; gshmem ends the job
//     with a message naming the call for a dest that is not symmetric.)
//   - sizes from the team size and calls with nelems 0: NVSHMEM perftest/host/coll/*_on_stream.cpp,
//     perftest/device/coll/alltoall_latency.cu (count = size / (npes * sizeof)).
//   - the source reused at once after the call returns (OpenSHMEM: "source may be reused"), results alternating
//     between two dest buffers with no barrier between rounds; a reduction's dest fed straight into fcollect.
#include "compat_coll.h"

#include <algorithm>

namespace {

const coll::IO kIO{coll::write_pg, coll::read_pg};

template <typename... R, typename F>
void each(F f) {
  (f(R{}), ...);
}

uint64_t g_test = 0;  // the test number: every PE runs the same sequence, so members agree on it

void run_team(const coll::Buffers& buf, const coll::Team& t, uint64_t seed) {
  char what[160];
  for (size_t n : {size_t(0), size_t(1), size_t(13), size_t(64)}) {
    each<R_int_sum, R_int_prod, R_int_max, R_long_min, R_longlong_sum, R_uint_and, R_uint_or, R_ulonglong_xor,
         R_uint64_xor, R_uchar_or, R_int8_and, R_int16_sum, R_short_prod, R_schar_min, R_char_max, R_ushort_sum,
         R_size_max, R_int32_xor, R_int64_sum, R_uint32_prod, R_float_sum, R_float_max, R_float_prod, R_double_sum,
         R_double_min, R_double_prod>([&](auto r) {
      using R = decltype(r);
      using T = typename R::type;
      auto call = [&](T* d, const T* s, size_t k) { return R::reduce(t.team, d, s, k); };
      std::snprintf(what, sizeof what, "nvshmem_%s_reduce", R::name);
      coll::check_reduce<T>(kIO, buf, t, R::op, n, false, seed, ++g_test, what, call);
      std::snprintf(what, sizeof what, "nvshmem_%s_reduce (dest == source)", R::name);
      coll::check_reduce<T>(kIO, buf, t, R::op, n, true, seed, ++g_test, what, call);
      if (!coll::checks_host_elements(n)) return;
      std::snprintf(what, sizeof what, "nvshmem_%s_reducescatter", R::name);
      coll::check_reducescatter<T>(kIO, buf, t, R::op, n, seed, ++g_test, what,
                                   [&](T* d, const T* s, size_t k) { return R::reducescatter(t.team, d, s, k); });
    });
    each<D_int, D_double, D_uint8, D_int64, D_float, D_short, D_char, D_int16, D_mem>([&](auto dd) {
      using D = decltype(dd);
      using T = typename D::type;
      if (!coll::checks_host_elements(n)) return;
      auto bcast = [&](T* d, const T* s, size_t k, int root) { return D::broadcast(t.team, d, s, k, root); };
      for (int root : {0, t.n - 1}) {
        std::snprintf(what, sizeof what, "nvshmem_%s_broadcast (root %d)", D::name, root);
        coll::check_broadcast<T>(kIO, buf, t, root, n, false, seed, ++g_test, what, bcast);
        std::snprintf(what, sizeof what, "nvshmem_%s_broadcast (root %d, dest == source)", D::name, root);
        coll::check_broadcast<T>(kIO, buf, t, root, n, true, seed, ++g_test, what, bcast);
      }
      std::snprintf(what, sizeof what, "nvshmem_%s_fcollect", D::name);
      coll::check_fcollect<T>(kIO, buf, t, n, seed, ++g_test, what,
                              [&](T* d, const T* s, size_t k) { return D::fcollect(t.team, d, s, k); });
      std::snprintf(what, sizeof what, "nvshmem_%s_alltoall", D::name);
      coll::check_alltoall<T>(kIO, buf, t, n, seed, ++g_test, what,
                              [&](T* d, const T* s, size_t k) { return D::alltoall(t.team, d, s, k); });
    });
  }
}

// pplx-kernels: buffers made for the call, block = bytes / npes, nvshmem_quiet then read, then freed.
void pattern_alltoall_fresh_buffers(uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const size_t size = 24;  // bytes per PE block
  const size_t total = size * npes;
  const uint64_t test = ++g_test;
  unsigned char* src = static_cast<unsigned char*>(nvshmem_malloc(total));
  unsigned char* dst = static_cast<unsigned char*>(nvshmem_malloc(total));
  const std::vector<unsigned char> mine = coll::contribution<unsigned char>(seed, test, me, total, coll::Op::sum);
  kIO.write(src, mine.data(), total);
  // nvshmem_malloc ended with a barrier on every PE, and the dest is fresh: no barrier here, as in pplx
  const int rc = nvshmem_alltoallmem(NVSHMEM_TEAM_WORLD, dst, src, size);
  nvshmem_quiet();
  std::vector<unsigned char> got(total);
  kIO.read(got.data(), dst, total);
  if (rc != 0) compat::fail("pplx pattern: nvshmem_alltoallmem returned %d", rc);
  for (int p = 0; p < npes; ++p) {
    const std::vector<unsigned char> theirs = coll::contribution<unsigned char>(seed, test, p, total, coll::Op::sum);
    if (std::memcmp(&got[p * size], &theirs[me * size], size) != 0)
      compat::fail("pplx pattern: block %d of nvshmem_alltoallmem's dest is not PE %d's block %d", p, p, me);
  }
  nvshmem_free(dst);
  nvshmem_free(src);
}

// A histogram summed in place over the world, after barrier_all; only PE 0 reads it.
void pattern_histogram(const coll::Buffers& buf, uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const uint64_t test = ++g_test;
  const size_t buckets = 16;
  int* h = reinterpret_cast<int*>(buf.a);
  std::vector<int> mine(buckets);
  for (size_t i = 0; i < buckets; ++i) mine[i] = static_cast<int>(compat::mix(seed, test, me * 100 + i) % 1000);
  kIO.write(h, mine.data(), buckets * sizeof(int));
  nvshmem_barrier_all();
  const int rc = nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, h, h, buckets);
  if (rc != 0) compat::fail("histogram pattern: nvshmem_int_sum_reduce returned %d", rc);
  if (me == 0) {
    std::vector<int> got(buckets);
    kIO.read(got.data(), h, buckets * sizeof(int));
    for (size_t i = 0; i < buckets; ++i) {
      int want = 0;
      for (int p = 0; p < npes; ++p) want += static_cast<int>(compat::mix(seed, test, p * 100 + i) % 1000);
      if (got[i] != want) compat::fail("histogram pattern: bucket %zu is %d, expected %d", i, got[i], want);
    }
  }
  nvshmem_barrier_all();
}

// BFS: a one-element sum decides whether every PE goes on; the loop count must be the same everywhere.
void pattern_reduce_decides_loop(const coll::Buffers& buf, uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const uint64_t test = ++g_test;
  int* local = reinterpret_cast<int*>(buf.a);
  int* global = reinterpret_cast<int*>(buf.b);
  auto work = [&](int pe) { return static_cast<int>(compat::mix(seed, test, pe) % 6); };  // rounds with work
  int rounds_want = 0;
  for (int p = 0; p < npes; ++p) rounds_want = std::max(rounds_want, work(p));
  int round = 0;
  for (;; ++round) {
    const int count = round < work(me) ? 1 + round : 0;
    kIO.write(local, &count, sizeof count);
    nvshmem_barrier_all();
    if (nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, global, local, 1) != 0)
      compat::fail("loop pattern: nvshmem_int_sum_reduce failed");
    int total = -1;
    kIO.read(&total, global, sizeof total);
    nvshmem_barrier_all();
    int want = 0;
    for (int p = 0; p < npes; ++p) want += round < work(p) ? 1 + round : 0;
    if (total != want) compat::fail("loop pattern: round %d sum %d, expected %d", round, total, want);
    if (total == 0 || round > 10) break;
  }
  if (round != rounds_want) compat::fail("loop pattern: stopped after %d rounds, expected %d", round, rounds_want);
}

// The source rewritten as soon as the call returns; dests alternate, no barrier between rounds. Then a reduction's
// result fed straight into fcollect.
void pattern_reuse_and_chain(const coll::Buffers& buf, const coll::Team& t, uint64_t seed) {
  const size_t n = 5;
  int* src = reinterpret_cast<int*>(buf.a);
  int* dst[2] = {reinterpret_cast<int*>(buf.b), reinterpret_cast<int*>(buf.b + buf.bytes / 2)};
  const uint64_t base = g_test;
  g_test += 8;
  nvshmem_barrier(t.team);
  for (int round = 0; round < 4; ++round) {
    const std::vector<int> mine = coll::contribution<int>(seed, base + round, t.world[t.me], n, coll::Op::sum);
    kIO.write(src, mine.data(), n * sizeof(int));  // reuses the source the previous round just read
    int* d = dst[round % 2];
    const int rc = round % 2 ? nvshmem_int_fcollect(t.team, d, src, n) : nvshmem_int_sum_reduce(t.team, d, src, n);
    if (rc != 0) compat::fail("reuse pattern on %s: round %d returned %d", t.name, round, rc);
    std::vector<int> want;
    if (round % 2) {
      for (int j = 0; j < t.n; ++j) {
        const std::vector<int> v = coll::contribution<int>(seed, base + round, t.world[j], n, coll::Op::sum);
        want.insert(want.end(), v.begin(), v.end());
      }
    } else {
      want.assign(n, 0);
      for (int j = 0; j < t.n; ++j) {
        const std::vector<int> v = coll::contribution<int>(seed, base + round, t.world[j], n, coll::Op::sum);
        for (size_t i = 0; i < n; ++i) want[i] = coll::combine(coll::Op::sum, want[i], v[i]);
      }
    }
    std::vector<int> got(want.size());
    kIO.read(got.data(), d, got.size() * sizeof(int));
    if (got != want) compat::fail("reuse pattern on %s: round %d (%s) wrong", t.name, round, round % 2 ? "fcollect" : "reduce");
  }
  // chain: max-reduce into dst[0], then fcollect of dst[0] into dst[1], no barrier between
  nvshmem_barrier(t.team);
  const std::vector<int> mine = coll::contribution<int>(seed, base + 5, t.world[t.me], n, coll::Op::max);
  kIO.write(src, mine.data(), n * sizeof(int));
  nvshmem_barrier(t.team);
  int rc = nvshmem_int_max_reduce(t.team, dst[0], src, n);
  rc |= nvshmem_int_fcollect(t.team, dst[1], dst[0], n);
  if (rc != 0) compat::fail("chain pattern on %s: a call failed", t.name);
  std::vector<int> red = coll::contribution<int>(seed, base + 5, t.world[0], n, coll::Op::max);
  for (int j = 1; j < t.n; ++j) {
    const std::vector<int> v = coll::contribution<int>(seed, base + 5, t.world[j], n, coll::Op::max);
    for (size_t i = 0; i < n; ++i) red[i] = coll::combine(coll::Op::max, red[i], v[i]);
  }
  std::vector<int> got(n * t.n);
  kIO.read(got.data(), dst[1], got.size() * sizeof(int));
  for (int j = 0; j < t.n; ++j)
    if (std::memcmp(&got[j * n], red.data(), n * sizeof(int)) != 0)
      compat::fail("chain pattern on %s: block %d of the fcollect of the max-reduce is wrong", t.name, j);
  nvshmem_barrier(t.team);
}

}  // namespace

int main(int argc, char** argv) {
  compat::Options opt;
  opt.gpu = false;
  const int mype = compat::init(&argc, &argv, "host_collectives", opt);
  const int npes = nvshmem_n_pes();
  const uint64_t seed = compat::shared_seed();
  if (nvshmemx_init_status() == NVSHMEM_STATUS_LIMITED_MPG) {
    // NVSHMEM offers no collectives to PEs sharing a GPU (limited MPG); gshmem has no such mode
    if (mype == 0) std::printf("[PE 0] host_collectives: skipped (NVSHMEM_STATUS_LIMITED_MPG)\n");
    return compat::finish();
  }
  const coll::Buffers buf = coll::alloc_buffers(64 * 1024);
  nvshmem_team_t parity[2];
  coll::Team teams[3];
  if (!coll::make_teams(npes, mype, parity, teams)) return compat::finish();
  for (const coll::Team& t : teams) run_team(buf, t, seed);
  nvshmem_barrier_all();
  pattern_alltoall_fresh_buffers(seed);
  pattern_histogram(buf, seed);
  pattern_reduce_decides_loop(buf, seed);
  for (const coll::Team& t : teams) pattern_reuse_and_chain(buf, t, seed);
  nvshmem_barrier_all();
  for (nvshmem_team_t t : parity)
    if (t != NVSHMEM_TEAM_INVALID) nvshmem_team_destroy(t);
  nvshmem_free(buf.a);
  return compat::finish();
}
