// Seed 000's ring exchange, as NVSHMEM users write it: every PE sends N ints to the next PE with nvshmem_int_p
// from a kernel, then nvshmemx_barrier_all_on_stream; the receiver checks what its left neighbour sent.
// Prints seed 000's lines ("NVSHMEM initialized. Total PEs", "Received", "PASS - Got expected value").
#include "compat_util.h"

constexpr int kN = 8;
constexpr int kBig = 4096;

__global__ void ring_put(int* dst, const int* src, int n, int peer) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    nvshmem_int_p(&dst[i], src[i], peer);
}

int main(int argc, char** argv) {
  const int mype = compat::init(&argc, &argv, "ring_p");
  const int npes = nvshmem_n_pes();
  std::printf("[PE %d] NVSHMEM initialized. Total PEs: %d\n", mype, npes);
  const uint64_t seed = compat::shared_seed();
  const int right = (mype + 1) % npes, left = (mype + npes - 1) % npes;
  cudaStream_t stream;
  COMPAT_CUDA(cudaStreamCreate(&stream));

  for (int n : {kN, kBig}) {
    int* send = static_cast<int*>(nvshmem_malloc(n * sizeof(int)));
    int* recv = static_cast<int*>(nvshmem_malloc(n * sizeof(int)));
    int* host = static_cast<int*>(std::malloc(n * sizeof(int)));
    // seed 000's values for the small case (100 * pe + i), fresh random ones for the big one
    for (int i = 0; i < n; ++i)
      host[i] = n == kN ? 100 * mype + i : static_cast<int>(compat::mix(seed, mype, i));
    COMPAT_CUDA(cudaMemcpy(send, host, n * sizeof(int), cudaMemcpyHostToDevice));
    COMPAT_CUDA(cudaMemset(recv, 0xA5, n * sizeof(int)));  // poison
    nvshmemx_barrier_all_on_stream(stream);
    if (n == kN) {
      std::printf("[PE %d] Sending:", mype);
      for (int i = 0; i < n; ++i) std::printf(" %d", host[i]);
      std::printf(" \n[PE %d] Putting data to PE %d\n", mype, right);
    }
    ring_put<<<n == kN ? 1 : 8, 128, 0, stream>>>(recv, send, n, right);
    COMPAT_CUDA(cudaGetLastError());
    nvshmemx_barrier_all_on_stream(stream);
    COMPAT_CUDA(cudaStreamSynchronize(stream));
    COMPAT_CUDA(cudaMemcpy(host, recv, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      const int want = n == kN ? 100 * left + i : static_cast<int>(compat::mix(seed, left, i));
      if (host[i] != want && bad++ < 5) compat::fail("n=%d recv[%d] = %d, expected %d (from PE %d)", n, i, host[i],
                                                     want, left);
    }
    if (n == kN) {
      std::printf("[PE %d] Received:", mype);
      for (int i = 0; i < n; ++i) std::printf(" %d", host[i]);
      std::printf(" \n");
      if (!bad) std::printf("[PE %d] PASS - Got expected value %d from PE %d\n", mype, 100 * left, left);
    }
    nvshmem_barrier_all();
    std::free(host);
    nvshmem_free(recv);
    nvshmem_free(send);
  }
  COMPAT_CUDA(cudaStreamDestroy(stream));
  return compat::finish();
}
