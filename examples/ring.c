/* ring: seed 000's ring exchange through gshmem. Each PE puts 8 ints to the next PE (PE n-1 to PE 0) and checks
 * what it received from the previous one. Runs on GPUs (one per PE) where present, else on CPU PEs.
 *   gshmemrun -n 2 build/bin/ring      (or: mpirun -np 2 build/bin/ring) */
#include <gshmem/gshmem.h>
#include <stdio.h>
#include <stdlib.h>

#define N 8

int main(void) {
  if (gshmem_init() != GSHMEM_SUCCESS) {
    fprintf(stderr, "ring: gshmem_init failed: %s\n", gshmemx_last_error());
    return 1;
  }
  int me = gshmem_my_pe();
  int npes = gshmem_n_pes();
  int dev = -1, ndev = 0;
  gshmemx_query_device(&dev, &ndev);
  if (dev >= 0)
    printf("[Rank %d] Set GPU %d (of %d GPUs)\n", me, dev, ndev);
  else
    printf("[Rank %d] Set CPU %d (of %d CPU PEs)\n", me, me, npes);
  printf("[PE %d] gshmem initialized. Total PEs: %d\n", me, npes);
  fflush(stdout);

  int *recv = (int *)gshmem_malloc(N * sizeof(int));
  int send[N], got[N];
  for (int i = 0; i < N; ++i) send[i] = me * 100 + i;
  for (int i = 0; i < N; ++i) got[i] = -1;
  gshmem_int_put(recv, got, N, me); /* poison our own buffer first */
  gshmem_barrier_all();

  int next = (me + 1) % npes;
  int prev = (me + npes - 1) % npes;
  printf("[PE %d] Sending: ", me);
  for (int i = 0; i < N; ++i) printf("%d ", send[i]);
  printf("\n[PE %d] Putting data to PE %d\n", me, next);
  fflush(stdout);
  gshmem_int_put(recv, send, N, next);
  gshmem_quiet();
  gshmem_barrier_all();

  gshmem_int_get(got, recv, N, me); /* read our own copy (device memory on GPU PEs) */
  printf("[PE %d] Received: ", me);
  for (int i = 0; i < N; ++i) printf("%d ", got[i]);
  printf("\n");
  int ok = 1;
  for (int i = 0; i < N; ++i) ok &= got[i] == prev * 100 + i;
  if (ok)
    printf("[PE %d] PASS - Got expected value %d from PE %d\n", me, prev * 100, prev);
  else
    printf("[PE %d] FAIL - expected %d..%d from PE %d\n", me, prev * 100, prev * 100 + N - 1, prev);
  fflush(stdout);

  gshmem_free(recv);
  gshmem_finalize();
  return ok ? 0 : 1;
}
