/* gshmem team value: a team as plain data (start, stride, size, my index) and its arithmetic, defined once for
 * host and device code. The library's team table (src/team) and the device API (device/impl/team.cuh, the
 * collectives) use these functions; nothing else computes team ranks.
 *
 * The value is gshmem_device_team_t (gshmem/device/state.h): world PE of team index i is start + i * stride, or
 * members[i] for a team whose members are not evenly spaced in increasing order (its list: device memory in device
 * code, host_members in host code); a team of one has stride 1 (or any stride; index 0 is start); size 0 is "no
 * team". C++ only (the C header holds the struct). Under nvcc the functions are __host__ __device__, under a host
 * compiler plain inline. */
#ifndef GSHMEM_TEAM_VALUE_H
#define GSHMEM_TEAM_VALUE_H

#include "gshmem/device/state.h"

#ifndef __cplusplus
#error "gshmem/team_value.h is C++ (the team value struct itself is in gshmem/device/state.h)"
#endif

// Host-and-device inline functions: __host__ __device__ under a CUDA compiler, plain inline otherwise.
#if defined(__CUDACC__)
#define GSHMEM_HD __host__ __device__ __forceinline__
#else
#define GSHMEM_HD inline
#endif

namespace gshmem {

using TeamValue = gshmem_device_team_t;

// The team's member list where it has one (device memory in device code, host memory in host code), else NULL.
GSHMEM_HD const int32_t* team_members(const TeamValue& t) {
#if defined(__CUDA_ARCH__)
  return t.members;
#else
  return t.host_members;
#endif
}

// World PE of team index `index` (no range check: callers pass 0 <= index < size).
GSHMEM_HD int team_world_pe(const TeamValue& t, int index) {
  const int32_t* m = team_members(t);
  return m ? m[index] : t.start + index * t.stride;
}

// Index of world PE `pe` in team t, or -1 if it is not a member.
GSHMEM_HD int team_rank_of(const TeamValue& t, int pe) {
  if (t.size <= 0) return -1;
  if (const int32_t* m = team_members(t)) {
    for (int r = 0; r < t.size; ++r)
      if (m[r] == pe) return r;
    return -1;
  }
  const int d = pe - t.start;
  if (t.size == 1 || t.stride == 0) return d == 0 ? 0 : -1;
  if (d < 0 || d % t.stride != 0) return -1;
  const int r = d / t.stride;
  return r < t.size ? r : -1;
}

GSHMEM_HD bool team_is_member(const TeamValue& t, int pe) { return team_rank_of(t, pe) >= 0; }

// Index in `to` of the PE that is index `index` of `from`; -1 if index is out of range or that PE is not in `to`.
GSHMEM_HD int team_translate(const TeamValue& from, int index, const TeamValue& to) {
  if (index < 0 || index >= from.size) return -1;
  return team_rank_of(to, team_world_pe(from, index));
}

}  // namespace gshmem

#endif /* GSHMEM_TEAM_VALUE_H */
