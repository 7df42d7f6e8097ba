// The CUDA driver, loaded at run time (dlopen libcuda.so.1): the library never links libcuda, so one binary runs
// CPU PEs on machines without a driver. Only built with GPU support (GSHMEM_HAVE_CUDA).
#pragma once
#include <cuda.h>
#include <driver_types.h>

#include <string>

namespace gshmem::cuda {

struct Driver {
#define GSHMEM_CU_FN(name) decltype(&::name) name = nullptr;
#include "transport/cuda_driver_fns.def"
#undef GSHMEM_CU_FN
};

// The loaded driver with cuInit done, or nullptr when no usable driver exists (reason() says why).
const Driver* driver();
const char* reason();

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)" for any CUresult: the driver's name and
// text, or where its lookup gives none (no driver, a driver already torn down at exit, a code it does not know)
// the built-in table of the common codes, or "CUresult <n> (unknown error code)".
std::string error_text(CUresult r);
// The same from a name and text as a lookup returned them (either may be null): the formatting, testable alone.
std::string format_error(int code, const char* name, const char* text);
// "cudaErrorIllegalAddress (an illegal memory access was encountered)" for a runtime error.
std::string error_text(cudaError_t e);

// Throws gshmem::Error(GSHMEM_ERROR_SYSTEM) "<what> failed: CUDA_ERROR_X (text). <fix>" unless r is success.
void check(CUresult r, const char* what, const char* fix = nullptr);

// Makes GPU `device`'s context current on this thread for the library's CUDA calls in its scope, without creating
// a context on any other GPU. A thread with no current context gets the device's primary context and keeps it
// (what the CUDA runtime would do with device 0, whose context a PE on another GPU must never create: ~0.5 GiB of
// GPU memory, and its work could not reach the heap, whose mappings are accessible to the PE's GPU only). A thread
// with another GPU's context current gets that context back at the end of the scope. Cheap when the device's
// context is already current (one cuCtxGetCurrent).
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  CUcontext restore_ = nullptr;
};

}  // namespace gshmem::cuda
