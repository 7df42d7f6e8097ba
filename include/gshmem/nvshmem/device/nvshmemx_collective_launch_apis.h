/* NVSHMEM source compatibility: <device/nvshmemx_collective_launch_apis.h>, a header NVSHMEM installs beside <nvshmem.h>,
 * which public programs include by that path. gshmem declares all of NVSHMEM's API in <nvshmem.h>. */
#ifndef GSHMEM_NVSHMEM_DEVICE_NVSHMEMX_COLLECTIVE_LAUNCH_APIS_H
#define GSHMEM_NVSHMEM_DEVICE_NVSHMEMX_COLLECTIVE_LAUNCH_APIS_H
#include "../nvshmem.h"
#endif /* GSHMEM_NVSHMEM_DEVICE_NVSHMEMX_COLLECTIVE_LAUNCH_APIS_H */
