// Two-TU ring, part B: a second translation unit with its own gshmemi_dstate, launching its own kernel.
#include <gshmem/device.cuh>

#include "ring_common.hpp"

__global__ void receive_kernel(RingBuffers b, uint64_t round) {
  if (threadIdx.x != 0) return;
  gshmem_signal_wait_until(b.sig, GSHMEM_CMP_EQ, round);
  gshmem_barrier_all();
  b.seen_pe[0] = gshmem_my_pe();
  b.seen_pe[1] = gshmem_n_pes();
}

void launch_receive(const RingBuffers& b, uint64_t round, cudaStream_t s) { receive_kernel<<<1, 32, 0, s>>>(b, round); }
