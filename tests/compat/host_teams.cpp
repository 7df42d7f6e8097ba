// Host-side team API and collectives on the teams programs in the wild make (runs on CPU PEs too). Every team is
// checked the same way: NVSHMEM_TEAM_INVALID exactly on the PEs outside it (team_my_pe / team_n_pes -1 there),
// n_pes, my_pe and translate_pe both ways against membership computed here, then an int sum reduce, a double
// broadcast from the last member (team-relative root), an int64 fcollect and nelems 0, all on the team. Checks:
// compat_coll.h (fresh data, poisoned dest and guard tail, exact host reference).
//
// How programs in the wild make and use teams (read for this test, none of their code copied), each a case below:
//   partition   every PE calls nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, ...) once naming the team it belongs
//               to, so different PEs pass different triplets: deepseek-ai/DeepEP csrc/kernels/runtime.cu
//               (internode::init: start rank % NUM_MAX_NVL_PEERS, stride NUM_MAX_NVL_PEERS, size
//               num_ranks / NUM_MAX_NVL_PEERS, a file-scope nvshmem_team_config_t never set, mask 0, then
//               nvshmem_barrier_all; destroyed before nvshmem_finalize), FlagCX's NVSHMEM adaptor (intra-node team
//               start node * local_size stride 1, inter-node team start local_rank stride local_size, config
//               NULL), a CUTLASS overlap communicator (start my_pe % stride, a stack config never set, mask 0).
//   duplicates  pytorch/pytorch torch/csrc/distributed/c10d/symm_mem/nvshmem_team_manager.hpp: each rank splits
//               WORLD into its own process group's strided team (global_ranks[0], stride, size; NULL config)
//               again and again, a pool of duplicate teams of one group used side by side.
//   test teams  NVIDIA NVSHMEM's team test setup (init_test_teams, found by code search as a copy of its test
//               utilities): NVSHMEM_TEAM_WORLD, NVSHMEM_TEAM_SHARED and NVSHMEMX_TEAM_NODE used as collective
//               teams; first the three teams NVSHMEM's tests make by nvshmemx_team_init whose members are not
//               evenly spaced (gaps growing, gaps shrinking, and from the last PE down: decreasing order); even
//               PEs with size max(1, npes/2) (3 PEs: PE 2 is left out), odd PEs, every third PE;
//               nvshmem_team_split_2d with NULL configs and xrange 1, npes, npes/2, npes/3; a 2d split of the
//               even team made on every PE, so PEs outside it pass NVSHMEM_TEAM_INVALID as the parent (NVSHMEM
//               returns non-zero and INVALID teams there); all teams alive at once, destroyed at the end,
//               INVALID ones included. OpenSHMEM's spec examples / Sandia-OpenSHMEM test/spec-example/
//               shmem_team_translate.c: team_my_pe and translate_pe on a PE outside the team give -1.
//   sync        nvshmem_team_sync / nvshmem_sync / nvshmem_sync_all after p + quiet, and nvshmem_barrier after p
//               alone (barrier implies quiet), in rounds with no other synchronisation (NVSHMEM perftest/host/coll
//               sync_on_stream.cpp, barrier_on_stream.cpp: the team forms back to back on NVSHMEM_TEAM_WORLD).
//   fresh       a collective on a split team straight after nvshmem_align / nvshmem_malloc, the source written
//               just before, no barrier (DeepEP: nvshmem_align(alignment, size) for its buffers; NVIDIA/nvshmem
//               examples/hello.cpp: nvshmem_malloc right after init).
//   uniqueid    a team of each parity group made by its members alone (nvshmemx_team_get_uniqueid on the group's
//               first PE, nvshmemx_team_init on each with its index): the process-group teams of a PyTorch-style
//               NVSHMEM extension (global rank lists, NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID), found by code search.
//   left live   a split team never destroyed and an allocation never freed when nvshmem_finalize runs (hello.cpp).
//
// COMPAT_STREAM_ON_CPU=<form> instead runs one stream-ordered call with stream 0 and nothing else: on CPU PEs
// gshmem must end the job with a message saying why (CTest compat.host_teams.stream_on_cpu.*; a GPU PE would
// run it, and then the program checks what it returned).
#include <algorithm>

#include "compat_coll.h"

namespace {

const coll::IO kIO{coll::write_pg, coll::read_pg};
uint64_t g_test = 0;  // every PE runs the same sequence of checks

// The world PEs a team should hold, in team order; empty: this PE expects no team.
using Members = std::vector<int>;

Members strided(int start, int stride, int size) {
  Members m;
  for (int i = 0; i < size; ++i) m.push_back(start + i * stride);
  return m;
}

bool contains(const Members& m, int pe) {
  return std::find(m.begin(), m.end(), pe) != m.end();
}

// Checks what this PE sees of team t against `want` (the team this PE should be in, or empty for none), then runs
// the collectives on it. Every member of one team must call this at the same point.
void check_team(const coll::Buffers& buf, nvshmem_team_t t, const Members& want, const char* name, uint64_t seed) {
  const int me = nvshmem_my_pe();
  uint64_t test = g_test;  // the same test numbers on every PE, members or not
  g_test += 6;
  if (want.empty() || !contains(want, me)) {
    if (t != NVSHMEM_TEAM_INVALID) compat::fail("%s: PE %d is outside the team but got handle %d", name, me, (int)t);
    if (nvshmem_team_my_pe(t) != -1 || nvshmem_team_n_pes(t) != -1)
      compat::fail("%s: team_my_pe / team_n_pes of the INVALID team are %d / %d, expected -1", name,
                   nvshmem_team_my_pe(t), nvshmem_team_n_pes(t));
    if (nvshmem_team_translate_pe(t, -1, NVSHMEM_TEAM_WORLD) != -1 ||
        nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, me, t) != -1)
      compat::fail("%s: translate_pe with the INVALID team is not -1", name);
    return;
  }
  if (t == NVSHMEM_TEAM_INVALID) {
    compat::fail("%s: PE %d is a member but got NVSHMEM_TEAM_INVALID", name, me);
    return;
  }
  const int n = static_cast<int>(want.size());
  const int idx = static_cast<int>(std::find(want.begin(), want.end(), me) - want.begin());
  bool ok = nvshmem_team_n_pes(t) == n && nvshmem_team_my_pe(t) == idx;
  if (!ok)
    compat::fail("%s: n_pes %d my_pe %d, expected %d %d", name, nvshmem_team_n_pes(t), nvshmem_team_my_pe(t), n, idx);
  for (int j = 0; ok && j < n; ++j) {
    if (nvshmem_team_translate_pe(t, j, NVSHMEM_TEAM_WORLD) != want[j] ||
        nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, want[j], t) != j) {
      compat::fail("%s: member %d translates to world PE %d (and back to %d), expected %d", name, j,
                   nvshmem_team_translate_pe(t, j, NVSHMEM_TEAM_WORLD),
                   nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, want[j], t), want[j]);
      ok = false;
    }
  }
  // A world PE outside the team translates to -1.
  for (int p = 0; ok && p < nvshmem_n_pes(); ++p)
    if (!contains(want, p) && nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, p, t) != -1)
      compat::fail("%s: world PE %d is outside the team but translates to %d", name, p,
                   nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, p, t));
  // The collectives. Membership this PE saw may be wrong while every member still agrees on the team (each ran the
  // checks above), so they run regardless; a wrong team shows as wrong data or a timeout.
  coll::Team d;
  d.team = t;
  d.name = name;
  d.n = n;
  d.me = idx;
  d.world = want;
  char what[160];
  for (size_t k : {size_t(0), size_t(7)}) {
    std::snprintf(what, sizeof what, "nvshmem_int_sum_reduce");
    coll::check_reduce<int>(kIO, buf, d, coll::Op::sum, k, false, seed, ++test, what,
                            [&](int* dst, const int* src, size_t m) { return nvshmem_int_sum_reduce(t, dst, src, m); });
    std::snprintf(what, sizeof what, "nvshmem_double_broadcast (root %d)", n - 1);
    coll::check_broadcast<double>(kIO, buf, d, n - 1, k, false, seed, ++test, what,
                                  [&](double* dst, const double* src, size_t m, int root) {
                                    return nvshmem_double_broadcast(t, dst, src, m, root);
                                  });
    std::snprintf(what, sizeof what, "nvshmem_int64_fcollect");
    coll::check_fcollect<int64_t>(kIO, buf, d, k, seed, ++test, what, [&](int64_t* dst, const int64_t* src, size_t m) {
      return nvshmem_int64_fcollect(t, dst, src, m);
    });
  }
}

// DeepEP / FlagCX / CUTLASS: each PE splits WORLD once into the team it belongs to, for every way of cutting the
// world into groups of g consecutive PEs (the "node" teams) and into the PEs with the same index in those groups
// (the "rail" teams). The teams one call makes work at the same time.
void partition(const coll::Buffers& buf, uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  for (int g = 1; g <= npes; ++g) {
    if (npes % g) continue;
    nvshmem_team_config_t never_set;  // DeepEP's: declared, never written, mask 0
    std::memset(&never_set, 0x5C, sizeof never_set);
    nvshmem_team_t rail = NVSHMEM_TEAM_INVALID, node = NVSHMEM_TEAM_INVALID;
    int rc = nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, me % g, g, npes / g, &never_set, 0, &rail);
    if (rc != 0)
      compat::fail("partition g=%d: split_strided(WORLD, %d, %d, %d) (rail) returned %d", g, me % g, g, npes / g, rc);
    rc = nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, (me / g) * g, 1, g, nullptr, 0, &node);
    if (rc != 0)
      compat::fail("partition g=%d: split_strided(WORLD, %d, 1, %d) (node) returned %d", g, (me / g) * g, g, rc);
    nvshmem_barrier_all();
    char name[64];
    std::snprintf(name, sizeof name, "rail team %d of %d (groups of %d)", me % g, g, g);
    check_team(buf, rail, strided(me % g, g, npes / g), name, seed);
    std::snprintf(name, sizeof name, "node team %d of %d (groups of %d)", me / g, npes / g, g);
    check_team(buf, node, strided((me / g) * g, 1, g), name, seed);
    nvshmem_team_destroy(node);
    nvshmem_team_destroy(rail);
  }
}

// PyTorch's team manager: a pool of duplicate teams of my parity group, made one split at a time, then used in an
// order other than the one they were made in.
void duplicates(const coll::Buffers& buf, uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const int start = me % 2, size = (npes - start + 1) / 2;
  const int kDup = 5;
  nvshmem_team_t pool[kDup];
  for (int i = 0; i < kDup; ++i) {
    pool[i] = NVSHMEM_TEAM_INVALID;
    if (nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, start, 2, size, nullptr, 0, &pool[i]) != 0)
      compat::fail("duplicates: split %d of group (%d, 2, %d) failed", i, start, size);
  }
  for (int i = 0; i < kDup; ++i)
    for (int j = 0; j < i; ++j)
      if (pool[i] == pool[j] && pool[i] != NVSHMEM_TEAM_INVALID)
        compat::fail("duplicates: splits %d and %d returned the same handle %d", j, i, (int)pool[i]);
  for (int i = kDup - 1; i >= 0; --i) {
    char name[64];
    std::snprintf(name, sizeof name, "duplicate %d of the %s group", i, start ? "odd" : "even");
    check_team(buf, pool[i], strided(start, 2, size), name, seed);
  }
  for (int i = 0; i < kDup; ++i) nvshmem_team_destroy(pool[i]);
}

// Teams from a unique ID (NVSHMEM 3.4): a PyTorch-style extension makes the team of a process group from its global
// ranks, nvshmemx_team_get_uniqueid on the group's first rank and nvshmemx_team_init on every member with its index
// (the id sent by the program itself; here through the heap). My parity group, each group its own id, the config
// from NVSHMEM_TEAM_CONFIG_INITIALIZER with the id set and NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID.
void from_uniqueid(const coll::Buffers& buf, uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const int start = me % 2, size = (npes - start + 1) / 2;
  uint64_t* box = static_cast<uint64_t*>(nvshmem_malloc(sizeof(uint64_t)));
  if (box == nullptr) compat::fail("from_uniqueid: nvshmem_malloc failed");
  if (me == start) {
    nvshmemx_team_uniqueid_t id = 0;
    if (nvshmemx_team_get_uniqueid(&id) != 0) compat::fail("from_uniqueid: nvshmemx_team_get_uniqueid failed");
    nvshmem_uint64_p(box, id, me);
    nvshmem_quiet();
  }
  nvshmem_barrier_all();
  nvshmem_team_config_t cfg = NVSHMEM_TEAM_CONFIG_INITIALIZER;
  cfg.uniqueid = nvshmem_uint64_g(box, start);
  nvshmem_team_t t = NVSHMEM_TEAM_INVALID;
  if (nvshmemx_team_init(&t, &cfg, NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID, size, (me - start) / 2) != 0)
    compat::fail("from_uniqueid: nvshmemx_team_init of group (%d, 2, %d) failed", start, size);
  check_team(buf, t, strided(start, 2, size), start ? "team_init of the odd group" : "team_init of the even group",
             seed);
  nvshmem_team_destroy(t);
  nvshmem_barrier_all();
  nvshmem_free(box);
}

// NVSHMEM's test teams, all alive at once.
void test_teams(const coll::Buffers& buf, uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  struct Made {
    nvshmem_team_t t;
    Members want;
    std::string name;
  };
  std::vector<Made> made;
  auto split = [&](int start, int stride, int size, const char* name) {
    nvshmem_team_t t = NVSHMEM_TEAM_INVALID;
    const int rc = nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, start, stride, size, nullptr, 0, &t);
    if (rc != 0) compat::fail("%s: split_strided(WORLD, %d, %d, %d) returned %d", name, start, stride, size, rc);
    const Members m = strided(start, stride, size);
    made.push_back({t, contains(m, me) ? m : Members{}, name});
    return t;
  };
  // OpenSHMEM's 2d split of `parent` (members `pm`, in team order): x-teams of xrange consecutive members, y-teams
  // of the members with the same index in their x-team.
  auto split_2d = [&](nvshmem_team_t parent, const Members& pm, int xrange, const std::string& name) {
    nvshmem_team_t x = 12345, y = 12345;
    const int rc = nvshmem_team_split_2d(parent, xrange, nullptr, 0, &x, nullptr, 0, &y);
    if (parent == NVSHMEM_TEAM_INVALID) {
      if (rc == 0) compat::fail("%s: split_2d of NVSHMEM_TEAM_INVALID returned 0", name.c_str());
      made.push_back({x, {}, name + " x (parent INVALID)"});
      made.push_back({y, {}, name + " y (parent INVALID)"});
      return;
    }
    if (rc != 0) compat::fail("%s: split_2d(xrange %d) returned %d", name.c_str(), xrange, rc);
    const int r = static_cast<int>(std::find(pm.begin(), pm.end(), me) - pm.begin());
    const int xr = std::min(xrange, static_cast<int>(pm.size()));
    Members xm, ym;
    for (int j = (r / xr) * xr; j < std::min((r / xr + 1) * xr, static_cast<int>(pm.size())); ++j) xm.push_back(pm[j]);
    for (int j = r % xr; j < static_cast<int>(pm.size()); j += xr) ym.push_back(pm[j]);
    made.push_back({x, xm, name + " x (xrange " + std::to_string(xrange) + ")"});
    made.push_back({y, ym, name + " y (xrange " + std::to_string(xrange) + ")"});
  };
  // NVSHMEM's test teams begin with three sets made by nvshmemx_team_init whose members are not evenly spaced:
  // gaps growing from 0 by one a member (0, 1, 3, 6, ...), gaps shrinking from npes/2 + 1, and from the last PE down
  // with growing gaps (npes-1, npes-2, npes-4, ...: decreasing world order). The first member gets the id and puts
  // it into the others' symmetric box (one box a set, so the three can be made one after the other at once).
  auto gapped = [&](int first, int gap, int step, bool down) {
    Members m;
    for (int p = first; p >= 0 && p < npes; p += down ? -gap : gap) {
      m.push_back(p);
      gap += step;
      if (gap <= 0) break;
    }
    return m;
  };
  uint64_t* ids = static_cast<uint64_t*>(nvshmem_malloc(3 * sizeof(uint64_t)));
  if (ids == nullptr) compat::fail("test_teams: nvshmem_malloc of the id boxes failed");
  const Members uneven[3] = {gapped(0, 0, 1, false), gapped(0, npes / 2 + 1, -1, false),
                             gapped(npes - 1, 0, 1, true)};
  const char* uneven_names[3] = {"team_init, gaps growing", "team_init, gaps shrinking",
                                 "team_init, from the last PE down"};
  for (int k = 0; k < 3; ++k)
    if (uneven[k][0] == me) {
      nvshmemx_team_uniqueid_t id = 0;
      if (nvshmemx_team_get_uniqueid(&id) != 0) compat::fail("%s: nvshmemx_team_get_uniqueid failed", uneven_names[k]);
      for (int p : uneven[k]) nvshmem_uint64_p(ids + k, id, p);
      nvshmem_quiet();
    }
  nvshmem_barrier_all();
  for (int k = 0; k < 3; ++k) {
    const auto at = std::find(uneven[k].begin(), uneven[k].end(), me);
    nvshmem_team_t t = NVSHMEM_TEAM_INVALID;
    if (at != uneven[k].end()) {
      nvshmem_team_config_t cfg = NVSHMEM_TEAM_CONFIG_INITIALIZER;
      cfg.uniqueid = nvshmem_uint64_g(ids + k, me);
      if (nvshmemx_team_init(&t, &cfg, NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID, static_cast<int>(uneven[k].size()),
                             static_cast<int>(at - uneven[k].begin())) != 0)
        compat::fail("%s: nvshmemx_team_init failed", uneven_names[k]);
    }
    made.push_back({t, at != uneven[k].end() ? uneven[k] : Members{}, uneven_names[k]});
  }
  const nvshmem_team_t even = split(0, 2, std::max(1, npes / 2), "even PEs, size max(1, npes/2)");
  if (npes > 1) split(1, 2, npes / 2, "odd PEs");
  split(0, 3, std::max(1, npes / 3), "every third PE");
  Members world;
  for (int p = 0; p < npes; ++p) world.push_back(p);
  for (int xr : {1, npes, std::max(1, npes / 2), std::max(1, npes / 3)}) split_2d(NVSHMEM_TEAM_WORLD, world, xr, "2d");
  // the even team split again on every PE: the others pass NVSHMEM_TEAM_INVALID
  const Members even_m = strided(0, 2, std::max(1, npes / 2));
  const int even_n = nvshmem_team_n_pes(even);
  split_2d(even, even_m, std::max(1, even_n / 2), "2d of the even team");
  nvshmem_barrier_all();
  // every team in the order made; a PE outside one skips the collectives (check_team returns at once)
  for (const Made& m : made) check_team(buf, m.t, m.want, m.name.c_str(), seed);
  nvshmem_barrier_all();
  for (const Made& m : made) nvshmem_team_destroy(m.t);  // INVALID ones too, as NVSHMEM's test does
  nvshmem_free(ids);
  // the predefined teams as collective teams (membership as the library reports it, checked for consistency)
  for (nvshmem_team_t t : {NVSHMEM_TEAM_WORLD, NVSHMEM_TEAM_SHARED, NVSHMEMX_TEAM_NODE}) {
    const char* name = t == NVSHMEM_TEAM_WORLD    ? "NVSHMEM_TEAM_WORLD"
                       : t == NVSHMEM_TEAM_SHARED ? "NVSHMEM_TEAM_SHARED"
                                                  : "NVSHMEMX_TEAM_NODE";
    const int n = nvshmem_team_n_pes(t), my = nvshmem_team_my_pe(t);
    if (n < 1 || my < 0 || my >= n || nvshmem_team_translate_pe(t, my, NVSHMEM_TEAM_WORLD) != me) {
      compat::fail("%s: n_pes %d my_pe %d (translates to %d, I am %d)", name, n, my,
                   nvshmem_team_translate_pe(t, my, NVSHMEM_TEAM_WORLD), me);
      continue;
    }
    Members m;
    for (int j = 0; j < n; ++j) m.push_back(nvshmem_team_translate_pe(t, j, NVSHMEM_TEAM_WORLD));
    check_team(buf, t, m, name, seed);
  }
}

// Rounds of: each member writes its round value into the next member's slot, then sync / barrier, then reads its
// own. team_sync needs the quiet before it; barrier does not.
void sync_rounds(nvshmem_team_t t, const char* name, int* box, uint64_t seed) {
  const int n = nvshmem_team_n_pes(t), my = nvshmem_team_my_pe(t), me = nvshmem_my_pe();
  if (n < 1 || my < 0) return;
  const int next = nvshmem_team_translate_pe(t, (my + 1) % n, NVSHMEM_TEAM_WORLD);
  const int prev = nvshmem_team_translate_pe(t, (my + n - 1) % n, NVSHMEM_TEAM_WORLD);
  const uint64_t base = g_test;
  g_test += 8;
  for (int round = 0; round < 8; ++round) {
    const int v = static_cast<int>(compat::mix(seed, base + round, me));
    int rc = 0;
    const char* how;
    nvshmem_int_p(&box[round % 2], v, next);  // alternate slots: a fast PE's next round cannot hit this one
    switch (round % 4) {
      case 0:
        nvshmem_quiet();
        rc = nvshmem_team_sync(t);
        how = "nvshmem_quiet + nvshmem_team_sync";
        break;
      case 1:
        nvshmem_quiet();
        rc = nvshmem_sync(t);
        how = "nvshmem_quiet + nvshmem_sync";
        break;
      case 2:
        rc = nvshmem_barrier(t);
        how = "nvshmem_barrier (no quiet)";
        break;
      default:
        if (t == NVSHMEM_TEAM_WORLD) {
          nvshmem_quiet();
          nvshmem_sync_all();
          how = "nvshmem_quiet + nvshmem_sync_all";
        } else {
          rc = nvshmem_barrier(t);
          how = "nvshmem_barrier (no quiet)";
        }
    }
    if (rc != 0) compat::fail("%s on %s returned %d", how, name, rc);
    const int got = nvshmem_int_g(&box[round % 2], me);
    const int want = static_cast<int>(compat::mix(seed, base + round, prev));
    if (got != want)
      compat::fail("%s on %s, round %d: the value from PE %d is %d, expected %d", how, name, round, prev, got, want);
    // the slot written next round (round + 2) is read only after the next sync, which follows this read
  }
  nvshmem_barrier(t);
}

// DeepEP's allocation, then collectives on its rail team straight away: the source written just before the call,
// the dest fresh from the allocator, no barrier in between (only the guard past the result is poisoned).
void fresh(uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const int g = npes % 2 == 0 ? 2 : 1;
  nvshmem_team_t rail = NVSHMEM_TEAM_INVALID;
  nvshmem_team_config_t never_set;
  std::memset(&never_set, 0x33, sizeof never_set);
  if (nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, me % g, g, npes / g, &never_set, 0, &rail) != 0 ||
      rail == NVSHMEM_TEAM_INVALID) {
    compat::fail("fresh: the rail split failed");
    return;
  }
  const Members m = strided(me % g, g, npes / g);
  const int n = static_cast<int>(m.size()), idx = nvshmem_team_my_pe(rail);
  const size_t k = 9;
  for (int round = 0; round < 3; ++round) {
    const uint64_t test = ++g_test;
    auto* src = static_cast<int64_t*>(nvshmem_align(128, k * sizeof(int64_t)));
    auto* red = static_cast<int64_t*>(nvshmem_malloc((k + coll::kGuard) * sizeof(int64_t)));
    auto* all = static_cast<int64_t*>(nvshmem_align(256, (k * n + coll::kGuard) * sizeof(int64_t)));
    if (!src || !red || !all || reinterpret_cast<uintptr_t>(src) % 128 || reinterpret_cast<uintptr_t>(all) % 256) {
      compat::fail("fresh: nvshmem_align / nvshmem_malloc gave %p %p %p", (void*)src, (void*)red, (void*)all);
      return;
    }
    const std::vector<int64_t> mine = coll::contribution<int64_t>(seed, test, me, k, coll::Op::sum);
    coll::poison(kIO, red + k, coll::kGuard * sizeof(int64_t));
    coll::poison(kIO, all + k * n, coll::kGuard * sizeof(int64_t));
    kIO.write(src, mine.data(), k * sizeof(int64_t));
    int rc = nvshmem_int64_sum_reduce(rail, red, src, k);
    rc |= nvshmem_int64_fcollect(rail, all, src, k);
    if (rc != 0) compat::fail("fresh round %d: a collective returned non-zero", round);
    std::vector<int64_t> want_red(k, 0), want_all;
    for (int j = 0; j < n; ++j) {
      const std::vector<int64_t> v = coll::contribution<int64_t>(seed, test, m[j], k, coll::Op::sum);
      for (size_t i = 0; i < k; ++i) want_red[i] = coll::combine(coll::Op::sum, want_red[i], v[i]);
      want_all.insert(want_all.end(), v.begin(), v.end());
    }
    coll::Team d;
    d.team = rail;
    d.name = "the rail team, buffers fresh from nvshmem_align / nvshmem_malloc";
    d.n = n;
    d.me = idx;
    d.world = m;
    coll::expect(kIO, red, want_red, "nvshmem_int64_sum_reduce", d, k);
    coll::expect(kIO, all, want_all, "nvshmem_int64_fcollect", d, k * n);
    nvshmem_barrier_all();  // everyone has read before the buffers go back
    nvshmem_free(all);
    nvshmem_free(red);
    nvshmem_free(src);
  }
  nvshmem_team_destroy(rail);
}

// One stream-ordered call with stream 0 (CUDA's legacy default stream).
int stream_on_cpu(const std::string& form) {
  int* a = static_cast<int*>(nvshmem_malloc(8 * sizeof(int)));
  int rc = 0;
  std::printf("[PE %d] host_teams: calling %s with stream 0\n", nvshmem_my_pe(), form.c_str());
  std::fflush(stdout);
  if (form == "barrier_all") {
    nvshmemx_barrier_all_on_stream(0);
  } else if (form == "sync_all") {
    nvshmemx_sync_all_on_stream(0);
  } else if (form == "barrier") {
    rc = nvshmemx_barrier_on_stream(NVSHMEM_TEAM_WORLD, 0);
  } else if (form == "team_sync") {
    rc = nvshmemx_team_sync_on_stream(NVSHMEM_TEAM_WORLD, 0);
  } else if (form == "reduce") {
    rc = nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, a + 4, a, 4, 0);
  } else if (form == "broadcast") {
    rc = nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, a + 4, a, 16, 0, 0);
  } else {
    std::fprintf(stderr,
                 "host_teams: COMPAT_STREAM_ON_CPU=%s is not one of barrier_all, sync_all, barrier, "
                 "team_sync, reduce, broadcast\n",
                 form.c_str());
    std::exit(2);
  }
  // Only a GPU PE gets here with a result to trust; the CTest on CPU PEs expects the job to have ended above.
  std::printf("[PE %d] host_teams: %s with stream 0 returned %d\n", nvshmem_my_pe(), form.c_str(), rc);
  std::fflush(stdout);
  nvshmem_barrier_all();
  nvshmem_free(a);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  compat::Options opt;
  opt.gpu = false;
  const int mype = compat::init(&argc, &argv, "host_teams", opt);
  const std::string stream_form = compat::env_or("COMPAT_STREAM_ON_CPU", "");
  if (!stream_form.empty()) {
    if (stream_on_cpu(stream_form) != 0) compat::fail("%s with stream 0 returned non-zero", stream_form.c_str());
    return compat::finish();
  }
  const uint64_t seed = compat::shared_seed();
  if (nvshmemx_init_status() == NVSHMEM_STATUS_LIMITED_MPG) {
    // NVSHMEM refuses team splits and collectives to PEs sharing a GPU (limited MPG); gshmem has no such mode
    if (mype == 0) std::printf("[PE 0] host_teams: skipped (NVSHMEM_STATUS_LIMITED_MPG)\n");
    return compat::finish();
  }
  const coll::Buffers buf = coll::alloc_buffers(4096);
  partition(buf, seed);
  duplicates(buf, seed);
  from_uniqueid(buf, seed);
  test_teams(buf, seed);
  int* box = static_cast<int*>(nvshmem_malloc(2 * sizeof(int)));
  nvshmem_barrier_all();
  sync_rounds(NVSHMEM_TEAM_WORLD, "NVSHMEM_TEAM_WORLD", box, seed);
  nvshmem_team_t parity[2];
  coll::Team teams[3];
  if (coll::make_teams(nvshmem_n_pes(), mype, parity, teams)) {
    nvshmem_barrier_all();
    sync_rounds(teams[1].team, teams[1].name, box, seed);  // the even and the odd team at once
    nvshmem_barrier_all();
    sync_rounds(NVSHMEMX_TEAM_NODE, "NVSHMEMX_TEAM_NODE", box, seed);
  }
  nvshmem_barrier_all();
  for (nvshmem_team_t t : parity) nvshmem_team_destroy(t);
  nvshmem_free(box);
  fresh(seed);
  // Left for nvshmem_finalize (in compat::finish): a split team never destroyed and an allocation never freed
  // (NVIDIA/nvshmem examples/hello.cpp ends with its nvshmem_malloc'd byte live; NVSHMEM's finalize destroys teams
  // left alive).
  nvshmem_team_t left = NVSHMEM_TEAM_INVALID;
  if (nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, nvshmem_n_pes(), nullptr, 0, &left) != 0 ||
      nvshmem_team_n_pes(left) != nvshmem_n_pes())
    compat::fail("a world-sized split before finalize failed");
  return compat::finish();
}
