/* gshmem device state: the plain data a kernel needs to reach the symmetric heap of every PE.
 *
 * Crosses host/device (kernel argument, cudaMemcpyToSymbol), so every field is fixed-width or a pointer (64-bit
 * only) and the size is checked. Plain C so that host-only code (the library, C programs) can hold it. Kernels
 * use it through <gshmem/device.cuh>. */
#ifndef GSHMEM_DEVICE_STATE_H
#define GSHMEM_DEVICE_STATE_H

#if !defined(__CUDACC_RTC__) /* NVRTC: no C library headers (gshmem.h has the types) */
#include <stdint.h>
#endif

#include "gshmem/gshmem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Layout version of gshmem_device_state_t; 0 in `version` means "never set" (no gshmem_init yet). 3: coll_offset.
 * 4: coll_ll_offset, coll_ll_bytes. 5: LL buffers of 32 KiB (coll::kLLBufBytes; headers and library must agree).
 * 6: LL buffers of 256 KiB. 7: teams of any member set (gshmem_device_team_t's member lists). */
#define GSHMEM_DEVICE_STATE_VERSION 7u
/* Team slots in the device team table (the library's kMaxTeams) and dissemination rounds per slot. */
#define GSHMEM_DEVICE_MAX_TEAMS 64
#define GSHMEM_DEVICE_MAX_ROUNDS 32

/* One team as device code sees it: world PE of team rank r is start + r * stride, or, for a team whose members are
 * not evenly spaced in increasing order (gshmemx_team_init of any set, a split of such a team), members[r]: the
 * list sits in device memory for device code and in host memory for host code (both the library's, for the
 * team's life). size 0: slot unused here. */
typedef struct gshmem_device_team {
  int32_t start;    /* world PE of rank 0 */
  int32_t stride;   /* 0 where the members are a list */
  int32_t size;
  int32_t my_rank;  /* this PE's rank in the team, -1 if not a member */
  const int32_t *members;       /* device memory [size], or NULL: start + r * stride */
  const int32_t *host_members;  /* the same list in host memory (host code), or NULL */
} gshmem_device_team_t;

typedef struct gshmem_device_state {
  uint32_t version;    /* GSHMEM_DEVICE_STATE_VERSION once published */
  int32_t my_pe;
  int32_t n_pes;
  int32_t device;      /* CUDA ordinal of this PE (the setters make it current before copying) */
  char *heap_base;     /* this PE's symmetric offset 0 (device address) */
  uint64_t heap_size;  /* bytes backed at the last publish (grows; never shrinks) */
  uint64_t heap_max;   /* slot size: every symmetric address lies in [heap_base, heap_base + heap_max) */
  char *const *peer_bases;             /* device memory [n_pes]: each PE's heap in this process, NULL if unmapped */
  const gshmem_device_team_t *teams;   /* device memory [GSHMEM_DEVICE_MAX_TEAMS], indexed by gshmem_team_t */
  uint64_t barrier_offset;             /* heap offset of device-barrier flags [MAX_TEAMS][MAX_ROUNDS] uint64 */
  uint64_t *barrier_epochs;            /* this PE's device-barrier epochs [MAX_TEAMS] (in its own heap) */
  /* Bound of every device spin (GSHMEM_WAIT_TIMEOUT); UINT64_MAX = none. Never 0 once published: an unset state's
   * 0 makes a wait expire at once, and its timeout trap then reports the unset state (version 2; 0 meant none). */
  uint64_t timeout_ns;
  /* Non-zero when PE p's heap is mapped at heap_base + (p - my_pe) * peer_stride for every p (one node, PEs in
   * their local order): device code then translates addresses with arithmetic instead of a peer_bases load. */
  uint64_t peer_stride;
  /* Heap offset of the collectives' workspace (version 3): per team slot, sync flags [GSHMEM_DEVICE_MAX_ROUNDS]
   * uint64 written by peers, then this PE's sync epochs [GSHMEM_DEVICE_MAX_TEAMS] uint64 (gshmem/coll/). */
  uint64_t coll_offset;
  /* Heap offset of the collectives' LL area (version 4): this PE's LL call count per team slot, then two buffers
   * per slot that peers write small collectives' data into (gshmem/coll/algorithms.h, "LL"). */
  uint64_t coll_ll_offset;
  /* Data bytes per call up to which broadcast / fcollect / alltoall / reduce / reducescatter go by LL
   * (GSHMEM_COLL_LL_BYTES; 0: never). The same on every PE. */
  uint64_t coll_ll_bytes;
} gshmem_device_state_t;

#ifdef __cplusplus
static_assert(sizeof(void *) == 8, "gshmem device state assumes 64-bit pointers");
static_assert(sizeof(gshmem_device_team_t) == 32, "gshmem_device_team_t crosses host/device: keep it 32 bytes");
static_assert(sizeof(gshmem_device_state_t) == 112, "gshmem_device_state_t crosses host/device: keep its layout");
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(gshmem_device_state_t) == 112, "gshmem_device_state_t crosses host/device");
#endif

/* Fills *state with this PE's current device state (for a kernel argument). GSHMEM_SUCCESS, or
 * GSHMEM_ERROR_NOT_INITIALIZED / GSHMEM_ERROR_NOT_SUPPORTED (CPU PE) with the reason in gshmemx_last_error(). */
GSHMEM_API int gshmemx_device_handle(gshmem_device_state_t *state);

/* Internal, used by <gshmem/device.cuh>: every translation unit that includes it registers one setter that copies
 * the state into that unit's own __constant__ copy (so no -rdc is needed). The library calls each setter at init
 * end and whenever the state changes (team split/destroy, heap growth), and at registration if already
 * initialised. A setter returns 0 or a cudaError_t. */
typedef int (*gshmemi_device_state_setter_t)(const gshmem_device_state_t *state);
GSHMEM_API void gshmemi_register_device_state_setter(gshmemi_device_state_setter_t setter);
GSHMEM_API void gshmemi_unregister_device_state_setter(gshmemi_device_state_setter_t setter);

#ifdef __cplusplus
}
#endif
#endif /* GSHMEM_DEVICE_STATE_H */
