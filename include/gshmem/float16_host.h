// gshmem's half and bfloat16 calls for translation units without gshmem's device API: a host compiler's (a pybind
// or torch extension's .cpp), or a CUDA source under NVSHMEM_HOSTLIB_ONLY. CUDA's __half and __nv_bfloat16 elements
// go to the library's sized and typeless entries (the C API, gshmem.h, has no CUDA types): the blocking forms
// (gshmem_half_p, gshmem_bfloat16_put, gshmem_half_sum_reduce, ...) and the stream-ordered ones
// (gshmemx_half_put_on_stream, ...). In other CUDA sources gshmem/device.cuh defines the same names (host and
// device; its host side makes the same calls), so this header is included only where that one is not: by
// <nvshmem_host.h> (gshmem/nvshmem), after <cuda_fp16.h> and <cuda_bf16.h>. C++ only.
#pragma once
#include <string.h> /* memcpy */

#if defined(GSHMEM_DEVICE_CUH)
#error "gshmem/float16_host.h: gshmem/device.cuh already defines these names for host and device"
#endif

// The 16-bit floating-point RMA types NVSHMEM adds to OpenSHMEM's list (X(TYPE, TYPENAME)), as device.cuh has them.
#define GSHMEM_HALF_RMA_TYPES(X) X(__half, half) X(__nv_bfloat16, bfloat16)

// Stream-ordered half/bfloat16 (host only): the 2-byte sized and ushort stream calls of the library.
#define GSHMEMI_H GSHMEMI_HOST_INLINE
#define GSHMEMI_HALF_STREAM(T, N)                                                                              \
  GSHMEMI_H void gshmemx_##N##_put_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {           \
    gshmemx_put16_on_stream(d, s, n, pe, st);                                                                  \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_get_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {           \
    gshmemx_get16_on_stream(d, s, n, pe, st);                                                                  \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_put_nbi_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {       \
    gshmemx_put16_nbi_on_stream(d, s, n, pe, st);                                                              \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_get_nbi_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {       \
    gshmemx_get16_nbi_on_stream(d, s, n, pe, st);                                                              \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_p_on_stream(T* d, const T v, int pe, cudaStream_t st) {                        \
    unsigned short b;                                                                                          \
    memcpy(&b, static_cast<const void*>(&v), sizeof b);                                                        \
    gshmemx_ushort_p_on_stream(reinterpret_cast<unsigned short*>(d), b, pe, st);                               \
  }                                                                                                            \
  GSHMEMI_H T gshmemx_##N##_g_on_stream(const T* s, int pe, cudaStream_t st) {                                \
    const unsigned short b = gshmemx_ushort_g_on_stream(reinterpret_cast<const unsigned short*>(s), pe, st);   \
    T v;                                                                                                       \
    memcpy(static_cast<void*>(&v), &b, sizeof v);                                                              \
    return v;                                                                                                  \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_iput_on_stream(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe, \
                                              cudaStream_t st) {                                               \
    gshmemx_iput16_on_stream(d, s, dst, sst, n, pe, st);                                                       \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_iget_on_stream(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe, \
                                              cudaStream_t st) {                                               \
    gshmemx_iget16_on_stream(d, s, dst, sst, n, pe, st);                                                       \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_put_signal_on_stream(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v,    \
                                                    int op, int pe, cudaStream_t st) {                         \
    gshmemx_put16_signal_on_stream(d, s, n, sig, v, op, pe, st);                                               \
  }                                                                                                            \
  GSHMEMI_H void gshmemx_##N##_put_signal_nbi_on_stream(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, \
                                                        int op, int pe, cudaStream_t st) {                     \
    gshmemx_put16_signal_nbi_on_stream(d, s, n, sig, v, op, pe, st);                                           \
  }
GSHMEM_HALF_RMA_TYPES(GSHMEMI_HALF_STREAM)
#undef GSHMEMI_HALF_STREAM
#undef GSHMEMI_H

#define GSHMEMI_F16_TYPE_half GSHMEMI_REDUCE_HALF
#define GSHMEMI_F16_TYPE_bfloat16 GSHMEMI_REDUCE_BFLOAT16
#define GSHMEMI_F16_OP_Max GSHMEMI_REDUCE_MAX
#define GSHMEMI_F16_OP_Min GSHMEMI_REDUCE_MIN
#define GSHMEMI_F16_OP_Sum GSHMEMI_REDUCE_SUM
#define GSHMEMI_F16_OP_Prod GSHMEMI_REDUCE_PROD
#define GSHMEMI_H GSHMEMI_HOST_INLINE
#define GSHMEMI_HALF_HOST_REDUCE(T, N, OP, O)                                                                  \
  GSHMEMI_H int gshmem_##N##_##OP##_reduce(gshmem_team_t team, T* d, const T* s, size_t n) {                  \
    return gshmemi_reduction(GSHMEMI_F16_OP_##O, GSHMEMI_F16_TYPE_##N, 0, team, d, s, n, 0, nullptr,          \
                             "gshmem_" #N "_" #OP "_reduce");                                                  \
  }                                                                                                            \
  GSHMEMI_H int gshmem_##N##_##OP##_reducescatter(gshmem_team_t team, T* d, const T* s, size_t n) {           \
    return gshmemi_reduction(GSHMEMI_F16_OP_##O, GSHMEMI_F16_TYPE_##N, 1, team, d, s, n, 0, nullptr,          \
                             "gshmem_" #N "_" #OP "_reducescatter");                                           \
  }                                                                                                            \
  GSHMEMI_H int gshmemx_##N##_##OP##_reduce_on_stream(gshmem_team_t team, T* d, const T* s, size_t n,         \
                                                      cudaStream_t st) {                                       \
    return gshmemi_reduction(GSHMEMI_F16_OP_##O, GSHMEMI_F16_TYPE_##N, 0, team, d, s, n, 1, st,               \
                             "gshmemx_" #N "_" #OP "_reduce_on_stream");                                       \
  }                                                                                                            \
  GSHMEMI_H int gshmemx_##N##_##OP##_reducescatter_on_stream(gshmem_team_t team, T* d, const T* s, size_t n,  \
                                                             cudaStream_t st) {                                \
    return gshmemi_reduction(GSHMEMI_F16_OP_##O, GSHMEMI_F16_TYPE_##N, 1, team, d, s, n, 1, st,               \
                             "gshmemx_" #N "_" #OP "_reducescatter_on_stream");                                \
  }
#define GSHMEMI_HALF_HOST(T, N)                                                                                \
  GSHMEMI_H void gshmem_##N##_p(T* d, T v, int pe) { gshmem_putmem(d, &v, sizeof(T), pe); }                   \
  GSHMEMI_H T gshmem_##N##_g(const T* s, int pe) {                                                            \
    T v;                                                                                                       \
    gshmem_getmem(&v, s, sizeof(T), pe);                                                                       \
    return v;                                                                                                  \
  }                                                                                                            \
  GSHMEMI_H void gshmem_##N##_put(T* d, const T* s, size_t n, int pe) { gshmem_put16(d, s, n, pe); }          \
  GSHMEMI_H void gshmem_##N##_get(T* d, const T* s, size_t n, int pe) { gshmem_get16(d, s, n, pe); }          \
  GSHMEMI_H void gshmem_##N##_put_nbi(T* d, const T* s, size_t n, int pe) { gshmem_put16_nbi(d, s, n, pe); }  \
  GSHMEMI_H void gshmem_##N##_get_nbi(T* d, const T* s, size_t n, int pe) { gshmem_get16_nbi(d, s, n, pe); }  \
  GSHMEMI_H void gshmem_##N##_iput(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {        \
    gshmem_iput16(d, s, dst, sst, n, pe);                                                                      \
  }                                                                                                            \
  GSHMEMI_H void gshmem_##N##_iget(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {        \
    gshmem_iget16(d, s, dst, sst, n, pe);                                                                      \
  }                                                                                                            \
  GSHMEMI_H void gshmem_##N##_put_signal(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) { \
    gshmem_putmem_signal(d, s, n * sizeof(T), sig, v, op, pe);                                                 \
  }                                                                                                            \
  GSHMEMI_H void gshmem_##N##_put_signal_nbi(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, int op,   \
                                             int pe) {                                                         \
    gshmem_putmem_signal_nbi(d, s, n * sizeof(T), sig, v, op, pe);                                             \
  }                                                                                                            \
  GSHMEMI_H int gshmem_##N##_broadcast(gshmem_team_t team, T* d, const T* s, size_t n, int root) {            \
    return gshmemi_collective(GSHMEMI_COLL_BROADCAST, team, d, s, n, sizeof(T), root, 1, 1, 0, nullptr,        \
                              "gshmem_" #N "_broadcast");                                                      \
  }                                                                                                            \
  GSHMEMI_H int gshmem_##N##_fcollect(gshmem_team_t team, T* d, const T* s, size_t n) {                       \
    return gshmemi_collective(GSHMEMI_COLL_FCOLLECT, team, d, s, n, sizeof(T), 0, 1, 1, 0, nullptr,            \
                              "gshmem_" #N "_fcollect");                                                       \
  }                                                                                                            \
  GSHMEMI_H int gshmem_##N##_alltoall(gshmem_team_t team, T* d, const T* s, size_t n) {                       \
    return gshmemi_collective(GSHMEMI_COLL_ALLTOALL, team, d, s, n, sizeof(T), 0, 1, 1, 0, nullptr,            \
                              "gshmem_" #N "_alltoall");                                                       \
  }                                                                                                            \
  GSHMEMI_H int gshmem_##N##_alltoalls(gshmem_team_t team, T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst,     \
                                       size_t n) {                                                             \
    return gshmemi_collective(GSHMEMI_COLL_ALLTOALLS, team, d, s, n, sizeof(T), 0, dst, sst, 0, nullptr,       \
                              "gshmem_" #N "_alltoalls");                                                      \
  }                                                                                                            \
  GSHMEMI_H int gshmemx_##N##_broadcast_on_stream(gshmem_team_t team, T* d, const T* s, size_t n, int root,    \
                                                  cudaStream_t st) {                                           \
    return gshmemi_collective(GSHMEMI_COLL_BROADCAST, team, d, s, n, sizeof(T), root, 1, 1, 1, st,             \
                              "gshmemx_" #N "_broadcast_on_stream");                                           \
  }                                                                                                            \
  GSHMEMI_H int gshmemx_##N##_fcollect_on_stream(gshmem_team_t team, T* d, const T* s, size_t n,              \
                                                 cudaStream_t st) {                                            \
    return gshmemi_collective(GSHMEMI_COLL_FCOLLECT, team, d, s, n, sizeof(T), 0, 1, 1, 1, st,                 \
                              "gshmemx_" #N "_fcollect_on_stream");                                            \
  }                                                                                                            \
  GSHMEMI_H int gshmemx_##N##_alltoall_on_stream(gshmem_team_t team, T* d, const T* s, size_t n,              \
                                                 cudaStream_t st) {                                            \
    return gshmemi_collective(GSHMEMI_COLL_ALLTOALL, team, d, s, n, sizeof(T), 0, 1, 1, 1, st,                 \
                              "gshmemx_" #N "_alltoall_on_stream");                                            \
  }                                                                                                            \
  GSHMEM_REDUCE_ARITH_OPS(GSHMEMI_HALF_HOST_REDUCE, T, N)
GSHMEM_HALF_RMA_TYPES(GSHMEMI_HALF_HOST)
#undef GSHMEMI_HALF_HOST
#undef GSHMEMI_HALF_HOST_REDUCE
#undef GSHMEMI_H
#undef GSHMEMI_F16_TYPE_half
#undef GSHMEMI_F16_TYPE_bfloat16
#undef GSHMEMI_F16_OP_Max
#undef GSHMEMI_F16_OP_Min
#undef GSHMEMI_F16_OP_Sum
#undef GSHMEMI_F16_OP_Prod
