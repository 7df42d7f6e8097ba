// Compile check (no GPU, never run): a CUDA source that defines NVSHMEM_HOSTLIB_ONLY before <nvshmem.h>, as
// PyTorch's symm_mem extension does in the device passes of architectures below sm_70 (nvcc 13 no longer builds
// those, so the define is made for every pass here). NVSHMEM's header then leaves its device API out; gshmem's must
// too, because the device API's atomics (<cuda/atomic>) stop the build below sm_60. What stays: the host API, the
// collective launch helpers, the unique-id types by their own header path, the version macros and the type-list
// macros bindings generate their wrappers with. Kernels of the file use no NVSHMEM device call.
#define NVSHMEM_HOSTLIB_ONLY
#include <bootstrap_device_host/nvshmem_uniqueid.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#if defined(GSHMEM_DEVICE_CUH)
#error "NVSHMEM_HOSTLIB_ONLY: <nvshmem.h> brought in gshmem's device API"
#endif
#if !defined(NVSHMEM_VENDOR_VERSION) || NVSHMEM_VENDOR_VERSION < 30400
#error "NVSHMEM_VENDOR_VERSION is missing or below 3.4"
#endif

#include <cstdint>

namespace {

__global__ void scale(float* x, float f, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= f;
}

// The host side of such a file: version checks, a unique id by its struct, a kernel launched collectively.
int host_side(float* x, int n, cudaStream_t s) {
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (nvshmemx_get_uniqueid(&id) != 0) return 1;
  int major = 0, minor = 0, patch = 0;
  nvshmemx_vendor_get_version_info(&major, &minor, &patch);
  if (major * 10000 + minor * 100 + patch != NVSHMEM_VENDOR_VERSION) return 2;
  void* args[] = {&x, &major, &n};
  return nvshmemx_collective_launch(reinterpret_cast<const void*>(scale), dim3(1), dim3(32), args, 0, s);
}

// A binding's typed wrappers, made by the type-list macros (one function a type).
#define HOSTLIB_ONLY_P(TYPENAME, TYPE) \
  [[maybe_unused]] void p_##TYPENAME(TYPE* dest, TYPE value, int pe) { nvshmem_##TYPENAME##_p(dest, value, pe); }
NVSHMEMI_REPT_FOR_STANDARD_RMA_TYPES(HOSTLIB_ONLY_P)
#undef HOSTLIB_ONLY_P

// The half / bfloat16 stream collectives as host calls (device.cuh is not there to define them).
[[maybe_unused]] int f16_stream_collectives(half* d, const half* s, __nv_bfloat16* bd, const __nv_bfloat16* bs,
                                            cudaStream_t st) {
  return nvshmemx_half_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, d, s, 8, st) +
         nvshmemx_bfloat16_max_reducescatter_on_stream(NVSHMEM_TEAM_WORLD, bd, bs, 8, st) +
         nvshmemx_half_broadcast_on_stream(NVSHMEM_TEAM_WORLD, d, s, 8, 0, st) +
         nvshmemx_bfloat16_fcollect_on_stream(NVSHMEM_TEAM_WORLD, bd, bs, 8, st) +
         nvshmemx_half_alltoall_on_stream(NVSHMEM_TEAM_WORLD, d, s, 8, st);
}

}  // namespace

int hostlib_only_entry(float* x, int n, cudaStream_t s) { return host_side(x, n, s); }
