/* NVSHMEM source compatibility for gshmem: `#include <nvshmem.h>` with -I<prefix>/include/gshmem/nvshmem.
 *
 * Host API under NVSHMEM's names (nvshmem_host.h), and in CUDA sources the device API too: gshmem's device
 * functions are header-only, so no device library is linked and -rdc is optional (programs built with -rdc work
 * as well). See docs/migration.md. */
#ifndef GSHMEM_NVSHMEM_H
#define GSHMEM_NVSHMEM_H

#include "nvshmem_host.h"

/* NVSHMEM_HOSTLIB_ONLY (defined by the program before this include) leaves the device API out, as NVSHMEM's header
 * does: PyTorch defines it in the device passes of architectures below sm_70, where the device API's atomics do
 * not compile. The collective launch helpers are host code and stay. */
#if defined(__CUDACC__) && !defined(NVSHMEM_HOSTLIB_ONLY)
#include "gshmem/device.cuh"
#elif defined(__CUDACC__) || (defined(__cplusplus) && defined(__has_include))
/* Host-only C++ (g++/clang++ with the CUDA headers on the include path) may launch kernels collectively, as with
 * NVSHMEM: nvshmemx_collective_launch and _query_gridsize are inline host code over the program's CUDA runtime. */
#if __has_include(<cuda_runtime.h>)
#include "gshmem/device/impl/launch.cuh"
#endif
#endif

#endif /* GSHMEM_NVSHMEM_H */
