// Kernels compiled by NVRTC (run-time compilation: CuPy's RawModule, cuda.core's Program, Numba), not by nvcc:
// nvrtc_check compiles this file to PTX with gshmem's headers, no GPU needed. It calls a spread of the device API
// under NVSHMEM's names and gshmem's own (RMA in every scope, signals, atomics, waits, barriers, team queries,
// collectives including half precision) so that a header change NVRTC cannot take fails here, in CI.
#include <nvshmem.h>
#include <nvshmemx.h>

extern "C" __global__ void rtc_rma(int* dst, const int* src, size_t n, uint64_t* sig, int peer) {
  nvshmem_int_put_nbi(dst, src, n, peer);
  nvshmemx_int_put_nbi_warp(dst, src, n, peer);
  nvshmemx_int_get_block(dst, src, n, peer);
  nvshmem_int_p(dst, nvshmem_int_g(src, peer) + 1, peer);
  nvshmem_putmem_signal_nbi(dst, src, n * sizeof(int), sig, 1, NVSHMEM_SIGNAL_ADD, peer);
  nvshmem_fence();
  nvshmem_quiet();
  nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, 1);
  void* p = nvshmem_ptr(dst, peer);
  if (p) static_cast<int*>(p)[0] = nvshmem_my_pe() + nvshmem_n_pes();
}

extern "C" __global__ void rtc_amo(long long* word, uint64_t* u, int peer) {
  long long old = nvshmem_longlong_atomic_fetch_add(word, 2, peer);
  nvshmem_longlong_atomic_compare_swap(word, old, old + 1, peer);
  nvshmem_uint64_atomic_inc(u, peer);
  nvshmem_uint64_wait_until(u, NVSHMEM_CMP_NE, 0);
}

extern "C" __global__ void rtc_coll(float* fd, const float* fs, __half* hd, const __half* hs, int* id, const int* is,
                                    size_t n) {
  const int team = NVSHMEM_TEAM_WORLD;
  nvshmemx_float_sum_reduce_block(team, fd, fs, n);
  nvshmemx_half_max_reduce_block(team, hd, hs, n);
  nvshmemx_int_fcollect_block(team, id, is, n);
  nvshmemx_int_broadcast_block(team, id, is, n, 0);
  nvshmemx_barrier_all_block();
  nvshmemx_sync_all_block();
  if (threadIdx.x == 0) id[0] = nvshmem_team_my_pe(team) + nvshmem_team_n_pes(team);
}

extern "C" __global__ void rtc_native(char* d, const char* s, size_t n, int peer) {
  gshmemx_putmem_nbi_block(d, s, n, peer);
  gshmem_quiet();
  gshmem_barrier_all();
}
