#include "team/team.hpp"

#include <algorithm>
#include <cstring>

#include "runtime/device_state.hpp"
#include "runtime/error.hpp"
#include "runtime/runtime.hpp"
#include "runtime/spin.hpp"
#include "transport/gpu.hpp"

namespace gshmem {

TeamTable::TeamTable(Runtime& rt) : rt_(rt) {
  // Single node (the runtime refuses more for now): SHARED and NODE hold every PE, SAME_MYPE_NODE just me.
  claim(GSHMEM_TEAM_WORLD, TeamInfo{{0, 1, rt.n_pes, rt.my_pe}, true, 0});
  claim(GSHMEM_TEAM_SHARED, TeamInfo{{rt.local_pes.front(), 1, static_cast<int>(rt.local_pes.size()),
                                  rt.local_index[rt.my_pe]}, true, 0});
  claim(GSHMEMX_TEAM_NODE, teams_[GSHMEM_TEAM_SHARED]);
  claim(GSHMEMX_TEAM_SAME_MYPE_NODE, TeamInfo{{rt.my_pe, 1, 1, 0}, true, 0});
}

void TeamTable::claim(int slot, const TeamInfo& t) {
  teams_[slot] = t;
  teams_[slot].live = true;
  teams_[slot].host_epoch = 0;
  used_ |= (1ull << slot);
}

bool TeamTable::valid(gshmem_team_t team) const {
  return team >= 0 && team < kMaxTeams && teams_[team].live;
}

TeamInfo& TeamTable::get(gshmem_team_t team, const char* call) {
  if (team == GSHMEM_TEAM_INVALID)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: the team is GSHMEM_TEAM_INVALID (a split returns it to PEs that are "
         "not members). Fix: call team operations only on PEs where the split returned a valid team", call);
  if (!valid(team))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: team handle {} is not a live team on PE {} (never created here, or "
         "destroyed). Fix: pass GSHMEM_TEAM_WORLD or a handle a split returned and that was not destroyed",
         call, team, rt_.my_pe);
  return teams_[team];
}

void TeamTable::barrier(gshmem_team_t team, const char* call) {
  TeamInfo& t = get(team, call);
  if (t.size <= 1) return;
  const std::uint64_t epoch = ++t.host_epoch;
  ControlBlock& me = rt_.ctrl->mine();
  for (int k = 0; (1 << k) < t.size; ++k) {
    int to = t.world_pe((t.my_rank + (1 << k)) % t.size);
    rt_.ctrl->of(to).barrier[team][k].store(epoch, std::memory_order_release);
    Spinner spin(rt_, call);
    while (me.barrier[team][k].load(std::memory_order_acquire) < epoch) spin.pause();
  }
}

void TeamTable::exchange(gshmem_team_t team, const void* in, std::size_t len, void* out, const char* call) {
  TeamInfo& t = get(team, call);
  if (len > static_cast<std::size_t>(kMailboxBytes))
    fail(GSHMEM_ERROR_INTERNAL, "{}: team exchange of {} bytes exceeds the {}-byte mailbox", call, len,
         kMailboxBytes);
  std::memcpy(rt_.ctrl->mine().mailbox[team].data, in, len);
  barrier(team, call);
  for (int r = 0; r < t.size; ++r)
    std::memcpy(static_cast<unsigned char*>(out) + r * len, rt_.ctrl->of(t.world_pe(r)).mailbox[team].data, len);
  barrier(team, call);  // nobody rewrites its mailbox before every member has read it
}

namespace {
struct SplitRecord {
  std::int16_t kind;         // 1 strided, 2 2d
  std::int16_t local_error;  // 1: this PE passed a NULL output handle
  std::int32_t a, b, c;
  std::uint64_t used;
};
static_assert(sizeof(SplitRecord) == 24);
}  // namespace

namespace {
// Gathers the split arguments over the parent; every member sees the same data, so every member reaches the
// same verdict (the same error, or the same slots).
std::vector<SplitRecord> gather_split(TeamTable& tt, gshmem_team_t parent, const SplitRecord& mine,
                                      int parent_size, const char* call) {
  std::vector<SplitRecord> all(static_cast<size_t>(parent_size));
  tt.exchange(parent, &mine, sizeof mine, all.data(), call);
  for (int r = 0; r < parent_size; ++r)
    if (all[static_cast<size_t>(r)].local_error)
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: parent-team PE {} passed a NULL output team handle. Fix: pass the "
           "address of a gshmem_team_t on every PE", call, r);
  for (int r = 1; r < parent_size; ++r) {
    const SplitRecord& x = all[static_cast<size_t>(r)];
    if (x.kind != all[0].kind || x.a != all[0].a || x.b != all[0].b || x.c != all[0].c)
      fail(GSHMEM_ERROR_MISMATCH, "{}: members of the parent team passed different arguments (parent PE 0: "
           "{}, {}, {}; parent PE {}: {}, {}, {}). Fix: every member of the parent team must make the same "
           "split call with the same arguments", call, all[0].a, all[0].b, all[0].c, r, x.a, x.b, x.c);
  }
  return all;
}

int lowest_free(std::uint64_t used, int skip = -1) {
  for (int s = 0; s < kMaxTeams; ++s)
    if (!(used >> s & 1) && s != skip) return s;
  return -1;
}
}  // namespace

int TeamTable::split_strided(gshmem_team_t parent, int start, int stride, int size, gshmem_team_t* new_team) {
  const char* call = "gshmem_team_split_strided";
  if (new_team) *new_team = GSHMEM_TEAM_INVALID;
  const TeamInfo pt = parent_or_abort(parent, call);
  auto all = gather_split(*this, parent, SplitRecord{1, static_cast<std::int16_t>(!new_team), start, stride, size,
                                                     used_}, pt.size, call);
  if (size < 1 || start < 0 || start >= pt.size || (size > 1 && stride < 1) ||
      static_cast<long long>(start) + static_cast<long long>(size - 1) * (size > 1 ? stride : 0) >= pt.size)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: start={} stride={} size={} does not fit in the parent team of {} PEs. "
         "Fix: need size >= 1, 0 <= start, stride >= 1 and start + (size-1)*stride < parent size", call, start,
         stride, size, pt.size);
  std::uint64_t used = 0;
  for (const auto& r : all) used |= r.used;
  int slot = lowest_free(used);
  if (slot < 0)
    fail(GSHMEM_ERROR_OUT_OF_MEMORY, "{}: all {} team slots are in use on some member of the parent team. Fix: "
         "destroy teams you no longer need (gshmem_team_destroy)", call, kMaxTeams);
  TeamInfo t{{pt.start + start * pt.stride, stride * pt.stride, size, -1}, true, 0};
  if (size == 1) t.stride = 1;
  t.my_rank = team_rank_of(t, rt_.my_pe);
  if (t.my_rank >= 0) {
    reset_slot(slot);
    claim(slot, t);
  }
  barrier(parent, call);  // flags reset everywhere before anyone uses the new team
  if (t.my_rank >= 0) *new_team = slot;
  if (rt_.gpu) device_state::publish(rt_);  // kernels see the new team
  return GSHMEM_SUCCESS;
}

int TeamTable::split_2d(gshmem_team_t parent, int xrange, gshmem_team_t* xteam, gshmem_team_t* yteam) {
  const char* call = "gshmem_team_split_2d";
  if (xteam) *xteam = GSHMEM_TEAM_INVALID;
  if (yteam) *yteam = GSHMEM_TEAM_INVALID;
  const TeamInfo pt = parent_or_abort(parent, call);
  auto all = gather_split(*this, parent, SplitRecord{2, static_cast<std::int16_t>(!xteam || !yteam), xrange, 0, 0,
                                                     used_}, pt.size, call);
  if (xrange < 1)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: xrange={} must be at least 1. Fix: pass the x-dimension size", call,
         xrange);
  if (xrange > pt.size) xrange = pt.size;  // OpenSHMEM: a larger xrange behaves as the parent size
  std::uint64_t used = 0;
  for (const auto& r : all) used |= r.used;
  int xs = lowest_free(used);
  int ys = xs < 0 ? -1 : lowest_free(used, xs);
  if (xs < 0 || ys < 0)
    fail(GSHMEM_ERROR_OUT_OF_MEMORY, "{}: fewer than 2 free team slots (of {}) on the parent's members. Fix: "
         "destroy teams you no longer need", call, kMaxTeams);
  const int r = pt.my_rank;
  const int xfirst = (r / xrange) * xrange;
  TeamInfo x{{pt.start + xfirst * pt.stride, pt.stride, std::min(xrange, pt.size - xfirst), r - xfirst}, true, 0};
  const int col = r % xrange;
  TeamInfo y{{pt.start + col * pt.stride, pt.stride * xrange, (pt.size - col + xrange - 1) / xrange, r / xrange},
             true, 0};
  if (x.size == 1) x.stride = 1;
  if (y.size == 1) y.stride = 1;
  reset_slot(xs);
  reset_slot(ys);
  claim(xs, x);
  claim(ys, y);
  barrier(parent, call);
  *xteam = xs;
  *yteam = ys;
  if (rt_.gpu) device_state::publish(rt_);
  return GSHMEM_SUCCESS;
}

void TeamTable::destroy(gshmem_team_t team) {
  const char* call = "gshmem_team_destroy";
  if (team == GSHMEM_TEAM_INVALID) return;
  get(team, call);
  if (team <= GSHMEMX_TEAM_SAME_MYPE_NODE)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: team {} is predefined and cannot be destroyed. Fix: destroy only teams "
         "a split created", call, team);
  // Stream barriers of this team may still be queued; they must finish before the slot can be reused.
  if (rt_.gpu) gpu::synchronize_device(rt_.gpu, call);
  teams_[team].live = false;
  used_ &= ~(1ull << team);
  if (rt_.gpu) device_state::publish(rt_);  // also zeroes the slot's device-barrier flags for its next team
}

TeamInfo TeamTable::parent_or_abort(gshmem_team_t parent, const char* call) {
  try {
    return get(parent, call);
  } catch (const Error& e) {
    // The other members are about to wait in the parent's mailbox exchange: without a valid parent this PE
    // cannot join it, so end the job rather than leave them waiting.
    rt_.boot->abort(e.what());
    throw;
  }
}

void TeamTable::reset_slot(int slot) {
  // Only this PE's own flags: peers write them, and nobody does before the split's closing parent barrier.
  for (auto& f : rt_.ctrl->mine().barrier[slot]) f.store(0, std::memory_order_relaxed);
  if (rt_.gpu) gpu::reset_team_slot(rt_.gpu, slot);
  // The collective workspace's flags and epoch of the slot (runtime/device_state.hpp), on CPU and GPU PEs.
  char* flags = rt_.heap->base() + device_state::kCollOffset + device_state::kCollSlotBytes * slot;
  char* epoch = rt_.heap->base() + device_state::kCollEpochOffset + sizeof(std::uint64_t) * slot;
  if (rt_.gpu) {
    gpu::memset_zero(rt_.gpu, flags, device_state::kCollSlotBytes);
    gpu::memset_zero(rt_.gpu, epoch, sizeof(std::uint64_t));
  } else {
    std::memset(flags, 0, device_state::kCollSlotBytes);
    std::memset(epoch, 0, sizeof(std::uint64_t));
  }
}

}  // namespace gshmem
