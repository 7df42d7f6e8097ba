/* NVSHMEM source compatibility: <device/nvshmem_coll_defines.cuh>, a header NVSHMEM installs beside <nvshmem.h>,
 * which public programs include by that path. gshmem declares all of NVSHMEM's API in <nvshmem.h>. */
#ifndef GSHMEM_NVSHMEM_DEVICE_NVSHMEM_COLL_DEFINES_CUH
#define GSHMEM_NVSHMEM_DEVICE_NVSHMEM_COLL_DEFINES_CUH
#include "../nvshmem.h"
#endif /* GSHMEM_NVSHMEM_DEVICE_NVSHMEM_COLL_DEFINES_CUH */
