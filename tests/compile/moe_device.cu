// Compile check (no GPU needed, never launched): the MoE dispatch / combine of gshmem/moe/device.cuh instantiated
// at block and warp scope with every pairing of expert-output and token types combine takes. nvcc, no -rdc.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gshmem/moe/device.cuh"

namespace {

template <typename Coop>
__global__ void dispatch_kernel(gshmem::DeviceHandle h, gshmem::moe::Plan p, void* ws, uint64_t c, int32_t* counts,
                                void* ex, void* es, const void* x, const void* xs, const uint32_t* idx,
                                const uint32_t* bound_m) {
  gshmem::dev::moe_dispatch<Coop>(h, p, ws, c, counts, ex, es, x, xs, idx, bound_m, 0);
}

template <typename Coop, typename TY, typename TO>
__global__ void combine_kernel(gshmem::DeviceHandle h, gshmem::moe::Plan p, void* ws, uint64_t c, TO* out,
                               const uint32_t* idx, const float* w, const TY* y, const uint32_t* bound_m) {
  gshmem::dev::moe_combine<Coop, TY, TO>(h, p, ws, c, out, idx, w, y, bound_m, 0);
}

template <typename Coop, typename TY>
void combine_all() {
  (void)&combine_kernel<Coop, TY, float>;
  (void)&combine_kernel<Coop, TY, __half>;
  (void)&combine_kernel<Coop, TY, __nv_bfloat16>;
}

template <typename Coop>
void scope() {
  (void)&dispatch_kernel<Coop>;
  combine_all<Coop, float>();
  combine_all<Coop, __half>();
  combine_all<Coop, __nv_bfloat16>();
}

}  // namespace

void gshmem_compile_check_moe_device() {
  scope<gshmem::dev::Block>();
  scope<gshmem::dev::Warp>();
}
