// gshmem device API, implementation: team queries in device code (the team table of the handle).
// A team handle is its slot in the table; a slot this PE does not belong to (or a bad handle) answers -1, as
// NVSHMEM does for GSHMEM_TEAM_INVALID.
#pragma once
#include "gshmem/device/impl/common.cuh"
#include "gshmem/team_value.h"

namespace gshmem {
namespace dev {
namespace detail {

__device__ __forceinline__ bool team_valid(const DeviceHandle& h, gshmem_team_t team) {
  return team >= 0 && team < GSHMEM_DEVICE_MAX_TEAMS && h.teams[team].size > 0;
}

}  // namespace detail

// This PE's rank in `team`, or -1 if it is not a member (or team is not a valid handle).
__device__ __forceinline__ int team_my_pe(const DeviceHandle& h, gshmem_team_t team) {
  return detail::team_valid(h, team) ? h.teams[team].my_rank : -1;
}

// Number of PEs in `team`, or -1 if team is not a valid handle on this PE.
__device__ __forceinline__ int team_n_pes(const DeviceHandle& h, gshmem_team_t team) {
  return detail::team_valid(h, team) ? h.teams[team].size : -1;
}

// Rank in dest_team of the PE that is rank src_pe in src_team; -1 if either team is invalid here, src_pe is out of
// range, or that PE is not in dest_team.
__device__ __forceinline__ int team_translate_pe(const DeviceHandle& h, gshmem_team_t src_team, int src_pe,
                                                 gshmem_team_t dest_team) {
  if (!detail::team_valid(h, src_team) || !detail::team_valid(h, dest_team)) return -1;
  return team_translate(h.teams[src_team], src_pe, h.teams[dest_team]);
}

}  // namespace dev
}  // namespace gshmem
