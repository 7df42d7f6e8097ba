// The reductions' stream kernels for the 16-bit floating types, half and bfloat16 (see gpu_coll_reduce.cuh).
#define GSHMEM_COLL_REDUCE_DEFINE 1
#include "transport/gpu_coll_reduce.cuh"

namespace gshmem::gpu {
template cudaError_t launch_reduce<__half>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                           const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                           const volatile int*);
template cudaError_t launch_reduce<__nv_bfloat16>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                                  const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                                  const volatile int*);
}  // namespace gshmem::gpu
