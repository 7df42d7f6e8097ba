/* NVSHMEM source compatibility for gshmem: `#include <nvshmemx.h>` (NVSHMEM's extensions: nvshmemx_* on-stream,
 * warp and block calls, init attributes, unique ids). gshmem declares them together with the rest, so this is
 * the same as <nvshmem.h>. */
#ifndef GSHMEM_NVSHMEMX_H
#define GSHMEM_NVSHMEMX_H

#include "nvshmem.h"

#endif /* GSHMEM_NVSHMEMX_H */
