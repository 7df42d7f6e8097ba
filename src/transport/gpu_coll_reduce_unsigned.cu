// The reductions' stream kernels for the unsigned integer and floating types (see gpu_coll_reduce.cuh).
#define GSHMEM_COLL_REDUCE_DEFINE 1
#include "transport/gpu_coll_reduce.cuh"

#include <cstdint>

namespace gshmem::gpu {
template cudaError_t launch_reduce<uint8_t>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                              const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                              const volatile int*);
template cudaError_t launch_reduce<uint16_t>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                              const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                              const volatile int*);
template cudaError_t launch_reduce<uint32_t>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                              const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                              const volatile int*);
template cudaError_t launch_reduce<uint64_t>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                              const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                              const volatile int*);
template cudaError_t launch_reduce<float>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                              const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                              const volatile int*);
template cudaError_t launch_reduce<double>(bool, coll::ReduceOp, cudaStream_t, const gshmem_device_state_t&,
                                              const TeamValue&, int, bool, void*, const void*, std::size_t, unsigned,
                                              const volatile int*);
}  // namespace gshmem::gpu
