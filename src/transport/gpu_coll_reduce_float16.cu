// The reductions' stream kernels for the 16-bit floating types, half and bfloat16 (see gpu_coll_reduce.cuh).
#define GSHMEM_COLL_REDUCE_DEFINE 1
#include "transport/gpu_coll_reduce.cuh"

namespace gshmem::gpu {
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(__half)
GSHMEM_INSTANTIATE_LAUNCH_REDUCE(__nv_bfloat16)
}  // namespace gshmem::gpu
