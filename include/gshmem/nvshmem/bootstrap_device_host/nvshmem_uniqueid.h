/* NVSHMEM source compatibility: <bootstrap_device_host/nvshmem_uniqueid.h>, a header NVSHMEM installs beside
 * <nvshmem.h> for nvshmemx_uniqueid_t and nvshmemx_uniqueid_args_t, which torch and pybind extensions include by
 * that path (Triton-distributed's pynvshmem). gshmem declares all of NVSHMEM's API in <nvshmem.h>. */
#ifndef GSHMEM_NVSHMEM_BOOTSTRAP_DEVICE_HOST_NVSHMEM_UNIQUEID_H
#define GSHMEM_NVSHMEM_BOOTSTRAP_DEVICE_HOST_NVSHMEM_UNIQUEID_H
#include "../nvshmem.h"
#endif /* GSHMEM_NVSHMEM_BOOTSTRAP_DEVICE_HOST_NVSHMEM_UNIQUEID_H */
