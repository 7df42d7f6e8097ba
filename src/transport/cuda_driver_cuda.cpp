#include "transport/cuda_driver.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "runtime/error.hpp"
#include "runtime/log.hpp"

namespace gshmem::cuda {
namespace {
std::once_flag g_once;
Driver g_driver;
bool g_ok = false;
std::string g_reason;

void load() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    const char* e = dlerror();
    g_reason = std::string("libcuda.so.1 (the NVIDIA driver) could not be loaded: ") + (e ? e : "unknown");
    return;
  }
#define GSHMEM_CU_FN(name)                                                             \
  g_driver.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));            \
  if (!g_driver.name) {                                                                \
    g_reason = "the NVIDIA driver has no " #name "; it is too old for gshmem (need CUDA 12+)"; \
    return;                                                                            \
  }
#include "transport/cuda_driver_fns.def"
#undef GSHMEM_CU_FN
  CUresult r = g_driver.cuInit(0);
  if (r != CUDA_SUCCESS) {
    g_reason = "cuInit failed: " + error_text(r);
    return;
  }
  int count = 0;
  if (g_driver.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    g_reason = "the NVIDIA driver sees no GPU";
    return;
  }
  g_ok = true;
}

// The codes a gshmem user meets, with the driver's own texts (cuda.h), for when the driver cannot name them.
struct KnownError {
  int code;
  const char* name;
  const char* text;
};
constexpr KnownError kKnownErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "context already current"},
    {CUDA_ERROR_MAP_FAILED, "CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed"},
    {CUDA_ERROR_UNMAP_FAILED, "CUDA_ERROR_UNMAP_FAILED", "unmapping of buffer object failed"},
    {CUDA_ERROR_ALREADY_MAPPED, "CUDA_ERROR_ALREADY_MAPPED", "resource already mapped"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution "
     "on the device"},
    {CUDA_ERROR_NOT_MAPPED, "CUDA_ERROR_NOT_MAPPED", "resource not mapped"},
    {CUDA_ERROR_UNSUPPORTED_LIMIT, "CUDA_ERROR_UNSUPPORTED_LIMIT", "limit is not supported on this architecture"},
    {CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported "
     "between these two devices"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for "
     "launch"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already "
     "enabled"},
    {CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access has not been enabled"},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
    {CUDA_ERROR_ASSERT, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR", "an illegal memory access was "
     "encountered (hardware stack error)"},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
    {CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, "CUDA_ERROR_INVALID_ADDRESS_SPACE", "operation not supported on global/"
     "shared address space"},
    {CUDA_ERROR_INVALID_PC, "CUDA_ERROR_INVALID_PC", "invalid program counter"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted "
     "when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a "
     "previous error during capture"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

thread_local CUcontext t_checked = nullptr;  // the last context DeviceScope found to be the wanted device's

}  // namespace

const Driver* driver() {
  std::call_once(g_once, load);
  return g_ok ? &g_driver : nullptr;
}

const char* reason() {
  driver();
  return g_reason.c_str();
}

std::string format_error(int code, const char* name, const char* text) {
  const KnownError* known = nullptr;
  for (const KnownError& k : kKnownErrors)
    if (k.code == code) known = &k;
  std::string out = name && *name ? name : known ? known->name : "CUresult " + std::to_string(code);
  const char* t = text && *text ? text : known ? known->text : "unknown error code";
  return out + " (" + t + ")";
}

std::string error_text(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  // Resolved by load() whether or not cuInit worked; their own failure leaves the pointers null.
  if (g_driver.cuGetErrorName && g_driver.cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (g_driver.cuGetErrorString && g_driver.cuGetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  return format_error(static_cast<int>(r), name, text);
}

std::string error_text(cudaError_t e) {
  const char* name = cudaGetErrorName(e);
  const char* text = cudaGetErrorString(e);
  return (name ? std::string(name) : "cudaError " + std::to_string(static_cast<int>(e))) + " (" +
         (text ? text : "unknown error code") + ")";
}

void check(CUresult r, const char* what, const char* fix) {
  if (r == CUDA_SUCCESS) return;
  fail(GSHMEM_ERROR_SYSTEM, "{} failed: {}.{}{}", what, error_text(r), fix ? " Fix: " : "", fix ? fix : "");
}

DeviceScope::DeviceScope(int device) {
  const Driver* d = driver();
  if (!d || device < 0) return;
  CUcontext cur = nullptr;
  if (d->cuCtxGetCurrent(&cur) != CUDA_SUCCESS) return;
  if (cur && cur == t_checked) return;
  if (cur) {
    CUdevice dev = -1;
    if (d->cuCtxGetDevice(&dev) == CUDA_SUCCESS && static_cast<int>(dev) == device) {
      t_checked = cur;
      return;
    }
    restore_ = cur;  // another GPU's context: this scope borrows the thread, then gives it back
  }
  const cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) {
    restore_ = nullptr;
    if (cur) d->cuCtxSetCurrent(cur);
    fail(GSHMEM_ERROR_SYSTEM, "cudaSetDevice({}) (making this PE's GPU current on the calling thread) failed: {}. "
         "Fix: check that GPU {} is healthy (nvidia-smi)", device, error_text(e), device);
  }
  if (!restore_ && d->cuCtxGetCurrent(&cur) == CUDA_SUCCESS) t_checked = cur;
}

DeviceScope::~DeviceScope() {
  if (restore_) driver()->cuCtxSetCurrent(restore_);
}

}  // namespace gshmem::cuda
