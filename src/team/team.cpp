#include "team/team.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "runtime/device_state.hpp"
#include "runtime/error.hpp"
#include "runtime/runtime.hpp"
#include "runtime/spin.hpp"
#include "transport/gpu.hpp"

namespace gshmem {

GpuTeams gpu_teams(const std::vector<std::string>& device_of, int me) {
  GpuTeams g;
  std::map<std::string, int> first;  // device -> its lowest PE
  for (int pe = 0; pe < static_cast<int>(device_of.size()); ++pe) {
    const std::string& d = device_of[static_cast<std::size_t>(pe)];
    if (d == device_of[static_cast<std::size_t>(me)]) {
      if (pe == me) g.same_gpu.my_rank = static_cast<int>(g.same_gpu.members.size());
      g.same_gpu.members.push_back(pe);
    }
    if (first.emplace(d, pe).second) {
      if (pe == me) g.leaders.my_rank = static_cast<int>(g.leaders.members.size());
      g.leaders.members.push_back(pe);
    }
  }
  if (g.leaders.my_rank < 0) {
    g.leaders_absent = fmt::format(
        "PE {} is not in GSHMEMX_TEAM_GPU_LEADERS (NVSHMEMI_TEAM_GPU_LEADERS): the team holds the lowest PE of each "
        "GPU, and PE {} shares its GPU with PE {}. Fix: use this team only on PEs where "
        "gshmem_team_my_pe(GSHMEMX_TEAM_GPU_LEADERS) >= 0", me, me, g.same_gpu.members.front());
    g.leaders = MemberSet{};
    g.not_a_leader = true;
  }
  return g;
}

TeamTable::TeamTable(Runtime& rt) : rt_(rt) {
  // Single node (the runtime refuses more for now): SHARED and NODE hold every PE, SAME_MYPE_NODE just me.
  claim(GSHMEM_TEAM_WORLD, TeamInfo{{0, 1, rt.n_pes, rt.my_pe}, true, 0});
  claim(GSHMEM_TEAM_SHARED, TeamInfo{{rt.local_pes.front(), 1, static_cast<int>(rt.local_pes.size()),
                                  rt.local_index[rt.my_pe]}, true, 0});
  claim(GSHMEMX_TEAM_NODE, teams_[GSHMEM_TEAM_SHARED]);
  claim(GSHMEMX_TEAM_SAME_MYPE_NODE, TeamInfo{{rt.my_pe, 1, 1, 0}, true, 0});
  // SAME_GPU and GPU_LEADERS from the GPU each PE published at init (its PCI bus id on its node); a CPU PE is a
  // device of its own. Where one is no team of this PE, its slot stays reserved and get() says why.
  std::vector<std::string> device_of(static_cast<std::size_t>(rt.n_pes));
  for (int pe = 0; pe < rt.n_pes; ++pe) {
    const PeRecord& r = rt.pes[static_cast<std::size_t>(pe)];
    const std::string bus(r.pci_bus_id, strnlen(r.pci_bus_id, sizeof r.pci_bus_id));
    device_of[static_cast<std::size_t>(pe)] =
        bus.empty() ? fmt::format("CPU PE {}", pe) : fmt::format("{:x} {}", r.host_hash, bus);
  }
  // (any layout is a team: a member list where the PEs are not evenly spaced; NVSHMEM ends the job at init for
  // such a SAME_GPU)
  const GpuTeams g = gpu_teams(device_of, rt.my_pe);
  claim_members(GSHMEMX_TEAM_SAME_GPU, g.same_gpu.members, g.same_gpu.my_rank);
  if (g.not_a_leader) {  // the normal case with several PEs per GPU: the slot stays reserved, get() says why
    used_ |= 1ull << GSHMEMX_TEAM_GPU_LEADERS;
    absent_[GSHMEMX_TEAM_GPU_LEADERS] = g.leaders_absent;
  } else {
    claim_members(GSHMEMX_TEAM_GPU_LEADERS, g.leaders.members, g.leaders.my_rank);
  }
}

void TeamTable::claim(int slot, const TeamInfo& t) {
  std::vector<std::int32_t> list;
  if (t.host_members) list.assign(t.host_members, t.host_members + t.size);
  teams_[slot] = t;
  lists_[slot] = std::move(list);
  TeamInfo& c = teams_[slot];
  c.host_members = lists_[slot].empty() ? nullptr : lists_[slot].data();
  c.members = c.host_members && device_lists_ ? device_lists_ + static_cast<std::size_t>(slot) * rt_.n_pes : nullptr;
  c.live = true;
  c.host_epoch = 0;
  used_ |= (1ull << slot);
}

void TeamTable::claim_members(int slot, const std::vector<int>& world, int me) {
  if (me < 0) return;
  const int n = static_cast<int>(world.size());
  const int stride = n > 1 ? world[1] - world[0] : 1;
  bool even = stride >= 1;
  for (std::size_t i = 1; even && i < world.size(); ++i) even = world[i] - world[i - 1] == stride;
  TeamInfo t{{world.front(), even ? stride : 0, n, me}, true, 0};
  const std::vector<std::int32_t> list(world.begin(), world.end());
  if (!even) t.host_members = list.data();  // claim keeps its own copy
  claim(slot, t);
}

void TeamTable::set_device_lists(const std::int32_t* table) {
  device_lists_ = table;
  for (int slot = 0; slot < kMaxTeams; ++slot)
    if (teams_[slot].host_members)
      teams_[slot].members = table ? table + static_cast<std::size_t>(slot) * rt_.n_pes : nullptr;
}

bool TeamTable::valid(gshmem_team_t team) const {
  return team >= 0 && team < kMaxTeams && teams_[team].live;
}

TeamInfo& TeamTable::get(gshmem_team_t team, const char* call) {
  if (team >= 0 && team < GSHMEM_TEAMS_MIN && !absent_[team].empty())
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: team {}: {}", call, team, absent_[team]);
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
// same verdict (the same error, or the same slots). A 2d split needs the same arguments everywhere. A strided
// split may name different teams on different PEs, as long as every PE a team includes names that same team
// (DeepEP, PyTorch's team manager and others split WORLD once per PE into the team of its node or rail, as
// NVSHMEM allows): the teams one call creates are then disjoint and share one slot, like split_2d's x-teams.
std::vector<SplitRecord> gather_split(TeamTable& tt, gshmem_team_t parent, const SplitRecord& mine,
                                      int parent_size, const char* call) {
  std::vector<SplitRecord> all(static_cast<size_t>(parent_size));
  tt.exchange(parent, &mine, sizeof mine, all.data(), call);
  for (int r = 0; r < parent_size; ++r)
    if (all[static_cast<size_t>(r)].local_error)
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: parent-team PE {} passed a NULL output team handle. Fix: pass the "
           "address of a gshmem_team_t on every PE", call, r);
  auto same = [](const SplitRecord& x, const SplitRecord& y) {
    return x.kind == y.kind && x.a == y.a && x.b == y.b && x.c == y.c;
  };
  for (int r = 1; r < parent_size; ++r) {
    const SplitRecord& x = all[static_cast<size_t>(r)];
    if (x.kind != all[0].kind || (x.kind != 1 && !same(x, all[0])))
      fail(GSHMEM_ERROR_MISMATCH, "{}: members of the parent team passed different arguments (parent PE 0: "
           "{}, {}, {}; parent PE {}: {}, {}, {}). Fix: every member of the parent team must make the same "
           "split call with the same arguments", call, all[0].a, all[0].b, all[0].c, r, x.a, x.b, x.c);
  }
  if (all[0].kind != 1) return all;
  // strided: every triplet must fit (checked for all PEs at once, so all fail alike), and be agreed by its members
  for (int r = 0; r < parent_size; ++r) {
    const SplitRecord& x = all[static_cast<size_t>(r)];
    if (x.c < 1 || x.a < 0 || x.a >= parent_size || (x.c > 1 && x.b < 1) ||
        static_cast<long long>(x.a) + static_cast<long long>(x.c - 1) * (x.c > 1 ? x.b : 0) >= parent_size)
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: start={} stride={} size={} (parent-team PE {}) does not fit in the "
           "parent team of {} PEs. Fix: need size >= 1, 0 <= start, stride >= 1 and start + (size-1)*stride < "
           "parent size", call, x.a, x.b, x.c, r, parent_size);
  }
  for (int r = 0; r < parent_size; ++r) {
    const SplitRecord& x = all[static_cast<size_t>(r)];
    for (int i = 0; i < x.c; ++i) {
      const int q = x.a + i * (x.c > 1 ? x.b : 0);
      const SplitRecord& y = all[static_cast<size_t>(q)];
      if (q != r && !same(x, y))
        fail(GSHMEM_ERROR_MISMATCH, "{}: parent-team PE {} passed start={} stride={} size={}, a team that "
             "includes parent-team PE {}, which passed start={} stride={} size={}. Fix: every PE a team "
             "includes must pass that team's start, stride and size (PEs may name different teams only if "
             "those teams do not overlap)", call, r, x.a, x.b, x.c, q, y.a, y.b, y.c);
    }
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
  invalid_parent(parent, call);
  const TeamInfo pt = parent_or_abort(parent, call);
  auto all = gather_split(*this, parent, SplitRecord{1, static_cast<std::int16_t>(!new_team), start, stride, size,
                                                     used_}, pt.size, call);
  std::uint64_t used = 0;
  for (const auto& r : all) used |= r.used;
  int slot = lowest_free(used);
  if (slot < 0)
    fail(GSHMEM_ERROR_OUT_OF_MEMORY, "{}: all {} team slots for splits ({} in all, {} predefined) are in use on "
         "some member of the parent team. Fix: destroy teams you no longer need (gshmem_team_destroy)", call,
         kMaxTeams - GSHMEM_TEAMS_MIN, kMaxTeams, GSHMEM_TEAMS_MIN);
  // The new team's world PEs (a parent of any members: its index arithmetic is the parent's)
  std::vector<int> world(static_cast<std::size_t>(size));
  int me = -1;
  for (int i = 0; i < size; ++i) {
    world[static_cast<std::size_t>(i)] = pt.world_pe(start + i * (size > 1 ? stride : 0));
    if (world[static_cast<std::size_t>(i)] == rt_.my_pe) me = i;
  }
  if (me >= 0) {
    reset_slot(slot);
    claim_members(slot, world, me);
  }
  barrier(parent, call);  // flags reset everywhere before anyone uses the new team
  if (me >= 0) *new_team = slot;
  if (rt_.gpu) device_state::publish(rt_);  // kernels see the new team
  return GSHMEM_SUCCESS;
}

int TeamTable::split_2d(gshmem_team_t parent, int xrange, gshmem_team_t* xteam, gshmem_team_t* yteam) {
  const char* call = "gshmem_team_split_2d";
  if (xteam) *xteam = GSHMEM_TEAM_INVALID;
  if (yteam) *yteam = GSHMEM_TEAM_INVALID;
  invalid_parent(parent, call);
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
    fail(GSHMEM_ERROR_OUT_OF_MEMORY, "{}: fewer than 2 free team slots (of the {} for splits; {} are "
         "predefined) on the parent's members. Fix: destroy teams you no longer need", call,
         kMaxTeams - GSHMEM_TEAMS_MIN, GSHMEM_TEAMS_MIN);
  // x: this PE's row of the parent's indices (xrange wide), y: its column; world PEs through the parent's own map
  const int r = pt.my_rank;
  const int xfirst = (r / xrange) * xrange, col = r % xrange;
  std::vector<int> xw, yw;
  for (int i = xfirst; i < std::min(xfirst + xrange, pt.size); ++i) xw.push_back(pt.world_pe(i));
  for (int i = col; i < pt.size; i += xrange) yw.push_back(pt.world_pe(i));
  reset_slot(xs);
  reset_slot(ys);
  claim_members(xs, xw, r - xfirst);
  claim_members(ys, yw, r / xrange);
  barrier(parent, call);
  *xteam = xs;
  *yteam = ys;
  if (rt_.gpu) device_state::publish(rt_);
  return GSHMEM_SUCCESS;
}

namespace {
using InitRecord = ControlBlock::TeamInitRecord;
struct InitView {
  std::uint64_t gen, uid, count, used;
  int npes, idx;
};
// A consistent copy of a PE's team_init record (seqlock: retried while its owner rewrites it). An owner that stays
// in the middle of a write (it died there) reads as no record, so the caller's Spinner gets to notice it.
InitView read_record(const InitRecord& r) {
  for (int tries = 0; tries < (1 << 20); ++tries) {
    const std::uint64_t g = r.gen.load(std::memory_order_acquire);
    if (g & 1) continue;  // its owner is between two stores of a few words
    const InitView v{g,
                     r.uid.load(std::memory_order_relaxed),
                     r.count.load(std::memory_order_relaxed),
                     r.used.load(std::memory_order_relaxed),
                     r.npes.load(std::memory_order_relaxed),
                     r.idx.load(std::memory_order_relaxed)};
    std::atomic_thread_fence(std::memory_order_acquire);
    if (r.gen.load(std::memory_order_relaxed) == g) return v;
  }
  return InitView{};
}
// Rewrites this PE's own record (its only writer): `set` stores the fields, given the record's new gen.
template <class F>
void write_record(InitRecord& r, F&& set) {
  const std::uint64_t g = r.gen.load(std::memory_order_relaxed) + 2;
  r.gen.store(g - 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  set(r, g);
  r.gen.store(g, std::memory_order_release);
}
}  // namespace

// The members meet through their control blocks: each publishes (uid, its count of earlier calls with that uid,
// npes, idx, used slots), then reads every PE's record until it has found npes records of this call (uid and
// count equal). All members read the same records, so they reach the same verdict and the same slot. Each then
// resets the slot's flags on its side and acknowledges every other member (a compare-and-swap on its acks that
// checks the record is still the one it read); it returns, and clears its record, only when its own acks reached
// npes - 1, that is when every member has read all records and reset its flags: nobody writes into a member's flags
// before it reset them, the guarantee split_strided's closing parent barrier gives.
void TeamTable::init_team(std::uint64_t uid, int npes, int idx, gshmem_team_t* new_team) {
  const char* call = "gshmemx_team_init";
  if (new_team) *new_team = GSHMEM_TEAM_INVALID;
  if (!new_team)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: team is NULL. Fix: pass the address of a gshmem_team_t", call);
  if (npes < 1 || npes > rt_.n_pes || idx < 0 || idx >= npes)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: npes={} pe_idx_in_team={}: need 1 <= npes <= {} (the PEs of the job) "
         "and 0 <= pe_idx_in_team < npes. Fix: pass the team's size and this PE's index in it", call, npes, idx,
         rt_.n_pes);
  if (uid == 0 || uid == UINT64_MAX) {
    // No unique ID: only every PE in world order can be told apart from other calls (nvshmem4py's own tests make
    // that team so): a split of the world, which every PE calls (one that does not waits until the timeout).
    if (npes == rt_.n_pes && idx == rt_.my_pe) {
      split_strided(GSHMEM_TEAM_WORLD, 0, 1, npes, new_team);
      return;
    }
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: config->uniqueid is {} (not set) for a team of {} of the {} PEs. Fix: get "
         "one with gshmemx_team_get_uniqueid (nvshmemx_team_get_uniqueid) on one member, send it to the others, "
         "and pass it in config->uniqueid", call, uid == 0 ? "0" : "UINT64_MAX", npes, rt_.n_pes);
  }
  const std::uint64_t count = init_calls_[uid]++;  // members that used this uid together agree on it
  InitRecord& mine = rt_.ctrl->mine().team_init;
  write_record(mine, [&](InitRecord& r, std::uint64_t g) {
    r.uid.store(uid, std::memory_order_relaxed);
    r.count.store(count, std::memory_order_relaxed);
    r.used.store(used_, std::memory_order_relaxed);
    r.npes.store(npes, std::memory_order_relaxed);
    r.idx.store(idx, std::memory_order_relaxed);
    r.acks.store(g << 32, std::memory_order_relaxed);
  });
  // A failure while the members look for or acknowledge each other marks the record given up (npes < 0), so that
  // the members still waiting fail too instead of waiting (this PE's next team_init replaces it).
  auto give_up = [&] { write_record(mine, [](InitRecord& r, std::uint64_t) { r.npes.store(-1); }); };
  auto gave_up = [&](int pe) {
    fail(GSHMEM_ERROR_MISMATCH, "{}: world PE {}, a member of the team with uniqueid {:#x}, failed its "
         "gshmemx_team_init (its message says why). Fix: that PE's error first", call, pe, uid);
  };
  std::vector<int> member(static_cast<std::size_t>(npes), -1);  // world PE of each index
  std::vector<std::uint64_t> member_gen(static_cast<std::size_t>(npes), 0);
  std::uint64_t used = 0;
  try {
    int found = 0;
    Spinner spin(rt_, call);
    while (found < npes) {
      found = 0;
      std::fill(member.begin(), member.end(), -1);
      used = 0;
      for (int pe = 0; pe < rt_.n_pes; ++pe) {
        const InitView r = read_record(rt_.ctrl->of(pe).team_init);
        if (r.uid != uid || r.count != count) continue;  // no call, another call, or this uid's earlier or later
        if (r.npes < 0) gave_up(pe);
        if (r.npes != npes)
          fail(GSHMEM_ERROR_MISMATCH, "{}: world PE {} passed npes={} with uniqueid {:#x}, this PE (world PE {}) "
               "npes={}. Fix: every member passes the team's size; use a fresh uniqueid for each team", call, pe,
               r.npes, uid, rt_.my_pe, npes);
        if (r.idx < 0 || r.idx >= npes)
          fail(GSHMEM_ERROR_MISMATCH, "{}: world PE {} passed pe_idx_in_team={} with uniqueid {:#x} for a team of "
               "{}. Fix: give each member its own index 0..npes-1", call, pe, r.idx, uid, npes);
        if (member[static_cast<std::size_t>(r.idx)] >= 0)
          fail(GSHMEM_ERROR_MISMATCH, "{}: world PEs {} and {} both passed pe_idx_in_team={} with uniqueid {:#x}. "
               "Fix: give each member its own index 0..npes-1", call, member[static_cast<std::size_t>(r.idx)], pe,
               r.idx, uid);
        member[static_cast<std::size_t>(r.idx)] = pe;
        member_gen[static_cast<std::size_t>(r.idx)] = r.gen;
        used |= r.used;
        ++found;
      }
      if (found < npes) spin.pause();
    }
  } catch (...) {
    give_up();
    throw;
  }
  // Every member has read the same records, so the refusal below happens on every member alike: the record stays
  // as it is (the others still read it; this PE's next team_init replaces it). Any set in any order is a team: a
  // member list where it is not start + i*stride (gshmem/team_value.h).
  const int slot = lowest_free(used);
  if (slot < 0) {
    fail(GSHMEM_ERROR_OUT_OF_MEMORY, "{}: all {} team slots for splits are in use on some member of the new team. "
         "Fix: destroy teams you no longer need (gshmem_team_destroy)", call, kMaxTeams - GSHMEM_TEAMS_MIN);
  }
  reset_slot(slot);
  claim_members(slot, member, idx);
  if (rt_.gpu) device_state::publish(rt_);  // kernels see the new team
  try {
    for (int i = 0; i < npes; ++i) {
      const int pe = member[static_cast<std::size_t>(i)];
      if (pe == rt_.my_pe) continue;
      // only the record this PE read: one that changed since has given up (it cannot have finished without this)
      std::atomic<std::uint64_t>& acks = rt_.ctrl->of(pe).team_init.acks;
      std::uint64_t a = acks.load(std::memory_order_acquire);
      do {
        if (a >> 32 != (member_gen[static_cast<std::size_t>(i)] & 0xFFFFFFFFull)) gave_up(pe);
      } while (!acks.compare_exchange_weak(a, a + 1, std::memory_order_acq_rel, std::memory_order_acquire));
    }
    Spinner spin(rt_, call);
    for (std::uint64_t k = 0;; ++k) {
      if ((mine.acks.load(std::memory_order_acquire) & 0xFFFFFFFFull) >= static_cast<std::uint64_t>(npes - 1)) break;
      if (k % 1024 == 1023)  // a member that gave up after this PE read its record will never acknowledge
        for (int pe : member) {
          const InitView r = read_record(rt_.ctrl->of(pe).team_init);
          if (pe != rt_.my_pe && r.uid == uid && r.count == count && r.npes < 0) gave_up(pe);
        }
      spin.pause();
    }
  } catch (...) {
    give_up();
    release(slot);  // the team is not made here: its slot is free again
    throw;
  }
  write_record(mine, [](InitRecord& r, std::uint64_t) { r.uid.store(0, std::memory_order_relaxed); });
  *new_team = slot;
}

void TeamTable::destroy(gshmem_team_t team) {
  const char* call = "gshmem_team_destroy";
  if (team == GSHMEM_TEAM_INVALID) return;
  if (team >= 0 && team < GSHMEM_TEAMS_MIN)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: team {} is predefined (slots 0..{}) and cannot be destroyed. Fix: "
         "destroy only teams a split created", call, team, GSHMEM_TEAMS_MIN - 1);
  get(team, call);
  // Stream barriers of this team may still be queued; they must finish before the slot can be reused.
  if (rt_.gpu) gpu::synchronize_device(rt_.gpu, call);
  release(team);
}

void TeamTable::release(int slot) {
  teams_[slot].live = false;
  used_ &= ~(1ull << slot);
  if (rt_.gpu) device_state::publish(rt_);  // also zeroes the slot's device-barrier flags for its next team
}

void TeamTable::invalid_parent(gshmem_team_t parent, const char* call) {
  // A PE outside a team holds GSHMEM_TEAM_INVALID for it, and programs pass that on as a parent (NVSHMEM's team
  // tests split the even PEs' team on every PE): the split has no other member to wait for, so it fails here
  // with the outputs set to GSHMEM_TEAM_INVALID, as NVSHMEM's does, instead of ending the job.
  if (parent == GSHMEM_TEAM_INVALID)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: the parent team is GSHMEM_TEAM_INVALID (this PE is not in it); the new "
         "team handles are GSHMEM_TEAM_INVALID", call);
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
  // And its LL call count and two LL buffers (the new team's calls count from 1 again: no stale line may match).
  char* ll_seq = rt_.heap->base() + device_state::kCollLLOffset + sizeof(std::uint64_t) * slot;
  char* ll_tally = rt_.heap->base() + device_state::kCollLLOffset + coll::kLLTallyOffset +
                   sizeof(std::uint32_t) * slot;  // a multi-CTA LL kernel's tally (zero between calls anyway)
  char* split = rt_.heap->base() + device_state::kCollLLOffset + coll::kSplitOffset +
                sizeof(std::uint64_t) * coll::kSplitWords * static_cast<std::size_t>(slot);  // likewise
  char* ll_bufs = rt_.heap->base() + device_state::kCollLLOffset + coll::kLLSeqBytes +
                  2 * coll::kLLBufBytes * static_cast<std::size_t>(slot);
  // And the two-shot broadcast's chunk flags (they hold epochs, which start again from 0).
  char* chunk =
      rt_.heap->base() + device_state::kCollChunkOffset + coll::kBcastFlagBytes * static_cast<std::size_t>(slot);
  if (rt_.gpu) {
    gpu::memset_zero(rt_.gpu, flags, device_state::kCollSlotBytes);
    gpu::memset_zero(rt_.gpu, epoch, sizeof(std::uint64_t));
    gpu::memset_zero(rt_.gpu, ll_seq, sizeof(std::uint64_t));
    gpu::memset_zero(rt_.gpu, ll_tally, sizeof(std::uint32_t));
    gpu::memset_zero(rt_.gpu, split, sizeof(std::uint64_t) * coll::kSplitWords);
    gpu::memset_zero(rt_.gpu, ll_bufs, 2 * coll::kLLBufBytes);
    gpu::memset_zero(rt_.gpu, chunk, coll::kBcastFlagBytes);
  } else {
    std::memset(flags, 0, device_state::kCollSlotBytes);
    std::memset(epoch, 0, sizeof(std::uint64_t));
    std::memset(ll_seq, 0, sizeof(std::uint64_t));
    std::memset(ll_tally, 0, sizeof(std::uint32_t));
    std::memset(split, 0, sizeof(std::uint64_t) * coll::kSplitWords);
    std::memset(ll_bufs, 0, 2 * coll::kLLBufBytes);
    std::memset(chunk, 0, coll::kBcastFlagBytes);
  }
}

}  // namespace gshmem
