#include "transport/cuda_driver.hpp"

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
    const char* name = nullptr;
    g_driver.cuGetErrorName(r, &name);
    g_reason = std::string("cuInit failed: ") + (name ? name : "unknown error");
    return;
  }
  int count = 0;
  if (g_driver.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    g_reason = "the NVIDIA driver sees no GPU";
    return;
  }
  g_ok = true;
}
}  // namespace

const Driver* driver() {
  std::call_once(g_once, load);
  return g_ok ? &g_driver : nullptr;
}

const char* reason() {
  driver();
  return g_reason.c_str();
}

void check(CUresult r, const char* what, const char* fix) {
  if (r == CUDA_SUCCESS) return;
  const char* name = "CUDA_ERROR_?";
  const char* text = "";
  if (g_ok) {
    g_driver.cuGetErrorName(r, &name);
    g_driver.cuGetErrorString(r, &text);
  }
  fail(GSHMEM_ERROR_SYSTEM, "{} failed: {} ({}).{}{}", what, name, text ? text : "", fix ? " Fix: " : "",
       fix ? fix : "");
}

}  // namespace gshmem::cuda
