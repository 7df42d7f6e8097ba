// gpu_device_api_ext, part: gshmemx_<T>_iput_{warp,block} and gshmemx_<T>_iget_{warp,block} for every standard RMA
// type, half and bfloat16 (thread scope: gshmem_<T>_iput/iget), random strides 1..3 and lengths, through
// rma_test.cuh (the contiguous put/get forms of the same type run alongside).
#include "device_api_ext.hpp"
#include "rma_test.cuh"

namespace gt {
namespace {

#define GT_TYPES(X) GSHMEM_RMA_TYPES(X) GSHMEM_HALF_RMA_TYPES(X)

#define GT_STRIDED_OPS(T, N)                                                                                   \
  struct StridedOps_##N {                                                                                      \
    using type = T;                                                                                            \
    static constexpr const char* name = "gshmemx_" #N "_i{put,get}";                                           \
    static constexpr bool kP = false, kSignal = false, kI = true, kICoop = true;                               \
    template <typename C>                                                                                      \
    static __device__ void put(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {              \
      GT_SCOPED(C, gshmem_##N##_put, gshmemx_##N##_put_warp, gshmemx_##N##_put_block, d, s, n, pe);            \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void get(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {              \
      GT_SCOPED(C, gshmem_##N##_get, gshmemx_##N##_get_warp, gshmemx_##N##_get_block, d, s, n, pe);            \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void put_nbi(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {          \
      GT_SCOPED(C, gshmem_##N##_put_nbi, gshmemx_##N##_put_nbi_warp, gshmemx_##N##_put_nbi_block, d, s, n, pe); \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void get_nbi(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {          \
      GT_SCOPED(C, gshmem_##N##_get_nbi, gshmemx_##N##_get_nbi_warp, gshmemx_##N##_get_nbi_block, d, s, n, pe); \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void iput(const gshmem::DeviceHandle&, T* d, const T* s, long long ds, long long ss,     \
                                size_t n, int pe) {                                                            \
      GT_SCOPED(C, gshmem_##N##_iput, gshmemx_##N##_iput_warp, gshmemx_##N##_iput_block, d, s, ds, ss, n, pe); \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void iget(const gshmem::DeviceHandle&, T* d, const T* s, long long ds, long long ss,     \
                                size_t n, int pe) {                                                            \
      GT_SCOPED(C, gshmem_##N##_iget, gshmemx_##N##_iget_warp, gshmemx_##N##_iget_block, d, s, ds, ss, n, pe); \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void put_signal(const gshmem::DeviceHandle&, T*, const T*, size_t, uint64_t*, uint64_t,  \
                                      int, int) {}                                                             \
    template <typename C>                                                                                      \
    static __device__ void put_signal_nbi(const gshmem::DeviceHandle&, T*, const T*, size_t, uint64_t*,        \
                                          uint64_t, int, int) {}                                               \
  };
GT_TYPES(GT_STRIDED_OPS)
#undef GT_STRIDED_OPS

}  // namespace

void ext_typed_strided_suite(Ctx& c) {
  RmaBuffers b = rma_buffers();
#define GT_RUN(T, N) rma_suite<StridedOps_##N>(c, b);
  GT_TYPES(GT_RUN)
#undef GT_RUN
  rma_free(b);
}

}  // namespace gt
