// mp_collectives_gpu's shared part: the test's half / bfloat16 conversions, the scopes, and the reductions by name
// (RedCall). The device forms of the reductions are compiled one scope per file (collectives_gpu_red_{thread,warp,
// block}.cu through collectives_gpu_red.cuh), so the build runs them side by side; collectives_gpu.cu holds the
// rest and the cases.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "collectives_check.hpp"
#include "cuda_check.cuh"
#include "gshmem/device.cuh"

using namespace mpc;

// The test's half and bfloat16 (bit patterns) through CUDA's host conversions.
template <typename B, typename C>
B to_bits(C v) {
  B b;
  std::memcpy(static_cast<void*>(&b), static_cast<const void*>(&v), sizeof b);
  return b;
}
template <>
struct mpc::F16<mpc::Half16> {
  using Cuda = __half;
  static float to_float(Half16 v) { return __half2float(to_bits<__half>(v)); }
  static Half16 from_float(float f) { return to_bits<Half16>(__float2half_rn(f)); }
};
template <>
struct mpc::F16<mpc::Bf16> {
  using Cuda = __nv_bfloat16;
  static float to_float(Bf16 v) { return __bfloat162float(to_bits<__nv_bfloat16>(v)); }
  static Bf16 from_float(float f) { return to_bits<Bf16>(__float2bfloat16_rn(f)); }
};

namespace mpcg {
using namespace mpc;

enum : int { kThread = 0, kWarp = 1, kBlock = 2 };

// Reductions by name: the device forms of each scope and the _on_stream forms, for the types the test uses. One
// small kernel per (type, scope, op) (red_kernel): a kernel holding every op and scope of a type inlined made ptxas
// and NVVM take minutes on this file (bench/NOTES.md entry 26); the
// device forms are compiled in three more files, one per scope (collectives_gpu_red.cuh), side by side.
#define MPC_RED_IF(N, OP, O, PRE, SUF)                                                                         \
  if constexpr (O_ == Op::O)                                                                                  \
    return scatter ? PRE##N##_##OP##_reducescatter##SUF(t, d, s, n) : PRE##N##_##OP##_reduce##SUF(t, d, s, n);
#define MPC_RED_STANDARD(N, PRE, SUF)                                                                          \
  MPC_RED_IF(N, max, Max, PRE, SUF) MPC_RED_IF(N, min, Min, PRE, SUF)                                         \
  MPC_RED_IF(N, sum, Sum, PRE, SUF) MPC_RED_IF(N, prod, Prod, PRE, SUF)
#define MPC_RED_BITWISE(N, PRE, SUF)                                                                           \
  MPC_RED_IF(N, and, And, PRE, SUF) MPC_RED_IF(N, or, Or, PRE, SUF) MPC_RED_IF(N, xor, Xor, PRE, SUF)
#define MPC_RED_NONE(N, PRE, SUF)
// The device form of op O_ at scope S_ (kThread / kWarp / kBlock), or -2 where the type has no such op.
#define MPC_RED_DEV(N, BITWISE)                                                                                \
  template <int S_, Op O_>                                                                                     \
  static __device__ int dev(bool scatter, gshmem_team_t t, C* d, const C* s, size_t n) {                      \
    if constexpr (S_ == kThread) {                                                                             \
      MPC_RED_STANDARD(N, gshmem_, )                                                                           \
      BITWISE(N, gshmem_, )                                                                                    \
    } else if constexpr (S_ == kWarp) {                                                                        \
      MPC_RED_STANDARD(N, gshmemx_, _warp)                                                                     \
      BITWISE(N, gshmemx_, _warp)                                                                              \
    } else {                                                                                                   \
      MPC_RED_STANDARD(N, gshmemx_, _block)                                                                    \
      BITWISE(N, gshmemx_, _block)                                                                             \
    }                                                                                                          \
    return -2;                                                                                                 \
  }
#define MPC_STREAM_CASE(N, OP, O)                                                                              \
  case Op::O:                                                                                                  \
    return scatter ? gshmemx_##N##_##OP##_reducescatter_on_stream(t, d, s, n, st)                          \
                   : gshmemx_##N##_##OP##_reduce_on_stream(t, d, s, n, st);
#define MPC_STREAM_ALL(N)                                                                                      \
  static int on_stream(Op op, bool scatter, gshmem_team_t t, C* d, const C* s, size_t n, cudaStream_t st) {                 \
    switch (op) {                                                                                              \
      MPC_STREAM_CASE(N, max, Max) MPC_STREAM_CASE(N, min, Min)                                               \
      MPC_STREAM_CASE(N, sum, Sum) MPC_STREAM_CASE(N, prod, Prod)                                             \
      default: return -2;                                                                                      \
    }                                                                                                          \
  }
// RedCall<T>: C is the type the library's names take (CUDA's for half / bfloat16, whose test types are bit
// patterns of the same size).
template <typename T>
struct RedCall;
#define MPC_RED_CALL(T, N, BITWISE)                                                                            \
  template <>                                                                                                  \
  struct RedCall<T> {                                                                                          \
    using C = T;                                                                                               \
    MPC_RED_DEV(N, BITWISE)                                                                                    \
    MPC_STREAM_ALL(N)                                                                                          \
  };
MPC_RED_CALL(int, int, MPC_RED_NONE)
MPC_RED_CALL(float, float, MPC_RED_NONE)
MPC_RED_CALL(double, double, MPC_RED_NONE)
MPC_RED_CALL(unsigned int, uint, MPC_RED_BITWISE)
#undef MPC_RED_CALL
// half / bfloat16: the test's bit-pattern types passed as CUDA's, by the typed names of every form (and the host
// blocking form by name, Mode::HostNamed).
#define MPC_RED_CALL_F16(T, N)                                                                                 \
  template <>                                                                                                  \
  struct RedCall<T> {                                                                                          \
    using C = F16<T>::Cuda;                                                                                    \
    MPC_RED_DEV(N, MPC_RED_NONE)                                                                               \
    MPC_STREAM_ALL(N)                                                                                          \
    static int host(Op op, bool scatter, gshmem_team_t t, C* d, const C* s, size_t n) {                        \
      switch (op) {                                                                                            \
        MPC_STREAM_CASE_HOST(N, max, Max) MPC_STREAM_CASE_HOST(N, min, Min)                                   \
        MPC_STREAM_CASE_HOST(N, sum, Sum) MPC_STREAM_CASE_HOST(N, prod, Prod)                                 \
        default: return -2;                                                                                    \
      }                                                                                                        \
    }                                                                                                          \
  };
#define MPC_STREAM_CASE_HOST(N, OP, O)                                                                         \
  case Op::O:                                                                                                  \
    return scatter ? gshmem_##N##_##OP##_reducescatter(t, d, s, n) : gshmem_##N##_##OP##_reduce(t, d, s, n);
MPC_RED_CALL_F16(Half16, half)
MPC_RED_CALL_F16(Bf16, bfloat16)
#undef MPC_RED_CALL_F16
#undef MPC_STREAM_CASE_HOST
#undef MPC_STREAM_ALL
#undef MPC_STREAM_CASE
#undef MPC_RED_DEV
#undef MPC_RED_NONE
#undef MPC_RED_BITWISE
#undef MPC_RED_STANDARD
#undef MPC_RED_IF

// Launches the device form of `op` at scope S (kThread / kWarp / kBlock) in one kernel of one block of 256 threads
// on `stream`; *ret gets thread 0's result. Defined for S in collectives_gpu_red_*.cu.
template <typename T, int S>
void launch_red(Op op, bool scatter, gshmem_team_t t, T* d, const T* s, size_t n, int* ret, cudaStream_t stream);

}  // namespace mpcg
