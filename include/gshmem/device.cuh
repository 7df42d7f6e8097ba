// gshmem device API: put/get/p/g, signals, atomics, waits, quiet/fence and barriers from CUDA kernels.
// Header-only; plain nvcc, no -rdc, no device library. Guide: docs/device-api.md.
//
// Two ways to reach the state (see gshmem/device/state.h):
//  * native C++: take the handle on the host after init and pass it to the kernel by value
//        gshmem::DeviceHandle h = gshmem::device_handle();      // C: gshmemx_device_handle(&h)
//        kernel<<<g, b>>>(h, ...);  ... gshmem::dev::putmem<gshmem::dev::Block>(h, dst, src, bytes, pe);
//  * NVSHMEM-style free functions (gshmem_int_p, gshmem_putmem, gshmemx_putmem_block, gshmem_barrier_all, ...),
//    which read this translation unit's own copy of the state; the library fills it at init and on change.
//
// Native API (namespace gshmem::dev; Coop is Thread, Warp or Block: every thread of the group calls with the same
// arguments; Warp needs the 32 lanes converged). Every spin is bounded by GSHMEM_WAIT_TIMEOUT (default 600 s; 0 =
// none): on timeout the kernel prints what it waited for and traps.
//   int  my_pe(h);  int n_pes(h);  T* ptr(h, T* p, int pe)               -> nullptr if not reachable
//   void p(h, T* dst, T v, int pe);  T g(h, const T* src, int pe)
//   void putmem<Coop>(h, void* dst, const void* src, size_t bytes, int pe)   (+ getmem, putmem_nbi, getmem_nbi)
//   void put<Coop>(h, T* dst, const T* src, size_t n, int pe)                (+ get, put_nbi, get_nbi)
//   void putmem_signal<Coop>(h, dst, src, bytes, uint64_t* sig, uint64_t v, int sig_op, int pe)  (+ _nbi,
//        typed put_signal / put_signal_nbi): the signal is never visible before the data
//   void signal_op(h, uint64_t* sig, uint64_t v, int sig_op, int pe);  uint64_t signal_fetch(h, const uint64_t*)
//   uint64_t signal_wait_until(h, const uint64_t* sig, int cmp, uint64_t v)
//   AMOs, T of 4 or 8 bytes: atomic_fetch, atomic_set, atomic_swap, atomic_compare_swap(h, dst, cond, v, pe),
//        atomic_fetch_add / add, fetch_inc / inc, fetch_and / and, fetch_or / or, fetch_xor / xor
//   void iput<Coop>(h, T* dst, const T* src, ptrdiff_t dst_stride, ptrdiff_t src_stride, size_t n, int pe)  (+ iget)
//   void wait_until(h, const T* ivar, int cmp, T v);  int test(h, const T* ivar, int cmp, T v)   (T: 2, 4, 8 bytes)
//   wait_until_all/any/some(h, ivars, n, [indices,] status, cmp, v) (+ _vector: const T* values), test_all/any/some
//        (+ _vector): OpenSHMEM 1.5 semantics (status NULL or status[i] != 0 excludes i; any -> index or SIZE_MAX;
//        some -> count, indices ascending)
//   int team_my_pe(h, team); int team_n_pes(h, team); int team_translate_pe(h, src_team, src_pe, dest_team)  (-1:
//        not a member / invalid)
//   void quiet();  void fence();
//   void barrier_all<Coop>(h);  sync_all<Coop>(h);  barrier<Coop>(h, team);  team_sync<Coop>(h, team)
//        (one thread / warp / block per PE calls them)
//
// Free functions: the host API's names (gshmem.h) in the device pass, with the same arguments: gshmem_my_pe,
// gshmem_n_pes, gshmem_ptr, gshmem_putmem/getmem[_nbi], gshmem_putmem_signal[_nbi], gshmemx_signal_op,
// gshmem_signal_fetch, gshmem_signal_wait_until, gshmem_quiet, gshmem_fence, gshmem_barrier_all, gshmem_sync_all,
// gshmem_barrier, gshmem_team_sync; for each type of GSHMEM_RMA_TYPES gshmem_<T>_p/g/put/get/put_nbi/get_nbi/
// put_signal/put_signal_nbi; the AMOs of GSHMEM_AMO_*_TYPES (gshmem_<T>_atomic_*); gshmem_<T>_wait_until/test for
// GSHMEM_WAIT_TYPES. Warp and block forms (device only, as NVSHMEM names them): gshmemx_putmem[_nbi]_{warp,block},
// gshmemx_getmem[_nbi]_{warp,block}, gshmemx_putmem_signal[_nbi]_{warp,block}, gshmemx_<T>_{put,get,put_nbi,
// get_nbi,put_signal,put_signal_nbi}_{warp,block}, gshmemx_{barrier_all,sync_all}_{warp,block},
// gshmemx_{barrier,team_sync}_{warp,block}(team). Also: gshmem_team_my_pe/n_pes/translate_pe; sized
// gshmem_{put,get}{8,16,32,64,128}[_nbi], gshmem_{iput,iget}{8..128}, gshmemx_{put,get}{8..128}[_nbi]_{warp,block};
// gshmem_<T>_iput/iget; gshmem_<T>_wait_until_{all,any,some}[_vector] and gshmem_<T>_test_{all,any,some}[_vector]
// (device only); the half and bfloat16 types (gshmem_half_p, gshmem_bfloat16_put, gshmemx_half_put_block, ...;
// host forms too, on the sized host calls); strided warp/block forms gshmemx_<T>_{iput,iget}_{warp,block} and
// gshmemx_{iput,iget}{8..128}_{warp,block}; sized put+signal gshmem_put{8..128}_signal[_nbi] and
// gshmemx_put{8..128}_signal[_nbi]_{warp,block}; gshmemx_barrier_warpgroup(team); gshmemx_mc_ptr (always NULL:
// gshmem never uses NVLink multicast).
//
// Host (inline, through the program's CUDA runtime): gshmemx_collective_launch(func, grid, block, args, shmem,
// stream) -- cooperative launch after an occupancy check (GSHMEM_ERROR_INVALID_VALUE naming grid and maximum if the
// grid cannot be co-resident) -- and gshmemx_collective_launch_query_gridsize(func, block, args, shmem, &grid).
#ifndef GSHMEM_DEVICE_CUH
#define GSHMEM_DEVICE_CUH

#if !defined(__CUDACC__)
#error "<gshmem/device.cuh> is for CUDA sources (.cu, nvcc or clang -x cuda). Host-only code includes <gshmem/device/state.h> for gshmemx_device_handle."
#endif

#include "gshmem/gshmem.h"
#include "gshmem/device/state.h"
#include "gshmem/device/impl/common.cuh"
#include "gshmem/device/impl/rma.cuh"
#include "gshmem/device/impl/amo.cuh"
#include "gshmem/device/impl/sync.cuh"
#include "gshmem/device/impl/team.cuh"
#include "gshmem/device/impl/coll.cuh"
#include "gshmem/device/impl/free.cuh"
// Host code (the collective launch, device_handle()): not under NVRTC, which compiles device code only.
#if !defined(__CUDACC_RTC__)
#include "gshmem/device/impl/launch.cuh"

#include <stdexcept>
#include <string>

namespace gshmem {
// This PE's device state for a kernel argument; call after init (and again after team split/destroy or heap
// growth). Throws std::runtime_error with the library's message (not initialised, or a CPU PE).
inline DeviceHandle device_handle() {
  DeviceHandle h{};
  if (gshmemx_device_handle(&h) != GSHMEM_SUCCESS) throw std::runtime_error(gshmemx_last_error());
  return h;
}
}  // namespace gshmem

#endif  // !__CUDACC_RTC__

#endif  // GSHMEM_DEVICE_CUH
