// The reductions' stream kernels for the signed integer types (see gpu_coll_reduce.cuh).
#define GSHMEM_COLL_REDUCE_DEFINE 1
#include "transport/gpu_coll_reduce.cuh"

#include <cstdint>

namespace gshmem::gpu {
template cudaError_t launch_reduce<int8_t>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                              const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                              const volatile int*);
template cudaError_t launch_reduce<int16_t>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                              const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                              const volatile int*);
template cudaError_t launch_reduce<int32_t>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                              const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                              const volatile int*);
template cudaError_t launch_reduce<int64_t>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                              const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                              const volatile int*);
}  // namespace gshmem::gpu
