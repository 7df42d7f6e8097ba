// CUDA helpers shared by the GPU-PE programs of tests/mp (after harness.hpp): CK(runtime call) and CU(driver call)
// end the job naming the call, the file and the error; DRV(cuFoo) reaches a driver function through the runtime's
// entry-point query, so a program does not link libcuda and still starts (and skips) where there is no driver.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                                                      \
  do {                                                                                                             \
    cudaError_t e_ = (x);                                                                                          \
    if (e_ != cudaSuccess) {                                                                                       \
      std::fprintf(stderr, "[PE %d] FATAL %s:%d: %s: %s\n", mpt::me(), __FILE__, __LINE__, #x,                    \
                   cudaGetErrorString(e_));                                                                        \
      gshmem_global_exit(1);                                                                                       \
    }                                                                                                              \
  } while (0)
#define CU(x)                                                                                                      \
  do {                                                                                                             \
    CUresult r_ = (x);                                                                                             \
    if (r_ != CUDA_SUCCESS) {                                                                                      \
      std::fprintf(stderr, "[PE %d] FATAL %s:%d: %s: CUresult %d\n", mpt::me(), __FILE__, __LINE__, #x,           \
                   static_cast<int>(r_));                                                                          \
      gshmem_global_exit(1);                                                                                       \
    }                                                                                                              \
  } while (0)

namespace mpt {
template <typename F>
F driver_fn(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess || !p) {
    std::fprintf(stderr, "the CUDA driver has no %s\n", name);
    std::exit(1);
  }
  return reinterpret_cast<F>(p);
}
}  // namespace mpt
#define DRV(name) mpt::driver_fn<decltype(&::name)>(#name)
