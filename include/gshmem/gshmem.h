/* gshmem: OpenSHMEM-style PGAS communication for NVIDIA GPUs and CPU PEs. The C host API.
 *
 * Names follow NVIDIA NVSHMEM with the prefix gshmem_/gshmemx_ in place of nvshmem_/nvshmemx_, with the same
 * argument order and meaning. Calls that return int return a status (GSHMEM_SUCCESS or a GSHMEM_ERROR_*); calls
 * that return void report an error on stderr (naming the call, the cause and the fix) and end the job, as
 * OpenSHMEM implementations do. The C++ API (gshmem.hpp) throws gshmem::Error instead.
 *
 * This header needs no CUDA header: streams are passed as gshmem_stream_t, which is the same type as
 * cudaStream_t / CUstream. */
#ifndef GSHMEM_GSHMEM_H
#define GSHMEM_GSHMEM_H

#if defined(__CUDACC_RTC__) /* NVRTC: no C library headers; CCCL's (on NVRTC's include path) */
#include <cuda/std/cstddef>
#include <cuda/std/cstdint>
using ::cuda::std::int16_t;
using ::cuda::std::int32_t;
using ::cuda::std::int64_t;
using ::cuda::std::int8_t;
using ::cuda::std::ptrdiff_t;
using ::cuda::std::size_t;
using ::cuda::std::uint16_t;
using ::cuda::std::uint32_t;
using ::cuda::std::uint64_t;
using ::cuda::std::uint8_t;
using ::cuda::std::uintptr_t;
#else
#include <stddef.h>
#include <stdint.h>
#endif

#include "gshmem/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC_RTC__)
/* NVRTC compiles device code only and refuses host declarations: the library's functions are declared __device__
 * there, so that the names device.cuh defines for device code (gshmem_putmem, gshmem_my_pe, ...) match, and the
 * host-only ones are never defined (not callable from device code). GSHMEMI_HOST_INLINE drops host inlines. */
#define GSHMEM_API __device__
#define GSHMEMI_HOST_INLINE static __device__ inline
#elif defined(__GNUC__)
#define GSHMEM_API __attribute__((visibility("default")))
#define GSHMEMI_HOST_INLINE static inline
#else
#define GSHMEM_API
#define GSHMEMI_HOST_INLINE static inline
#endif

struct CUstream_st;
typedef struct CUstream_st *gshmem_stream_t; /* == cudaStream_t */

/* ---- status codes ---- */
/* NVSHMEM's nvshmemx_status values (0-7, same meaning); gshmem's own from 8. */
enum gshmem_status {
  GSHMEM_SUCCESS = 0,
  GSHMEM_ERROR_INVALID_VALUE = 1,   /* a bad argument: the message names it */
  GSHMEM_ERROR_OUT_OF_MEMORY = 2,   /* symmetric heap or device memory exhausted */
  GSHMEM_ERROR_NOT_SUPPORTED = 3,   /* not available in this mode (e.g. stream calls on CPU PEs) */
  GSHMEM_ERROR_MISMATCH = 4,        /* PEs made a collective call with different arguments (NVSHMEM: SYMMETRY) */
  GSHMEM_ERROR_GPU_NOT_SELECTED = 5, /* NVSHMEM's value; gshmem picks a GPU itself, so it does not return it */
  GSHMEM_ERROR_COLLECTIVE_LAUNCH_FAILED = 6, /* gshmemx_collective_launch could not launch the kernel */
  GSHMEM_ERROR_INTERNAL = 7,
  GSHMEM_ERROR_NOT_INITIALIZED = 8, /* call needs gshmem_init first */
  GSHMEM_ERROR_PEER_FAILED = 9,     /* another PE died or aborted */
  GSHMEM_ERROR_TIMEOUT = 10,        /* a wait passed its limit */
  GSHMEM_ERROR_SYSTEM = 11          /* an OS, network or CUDA call failed */
};

/* Text of the last error this thread saw from a status-returning call ("" if none). */
GSHMEM_API const char *gshmemx_last_error(void);
GSHMEM_API const char *gshmemx_status_string(int status);

/* ---- init / query ---- */
enum gshmem_init_status {
  GSHMEM_STATUS_NOT_INITIALIZED = 0,
  GSHMEM_STATUS_IS_BOOTSTRAPPED = 1,
  GSHMEM_STATUS_IS_INITIALIZED = 2,
  /* NVSHMEM's values for PEs sharing a GPU in its limited / full multi-PE-per-GPU modes. gshmem has one mode
   * (every call works with PEs sharing a GPU) and reports GSHMEM_STATUS_IS_INITIALIZED there too. */
  GSHMEM_STATUS_LIMITED_MPG = 3,
  GSHMEM_STATUS_FULL_MPG = 4
};

enum gshmemx_init_flags {
  GSHMEMX_INIT_THREAD_PES = 1,
  GSHMEMX_INIT_WITH_MPI_COMM = 1 << 1,
  GSHMEMX_INIT_WITH_SHMEM = 1 << 2,
  GSHMEMX_INIT_WITH_UNIQUEID = 1 << 3
};

/* The init structs have NVIDIA NVSHMEM 3.4.5's layout, member names and version numbers, so a program that fills
 * them the NVSHMEM way (field by field, or with the initializers) behaves the same. A layout's version is
 * (major << 16) + its size, NVSHMEM's numbering. */
#if defined(__cplusplus)
#define GSHMEMI_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define GSHMEMI_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
#define GSHMEMX_UNIQUEID_BYTES 128
typedef struct {
  int32_t version;
  char internal[GSHMEMX_UNIQUEID_BYTES - sizeof(int32_t)];
} gshmemx_uniqueid_t;
GSHMEMI_STATIC_ASSERT(sizeof(gshmemx_uniqueid_t) == 128, "gshmemx_uniqueid_t is 128 bytes, as in NVSHMEM");
#define GSHMEMX_UNIQUEID_VERSION ((1 << 16) + (int32_t)sizeof(gshmemx_uniqueid_t))
#define GSHMEMX_UNIQUEID_INITIALIZER {GSHMEMX_UNIQUEID_VERSION, {0}}

typedef struct {
  int32_t version;
  gshmemx_uniqueid_t *id; /* set by gshmemx_set_attr_uniqueid_args (only read by init) */
  int32_t myrank;
  int32_t nranks;
} gshmemx_uniqueid_args_t;
GSHMEMI_STATIC_ASSERT(sizeof(gshmemx_uniqueid_args_t) == 24, "gshmemx_uniqueid_args_t is 24 bytes, as in NVSHMEM");
#define GSHMEMX_UNIQUEID_ARGS_VERSION ((1 << 16) + (int32_t)sizeof(gshmemx_uniqueid_args_t))
#define GSHMEMX_UNIQUEID_ARGS_INITIALIZER {GSHMEMX_UNIQUEID_ARGS_VERSION, NULL, -1, -1}

typedef struct {
  int32_t version;
  gshmemx_uniqueid_args_t uid_args;
  char content[96];
} gshmemx_init_args_t;
GSHMEMI_STATIC_ASSERT(sizeof(gshmemx_init_args_t) == 128, "gshmemx_init_args_t is 128 bytes, as in NVSHMEM");
#define GSHMEMX_INIT_ARGS_VERSION ((1 << 16) + (int32_t)sizeof(gshmemx_init_args_t))
#define GSHMEMX_INIT_ARGS_INITIALIZER {GSHMEMX_INIT_ARGS_VERSION, GSHMEMX_UNIQUEID_ARGS_INITIALIZER, {0}}

typedef struct {
  int32_t version;
  void *mpi_comm; /* with GSHMEMX_INIT_WITH_MPI_COMM: pointer to an MPI_Comm */
  gshmemx_init_args_t args;
} gshmemx_init_attr_t;
GSHMEMI_STATIC_ASSERT(sizeof(gshmemx_init_attr_t) == 144, "gshmemx_init_attr_t is 144 bytes, as in NVSHMEM");
#define GSHMEMX_INIT_ATTR_VERSION ((1 << 16) + (int32_t)sizeof(gshmemx_init_attr_t))
#define GSHMEMX_INIT_ATTR_INITIALIZER {GSHMEMX_INIT_ATTR_VERSION, NULL, GSHMEMX_INIT_ARGS_INITIALIZER}
/* Stamps the layout versions into an attribute struct (a statement, as in NVSHMEM). gshmemx_init_attr and
 * gshmemx_hostlib_init_attr do it themselves, so a struct the program never initialised works, as with NVSHMEM:
 * only the members the flags name are read (mpi_comm, or args.uid_args). */
#define gshmemx_init_init_attr_ver_only(attr)                   \
  do {                                                          \
    (attr).version = GSHMEMX_INIT_ATTR_VERSION;                 \
    (attr).args.version = GSHMEMX_INIT_ARGS_VERSION;            \
    (attr).args.uid_args.version = GSHMEMX_UNIQUEID_ARGS_VERSION; \
  } while (0)

/* The compiled-against version is passed so that a header/library mismatch is caught at start. */
GSHMEM_API int gshmemi_init(int major, int minor, int patch);
GSHMEM_API int gshmemxi_init_attr(unsigned int flags, gshmemx_init_attr_t *attr, int major, int minor, int patch);
/* NVSHMEM's nvshmem_init (the compat header maps the name onto it): gshmem_init that ends the job on failure, as
 * NVSHMEM's does. A function the library exports, not an inline, so that a program may redeclare it and test its
 * address to see whether the library is linked (PyTorch's `extern "C" void nvshmem_init() __attribute__((weak))`).
 * Being one symbol for every caller, it checks the library's own version, not the one compiled against. */
GSHMEM_API void gshmemi_nvshmem_init(void);
/* Returns GSHMEM_SUCCESS or a status; on failure the reason is also printed to stderr. */
GSHMEMI_HOST_INLINE int gshmem_init(void) {
  return gshmemi_init(GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH);
}
GSHMEMI_HOST_INLINE int gshmemx_init_attr(unsigned int flags, gshmemx_init_attr_t *attr) {
  if (attr) gshmemx_init_init_attr_ver_only(*attr);
  return gshmemxi_init_attr(flags, attr, GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH);
}
/* Thread levels (OpenSHMEM, same values as NVSHMEM_THREAD_*). gshmem provides at most GSHMEM_THREAD_SERIALIZED:
 * any thread may call gshmem, one at a time (host atomics of GPU PEs share one result word per PE). */
enum gshmem_thread_level {
  GSHMEM_THREAD_SINGLE = 0,
  GSHMEM_THREAD_FUNNELED = 1,
  GSHMEM_THREAD_SERIALIZED = 2,
  GSHMEM_THREAD_MULTIPLE = 3
};
GSHMEM_API int gshmemi_init_thread(int requested, int *provided, int major, int minor, int patch);
/* gshmem_init that also asks for a thread level; *provided gets min(requested, GSHMEM_THREAD_SERIALIZED).
 * Returns a status like gshmem_init. */
GSHMEMI_HOST_INLINE int gshmem_init_thread(int requested, int *provided) {
  return gshmemi_init_thread(requested, provided, GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH);
}
/* The thread level this PE was initialised with (GSHMEM_THREAD_SERIALIZED after gshmem_init). */
GSHMEM_API void gshmem_query_thread(int *provided);
/* NVSHMEM's "host library only" init and finalize: gshmem has no separate device library, so these are
 * gshmemx_init_attr and gshmem_finalize (device code included by the program is served either way). */
GSHMEM_API int gshmemxi_hostlib_init_attr(unsigned int flags, gshmemx_init_attr_t *attr, int major, int minor,
                                          int patch);
GSHMEMI_HOST_INLINE int gshmemx_hostlib_init_attr(unsigned int flags, gshmemx_init_attr_t *attr) {
  if (attr) gshmemx_init_init_attr_ver_only(*attr);
  return gshmemxi_hostlib_init_attr(flags, attr, GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH);
}
GSHMEM_API void gshmemx_hostlib_finalize(void);
/* Sets attr->mpi_comm (the address of an MPI_Comm) for gshmemx_init_attr(GSHMEMX_INIT_WITH_MPI_COMM, attr). */
GSHMEM_API int gshmemx_set_attr_mpi_comm_args(void *mpi_comm, gshmemx_init_attr_t *attr);
GSHMEM_API int gshmemx_get_uniqueid(gshmemx_uniqueid_t *uid);
GSHMEM_API int gshmemx_set_attr_uniqueid_args(int myrank, int nranks, const gshmemx_uniqueid_t *uid,
                                              gshmemx_init_attr_t *attr);
GSHMEM_API void gshmem_finalize(void);
GSHMEM_API int gshmemx_init_status(void);
GSHMEM_API int gshmem_my_pe(void);
GSHMEM_API int gshmem_n_pes(void);
GSHMEM_API void gshmem_info_get_version(int *major, int *minor);
GSHMEM_API void gshmem_info_get_name(char *name); /* at least GSHMEM_MAX_NAME_LEN bytes */
GSHMEM_API void gshmem_global_exit(int status);

/* The device this PE runs on: a CUDA ordinal, or -1 for a CPU PE. *count: GPUs visible to this process
 * (0 on CPU PEs). Either pointer may be NULL. */
GSHMEM_API int gshmemx_query_device(int *ordinal, int *count);

/* ---- symmetric heap ---- */
/* Collective. When the heap cannot hold the request (past GSHMEM_MAX_HEAP_SIZE, or the memory cannot be had) every
 * PE gets NULL, as in OpenSHMEM and NVSHMEM: the reason is printed and in gshmemx_last_error(), and the heap stays
 * usable. Other errors (different arguments on different PEs, ...) end the job. The same for calloc, align and
 * realloc (whose old object is then kept). */
GSHMEM_API void *gshmem_malloc(size_t size);
GSHMEM_API void *gshmem_calloc(size_t count, size_t size);
GSHMEM_API void *gshmem_align(size_t alignment, size_t size);
/* Collective. The PEs may free different objects in one call (frameworks free from destructors in the order garbage
 * collection picks; NVSHMEM compares nothing either), but by the next allocation every PE must have freed the same
 * objects: that allocation otherwise ends the job (GSHMEM_ERROR_MISMATCH, naming the free where they parted). */
GSHMEM_API void gshmem_free(void *ptr);
/* Collective (OpenSHMEM shmem_realloc): a new symmetric object of `size` bytes holding the first
 * min(old size, size) bytes of `ptr`'s, then `ptr` is freed. ptr NULL: gshmem_malloc(size); size 0: gshmem_free(ptr),
 * returns NULL. Every PE passes the same object and size; on return every PE has finished its copy. */
GSHMEM_API void *gshmem_realloc(void *ptr, size_t size);
/* Local buffers for RMA (NVSHMEM's nvshmemx_buffer_register). GPU PEs reach peers over NVLink with loads, stores
 * and copy engines, so any local device or host buffer already works as the local source or destination of a
 * put/get; gshmem keeps a table of registrations so that programs written for NVSHMEM's remote transports keep
 * their pairing: registering a range that overlaps a registered one or the symmetric heap, or unregistering an
 * address that is not the start of a registration, is GSHMEM_ERROR_INVALID_VALUE with a message. */
GSHMEM_API int gshmemx_buffer_register(void *addr, size_t length);
GSHMEM_API int gshmemx_buffer_unregister(void *addr);
GSHMEM_API void gshmemx_buffer_unregister_all(void);
/* Collective (NVSHMEM's nvshmemx_buffer_register_symmetric): every PE passes its own buffer of the same size; the
 * buffers become one symmetric object at the returned address (the same offset in every PE's heap), usable by every
 * host, *_on_stream and device call like memory from gshmem_malloc. GPU PEs: memory mapped with the CUDA virtual
 * memory API (cuMemCreate with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in requestedHandleTypes, on the PE's GPU,
 * cuMemMap), its start and size multiples of the allocation granularity; cudaMalloc memory is refused. CPU PEs: a
 * MAP_SHARED file mapping (memfd_create or shm_open + mmap), page-aligned, whose fd is still open at the call.
 * flags: 0. Returns NULL on error (message in gshmemx_last_error(), the same on every PE). The buffer stays the
 * program's: unregister before unmapping or freeing it. */
GSHMEM_API void *gshmemx_buffer_register_symmetric(void *buf_ptr, size_t size, int flags);
/* Collective: unmaps a region gshmemx_buffer_register_symmetric returned, on every PE (after this PE's outstanding
 * work); size as registered. Returns GSHMEM_SUCCESS or an error status (message in gshmemx_last_error()). */
GSHMEM_API int gshmemx_buffer_unregister_symmetric(void *mmap_ptr, size_t size);
/* Direct pointer to `dest`'s copy on `pe`, usable by loads and stores of this process (on GPU PEs: from device
 * code), or NULL if `pe` cannot be reached that way. */
GSHMEM_API void *gshmem_ptr(const void *dest, int pe);
typedef struct {
  uint64_t heap_size;     /* bytes of symmetric heap backed now on each PE */
  uint64_t used;          /* bytes allocated by gshmem_malloc & co (incl. alignment) */
  uint64_t max_size;      /* the most the heap can grow to (GSHMEM_MAX_HEAP_SIZE) */
  uint64_t reserved_internal; /* bytes the library keeps for its own flags */
  uint64_t allocations;   /* live allocations */
} gshmemx_heap_usage_t;
GSHMEM_API int gshmemx_heap_usage(gshmemx_heap_usage_t *usage);

/* Shared memory for TMA transfers (NVSHMEM 3.7's nvshmemx_ask_smem / _give_smem / _release_smem): gshmem moves
 * data with SM loads and stores and never asks for a CTA's shared memory, so giving it is accepted and changes
 * nothing (the device calls are no-ops), and a put whose source is shared memory works as from any local memory.
 * gshmemx_ask_smem answers NVSHMEM's sizes for RECOMMENDED (64 KiB) and MINIMUM (32 KiB), because programs launch
 * with that much dynamic shared memory and keep their own data in it, and 0 for BARRIERS_ONLY (the part a program
 * must leave to the library: none). Host and device. */
typedef enum {
  GSHMEMX_SMEM_RECOMMENDED = 0,
  GSHMEMX_SMEM_MINIMUM = 1,
  GSHMEMX_SMEM_BARRIERS_ONLY = 2,
  GSHMEMX_SMEM_AMOUNT_MAX = 0x7fffffff
} gshmemx_smem_amount_t;
#if defined(__CUDACC__)
__host__ __device__
#endif
static inline int gshmemx_ask_smem(gshmemx_smem_amount_t amount) {
  return amount == GSHMEMX_SMEM_BARRIERS_ONLY ? 0 : amount == GSHMEMX_SMEM_MINIMUM ? 32768 : 65536;
}

/* ---- teams ---- */
typedef int32_t gshmem_team_t;
#define GSHMEM_TEAM_INVALID (-1)
#define GSHMEM_TEAM_WORLD 0
#define GSHMEM_TEAM_SHARED 1
#define GSHMEMX_TEAM_NODE 2
#define GSHMEMX_TEAM_SAME_MYPE_NODE 3
/* The PEs that use this PE's GPU (a CPU PE is its own device: just this PE), and the lowest PE of each GPU.
 * NVSHMEM spells them NVSHMEMI_TEAM_SAME_GPU / NVSHMEMI_TEAM_GPU_LEADERS. On a PE that is not the lowest of its
 * GPU, GSHMEMX_TEAM_GPU_LEADERS is a team it is not in: team_my_pe and team_n_pes return -1 (src/team/README.md). */
#define GSHMEMX_TEAM_SAME_GPU 4
#define GSHMEMX_TEAM_GPU_LEADERS 5
/* The predefined teams' slots (NVSHMEM's NVSHMEM_TEAM_*_INDEX); splits take slots from GSHMEM_TEAMS_MIN up. */
#define GSHMEM_TEAM_WORLD_INDEX 0
#define GSHMEM_TEAM_SHARED_INDEX 1
#define GSHMEM_TEAM_NODE_INDEX 2
#define GSHMEM_TEAM_SAME_MYPE_NODE_INDEX 3
#define GSHMEM_TEAM_SAME_GPU_INDEX 4
#define GSHMEM_TEAM_GPU_LEADERS_INDEX 5
#define GSHMEM_TEAMS_MIN 6
/* NVSHMEM 3.4.5's layout (version 2), member names and initializer. gshmem has no communication contexts, so
 * num_contexts is accepted and not used; uniqueid is what gshmemx_team_init's members meet by (splits ignore it). */
typedef struct {
  int32_t version;
  int32_t num_contexts;
  uint64_t uniqueid;
  char padding[48];
} gshmem_team_config_t;
GSHMEMI_STATIC_ASSERT(sizeof(gshmem_team_config_t) == 64, "gshmem_team_config_t is 64 bytes, as in NVSHMEM");
#define GSHMEM_TEAM_CONFIG_VERSION ((2 << 16) + (int32_t)sizeof(gshmem_team_config_t))
#define GSHMEM_TEAM_CONFIG_INITIALIZER {GSHMEM_TEAM_CONFIG_VERSION, -1, UINT64_MAX, {0}}
#define GSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS 0x1L
#define GSHMEM_TEAM_CONFIG_MASK_UNIQUEID 0x2L

GSHMEM_API int gshmem_team_my_pe(gshmem_team_t team);
GSHMEM_API int gshmem_team_n_pes(gshmem_team_t team);
GSHMEM_API int gshmem_team_translate_pe(gshmem_team_t src_team, int src_pe, gshmem_team_t dest_team);
GSHMEM_API int gshmem_team_split_strided(gshmem_team_t parent, int start, int stride, int size,
                                         const gshmem_team_config_t *config, long config_mask,
                                         gshmem_team_t *new_team);
GSHMEM_API int gshmem_team_split_2d(gshmem_team_t parent, int xrange, const gshmem_team_config_t *xaxis_config,
                                    long xaxis_mask, gshmem_team_t *xaxis_team,
                                    const gshmem_team_config_t *yaxis_config, long yaxis_mask,
                                    gshmem_team_t *yaxis_team);
GSHMEM_API void gshmem_team_destroy(gshmem_team_t team);
/* Teams made by their members alone (NVSHMEM 3.4's nvshmemx_team_get_uniqueid / nvshmemx_team_init): one member
 * gets a unique ID and sends it to the others by its own means (MPI, torch.distributed, a symmetric buffer); each
 * member then calls gshmemx_team_init with it in config->uniqueid (read whatever config_mask says), the team's size
 * and its own index. Only the members call. Any set of world PEs in any index order makes a team (one that is not
 * start + i*stride with stride >= 1 is held as a member list, for host and device code alike). Without a
 * unique ID (0 or UINT64_MAX) only the team of every PE in world order can be made (every PE calls). Returns 0 or
 * a status (gshmemx_last_error says why). */
typedef uint64_t gshmemx_team_uniqueid_t;
GSHMEM_API int gshmemx_team_get_uniqueid(gshmemx_team_uniqueid_t *uniqueid);
GSHMEM_API int gshmemx_team_init(gshmem_team_t *team, gshmem_team_config_t *config, long config_mask, int npes,
                                 int pe_idx_in_team);
/* Multicast address of `ptr` for `team`: always NULL (NVSHMEM's answer when NVLink multicast is unavailable).
 * gshmem does not use NVLink multicast (NVLS); callers fall back to unicast (gshmem_ptr / put). */
GSHMEM_API void *gshmemx_mc_ptr(gshmem_team_t team, const void *ptr);
/* NVSHMEM's form: (team, config). num_contexts is always 0: gshmem has no communication contexts. */
GSHMEM_API void gshmem_team_get_config(gshmem_team_t team, gshmem_team_config_t *config);

/* ---- ordering and synchronisation ---- */
GSHMEM_API void gshmem_quiet(void);
GSHMEM_API void gshmem_fence(void);
GSHMEM_API void gshmem_barrier_all(void);
GSHMEM_API void gshmem_sync_all(void);
GSHMEM_API int gshmem_barrier(gshmem_team_t team);
GSHMEM_API int gshmem_team_sync(gshmem_team_t team);

/* ---- comparison and signal constants ---- */
enum gshmem_cmp {
  GSHMEM_CMP_EQ = 0,
  GSHMEM_CMP_NE = 1,
  GSHMEM_CMP_GT = 2,
  GSHMEM_CMP_LE = 3,
  GSHMEM_CMP_LT = 4,
  GSHMEM_CMP_GE = 5
};
/* Same values as NVSHMEM 3.x, so code and bindings that pass the numbers (not the names) behave the same. */
enum gshmem_signal_op { GSHMEM_SIGNAL_SET = 9, GSHMEM_SIGNAL_ADD = 10 };

/* ---- RMA: untyped ---- */
GSHMEM_API void gshmem_putmem(void *dest, const void *source, size_t bytes, int pe);
GSHMEM_API void gshmem_getmem(void *dest, const void *source, size_t bytes, int pe);
GSHMEM_API void gshmem_putmem_nbi(void *dest, const void *source, size_t bytes, int pe);
GSHMEM_API void gshmem_getmem_nbi(void *dest, const void *source, size_t bytes, int pe);
/* Sized forms: gshmem_put8/16/32/64/128 and get, nbi, iput, iget, put_signal[_nbi] (element size in bits), and
 * their stream-ordered forms (gshmemx_put8_on_stream, ...; GPU PEs, see "stream-ordered" below). NVSHMEM declares
 * put<N>_signal[_nbi] for device code only; gshmem has them on the host too, like the typed put_signal. */
#define GSHMEMI_DECL_SIZED(BITS)                                                                               \
  GSHMEM_API void gshmem_put##BITS(void *dest, const void *source, size_t nelems, int pe);                    \
  GSHMEM_API void gshmem_get##BITS(void *dest, const void *source, size_t nelems, int pe);                    \
  GSHMEM_API void gshmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe);              \
  GSHMEM_API void gshmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe);              \
  GSHMEM_API void gshmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,             \
                                    size_t nelems, int pe);                                                    \
  GSHMEM_API void gshmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,             \
                                    size_t nelems, int pe);                                                    \
  GSHMEM_API void gshmem_put##BITS##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, \
                                            uint64_t signal, int sig_op, int pe);                              \
  GSHMEM_API void gshmem_put##BITS##_signal_nbi(void *dest, const void *source, size_t nelems,                 \
                                                uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);      \
  GSHMEM_API void gshmemx_put##BITS##_on_stream(void *dest, const void *source, size_t nelems, int pe,         \
                                                gshmem_stream_t stream);                                       \
  GSHMEM_API void gshmemx_get##BITS##_on_stream(void *dest, const void *source, size_t nelems, int pe,         \
                                                gshmem_stream_t stream);                                       \
  GSHMEM_API void gshmemx_put##BITS##_nbi_on_stream(void *dest, const void *source, size_t nelems, int pe,     \
                                                    gshmem_stream_t stream);                                   \
  GSHMEM_API void gshmemx_get##BITS##_nbi_on_stream(void *dest, const void *source, size_t nelems, int pe,     \
                                                    gshmem_stream_t stream);                                   \
  GSHMEM_API void gshmemx_iput##BITS##_on_stream(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                                                 size_t nelems, int pe, gshmem_stream_t stream);               \
  GSHMEM_API void gshmemx_iget##BITS##_on_stream(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                                                 size_t nelems, int pe, gshmem_stream_t stream);               \
  GSHMEM_API void gshmemx_put##BITS##_signal_on_stream(void *dest, const void *source, size_t nelems,          \
                                                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, \
                                                       gshmem_stream_t stream);                                \
  GSHMEM_API void gshmemx_put##BITS##_signal_nbi_on_stream(void *dest, const void *source, size_t nelems,      \
                                                           uint64_t *sig_addr, uint64_t signal, int sig_op,    \
                                                           int pe, gshmem_stream_t stream);
GSHMEMI_DECL_SIZED(8)
GSHMEMI_DECL_SIZED(16)
GSHMEMI_DECL_SIZED(32)
GSHMEMI_DECL_SIZED(64)
GSHMEMI_DECL_SIZED(128)

/* ---- type lists (NVSHMEM's standard types; X(TYPE, TYPENAME)) ---- */
#define GSHMEM_RMA_TYPES(X)                                                                                    \
  X(float, float) X(double, double) X(char, char) X(signed char, schar) X(short, short) X(int, int)          \
  X(long, long) X(long long, longlong) X(unsigned char, uchar) X(unsigned short, ushort)                      \
  X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int8_t, int8)              \
  X(int16_t, int16) X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16)                \
  X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
#define GSHMEM_AMO_STANDARD_TYPES(X)                                                                           \
  X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint) X(unsigned long, ulong)              \
  X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)                    \
  X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
#define GSHMEM_AMO_EXTENDED_TYPES(X) GSHMEM_AMO_STANDARD_TYPES(X) X(float, float) X(double, double)
#define GSHMEM_AMO_BITWISE_TYPES(X)                                                                            \
  X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32)            \
  X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64)
/* Reductions (NVSHMEM 3.4.5's lists without half and bfloat16): and/or/xor over the bitwise types, max/min/sum/prod
 * over the standard ones. */
#define GSHMEM_REDUCE_BITWISE_TYPES(X)                                                                         \
  X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)             \
  X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16) X(int32_t, int32) X(int64_t, int64)     \
  X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)
#define GSHMEM_REDUCE_STANDARD_TYPES(X)                                                                        \
  GSHMEM_REDUCE_BITWISE_TYPES(X) X(char, char) X(signed char, schar) X(short, short) X(int, int) X(long, long) \
  X(long long, longlong) X(float, float) X(double, double)
#define GSHMEM_WAIT_TYPES(X)                                                                                   \
  X(short, short) X(int, int) X(long, long) X(long long, longlong) X(unsigned short, ushort)                  \
  X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32)            \
  X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)

/* ---- RMA: typed ---- */
#define GSHMEMI_DECL_RMA(T, N)                                                                                 \
  GSHMEM_API void gshmem_##N##_put(T *dest, const T *source, size_t nelems, int pe);                          \
  GSHMEM_API void gshmem_##N##_get(T *dest, const T *source, size_t nelems, int pe);                          \
  GSHMEM_API void gshmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe);                      \
  GSHMEM_API void gshmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe);                      \
  GSHMEM_API void gshmem_##N##_p(T *dest, T value, int pe);                                                   \
  GSHMEM_API T gshmem_##N##_g(const T *source, int pe);                                                       \
  GSHMEM_API void gshmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,    \
                                    int pe);                                                                   \
  GSHMEM_API void gshmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,    \
                                    int pe);                                                                   \
  GSHMEM_API void gshmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,        \
                                          uint64_t signal, int sig_op, int pe);                                \
  GSHMEM_API void gshmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,    \
                                              uint64_t signal, int sig_op, int pe);                            \
  GSHMEM_API void gshmemx_##N##_put_on_stream(T *dest, const T *source, size_t nelems, int pe,                \
                                              gshmem_stream_t stream);                                         \
  GSHMEM_API void gshmemx_##N##_get_on_stream(T *dest, const T *source, size_t nelems, int pe,                \
                                              gshmem_stream_t stream);                                         \
  GSHMEM_API void gshmemx_##N##_p_on_stream(T *dest, T value, int pe, gshmem_stream_t stream);                \
  GSHMEM_API void gshmemx_##N##_put_signal_on_stream(T *dest, const T *source, size_t nelems,                 \
                                                     uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,  \
                                                     gshmem_stream_t stream);                                  \
  GSHMEM_API void gshmemx_##N##_put_signal_nbi_on_stream(T *dest, const T *source, size_t nelems,             \
                                                         uint64_t *sig_addr, uint64_t signal, int sig_op,      \
                                                         int pe, gshmem_stream_t stream);                      \
  GSHMEM_API void gshmemx_##N##_put_nbi_on_stream(T *dest, const T *source, size_t nelems, int pe,            \
                                                  gshmem_stream_t stream);                                     \
  GSHMEM_API void gshmemx_##N##_get_nbi_on_stream(T *dest, const T *source, size_t nelems, int pe,            \
                                                  gshmem_stream_t stream);                                     \
  GSHMEM_API T gshmemx_##N##_g_on_stream(const T *source, int pe, gshmem_stream_t stream);                    \
  GSHMEM_API void gshmemx_##N##_iput_on_stream(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,        \
                                               size_t nelems, int pe, gshmem_stream_t stream);                 \
  GSHMEM_API void gshmemx_##N##_iget_on_stream(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,        \
                                               size_t nelems, int pe, gshmem_stream_t stream);
GSHMEM_RMA_TYPES(GSHMEMI_DECL_RMA)

/* ---- collectives (OpenSHMEM 1.5 / NVSHMEM): every member of `team` calls with the same arguments; on return
 * dest is complete on this PE and source may be reused. nelems counts bytes in the *mem forms, elements in the
 * typed ones. broadcast: PE_root's source lands in dest of every member (the root's too; dest == source is
 * allowed); fcollect: member i's source lands at dest + i*nelems of every member; alltoall: block j of member i's
 * source lands at dest + i*nelems of member j. dest symmetric; fcollect/alltoall dest must not overlap source.
 * Return GSHMEM_SUCCESS; bad arguments (a team this PE is not in, PE_root outside the team, a size that overflows,
 * dest not symmetric, overlapping buffers) end the job with a message naming the call, since the other members
 * would otherwise wait for this one. The _on_stream forms (GPU PEs) enqueue the collective on `stream`. */
GSHMEM_API int gshmem_broadcastmem(gshmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root);
GSHMEM_API int gshmem_fcollectmem(gshmem_team_t team, void *dest, const void *source, size_t nelems);
GSHMEM_API int gshmem_alltoallmem(gshmem_team_t team, void *dest, const void *source, size_t nelems);
GSHMEM_API int gshmemx_broadcastmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                              int PE_root, gshmem_stream_t stream);
GSHMEM_API int gshmemx_fcollectmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                             gshmem_stream_t stream);
GSHMEM_API int gshmemx_alltoallmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                             gshmem_stream_t stream);
#define GSHMEMI_DECL_COLL(T, N)                                                                                \
  GSHMEM_API int gshmem_##N##_broadcast(gshmem_team_t team, T *dest, const T *source, size_t nelems,          \
                                        int PE_root);                                                          \
  GSHMEM_API int gshmem_##N##_fcollect(gshmem_team_t team, T *dest, const T *source, size_t nelems);          \
  GSHMEM_API int gshmem_##N##_alltoall(gshmem_team_t team, T *dest, const T *source, size_t nelems);          \
  GSHMEM_API int gshmemx_##N##_broadcast_on_stream(gshmem_team_t team, T *dest, const T *source,              \
                                                   size_t nelems, int PE_root, gshmem_stream_t stream);        \
  GSHMEM_API int gshmemx_##N##_fcollect_on_stream(gshmem_team_t team, T *dest, const T *source, size_t nelems, \
                                                  gshmem_stream_t stream);                                     \
  GSHMEM_API int gshmemx_##N##_alltoall_on_stream(gshmem_team_t team, T *dest, const T *source, size_t nelems, \
                                                  gshmem_stream_t stream);
GSHMEM_RMA_TYPES(GSHMEMI_DECL_COLL)
/* alltoalls: the strided alltoall. Element l of block j of member i's source (source[sst * (j * nelems + l)])
 * lands at dest[dst * (i * nelems + l)] of member j; dst and sst count elements and must be at least 1; dest must
 * not be source. Host (and device thread) form only, as in NVSHMEM. */
#define GSHMEMI_DECL_ALLTOALLS(T, N)                                                                           \
  GSHMEM_API int gshmem_##N##_alltoalls(gshmem_team_t team, T *dest, const T *source, ptrdiff_t dst,          \
                                        ptrdiff_t sst, size_t nelems);
GSHMEM_RMA_TYPES(GSHMEMI_DECL_ALLTOALLS)
/* Reductions: every member of `team` calls with the same arguments. reduce: dest[i] = op over all members'
 * source[i], i < nreduce, on every member; dest == source is allowed, otherwise they must not overlap.
 * reducescatter: member m's dest[i] = op over all members' source[m*nreduce + i] (source holds team-size blocks of
 * nreduce); dest and source must not overlap. dest and source symmetric. Members combine in team-index order
 * (op(op(s0, s1), s2)...), so every member gets the bit-identical result, floating point included; integer sum and
 * prod wrap modulo 2^bits. Errors and the _on_stream forms as above. */
/* The reduction ops by type class, X(T, TYPENAME, op, Op) (op: the name's part; Op: gshmem::coll::ReduceOp's
 * enumerator): the one list every definition site of the typed reductions expands. */
#define GSHMEM_REDUCE_BITWISE_OPS(X, T, N) X(T, N, and, And) X(T, N, or, Or) X(T, N, xor, Xor)
#define GSHMEM_REDUCE_ARITH_OPS(X, T, N) X(T, N, max, Max) X(T, N, min, Min) X(T, N, sum, Sum) X(T, N, prod, Prod)
#define GSHMEMI_DECL_REDUCE_OP(T, N, OP, O)                                                                    \
  GSHMEM_API int gshmem_##N##_##OP##_reduce(gshmem_team_t team, T *dest, const T *source, size_t nreduce);    \
  GSHMEM_API int gshmem_##N##_##OP##_reducescatter(gshmem_team_t team, T *dest, const T *source,              \
                                                   size_t nreduce);                                            \
  GSHMEM_API int gshmemx_##N##_##OP##_reduce_on_stream(gshmem_team_t team, T *dest, const T *source,          \
                                                       size_t nreduce, gshmem_stream_t stream);                \
  GSHMEM_API int gshmemx_##N##_##OP##_reducescatter_on_stream(gshmem_team_t team, T *dest, const T *source,   \
                                                              size_t nreduce, gshmem_stream_t stream);
#define GSHMEMI_DECL_REDUCE_BITWISE(T, N) GSHMEM_REDUCE_BITWISE_OPS(GSHMEMI_DECL_REDUCE_OP, T, N)
#define GSHMEMI_DECL_REDUCE_STANDARD(T, N) GSHMEM_REDUCE_ARITH_OPS(GSHMEMI_DECL_REDUCE_OP, T, N)
GSHMEM_REDUCE_BITWISE_TYPES(GSHMEMI_DECL_REDUCE_BITWISE)
GSHMEM_REDUCE_STANDARD_TYPES(GSHMEMI_DECL_REDUCE_STANDARD)
/* The collectives by kind, element size and type code, for the header-only typed forms of CUDA's half and bfloat16
 * (gshmem/device.cuh; this header knows no CUDA type) and for bindings. `call` names the user's call in errors;
 * on_stream 0: the blocking host form, 1: enqueued on `stream`. Kinds, ops and types: */
#define GSHMEMI_COLL_BROADCAST 0
#define GSHMEMI_COLL_FCOLLECT 1
#define GSHMEMI_COLL_ALLTOALL 2
#define GSHMEMI_COLL_ALLTOALLS 3 /* blocking only */
#define GSHMEMI_REDUCE_AND 0
#define GSHMEMI_REDUCE_OR 1
#define GSHMEMI_REDUCE_XOR 2
#define GSHMEMI_REDUCE_MAX 3
#define GSHMEMI_REDUCE_MIN 4
#define GSHMEMI_REDUCE_SUM 5
#define GSHMEMI_REDUCE_PROD 6
#define GSHMEMI_REDUCE_INT8 0
#define GSHMEMI_REDUCE_INT16 1
#define GSHMEMI_REDUCE_INT32 2
#define GSHMEMI_REDUCE_INT64 3
#define GSHMEMI_REDUCE_UINT8 4
#define GSHMEMI_REDUCE_UINT16 5
#define GSHMEMI_REDUCE_UINT32 6
#define GSHMEMI_REDUCE_UINT64 7
#define GSHMEMI_REDUCE_FLOAT 8
#define GSHMEMI_REDUCE_DOUBLE 9
#define GSHMEMI_REDUCE_HALF 10     /* IEEE binary16 (CUDA's __half); combined in float, rounded after each step */
#define GSHMEMI_REDUCE_BFLOAT16 11 /* CUDA's __nv_bfloat16; the same */
GSHMEM_API int gshmemi_collective(int kind, gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                  size_t elem, int PE_root, ptrdiff_t dst, ptrdiff_t sst, int on_stream,
                                  gshmem_stream_t stream, const char *call);
GSHMEM_API int gshmemi_reduction(int op, int type, int scatter, gshmem_team_t team, void *dest, const void *source,
                                 size_t nreduce, int on_stream, gshmem_stream_t stream, const char *call);

/* ---- atomics ---- */
#define GSHMEMI_DECL_AMO_STANDARD(T, N)                                                                        \
  GSHMEM_API T gshmem_##N##_atomic_fetch_inc(T *dest, int pe);                                                \
  GSHMEM_API void gshmem_##N##_atomic_inc(T *dest, int pe);                                                   \
  GSHMEM_API T gshmem_##N##_atomic_fetch_add(T *dest, T value, int pe);                                       \
  GSHMEM_API void gshmem_##N##_atomic_add(T *dest, T value, int pe);                                          \
  GSHMEM_API T gshmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe);
#define GSHMEMI_DECL_AMO_EXTENDED(T, N)                                                                        \
  GSHMEM_API T gshmem_##N##_atomic_fetch(const T *source, int pe);                                            \
  GSHMEM_API void gshmem_##N##_atomic_set(T *dest, T value, int pe);                                          \
  GSHMEM_API T gshmem_##N##_atomic_swap(T *dest, T value, int pe);
#define GSHMEMI_DECL_AMO_BITWISE(T, N)                                                                         \
  GSHMEM_API T gshmem_##N##_atomic_fetch_and(T *dest, T value, int pe);                                       \
  GSHMEM_API void gshmem_##N##_atomic_and(T *dest, T value, int pe);                                          \
  GSHMEM_API T gshmem_##N##_atomic_fetch_or(T *dest, T value, int pe);                                        \
  GSHMEM_API void gshmem_##N##_atomic_or(T *dest, T value, int pe);                                           \
  GSHMEM_API T gshmem_##N##_atomic_fetch_xor(T *dest, T value, int pe);                                       \
  GSHMEM_API void gshmem_##N##_atomic_xor(T *dest, T value, int pe);
GSHMEM_AMO_STANDARD_TYPES(GSHMEMI_DECL_AMO_STANDARD)
GSHMEM_AMO_EXTENDED_TYPES(GSHMEMI_DECL_AMO_EXTENDED)
GSHMEM_AMO_BITWISE_TYPES(GSHMEMI_DECL_AMO_BITWISE)

/* ---- point-to-point synchronisation (host side; waits on this PE's own symmetric memory) ----
 * The _on_stream forms (GPU PEs) enqueue the wait on `stream`: later work on the stream starts once the
 * comparison holds (for _all: every element whose status[i] is 0, or every element when status is NULL; _vector:
 * ivars[i] against cmp_values[i]). ivars must be symmetric; status and cmp_values are read when the wait runs, so
 * they must be device-accessible (device, managed or pinned host memory). Bounded by GSHMEM_WAIT_TIMEOUT. */
#define GSHMEMI_DECL_WAIT(T, N)                                                                                \
  GSHMEM_API void gshmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                                     \
  GSHMEM_API int gshmem_##N##_test(T *ivar, int cmp, T cmp_value);                                            \
  GSHMEM_API void gshmemx_##N##_wait_until_on_stream(T *ivar, int cmp, T cmp_value, gshmem_stream_t stream);  \
  GSHMEM_API void gshmemx_##N##_wait_until_all_on_stream(T *ivars, size_t nelems, const int *status, int cmp, \
                                                         T cmp_value, gshmem_stream_t stream);                 \
  GSHMEM_API void gshmemx_##N##_wait_until_all_vector_on_stream(T *ivars, size_t nelems, const int *status,   \
                                                                int cmp, T *cmp_values,                        \
                                                                gshmem_stream_t stream);
GSHMEM_WAIT_TYPES(GSHMEMI_DECL_WAIT)

/* ---- signals ---- */
GSHMEM_API void gshmem_putmem_signal(void *dest, const void *source, size_t bytes, uint64_t *sig_addr,
                                     uint64_t signal, int sig_op, int pe);
GSHMEM_API void gshmem_putmem_signal_nbi(void *dest, const void *source, size_t bytes, uint64_t *sig_addr,
                                         uint64_t signal, int sig_op, int pe);
GSHMEM_API void gshmemx_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
GSHMEM_API uint64_t gshmem_signal_fetch(uint64_t *sig_addr);
GSHMEM_API uint64_t gshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* ---- stream-ordered (GPU PEs; capturable in CUDA graphs) ----
 * Typed and sized forms are declared with the RMA calls above: gshmemx_<T>_{put,get,put_nbi,get_nbi,iput,iget,p,
 * put_signal,put_signal_nbi}_on_stream, gshmemx_{put,get}<N>[_nbi]_on_stream, gshmemx_{iput,iget}<N>_on_stream,
 * gshmemx_put<N>_signal[_nbi]_on_stream. gshmemx_<T>_g_on_stream reads after the work already on the stream and
 * blocks the calling thread until the stream has reached the read (it returns the value), so it cannot be captured
 * into a CUDA graph. */
/* Modules and libraries the program loads itself (cuModuleLoad*, cuLibraryLoad*): their device code has a copy of
 * gshmem's device state that no host code registered. gshmemx_cumodule_init fills it now and whenever the state
 * changes, until gshmemx_cumodule_finalize, which must come before the module is unloaded. The module must have
 * been built without -rdc (gshmem needs none): the copy is found by its name, which -rdc makes unique per file.
 * Types: CUmodule, CUlibrary. */
struct CUmod_st;
struct CUlib_st;
GSHMEM_API int gshmemx_cumodule_init(struct CUmod_st *module);
GSHMEM_API int gshmemx_cumodule_finalize(struct CUmod_st *module);
GSHMEM_API int gshmemx_culibrary_init(struct CUlib_st *library);
GSHMEM_API int gshmemx_culibrary_finalize(struct CUlib_st *library);
GSHMEM_API void gshmemx_putmem_on_stream(void *dest, const void *source, size_t bytes, int pe,
                                         gshmem_stream_t stream);
GSHMEM_API void gshmemx_getmem_on_stream(void *dest, const void *source, size_t bytes, int pe,
                                         gshmem_stream_t stream);
/* The _nbi_on_stream forms: every stream-ordered call already completes in stream order without blocking the host,
 * so these behave exactly like the forms above (as NVSHMEM documents them for NVLink peers). */
GSHMEM_API void gshmemx_putmem_nbi_on_stream(void *dest, const void *source, size_t bytes, int pe,
                                             gshmem_stream_t stream);
GSHMEM_API void gshmemx_getmem_nbi_on_stream(void *dest, const void *source, size_t bytes, int pe,
                                             gshmem_stream_t stream);
GSHMEM_API void gshmemx_putmem_signal_nbi_on_stream(void *dest, const void *source, size_t bytes,
                                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                                    gshmem_stream_t stream);
GSHMEM_API void gshmemx_putmem_signal_on_stream(void *dest, const void *source, size_t bytes, uint64_t *sig_addr,
                                                uint64_t signal, int sig_op, int pe, gshmem_stream_t stream);
GSHMEM_API void gshmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                            gshmem_stream_t stream);
GSHMEM_API void gshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value,
                                                    gshmem_stream_t stream);
GSHMEM_API void gshmemx_quiet_on_stream(gshmem_stream_t stream);
GSHMEM_API void gshmemx_barrier_all_on_stream(gshmem_stream_t stream);
GSHMEM_API void gshmemx_sync_all_on_stream(gshmem_stream_t stream);
GSHMEM_API int gshmemx_barrier_on_stream(gshmem_team_t team, gshmem_stream_t stream);
GSHMEM_API int gshmemx_team_sync_on_stream(gshmem_team_t team, gshmem_stream_t stream);

/* ---- MoE dispatch / combine (pplx-kernels' AllToAll; docs/moe.md) ----
 * The C form of gshmem::MoeAllToAll (gshmem.hpp, which documents the semantics): create on every PE with the same
 * configuration (collective: a symmetric workspace), then dispatch and combine alternately on every PE, destroy on
 * every PE. Each call returns GSHMEM_SUCCESS or an error status with the message in gshmemx_last_error(). CPU PEs:
 * the blocking calls on host memory. GPU PEs: GPU-readable buffers; the blocking calls wait for their kernel, the
 * _on_stream calls enqueue it on `stream` (0: CUDA's default stream) and return (capturable in CUDA graphs;
 * bound_m: device memory holding the live token count <= num_tokens, or NULL for num_tokens); the checks that need
 * the data run in the kernel, which prints the call, cause and fix and traps. Types: GSHMEMX_MOE_FLOAT, _HALF,
 * _BFLOAT16. (GPU PEs: passed on 2 x H200, docs/moe.md.) */
typedef struct {
  uint64_t max_num_tokens;         /* tokens per data-parallel group and call, at most */
  uint64_t num_experts;            /* E over all PEs; PE p holds experts [p * L, p * L + L), L = ceil(E / PEs) */
  uint64_t experts_per_token;      /* K (1..64) */
  uint64_t hidden_dim;             /* elements of an expert output row (combine) */
  uint64_t hidden_dim_bytes;       /* bytes of a token row (dispatch), a multiple of 16 */
  uint64_t hidden_dim_scale_bytes; /* bytes of a token's scale row (0: no scales), a multiple of 16 */
  int32_t dp_size;                 /* PEs per data-parallel group; divides the number of PEs */
  int32_t reserved;                /* 0 */
} gshmemx_moe_config_t;
typedef struct gshmemx_moe_st *gshmemx_moe_t;
#define GSHMEMX_MOE_FLOAT GSHMEMI_REDUCE_FLOAT
#define GSHMEMX_MOE_HALF GSHMEMI_REDUCE_HALF
#define GSHMEMX_MOE_BFLOAT16 GSHMEMI_REDUCE_BFLOAT16
GSHMEM_API int gshmemx_moe_create(const gshmemx_moe_config_t *config, gshmemx_moe_t *moe);
GSHMEM_API int gshmemx_moe_destroy(gshmemx_moe_t moe);
GSHMEM_API int gshmemx_moe_dispatch(gshmemx_moe_t moe, int32_t *out_expert_num_tokens, void *out_expert_x,
                                    void *out_expert_x_scale, const void *dp_x, const void *dp_x_scale,
                                    const uint32_t *indices, size_t num_tokens);
GSHMEM_API int gshmemx_moe_combine(gshmemx_moe_t moe, void *out_tokens, int out_type, const uint32_t *indices,
                                   const float *weights, const void *expert_y, int y_type, size_t num_tokens);
GSHMEM_API int gshmemx_moe_dispatch_on_stream(gshmemx_moe_t moe, int32_t *out_expert_num_tokens,
                                              void *out_expert_x, void *out_expert_x_scale, const void *dp_x,
                                              const void *dp_x_scale, const uint32_t *indices, size_t num_tokens,
                                              const uint32_t *bound_m, gshmem_stream_t stream);
GSHMEM_API int gshmemx_moe_combine_on_stream(gshmemx_moe_t moe, void *out_tokens, int out_type,
                                             const uint32_t *indices, const float *weights, const void *expert_y,
                                             int y_type, size_t num_tokens, const uint32_t *bound_m,
                                             gshmem_stream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* GSHMEM_GSHMEM_H */
