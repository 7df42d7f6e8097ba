// Put-with-signal ring: each iteration a kernel sends a fresh block of data to the next PE with
// nvshmem_putmem_signal_nbi (one signal with NVSHMEM_SIGNAL_ADD, one with NVSHMEM_SIGNAL_SET), and the receiving
// kernel waits with nvshmem_signal_wait_until and checks the data the signal guards (it must never see the
// signal before the data). Every iteration uses its own slot, so no acknowledgement is needed.
#include "compat_util.h"

constexpr int kIters = 16;
constexpr size_t kWords = 1000;  // 8000 bytes per message: not a multiple of 16

__global__ void send(uint64_t* slots, const uint64_t* src, uint64_t* sig_add, uint64_t* sig_set, int iter,
                     int peer) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    nvshmem_putmem_signal_nbi(slots + iter * kWords, src + iter * kWords, kWords * sizeof(uint64_t), sig_add, 1,
                              NVSHMEM_SIGNAL_ADD, peer);
    nvshmem_putmem_signal_nbi(slots + (kIters + iter) * kWords, src + iter * kWords, kWords * sizeof(uint64_t),
                              sig_set, iter + 1, NVSHMEM_SIGNAL_SET, peer);
    nvshmem_quiet();
  }
}

// One thread waits, then the block checks the slot against the values the sender computed.
__global__ void receive(const uint64_t* slots, uint64_t* sig_add, uint64_t* sig_set, int iter, uint64_t seed,
                        int from, unsigned long long* errors, uint64_t* seen) {
  if (threadIdx.x == 0) {
    seen[0] = nvshmem_signal_wait_until(sig_add, NVSHMEM_CMP_GE, iter + 1);
    seen[1] = nvshmem_signal_wait_until(sig_set, NVSHMEM_CMP_GE, iter + 1);
  }
  __syncthreads();
  for (size_t i = threadIdx.x; i < kWords; i += blockDim.x) {
    const uint64_t want = compat::mix(seed, from * kIters + iter, i);
    if (slots[iter * kWords + i] != want) atomicAdd(errors, 1ull);
    if (slots[(kIters + iter) * kWords + i] != want) atomicAdd(errors, 1ull);
  }
}

int main(int argc, char** argv) {
  const int mype = compat::init(&argc, &argv, "put_signal_ring");
  const int npes = nvshmem_n_pes();
  const int right = (mype + 1) % npes, left = (mype + npes - 1) % npes;
  const uint64_t seed = compat::shared_seed();

  uint64_t* slots = static_cast<uint64_t*>(nvshmem_malloc(2 * kIters * kWords * sizeof(uint64_t)));
  uint64_t* src = static_cast<uint64_t*>(nvshmem_malloc(kIters * kWords * sizeof(uint64_t)));
  uint64_t* sigs = static_cast<uint64_t*>(nvshmem_calloc(2, sizeof(uint64_t)));
  unsigned long long* errors;
  uint64_t* seen;
  COMPAT_CUDA(cudaMalloc(&errors, sizeof *errors));
  COMPAT_CUDA(cudaMalloc(&seen, 2 * sizeof(uint64_t)));
  COMPAT_CUDA(cudaMemset(errors, 0, sizeof *errors));

  uint64_t* host = static_cast<uint64_t*>(std::malloc(kIters * kWords * sizeof(uint64_t)));
  for (int it = 0; it < kIters; ++it)
    for (size_t i = 0; i < kWords; ++i) host[it * kWords + i] = compat::mix(seed, mype * kIters + it, i);
  COMPAT_CUDA(cudaMemcpy(src, host, kIters * kWords * sizeof(uint64_t), cudaMemcpyHostToDevice));
  COMPAT_CUDA(cudaMemset(slots, 0x5A, 2 * kIters * kWords * sizeof(uint64_t)));  // poison
  COMPAT_CUDA(cudaDeviceSynchronize());
  nvshmem_barrier_all();

  cudaStream_t s_send, s_recv;
  COMPAT_CUDA(cudaStreamCreateWithFlags(&s_send, cudaStreamNonBlocking));
  COMPAT_CUDA(cudaStreamCreateWithFlags(&s_recv, cudaStreamNonBlocking));
  // With CUDA's lazy module loading, the first launch of `send` could wait for the spinning `receive` kernel to
  // end (a deadlock): load both kernels before either runs, as NVSHMEM programs must too.
  cudaFuncAttributes attr;
  COMPAT_CUDA(cudaFuncGetAttributes(&attr, send));
  COMPAT_CUDA(cudaFuncGetAttributes(&attr, receive));
  for (int it = 0; it < kIters; ++it) {
    receive<<<1, 256, 0, s_recv>>>(slots, &sigs[0], &sigs[1], it, seed, left, errors, seen);
    send<<<1, 32, 0, s_send>>>(slots, src, &sigs[0], &sigs[1], it, right);
  }
  COMPAT_CUDA(cudaGetLastError());
  COMPAT_CUDA(cudaStreamSynchronize(s_send));
  COMPAT_CUDA(cudaStreamSynchronize(s_recv));
  nvshmem_barrier_all();

  unsigned long long err = 0;
  uint64_t last[2];
  COMPAT_CUDA(cudaMemcpy(&err, errors, sizeof err, cudaMemcpyDeviceToHost));
  COMPAT_CUDA(cudaMemcpy(last, seen, sizeof last, cudaMemcpyDeviceToHost));
  if (err) compat::fail("%llu words differ from what PE %d sent (or arrived after their signal)", err, left);
  if (last[0] < kIters || last[1] < kIters)
    compat::fail("last signal_wait_until returned %llu (ADD) and %llu (SET), expected >= %d",
                 static_cast<unsigned long long>(last[0]), static_cast<unsigned long long>(last[1]), kIters);
  // Final signal values: ADD counted every message, SET holds the last value.
  uint64_t fin[2];
  COMPAT_CUDA(cudaMemcpy(fin, sigs, sizeof fin, cudaMemcpyDeviceToHost));
  if (fin[0] != static_cast<uint64_t>(kIters) || fin[1] != static_cast<uint64_t>(kIters))
    compat::fail("signals are %llu (ADD) and %llu (SET), expected %d and %d", static_cast<unsigned long long>(fin[0]),
                 static_cast<unsigned long long>(fin[1]), kIters, kIters);

  nvshmem_barrier_all();
  COMPAT_CUDA(cudaStreamDestroy(s_send));
  COMPAT_CUDA(cudaStreamDestroy(s_recv));
  std::free(host);
  COMPAT_CUDA(cudaFree(errors));
  COMPAT_CUDA(cudaFree(seen));
  nvshmem_free(sigs);
  nvshmem_free(src);
  nvshmem_free(slots);
  return compat::finish();
}
