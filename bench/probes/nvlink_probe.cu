// nvlink_probe: what the NVLink primitives under gshmem's device API cost on this machine, so that tuning
// decisions in the library rest on measurements (bench/NOTES.md, tuning log). Not a benchmark of gshmem: it uses
// no library at all, only two GPUs of one process with peer access, and measures
//   * flag ping-pong (one thread per GPU) with each way of storing and polling a flag,
//   * a 2-GPU barrier with each fence/flag choice,
//   * put+signal ping-pong of one CTA (1024 threads) with each way of ordering data before the signal,
//   * the cost of system-scope fences alone,
//   * one-CTA and many-CTA copy bandwidth into / out of the peer: SM loads/stores with 4, 8 or 16 16-byte
//     vectors in flight per thread, and Hopper bulk copies (TMA: cp.async.bulk via shared memory).
// Every copy is checked against the source afterwards. Build: nvcc -O3 -arch=sm_90 -std=c++17 nvlink_probe.cu
// (with -I include -I build/include: it uses the library's copy routine for the small-put rows)
// Run: ./nvlink_probe [--quick]. Never uses NVLink multicast.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gshmem/device.cuh"  // the library's device API (copy, signal, wait), for the small-put and signal rows
#include "gshmem/nvshmem/nvshmemx.h"
#include "../../src/transport/stream_kernel.cuh"  // the library's stream-kernel launcher (--stream-launch)

// The probe runs without the gshmem library: it publishes a hand-made device state itself (stride mode, 2 PEs,
// one per GPU of this process), so these registration hooks of the device headers have nothing to do.
extern "C" void gshmemi_register_device_state_setter(gshmemi_device_state_setter_t) {}
extern "C" void gshmemi_unregister_device_state_setter(gshmemi_device_state_setter_t) {}

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

namespace {

// ---- primitives ----
__device__ __forceinline__ void st_weak(volatile uint64_t* p, uint64_t v) {
  *p = v;
}
__device__ __forceinline__ void st_relaxed(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_release(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void red_release_add(uint64_t* p, uint64_t v) {
  asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void fence_sc() {
  asm volatile("fence.sc.sys;" ::: "memory");
}
__device__ __forceinline__ void fence_ar() {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}
__device__ __forceinline__ uint64_t ld_acquire(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint64_t ld_relaxed(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint64_t ld_volatile(const uint64_t* p) {
  return *reinterpret_cast<const volatile uint64_t*>(p);
}

// store kinds: 0 weak (volatile), 1 st.relaxed.sys, 2 st.release.sys, 3 fence.acq_rel + relaxed, 4 fence.sc + relaxed
template <int STORE>
__device__ __forceinline__ void store_flag(uint64_t* p, uint64_t v) {
  if constexpr (STORE == 0)
    st_weak(p, v);
  else if constexpr (STORE == 1)
    st_relaxed(p, v);
  else if constexpr (STORE == 2)
    st_release(p, v);
  else if constexpr (STORE == 3) {
    fence_ar();
    st_relaxed(p, v);
  } else {
    fence_sc();
    st_relaxed(p, v);
  }
}
// poll kinds: 0 ld.acquire.sys each try, 1 ld.relaxed.sys then one fence.acq_rel after, 2 volatile then fence,
// 3 ld.acquire.sys and a global-timer deadline check on every try (the library's bounded wait)
template <int POLL>
__device__ __forceinline__ void wait_ge(const uint64_t* p, uint64_t v) {
  if constexpr (POLL == 0) {
    while (ld_acquire(p) < v) {
    }
  } else if constexpr (POLL == 1) {
    while (ld_relaxed(p) < v) {
    }
    fence_ar();
  } else if constexpr (POLL == 3) {  // the library's wait: ld.acquire, and the global timer read on every try
    uint64_t t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (ld_acquire(p) < v) {
      uint64_t t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      if (t - t0 > 30000000000ull) __trap();
    }
  } else {
    while (ld_volatile(p) < v) {
    }
    fence_ar();
  }
}

template <int STORE, int POLL>
__global__ void pingpong_kernel(uint64_t* mine, uint64_t* theirs, int me, uint64_t base, int iters) {
  for (int i = 0; i < iters; ++i) {
    const uint64_t v = base + i + 1;
    if (me == 0) {
      store_flag<STORE>(theirs, v);
      wait_ge<POLL>(mine, v);
    } else {
      wait_ge<POLL>(mine, v);
      store_flag<STORE>(theirs, v);
    }
  }
}

// Barrier of 2: kinds 0 fence.sc + st.release (+epoch in global memory: the library's shape), 1 st.release,
// 2 fence.acq_rel + st.relaxed, 3 red.release.add, 4 st.release with epoch in global memory (RMW per barrier),
// 5 fence.sc + st.release with epoch in a register
template <int KIND>
__global__ void barrier_kernel(uint64_t* mine, uint64_t* theirs, uint64_t* epoch_mem, uint64_t base, int iters) {
  uint64_t epoch = base;
  for (int i = 0; i < iters; ++i) {
    if constexpr (KIND == 0 || KIND == 4) {
      if constexpr (KIND == 0) fence_sc();
      epoch = ++*epoch_mem;
      st_release(theirs, epoch);
    } else if constexpr (KIND == 1) {
      st_release(theirs, ++epoch);
    } else if constexpr (KIND == 2) {
      fence_ar();
      st_relaxed(theirs, ++epoch);
    } else if constexpr (KIND == 3) {
      red_release_add(theirs, 1);
      ++epoch;
    } else {
      fence_sc();
      st_release(theirs, ++epoch);
    }
    while (ld_acquire(mine) < epoch) {
    }
  }
}

// Candidate shapes for detail::copy (bench/NOTES.md entry 8; "rest a call" is what the library adopted): the
// one-vector case first with one combined condition and everything else (the library's copy_general) behind it,
// inlined, called, or with uniform-trip loops; or up to 4 vectors per thread straight-line before the call.
namespace cand {
// Uniform-trip form of detail::copy_elems: every thread of the group runs the same number of iterations (the trip
// count depends on n and size only) and each load and store is predicated on its index.
template <typename V, int U>
__device__ __forceinline__ void elems_u(V* d, const V* s, size_t n, int rank, int size) {
  const size_t step = size_t(U) * size;
  for (size_t base = 0; base < n; base += step) {
    V r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t j = base + rank + size_t(u) * size;
      if (j < n) r[u] = s[j];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const size_t j = base + rank + size_t(u) * size;
      if (j < n) d[j] = r[u];
    }
  }
}
// The rest of the copy: the library's general path (inline), or with UNIF the 16-byte case in uniform-trip loops.
template <bool UNIF = false>
__device__ __forceinline__ void general(char* d, const char* s, size_t bytes, int rank, int size) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(d) | reinterpret_cast<uintptr_t>(s) | bytes;
  if (UNIF && (a & 15) == 0)
    elems_u<uint4, 4>(reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(s), bytes / 16, rank, size);
  else
    gshmem::dev::detail::copy_general(d, s, bytes, rank, size);
}
// MODE 0: one-vector case first, the rest inlined; 1: the rest a call; 2: the rest inlined with uniform-trip
// loops; 3: up to 4 vectors per thread straight-line (predicated, no loop), the rest a call.
template <typename Coop, int MODE>
__device__ __forceinline__ void copy(void* dst, const void* src, size_t bytes) {
  const int rank = Coop::rank(), size = Coop::size();
  const uintptr_t a = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) | bytes;
  const size_t n = bytes / 16;
  if constexpr (MODE == 3) {
    if ((a & 15) == 0 && n <= 4 * static_cast<size_t>(size)) {
      uint4 r[4];
      const uint4* sv = static_cast<const uint4*>(src);
      uint4* dv = static_cast<uint4*>(dst);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const size_t j = static_cast<size_t>(rank) + static_cast<size_t>(u) * size;
        if (j < n) r[u] = sv[j];
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const size_t j = static_cast<size_t>(rank) + static_cast<size_t>(u) * size;
        if (j < n) dv[j] = r[u];
      }
      return;
    }
  } else {
    if ((a & 15) == 0 && n <= static_cast<size_t>(size)) {
      if (static_cast<size_t>(rank) < n)
        reinterpret_cast<uint4*>(dst)[rank] = reinterpret_cast<const uint4*>(src)[rank];
      return;
    }
  }
  if constexpr (MODE == 1 || MODE == 3)
    gshmem::dev::detail::copy_general_call(static_cast<char*>(dst), static_cast<const char*>(src), bytes, rank, size);
  else
    general<MODE == 2>(static_cast<char*>(dst), static_cast<const char*>(src), bytes, rank, size);
}
}  // namespace cand

// put+signal ping-pong, one CTA per GPU. ORDER 0: every thread fence.sc.sys, bar, thread 0 st.release (the
// library today); 1: bar, thread 0 fence.acq_rel + st.relaxed; 2: bar, thread 0 st.release; 3: bar, thread 0
// fence.sc + st.relaxed; 4: every warp: syncwarp, lane 0 fence.acq_rel, then bar, thread 0 st.relaxed; 5: as 2
// with the data moved by detail::copy<Block>; 6, 7: as 5 with cand::copy (rest inlined, rest a call); 8: as 5 with
// the library's bounded wait (timer read per poll).
template <int ORDER>
__device__ __forceinline__ void put_signal_block(char* dst, const char* src, size_t bytes, uint64_t* sig, uint64_t v) {
  __syncthreads();
  if constexpr (ORDER == 5 || ORDER == 8) {
    gshmem::dev::detail::copy<gshmem::dev::Block>(dst, src, bytes);
  } else if constexpr (ORDER == 6 || ORDER == 7 || ORDER == 9 || ORDER == 10) {
    cand::copy<gshmem::dev::Block, ORDER == 6 ? 0 : ORDER == 7 ? 1 : ORDER == 9 ? 2 : 3>(dst, src, bytes);
  } else {
    const size_t n = bytes / 16;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
      reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  }
  if constexpr (ORDER == 0) {
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) st_release(sig, v);
  } else if constexpr (ORDER == 4) {
    __syncwarp();
    if ((threadIdx.x & 31) == 0) fence_ar();
    __syncthreads();
    if (threadIdx.x == 0) st_relaxed(sig, v);
  } else {
    __syncthreads();
    if (threadIdx.x == 0) {
      if constexpr (ORDER == 1) {
        fence_ar();
        st_relaxed(sig, v);
      } else if constexpr (ORDER == 2 || ORDER >= 5)
        st_release(sig, v);
      else {
        fence_sc();
        st_relaxed(sig, v);
      }
    }
  }
  __syncthreads();
}

template <int ORDER>
__global__ __launch_bounds__(1024) void signal_pingpong_kernel(char* peer_dst, const char* src, size_t bytes,
                                                              uint64_t* peer_sig, uint64_t* my_sig, int me,
                                                              uint64_t base, int iters) {
  for (int i = 0; i < iters; ++i) {
    const uint64_t v = base + i + 1;
    if (me == 0) {
      put_signal_block<ORDER>(peer_dst, src, bytes, peer_sig, v);
      if (threadIdx.x == 0) wait_ge<ORDER == 8 ? 3 : 0>(my_sig, v);
      __syncthreads();
    } else {
      if (threadIdx.x == 0) wait_ge<ORDER == 8 ? 3 : 0>(my_sig, v);
      __syncthreads();
      put_signal_block<ORDER>(peer_dst, src, bytes, peer_sig, v);
    }
  }
}

// fence cost: KIND 0 fence.sc.sys, 1 fence.acq_rel.sys, 2 st.relaxed to the peer then fence.sc, 3 same with
// fence.acq_rel, 4 __threadfence() (gpu scope)
template <int KIND>
__global__ void fence_kernel(uint64_t* peer_word, int iters) {
  for (int i = 0; i < iters; ++i) {
    if constexpr (KIND == 0)
      fence_sc();
    else if constexpr (KIND == 1)
      fence_ar();
    else if constexpr (KIND == 2) {
      st_relaxed(peer_word, i);
      fence_sc();
    } else if constexpr (KIND == 3) {
      st_relaxed(peer_word, i);
      fence_ar();
    } else
      __threadfence();
  }
}

// ---- stream-ordered barrier pieces ----
__global__ void empty_kernel() {}
__global__ void copy_small_kernel(uint4* d, const uint4* s, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    d[i] = s[i];
}
// one launch = one barrier of 2: epoch passed by the host (no memory RMW)
__global__ void stream_barrier_kernel(uint64_t* mine, uint64_t* theirs, uint64_t epoch) {
  st_release(theirs, epoch);
  while (ld_acquire(mine) < epoch) {
  }
}

template <int KIND>
__global__ void amo_kernel(uint64_t* a, int iters, uint64_t* out) {
  uint64_t acc = 0;
  for (int i = 0; i < iters; ++i) {
    uint64_t r;
    if constexpr (KIND == 0)
      asm volatile("atom.relaxed.sys.add.u64 %0, [%1], 1;" : "=l"(r) : "l"(a) : "memory");
    else if constexpr (KIND == 1)
      asm volatile("atom.relaxed.gpu.add.u64 %0, [%1], 1;" : "=l"(r) : "l"(a) : "memory");
    else if constexpr (KIND == 3)
      asm volatile("atom.global.relaxed.sys.add.u64 %0, [%1], 1;" : "=l"(r) : "l"(a) : "memory");
    else
      r = atomicAdd(reinterpret_cast<unsigned long long*>(a), 1ull);
    acc += r;
  }
  *out = acc;
}

// ---- small puts, one message after another (as gshmem-bench's put_bw rows at 16 B .. 4 KiB) ----
// Message i: 16 bytes from s + i*4096 to d + i*4096 (fresh lines each time). KIND 0: plain 16-byte load/store,
// 1: ld.global.nc, 2: ld.global.cg, 3: gshmem's detail::copy<Thread>, 4: detail::copy<Warp> (whole warp calls),
// 5: plain, but the loop unrolled by 4 with the loads first (what a compiler can do when it may hoist loads).
template <int KIND>
__global__ void small_put_kernel(char* d, const char* s, int iters) {
  if constexpr (KIND == 4) {
    for (int i = 0; i < iters; ++i)
      gshmem::dev::detail::copy<gshmem::dev::Warp>(d + size_t(i) * 4096, s + size_t(i) * 4096, 16);
    return;
  }
  if (threadIdx.x != 0) return;
  if constexpr (KIND == 5) {
    for (int i = 0; i + 3 < iters; i += 4) {
      uint4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = *reinterpret_cast<const uint4*>(s + size_t(i + u) * 4096);
#pragma unroll
      for (int u = 0; u < 4; ++u) *reinterpret_cast<uint4*>(d + size_t(i + u) * 4096) = v[u];
    }
  } else {
    for (int i = 0; i < iters; ++i) {
      const uint4* src = reinterpret_cast<const uint4*>(s + size_t(i) * 4096);
      uint4* dst = reinterpret_cast<uint4*>(d + size_t(i) * 4096);
      if constexpr (KIND == 0)
        *dst = *src;
      else if constexpr (KIND == 1)
        *dst = __ldg(src);
      else if constexpr (KIND == 2)
        *dst = __ldcg(src);
      else if constexpr (KIND == 6) {
        uint4 v;
        asm volatile("ld.relaxed.gpu.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(src)
                     : "memory");
        *dst = v;
      } else if constexpr (KIND == 7) {
        uint4 v;
        asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(src));
        *dst = v;
      } else if constexpr (KIND == 8) {
        uint4 v;
        asm("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(src));
        asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
      } else
        gshmem::dev::detail::copy<gshmem::dev::Thread>(dst, src, 16);
    }
  }
}

// Block-scope small puts (gshmem-bench's put_bw/block rows at 16 B .. 4 KiB): 1024 threads, message i of `bytes`
// at i*4096, through the library's detail::copy<Block>. SYNC 0: no CTA barrier, 1: barrier before the copy only,
// 2: after only, 3: before and after (what putmem_nbi_block does to keep NVSHMEM's group semantics).
template <int SYNC>
__global__ void block_put_kernel(char* d, const char* s, size_t bytes, int iters) {
  for (int i = 0; i < iters; ++i) {
    if constexpr (SYNC == 1 || SYNC == 3) __syncthreads();
    gshmem::dev::detail::copy<gshmem::dev::Block>(d + size_t(i) * 4096, s + size_t(i) * 4096, bytes);
    if constexpr (SYNC == 2 || SYNC == 3) __syncthreads();
  }
}

// Block-scope small puts as gshmem-bench's put_bw/block rows issue them (1 CTA of 1024 threads, message i at
// i * stride, barrier before and after each as NVSHMEM's nbi block calls do), with the copy done four ways:
// KIND 0: gshmem's detail::copy<Block> inlined (what putmem_nbi_block compiles to); 1: a plain loop over
// const __restrict__ 16-byte vectors in a separate (noinline) function holding both barriers, the shape of a
// library call; 2: the same loop inlined; 3: detail::copy<Block>'s one-vector-per-thread path with the source read
// through ld.global.nc; 4: the same with ld.global.nc.L1::no_allocate; 5: plain ld.global.L1::no_allocate;
// 6: plain loads, one vector per thread, nothing else inlined; 7: detail::copy's fast path alone, with its rank and
// size (Block::rank/size over x, y, z) and checks; 8: detail::copy<Block>, then __syncwarp before the exit barrier
// (the divergent one-vector branch reconverged first). 7 and 8 split the gap between 0 and 6 (open question).
__device__ __noinline__ void restrict_copy_call(uint4* __restrict__ d, const uint4* __restrict__ s, size_t n) {
  __syncthreads();
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) d[i] = s[i];
  __syncthreads();
}
__device__ __forceinline__ void restrict_copy_inline(uint4* __restrict__ d, const uint4* __restrict__ s, size_t n) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) d[i] = s[i];
}
template <int KIND>
__global__ __launch_bounds__(1024) void block_put_study_kernel(char* d, const char* s, size_t bytes, size_t stride,
                                                              int iters) {
  for (int i = 0; i < iters; ++i) {
    char* dm = d + size_t(i) * stride;
    const char* sm = s + size_t(i) * stride;
    if constexpr (KIND == 1) {
      restrict_copy_call(reinterpret_cast<uint4*>(dm), reinterpret_cast<const uint4*>(sm), bytes / 16);
      continue;
    }
    __syncthreads();
    if constexpr (KIND == 0) {
      gshmem::dev::detail::copy<gshmem::dev::Block>(dm, sm, bytes);
    } else if constexpr (KIND == 2) {
      restrict_copy_inline(reinterpret_cast<uint4*>(dm), reinterpret_cast<const uint4*>(sm), bytes / 16);
    } else if constexpr (KIND == 3) {
      if (threadIdx.x < bytes / 16)
        reinterpret_cast<uint4*>(dm)[threadIdx.x] = __ldg(reinterpret_cast<const uint4*>(sm) + threadIdx.x);
    } else if constexpr (KIND == 7) {
      const int rank = gshmem::dev::Block::rank(), size = gshmem::dev::Block::size();
      const uintptr_t a = reinterpret_cast<uintptr_t>(dm) | reinterpret_cast<uintptr_t>(sm);
      const size_t n = bytes / 16;
      if ((a & 15) == 0 && (bytes & 15) == 0 && n <= size_t(size) && size_t(rank) < n)
        reinterpret_cast<uint4*>(dm)[rank] = reinterpret_cast<const uint4*>(sm)[rank];
    } else if constexpr (KIND == 8) {
      gshmem::dev::detail::copy<gshmem::dev::Block>(dm, sm, bytes);
      __syncwarp();
    } else if constexpr (KIND >= 9) {
      cand::copy<gshmem::dev::Block, KIND - 9>(dm, sm, bytes);
    } else if constexpr (KIND == 6) {
      if (threadIdx.x < bytes / 16)
        reinterpret_cast<uint4*>(dm)[threadIdx.x] = reinterpret_cast<const uint4*>(sm)[threadIdx.x];
    } else if (threadIdx.x < bytes / 16) {
      const uint4* src = reinterpret_cast<const uint4*>(sm) + threadIdx.x;
      uint4 v;
      if constexpr (KIND == 4)
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(src));
      else
        asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(src));
      reinterpret_cast<uint4*>(dm)[threadIdx.x] = v;
    }
    __syncthreads();
  }
}

// Warp-scope puts as gshmem-bench's put_bw/warp rows issue them (gshmem 0.90-0.94x NVSHMEM at 4 KiB): each warp of
// 1024 threads moves its own `bytes` per message at (i * 32 + warp) * bytes_slot, __syncwarp before and after.
// KIND 0: gshmem's detail::copy<Warp>; 1: the same 16-byte loop (4 vectors in flight per lane) with __ldg loads
// (ld.global.nc: what NVSHMEM's const __restrict__ copy loop compiles to); 2: a plain const __restrict__ loop
// (the shape of NVSHMEM's memcpy, compiler-chosen loads).
__device__ __forceinline__ void restrict_warp_copy(uint4* __restrict__ d, const uint4* __restrict__ s, size_t n,
                                                   int lane) {
  for (size_t j = lane; j < n; j += 32) d[j] = s[j];
}
template <int KIND>
__global__ __launch_bounds__(1024) void warp_put_study_kernel(char* d, const char* s, size_t bytes, size_t slot,
                                                             int iters) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int i = 0; i < iters; ++i) {
    const size_t off = (size_t(i) * 32 + warp) * slot;
    __syncwarp();
    if constexpr (KIND == 0) {
      gshmem::dev::detail::copy<gshmem::dev::Warp>(d + off, s + off, bytes);
    } else if constexpr (KIND == 1) {
      uint4* dv = reinterpret_cast<uint4*>(d + off);
      const uint4* sv = reinterpret_cast<const uint4*>(s + off);
      const size_t n = bytes / 16;
      size_t j = lane;
      for (; j + 96 < n; j += 128) {
        uint4 r[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) r[u] = __ldg(sv + j + 32 * u);
#pragma unroll
        for (int u = 0; u < 4; ++u) dv[j + 32 * u] = r[u];
      }
      for (; j < n; j += 32) dv[j] = __ldg(sv + j);
    } else if constexpr (KIND >= 3) {
      cand::copy<gshmem::dev::Warp, KIND - 3>(d + off, s + off, bytes);
    } else {
      restrict_warp_copy(reinterpret_cast<uint4*>(d + off), reinterpret_cast<const uint4*>(s + off), bytes / 16,
                         lane);
    }
    __syncwarp();
  }
}

// gshmem-bench's put_bw rows through the library's public calls (state published by hand, as api_signal_kernel):
// each unit (KIND 0: the CTA, block scope; 1: each warp, warp scope) puts its slice of a `bytes` message, message i
// at (i % slots) * stride, then quiet; the same loop shape as the bench's rma_bw_kernel. For comparing builds of
// the library against each other (build the probe once per variant of the headers).
template <int KIND>
__global__ __launch_bounds__(1024) void api_put_kernel(char* dst, const char* src, size_t bytes, size_t stride,
                                                     uint64_t slots, uint64_t iters, int peer) {
  const size_t units = KIND == 0 ? 1 : blockDim.x / 32;
  const size_t unit = KIND == 0 ? 0 : threadIdx.x / 32;
  const size_t chunk = (bytes + units - 1) / units;
  const size_t first = unit * chunk;
  if (first < bytes) {
    const size_t n = chunk < bytes - first ? chunk : bytes - first;
    for (uint64_t i = 0; i < iters; ++i) {
      const size_t off = first + size_t(i % slots) * stride;
      if constexpr (KIND == 0)
        nvshmemx_putmem_nbi_block(dst + off, src + off, n, peer);
      else
        nvshmemx_putmem_nbi_warp(dst + off, src + off, n, peer);
    }
  }
  nvshmem_quiet();
}

// Two other forms of detail::peer for api_signal_kernel 15/16: 15 the stride arithmetic alone (no peer-table path at
// all; what the state's stride mode would need), 16 the table path as an out-of-line call (ptxas cannot predicate
// it into the fast path). Both read the __constant__ state as the library does.
__device__ __noinline__ char* peer_table_call(const gshmem::DeviceHandle& h, char* p, int pe) {
  return h.peer_bases[pe] + (p - h.heap_base);
}
template <int KIND, typename T>
__device__ __forceinline__ T* peer_alt(const gshmem::DeviceHandle& h, T* p, int pe) {
  char* c = reinterpret_cast<char*>(p);
  const int64_t off = static_cast<int64_t>(pe - h.my_pe) * static_cast<int64_t>(h.peer_stride);
  if constexpr (KIND == 15) return reinterpret_cast<T*>(c + off);
  if (h.peer_stride != 0) return reinterpret_cast<T*>(c + off);
  return reinterpret_cast<T*>(peer_table_call(h, c, pe));
}

// put+signal ping-pong through the library's public calls, as gshmem-bench's put_signal_pingpong row (KIND 0), and
// the same built from the library's pieces: 1 without the exit barrier of putmem_signal_nbi_block; 2 as 0 with the
// wait as a bare ld.acquire poll; 3 as 1 and 2 together; 4 as 0 with one extra CTA barrier per round (what one
// barrier costs here); 5 as 3 with both peer addresses translated once before the loop; 6 as 5 with the signal
// stored through a generic address; 7 as 3 with the wait a relaxed poll and one fence.acq_rel after (no L1
// invalidation per poll); 8 as 3 with the translation from kernel arguments instead of the __constant__ state;
// 9 as 5 with one read of the __constant__ state after the wait; 10 as 9 polling with volatile loads (no acquire:
// a diagnostic, not a correct wait); 11 as 9 with the read register-indexed (an LDC, as ptxas emits for the
// translation under the 1024-thread bound) and 12 the same with the volatile poll: whether an LDC after the
// poll's L1 invalidation (CCTL.IVALL) is what costs the public calls ~0.3 us (NOTES entry 8); 13 as 3 with
// relaxed polls and one acquire load at the end; 14 the public put with the volatile poll (the same question on
// the library's own code); 15 as 3 with the translation stride arithmetic only (no predicated peer-table load in
// line) and 16 as 3 with the table path an out-of-line call (peer_alt): whether the table load ptxas predicates
// into the fast path, though it never runs, is what the translation costs.
template <int KIND>
__global__ __launch_bounds__(1024) void api_signal_kernel(char* dst, const char* src, size_t bytes, uint64_t* sig,
                                                        uint64_t base, int peer, int me, int iters,
                                                        long long pstride) {
  const gshmem::DeviceHandle& h = gshmemi_dstate;
  char* const pdst = gshmem::dev::detail::peer(h, dst, peer);
  uint64_t* const psig = gshmem::dev::detail::peer(h, sig, peer);
  for (int i = 0; i < iters; ++i) {
    const uint64_t v = base + i + 1;
    auto put = [&] {
      if constexpr (KIND == 0 || KIND == 2 || KIND == 4 || KIND == 14) {
        nvshmemx_putmem_signal_nbi_block(dst, src, bytes, sig, v, NVSHMEM_SIGNAL_SET, peer);
        if constexpr (KIND == 4) __syncthreads();
      } else if constexpr (KIND == 8) {  // translated in the loop from kernel arguments (bank 0), not the state
        __syncthreads();
        char* pd = dst + static_cast<int64_t>(peer - me) * pstride;
        gshmem::dev::detail::copy<gshmem::dev::Block>(pd, src, bytes);
        __syncthreads();
        if (threadIdx.x == 0)
          st_release(reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(sig) + static_cast<int64_t>(peer - me) *
                                                                               pstride), v);
      } else if constexpr (KIND == 9 || KIND == 10) {  // as 5, plus one read of the state after the wait
        __syncthreads();
        gshmem::dev::detail::copy<gshmem::dev::Block>(pdst, src, bytes);
        __syncthreads();
        if (threadIdx.x == 0) st_release(psig, v + static_cast<uint64_t>(gshmemi_dstate.my_pe == 7));
      } else if constexpr (KIND == 11 || KIND == 12) {  // as 5, plus one register-indexed (LDC) state read
        __syncthreads();
        gshmem::dev::detail::copy<gshmem::dev::Block>(pdst, src, bytes);
        __syncthreads();
        if (threadIdx.x == 0) {
          // my_pe (lane 0), through a register index the compiler cannot fold: an LDC
          const uint32_t w = reinterpret_cast<const uint32_t*>(&gshmemi_dstate)[(gshmem::dev::Warp::rank() & 1) + 1];
          st_release(psig, v + static_cast<uint64_t>(w == 77));
        }
      } else if constexpr (KIND == 15 || KIND == 16) {  // as 3, translation without a table load in line
        __syncthreads();
        gshmem::dev::detail::copy<gshmem::dev::Block>(peer_alt<KIND>(h, dst, peer), src, bytes);
        __syncthreads();
        if (threadIdx.x == 0) gshmem::dev::detail::signal_store(peer_alt<KIND>(h, sig, peer), v, GSHMEM_SIGNAL_SET,
                                                                peer);
      } else if constexpr (KIND == 5 || KIND == 6) {  // peer addresses precomputed before the loop
        __syncthreads();
        gshmem::dev::detail::copy<gshmem::dev::Block>(pdst, src, bytes);
        __syncthreads();
        if (threadIdx.x == 0) {
          if constexpr (KIND == 5)
            asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(gshmem::dev::detail::gaddr(psig)), "l"(v)
                         : "memory");
          else
            st_release(psig, v);
        }
      } else {
        __syncthreads();
        gshmem::dev::detail::copy<gshmem::dev::Block>(gshmem::dev::detail::peer(h, dst, peer), src, bytes);
        __syncthreads();
        if (threadIdx.x == 0) gshmem::dev::signal_op(h, sig, v, GSHMEM_SIGNAL_SET, peer);
      }
    };
    auto wait = [&] {
      if (threadIdx.x == 0) {
        if constexpr (KIND == 7)
          wait_ge<1>(sig, v);  // ld.relaxed.sys poll, then one fence.acq_rel
        else if constexpr (KIND == 10 || KIND == 12 || KIND == 14)
          while (ld_volatile(sig) < v) {  // diagnostic only: no acquire at all (no L1 invalidation)
          }
        else if constexpr (KIND == 13) {  // relaxed polls, then one acquire load (one L1 invalidation per wait)
          while (ld_relaxed(sig) < v) {
          }
          while (ld_acquire(sig) < v) {
          }
        }
        else if constexpr (KIND == 2 || KIND == 3 || KIND >= 5)
          wait_ge<0>(sig, v);
        else
          nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, v);
      }
      __syncthreads();
    };
    if (me == 0) {
      put();
      wait();
    } else {
      wait();
      put();
    }
  }
}

// ---- copies ----
template <int U, bool NC>
__global__ void copy_sm_kernel(uint4* __restrict__ d, const uint4* __restrict__ s, size_t n_per_cta, int reps) {
  const size_t base = size_t(blockIdx.x) * n_per_cta;
  for (int r = 0; r < reps; ++r) {
    size_t i = threadIdx.x;
    const size_t stride = blockDim.x;
    for (; i + (U - 1) * stride < n_per_cta; i += U * stride) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if constexpr (NC)
          v[u] = __ldg(&s[base + i + u * stride]);
        else
          v[u] = s[base + i + u * stride];
      }
#pragma unroll
      for (int u = 0; u < U; ++u) d[base + i + u * stride] = v[u];
    }
    for (; i < n_per_cta; i += stride) d[base + i] = s[base + i];
  }
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t phase) {
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}\n" ::"r"(
                   smem_addr(bar)),
               "r"(phase)
               : "memory");
}
__device__ __forceinline__ void bulk_load(void* smem, const void* gmem, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(smem)),
      "l"(gmem), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}
__device__ __forceinline__ void bulk_store(void* gmem, const void* smem, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem), "r"(smem_addr(smem)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void bulk_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// One thread per CTA drives a pipeline of STAGES shared-memory buffers of `chunk` bytes: bulk load from s, bulk
// store to d. d or s may be the peer's memory.
template <int STAGES>
__global__ void copy_tma_kernel(char* d, const char* s, size_t bytes_per_cta, uint32_t chunk, int reps) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) uint64_t bars[STAGES];
  if (threadIdx.x != 0) return;
  for (int k = 0; k < STAGES; ++k) mbar_init(&bars[k], 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const size_t base = size_t(blockIdx.x) * bytes_per_cta;
  const size_t nchunks = (bytes_per_cta + chunk - 1) / chunk;
  uint32_t phase_bits = 0;  // parity per stage
  for (int r = 0; r < reps; ++r) {
    auto len = [&](size_t c) {
      return uint32_t(chunk < bytes_per_cta - c * chunk ? size_t(chunk) : bytes_per_cta - c * chunk);
    };
    auto load = [&](size_t c) {
      const int st = int(c % STAGES);
      mbar_expect_tx(&bars[st], len(c));
      bulk_load(smem + size_t(st) * chunk, s + base + c * chunk, len(c), &bars[st]);
    };
    for (size_t c = 0; c < nchunks && c < STAGES; ++c) load(c);
    for (size_t c = 0; c < nchunks; ++c) {
      const int st = int(c % STAGES);
      mbar_wait(&bars[st], (phase_bits >> st) & 1u);
      phase_bits ^= 1u << st;
      bulk_store(d + base + c * chunk, smem + size_t(st) * chunk, len(c));
      bulk_commit();
      if (c >= 1 && c - 1 + STAGES < nchunks) {
        bulk_wait_read<1>();  // the store of chunk c-1 has read its buffer
        load(c - 1 + STAGES);
      }
    }
    bulk_wait_all();
  }
}

// ---- harness ----
struct Gpu {
  int dev;
  cudaStream_t s;
  cudaEvent_t a, b;
};
Gpu g[2];

void both(const std::function<void(int)>& launch) {
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaEventRecord(g[i].a, g[i].s));
    launch(i);
    CK(cudaGetLastError());
    CK(cudaEventRecord(g[i].b, g[i].s));
  }
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaEventSynchronize(g[i].b));
  }
}
double ms0() {
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, g[0].a, g[0].b));
  return ms;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
// median over `reps` runs (after one warm-up) of GPU 0's time, in ms
double timed(int reps, const std::function<void(int)>& launch) {
  std::vector<double> t;
  for (int r = 0; r <= reps; ++r) {
    both(launch);
    if (r) t.push_back(ms0());
  }
  return median(t);
}
double timed0(int reps, const std::function<void()>& launch) {
  return timed(reps, [&](int i) {
    if (i == 0) launch();
  });
}

// put+signal ping-pong between the GPUs (signal_pingpong_kernel<...>): 16 B, 4 KiB and 64 KiB, 500 rounds per
// sample, median of `reps`; prints the half round trip.
template <typename Kernel>
void signal_pingpong(Kernel kernel, const char* name, char* const (&buf)[2][2], uint64_t* const (&flags)[2],
                     int reps) {
  for (size_t bytes : {size_t(16), size_t(4096), size_t(65536)}) {
    for (int i = 0; i < 2; ++i) {
      CK(cudaSetDevice(i));
      CK(cudaMemset(flags[i] + 48, 0, 8));
      CK(cudaDeviceSynchronize());
    }
    uint64_t b = 0;
    const int it = 500;
    std::vector<double> t;
    for (int r = 0; r <= reps; ++r) {
      both([&](int i) {
        kernel<<<1, 1024, 0, g[i].s>>>(buf[1 - i][1], buf[i][0], bytes, flags[1 - i] + 48, flags[i] + 48, i, b, it);
      });
      b += it;
      if (r) t.push_back(ms0());
    }
    std::printf("signal    %-44s %6zu B %8.3f us\n", name, bytes, median(t) * 1e3 / (2.0 * it));
  }
}

// ---- one GPU (--one-gpu): what the library's address translation costs, without NVLink ----
// The state is published on GPU 0 as PE 0 of 2 whose "peer" heap is a second buffer on the same GPU (stride mode),
// so the library's calls run their usual path. Build the probe against two versions of the headers and compare.
// api_amo_chain_kernel: dependent fetch_adds (each address from the previous result). KIND 0: the public
// nvshmem_ulonglong_atomic_fetch_add; 1: atom.global on an address translated once before the loop; 2: as 0 with a
// 16-byte store to the peer buffer before each op (a store outstanding while the translation runs); 3: as 1 with it.
template <int KIND>
__global__ void api_amo_chain_kernel(unsigned long long* a, uint4* d, int iters, unsigned long long* out) {
  unsigned long long acc = 0;
  unsigned long long* const pa = gshmem::dev::detail::peer(gshmemi_dstate, a, 1);
  for (int i = 0; i < iters; ++i) {
    if constexpr (KIND >= 2) d[i & 1023] = make_uint4(i, i, i, i);
    if constexpr (KIND == 0 || KIND == 2) {
      acc += nvshmem_ulonglong_atomic_fetch_add(a + (acc >> 63), 1ull, 1);
    } else if constexpr (KIND >= 4) {  // translated in the loop: 4 stride arithmetic only, 5 + the version check,
                                       // 6 the library's detail::peer without the version check
      const gshmem::DeviceHandle& h = KIND == 5 ? gshmemi_state("probe") : gshmemi_dstate;
      unsigned long long* t = KIND == 6 ? gshmem::dev::detail::peer(h, a + (acc >> 63), 1)
                                        : peer_alt<15>(h, a + (acc >> 63), 1);
      unsigned long long r;
      asm volatile("atom.global.relaxed.sys.add.u64 %0, [%1], 1;" : "=l"(r) : "l"(gshmem::dev::detail::gaddr(t))
                   : "memory");
      acc += r;
    } else {
      unsigned long long r;
      asm volatile("atom.global.relaxed.sys.add.u64 %0, [%1], 1;"
                   : "=l"(r)
                   : "l"(gshmem::dev::detail::gaddr(pa + (acc >> 63)))
                   : "memory");
      acc += r;
    }
  }
  *out = acc;
}
// One CTA of 1024 threads, put+signal rounds to the same-GPU "peer" with nobody answering: the signal it waits
// for is its own word, already set (so the wait is one acquire load). KIND 0: the public calls (as gshmem-bench's
// put_signal_pingpong); 1: the same pieces with both peer addresses translated once before the loop.
template <int KIND>
__global__ __launch_bounds__(1024) void api_signal_round_kernel(char* dst, const char* src, size_t bytes, uint64_t* sig,
                                                               int iters) {
  char* const pd = gshmem::dev::detail::peer(gshmemi_dstate, dst, 1);
  uint64_t* const ps = gshmem::dev::detail::peer(gshmemi_dstate, sig, 1);
  for (int i = 0; i < iters; ++i) {
    if constexpr (KIND == 0) {
      nvshmemx_putmem_signal_nbi_block(dst, src, bytes, sig, uint64_t(i) + 1, NVSHMEM_SIGNAL_SET, 1);
      if (threadIdx.x == 0) nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, 0);
    } else if constexpr (KIND >= 2) {  // translated in the loop: 2 stride arithmetic only, 3 detail::peer
      const gshmem::DeviceHandle& h = gshmemi_dstate;
      __syncthreads();
      gshmem::dev::detail::copy<gshmem::dev::Block>(KIND == 2 ? peer_alt<15>(h, dst, 1)
                                                              : gshmem::dev::detail::peer(h, dst, 1), src, bytes);
      __syncthreads();
      if (threadIdx.x == 0)
        gshmem::dev::detail::signal_store(KIND == 2 ? peer_alt<15>(h, sig, 1) : gshmem::dev::detail::peer(h, sig, 1),
                                          uint64_t(i) + 1, GSHMEM_SIGNAL_SET, 1);
      __syncthreads();
      if (threadIdx.x == 0) gshmem::dev::signal_wait_until(h, sig, GSHMEM_CMP_GE, 0);
    } else {
      __syncthreads();
      gshmem::dev::detail::copy<gshmem::dev::Block>(pd, src, bytes);
      __syncthreads();
      if (threadIdx.x == 0) gshmem::dev::detail::signal_store(ps, uint64_t(i) + 1, GSHMEM_SIGNAL_SET, 1);
      __syncthreads();
      if (threadIdx.x == 0) gshmem::dev::signal_wait_until(gshmemi_dstate, sig, GSHMEM_CMP_GE, 0);
    }
    __syncthreads();
  }
}

// One GPU, two "PEs" in this process: barriers between two kernels on two streams, each with its own DeviceHandle
// (native API, kernel parameter) over two buffers of the GPU (stride mode). KIND 0: gshmem::dev::barrier_all<Thread>
// (1 thread); 1: barrier_all<Block> (1024 threads); 2: sync_all<Block>; 3: the minimal barrier (fence.acq_rel.sys,
// relaxed flag store, acquire poll) with the epoch in a register, 1 thread; 4: as 3 with the epoch in memory, read
// before the fence (the library's order); 6: read after the fence; 5: the flag counts arrivals (red.add) and the
// epoch is read after the add; 7: as 3 waiting with the library's bounded wait_flag (a timer read per poll); 8: as
// 3 with the library's member loops (flag addresses through peer_base/barrier_flag, team slot 5); 10: as 4 with
// the library's flag store (a generic address); 9: as 10 with the flag addresses computed per barrier as the
// library does (team slot 6); 11: as 10 waiting with the library's wait_flag. The minimal kernels keep their flags and epoch apart from the library's.
// The library's team_sync_one<Barrier=true> rebuilt from its pieces (team slot 7), each piece on or off: V & 1:
// load_team (state version check, WORLD); 2: the size == 1 / flat / dissemination dispatch; 4: flat_arrive (the
// staggered member loop) instead of one store to the other PE; 8: the member wait loop instead of one wait_flag.
template <int V>
__device__ __forceinline__ void lib_like_barrier(const gshmem::DeviceHandle& h) {
  namespace dd = gshmem::dev::detail;
  constexpr int team = 7;
  gshmem_device_team_t t{0, 1, h.n_pes, h.my_pe};
  if constexpr ((V & 1) != 0) t = dd::load_team(h, GSHMEM_TEAM_WORLD, "probe");
  uint64_t* ep = h.barrier_epochs + team;
  const uint64_t epoch = *ep + 1;
  if ((V & 2) != 0 && t.size == 1) {
    dd::arrival_fence<true>();
  } else if ((V & 2) == 0 || t.size <= GSHMEM_DEVICE_MAX_ROUNDS) {
    if constexpr ((V & 4) != 0) {
      dd::flat_arrive<true>(h, t, team, epoch);
    } else {
      dd::arrival_fence<true>();
      dd::store_relaxed_sys(dd::barrier_flag(h, dd::peer_base(h, 1 - t.my_rank), team, t.my_rank), epoch);
    }
    if constexpr ((V & 8) != 0) {
#pragma unroll 1
      for (int k = 1; k < t.size; ++k) {
        const int r = t.my_rank + k < t.size ? t.my_rank + k : t.my_rank + k - t.size;
        dd::wait_flag(h, dd::barrier_flag(h, h.heap_base, team, r), epoch, "probe");
      }
    } else {
      dd::wait_flag(h, dd::barrier_flag(h, h.heap_base, team, 1 - t.my_rank), epoch, "probe");
    }
  } else {
    dd::dissemination<true>(h, t, team, epoch, "probe");
  }
  *ep = epoch;
}
template <int V>
__global__ __launch_bounds__(1024) void onegpu_liblike_kernel(gshmem::DeviceHandle h, uint64_t, int iters) {
  for (int i = 0; i < iters; ++i) lib_like_barrier<V>(h);
}

template <int KIND>
__global__ __launch_bounds__(1024) void onegpu_barrier_kernel(gshmem::DeviceHandle h, uint64_t base, int iters) {
  if constexpr (KIND >= 3) {
    uint64_t* mine = reinterpret_cast<uint64_t*>(h.heap_base + (size_t(24) << 20) + KIND * 4096);  // own per KIND
    uint64_t* theirs = gshmem::dev::detail::peer(h, mine, 1 - h.my_pe);
    uint64_t* ep = reinterpret_cast<uint64_t*>(h.heap_base + (size_t(28) << 20) + KIND * 4096);  // 4-6: in memory
    for (int i = 0; i < iters; ++i) {
      uint64_t e = base + uint64_t(i) + 1;
      if constexpr (KIND == 4 || KIND >= 9) e = *ep + 1;  // loaded before the fence (the library's order)
      asm volatile("fence.acq_rel.sys;" ::: "memory");
      if constexpr (KIND == 6) e = *ep + 1;  // loaded after the fence, before the flag store
      if constexpr (KIND == 8) {  // the library's arrival loop (team slot 5, apart from the library barriers)
        const gshmem_device_team_t t{0, 1, 2, h.my_pe};
        for (int r = 0; r < t.size; ++r)
          if (r != t.my_rank)
            asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(gshmem::dev::detail::barrier_flag(
                             h, gshmem::dev::detail::peer_base(h, t.start + r * t.stride), 5, t.my_rank)),
                         "l"(e)
                         : "memory");
        for (int r = 0; r < t.size; ++r)
          if (r != t.my_rank)
            while (gshmem::dev::detail::load_acquire(gshmem::dev::detail::barrier_flag(h, h.heap_base, 5, r)) < e) {
            }
      } else if constexpr (KIND == 5) {             // counting flag: add 1, then load the epoch
        asm volatile("red.relaxed.sys.global.add.u64 [%0], 1;" ::"l"(theirs) : "memory");
        e = *ep + 1;
      } else if constexpr (KIND == 9) {  // the library's flag addresses, computed per barrier (team slot 6)
        namespace dd = gshmem::dev::detail;
        dd::store_relaxed_sys(dd::barrier_flag(h, dd::peer_base(h, 1 - h.my_pe), 6, h.my_pe), e);
        while (dd::load_acquire(dd::barrier_flag(h, h.heap_base, 6, 1 - h.my_pe)) < e) {
        }
      } else if constexpr (KIND >= 10) {  // the library's flag store (generic address)
        gshmem::dev::detail::store_relaxed_sys(theirs, e);
      } else {
        asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(theirs), "l"(e) : "memory");
      }
      if constexpr (KIND == 7 || KIND == 11) {
        gshmem::dev::detail::wait_flag(h, mine, e, "probe");  // the library's bounded wait
      } else if constexpr (KIND != 8 && KIND != 9) {
        while (gshmem::dev::detail::load_acquire(mine) < e) {
        }
      }
      if constexpr (KIND >= 4 && KIND != 7) *ep = e;
    }
  } else {
    for (int i = 0; i < iters; ++i) {
      if constexpr (KIND == 0) gshmem::dev::barrier_all<gshmem::dev::Thread>(h);
      else if constexpr (KIND == 1) gshmem::dev::barrier_all<gshmem::dev::Block>(h);
      else gshmem::dev::sync_all<gshmem::dev::Block>(h);
    }
  }
}

int one_gpu(int reps) {
  CK(cudaSetDevice(0));
  cudaStream_t s;
  cudaEvent_t ea, eb;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaEventCreate(&ea));
  CK(cudaEventCreate(&eb));
  const size_t heap = size_t(64) << 20;
  char *mine = nullptr, *theirs = nullptr, *src = nullptr;
  CK(cudaMalloc(&mine, heap));
  CK(cudaMalloc(&theirs, heap));
  CK(cudaMalloc(&src, heap));
  CK(cudaMemset(mine, 0, heap));
  CK(cudaMemset(theirs, 0, heap));
  CK(cudaMemset(src, 0x5a, heap));
  gshmem_device_state_t st{};
  st.version = GSHMEM_DEVICE_STATE_VERSION;
  st.my_pe = 0;
  st.n_pes = 2;
  st.device = 0;
  st.heap_base = mine;
  st.heap_size = st.heap_max = heap;
  st.timeout_ns = 30000000000ull;
  st.peer_stride = static_cast<uint64_t>(static_cast<long long>(theirs - mine));
  CK(cudaMemcpyToSymbol(gshmemi_dstate, &st, sizeof st));
  CK(cudaDeviceSynchronize());
  auto time = [&](const std::function<void()>& launch) {
    std::vector<double> t;
    for (int r = 0; r <= reps; ++r) {
      CK(cudaEventRecord(ea, s));
      launch();
      CK(cudaGetLastError());
      CK(cudaEventRecord(eb, s));
      CK(cudaEventSynchronize(eb));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, ea, eb));
      if (r) t.push_back(ms);
    }
    return median(t);
  };
  std::printf("== one GPU: dependent fetch_add chain, one thread (us per op)\n");
  auto* out = reinterpret_cast<unsigned long long*>(src + heap - 64);
  auto* a = reinterpret_cast<unsigned long long*>(mine + 4096);
  auto* d = reinterpret_cast<uint4*>(theirs + (size_t(1) << 20));
  const int it = 20000;
  auto chain = [&](auto kernel, const char* name) {
    const double ms = time([&] { kernel<<<1, 1, 0, s>>>(a, d, it, out); });
    std::printf("onegpu    %-44s %8.4f us\n", name, ms * 1e3 / it);
  };
  for (int k = 0; k < 2; ++k) {
    chain(api_amo_chain_kernel<0>, "public fetch_add");
    chain(api_amo_chain_kernel<1>, "atom.global, translated once");
    chain(api_amo_chain_kernel<2>, "public fetch_add after a peer store");
    chain(api_amo_chain_kernel<3>, "atom.global after a peer store");
    chain(api_amo_chain_kernel<4>, "in loop: stride arithmetic only");
    chain(api_amo_chain_kernel<5>, "in loop: version check + stride only");
    chain(api_amo_chain_kernel<6>, "in loop: detail::peer, no version check");
  }
  std::printf("== one GPU: put+signal rounds, 1 CTA x 1024, own signal already set (ns per round)\n");
  auto* sig = reinterpret_cast<uint64_t*>(mine + heap - 4096);
  CK(cudaMemset(sig, 0xff, 8));
  for (int k = 0; k < 2; ++k) {
    for (size_t bytes : {size_t(8), size_t(4096), size_t(32768)}) {
      const int rit = 4000;
      auto round = [&](auto kernel, const char* name) {
        const double ms = time([&] { kernel<<<1, 1024, 0, s>>>(mine, src, bytes, sig, rit); });
        std::printf("onegpu    %-44s %6zu B %8.1f ns\n", name, bytes, ms * 1e6 / rit);
      };
      round(api_signal_round_kernel<0>, "public putmem_signal_nbi_block + wait");
      round(api_signal_round_kernel<1>, "pieces, addresses before the loop");
      round(api_signal_round_kernel<2>, "pieces, in loop: stride arithmetic only");
      round(api_signal_round_kernel<3>, "pieces, in loop: detail::peer");
    }
  }
  std::printf("== one GPU: gshmem-bench's put_bw loop through the public calls, 1 CTA x 1024 (ns per message)\n");
  for (int k = 0; k < 2; ++k) {
    for (size_t bytes : {size_t(16), size_t(4096), size_t(32768), size_t(65536)}) {
      const size_t stride = std::max<size_t>(bytes, 4096);
      const uint64_t slots = (heap / 2) / stride, iters = 4000;
      auto ap = [&](auto kernel, const char* name) {
        const double ms = time([&] { kernel<<<1, 1024, 0, s>>>(mine, src, bytes, stride, slots, iters, 1); });
        std::printf("onegpu    %-44s %6zu B %8.1f ns\n", name, bytes, ms * 1e6 / double(iters));
      };
      ap(api_put_kernel<0>, "apiput putmem_nbi_block, 1 CTA");
      ap(api_put_kernel<1>, "apiput putmem_nbi_warp, 32 warps");
    }
  }
  std::printf("== one GPU: barriers between two kernels (two PEs of this process, native API), us per barrier\n");
  {
    cudaStream_t s1;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaMemset(mine, 0, heap));
    CK(cudaMemset(theirs, 0, heap));
    gshmem::DeviceHandle hs[2];
    for (int i = 0; i < 2; ++i) {
      hs[i] = st;
      hs[i].my_pe = i;
      hs[i].heap_base = i == 0 ? mine : theirs;
      hs[i].barrier_offset = size_t(8) << 20;
      hs[i].barrier_epochs = reinterpret_cast<uint64_t*>(hs[i].heap_base + (size_t(16) << 20));
    }
    CK(cudaDeviceSynchronize());
    uint64_t base = 0;
    const int it = 2000;
    auto bar = [&](auto kernel, int threads, const char* name) {
      std::vector<double> t;
      for (int r = 0; r <= reps; ++r) {
        CK(cudaEventRecord(ea, s));
        kernel<<<1, threads, 0, s>>>(hs[0], base, it);
        kernel<<<1, threads, 0, s1>>>(hs[1], base, it);
        CK(cudaGetLastError());
        CK(cudaEventRecord(eb, s));
        CK(cudaDeviceSynchronize());
        base += it;
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, ea, eb));
        if (r) t.push_back(ms);
      }
      std::printf("onegpu    %-44s %8.4f us\n", name, median(t) * 1e3 / it);
    };
    for (int k = 0; k < 2; ++k) {
      bar(onegpu_barrier_kernel<0>, 1, "barrier barrier_all<Thread>");
      bar(onegpu_barrier_kernel<1>, 1024, "barrier barrier_all<Block>, 1024 threads");
      bar(onegpu_barrier_kernel<2>, 1024, "barrier sync_all<Block>, 1024 threads");
      bar(onegpu_barrier_kernel<3>, 1, "barrier minimal, epoch in a register");
      bar(onegpu_barrier_kernel<4>, 1, "barrier minimal, epoch loaded before the fence");
      bar(onegpu_barrier_kernel<6>, 1, "barrier minimal, epoch loaded after the fence");
      bar(onegpu_barrier_kernel<5>, 1, "barrier minimal, red.add, epoch loaded after");
      bar(onegpu_barrier_kernel<7>, 1, "barrier minimal, the library's bounded wait");
      bar(onegpu_barrier_kernel<8>, 1, "barrier minimal, the library's member loops");
      bar(onegpu_barrier_kernel<10>, 1, "barrier as 4, the library's flag store (generic)");
      bar(onegpu_barrier_kernel<9>, 1, "barrier as 10, flag addresses per barrier");
      bar(onegpu_barrier_kernel<11>, 1, "barrier as 10, the library's wait_flag");
      bar(onegpu_liblike_kernel<0>, 1, "barrier rebuilt: pieces off");
      bar(onegpu_liblike_kernel<1>, 1, "barrier rebuilt: + load_team");
      bar(onegpu_liblike_kernel<2>, 1, "barrier rebuilt: + dispatch");
      bar(onegpu_liblike_kernel<4>, 1, "barrier rebuilt: + flat_arrive loop");
      bar(onegpu_liblike_kernel<8>, 1, "barrier rebuilt: + wait loop");
      bar(onegpu_liblike_kernel<15>, 1, "barrier rebuilt: all (= team_sync_one)");
    }
    CK(cudaStreamDestroy(s1));
  }
  CK(cudaFree(mine));
  CK(cudaFree(theirs));
  CK(cudaFree(src));
  return 0;
}

// ---- stream-ordered barriers on one GPU (--stream-launch): what a launch costs, and programmatic dependent launch
// (PDL: the next kernel on the stream is launched while the previous one runs and waits in `griddepcontrol.wait`
// until it has completed and its memory is visible). Two "PEs" of one process: two host threads, each launching on
// its own stream of GPU 0 (two processes on one GPU would be time-sliced). The barrier kernels take the library's
// stream barrier's argument list (src/transport/gpu.cu, barrier_kernel) and do its flat 2-member form.
template <bool Pdl>
__global__ void sl_empty(char* const*, char*, unsigned long long, int, int, int, int, int, unsigned long long,
                         const volatile int*) {
  if constexpr (Pdl) asm volatile("griddepcontrol.wait;" ::: "memory");
}
template <bool Pdl>
__global__ void sl_barrier(char* const* peer_bases, char* my_heap, unsigned long long, int slot, int, int, int,
                           int me, unsigned long long, const volatile int*) {
  if constexpr (Pdl) asm volatile("griddepcontrol.wait;" ::: "memory");
  auto* epochs = reinterpret_cast<uint64_t*>(my_heap);
  const uint64_t e = epochs[slot] + 1;
  __syncwarp();
  if (threadIdx.x == 0) {
    fence_ar();
    st_relaxed(reinterpret_cast<uint64_t*>(peer_bases[1 - me]) + 8 + me, e);
    epochs[slot] = e;
    while (ld_acquire(reinterpret_cast<uint64_t*>(my_heap) + 8 + (1 - me)) < e) {
    }
  }
}

// Stream order across an overlapped launch: the kernel reads the last byte a preceding operation wrote. WAIT:
// griddepcontrol.wait first (as the library's stream kernels do).
template <bool Wait>
__global__ void sl_read_last(const unsigned char* p, size_t n, int* out) {
  if constexpr (Wait) asm volatile("griddepcontrol.wait;" ::: "memory");
  *out = *reinterpret_cast<const volatile unsigned char*>(p + n - 1);
}
// A user kernel that runs `ns` before it writes the last byte; TRIGGER: a PDL-aware kernel that lets its dependents
// launch at once (griddepcontrol.launch_dependents first).
template <bool Trigger>
__global__ void sl_late_write(unsigned char* p, size_t n, unsigned char v, unsigned long long ns) {
  if constexpr (Trigger) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
  p[n - 1] = v;
}

using SlKernel = void (*)(char* const*, char*, unsigned long long, int, int, int, int, int, unsigned long long,
                          const volatile int*);
using CuLaunch = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void**, void**);

using gshmem::gpu::launch_stream_kernel;

int stream_launch(int reps) {
  CK(cudaSetDevice(0));
  char* heap[2];
  char** bases;
  int* abort_flag;
  for (auto& h : heap) {
    CK(cudaMalloc(&h, 4096));
    CK(cudaMemset(h, 0, 4096));
  }
  CK(cudaMalloc(&bases, 2 * sizeof(char*)));
  CK(cudaMemcpy(bases, heap, sizeof heap, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&abort_flag, sizeof(int)));
  CK(cudaMemset(abort_flag, 0, sizeof(int)));
  cudaStream_t st[2];
  cudaEvent_t ea[2], eb[2];
  for (int i = 0; i < 2; ++i) {
    CK(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
    CK(cudaEventCreate(&ea[i]));
    CK(cudaEventCreate(&eb[i]));
  }
  CuLaunch cu_launch = nullptr;
  cudaDriverEntryPointQueryResult q{};
  CK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", reinterpret_cast<void**>(&cu_launch), 12000,
                                      cudaEnableDefault, &q));
  CK(cudaDeviceSynchronize());
  enum Mode { kChevron, kEx, kExPdl, kDriver };
  const char* mode_name[] = {"<<<>>>", "cudaLaunchKernelEx", "cudaLaunchKernelEx + PDL", "cuLaunchKernel"};
  auto launch = [&](Mode m, SlKernel k, int me) {
    char* const* pb = bases;
    char* mh = heap[me];
    unsigned long long ps = 0, to = 0;
    int slot = 0, start = 0, stride = 1, size = 2;
    const volatile int* af = abort_flag;
    if (m == kChevron) {
      k<<<1, 32, 0, st[me]>>>(pb, mh, ps, slot, start, stride, size, me, to, af);
    } else if (m == kDriver) {
      void* args[] = {&pb, &mh, &ps, &slot, &start, &stride, &size, &me, &to, &af};
      cudaFunction_t f;
      CK(cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(k)));
      if (cu_launch(reinterpret_cast<CUfunction>(f), 1, 1, 1, 32, 1, 1, 0, st[me], args, nullptr) != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuLaunchKernel failed\n");
        std::exit(1);
      }
    } else {  // the library's launcher (src/transport/stream_kernel.cuh)
      CK(launch_stream_kernel(m == kExPdl, k, 32, st[me], pb, mh, ps, slot, start, stride, size, me, to, af));
    }
  };
  {
    // Does an overlapped launch keep stream order behind a copy, a memset, a kernel? 200 trials each; a trial
    // fails when the kernel read the byte before the preceding operation wrote it.
    const size_t big = size_t(256) << 20;
    unsigned char *a, *b;
    int* out;
    CK(cudaMalloc(&a, big));
    CK(cudaMalloc(&b, big));
    CK(cudaMallocHost(&out, 256 * sizeof(int)));
    std::printf("== stream order behind an overlapped launch (trials where the kernel read the byte too early)\n");
    for (int before = 0; before < 4; ++before)
      for (int kind = 0; kind < 3; ++kind) {  // 0 plain launch, 1 overlapped + wait, 2 overlapped without wait
        int bad = 0;
        const int trials = 200;
        for (int t = 0; t < trials; ++t) {
          const unsigned char v = static_cast<unsigned char>(t % 250 + 1);
          CK(cudaMemsetAsync(b + big - 1, 0, 1, st[0]));
          if (before == 0) {
            CK(cudaMemsetAsync(a, v, big, st[0]));
            CK(cudaMemcpyAsync(b, a, big, cudaMemcpyDeviceToDevice, st[0]));
          } else if (before == 1) {
            CK(cudaMemsetAsync(b, v, big, st[0]));
          } else if (before == 2) {
            sl_late_write<false><<<1, 1, 0, st[0]>>>(b, big, v, 20000);
          } else {
            sl_late_write<true><<<1, 1, 0, st[0]>>>(b, big, v, 20000);
          }
          int* o = out + (t & 255);
          CK(launch_stream_kernel(kind != 0, kind == 2 ? sl_read_last<false> : sl_read_last<true>, 1, st[0],
                                  static_cast<const unsigned char*>(b), big, o));
          CK(cudaStreamSynchronize(st[0]));
          if (*o != v) ++bad;
        }
        const char* what[] = {"256 MiB memset + D2D cudaMemcpyAsync", "256 MiB cudaMemsetAsync",
                              "kernel writing after 20 us", "same, triggering its dependents early"};
        const char* how[] = {"plain launch", "overlapped, griddepcontrol.wait", "overlapped, no wait"};
        std::printf("order     after %-38s %-32s %3d of %d early\n", what[before], how[kind], bad, trials);
      }
    // And behind an overlapped kernel: it writes the byte 20 us in, then a copy (or a plain kernel) reads it.
    for (int after = 0; after < 3; ++after)
      for (int kind = 0; kind < 2; ++kind) {
        int bad = 0;
        const int trials = 200;
        for (int t = 0; t < trials; ++t) {
          const unsigned char v = static_cast<unsigned char>(t % 250 + 1);
          CK(cudaMemsetAsync(b + big - 1, 0, 1, st[0]));
          CK(cudaMemsetAsync(a, 0, 1, st[0]));
          CK(launch_stream_kernel(kind != 0, sl_late_write<false>, 1, st[0], b, big, v, 20000ull));
          int* o = out + (t & 255);
          if (after == 0) {
            CK(cudaMemcpyAsync(a, b + big - 1, 1, cudaMemcpyDeviceToDevice, st[0]));
            sl_read_last<false><<<1, 1, 0, st[0]>>>(a, 1, o);
          } else if (after == 1) {
            CK(cudaMemcpyAsync(a, b + big - 64, 64, cudaMemcpyDeviceToDevice, st[0]));
            sl_read_last<false><<<1, 1, 0, st[0]>>>(a, 64, o);
          } else {
            sl_read_last<false><<<1, 1, 0, st[0]>>>(b, big, o);
          }
          CK(cudaStreamSynchronize(st[0]));
          if (*o != v) ++bad;
        }
        const char* what[] = {"1-byte D2D cudaMemcpyAsync", "64-byte D2D cudaMemcpyAsync", "plain kernel"};
        std::printf("order     %-40s after a %-20s kernel %3d of %d early\n", what[after],
                    kind ? "overlapped" : "plain", bad, trials);
      }
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFreeHost(out));
  }
  const int nb = 2000;
  std::printf("== launches on one stream (%d back to back): host time to issue, GPU time (events), us per launch\n",
              nb);
  for (int round = 0; round < 2; ++round)
    for (Mode m : {kChevron, kEx, kExPdl, kDriver}) {
      SlKernel k = m == kExPdl ? sl_empty<true> : sl_empty<false>;
      std::vector<double> host, gpu;
      for (int r = 0; r <= reps; ++r) {
        CK(cudaEventRecord(ea[0], st[0]));
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < nb; ++i) launch(m, k, 0);
        const auto t1 = std::chrono::steady_clock::now();
        CK(cudaEventRecord(eb[0], st[0]));
        CK(cudaEventSynchronize(eb[0]));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, ea[0], eb[0]));
        if (r) {
          host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / nb);
          gpu.push_back(ms * 1e3 / nb);
        }
      }
      std::printf("launch    empty kernel, %-30s host %6.3f  gpu %6.3f us\n", mode_name[m], median(host),
                  median(gpu));
    }
  std::printf("== stream barrier of 2 (%d back to back on each PE's stream), us per barrier (PE 0's events)\n", nb);
  for (int round = 0; round < 2; ++round)
    for (int threads : {2, 1})
      for (Mode m : {kChevron, kExPdl, kDriver}) {
        SlKernel k = m == kExPdl ? sl_barrier<true> : sl_barrier<false>;
        std::vector<double> gpu, host;
        for (int r = 0; r <= reps; ++r) {
          std::atomic<int> ready{0};
          double issue[2] = {0, 0};
          auto pe = [&](int me, bool both) {
            CK(cudaSetDevice(0));
            for (int i = 0; i < 2; ++i)
              if (both || i == me) CK(cudaEventRecord(ea[i], st[i]));
            ready.fetch_add(1);
            while (ready.load() < threads) {
            }
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < nb; ++i)
              for (int j = 0; j < 2; ++j)
                if (both || j == me) launch(m, k, j);
            issue[me] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
            for (int i = 0; i < 2; ++i)
              if (both || i == me) CK(cudaEventRecord(eb[i], st[i]));
          };
          if (threads == 2) {
            std::thread t1(pe, 1, false);
            pe(0, false);
            t1.join();
          } else {
            pe(0, true);
          }
          CK(cudaDeviceSynchronize());
          float ms = 0;
          CK(cudaEventElapsedTime(&ms, ea[0], eb[0]));
          if (r) {
            gpu.push_back(ms * 1e3 / nb);
            host.push_back(issue[0] / nb);
          }
        }
        std::printf("sbarrier  %s, %-30s host %6.3f  gpu %6.3f us\n",
                    threads == 2 ? "a thread per PE" : "one thread, alternating", mode_name[m], median(host),
                    median(gpu));
      }
  for (int i = 0; i < 2; ++i) {
    CK(cudaStreamDestroy(st[i]));
    CK(cudaEventDestroy(ea[i]));
    CK(cudaEventDestroy(eb[i]));
    CK(cudaFree(heap[i]));
  }
  CK(cudaFree(bases));
  CK(cudaFree(abort_flag));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach a log even if the run is cut short
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const bool blockput_only = argc > 1 && std::strcmp(argv[1], "--blockput") == 0;  // only the block-put study
  if (argc > 1 && std::strcmp(argv[1], "--one-gpu") == 0) return one_gpu(9);
  if (argc > 1 && std::strcmp(argv[1], "--stream-launch") == 0) return stream_launch(7);
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) {
    std::fprintf(stderr, "nvlink_probe needs 2 GPUs (found %d)\n", n);
    return 1;
  }
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaDeviceEnablePeerAccess(1 - i, 0));
    CK(cudaStreamCreateWithFlags(&g[i].s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&g[i].a));
    CK(cudaEventCreate(&g[i].b));
  }
  const int reps = quick ? 5 : 9;
  const int lat_iters = 2000;
  uint64_t* flags[2];
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaMalloc(&flags[i], 4096));
    CK(cudaMemset(flags[i], 0, 4096));
    CK(cudaDeviceSynchronize());
  }
  // flag layout per GPU: [0] ping-pong flag, [16] barrier flag, [32] epoch, [48] signal, [64] fence target
  uint64_t base = 0;
  auto pp = [&](auto kernel, const char* name) {
    const double ms =
        timed(reps, [&](int i) { kernel<<<1, 1, 0, g[i].s>>>(flags[i], flags[1 - i], i, base, lat_iters); });
    base += uint64_t(lat_iters) * (reps + 1);
    std::printf("pingpong  %-44s %8.3f us (half round trip)\n", name, ms * 1e3 / (2.0 * lat_iters));
  };
  if (!blockput_only) {
  std::printf("== flag ping-pong, one thread per GPU\n");
  pp(pingpong_kernel<0, 0>, "weak store / ld.acquire poll");
  pp(pingpong_kernel<1, 0>, "st.relaxed.sys / ld.acquire poll");
  pp(pingpong_kernel<2, 0>, "st.release.sys / ld.acquire poll");
  pp(pingpong_kernel<3, 0>, "fence.acq_rel+st.relaxed / ld.acquire poll");
  pp(pingpong_kernel<4, 0>, "fence.sc+st.relaxed / ld.acquire poll");
  pp(pingpong_kernel<0, 1>, "weak store / ld.relaxed poll + fence");
  pp(pingpong_kernel<2, 1>, "st.release.sys / ld.relaxed poll + fence");
  pp(pingpong_kernel<0, 2>, "weak store / volatile poll + fence");

  std::printf("== barrier of 2 GPUs, one thread each\n");
  auto bar = [&](auto kernel, const char* name) {
    for (int i = 0; i < 2; ++i) {
      CK(cudaSetDevice(i));
      CK(cudaMemset(flags[i] + 16, 0, 8 * 32));
      CK(cudaDeviceSynchronize());
    }
    uint64_t b = 0;
    std::vector<double> t;
    for (int r = 0; r <= reps; ++r) {
      both([&](int i) { kernel<<<1, 1, 0, g[i].s>>>(flags[i] + 16, flags[1 - i] + 16, flags[i] + 32, b, lat_iters); });
      b += lat_iters;
      if (r) t.push_back(ms0());
    }
    std::printf("barrier   %-44s %8.3f us\n", name, median(t) * 1e3 / lat_iters);
  };
  bar(barrier_kernel<0>, "fence.sc + st.release, epoch in memory (today)");
  bar(barrier_kernel<4>, "st.release, epoch in memory");
  bar(barrier_kernel<5>, "fence.sc + st.release, epoch in register");
  bar(barrier_kernel<1>, "st.release");
  bar(barrier_kernel<2>, "fence.acq_rel + st.relaxed");
  bar(barrier_kernel<3>, "red.release.add");

  std::printf("== fences, one thread on GPU 0\n");
  auto fence = [&](auto kernel, const char* name) {
    const double ms = timed0(reps, [&] { kernel<<<1, 1, 0, g[0].s>>>(flags[1] + 64, lat_iters); });
    std::printf("fence     %-44s %8.3f us\n", name, ms * 1e3 / lat_iters);
  };
  fence(fence_kernel<0>, "fence.sc.sys");
  fence(fence_kernel<1>, "fence.acq_rel.sys");
  fence(fence_kernel<2>, "peer st.relaxed + fence.sc.sys");
  fence(fence_kernel<3>, "peer st.relaxed + fence.acq_rel.sys");
  fence(fence_kernel<4>, "__threadfence (gpu)");
  }  // !blockput_only

  // buffers for signal ping-pong and copies
  const size_t big = quick ? (256u << 20) : (512u << 20);
  char* buf[2][2];  // [gpu][src,dst]
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaMalloc(&buf[i][0], big));
    CK(cudaMalloc(&buf[i][1], big));
    CK(cudaMemset(buf[i][0], 0x11 * (i + 1), big));
    CK(cudaMemset(buf[i][1], 0, big));
    CK(cudaDeviceSynchronize());
  }
  std::printf("== block-scope small puts, barrier before and after each, 1 CTA x 1024 (ns per message)\n");
  for (size_t stride : {size_t(4096), size_t(65536)}) {
    const int it = int(std::min<size_t>(4000, big / stride));
    for (size_t bytes : {size_t(16), size_t(256), size_t(4096), size_t(65536)}) {
      if (bytes > stride) continue;
      auto bs = [&](auto kernel, const char* name) {
        const double ms =
            timed0(reps, [&] { kernel<<<1, 1024, 0, g[0].s>>>(buf[1][1], buf[0][0], bytes, stride, it); });
        std::printf("blockstudy stride %6zu  %-40s %5zu B %8.1f ns\n", stride, name, bytes, ms * 1e6 / it);
      };
      bs(block_put_study_kernel<0>, "gshmem detail::copy<Block>");
      bs(block_put_study_kernel<1>, "restrict loop, noinline call");
      bs(block_put_study_kernel<2>, "restrict loop, inlined");
      bs(block_put_study_kernel<3>, "one vector per thread, ld.global.nc");
      bs(block_put_study_kernel<4>, "one vector per thread, nc.L1::no_allocate");
      bs(block_put_study_kernel<5>, "one vector per thread, L1::no_allocate");
      bs(block_put_study_kernel<6>, "one vector per thread, plain loads");
      bs(block_put_study_kernel<7>, "copy's fast path alone (Block rank/size)");
      bs(block_put_study_kernel<8>, "gshmem detail::copy<Block> + __syncwarp");
      bs(block_put_study_kernel<9>, "one-vector test first, rest inlined");
      bs(block_put_study_kernel<10>, "one-vector test first, rest a call");
      bs(block_put_study_kernel<11>, "one-vector first, uniform-trip loops");
      bs(block_put_study_kernel<12>, "<= 4 vectors straight-line, rest a call");
    }
  }
  std::printf("== warp-scope puts, __syncwarp before and after each, 1 CTA x 1024 = 32 warps (ns per message)\n");
  for (size_t bytes : {size_t(256), size_t(4096), size_t(65536)}) {
    const size_t slot = std::max<size_t>(bytes, 4096);
    const int it = int(std::min<size_t>(2000, big / (slot * 32)));
    auto ws = [&](auto kernel, const char* name) {
      const double ms = timed0(reps, [&] { kernel<<<1, 1024, 0, g[0].s>>>(buf[1][1], buf[0][0], bytes, slot, it); });
      std::printf("warpstudy  %-44s %6zu B %8.1f ns  %7.2f GB/s\n", name, bytes, ms * 1e6 / it,
                  double(bytes) * 32 * it / (ms * 1e-3) / 1e9);
    };
    ws(warp_put_study_kernel<0>, "gshmem detail::copy<Warp>");
    ws(warp_put_study_kernel<1>, "same loop, __ldg loads");
    ws(warp_put_study_kernel<2>, "const __restrict__ loop");
    ws(warp_put_study_kernel<3>, "one-vector test first, rest inlined");
    ws(warp_put_study_kernel<4>, "one-vector test first, rest a call");
    ws(warp_put_study_kernel<5>, "one-vector first, uniform-trip loops");
    ws(warp_put_study_kernel<6>, "<= 4 vectors straight-line, rest a call");
  }
  std::printf("== atomic fetch_add latency on the peer (one thread)\n");
  {
    const int it = 2000;
    auto amo = [&](auto kernel, const char* name) {
      CK(cudaSetDevice(0));
      const double ms = timed0(reps, [&] { kernel<<<1, 1, 0, g[0].s>>>(flags[1] + 256, it, flags[0] + 300); });
      std::printf("amo       %-44s %8.3f us\n", name, ms * 1e3 / it);
    };
    amo(amo_kernel<0>, "atom.relaxed.sys.add (generic address)");
    amo(amo_kernel<3>, "atom.global.relaxed.sys.add");
    amo(amo_kernel<2>, "atomicAdd (default scope)");
    amo(amo_kernel<0>, "atom.relaxed.sys.add (generic address)");
    amo(amo_kernel<3>, "atom.global.relaxed.sys.add");
  }
  std::printf("== put+signal ping-pong, one CTA of 1024 threads per GPU (copy shape and wait)\n");
  {
    auto sp = [&](auto kernel, const char* name) { signal_pingpong(kernel, name, buf, flags, reps); };
    sp(signal_pingpong_kernel<2>, "plain loop, bar, st.release");
    sp(signal_pingpong_kernel<5>, "detail::copy<Block>, bar, st.release");
    sp(signal_pingpong_kernel<6>, "cand copy (rest inlined)");
    sp(signal_pingpong_kernel<7>, "cand copy (rest a call)");
    sp(signal_pingpong_kernel<8>, "detail::copy<Block> + timed wait");
    sp(signal_pingpong_kernel<9>, "cand copy (uniform-trip loops)");
    sp(signal_pingpong_kernel<10>, "cand copy (<= 4 straight, rest a call)");
    sp(signal_pingpong_kernel<2>, "plain loop, bar, st.release (again)");
  }
  std::printf("== put+signal ping-pong through the library's calls (state published by hand, stride mode)\n");
  {
    // PE i's "heap" is buf[i][1]; dst at offset 0 (1 MiB), the signal word at big - 4096.
    const long long stride = static_cast<long long>(buf[1][1] - buf[0][1]);
    for (int i = 0; i < 2; ++i) {
      gshmem_device_state_t st{};
      st.version = GSHMEM_DEVICE_STATE_VERSION;
      st.my_pe = i;
      st.n_pes = 2;
      st.device = i;
      st.heap_base = buf[i][1];
      st.heap_size = st.heap_max = big;
      st.timeout_ns = 30000000000ull;
      st.peer_stride = static_cast<uint64_t>(stride);
      CK(cudaSetDevice(i));
      CK(cudaMemcpyToSymbol(gshmemi_dstate, &st, sizeof st));
      CK(cudaDeviceSynchronize());
    }
    auto as = [&](auto kernel, const char* name) {
      for (size_t bytes : {size_t(8), size_t(4096), size_t(65536)}) {
        for (int i = 0; i < 2; ++i) {
          CK(cudaSetDevice(i));
          CK(cudaMemset(buf[i][1] + big - 4096, 0, 8));
          CK(cudaDeviceSynchronize());
        }
        uint64_t b = 0;
        const int it = 500;
        std::vector<double> t;
        for (int r = 0; r <= reps; ++r) {
          both([&](int i) {
            kernel<<<1, 1024, 0, g[i].s>>>(buf[i][1], buf[i][0], bytes,
                                           reinterpret_cast<uint64_t*>(buf[i][1] + big - 4096), b, 1 - i, i, it,
                                           stride);
          });
          b += it;
          if (r) t.push_back(ms0());
        }
        std::printf("apisignal %-44s %6zu B %8.3f us\n", name, bytes, median(t) * 1e3 / (2.0 * it));
      }
    };
    as(api_signal_kernel<0>, "public calls (the bench row)");
    as(api_signal_kernel<1>, "pieces, no exit barrier");
    as(api_signal_kernel<2>, "public put, bare ld.acquire wait");
    as(api_signal_kernel<3>, "pieces, no exit barrier, bare wait");
    as(api_signal_kernel<4>, "public calls + one more barrier");
    as(api_signal_kernel<5>, "3 with addresses before the loop");
    as(api_signal_kernel<6>, "5 with generic st.release");
    as(api_signal_kernel<7>, "3 with a relaxed poll + one fence");
    as(api_signal_kernel<8>, "3 translated from kernel arguments");
    as(api_signal_kernel<9>, "5 + one state read after the wait");
    as(api_signal_kernel<10>, "9 with a volatile poll (no acquire)");
    as(api_signal_kernel<11>, "5 + one LDC (indexed) state read");
    as(api_signal_kernel<12>, "11 with a volatile poll (no acquire)");
    as(api_signal_kernel<13>, "3, relaxed polls + one acquire load");
    as(api_signal_kernel<14>, "public put, volatile poll (no acquire)");
    as(api_signal_kernel<15>, "3, translation stride arithmetic only");
    as(api_signal_kernel<16>, "3, translation's table path a call");
    as(api_signal_kernel<3>, "pieces, no exit barrier, bare wait (again)");
    as(api_signal_kernel<0>, "public calls (again)");
    // put_bw rows, 1 CTA x 1024, through the public calls (the hand-published state is still in place)
    for (size_t bytes : {size_t(16), size_t(4096), size_t(32768), size_t(65536)}) {
      const size_t stride = std::max<size_t>(bytes, 4096);
      const uint64_t slots = (big / 2) / stride, iters = 4000;
      auto ap = [&](auto kernel, const char* name) {
        CK(cudaSetDevice(0));
        const double ms =
            timed0(reps, [&] { kernel<<<1, 1024, 0, g[0].s>>>(buf[0][1], buf[0][0], bytes, stride, slots, iters, 1); });
        std::printf("apiput    %-44s %6zu B %8.1f ns per message\n", name, bytes, ms * 1e6 / double(iters));
      };
      ap(api_put_kernel<0>, "putmem_nbi_block, 1 CTA");
      ap(api_put_kernel<1>, "putmem_nbi_warp, 32 warps");
    }
  }
  if (blockput_only) return 0;
  char* buf_local16 = buf[0][0];
  char* buf_peer16 = buf[1][1] + (big - (1 << 20));
  std::printf("== put+signal ping-pong, one CTA of 1024 threads per GPU\n");
  auto sp = [&](auto kernel, const char* name) { signal_pingpong(kernel, name, buf, flags, reps); };
  sp(signal_pingpong_kernel<0>, "all fence.sc, bar, st.release (today)");
  sp(signal_pingpong_kernel<1>, "bar, t0 fence.acq_rel + st.relaxed");
  sp(signal_pingpong_kernel<2>, "bar, t0 st.release");
  sp(signal_pingpong_kernel<3>, "bar, t0 fence.sc + st.relaxed");
  sp(signal_pingpong_kernel<4>, "warp lane0 fence.acq_rel, bar, st.relaxed");

  std::printf("== small puts: 16 B messages one after another, fresh lines (ns per message)\n");
  {
    const int it = 4000;
    auto sp16 = [&](auto kernel, int threads, const char* name) {
      const double ms = timed0(reps, [&] { kernel<<<1, threads, 0, g[0].s>>>(buf[1][1], buf[0][0], it); });
      std::printf("smallput  %-44s %8.1f ns\n", name, ms * 1e6 / it);
    };
    sp16(small_put_kernel<0>, 32, "plain ld/st");
    sp16(small_put_kernel<1>, 32, "ld.global.nc");
    sp16(small_put_kernel<2>, 32, "ld.global.cg");
    sp16(small_put_kernel<3>, 32, "gshmem detail::copy<Thread>");
    sp16(small_put_kernel<4>, 32, "gshmem detail::copy<Warp>");
    sp16(small_put_kernel<5>, 32, "plain, 4 loads ahead");
    sp16(small_put_kernel<6>, 32, "ld.relaxed.gpu");
    sp16(small_put_kernel<7>, 32, "ld.global.L1::no_allocate");
    sp16(small_put_kernel<8>, 32, "asm ld (not volatile) + asm st");
    // and the same with the destination in this GPU (where the stall after a remote store is absent)
    auto sp16l = [&](auto kernel, const char* name) {
      const double ms = timed0(reps, [&] { kernel<<<1, 32, 0, g[0].s>>>(buf[0][1], buf[0][0], it); });
      std::printf("smallput  %-44s %8.1f ns\n", name, ms * 1e6 / it);
    };
    sp16l(small_put_kernel<0>, "local dst: plain ld/st");
    sp16l(small_put_kernel<3>, "local dst: gshmem detail::copy<Thread>");
    for (size_t bytes : {size_t(8), size_t(16), size_t(4096)}) {
      auto bp = [&](auto kernel, const char* name) {
        const double ms = timed0(reps, [&] { kernel<<<1, 1024, 0, g[0].s>>>(buf[1][1], buf[0][0], bytes, it); });
        std::printf("blockput  %-36s %6zu B %8.1f ns\n", name, bytes, ms * 1e6 / it);
      };
      bp(block_put_kernel<0>, "copy<Block>, no CTA barrier");
      bp(block_put_kernel<1>, "copy<Block>, barrier before");
      bp(block_put_kernel<2>, "copy<Block>, barrier after");
      bp(block_put_kernel<3>, "copy<Block>, barrier before and after");
    }
  }
  std::printf("== atomic fetch_add latency on the peer (one thread)\n");
  {
    const int it = 2000;
    auto amo = [&](auto kernel, const char* name) {
      const double ms = timed0(reps, [&] { kernel<<<1, 1, 0, g[0].s>>>(flags[1] + 256, it, flags[0] + 300); });
      std::printf("amo       %-44s %8.3f us\n", name, ms * 1e3 / it);
    };
    amo(amo_kernel<0>, "atom.relaxed.sys.add");
    amo(amo_kernel<1>, "atom.relaxed.gpu.add");
    amo(amo_kernel<2>, "atomicAdd (default scope)");
  }
  std::printf("== stream-ordered barrier of 2 (per barrier, 1000 back to back on each GPU's stream)\n");
  {
    const int nb = 1000;
    double ms = timed0(reps, [&] {
      for (int k = 0; k < nb; ++k) empty_kernel<<<1, 1, 0, g[0].s>>>();
    });
    std::printf("stream    %-44s %8.3f us\n", "empty kernel launch", ms * 1e3 / nb);
    for (int i = 0; i < 2; ++i) {
      CK(cudaSetDevice(i));
      CK(cudaMemset(flags[i] + 128, 0, 64));
      CK(cudaDeviceSynchronize());
    }
    uint64_t e = 0;
    std::vector<double> t;
    for (int r = 0; r <= reps; ++r) {
      const uint64_t e0 = e;
      // launches alternate between the GPUs: a full launch queue on one must never wait for the other's
      for (int i = 0; i < 2; ++i) {
        CK(cudaSetDevice(i));
        CK(cudaEventRecord(g[i].a, g[i].s));
      }
      for (int k = 0; k < nb; ++k)
        for (int i = 0; i < 2; ++i) {
          CK(cudaSetDevice(i));
          stream_barrier_kernel<<<1, 1, 0, g[i].s>>>(flags[i] + 128, flags[1 - i] + 128, e0 + k + 1);
        }
      for (int i = 0; i < 2; ++i) {
        CK(cudaSetDevice(i));
        CK(cudaEventRecord(g[i].b, g[i].s));
      }
      for (int i = 0; i < 2; ++i) {
        CK(cudaSetDevice(i));
        CK(cudaEventSynchronize(g[i].b));
      }
      e += nb;
      if (r) t.push_back(ms0());
    }
    std::printf("stream    %-44s %8.3f us\n", "kernel: st.release + poll, epoch argument", median(t) * 1e3 / nb);
    {
      // small put on a stream: cudaMemcpyAsync of 16 B into the peer vs a 1-thread kernel
      ms = timed0(reps, [&] {
        for (int k = 0; k < nb; ++k) CK(cudaMemcpyAsync(buf_peer16, buf_local16, 16, cudaMemcpyDefault, g[0].s));
      });
      std::printf("stream    %-44s %8.3f us\n", "cudaMemcpyAsync 16 B into the peer", ms * 1e3 / nb);
      ms = timed0(reps, [&] {
        for (int k = 0; k < nb; ++k) CK(cudaMemcpyAsync(buf_local16, buf_peer16, 16, cudaMemcpyDefault, g[0].s));
      });
      std::printf("stream    %-44s %8.3f us\n", "cudaMemcpyAsync 16 B from the peer", ms * 1e3 / nb);
      ms = timed0(reps, [&] {
        for (int k = 0; k < nb; ++k)
          copy_small_kernel<<<1, 32, 0, g[0].s>>>(reinterpret_cast<uint4*>(buf_peer16),
                                                  reinterpret_cast<const uint4*>(buf_local16), 1);
      });
      std::printf("stream    %-44s %8.3f us\n", "kernel copy 16 B into the peer", ms * 1e3 / nb);
      ms = timed0(reps, [&] {
        for (int k = 0; k < nb; ++k)
          copy_small_kernel<<<4, 256, 0, g[0].s>>>(reinterpret_cast<uint4*>(buf_peer16),
                                                   reinterpret_cast<const uint4*>(buf_local16), 4096);
      });
      std::printf("stream    %-44s %8.3f us\n", "kernel copy 64 KiB into the peer (4x256)", ms * 1e3 / nb);
      ms = timed0(reps, [&] {
        for (int k = 0; k < nb; ++k) CK(cudaMemcpyAsync(buf_peer16, buf_local16, 65536, cudaMemcpyDefault, g[0].s));
      });
      std::printf("stream    %-44s %8.3f us\n", "cudaMemcpyAsync 64 KiB into the peer", ms * 1e3 / nb);
    }
  }
  std::printf("== copy bandwidth GPU0 <-> GPU1 (GB/s), checked\n");
  CK(cudaSetDevice(0));
  CK(cudaFuncSetAttribute(copy_tma_kernel<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CK(cudaFuncSetAttribute(copy_tma_kernel<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  auto check_copy = [&](const char* d, const char* s, size_t bytes, const char* name) {
    std::vector<char> a(bytes), b(bytes);
    CK(cudaMemcpy(a.data(), d, bytes, cudaMemcpyDefault));
    CK(cudaMemcpy(b.data(), s, bytes, cudaMemcpyDefault));
    if (std::memcmp(a.data(), b.data(), bytes) != 0) std::printf("  !! %s: COPY MISMATCH\n", name);
  };
  struct Cfg {
    int ctas;
    size_t bytes;
  };
  std::vector<Cfg> cfgs = {{1, 16u << 20}, {8, 64u << 20}, {32, 256u << 20}, {132, 256u << 20}};
  for (const bool put : {true, false}) {
    // put: GPU0 reads its src, writes GPU1's dst. get: GPU0 reads GPU1's src, writes its own dst.
    char* d = put ? buf[1][1] : buf[0][1];
    const char* s = put ? buf[0][0] : buf[1][0];
    for (const Cfg c : cfgs) {
      const size_t per = c.bytes / c.ctas / 65536 * 65536;
      const size_t total = per * c.ctas;
      const int rr = c.ctas == 1 ? 2 : 1;
      auto report = [&](const char* name, double ms) {
        std::printf("%s ctas=%-3d %5zu MiB %-34s %8.1f GB/s\n", put ? "put" : "get", c.ctas, c.bytes >> 20, name,
                    double(total) * rr / (ms * 1e-3) / 1e9);
      };
      auto sm = [&](auto kernel, const char* name) {
        CK(cudaMemset(d, 0, c.bytes));
        const double ms = timed0(reps, [&] {
          kernel<<<c.ctas, 1024, 0, g[0].s>>>(reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(s), per / 16,
                                              rr);
        });
        report(name, ms);
        check_copy(d, s, total, name);
      };
      sm(copy_sm_kernel<4, false>, "SM 16B x4 in flight");
      sm(copy_sm_kernel<8, false>, "SM 16B x8 in flight");
      sm(copy_sm_kernel<16, false>, "SM 16B x16 in flight");
      sm(copy_sm_kernel<8, true>, "SM 16B x8 ld.nc");
      auto tma = [&](auto kernel, int stages, uint32_t chunk, const char* name) {
        CK(cudaMemset(d, 0, c.bytes));
        const double ms =
            timed0(reps, [&] { kernel<<<c.ctas, 32, size_t(stages) * chunk, g[0].s>>>(d, s, per, chunk, rr); });
        report(name, ms);
        check_copy(d, s, total, name);
      };
      tma(copy_tma_kernel<4>, 4, 16384, "TMA 4 x 16 KiB");
      tma(copy_tma_kernel<4>, 4, 32768, "TMA 4 x 32 KiB");
      tma(copy_tma_kernel<8>, 8, 16384, "TMA 8 x 16 KiB");
      tma(copy_tma_kernel<8>, 8, 24576, "TMA 8 x 24 KiB");
    }
  }
  std::printf("nvlink_probe: done\n");
  return 0;
}
