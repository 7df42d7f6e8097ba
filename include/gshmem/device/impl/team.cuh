// gshmem device API, implementation: team queries in device code (the team table of the handle).
// A team handle is its slot in the table; a slot this PE does not belong to (or a bad handle) answers -1, as
// NVSHMEM does for GSHMEM_TEAM_INVALID.
#pragma once
#include "gshmem/device/impl/common.cuh"

namespace gshmem {
namespace dev {
namespace detail {

__device__ __forceinline__ bool team_valid(const DeviceHandle& h, gshmem_team_t team) {
  return team >= 0 && team < GSHMEM_DEVICE_MAX_TEAMS && h.teams[team].size > 0;
}

// Index of world PE `pe` in team t, or -1 (the library's TeamInfo::rank_of).
__device__ __forceinline__ int team_rank_of(const gshmem_device_team_t& t, int pe) {
  if (t.size <= 0) return -1;
  const int d = pe - t.start;
  if (t.stride == 0) return d == 0 ? 0 : -1;
  if (d < 0 || d % t.stride != 0) return -1;
  const int r = d / t.stride;
  return r < t.size ? r : -1;
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
  const gshmem_device_team_t s = h.teams[src_team];
  if (src_pe < 0 || src_pe >= s.size) return -1;
  return detail::team_rank_of(h.teams[dest_team], s.start + src_pe * s.stride);
}

}  // namespace dev
}  // namespace gshmem
