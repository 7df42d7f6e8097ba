// Device code of gpu_cumodule, built alone into a cubin (nvcc -cubin, no -rdc) that cumodule.cu loads with
// cuModuleLoad / cuLibraryLoadFromFile: no host code of this file runs, so only gshmemx_cumodule_init /
// gshmemx_culibrary_init can fill its copy of gshmem's device state.
#include <nvshmem.h>

// Each PE writes tag + its PE number into its right neighbour's dst[0], and its rank in `team` into out[0].
extern "C" __global__ void cumodule_ring(int* dst, int tag, int team, int* out) {
  const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
  nvshmem_int_p(dst, tag + me, (me + 1) % n);
  nvshmem_quiet();
  out[0] = nvshmem_team_my_pe(team);
}
