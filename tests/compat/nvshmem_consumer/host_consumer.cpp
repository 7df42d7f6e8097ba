// An NVSHMEM host program, unchanged: one PE without a launcher puts to itself and reads back.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <random>

int main() {
  nvshmem_init();
  long* buf = static_cast<long*>(nvshmem_malloc(16 * sizeof(long)));
  std::mt19937_64 rng{std::random_device{}()};
  const int me = nvshmem_my_pe();
  long want[16];
  for (int i = 0; i < 16; ++i) {
    want[i] = static_cast<long>(rng());
    nvshmem_long_p(&buf[i], want[i], me);
  }
  nvshmem_quiet();
  nvshmem_barrier_all();
  int bad = 0;
  for (int i = 0; i < 16; ++i) bad += nvshmem_long_g(&buf[i], me) != want[i];
  nvshmem_free(buf);
  nvshmem_finalize();
  std::printf("host_consumer: %s\n", bad ? "FAIL" : "ok");
  return bad ? 1 : 0;
}
