// gpu_device_api, part: teams in device code. Teams are split on the host (gshmem_team_split_strided: a copy of
// TEAM_WORLD, the even PEs, the odd PEs; gshmem_team_split_2d: rows and columns of a 2-wide grid) and used in
// kernels: gshmem_team_my_pe / n_pes / translate_pe (and the native forms) against the host's answers, and team
// barrier / sync (and barrier_all / sync_all on TEAM_WORLD) in thread, warp and block scope, each round checking
// that every member's put made before the barrier is visible after it, and (sync without quiet) that every
// member's plain stores to its own memory before the sync are what the others read from it after. Also a team held
// as a member list (gshmemx_team_init of every PE in decreasing order) through all of that, and
// gshmemx_barrier_on_stream on every team (host puts before it visible after it).
#include <cstring>
#include <string>
#include <vector>

#include "device_api.hpp"

namespace gt {
namespace {

namespace dev = gshmem::dev;
constexpr int kMaxMembers = 64;
constexpr int kRounds = 200;

// Per team: my_pe, n_pes, native my_pe, native n_pes, then translate(team, j, WORLD) for j < 64, then
// translate(WORLD, me, team), translate(team, 0, other team u) for u in the list, translate of an out-of-range PE.
struct QueryOut {
  int my_pe, n_pes, nat_my_pe, nat_n_pes;
  int to_world[kMaxMembers];
  int from_world;
  int to_team[8];
  int out_of_range;
  int invalid_my_pe, invalid_n_pes;
};

__global__ void query_kernel(gshmem::DeviceHandle h, const int* teams, int nteams, QueryOut* out) {
  const int i = static_cast<int>(threadIdx.x);
  if (i >= nteams) return;
  const int t = teams[i];
  QueryOut& o = out[i];
  o.my_pe = gshmem_team_my_pe(t);
  o.n_pes = gshmem_team_n_pes(t);
  o.nat_my_pe = dev::team_my_pe(h, t);
  o.nat_n_pes = dev::team_n_pes(h, t);
  for (int j = 0; j < kMaxMembers; ++j) o.to_world[j] = gshmem_team_translate_pe(t, j, GSHMEM_TEAM_WORLD);
  o.from_world = dev::team_translate_pe(h, GSHMEM_TEAM_WORLD, gshmem_my_pe(), t);
  for (int u = 0; u < nteams && u < 8; ++u) o.to_team[u] = gshmem_team_translate_pe(t, 0, teams[u]);
  o.out_of_range = gshmem_team_translate_pe(t, o.n_pes, GSHMEM_TEAM_WORLD);
  o.invalid_my_pe = gshmem_team_my_pe(GSHMEM_TEAM_INVALID);
  o.invalid_n_pes = dev::team_n_pes(h, GSHMEM_DEVICE_MAX_TEAMS - 1);
}

// The *_LOCAL variants (from V_SYNC_LOCAL on) store locally and read the peers after the sync (no quiet).
enum Variant {
  V_BARRIER, V_SYNC, V_BARRIER_ALL, V_SYNC_ALL, V_NATIVE_BARRIER, V_NATIVE_SYNC,
  V_SYNC_LOCAL, V_SYNC_ALL_LOCAL, V_NATIVE_SYNC_LOCAL, V_COUNT
};
const char* variant_name(int v) {
  static const char* n[] = {"barrier(team)", "quiet + team_sync(team)", "barrier_all", "quiet + sync_all",
                            "gshmem::dev::barrier(team)", "gshmem::dev::quiet + team_sync(team)",
                            "local stores + team_sync(team) + g", "local stores + sync_all + g",
                            "local stores + gshmem::dev::team_sync(team) + g"};
  return n[v];
}

__device__ __forceinline__ uint64_t stamp(uint64_t base, int r, int j) {
  return base ^ (static_cast<uint64_t>(r) << 8) ^ static_cast<uint64_t>(j);
}

template <typename C>
__device__ __forceinline__ void sync_variant(const gshmem::DeviceHandle& h, int v, int team) {
  switch (v) {
    case V_BARRIER: GT_SCOPED(C, gshmem_barrier, gshmemx_barrier_warp, gshmemx_barrier_block, team); break;
    case V_SYNC:
      gshmem_quiet();
      GT_SCOPED(C, gshmem_team_sync, gshmemx_team_sync_warp, gshmemx_team_sync_block, team);
      break;
    case V_BARRIER_ALL: GT_SCOPED(C, gshmem_barrier_all, gshmemx_barrier_all_warp, gshmemx_barrier_all_block); break;
    case V_SYNC_ALL:
      gshmem_quiet();
      GT_SCOPED(C, gshmem_sync_all, gshmemx_sync_all_warp, gshmemx_sync_all_block);
      break;
    case V_NATIVE_BARRIER: dev::barrier<C>(h, team); break;
    case V_NATIVE_SYNC:
      dev::quiet();
      dev::team_sync<C>(h, team);
      break;
    case V_SYNC_LOCAL: GT_SCOPED(C, gshmem_team_sync, gshmemx_team_sync_warp, gshmemx_team_sync_block, team); break;
    case V_SYNC_ALL_LOCAL: GT_SCOPED(C, gshmem_sync_all, gshmemx_sync_all_warp, gshmemx_sync_all_block); break;
    default: dev::team_sync<C>(h, team); break;
  }
}

template <typename C>
__global__ void barrier_kernel(gshmem::DeviceHandle h, int team, int variant, uint64_t* buf, int rounds,
                               uint64_t base, int* errors) {
  if (std::is_same<C, dev::Thread>::value && threadIdx.x != 0) return;
  const int rank = gshmem_team_my_pe(team), size = gshmem_team_n_pes(team);
  const bool pull = variant >= V_SYNC_LOCAL;
  // pull: slot j of member m holds what m wrote for j (stamp of m, tagged with j); j reads it from m with g.
  // Parity buffers: a member writes round r+2 only after the sync of round r+1, which every reader of round r
  // reaches after its reads.
  for (int r = 0; r < rounds; ++r) {
    uint64_t* slots = buf + (r & 1) * kMaxMembers;
    for (int j = C::rank(); j < size; j += C::size()) {
      if (j == rank) continue;
      if (pull) slots[j] = stamp(base, r, rank) ^ (static_cast<uint64_t>(j) << 40);
      else gshmem_uint64_p(&slots[rank], stamp(base, r, rank), gshmem_team_translate_pe(team, j, 0));
    }
    sync_variant<C>(h, variant, team);
    for (int j = C::rank(); j < size; j += C::size()) {
      if (j == rank) continue;
      const uint64_t got = pull ? gshmem_uint64_g(&slots[rank], gshmem_team_translate_pe(team, j, 0)) : slots[j];
      const uint64_t want = pull ? stamp(base, r, j) ^ (static_cast<uint64_t>(rank) << 40) : stamp(base, r, j);
      if (got != want && atomicAdd(errors, 1) < 3)
        printf("PE %d: team %d rank %d round %d (%s): slot of rank %d holds %llx, expected %llx\n", gshmem_my_pe(),
               team, rank, r, pull ? "read from the member" : "put by the member", j,
               static_cast<unsigned long long>(got), static_cast<unsigned long long>(want));
    }
  }
}

}  // namespace

void team_suite(Ctx& c) {
  // Teams: every PE calls every split (they are collective over the parent), members get a handle.
  std::vector<std::pair<std::string, gshmem_team_t>> teams;
  gshmem_team_t dup = GSHMEM_TEAM_INVALID, even = GSHMEM_TEAM_INVALID, odd = GSHMEM_TEAM_INVALID;
  gshmem_team_t xt = GSHMEM_TEAM_INVALID, yt = GSHMEM_TEAM_INVALID;
  c.expect(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, c.n, nullptr, 0, &dup) == GSHMEM_SUCCESS,
           "split_strided(world copy)");
  c.expect(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 2, (c.n + 1) / 2, nullptr, 0, &even) == GSHMEM_SUCCESS,
           "split_strided(even PEs)");
  if (c.n >= 2)
    c.expect(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 1, 2, c.n / 2, nullptr, 0, &odd) == GSHMEM_SUCCESS,
             "split_strided(odd PEs)");
  c.expect(gshmem_team_split_2d(GSHMEM_TEAM_WORLD, 2, nullptr, 0, &xt, nullptr, 0, &yt) == GSHMEM_SUCCESS,
           "split_2d(xrange 2)");
  // A team held as a member list: every PE in decreasing order, by gshmemx_team_init (PE 0's unique ID put into
  // every PE's box), so the device barriers and syncs reach members through the device list.
  gshmem_team_t rev = GSHMEM_TEAM_INVALID;
  auto* box = static_cast<uint64_t*>(gshmem_malloc(sizeof(uint64_t)));
  c.expect(box != nullptr, "gshmem_malloc(uniqueid box)");
  if (c.me == 0) {
    gshmemx_team_uniqueid_t id = 0;
    c.expect(gshmemx_team_get_uniqueid(&id) == GSHMEM_SUCCESS, "gshmemx_team_get_uniqueid");
    for (int p = 0; p < c.n; ++p) gshmem_uint64_p(box, id, p);
    gshmem_quiet();
  }
  gshmem_barrier_all();
  gshmem_team_config_t cfg = GSHMEM_TEAM_CONFIG_INITIALIZER;
  cfg.uniqueid = gshmem_uint64_g(box, c.me);
  c.expect(gshmemx_team_init(&rev, &cfg, GSHMEM_TEAM_CONFIG_MASK_UNIQUEID, c.n, c.n - 1 - c.me) == GSHMEM_SUCCESS,
           "team_init(every PE in decreasing order)");
  gshmem_barrier_all();
  gshmem_free(box);
  teams.emplace_back("world", GSHMEM_TEAM_WORLD);
  teams.emplace_back("world copy", dup);
  teams.emplace_back("even", even);
  teams.emplace_back("odd", odd);
  teams.emplace_back("2d row", xt);
  teams.emplace_back("2d column", yt);
  teams.emplace_back("reversed (member list)", rev);
  const gshmem::DeviceHandle h = gshmem::device_handle();  // after the splits: the handle sees the new teams

  // Queries, on the teams this PE belongs to.
  std::vector<int> mine;
  for (auto& t : teams)
    if (t.second != GSHMEM_TEAM_INVALID) mine.push_back(t.second);
  int* d_teams;
  QueryOut* d_out;
  GT_CUDA(cudaMalloc(&d_teams, mine.size() * sizeof(int)));
  GT_CUDA(cudaMalloc(&d_out, mine.size() * sizeof(QueryOut)));
  GT_CUDA(cudaMemcpy(d_teams, mine.data(), mine.size() * sizeof(int), cudaMemcpyHostToDevice));
  query_kernel<<<1, 32>>>(h, d_teams, static_cast<int>(mine.size()), d_out);
  GT_CUDA(cudaGetLastError());
  std::vector<QueryOut> out(mine.size());
  GT_CUDA(cudaMemcpy(out.data(), d_out, out.size() * sizeof(QueryOut), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < mine.size(); ++i) {
    const int t = mine[i];
    const QueryOut& o = out[i];
    char what[200];
    std::snprintf(what, sizeof what, "team %d: device my_pe/n_pes %d/%d (native %d/%d), host %d/%d", t, o.my_pe,
                  o.n_pes, o.nat_my_pe, o.nat_n_pes, gshmem_team_my_pe(t), gshmem_team_n_pes(t));
    c.expect(o.my_pe == gshmem_team_my_pe(t) && o.n_pes == gshmem_team_n_pes(t) && o.nat_my_pe == o.my_pe &&
             o.nat_n_pes == o.n_pes, what);
    bool ok = true;
    for (int j = 0; j < kMaxMembers; ++j) {
      const int want = j < o.n_pes ? gshmem_team_translate_pe(t, j, GSHMEM_TEAM_WORLD) : -1;
      ok = ok && o.to_world[j] == want;
    }
    ok = ok && o.from_world == gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, c.me, t) && o.out_of_range == -1;
    for (size_t u = 0; u < mine.size() && u < 8; ++u)
      ok = ok && o.to_team[u] == gshmem_team_translate_pe(t, 0, mine[u]);
    std::snprintf(what, sizeof what, "team %d: device team_translate_pe differs from the host's", t);
    c.expect(ok, what);
    c.expect(o.invalid_my_pe == -1 && o.invalid_n_pes == -1, "team queries on an invalid team must return -1");
  }
  GT_CUDA(cudaFree(d_teams));
  GT_CUDA(cudaFree(d_out));

  // Barriers: every team in the same order on every PE; members run, non-members skip.
  auto* buf = static_cast<uint64_t*>(gshmem_calloc(2 * kMaxMembers, sizeof(uint64_t)));
  int* errors;
  GT_CUDA(cudaMalloc(&errors, sizeof(int)));
  uint64_t base = mix(c.seed ^ 0x7EA);
  for (auto& t : teams) {
    for (int v = 0; v < V_COUNT; ++v) {
      const bool world_only = v == V_BARRIER_ALL || v == V_SYNC_ALL || v == V_SYNC_ALL_LOCAL;
      if (world_only && t.second != GSHMEM_TEAM_WORLD) continue;
      for (int scope = 0; scope < 3; ++scope) {
        base = mix(base);
        if (t.second == GSHMEM_TEAM_INVALID) continue;
        if (gshmem_team_n_pes(t.second) > kMaxMembers) continue;
        GT_CUDA(cudaMemset(errors, 0, sizeof(int)));
        if (scope == 0) barrier_kernel<dev::Thread><<<1, 32>>>(h, t.second, v, buf, kRounds, base, errors);
        else if (scope == 1) barrier_kernel<dev::Warp><<<1, 32>>>(h, t.second, v, buf, kRounds, base, errors);
        else barrier_kernel<dev::Block><<<1, 128>>>(h, t.second, v, buf, kRounds, base, errors);
        GT_CUDA(cudaGetLastError());
        int e = 0;
        GT_CUDA(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
        char what[200];
        std::snprintf(what, sizeof what, "team '%s' (%d PEs) %s in %s scope: %d stale slots in %d rounds",
                      t.first.c_str(), gshmem_team_n_pes(t.second), variant_name(v), scope_name(scope), e, kRounds);
        c.expect(e == 0, what);
      }
    }
    gshmem_barrier_all();
  }
  // The stream barrier (gshmemx_barrier_on_stream's kernel): each member puts a fresh value into its own slot at
  // every member from the host, the barrier runs on a stream, then every member's value must be in this PE's buffer.
  cudaStream_t st;
  GT_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  // Every PE meets the others between two teams: the slots are shared by all teams, and a PE that went on to the
  // next team (whose members it writes) while another still checked this one (a team it is not in, or a team of
  // one, has no barrier to hold it back) would overwrite slots still being checked. Session 32's x4 run failed so.
  for (size_t ti = 0; ti < teams.size(); gshmem_barrier_all(), ++ti) {
    const auto& t = teams[ti];
    if (t.second == GSHMEM_TEAM_INVALID || gshmem_team_n_pes(t.second) > kMaxMembers) continue;
    const int n = gshmem_team_n_pes(t.second), me = gshmem_team_my_pe(t.second);
    int stale = 0;
    char first[160] = "";  // the first stale slot, so that a failure says what was there instead
    uint64_t v = mix(base ^ (0x5EA0ull + ti));  // the same on every member, whatever teams this PE skipped
    for (int round = 0; round < 20; ++round) {
      const uint64_t prev = v;
      v = mix(v);
      for (int j = 0; j < n; ++j)
        gshmem_uint64_p(buf + me, v + static_cast<uint64_t>(me),
                        gshmem_team_translate_pe(t.second, j, GSHMEM_TEAM_WORLD));
      gshmem_quiet();
      c.expect(gshmemx_barrier_on_stream(t.second, reinterpret_cast<gshmem_stream_t>(st)) == GSHMEM_SUCCESS,
               "gshmemx_barrier_on_stream");
      GT_CUDA(cudaStreamSynchronize(st));
      std::vector<uint64_t> got(static_cast<size_t>(n));
      GT_CUDA(cudaMemcpy(got.data(), buf, got.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
      for (int j = 0; j < n; ++j) {
        const uint64_t want = v + static_cast<uint64_t>(j), was = got[static_cast<size_t>(j)];
        if (was == want) continue;
        if (!stale++)
          std::snprintf(first, sizeof first, "; first: round %d, rank %d (world PE %d) held %s", round, j,
                        gshmem_team_translate_pe(t.second, j, GSHMEM_TEAM_WORLD),
                        round > 0 && was == prev + static_cast<uint64_t>(j) ? "the previous round's value"
                        : was == mix(v) + static_cast<uint64_t>(j)          ? "the next round's value"
                                                                            : "another value");
      }
      c.expect(gshmemx_barrier_on_stream(t.second, reinterpret_cast<gshmem_stream_t>(st)) == GSHMEM_SUCCESS,
               "gshmemx_barrier_on_stream");  // nobody overwrites a slot before every member has read it
      GT_CUDA(cudaStreamSynchronize(st));
    }
    char what[400];
    std::snprintf(what, sizeof what, "team '%s' (%d PEs) barrier_on_stream: %d stale slots in 20 rounds%s",
                  t.first.c_str(), n, stale, first);
    c.expect(stale == 0, what);
  }
  GT_CUDA(cudaStreamDestroy(st));
  GT_CUDA(cudaFree(errors));
  gshmem_free(buf);
  for (gshmem_team_t t : {dup, even, odd, xt, yt, rev})
    if (t != GSHMEM_TEAM_INVALID) gshmem_team_destroy(t);
  gshmem_barrier_all();
}

}  // namespace gt
