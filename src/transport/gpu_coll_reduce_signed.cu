// The reductions' stream kernels for the signed integer types (see gpu_coll_reduce.cuh).
#define GSHMEM_COLL_REDUCE_DEFINE 1
#include "transport/gpu_coll_reduce.cuh"

#include <cstdint>

namespace gshmem::gpu {
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(int8_t)
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(int16_t)
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(int32_t)
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(int64_t)
}  // namespace gshmem::gpu
