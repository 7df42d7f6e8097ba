// Shared by ring_a.cu and ring_b.cu: the two translation units of the two-TU ring test, each with its own
// gshmemi_dstate (from <gshmem/device.cuh>), each launching its own kernels.
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

struct RingBuffers {
  unsigned char* src;   // symmetric: this PE's fresh random data
  unsigned char* dst;   // symmetric: receives the left neighbour's data (block put)
  unsigned char* dst2;  // symmetric: receives the left neighbour's data (put with signal)
  int* word;            // symmetric: receives the left neighbour's int_p
  uint64_t* sig;        // symmetric: signal from the left neighbour
  int* seen_pe;         // device memory: what ring_b's kernel read back (my_pe/n_pes of TU b)
};

// ring_a.cu: block put to the right neighbour, int_p, then put-with-signal (nbi) and a device barrier.
void launch_send(const RingBuffers& b, std::size_t bytes, int value, uint64_t round, cudaStream_t s);
// ring_b.cu: wait for the round's signal, device barrier, and record my_pe/n_pes as TU b sees them.
void launch_receive(const RingBuffers& b, uint64_t round, cudaStream_t s);
