/* NVSHMEM source compatibility: <device_host_transport/nvshmem_constants.h>, a header NVSHMEM installs beside
 * <nvshmem.h> for its version, signal and comparison constants, which programs include by that path. gshmem
 * declares all of NVSHMEM's API in <nvshmem.h>. */
#ifndef GSHMEM_NVSHMEM_DEVICE_HOST_TRANSPORT_NVSHMEM_CONSTANTS_H
#define GSHMEM_NVSHMEM_DEVICE_HOST_TRANSPORT_NVSHMEM_CONSTANTS_H
#include "../nvshmem.h"
#endif /* GSHMEM_NVSHMEM_DEVICE_HOST_TRANSPORT_NVSHMEM_CONSTANTS_H */
