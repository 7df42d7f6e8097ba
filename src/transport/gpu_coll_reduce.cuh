// GPU PEs: the reductions' stream kernels, one per op and element type (the block-scope form of the one routine
// of gshmem/coll/algorithms.h), and launch_reduce<T>, which picks the op's kernel. Its instantiations are spread over
// gpu_coll_reduce_*.cu (explicit instantiation) so the 64 kernels compile in parallel; gpu_coll.cu sees only the
// declaration. Internal to transport/.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "gshmem/device/impl/coll.cuh"
#include "transport/stream_kernel.cuh"

namespace gshmem::gpu {

// Threads of the collectives' CTA: enough lanes for a flat sync of 32 members and for copies.
constexpr unsigned kCollThreads = 512;

// Launches reduce_kernel<op, T>; cudaErrorInvalidValue for a bitwise op on a floating type (the host layer never
// asks for one).
template <typename T>
cudaError_t launch_reduce(bool overlap, coll::ReduceOp op, cudaStream_t st, const gshmem_device_state_t& h,
                          const TeamValue& t, int slot, bool scatter, void* dest, const void* src,
                          std::size_t nelems, const volatile int* abort_flag);

#if defined(GSHMEM_COLL_REDUCE_DEFINE)
// Reductions: one kernel per op and element type (the one routine of each, block scope).
template <coll::ReduceOp Op, typename T>
__global__ void __launch_bounds__(kCollThreads) reduce_kernel(gshmem_device_state_t h, TeamValue t, int slot,
                                                              bool scatter, T* dest, const T* src,
                                                              std::size_t nelems, const volatile int* abort_flag) {
  stream_kernel_entry();
  const char* call = scatter ? "gshmem reducescatter (stream kernel)" : "gshmem reduce (stream kernel)";
  dev::detail::CollEnv env{h, abort_flag};
  if (scatter) coll::reducescatter<dev::Block, Op>(env, t, slot, dest, src, nelems, call);
  else coll::reduce<dev::Block, Op>(env, t, slot, dest, src, nelems, call);
}

template <typename T>
cudaError_t launch_reduce(bool overlap, coll::ReduceOp op, cudaStream_t st, const gshmem_device_state_t& h,
                          const TeamValue& t, int slot, bool scatter, void* dest, const void* src,
                          std::size_t nelems, const volatile int* abort_flag) {
  using coll::ReduceOp;
  T* d = static_cast<T*>(dest);
  const T* s = static_cast<const T*>(src);
  auto go = [&](auto k) {
    return launch_stream_kernel(overlap, k, kCollThreads, st, h, t, slot, scatter, d, s, nelems, abort_flag);
  };
  switch (op) {
    case ReduceOp::Max: return go(reduce_kernel<ReduceOp::Max, T>);
    case ReduceOp::Min: return go(reduce_kernel<ReduceOp::Min, T>);
    case ReduceOp::Sum: return go(reduce_kernel<ReduceOp::Sum, T>);
    case ReduceOp::Prod: return go(reduce_kernel<ReduceOp::Prod, T>);
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case ReduceOp::And: return go(reduce_kernel<ReduceOp::And, T>);
      case ReduceOp::Or: return go(reduce_kernel<ReduceOp::Or, T>);
      case ReduceOp::Xor: return go(reduce_kernel<ReduceOp::Xor, T>);
      default: break;
    }
  }
  return cudaErrorInvalidValue;
}
#endif  // GSHMEM_COLL_REDUCE_DEFINE

}  // namespace gshmem::gpu
