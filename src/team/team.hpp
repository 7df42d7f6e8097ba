// Teams: strided sets of world PEs (start, stride, size), as OpenSHMEM defines them, or any other set in any order
// (gshmemx_team_init, and splits of such a team), held as a member list. A team handle is its slot
// (0..kMaxTeams-1); disjoint teams created by one split (the x-teams of split_2d) share a slot. Slots
// 0..GSHMEM_TEAMS_MIN-1 are the predefined teams: TEAM_WORLD, TEAM_SHARED, TEAM_NODE, TEAM_SAME_MYPE_NODE,
// TEAM_SAME_GPU, TEAM_GPU_LEADERS; they are reserved on every PE, even where one is no team of this PE.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gshmem/gshmem.h"
#include "gshmem/team_value.h"
#include "runtime/control_segment.hpp"

namespace gshmem {

class Runtime;

// A team slot: the team value (start, stride, size, my_rank: gshmem/team_value.h, whose functions do all rank
// arithmetic) plus what only this PE's table keeps.
struct TeamInfo : TeamValue {
  bool live = false;
  std::uint64_t host_epoch = 0;    // host barriers done on this team by this PE
  int world_pe(int team_pe) const { return team_world_pe(*this, team_pe); }
};

// A team as world PEs in team order and this PE's index in it (empty, -1: no team of this PE).
struct MemberSet {
  std::vector<int> members;
  int my_rank = -1;
};
// The GPU teams of PE `me`, from each PE's device (equal strings: the same GPU; CPU PEs pass distinct ones).
// same_gpu: the PEs of my device; leaders: the lowest PE of each device, empty on a PE that is not one (the reason
// in leaders_absent). Any layout is a team (one that is not start + i*stride becomes a member list).
struct GpuTeams {
  MemberSet same_gpu, leaders;
  std::string leaders_absent;
  bool not_a_leader = false;  // leaders is a team, `me` is not in it
};
GpuTeams gpu_teams(const std::vector<std::string>& device_of, int me);

class TeamTable {
 public:
  explicit TeamTable(Runtime& rt);
  // The team behind a handle; throws INVALID_VALUE naming `call` for a bad or destroyed handle.
  TeamInfo& get(gshmem_team_t team, const char* call);
  bool valid(gshmem_team_t team) const;

  int split_strided(gshmem_team_t parent, int start, int stride, int size, gshmem_team_t* new_team);
  int split_2d(gshmem_team_t parent, int xrange, gshmem_team_t* xteam, gshmem_team_t* yteam);
  // gshmemx_team_init: the npes PEs that pass one uniqueid `uid` make a team, this PE at index idx. They meet
  // through their control blocks (no parent team); any set of world PEs in any order.
  void init_team(std::uint64_t uid, int npes, int idx, gshmem_team_t* new_team);
  void destroy(gshmem_team_t team);
  // GPU PEs: the device table of member lists ([kMaxTeams][n_pes] int32, device_state::publish): list teams point
  // their `members` at their slot's row (the host list is copied there by publish).
  void set_device_lists(const std::int32_t* table);

  // Host-side dissemination barrier over the team's PEs (flags in the control segment). No memory ordering
  // beyond acquire/release of the flags: callers add quiet for barrier semantics.
  void barrier(gshmem_team_t team, const char* call);
  // Team-scoped allgather of up to kMailboxBytes per PE through the control segment (slow path: team creation).
  void exchange(gshmem_team_t team, const void* in, std::size_t len, void* out, const char* call);

 private:
  void claim(int slot, const TeamInfo& t);
  // Claims `slot` for the team of world PEs `world` (index order), this PE at index `me` (-1: not in it; nothing
  // is claimed then): strided where they are start + i*stride (stride >= 1), else a member list.
  void claim_members(int slot, const std::vector<int>& world, int me);
  void invalid_parent(gshmem_team_t parent, const char* call);  // throws INVALID_VALUE for GSHMEM_TEAM_INVALID
  TeamInfo parent_or_abort(gshmem_team_t parent, const char* call);
  void reset_slot(int slot);
  void release(int slot);  // the slot free again on this PE (destroy; a team_init that failed after claiming it)
  Runtime& rt_;
  TeamInfo teams_[kMaxTeams]{};
  std::vector<std::int32_t> lists_[kMaxTeams];  // member lists of list teams (host memory: TeamInfo::host_members)
  const std::int32_t* device_lists_ = nullptr;  // set_device_lists
  // Why predefined slot s is no team on this PE (see GpuTeams); empty where it is one.
  std::string absent_[GSHMEM_TEAMS_MIN];
  std::uint64_t used_ = 0;  // bitmap of slots this PE uses
  std::map<std::uint64_t, std::uint64_t> init_calls_;  // team_init calls of this PE by unique ID
};

}  // namespace gshmem
