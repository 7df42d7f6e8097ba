// gpu_device_api_ext, part: gshmemx_barrier_warpgroup (one warpgroup of 128 threads per PE calls it; warpgroup 0 and
// 1 of a 256-thread block in turn, so both named barriers are used) on GSHMEM_TEAM_WORLD and on a split team, 200
// rounds each: every member's stamp, put before the barrier, is there after it. gshmemx_mc_ptr is NULL on the
// device and the host (gshmem uses no NVLink multicast).
#include "device_api_ext.hpp"

namespace gt {
namespace {

// slots holds two rounds' stamps (parity buffers): a member that leaves barrier k first may already stamp round
// k + 1 while a slower one still checks round k. The stamps are put by thread 77 of the warpgroup, not by the
// thread that fences and signals inside the barrier, so the barrier's ordering of the group's writes is tested.
__global__ void warpgroup_barrier_kernel(int* slots, gshmem_team_t team, int round, int wg, int* bad) {
  if (static_cast<int>(threadIdx.x) / 128 != wg) return;
  const int r = static_cast<int>(threadIdx.x) % 128;
  const int n = gshmem_team_n_pes(team), me = gshmem_team_my_pe(team);
  int* buf = slots + (round & 1) * n;
  if (r == 77)
    for (int i = 0; i < n; ++i) gshmem_int_p(&buf[me], round, gshmem_team_translate_pe(team, i, GSHMEM_TEAM_WORLD));
  gshmemx_barrier_warpgroup(team);
  for (int i = r; i < n; i += 128)
    if (*reinterpret_cast<volatile int*>(&buf[i]) != round) atomicAdd(bad, 1);
}

__global__ void mc_ptr_kernel(const int* p, int* bad) {
  if (gshmemx_mc_ptr(GSHMEM_TEAM_WORLD, p) != nullptr) atomicAdd(bad, 1);
}

}  // namespace

void ext_team_suite(Ctx& c) {
  int* slots = static_cast<int*>(gshmem_calloc(2 * static_cast<size_t>(c.n), sizeof(int)));
  int* bad = nullptr;
  GT_CUDA(cudaMalloc(&bad, sizeof(int)));
  gshmem_team_t copy = GSHMEM_TEAM_INVALID;
  c.expect(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, c.n, nullptr, 0, &copy) == GSHMEM_SUCCESS,
           "team_split_strided (copy of world)");
  const int base = 1 + static_cast<int>(c.case_rng(0xB6).operator()() % 1000000);
  for (gshmem_team_t team : {static_cast<gshmem_team_t>(GSHMEM_TEAM_WORLD), copy}) {
    if (team == GSHMEM_TEAM_INVALID) continue;
    GT_CUDA(cudaMemset(slots, 0, 2 * static_cast<size_t>(c.n) * sizeof(int)));
    GT_CUDA(cudaMemset(bad, 0, sizeof(int)));
    GT_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();
    for (int round = 0; round < 200; ++round) {
      warpgroup_barrier_kernel<<<1, 256>>>(slots, team, base + round, round % 2, bad);
      GT_CUDA(cudaGetLastError());
    }
    GT_CUDA(cudaDeviceSynchronize());
    int h = -1;
    GT_CUDA(cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost));
    char what[128];
    std::snprintf(what, sizeof what, "gshmemx_barrier_warpgroup (team %d): %d stamps missing after the barrier",
                  static_cast<int>(team), h);
    c.expect(h == 0, what);
    gshmem_barrier_all();
  }
  GT_CUDA(cudaMemset(bad, 0, sizeof(int)));
  mc_ptr_kernel<<<1, 32>>>(slots, bad);
  GT_CUDA(cudaGetLastError());
  int h = -1;
  GT_CUDA(cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost));
  c.expect(h == 0, "device gshmemx_mc_ptr is NULL");
  c.expect(gshmemx_mc_ptr(GSHMEM_TEAM_WORLD, slots) == nullptr, "host gshmemx_mc_ptr is NULL");
  gshmem_barrier_all();
  if (copy != GSHMEM_TEAM_INVALID) gshmem_team_destroy(copy);
  GT_CUDA(cudaFree(bad));
  gshmem_free(slots);
}

}  // namespace gt
