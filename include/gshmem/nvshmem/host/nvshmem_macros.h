/* NVSHMEM source compatibility: <host/nvshmem_macros.h>, a header NVSHMEM installs beside <nvshmem.h>,
 * which public programs include by that path. gshmem declares all of NVSHMEM's API in <nvshmem.h>. */
#ifndef GSHMEM_NVSHMEM_HOST_NVSHMEM_MACROS_H
#define GSHMEM_NVSHMEM_HOST_NVSHMEM_MACROS_H
#include "../nvshmem.h"
#endif /* GSHMEM_NVSHMEM_HOST_NVSHMEM_MACROS_H */
