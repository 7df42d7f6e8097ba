// The C API's typed and sized stream-ordered calls beyond put/get/p/put_signal (those are in c_api.cpp), the sized
// put<N>_signal host calls, and the typed stream waits. Generated from the type lists of gshmem.h, as in c_api.cpp.
#include <cstring>
#include <type_traits>

#include "api/guard.hpp"
#include "gshmem/gshmem.h"
#include "gshmem/gshmem.hpp"
#include "runtime/error.hpp"

using namespace gshmem;
using gshmem::api::fatal_on_error;

namespace {
template <typename T>
std::uint64_t bits(T v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <typename T>
constexpr host::Wait wait_kind() {
  if constexpr (sizeof(T) == 2) return std::is_signed_v<T> ? host::Wait::I16 : host::Wait::U16;
  else if constexpr (sizeof(T) == 4) return std::is_signed_v<T> ? host::Wait::I32 : host::Wait::U32;
  else return std::is_signed_v<T> ? host::Wait::I64 : host::Wait::U64;
}
}  // namespace

extern "C" {

// ---- sized: put<N>_signal[_nbi] (host), and the stream-ordered forms ----
#define GSHMEMI_DEF_SIZED_MORE(BITS)                                                                           \
  void gshmem_put##BITS##_signal(void* dest, const void* source, size_t nelems, uint64_t* sig_addr,            \
                                 uint64_t signal, int sig_op, int pe) {                                        \
    fatal_on_error("gshmem_put" #BITS "_signal", [&] {                                                         \
      host::putmem_signal(dest, source, nelems * (BITS / 8), sig_addr, signal, sig_op, pe, false,              \
                          "gshmem_put" #BITS "_signal");                                                       \
    });                                                                                                        \
  }                                                                                                            \
  void gshmem_put##BITS##_signal_nbi(void* dest, const void* source, size_t nelems, uint64_t* sig_addr,        \
                                     uint64_t signal, int sig_op, int pe) {                                    \
    fatal_on_error("gshmem_put" #BITS "_signal_nbi", [&] {                                                     \
      host::putmem_signal(dest, source, nelems * (BITS / 8), sig_addr, signal, sig_op, pe, true,               \
                          "gshmem_put" #BITS "_signal_nbi");                                                   \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_put##BITS##_on_stream(void* dest, const void* source, size_t nelems, int pe, gshmem_stream_t s) { \
    fatal_on_error("gshmemx_put" #BITS "_on_stream", [&] {                                                     \
      host::putmem_on_stream(dest, source, nelems * (BITS / 8), pe, s, "gshmemx_put" #BITS "_on_stream");      \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_get##BITS##_on_stream(void* dest, const void* source, size_t nelems, int pe, gshmem_stream_t s) { \
    fatal_on_error("gshmemx_get" #BITS "_on_stream", [&] {                                                     \
      host::getmem_on_stream(dest, source, nelems * (BITS / 8), pe, s, "gshmemx_get" #BITS "_on_stream");      \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_put##BITS##_nbi_on_stream(void* dest, const void* source, size_t nelems, int pe,                \
                                         gshmem_stream_t s) {                                                  \
    fatal_on_error("gshmemx_put" #BITS "_nbi_on_stream", [&] {                                                 \
      host::putmem_on_stream(dest, source, nelems * (BITS / 8), pe, s, "gshmemx_put" #BITS "_nbi_on_stream");  \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_get##BITS##_nbi_on_stream(void* dest, const void* source, size_t nelems, int pe,                \
                                         gshmem_stream_t s) {                                                  \
    fatal_on_error("gshmemx_get" #BITS "_nbi_on_stream", [&] {                                                 \
      host::getmem_on_stream(dest, source, nelems * (BITS / 8), pe, s, "gshmemx_get" #BITS "_nbi_on_stream");  \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_iput##BITS##_on_stream(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst,            \
                                      size_t nelems, int pe, gshmem_stream_t s) {                              \
    fatal_on_error("gshmemx_iput" #BITS "_on_stream", [&] {                                                    \
      host::iput_on_stream(dest, source, dst, sst, BITS / 8, nelems, pe, s, "gshmemx_iput" #BITS "_on_stream"); \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_iget##BITS##_on_stream(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst,            \
                                      size_t nelems, int pe, gshmem_stream_t s) {                              \
    fatal_on_error("gshmemx_iget" #BITS "_on_stream", [&] {                                                    \
      host::iget_on_stream(dest, source, dst, sst, BITS / 8, nelems, pe, s, "gshmemx_iget" #BITS "_on_stream"); \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_put##BITS##_signal_on_stream(void* dest, const void* source, size_t nelems, uint64_t* sig_addr, \
                                            uint64_t signal, int sig_op, int pe, gshmem_stream_t s) {          \
    fatal_on_error("gshmemx_put" #BITS "_signal_on_stream", [&] {                                              \
      host::putmem_signal_on_stream(dest, source, nelems * (BITS / 8), sig_addr, signal, sig_op, pe, s,        \
                                    "gshmemx_put" #BITS "_signal_on_stream");                                  \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_put##BITS##_signal_nbi_on_stream(void* dest, const void* source, size_t nelems,                 \
                                                uint64_t* sig_addr, uint64_t signal, int sig_op, int pe,       \
                                                gshmem_stream_t s) {                                           \
    fatal_on_error("gshmemx_put" #BITS "_signal_nbi_on_stream", [&] {                                          \
      host::putmem_signal_on_stream(dest, source, nelems * (BITS / 8), sig_addr, signal, sig_op, pe, s,        \
                                    "gshmemx_put" #BITS "_signal_nbi_on_stream");                              \
    });                                                                                                        \
  }
GSHMEMI_DEF_SIZED_MORE(8)
GSHMEMI_DEF_SIZED_MORE(16)
GSHMEMI_DEF_SIZED_MORE(32)
GSHMEMI_DEF_SIZED_MORE(64)
GSHMEMI_DEF_SIZED_MORE(128)

// ---- typed stream-ordered forms ----
#define GSHMEMI_DEF_RMA_STREAM_MORE(T, N)                                                                      \
  void gshmemx_##N##_put_signal_nbi_on_stream(T* dest, const T* source, size_t nelems, uint64_t* sig_addr,     \
                                              uint64_t signal, int sig_op, int pe, gshmem_stream_t s) {        \
    fatal_on_error("gshmemx_" #N "_put_signal_nbi_on_stream", [&] {                                            \
      host::putmem_signal_on_stream(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, s,         \
                                    "gshmemx_" #N "_put_signal_nbi_on_stream");                                \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_##N##_put_nbi_on_stream(T* dest, const T* source, size_t nelems, int pe, gshmem_stream_t s) {   \
    fatal_on_error("gshmemx_" #N "_put_nbi_on_stream", [&] {                                                   \
      host::putmem_on_stream(dest, source, nelems * sizeof(T), pe, s, "gshmemx_" #N "_put_nbi_on_stream");     \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_##N##_get_nbi_on_stream(T* dest, const T* source, size_t nelems, int pe, gshmem_stream_t s) {   \
    fatal_on_error("gshmemx_" #N "_get_nbi_on_stream", [&] {                                                   \
      host::getmem_on_stream(dest, source, nelems * sizeof(T), pe, s, "gshmemx_" #N "_get_nbi_on_stream");     \
    });                                                                                                        \
  }                                                                                                            \
  T gshmemx_##N##_g_on_stream(const T* source, int pe, gshmem_stream_t s) {                                    \
    return fatal_on_error("gshmemx_" #N "_g_on_stream", [&] {                                                  \
      T v{};                                                                                                   \
      host::g_on_stream(&v, source, sizeof(T), pe, s, "gshmemx_" #N "_g_on_stream");                           \
      return v;                                                                                                \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_##N##_iput_on_stream(T* dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,     \
                                    int pe, gshmem_stream_t s) {                                               \
    fatal_on_error("gshmemx_" #N "_iput_on_stream", [&] {                                                      \
      host::iput_on_stream(dest, source, dst, sst, sizeof(T), nelems, pe, s, "gshmemx_" #N "_iput_on_stream"); \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_##N##_iget_on_stream(T* dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,     \
                                    int pe, gshmem_stream_t s) {                                               \
    fatal_on_error("gshmemx_" #N "_iget_on_stream", [&] {                                                      \
      host::iget_on_stream(dest, source, dst, sst, sizeof(T), nelems, pe, s, "gshmemx_" #N "_iget_on_stream"); \
    });                                                                                                        \
  }
GSHMEM_RMA_TYPES(GSHMEMI_DEF_RMA_STREAM_MORE)

// ---- typed stream waits ----
#define GSHMEMI_DEF_WAIT_STREAM(T, N)                                                                          \
  void gshmemx_##N##_wait_until_on_stream(T* ivar, int cmp, T cmp_value, gshmem_stream_t s) {                  \
    fatal_on_error("gshmemx_" #N "_wait_until_on_stream", [&] {                                                \
      host::wait_until_on_stream(ivar, wait_kind<T>(), cmp, bits(cmp_value), s,                                \
                                 "gshmemx_" #N "_wait_until_on_stream");                                       \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_##N##_wait_until_all_on_stream(T* ivars, size_t nelems, const int* status, int cmp,             \
                                              T cmp_value, gshmem_stream_t s) {                                \
    fatal_on_error("gshmemx_" #N "_wait_until_all_on_stream", [&] {                                            \
      host::wait_until_all_on_stream(ivars, nelems, status, wait_kind<T>(), cmp, bits(cmp_value), nullptr, s,  \
                                     "gshmemx_" #N "_wait_until_all_on_stream");                               \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_##N##_wait_until_all_vector_on_stream(T* ivars, size_t nelems, const int* status, int cmp,      \
                                                     T* cmp_values, gshmem_stream_t s) {                       \
    fatal_on_error("gshmemx_" #N "_wait_until_all_vector_on_stream", [&] {                                     \
      if (!cmp_values && nelems)                                                                               \
        fail(GSHMEM_ERROR_INVALID_VALUE, "gshmemx_" #N "_wait_until_all_vector_on_stream: cmp_values is NULL. " \
             "Fix: pass an array of nelems comparison values in device-accessible memory");                    \
      host::wait_until_all_on_stream(ivars, nelems, status, wait_kind<T>(), cmp, 0, cmp_values, s,             \
                                     "gshmemx_" #N "_wait_until_all_vector_on_stream");                        \
    });                                                                                                        \
  }
GSHMEM_WAIT_TYPES(GSHMEMI_DEF_WAIT_STREAM)

}  // extern "C"
