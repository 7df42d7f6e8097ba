// Bootstrap: how PEs find each other and exchange small control data before (and beside) the symmetric heap.
// One interface, several ways to start (see make_bootstrap). Everything here is host-side, small and slow-path:
// data movement between PEs never goes through it.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gshmem/gshmem.h"

namespace gshmem::bootstrap {

using Secret = std::array<std::uint8_t, 16>;

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Which launcher/mechanism this is ("launcher", "env", "uid", "mpi", "single"), for logs and gshmem-info.
  virtual const char* kind() const = 0;
  // Random per-job secret every PE of this job shares (peers prove it when they connect).
  virtual const Secret& secret() const = 0;

  // Every rank contributes `len` bytes (same len on every rank, else Error MISMATCH); `out` receives
  // size()*len bytes ordered by rank. Blocks until all ranks contributed, at most GSHMEM_BOOTSTRAP_TIMEOUT.
  virtual void allgather(const void* in, void* out, std::size_t len) = 0;
  virtual void barrier();
  virtual void broadcast(void* buf, std::size_t len, int root);

  // Returns without blocking; throws Error(GSHMEM_ERROR_PEER_FAILED, "...PE k ... died/aborted: reason") if the
  // job has lost a PE. Spin-waits call this every few milliseconds.
  virtual void check_health() = 0;
  // Tell every other PE this one is failing (they get PEER_FAILED with `why`). Never throws.
  virtual void abort(const std::string& why) noexcept = 0;
  // Orderly end: after this no PE reports this one as dead. Collective.
  virtual void finalize() = 0;
  // This PE's program ends without gshmem_finalize (`how`: "its process exited with status 0"): tell the others
  // at once (they get PEER_FAILED, "PE k left without calling gshmem_finalize (how)"), instead of a collective
  // finalize that would wait for PEs that may be waiting for this one. If this process serves the rendezvous,
  // keep serving until the other PEs are done too (bounded by GSHMEM_BOOTSTRAP_TIMEOUT). Never throws.
  virtual void leave(const std::string& how) noexcept { (void)how; }
  // After check_health() threw: true when the failure is a PE that left without finalize (its program ended)
  // rather than one that died or aborted. It is an error for every PE that waits for it, but not a reason to
  // end a PE that is busy elsewhere (it may end without finalize too).
  virtual bool failure_is_departure() const { return false; }
};

// Options the runtime hands in (from gshmemx_init_attr and the config table).
struct Options {
  unsigned flags = 0;                     // GSHMEMX_INIT_* from init_attr
  const void* mpi_comm = nullptr;         // pointer to an MPI_Comm, with GSHMEMX_INIT_WITH_MPI_COMM
  int uid_rank = -1, uid_nranks = -1;     // with GSHMEMX_INIT_WITH_UNIQUEID
  const gshmemx_uniqueid_t* uid = nullptr;
};

// Chooses and connects the bootstrap:
//  - GSHMEMX_INIT_WITH_UNIQUEID / WITH_MPI_COMM flags win;
//  - else GSHMEM_BOOTSTRAP (auto|launcher|env|mpi|uid|single); auto picks, in order: gshmemrun's environment
//    (GSHMEM_RANK, GSHMEM_WORLD_SIZE, GSHMEM_LAUNCHER_ADDR, GSHMEM_LAUNCHER_SECRET), an MPI launcher's
//    environment (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK), torchrun's (RANK, WORLD_SIZE, MASTER_ADDR,
//    MASTER_PORT), else a single PE.
// Throws Error naming what is missing or wrong and how to fix it.
std::unique_ptr<Bootstrap> connect(const Options& opts);

// The unique id: rank 0 calls this, shares the bytes with every rank by its own means, and each rank passes them
// to gshmemx_init_attr(GSHMEMX_INIT_WITH_UNIQUEID). Carries address, port and a random secret; the calling
// process starts listening on that port.
void make_unique_id(gshmemx_uniqueid_t* uid);
// How many unique ids this process has made so far (init records it).
std::uint64_t unique_ids_made();
// Stops listening for the first `made_before` ids this process made that no job of it joined. gshmem_finalize
// passes the count at its job's init: programs that have every rank make an id and use rank 0's (PyTorch's NVSHMEM
// backend) leave one on every other rank, while an id made during the job may be for the next init.
void drop_unused_unique_ids(std::uint64_t made_before) noexcept;

// Local facts every PE publishes during init (hostname hash, pid, local rank) are gathered by the runtime via
// allgather; nothing else here needs them.

// ---- fd passing between PEs of one node (used by the symmetric heap) ----
// Each PE listens on an abstract-namespace unix socket named from the job secret and its rank (no file in /tmp).
// Connections are accepted only from processes of the same uid whose pid is one of the job's PEs.
class FdExchange {
 public:
  // `peers`: ranks (PEs) on this node including me; `pids`: pid of every PE indexed by rank.
  FdExchange(const Secret& secret, int my_rank, std::vector<int> local_ranks, std::vector<int> pids_by_rank);
  ~FdExchange();
  FdExchange(const FdExchange&) = delete;
  FdExchange& operator=(const FdExchange&) = delete;
  // Collective over the local ranks: sends `my_fds` (same count on every PE) to every other local PE and returns
  // the fds received, indexed [local index][i] (my own entry holds dups of my_fds). `tag` must match on all.
  // The caller owns (and closes) every returned fd. Bounded by GSHMEM_BOOTSTRAP_TIMEOUT; calls `health` (if
  // set) while waiting so a dead peer turns into an error.
  std::vector<std::vector<int>> exchange(const std::vector<int>& my_fds, std::uint64_t tag,
                                         Bootstrap* health = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gshmem::bootstrap
