// gshmem MoE dispatch / combine in device code: the one implementation (gshmem/moe/dispatch_combine.h) over the
// device API's environment (dev::detail::CollEnv: peers through the handle, system-scope fences, bounded waits).
//
// STATUS: compiles (tests/compile/moe_device.cu, nvcc, no -rdc) but has NOT been run on a GPU. The host side that
// would allocate the workspace in GPU memory and launch it (a stream form, the torch op) is pending: docs/moe.md.
//
// Every PE's group (one block, or one warp) calls with the same plan and workspace (symmetric), and call numbers
// 1, 2, ... alternating dispatch c / combine c, as the host form does. bound_m: the device-resident token count
// (pplx-kernels' bound_m), or null for m.
#pragma once
#include "gshmem/device.cuh"
#include "gshmem/moe/dispatch_combine.h"

namespace gshmem {
namespace dev {

template <typename Coop>
__device__ __forceinline__ void moe_dispatch(const DeviceHandle& h, const moe::Plan& p, void* ws, uint64_t call_no,
                                             int32_t* out_expert_num_tokens, void* out_expert_x,
                                             void* out_expert_x_scale, const void* dp_x, const void* dp_x_scale,
                                             const uint32_t* indices, const uint32_t* bound_m, uint32_t m,
                                             const char* call = "gshmem::dev::moe_dispatch") {
  detail::CollEnv env{h, nullptr};
  const uint64_t n = bound_m != nullptr ? *bound_m : m;
  moe::dispatch<Coop>(env, p, static_cast<char*>(ws), call_no, out_expert_num_tokens,
                      static_cast<char*>(out_expert_x), static_cast<char*>(out_expert_x_scale),
                      static_cast<const char*>(dp_x), static_cast<const char*>(dp_x_scale), indices, n, call);
}

// TY, TO: float, __half or __nv_bfloat16 (coll::Float16 has CUDA's 16-bit types: device/impl/coll.cuh).
template <typename Coop, typename TY, typename TO>
__device__ __forceinline__ void moe_combine(const DeviceHandle& h, const moe::Plan& p, void* ws, uint64_t call_no,
                                            TO* out_tokens, const uint32_t* indices, const float* weights,
                                            const TY* expert_y, const uint32_t* bound_m, uint32_t m,
                                            const char* call = "gshmem::dev::moe_combine") {
  detail::CollEnv env{h, nullptr};
  const uint64_t n = bound_m != nullptr ? *bound_m : m;
  moe::combine<Coop, TY, TO>(env, p, static_cast<char*>(ws), call_no, out_tokens, indices, weights, expert_y, n,
                             call);
}

}  // namespace dev
}  // namespace gshmem
