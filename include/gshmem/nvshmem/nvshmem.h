/* NVSHMEM source compatibility for gshmem: `#include <nvshmem.h>` with -I<prefix>/include/gshmem/nvshmem.
 *
 * Host API under NVSHMEM's names (nvshmem_host.h), and in CUDA sources the device API too: gshmem's device
 * functions are header-only, so no device library is linked and -rdc is optional (programs built with -rdc work
 * as well). See docs/migration.md. */
#ifndef GSHMEM_NVSHMEM_H
#define GSHMEM_NVSHMEM_H

#include "nvshmem_host.h"

#if defined(__CUDACC__)
#include "gshmem/device.cuh"
#endif

#endif /* GSHMEM_NVSHMEM_H */
