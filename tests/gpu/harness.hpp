// Host side shared by the device-API correctness programs (device_api_*.cu, ordering.cu, collective_launch.cu):
// GPU/PE start with exit 77 where no GPU is usable, a seed chosen on PE 0 and shared with every PE (printed, and
// settable with GSHMEM_TEST_SEED to replay a run), deterministic data from (seed, pe, case), failure reporting.
#pragma once
#include <cuda_runtime.h>
#include <gshmem/gshmem.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define GT_CUDA(x)                                                                                             \
  do {                                                                                                         \
    cudaError_t e_ = (x);                                                                                      \
    if (e_ != cudaSuccess) {                                                                                   \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_),        \
                   cudaGetErrorString(e_));                                                                    \
      std::exit(1);                                                                                            \
    }                                                                                                          \
  } while (0)

namespace gt {

inline uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Ctx {
  int me = 0, n = 1;
  uint64_t seed = 0;
  long failures = 0;
  long checks = 0;
  const char* program = "";
  // Quick mode (GSHMEM_TEST_QUICK=1, used under compute-sanitizer): sample() keeps one type in `every`, the same
  // ones on every PE, so that the slowed-down runs still cover every operation and scope.
  bool quick = false;
  unsigned long sampled = 0;
  bool sample(unsigned every = 6) { return !quick || sampled++ % every == 0; }

  // Bytes [0, len) of PE pe's source data for case c (every PE can compute every PE's data).
  std::vector<unsigned char> data(int pe, uint64_t c, size_t len) const {
    std::vector<unsigned char> v(len);
    for (size_t i = 0; i < len; i += 8) {
      const uint64_t w = mix(seed ^ mix(static_cast<uint64_t>(pe) << 40 ^ c) ^ (i / 8));
      for (size_t b = 0; b < 8 && i + b < len; ++b) v[i + b] = static_cast<unsigned char>(w >> (8 * b));
    }
    return v;
  }
  // Case parameters shared by all PEs.
  std::mt19937_64 case_rng(uint64_t c) const { return std::mt19937_64(mix(seed ^ 0xC0FFEEull ^ mix(c))); }

  void fail(const char* what) {
    ++failures;
    if (failures <= 20) std::fprintf(stderr, "[%s] PE %d: FAIL: %s\n", program, me, what);
  }
  void expect(bool ok, const char* what) {
    ++checks;
    if (!ok) fail(what);
  }
};

// Starts gshmem; returns false (after printing SKIP) where the program should exit 77.
inline bool start(Ctx& c, const char* program) {
  c.program = program;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIP: no CUDA GPU here\n");
    return false;
  }
  if (gshmem_init() != GSHMEM_SUCCESS) std::exit(1);
  int dev = -1;
  gshmemx_query_device(&dev, nullptr);
  if (dev < 0) {
    std::printf("SKIP: this PE runs on the CPU (no usable GPU)\n");
    gshmem_finalize();
    return false;
  }
  c.quick = std::getenv("GSHMEM_TEST_QUICK") != nullptr && std::atoi(std::getenv("GSHMEM_TEST_QUICK")) != 0;
  c.me = gshmem_my_pe();
  c.n = gshmem_n_pes();
  // PE 0 picks the seed (or takes GSHMEM_TEST_SEED) and every PE reads it from there.
  auto* s = static_cast<uint64_t*>(gshmem_malloc(sizeof(uint64_t)));
  if (c.me == 0) {
    uint64_t seed = 0;
    if (const char* e = std::getenv("GSHMEM_TEST_SEED")) seed = std::strtoull(e, nullptr, 0);
    else seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
    GT_CUDA(cudaMemcpy(s, &seed, sizeof seed, cudaMemcpyHostToDevice));
    // A cudaMemcpy from pageable memory may return before the data reaches the GPU (CUDA's API sync behaviour),
    // and the barrier does not wait for it: with 2 PEs on one GPU every PE read a seed of 0 without this.
    GT_CUDA(cudaDeviceSynchronize());
  }
  gshmem_barrier_all();
  gshmem_getmem(&c.seed, s, sizeof c.seed, 0);
  gshmem_barrier_all();
  gshmem_free(s);
  if (c.me == 0) std::printf("[%s] %d PEs, seed 0x%016llx (replay: GSHMEM_TEST_SEED=0x%016llx)\n", program, c.n,
                             static_cast<unsigned long long>(c.seed), static_cast<unsigned long long>(c.seed));
  return true;
}

// Ends the program: every PE's failure count is reported; exit status 1 if any PE failed.
inline int finish(Ctx& c) {
  GT_CUDA(cudaDeviceSynchronize());
  gshmem_barrier_all();
  std::printf("[%s] PE %d of %d: %ld checks, %ld failures: %s\n", c.program, c.me, c.n, c.checks, c.failures,
              c.failures ? "FAILED" : "ok");
  gshmem_finalize();
  return c.failures ? 1 : 0;
}

}  // namespace gt
