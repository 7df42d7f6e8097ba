// Maps the NVSHMEM names of gshmem-bench's host rows onto OpenSHMEM (Open MPI's OSHMEM), so the host rows of the
// same source build against it as the CPU reference (standalone build, BENCH_BACKEND=oshmem). Host rows only: no
// CUDA, no unique-id bootstrap (oshrun starts and connects the PEs). The host collectives of the coll suite are
// adapters onto OpenSHMEM 1.4's active-set routines (oshmem_coll.hpp).
#pragma once
#include <shmem.h>

#include "oshmem_coll.hpp"

#define NVSHMEM_CMP_EQ SHMEM_CMP_EQ
#define NVSHMEM_CMP_GE SHMEM_CMP_GE

#define nvshmem_init shmem_init
#define nvshmem_finalize shmem_finalize
#define nvshmem_my_pe shmem_my_pe
#define nvshmem_n_pes shmem_n_pes
#define nvshmem_malloc shmem_malloc
#define nvshmem_free shmem_free
#define nvshmem_info_get_name shmem_info_get_name
#define nvshmem_global_exit shmem_global_exit

#define nvshmem_putmem shmem_putmem
#define nvshmem_getmem shmem_getmem
#define nvshmem_int_p shmem_int_p
#define nvshmem_int_g shmem_int_g
#define nvshmem_int_wait_until shmem_int_wait_until
#define nvshmem_ulonglong_atomic_fetch_add shmem_ulonglong_atomic_fetch_add
#define nvshmem_ulonglong_atomic_add shmem_ulonglong_atomic_add
#define nvshmem_quiet shmem_quiet
#define nvshmem_barrier_all shmem_barrier_all
#define nvshmem_sync_all shmem_sync_all
