// ControlSegment: a small block of shared host memory per PE, mapped by every PE of the node (memfd shared over
// FdExchange). Holds the flags of host-side barriers and the mailboxes team creation uses to agree on
// arguments. Used in both modes: host-side synchronisation never needs the GPU.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "bootstrap/bootstrap.hpp"

namespace gshmem {

inline constexpr int kMaxTeams = 64;    // team slots (0..GSHMEM_TEAMS_MIN-1 are the predefined teams)
inline constexpr int kMaxRounds = 32;   // dissemination rounds: up to 2^32 PEs
inline constexpr int kMailboxBytes = 256;
inline constexpr int kExchangeBytes = 1024;  // node-local allgather payload per PE (NodeExchange)

struct alignas(64) ControlBlock {
  // barrier[t][k]: epoch written by this PE's round-k sender in team slot t.
  std::atomic<std::uint64_t> barrier[kMaxTeams][kMaxRounds];
  // Small per-team mailbox for team-scoped agreement (team split).
  struct alignas(64) Mailbox {
    unsigned char data[kMailboxBytes];
  } mailbox[kMaxTeams];
  // Node-local allgather of the symmetric heap's collective checks (runtime/node_exchange): this PE publishes
  // exchange number xchg_seq in xchg, and xchg_done says up to which exchange it has read everybody's data.
  alignas(64) std::atomic<std::uint64_t> xchg_seq;
  alignas(64) std::atomic<std::uint64_t> xchg_done;
  alignas(64) std::uint64_t xchg_len;
  unsigned char xchg[kExchangeBytes];
  // gshmemx_team_init's rendezvous (team/team.cpp): this PE's one record while it is in a team_init call, written
  // by this PE only, under a seqlock (gen odd while it is rewritten; readers retry). uid 0: no call; count: this
  // PE's calls with that uid before this one (a uid used again is another call); npes < 0: this PE gave up here.
  // acks: (gen of the record it acknowledges) << 32 | number of members that read every record, added to by the
  // others with a compare-and-swap that checks the gen, so an acknowledgement of an older call never counts.
  struct alignas(64) TeamInitRecord {
    std::atomic<std::uint64_t> gen;
    std::atomic<std::uint64_t> uid;
    std::atomic<std::uint64_t> count;
    std::atomic<std::uint64_t> used;  // the team slots this PE uses (the members take the lowest free on all)
    std::atomic<std::int32_t> npes;
    std::atomic<std::int32_t> idx;
    std::atomic<std::uint64_t> acks;
  } team_init;
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "cross-process flags need lock-free atomics");
static_assert(sizeof(ControlBlock) ==
                  kMaxTeams * kMaxRounds * 8 + kMaxTeams * kMailboxBytes + 3 * 64 + kExchangeBytes + 64,
              "ControlBlock is shared between processes: keep its layout fixed");

class ControlSegment {
 public:
  // Collective over the PEs of this node.
  ControlSegment(int my_pe, const std::vector<int>& local_pes, int n_pes, bootstrap::FdExchange& fdx,
                 bootstrap::Bootstrap& boot);
  ~ControlSegment();
  ControlSegment(const ControlSegment&) = delete;
  ControlSegment& operator=(const ControlSegment&) = delete;

  ControlBlock& mine() { return *blocks_[my_pe_]; }
  ControlBlock& of(int pe) { return *blocks_[pe]; }

 private:
  int my_pe_;
  std::vector<ControlBlock*> blocks_;  // by global PE; nullptr when not on this node
  std::vector<void*> maps_;
  int fd_ = -1;
};

}  // namespace gshmem
