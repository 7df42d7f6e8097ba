// The program picks its GPU before gshmem_init (the opposite of local rank order); gshmem must keep that choice:
// the PE reports it, the symmetric heap lives on it, and a ring exchange through it is exact.
#include <cuda_runtime.h>
#include <gshmem/gshmem.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));  \
      return 1;                                                                                 \
    }                                                                                           \
  } while (0)

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return 77;
  const char* lr = std::getenv("GSHMEM_LOCAL_RANK");
  const char* ls = std::getenv("GSHMEM_LOCAL_SIZE");
  if (!lr || !ls) {
    std::fprintf(stderr, "chosen_device: run me under gshmemrun\n");
    return 1;
  }
  const int local = std::atoi(lr), local_size = std::atoi(ls);
  const int chosen = (local_size - 1 - local) % count;  // reversed: differs from gshmem's default when 2+ GPUs
  CK(cudaSetDevice(chosen));
  CK(cudaFree(nullptr));
  if (gshmem_init() != GSHMEM_SUCCESS) return 1;
  const int me = gshmem_my_pe(), n = gshmem_n_pes();
  int dev = -2;
  gshmemx_query_device(&dev, nullptr);
  int failures = 0;
  if (dev != chosen) {
    std::fprintf(stderr, "[PE %d] FAIL: program chose GPU %d but gshmem uses GPU %d\n", me, chosen, dev);
    ++failures;
  }
  const size_t N = 4096;
  auto* buf = static_cast<unsigned*>(gshmem_malloc(N * sizeof(unsigned)));
  cudaPointerAttributes attr{};
  CK(cudaPointerGetAttributes(&attr, buf));
  if (attr.device != chosen) {
    std::fprintf(stderr, "[PE %d] FAIL: symmetric heap is on GPU %d, not the chosen GPU %d\n", me, attr.device, chosen);
    ++failures;
  }
  std::mt19937 rng{std::random_device{}()};
  std::vector<unsigned> mine(N), poison(N, 0xDEADBEEFu), got(N);
  for (auto& v : mine) v = rng();
  gshmem_putmem(buf, poison.data(), N * sizeof(unsigned), me);
  gshmem_barrier_all();
  gshmem_putmem(buf, mine.data(), N * sizeof(unsigned), (me + 1) % n);
  gshmem_barrier_all();
  gshmem_getmem(got.data(), buf, N * sizeof(unsigned), me);
  // What the previous PE sent: ask it for its source through a second exchange.
  auto* src = static_cast<unsigned*>(gshmem_malloc(N * sizeof(unsigned)));
  gshmem_putmem(src, mine.data(), N * sizeof(unsigned), me);
  gshmem_barrier_all();
  std::vector<unsigned> expect(N);
  gshmem_getmem(expect.data(), src, N * sizeof(unsigned), (me + n - 1) % n);
  for (size_t i = 0; i < N; ++i)
    if (got[i] != expect[i]) {
      std::fprintf(stderr, "[PE %d] FAIL: element %zu is %u, PE %d sent %u\n", me, i, got[i], (me + n - 1) % n,
                   expect[i]);
      ++failures;
      break;
    }
  gshmem_free(src);
  gshmem_free(buf);
  gshmem_finalize();
  if (!failures) std::printf("[PE %d] chosen GPU %d kept: PASS\n", me, chosen);
  return failures ? 1 : 0;
}
