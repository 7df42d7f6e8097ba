// gshmem-bench: filling and checking the collectives' buffers on the GPU (device_rows.cu and the NCCL companion
// nccl_rows.cu). The values come from coll.hpp; the check compares every element of this PE's result and reports
// how many differ and the first one. Library-neutral: CUDA runtime only.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "coll.hpp"

namespace bench::coll {

__global__ void fill_kernel(Kind k, void* buf, std::uint64_t n, int me) {
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    store(k, buf, i, source_value(k, me, i));
}

__global__ void poison_kernel(Kind k, void* buf, std::uint64_t n) {
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    store(k, buf, i, k == Kind::ReduceInt ? -7.0 : k == Kind::ReduceFloat || k == Kind::ReducescatterFloat ? -1.5
                                                                                                          : 0xee);
}

// counters[0]: elements that differ; counters[1]: the lowest such index.
__global__ void check_kernel(Kind k, const void* buf, std::uint64_t n, int me, int npes, std::uint64_t nb,
                             unsigned long long* counters) {
  unsigned long long bad = 0, first = ~0ull;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    if (load(k, buf, i) != expected_value(k, me, npes, nb, i)) {
      ++bad;
      if (first == ~0ull) first = i;
    }
  if (bad) {
    atomicAdd(&counters[0], bad);
    atomicMin(&counters[1], first);
  }
}

__global__ void spoil_kernel(Kind k, void* buf, int me, int npes, std::uint64_t nb) {
  store(k, buf, 0, spoiled_value(k, me, npes, nb, 0));
}

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

inline unsigned grid_for(std::uint64_t n) {
  const std::uint64_t g = (n + 255) / 256;
  return unsigned(g < 1 ? 1 : g > 1024 ? 1024 : g);
}

// This PE's source for shape `sh`, and a destination that holds none of the expected values' pattern.
inline void fill(Kind k, void* src, void* dst, const Shape& sh, int me, cudaStream_t s) {
  fill_kernel<<<grid_for(sh.src_elems), 256, 0, s>>>(k, src, sh.src_elems, me);
  poison_kernel<<<grid_for(sh.dst_elems), 256, 0, s>>>(k, dst, sh.dst_elems);
  cuda_check(cudaGetLastError(), "collective fill kernels");
  cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize after the collective fill");
}

// Test hook (coll.hpp's fault_here): spoils element 0 of this PE's destination.
inline void spoil(Kind k, void* dst, const Shape& sh, int me, int npes, cudaStream_t s) {
  spoil_kernel<<<1, 1, 0, s>>>(k, dst, me, npes, sh.count);
  cuda_check(cudaGetLastError(), "collective spoil kernel");
  cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize after the spoil kernel");
}

// Checks this PE's destination after the collective: empty if right, else the text naming the row, the size and the
// first wrong element. Throws only for CUDA errors.
inline std::string check(Kind k, const void* dst, const Shape& sh, int me, int npes, const std::string& row,
                         cudaStream_t s) {
  unsigned long long* c = nullptr;
  cuda_check(cudaMalloc(&c, 2 * sizeof(unsigned long long)), "cudaMalloc (check counters)");
  unsigned long long h[2] = {0, ~0ull};
  cuda_check(cudaMemcpy(c, h, sizeof h, cudaMemcpyHostToDevice), "cudaMemcpy (check counters)");
  check_kernel<<<grid_for(sh.dst_elems), 256, 0, s>>>(k, dst, sh.dst_elems, me, npes, sh.count, c);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e == cudaSuccess) e = cudaMemcpy(h, c, sizeof h, cudaMemcpyDeviceToHost);
  cudaFree(c);
  cuda_check(e, "collective check kernel");
  if (h[0] == 0) return {};
  unsigned char got[8] = {};
  cuda_check(cudaMemcpy(got, static_cast<const char*>(dst) + h[1] * elem_size(k), elem_size(k),
                        cudaMemcpyDeviceToHost),
             "cudaMemcpy (first wrong element)");
  return mismatch_text(row, sh.bytes, me, h[0], h[1], load(k, got, 0), expected_value(k, me, npes, sh.count, h[1]));
}

}  // namespace bench::coll
