// gpu_device_api_ext, part: sized calls added for NVSHMEM compatibility: gshmem_put<N>_signal[_nbi] (thread) and
// gshmemx_put<N>_signal[_nbi]_{warp,block} (SIGNAL_ADD from every group, the count checked), gshmemx_iput<N> and
// gshmemx_iget<N>_{warp,block} (thread scope: gshmem_iput<N>/iget<N>), N = 8..128, through rma_test.cuh.
#include "device_api_ext.hpp"
#include "rma_test.cuh"

namespace gt {
namespace {

#define GT_SIZED_EXT_OPS(BITS)                                                                                 \
  struct SizedExtOps_##BITS {                                                                                  \
    using type = gshmem::dev::detail::SizedElem<BITS>::type;                                                   \
    using T = type;                                                                                            \
    static constexpr const char* name = "gshmem(x)_*" #BITS " signal/strided";                                 \
    static constexpr bool kP = false, kSignal = true, kI = true, kICoop = true;                                \
    template <typename C>                                                                                      \
    static __device__ void put(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {              \
      GT_SCOPED(C, gshmem_put##BITS, gshmemx_put##BITS##_warp, gshmemx_put##BITS##_block, d, s, n, pe);        \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void get(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {              \
      GT_SCOPED(C, gshmem_get##BITS, gshmemx_get##BITS##_warp, gshmemx_get##BITS##_block, d, s, n, pe);        \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void put_nbi(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {          \
      GT_SCOPED(C, gshmem_put##BITS##_nbi, gshmemx_put##BITS##_nbi_warp, gshmemx_put##BITS##_nbi_block, d, s, \
                n, pe);                                                                                        \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void get_nbi(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {          \
      GT_SCOPED(C, gshmem_get##BITS##_nbi, gshmemx_get##BITS##_nbi_warp, gshmemx_get##BITS##_nbi_block, d, s, \
                n, pe);                                                                                        \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void iput(const gshmem::DeviceHandle&, T* d, const T* s, long long ds, long long ss,     \
                                size_t n, int pe) {                                                            \
      GT_SCOPED(C, gshmem_iput##BITS, gshmemx_iput##BITS##_warp, gshmemx_iput##BITS##_block, d, s, ds, ss, n,  \
                pe);                                                                                           \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void iget(const gshmem::DeviceHandle&, T* d, const T* s, long long ds, long long ss,     \
                                size_t n, int pe) {                                                            \
      GT_SCOPED(C, gshmem_iget##BITS, gshmemx_iget##BITS##_warp, gshmemx_iget##BITS##_block, d, s, ds, ss, n,  \
                pe);                                                                                           \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void put_signal(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, uint64_t* sig,  \
                                      uint64_t v, int op, int pe) {                                            \
      GT_SCOPED(C, gshmem_put##BITS##_signal, gshmemx_put##BITS##_signal_warp,                                 \
                gshmemx_put##BITS##_signal_block, d, s, n, sig, v, op, pe);                                    \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void put_signal_nbi(const gshmem::DeviceHandle&, T* d, const T* s, size_t n,             \
                                          uint64_t* sig, uint64_t v, int op, int pe) {                         \
      GT_SCOPED(C, gshmem_put##BITS##_signal_nbi, gshmemx_put##BITS##_signal_nbi_warp,                         \
                gshmemx_put##BITS##_signal_nbi_block, d, s, n, sig, v, op, pe);                                \
    }                                                                                                          \
  };
GT_SIZED_EXT_OPS(8)
GT_SIZED_EXT_OPS(16)
GT_SIZED_EXT_OPS(32)
GT_SIZED_EXT_OPS(64)
GT_SIZED_EXT_OPS(128)
#undef GT_SIZED_EXT_OPS

}  // namespace

void ext_sized_suite(Ctx& c) {
  RmaBuffers b = rma_buffers();
  rma_suite<SizedExtOps_8>(c, b);
  rma_suite<SizedExtOps_16>(c, b);
  rma_suite<SizedExtOps_32>(c, b);
  rma_suite<SizedExtOps_64>(c, b);
  rma_suite<SizedExtOps_128>(c, b);
  rma_free(b);
}

}  // namespace gt
