// Teams: nvshmem_team_split_strided into the even PEs, the odd PEs and all PEs, team_my_pe / team_n_pes /
// team_translate_pe checked against the arithmetic, a kernel that uses the team in device code (team_my_pe,
// translate to world, put to the next team member, nvshmem_barrier(team)), nvshmemx_barrier_on_stream(team),
// nvshmem_team_sync, then destroy.
#include "compat_util.h"

__global__ void team_ring(nvshmem_team_t team, int* slot, int value, int* out) {
  const int me = nvshmem_team_my_pe(team);
  const int n = nvshmem_team_n_pes(team);
  const int next_world = nvshmem_team_translate_pe(team, (me + 1) % n, NVSHMEM_TEAM_WORLD);
  out[0] = me;
  out[1] = n;
  out[2] = next_world;
  nvshmem_int_p(slot, value, next_world);
  nvshmem_barrier(team);  // quiet + barrier: the previous member's put has landed here
  out[3] = *slot;
  nvshmem_team_sync(team);
}

static int* g_slot = nullptr;  // one symmetric int, allocated in main (collective)

static void check_team(nvshmem_team_t team, int start, int stride, int size, const char* what, uint64_t seed,
                       int round) {
  const int mype = nvshmem_my_pe();
  const bool member = mype >= start && (mype - start) % stride == 0 && (mype - start) / stride < size;
  const int want_rank = member ? (mype - start) / stride : -1;
  if (!member) {
    if (team != NVSHMEM_TEAM_INVALID) compat::fail("%s: not a member, yet the handle is valid", what);
    return;
  }
  if (team == NVSHMEM_TEAM_INVALID) {
    compat::fail("%s: member, yet the handle is NVSHMEM_TEAM_INVALID", what);
    return;
  }
  if (nvshmem_team_my_pe(team) != want_rank || nvshmem_team_n_pes(team) != size)
    compat::fail("%s: team_my_pe %d n_pes %d, expected %d %d", what, nvshmem_team_my_pe(team),
                 nvshmem_team_n_pes(team), want_rank, size);
  for (int r = 0; r < size; ++r) {
    if (nvshmem_team_translate_pe(team, r, NVSHMEM_TEAM_WORLD) != start + r * stride)
      compat::fail("%s: translate(%d -> world) = %d, expected %d", what, r,
                   nvshmem_team_translate_pe(team, r, NVSHMEM_TEAM_WORLD), start + r * stride);
    if (nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, start + r * stride, team) != r)
      compat::fail("%s: translate(world %d -> team) wrong", what, start + r * stride);
  }
  // device side: a ring inside the team
  const int value = static_cast<int>(compat::mix(seed, round, want_rank) & 0x7fffffff);
  const int prev_rank = (want_rank + size - 1) % size;
  const int want_recv = static_cast<int>(compat::mix(seed, round, prev_rank) & 0x7fffffff);
  int* slot = g_slot;
  int* out;
  COMPAT_CUDA(cudaMalloc(&out, 4 * sizeof(int)));
  COMPAT_CUDA(cudaMemset(out, 0xFF, 4 * sizeof(int)));
  team_ring<<<1, 1>>>(team, slot, value, out);
  COMPAT_CUDA(cudaGetLastError());
  COMPAT_CUDA(cudaDeviceSynchronize());
  int h[4];
  COMPAT_CUDA(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  COMPAT_CUDA(cudaFree(out));
  if (h[0] != want_rank || h[1] != size || h[2] != start + ((want_rank + 1) % size) * stride)
    compat::fail("%s: in a kernel team_my_pe %d n_pes %d next %d", what, h[0], h[1], h[2]);
  if (h[3] != want_recv) compat::fail("%s: kernel ring got %d, expected %d", what, h[3], want_recv);
  cudaStream_t s;
  COMPAT_CUDA(cudaStreamCreate(&s));
  nvshmemx_barrier_on_stream(team, s);
  COMPAT_CUDA(cudaStreamSynchronize(s));
  COMPAT_CUDA(cudaStreamDestroy(s));
  nvshmem_team_sync(team);
}

int main(int argc, char** argv) {
  const int mype = compat::init(&argc, &argv, "teams");
  const int npes = nvshmem_n_pes();
  const uint64_t seed = compat::shared_seed();
  g_slot = static_cast<int*>(nvshmem_malloc(sizeof(int)));
  if (nvshmem_team_my_pe(NVSHMEM_TEAM_WORLD) != mype || nvshmem_team_n_pes(NVSHMEM_TEAM_WORLD) != npes)
    compat::fail("NVSHMEM_TEAM_WORLD: team_my_pe / team_n_pes disagree with my_pe / n_pes");
  if (nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE) != npes || nvshmem_team_n_pes(NVSHMEM_TEAM_SHARED) != npes)
    compat::fail("one node: NVSHMEMX_TEAM_NODE and NVSHMEM_TEAM_SHARED should hold all %d PEs", npes);

  struct Split { int start, stride, size; const char* what; };
  const Split splits[] = {
      {0, 2, (npes + 1) / 2, "even PEs"},
      {npes > 1 ? 1 : 0, npes > 2 ? 2 : 1, npes > 2 ? npes / 2 : 1, "odd PEs"},
      {0, 1, npes, "all PEs"},
  };
  int round = 0;
  for (const Split& sp : splits) {
    nvshmem_team_t team = NVSHMEM_TEAM_INVALID;
    const int rc = nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, sp.start, sp.stride, sp.size, nullptr, 0, &team);
    if (rc != 0) {
      compat::fail("%s: nvshmem_team_split_strided(%d, %d, %d) returned %d", sp.what, sp.start, sp.stride, sp.size,
                   rc);
      continue;
    }
    check_team(team, sp.start, sp.stride, sp.size, sp.what, seed, round);
    nvshmem_barrier_all();
    if (team != NVSHMEM_TEAM_INVALID) nvshmem_team_destroy(team);
    ++round;
  }
  nvshmem_barrier_all();
  nvshmem_free(g_slot);
  return compat::finish();
}
