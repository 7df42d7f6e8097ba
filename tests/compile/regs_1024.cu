// Kernels shaped like users' (and gshmem-bench's) 1024-thread kernels, each calling the device API the way those
// do: a loop of non-blocking puts/gets at rotating offsets in thread, warp and block scope, put+signal, barriers,
// atomics, collectives, declared __launch_bounds__(1024) as a 1024-thread kernel should be. Compiled (not run) by regs_check.py, which
// fails when any of them needs more than 64 registers per thread (it could not launch with 1024 threads: "too
// many resources requested for launch") or spills to fit. The device API is inlined into the caller, so its
// register appetite is the caller's; a copy change that raised gshmem-bench's kernels to 68-80 registers on sm_90
// spills here.
#include <gshmem/device.cuh>

namespace {

enum Scope { kThread, kWarp, kBlock };

template <int S, bool GET>
__device__ __forceinline__ void transfer(char* d, const char* s, size_t n, int pe) {
  if constexpr (S == kBlock) {
    if constexpr (GET) gshmemx_getmem_nbi_block(d, s, n, pe);
    else gshmemx_putmem_nbi_block(d, s, n, pe);
  } else if constexpr (S == kWarp) {
    if constexpr (GET) gshmemx_getmem_nbi_warp(d, s, n, pe);
    else gshmemx_putmem_nbi_warp(d, s, n, pe);
  } else {
    if constexpr (GET) gshmem_getmem_nbi(d, s, n, pe);
    else gshmem_putmem_nbi(d, s, n, pe);
  }
}

template <int S>
__device__ __forceinline__ size_t unit() {
  if constexpr (S == kBlock) return blockIdx.x;
  else if constexpr (S == kWarp) return (size_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  else return size_t(blockIdx.x) * blockDim.x + threadIdx.x;
}

// One slice per unit, `iters` messages at (i % slots) * stride, then quiet.
template <int S, bool GET>
__global__ void __launch_bounds__(1024) rma_loop(char* dst, const char* src, size_t bytes, size_t chunk, int pe, unsigned long long iters,
                         size_t stride, unsigned long long slots) {
  const size_t first = unit<S>() * chunk;
  if (first < bytes) {
    const size_t n = chunk < bytes - first ? chunk : bytes - first;
    for (unsigned long long i = 0; i < iters; ++i) {
      const size_t off = first + size_t(i % slots) * stride;
      transfer<S, GET>(dst + off, src + off, n, pe);
    }
  }
  gshmem_quiet();
}

// All-to-all: every unit visits every other PE, staggered.
template <int S, bool GET>
__global__ void __launch_bounds__(1024) rma_all(char* dst, const char* src, size_t bytes, size_t chunk, unsigned long long iters,
                        size_t stride) {
  const int me = gshmem_my_pe(), npes = gshmem_n_pes();
  const size_t u = unit<S>(), first = u * chunk;
  if (first < bytes && npes > 1) {
    const size_t n = chunk < bytes - first ? chunk : bytes - first;
    for (unsigned long long i = 0; i < iters; ++i)
      for (int k = 0; k < npes - 1; ++k) {
        const int pe = (me + 1 + int((u + k) % size_t(npes - 1))) % npes;
        transfer<S, GET>(dst + size_t(me) * stride + first, src + size_t(pe) * stride + first, n, pe);
      }
  }
  gshmem_quiet();
}

__global__ void __launch_bounds__(1024) signal_block(char* dst, const char* src, size_t bytes, uint64_t* sig, int pe, int rounds) {
  for (int r = 1; r <= rounds; ++r) {
    gshmemx_putmem_signal_nbi_block(dst, src, bytes, sig, uint64_t(r), GSHMEM_SIGNAL_SET, pe);
    if (threadIdx.x == 0) gshmem_signal_wait_until(sig + 1, GSHMEM_CMP_GE, uint64_t(r));
    __syncthreads();
  }
}

__global__ void __launch_bounds__(1024) signal_warp(char* dst, const char* src, size_t bytes, uint64_t* sig, int pe, int rounds) {
  for (int r = 1; r <= rounds; ++r)
    gshmemx_putmem_signal_nbi_warp(dst + threadIdx.x / 32 * bytes, src, bytes, sig, 1, GSHMEM_SIGNAL_ADD, pe);
}

__global__ void __launch_bounds__(1024) barriers(int rounds) {
  for (int r = 0; r < rounds; ++r) {
    gshmemx_barrier_all_block();
    gshmemx_sync_all_block();
    gshmemx_barrier_all_warp();
    if (threadIdx.x == 0) gshmem_barrier_all();
    __syncthreads();
  }
}

__global__ void __launch_bounds__(1024) amo(unsigned long long* a, int pe, int rounds, unsigned long long* out) {
  unsigned long long acc = 0;
  for (int r = 0; r < rounds; ++r) acc += gshmem_ulonglong_atomic_fetch_add(a, 1ull, pe);
  out[threadIdx.x] = acc;
}

// Collectives, one per kernel as users call them (a reduction in place too), at warp and block scope (the warp forms
// on warp 0), and the thread scope's fcollect / alltoall / broadcast. The reductions' device forms keep the
// element loop to fit here (coll::ReducePass; the stream kernels' wide form spilled 280-420 bytes). Not checked:
// the thread scope's reductions, which spill 8-16 bytes stored / 40-72 loaded on sm_80 in a 1024-thread kernel
// (main did before the rewrite too; one thread reducing for a whole 1024-thread block is not a shape to tune for).
enum Coll { kReduce, kReduceInPlace, kReduceHalf, kReduceXor, kReduceScatter, kFcollect, kAlltoall, kBroadcast };

template <int S, int C>
__global__ void __launch_bounds__(1024) coll(float* d, const float* s, __half* hd, const __half* hs, uint64_t* ud,
                                             const uint64_t* us, size_t n) {
  if constexpr (S == kThread) {
    if (threadIdx.x != 0) return;
  } else if constexpr (S == kWarp) {
    if (threadIdx.x >= 32) return;
  }
#define REGS_COLL(call, ...)                                             \
  if constexpr (S == kBlock) gshmemx_##call##_block(__VA_ARGS__);        \
  else if constexpr (S == kWarp) gshmemx_##call##_warp(__VA_ARGS__);    \
  else gshmem_##call(__VA_ARGS__);
  if constexpr (C == kReduce) { REGS_COLL(float_sum_reduce, GSHMEM_TEAM_WORLD, d, s, n) }
  else if constexpr (C == kReduceInPlace) { REGS_COLL(float_sum_reduce, GSHMEM_TEAM_WORLD, d, d, n) }
  else if constexpr (C == kReduceHalf) { REGS_COLL(half_max_reduce, GSHMEM_TEAM_WORLD, hd, hs, n) }
  else if constexpr (C == kReduceXor) { REGS_COLL(uint64_xor_reduce, GSHMEM_TEAM_WORLD, ud, us, n) }
  else if constexpr (C == kReduceScatter) { REGS_COLL(float_sum_reducescatter, GSHMEM_TEAM_WORLD, d, s, n) }
  else if constexpr (C == kFcollect) { REGS_COLL(float_fcollect, GSHMEM_TEAM_WORLD, d, s, n) }
  else if constexpr (C == kAlltoall) { REGS_COLL(float_alltoall, GSHMEM_TEAM_WORLD, d, s, n) }
  else { REGS_COLL(float_broadcast, GSHMEM_TEAM_WORLD, d, s, n, 0) }
#undef REGS_COLL
}

template <int S>
void coll_instantiate(void** k) {
  k[0] = reinterpret_cast<void*>(&coll<S, kFcollect>);
  k[1] = reinterpret_cast<void*>(&coll<S, kAlltoall>);
  k[2] = reinterpret_cast<void*>(&coll<S, kBroadcast>);
  if constexpr (S != kThread) {
    k[3] = reinterpret_cast<void*>(&coll<S, kReduce>);
    k[4] = reinterpret_cast<void*>(&coll<S, kReduceInPlace>);
    k[5] = reinterpret_cast<void*>(&coll<S, kReduceHalf>);
    k[6] = reinterpret_cast<void*>(&coll<S, kReduceXor>);
    k[7] = reinterpret_cast<void*>(&coll<S, kReduceScatter>);
  }
}

}  // namespace

// Referenced from host code so every instantiation is compiled.
void regs_1024_instantiate() {
  void* k[] = {
      reinterpret_cast<void*>(&rma_loop<kThread, false>), reinterpret_cast<void*>(&rma_loop<kThread, true>),
      reinterpret_cast<void*>(&rma_loop<kWarp, false>),   reinterpret_cast<void*>(&rma_loop<kWarp, true>),
      reinterpret_cast<void*>(&rma_loop<kBlock, false>),  reinterpret_cast<void*>(&rma_loop<kBlock, true>),
      reinterpret_cast<void*>(&rma_all<kThread, false>),  reinterpret_cast<void*>(&rma_all<kThread, true>),
      reinterpret_cast<void*>(&rma_all<kWarp, false>),    reinterpret_cast<void*>(&rma_all<kWarp, true>),
      reinterpret_cast<void*>(&rma_all<kBlock, false>),   reinterpret_cast<void*>(&rma_all<kBlock, true>),
      reinterpret_cast<void*>(&signal_block),             reinterpret_cast<void*>(&signal_warp),
      reinterpret_cast<void*>(&barriers),                 reinterpret_cast<void*>(&amo)};
  void* c[3][8];
  coll_instantiate<kThread>(c[0]);
  coll_instantiate<kWarp>(c[1]);
  coll_instantiate<kBlock>(c[2]);
  (void)k;
  (void)c;
}
