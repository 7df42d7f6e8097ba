// The reductions' stream kernels for the unsigned integer and floating types (see gpu_coll_reduce.cuh).
#define GSHMEM_COLL_REDUCE_DEFINE 1
#include "transport/gpu_coll_reduce.cuh"

#include <cstdint>

namespace gshmem::gpu {
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(uint8_t)
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(uint16_t)
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(uint32_t)
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(uint64_t)
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(float)
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(double)
}  // namespace gshmem::gpu
