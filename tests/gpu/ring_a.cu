// Two-TU ring, part A (and main): kernels here use the free device functions through this file's gshmemi_dstate;
// ring_b.cu has its own copy. Each PE sends fresh random bytes to its right neighbour by a block put, an int_p,
// and a put-with-signal; the receiver waits for the signal (in ring_b.cu's kernel) and the host compares every
// byte with the sender's buffer, read back with gshmem_getmem. Receive buffers are poisoned before each round.
#include <gshmem/device.cuh>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ring_common.hpp"

__global__ void send_kernel(RingBuffers b, std::size_t bytes, int value, uint64_t round) {
  const int me = gshmem_my_pe(), n = gshmem_n_pes();
  const int right = (me + 1) % n;
  gshmemx_putmem_block(b.dst, b.src, bytes, right);
  if (threadIdx.x == 0) gshmem_int_p(b.word, value, right);
  __syncthreads();
  if (threadIdx.x == 0) gshmem_putmem_signal_nbi(b.dst2, b.src, bytes, b.sig, round, GSHMEM_SIGNAL_SET, right);
  if (threadIdx.x == 0) gshmem_barrier_all();
}

void launch_send(const RingBuffers& b, std::size_t bytes, int value, uint64_t round, cudaStream_t s) {
  send_kernel<<<1, 256, 0, s>>>(b, bytes, value, round);
}

#define CHECK_CUDA(x)                                                                                          \
  do {                                                                                                         \
    cudaError_t e_ = (x);                                                                                      \
    if (e_ != cudaSuccess) {                                                                                   \
      std::fprintf(stderr, "ring: %s failed: %s\n", #x, cudaGetErrorString(e_));                               \
      std::exit(1);                                                                                            \
    }                                                                                                          \
  } while (0)

int main() {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIP: no CUDA GPU here\n");
    return 77;
  }
  if (gshmem_init() != GSHMEM_SUCCESS) return 1;
  int dev = -1;
  gshmemx_query_device(&dev, nullptr);
  if (dev < 0) {
    std::printf("SKIP: this PE runs on the CPU (no usable GPU)\n");
    gshmem_finalize();
    return 77;
  }
  const int me = gshmem_my_pe(), n = gshmem_n_pes();
  const int left = (me + n - 1) % n;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Odd size and an offset source so that the vector and the scalar copy paths are both used.
  const std::size_t max_bytes = (1u << 20) + 13;
  RingBuffers b{};
  b.src = static_cast<unsigned char*>(gshmem_malloc(max_bytes + 16));
  b.dst = static_cast<unsigned char*>(gshmem_malloc(max_bytes + 16));
  b.dst2 = static_cast<unsigned char*>(gshmem_malloc(max_bytes + 16));
  b.word = static_cast<int*>(gshmem_malloc(sizeof(int)));
  b.sig = static_cast<uint64_t*>(gshmem_calloc(1, sizeof(uint64_t)));
  CHECK_CUDA(cudaMalloc(&b.seen_pe, 2 * sizeof(int)));
  int* expect = static_cast<int*>(gshmem_malloc(sizeof(int)));
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(me));
  std::vector<unsigned char> host(max_bytes + 16), got(max_bytes + 16), want(max_bytes + 16);
  const std::size_t sizes[] = {1, 15, 16, 4096 + 3, max_bytes};
  int failures = 0;
  uint64_t round = 0;
  for (std::size_t bytes : sizes) {
    for (int shift : {0, 1, 8}) {
      ++round;
      for (auto& c : host) c = static_cast<unsigned char>(rng());
      const int value = static_cast<int>(rng());
      RingBuffers r = b;
      r.src = b.src + shift;
      r.dst = b.dst + shift;
      r.dst2 = b.dst2 + shift;
      CHECK_CUDA(cudaMemcpy(b.src, host.data(), max_bytes + 16, cudaMemcpyHostToDevice));
      CHECK_CUDA(cudaMemset(b.dst, 0xCD, max_bytes + 16));
      CHECK_CUDA(cudaMemset(b.dst2, 0xCD, max_bytes + 16));
      CHECK_CUDA(cudaMemset(b.word, 0xCD, sizeof(int)));
      CHECK_CUDA(cudaDeviceSynchronize());
      gshmem_barrier_all();  // everyone poisoned before anyone sends
      launch_send(r, bytes, value ^ me, round, s);
      launch_receive(r, round, s);
      CHECK_CUDA(cudaStreamSynchronize(s));
      gshmem_barrier_all();
      // What the left neighbour sent: its source buffer and its value (read back exactly).
      gshmem_getmem(want.data(), b.src + shift, bytes, left);
      gshmem_int_p(expect, value ^ me, me);  // what this PE sends, for its right neighbour to check
      gshmem_barrier_all();
      const int left_value = gshmem_int_g(expect, left);
      int word = 0, seen[2] = {0, 0};
      CHECK_CUDA(cudaMemcpy(&word, b.word, sizeof word, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(seen, b.seen_pe, sizeof seen, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(got.data(), b.dst + shift, bytes, cudaMemcpyDeviceToHost));
      if (std::memcmp(got.data(), want.data(), bytes) != 0) {
        std::fprintf(stderr, "PE %d: block put of %zu bytes (offset %d) from PE %d differs\n", me, bytes, shift, left);
        ++failures;
      }
      CHECK_CUDA(cudaMemcpy(got.data(), b.dst2 + shift, bytes, cudaMemcpyDeviceToHost));
      if (std::memcmp(got.data(), want.data(), bytes) != 0) {
        std::fprintf(stderr, "PE %d: put_signal of %zu bytes (offset %d) from PE %d differs\n", me, bytes, shift, left);
        ++failures;
      }
      if (word != left_value) {
        std::fprintf(stderr, "PE %d: int_p from PE %d gave %d, expected %d\n", me, left, word, left_value);
        ++failures;
      }
      if (seen[0] != me || seen[1] != n) {
        std::fprintf(stderr, "PE %d: ring_b.cu's kernel saw my_pe=%d n_pes=%d (its gshmemi_dstate was not set)\n",
                     me, seen[0], seen[1]);
        ++failures;
      }
      // The poison right after the transfer must be intact (no overrun).
      unsigned char after = 0;
      CHECK_CUDA(cudaMemcpy(&after, b.dst + shift + bytes, 1, cudaMemcpyDeviceToHost));
      if (after != 0xCD) {
        std::fprintf(stderr, "PE %d: block put of %zu bytes wrote past its end\n", me, bytes);
        ++failures;
      }
    }
  }
  gshmem_barrier_all();
  std::printf("PE %d of %d: two-TU ring, %llu rounds: %s\n", me, n, static_cast<unsigned long long>(round),
              failures ? "FAILED" : "ok");
  gshmem_free(b.src);
  gshmem_free(b.dst);
  gshmem_free(b.dst2);
  gshmem_free(b.word);
  gshmem_free(b.sig);
  gshmem_free(expect);
  cudaFree(b.seen_pe);
  cudaStreamDestroy(s);
  gshmem_finalize();
  return failures ? 1 : 0;
}
