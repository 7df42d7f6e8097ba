// The CUDA driver, loaded at run time (dlopen libcuda.so.1): the library never links libcuda, so one binary runs
// CPU PEs on machines without a driver. Only built with GPU support (GSHMEM_HAVE_CUDA).
#pragma once
#include <cuda.h>

namespace gshmem::cuda {

struct Driver {
#define GSHMEM_CU_FN(name) decltype(&::name) name = nullptr;
#include "transport/cuda_driver_fns.def"
#undef GSHMEM_CU_FN
};

// The loaded driver with cuInit done, or nullptr when no usable driver exists (reason() says why).
const Driver* driver();
const char* reason();

// Throws gshmem::Error(GSHMEM_ERROR_SYSTEM) "<what> failed: CUDA_ERROR_X (text). <fix>" unless r is success.
void check(CUresult r, const char* what, const char* fix = nullptr);

}  // namespace gshmem::cuda
