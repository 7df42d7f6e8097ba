// gpu_device_api, part: sized calls (gshmem_put8..128, get, _nbi, iput, iget; gshmemx_putN/getN[_nbi]_{warp,block}),
// the putmem family (putmem, getmem, _nbi, putmem_signal[_nbi] in thread/warp/block), and the native C++ API
// (gshmem::dev::p/g/put/get/put_nbi/get_nbi/iput/iget/put_signal/put_signal_nbi<Coop> with a DeviceHandle).
#include "rma_test.cuh"

namespace gt {
namespace {

#define GT_SIZED_OPS(BITS)                                                                                     \
  struct SizedOps_##BITS {                                                                                     \
    using type = gshmem::dev::detail::SizedElem<BITS>::type;                                                   \
    using T = type;                                                                                            \
    static constexpr const char* name = "gshmem_*" #BITS;                                                      \
    static constexpr bool kP = false, kSignal = false, kI = true, kICoop = false;                              \
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
      gshmem_iput##BITS(d, s, ds, ss, n, pe);                                                                  \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void iget(const gshmem::DeviceHandle&, T* d, const T* s, long long ds, long long ss,     \
                                size_t n, int pe) {                                                            \
      gshmem_iget##BITS(d, s, ds, ss, n, pe);                                                                  \
    }                                                                                                          \
    template <typename C>                                                                                      \
    static __device__ void put_signal(const gshmem::DeviceHandle&, T*, const T*, size_t, uint64_t*, uint64_t,  \
                                      int, int) {}                                                             \
    template <typename C>                                                                                      \
    static __device__ void put_signal_nbi(const gshmem::DeviceHandle&, T*, const T*, size_t, uint64_t*,        \
                                          uint64_t, int, int) {}                                               \
  };
GT_SIZED_OPS(8)
GT_SIZED_OPS(16)
GT_SIZED_OPS(32)
GT_SIZED_OPS(64)
GT_SIZED_OPS(128)
#undef GT_SIZED_OPS

struct MemOps {
  using type = char;
  using T = char;
  static constexpr const char* name = "gshmem_*mem";
  static constexpr bool kP = false, kSignal = true, kI = false, kICoop = false;
  template <typename C>
  static __device__ void put(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {
    GT_SCOPED(C, gshmem_putmem, gshmemx_putmem_warp, gshmemx_putmem_block, d, s, n, pe);
  }
  template <typename C>
  static __device__ void get(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {
    GT_SCOPED(C, gshmem_getmem, gshmemx_getmem_warp, gshmemx_getmem_block, d, s, n, pe);
  }
  template <typename C>
  static __device__ void put_nbi(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {
    GT_SCOPED(C, gshmem_putmem_nbi, gshmemx_putmem_nbi_warp, gshmemx_putmem_nbi_block, d, s, n, pe);
  }
  template <typename C>
  static __device__ void get_nbi(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, int pe) {
    GT_SCOPED(C, gshmem_getmem_nbi, gshmemx_getmem_nbi_warp, gshmemx_getmem_nbi_block, d, s, n, pe);
  }
  template <typename C>
  static __device__ void iput(const gshmem::DeviceHandle&, T*, const T*, long long, long long, size_t, int) {}
  template <typename C>
  static __device__ void iget(const gshmem::DeviceHandle&, T*, const T*, long long, long long, size_t, int) {}
  template <typename C>
  static __device__ void put_signal(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, uint64_t* sig,
                                    uint64_t v, int op, int pe) {
    GT_SCOPED(C, gshmem_putmem_signal, gshmemx_putmem_signal_warp, gshmemx_putmem_signal_block, d, s, n, sig, v, op,
              pe);
  }
  template <typename C>
  static __device__ void put_signal_nbi(const gshmem::DeviceHandle&, T* d, const T* s, size_t n, uint64_t* sig,
                                        uint64_t v, int op, int pe) {
    GT_SCOPED(C, gshmem_putmem_signal_nbi, gshmemx_putmem_signal_nbi_warp, gshmemx_putmem_signal_nbi_block, d, s, n,
              sig, v, op, pe);
  }
};

namespace dev = gshmem::dev;
template <typename T_>
struct NativeOps {
  using type = T_;
  using T = T_;
  static constexpr const char* name = "gshmem::dev (native)";
  static constexpr bool kP = true, kSignal = true, kI = true, kICoop = true;
  static __device__ void p(const gshmem::DeviceHandle& h, T* d, T v, int pe) { dev::p(h, d, v, pe); }
  static __device__ T g(const gshmem::DeviceHandle& h, const T* s, int pe) { return dev::g(h, s, pe); }
  template <typename C>
  static __device__ void put(const gshmem::DeviceHandle& h, T* d, const T* s, size_t n, int pe) {
    dev::put<C>(h, d, s, n, pe);
  }
  template <typename C>
  static __device__ void get(const gshmem::DeviceHandle& h, T* d, const T* s, size_t n, int pe) {
    dev::get<C>(h, d, s, n, pe);
  }
  template <typename C>
  static __device__ void put_nbi(const gshmem::DeviceHandle& h, T* d, const T* s, size_t n, int pe) {
    dev::put_nbi<C>(h, d, s, n, pe);
  }
  template <typename C>
  static __device__ void get_nbi(const gshmem::DeviceHandle& h, T* d, const T* s, size_t n, int pe) {
    dev::get_nbi<C>(h, d, s, n, pe);
  }
  template <typename C>
  static __device__ void iput(const gshmem::DeviceHandle& h, T* d, const T* s, long long ds, long long ss, size_t n,
                              int pe) {
    dev::iput<C>(h, d, s, ds, ss, n, pe);
  }
  template <typename C>
  static __device__ void iget(const gshmem::DeviceHandle& h, T* d, const T* s, long long ds, long long ss, size_t n,
                              int pe) {
    dev::iget<C>(h, d, s, ds, ss, n, pe);
  }
  template <typename C>
  static __device__ void put_signal(const gshmem::DeviceHandle& h, T* d, const T* s, size_t n, uint64_t* sig,
                                    uint64_t v, int op, int pe) {
    dev::put_signal<C>(h, d, s, n, sig, v, op, pe);
  }
  template <typename C>
  static __device__ void put_signal_nbi(const gshmem::DeviceHandle& h, T* d, const T* s, size_t n, uint64_t* sig,
                                        uint64_t v, int op, int pe) {
    dev::put_signal_nbi<C>(h, d, s, n, sig, v, op, pe);
  }
};
}  // namespace

void rma_other_suite(Ctx& c) {
  RmaBuffers b = rma_buffers();
  rma_suite<SizedOps_8>(c, b);
  rma_suite<SizedOps_16>(c, b);
  rma_suite<SizedOps_32>(c, b);
  rma_suite<SizedOps_64>(c, b);
  rma_suite<SizedOps_128>(c, b);
  rma_suite<MemOps>(c, b);
  rma_suite<NativeOps<uint8_t>>(c, b);
  rma_suite<NativeOps<uint16_t>>(c, b);
  rma_suite<NativeOps<float>>(c, b);
  rma_suite<NativeOps<double>>(c, b);
  rma_suite<NativeOps<__half>>(c, b);
  rma_suite<NativeOps<gshmem::dev::detail::Bits128>>(c, b);
  rma_free(b);
}

}  // namespace gt
