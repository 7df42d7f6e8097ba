// One scope's device forms of the reductions for mp_collectives_gpu: included by collectives_gpu_red_<scope>.cu
// with MPC_RED_SCOPE set to kThread, kWarp or kBlock. One small kernel per (type, op), not one kernel holding them
// all (bench/NOTES.md entry 26).
#pragma once

#include "collectives_gpu.cuh"

namespace mpcg {
namespace {
// Thread scope: thread 0 calls; warp scope: warp 0 calls; block scope: every thread. ret[0] = thread 0's result.
template <typename T, int S, Op O>
__global__ void red_kernel(bool scatter, gshmem_team_t t, typename RedCall<T>::C* d,
                           const typename RedCall<T>::C* s, size_t n, int* ret) {
  const int tid = static_cast<int>(threadIdx.x);
  if ((S == kThread && tid != 0) || (S == kWarp && tid >= 32)) return;
  const int r = RedCall<T>::template dev<S, O>(scatter, t, d, s, n);
  if (tid == 0) *ret = r;
}
}  // namespace

template <typename T, int S>
void launch_red(Op op, bool scatter, gshmem_team_t t, T* d, const T* s, size_t n, int* ret, cudaStream_t stream) {
  using C = typename RedCall<T>::C;
  C* dc = reinterpret_cast<C*>(d);
  const C* sc = reinterpret_cast<const C*>(s);
  switch (op) {
#define MPC_LAUNCH(O)                                                                                          \
  case Op::O:                                                                                                  \
    red_kernel<T, S, Op::O><<<1, 256, 0, stream>>>(scatter, t, dc, sc, n, ret);                               \
    break;
    MPC_LAUNCH(And) MPC_LAUNCH(Or) MPC_LAUNCH(Xor) MPC_LAUNCH(Max) MPC_LAUNCH(Min) MPC_LAUNCH(Sum) MPC_LAUNCH(Prod)
#undef MPC_LAUNCH
  }
}

template void launch_red<int, MPC_RED_SCOPE>(Op, bool, gshmem_team_t, int*, const int*, size_t, int*, cudaStream_t);
template void launch_red<unsigned int, MPC_RED_SCOPE>(Op, bool, gshmem_team_t, unsigned int*, const unsigned int*,
                                                      size_t, int*, cudaStream_t);
template void launch_red<float, MPC_RED_SCOPE>(Op, bool, gshmem_team_t, float*, const float*, size_t, int*,
                                               cudaStream_t);
template void launch_red<double, MPC_RED_SCOPE>(Op, bool, gshmem_team_t, double*, const double*, size_t, int*,
                                                cudaStream_t);
template void launch_red<Half16, MPC_RED_SCOPE>(Op, bool, gshmem_team_t, Half16*, const Half16*, size_t, int*,
                                                cudaStream_t);
template void launch_red<Bf16, MPC_RED_SCOPE>(Op, bool, gshmem_team_t, Bf16*, const Bf16*, size_t, int*,
                                              cudaStream_t);
}  // namespace mpcg
