// gshmem-bench: which SHMEM library this build measures. The benchmark calls only NVSHMEM names; this header
// supplies them:
//   BENCH_BACKEND_GSHMEM  gshmem through its NVSHMEM compatibility headers (include/gshmem/nvshmem/)
//   BENCH_BACKEND_NVSHMEM NVIDIA NVSHMEM (standalone build on the GPU machine; needs -rdc)
//   BENCH_BACKEND_OSHMEM  Open MPI's OSHMEM, host rows only (bench/oshmem_names.hpp)
// Feature macros (0/1): BENCH_HAVE_CUDA (device and stream rows), BENCH_HAVE_UID (unique-id bootstrap),
// BENCH_HOST_WAIT (host wait_until: host ping-pong), BENCH_HOST_AMO (host atomics), BENCH_HOST_SIGNAL (host
// putmem_signal), BENCH_HOST_COLL (host collectives on CPU PEs: gshmem, and OSHMEM through adapters onto OpenSHMEM
// 1.4's active-set routines, bench/oshmem_coll.hpp), BENCH_HOST_REDUCESCATTER (the host reducescatter row: not in
// the OSHMEM build, 1.4 has no such routine), BENCH_HOST_COLL_MEM_GRAIN (the *mem collectives move whole words of
// this many bytes: OSHMEM 4, its 32/64-bit routines; a row whose call count is not a multiple is left out of that
// build), BENCH_DEVICE_REDUCESCATTER_MAX_BYTES() (the largest source the device block-scope reducescatter may take; 0:
// no limit; NVSHMEM's reduce scratch), BENCH_HOST_COLL_PREPARE(bytes) / BENCH_HOST_COLL_RELEASE() (collective set-up
// and tear-down around the host coll rows: OSHMEM's symmetric pSync/pWrk arrays). NVSHMEM has p/g on the host but
// wait_until and atomics only in device code, so its build has no host ping-pong or host atomic rows; the host
// put-with-signal row is gshmem's only.
#pragma once

#if defined(BENCH_BACKEND_GSHMEM)
#include <nvshmem.h>
#include <nvshmemx.h>
#include <cstdlib>
#include <cstring>
#define BENCH_LIBRARY "gshmem"
#define BENCH_HAVE_UID 1
#define BENCH_HOST_WAIT 1
#define BENCH_HOST_AMO 1
#define BENCH_HOST_SIGNAL 1
#define BENCH_HOST_COLL 1
// gshmem runs CPU PEs where there is no GPU or GSHMEM_DEVICE=cpu; the benchmark must then make no CUDA call.
inline bool bench_want_gpu_pes() {
  const char* d = std::getenv("GSHMEM_DEVICE");
  return !(d && std::strcmp(d, "cpu") == 0);
}
inline bool bench_pe_is_gpu() {
  int ordinal = -1;
  return gshmemx_query_device(&ordinal, nullptr) == GSHMEM_SUCCESS && ordinal >= 0;
}

#elif defined(BENCH_BACKEND_NVSHMEM)
#include <nvshmem.h>
#include <nvshmemx.h>
#include <cstdint>
#include <cstdlib>
#define BENCH_LIBRARY "nvshmem"
#define BENCH_HAVE_UID 1
#define BENCH_HOST_WAIT 0
#define BENCH_HOST_AMO 0
inline bool bench_want_gpu_pes() { return true; }
inline bool bench_pe_is_gpu() { return true; }
// NVSHMEM 3.4.5's device reducescatter without NVLS (one-shot "allpush", non_abi/device/coll/reducescatter.cuh)
// puts all npes blocks of the source into the team's reduce scratch, half of NVSHMEM_REDUCE_SCRATCH_SIZE (default
// 512 KiB, documented as the space "reserved ... for every team to implement reduce and reducescatter"); a larger
// source is only refused by an assert, which NDEBUG (any Release build of the caller: the routine is inline in the
// headers) compiles out, so it writes past the scratch into other symmetric memory. The source bytes
// (npes x nreduce x size) the block form may take: half of NVSHMEM_REDUCE_SCRATCH_SIZE as NVSHMEM reads it (a
// number with an optional k, m, g or t suffix).
inline std::uint64_t bench_device_reducescatter_max_bytes() {
  double v = 524288;
  if (const char* e = std::getenv("NVSHMEM_REDUCE_SCRATCH_SIZE"); e && *e) {
    char* end = nullptr;
    v = std::strtod(e, &end);
    switch (end && *end ? *end : ' ') {
      case 'k': case 'K': v *= 1024.0; break;
      case 'm': case 'M': v *= 1024.0 * 1024; break;
      case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
      case 't': case 'T': v *= 1024.0 * 1024 * 1024 * 1024; break;
      default: break;
    }
  }
  return v >= 2 ? std::uint64_t(v / 2) : 1;
}
#define BENCH_DEVICE_REDUCESCATTER_MAX_BYTES() bench_device_reducescatter_max_bytes()

#elif defined(BENCH_BACKEND_OSHMEM)
#include "../oshmem_names.hpp"
#define BENCH_LIBRARY "oshmem"
#define BENCH_HAVE_UID 0
#define BENCH_HOST_WAIT 1
#define BENCH_HOST_AMO 1
#define BENCH_HOST_COLL 1
#define BENCH_HOST_REDUCESCATTER 0
#define BENCH_HOST_COLL_MEM_GRAIN 4
#define BENCH_HOST_COLL_PREPARE(bytes) bench::oshmem_coll::prepare(bytes)
#define BENCH_HOST_COLL_RELEASE() bench::oshmem_coll::release()
inline bool bench_want_gpu_pes() { return false; }
inline bool bench_pe_is_gpu() { return false; }

#else
#error "define one of BENCH_BACKEND_GSHMEM, BENCH_BACKEND_NVSHMEM, BENCH_BACKEND_OSHMEM (bench/CMakeLists.txt does)"
#endif

#ifndef BENCH_HOST_SIGNAL
#define BENCH_HOST_SIGNAL 0
#endif
#ifndef BENCH_HOST_COLL
#define BENCH_HOST_COLL 0
#endif
#ifndef BENCH_HOST_REDUCESCATTER
#define BENCH_HOST_REDUCESCATTER 1
#endif
#ifndef BENCH_HOST_COLL_MEM_GRAIN
#define BENCH_HOST_COLL_MEM_GRAIN 1
#endif
#ifndef BENCH_HOST_COLL_PREPARE
#define BENCH_HOST_COLL_PREPARE(bytes) true
#define BENCH_HOST_COLL_RELEASE() ((void)0)
#endif
#ifndef BENCH_HAVE_CUDA
#define BENCH_HAVE_CUDA 0
#endif
#ifndef BENCH_DEVICE_REDUCESCATTER_MAX_BYTES
#define BENCH_DEVICE_REDUCESCATTER_MAX_BYTES() std::uint64_t(0)  // no limit on the block form's source
#endif
