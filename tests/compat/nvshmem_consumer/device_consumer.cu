// An NVSHMEM device program, unchanged, built with -rdc through the nvshmem:: targets (compiled, not run here).
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>

__global__ void ring(int* dst, int v) {
  const int pe = nvshmem_my_pe();
  nvshmem_int_p(dst, v, (pe + 1) % nvshmem_n_pes());
  nvshmem_quiet();
}

int main() {
  nvshmem_init();
  int* dst = static_cast<int*>(nvshmem_malloc(sizeof(int)));
  ring<<<1, 1>>>(dst, 42);
  nvshmemx_barrier_all_on_stream(0);
  cudaDeviceSynchronize();
  int got = 0;
  cudaMemcpy(&got, dst, sizeof got, cudaMemcpyDeviceToHost);
  nvshmem_free(dst);
  nvshmem_finalize();
  std::printf("device_consumer: %s\n", got == 42 ? "ok" : "FAIL");
  return got == 42 ? 0 : 1;
}
