// mp_moe_gpu's device_entry case, the CUDA half: gshmem/moe/device.cuh called from the test's own kernels as a user
// kernel calls it (one block of whole warps, or one warp), with a plan and a workspace of its own and the call
// number kept by the caller. moe.cpp builds the rounds, launches through these and checks the results.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gshmem/moe/device.cuh"
#include "moe_device_entry.hpp"

namespace {

using gshmem::dev::Block;
using gshmem::dev::Warp;

template <typename Coop>
__global__ void entry_dispatch(gshmem::DeviceHandle h, gshmem::moe::Plan p, void* ws, uint64_t c, int32_t* counts,
                               void* ex, void* es, const void* x, const void* xs, const uint32_t* idx,
                               const uint32_t* bound_m) {
  gshmem::dev::moe_dispatch<Coop>(h, p, ws, c, counts, ex, es, x, xs, idx, bound_m, 0, "the test's moe_dispatch");
}

template <typename Coop, typename TY, typename TO>
__global__ void entry_combine(gshmem::DeviceHandle h, gshmem::moe::Plan p, void* ws, uint64_t c, void* out,
                              const uint32_t* idx, const float* w, const void* y, const uint32_t* bound_m) {
  gshmem::dev::moe_combine<Coop, TY, TO>(h, p, ws, c, static_cast<TO*>(out), idx, w, static_cast<const TY*>(y),
                                         bound_m, 0, "the test's moe_combine");
}

template <typename Coop, typename TY, typename TO>
cudaError_t combine_as(unsigned threads, cudaStream_t st, const gshmem::DeviceHandle& h, const MoeEntryCall& a) {
  entry_combine<Coop, TY, TO><<<1, threads, 0, st>>>(h, a.plan, a.ws, a.call_no, a.out, a.idx, a.w, a.y, a.bound_m);
  return cudaGetLastError();
}

}  // namespace

cudaError_t moe_entry_dispatch(bool warp, unsigned threads, cudaStream_t st, const MoeEntryCall& a) {
  const gshmem::DeviceHandle h = gshmem::device_handle();
  if (warp)
    entry_dispatch<Warp><<<1, 32, 0, st>>>(h, a.plan, a.ws, a.call_no, a.counts, a.ex, a.es, a.x, a.xs, a.idx,
                                           a.bound_m);
  else
    entry_dispatch<Block><<<1, threads, 0, st>>>(h, a.plan, a.ws, a.call_no, a.counts, a.ex, a.es, a.x, a.xs, a.idx,
                                                 a.bound_m);
  return cudaGetLastError();
}

// The pairings the case uses: bfloat16 -> half and float -> float at block scope, half -> bfloat16 at warp scope.
cudaError_t moe_entry_combine(bool warp, unsigned threads, cudaStream_t st, const MoeEntryCall& a) {
  const gshmem::DeviceHandle h = gshmem::device_handle();
  using gshmem::host::ReduceType;
  if (warp && a.ty == ReduceType::Half && a.to == ReduceType::Bfloat16)
    return combine_as<Warp, __half, __nv_bfloat16>(32, st, h, a);
  if (!warp && a.ty == ReduceType::Bfloat16 && a.to == ReduceType::Half)
    return combine_as<Block, __nv_bfloat16, __half>(threads, st, h, a);
  if (!warp && a.ty == ReduceType::Float && a.to == ReduceType::Float)
    return combine_as<Block, float, float>(threads, st, h, a);
  return cudaErrorInvalidValue;
}
