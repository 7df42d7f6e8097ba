/* NVSHMEM source compatibility: <non_abi/nvshmem_version.h>, where NVSHMEM keeps its release numbers. Programs
 * include it by that path, and build scripts read the three defines as text (a regular expression over the file:
 * Triton-distributed's get_nvshmem_version, FindNVSHMEM.cmake modules), so they stay one plain #define a line.
 * They are the NVSHMEM API level gshmem's headers follow; gshmem's own version is GSHMEM_VERSION_*. */
#ifndef GSHMEM_NVSHMEM_NON_ABI_NVSHMEM_VERSION_H
#define GSHMEM_NVSHMEM_NON_ABI_NVSHMEM_VERSION_H

#define NVSHMEM_VENDOR_MAJOR_VERSION 3
#define NVSHMEM_VENDOR_MINOR_VERSION 4
#define NVSHMEM_VENDOR_PATCH_VERSION 5

#endif /* GSHMEM_NVSHMEM_NON_ABI_NVSHMEM_VERSION_H */
