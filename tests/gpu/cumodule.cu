// gpu_cumodule: gshmemx_cumodule_init / _finalize and gshmemx_culibrary_init / _finalize on a cubin the program
// loads itself (cumodule_kernel.cu). After init the module's kernel reaches every PE (a ring of puts with fresh
// values), and after a team split the module sees the new team (the library refreshes registered modules);
// finalizing twice, or a NULL handle, is GSHMEM_ERROR_INVALID_VALUE with a message naming the call.
#include <cuda.h>

#include <cstring>

#include "harness.hpp"

namespace {

// Driver calls through the runtime's entry-point query: the program does not link libcuda, so it still starts (and
// skips) on machines without a driver.
template <typename F>
F driver_fn(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess || !p) {
    std::fprintf(stderr, "gpu_cumodule: the CUDA driver has no %s\n", name);
    std::exit(1);
  }
  return reinterpret_cast<F>(p);
}
#define GT_DRV(name) driver_fn<decltype(&::name)>(#name)

#define GT_CU(x)                                                                                             \
  do {                                                                                                       \
    CUresult r_ = (x);                                                                                       \
    if (r_ != CUDA_SUCCESS) {                                                                                \
      std::fprintf(stderr, "%s:%d: %s failed: CUresult %d\n", __FILE__, __LINE__, #x, static_cast<int>(r_)); \
      std::exit(1);                                                                                          \
    }                                                                                                        \
  } while (0)

// Runs the kernel `f` once; checks the ring value from the left PE and this PE's rank in `team`.
void ring(gt::Ctx& c, CUfunction f, int* dst, int* out, gshmem_team_t team, int tag, const char* what) {
  GT_CUDA(cudaMemset(dst, 0, sizeof(int)));
  GT_CUDA(cudaMemset(out, 0xFF, sizeof(int)));
  GT_CUDA(cudaDeviceSynchronize());
  gshmem_barrier_all();
  int t = team;
  void* args[] = {&dst, &tag, &t, &out};
  GT_CU(GT_DRV(cuLaunchKernel)(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  GT_CU(GT_DRV(cuCtxSynchronize)());
  gshmem_barrier_all();
  int got = 0, rank = 0;
  GT_CUDA(cudaMemcpy(&got, dst, sizeof got, cudaMemcpyDeviceToHost));
  GT_CUDA(cudaMemcpy(&rank, out, sizeof rank, cudaMemcpyDeviceToHost));
  char msg[256];
  std::snprintf(msg, sizeof msg, "%s: ring value %d, expected %d", what, got, tag + (c.me + c.n - 1) % c.n);
  c.expect(got == tag + (c.me + c.n - 1) % c.n, msg);
  std::snprintf(msg, sizeof msg, "%s: team rank %d, expected %d", what, rank, gshmem_team_my_pe(team));
  c.expect(rank == gshmem_team_my_pe(team), msg);
  gshmem_barrier_all();
}

}  // namespace

int main() {
  gt::Ctx c;
  if (!gt::start(c, "gpu_cumodule")) return 77;
  int* dst = static_cast<int*>(gshmem_malloc(sizeof(int)));
  int* out = nullptr;
  GT_CUDA(cudaMalloc(&out, sizeof(int)));
  auto rng = c.case_rng(0xC0DE);

  // a module
  CUmodule mod = nullptr;
  GT_CU(GT_DRV(cuModuleLoad)(&mod, GT_CUMODULE_CUBIN));
  c.expect(gshmemx_cumodule_init(mod) == GSHMEM_SUCCESS, gshmemx_last_error());
  CUfunction f = nullptr;
  GT_CU(GT_DRV(cuModuleGetFunction)(&f, mod, "cumodule_ring"));
  ring(c, f, dst, out, GSHMEM_TEAM_WORLD, 1000 + static_cast<int>(rng() % 100000), "module, world");
  gshmem_team_t odd = GSHMEM_TEAM_INVALID;  // PEs 1, 3, ...: a new team slot the module must learn about
  gshmem_team_split_strided(GSHMEM_TEAM_WORLD, c.n > 1 ? 1 : 0, 2, c.n > 1 ? c.n / 2 : 1, nullptr, 0, &odd);
  ring(c, f, dst, out, odd == GSHMEM_TEAM_INVALID ? GSHMEM_TEAM_WORLD : odd, 1000 + static_cast<int>(rng() % 100000),
       "module, after a team split");
  c.expect(gshmemx_cumodule_finalize(mod) == GSHMEM_SUCCESS, gshmemx_last_error());
  c.expect(gshmemx_cumodule_finalize(mod) == GSHMEM_ERROR_INVALID_VALUE &&
               std::strstr(gshmemx_last_error(), "gshmemx_cumodule_finalize") != nullptr,
           "a second gshmemx_cumodule_finalize is INVALID_VALUE naming the call");
  c.expect(gshmemx_cumodule_init(nullptr) == GSHMEM_ERROR_INVALID_VALUE, "gshmemx_cumodule_init(NULL)");
  GT_CU(GT_DRV(cuModuleUnload)(mod));

  // a library (context-independent loading)
  CUlibrary lib = nullptr;
  GT_CU(GT_DRV(cuLibraryLoadFromFile)(&lib, GT_CUMODULE_CUBIN, nullptr, nullptr, 0, nullptr, nullptr, 0));
  c.expect(gshmemx_culibrary_init(lib) == GSHMEM_SUCCESS, gshmemx_last_error());
  CUkernel k = nullptr;
  GT_CU(GT_DRV(cuLibraryGetKernel)(&k, lib, "cumodule_ring"));
  CUfunction kf = nullptr;
  GT_CU(GT_DRV(cuKernelGetFunction)(&kf, k));
  ring(c, kf, dst, out, GSHMEM_TEAM_WORLD, 1000 + static_cast<int>(rng() % 100000), "library, world");
  c.expect(gshmemx_culibrary_finalize(lib) == GSHMEM_SUCCESS, gshmemx_last_error());
  GT_CU(GT_DRV(cuLibraryUnload)(lib));

  gshmem_barrier_all();
  if (odd != GSHMEM_TEAM_INVALID) gshmem_team_destroy(odd);
  GT_CUDA(cudaFree(out));
  gshmem_free(dst);
  return gt::finish(c);
}
