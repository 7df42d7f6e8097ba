// Teams: strided sets of world PEs (start, stride, size), as OpenSHMEM defines them. A team handle is its slot
// (0..kMaxTeams-1); disjoint teams created by one split (the x-teams of split_2d) share a slot. Slots 0..3 are
// TEAM_WORLD, TEAM_SHARED, TEAM_NODE, TEAM_SAME_MYPE_NODE.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

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

class TeamTable {
 public:
  explicit TeamTable(Runtime& rt);
  // The team behind a handle; throws INVALID_VALUE naming `call` for a bad or destroyed handle.
  TeamInfo& get(gshmem_team_t team, const char* call);
  bool valid(gshmem_team_t team) const;

  int split_strided(gshmem_team_t parent, int start, int stride, int size, gshmem_team_t* new_team);
  int split_2d(gshmem_team_t parent, int xrange, gshmem_team_t* xteam, gshmem_team_t* yteam);
  void destroy(gshmem_team_t team);

  // Host-side dissemination barrier over the team's PEs (flags in the control segment). No memory ordering
  // beyond acquire/release of the flags: callers add quiet for barrier semantics.
  void barrier(gshmem_team_t team, const char* call);
  // Team-scoped allgather of up to kMailboxBytes per PE through the control segment (slow path: team creation).
  void exchange(gshmem_team_t team, const void* in, std::size_t len, void* out, const char* call);

 private:
  void claim(int slot, const TeamInfo& t);
  TeamInfo parent_or_abort(gshmem_team_t parent, const char* call);
  void reset_slot(int slot);
  Runtime& rt_;
  TeamInfo teams_[kMaxTeams]{};
  std::uint64_t used_ = 0;  // bitmap of slots this PE uses
};

}  // namespace gshmem
