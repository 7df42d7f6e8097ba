// The runtime: process-wide state of an initialised gshmem PE, and the entry points the API layer uses.
#pragma once
#include <sys/types.h>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "heap/symmetric_heap.hpp"
#include "runtime/control_segment.hpp"
#include "runtime/watchdog.hpp"
#include "team/team.hpp"

namespace gshmem {

enum class Mode { Cpu, Gpu };

namespace gpu {
struct Context;  // streams and scratch for GPU PEs (transport/gpu_context_cuda.cpp)
}

// What every PE publishes at init (fixed width: crosses process boundaries).
struct PeRecord {
  std::uint64_t host_hash;   // which node (hash of hostname + boot id)
  std::int32_t pid;
  std::int32_t device;       // CUDA ordinal in that process, -1 for CPU PEs
  std::int32_t mode;         // Mode
  std::int32_t version_major, version_minor, version_patch;
  char pci_bus_id[16];       // "0000:18:00.0" of the GPU, empty for CPU PEs
};
static_assert(sizeof(PeRecord) == 48, "PeRecord crosses process boundaries: keep its layout fixed");

class Runtime {
 public:
  // The initialised runtime, or throws NOT_INITIALIZED ("<call>: gshmem is not initialised. Fix: ...").
  static Runtime& get(const char* call);
  static Runtime* current();  // nullptr when not initialised

  static void init(const bootstrap::Options& opts, int major, int minor, int patch);
  static void finalize();

  int my_pe = 0;
  int n_pes = 1;
  Mode mode = Mode::Cpu;
  int device = -1;
  int visible_devices = 0;
  std::vector<PeRecord> pes;
  std::vector<int> local_pes;   // global ids on this node, ascending
  std::vector<int> local_index; // per global PE: index in local_pes or -1
  std::unique_ptr<bootstrap::Bootstrap> boot;
  std::unique_ptr<bootstrap::FdExchange> fdx;
  std::unique_ptr<bootstrap::Bootstrap> node_boot;  // NodeExchange over ctrl, for the heap's collectives
  std::unique_ptr<heap::SymmetricHeap> heap;
  std::unique_ptr<ControlSegment> ctrl;
  std::unique_ptr<TeamTable> teams;
  std::unique_ptr<Watchdog> watchdog;  // started last in init, stopped first in finalize
  gpu::Context* gpu = nullptr;
  double init_ms = 0;
  std::uint64_t wait_spins = 512;  // pauses before a host wait yields (GSHMEM_WAIT_SPINS; set at init)
  std::string cpu_reason;      // why this PE is a CPU PE (for error messages), empty on GPU PEs
  bool finalize_boot = true;   // false after an abort or leave: the bootstrap must not run its collective finalize
  bool finalized = false;      // gshmem_finalize reached the end (else ~Runtime runs at exit: leave)

  // The program ends (exit, return from main) without gshmem_finalize: stop the watchdog and tell the other PEs
  // (Bootstrap::leave), so that PEs waiting for this one fail at once naming it. Never throws.
  void leave(const std::string& how) noexcept;
  // leave() on the current runtime, if any and if this process is the one that initialised it (a child made with
  // fork() after init inherits the runtime but is not the PE: there the runtime is dropped without running its
  // destructor, whose threads do not exist in the child). Skips when init or finalize holds the lock. Never throws.
  static void leave_current(const std::string& how) noexcept;
  pid_t pid = 0;  // the process that initialised this runtime
  std::uint64_t uid_mark = 0;  // unique ids this process had made when init began (finalize drops those unused)

  // Symmetric-address checks for the API layer. `what` names the argument ("dest"), `call` the API call.
  void check_pe(int pe, const char* call) const;
  void check_symmetric(const void* p, std::size_t bytes, const char* what, const char* call) const;
  // Address of symmetric `p` in PE pe's copy, mapped here (throws if unreachable).
  void* peer(const void* p, int pe) const;

  // Called from spin-waits: cheap unless `now` passed the next check time; throws PEER_FAILED if a PE died
  // and TIMEOUT (naming `what`) once GSHMEM_WAIT_TIMEOUT has passed since `start_ns`.
  void poll_waiting(std::uint64_t start_ns, const char* what);

  ~Runtime();

 private:
  Runtime() = default;
};

std::uint64_t now_ns();

}  // namespace gshmem

namespace gshmem {
// Bytes at the start of every symmetric heap kept for the library's device-side flags (stream barriers etc.).
// 128 KiB of flags and epochs, then the collectives' LL area (32 MiB + 4 KiB), the two-shot broadcast's chunk
// flags (256 KiB) and the staged buffers (12.1 MiB, from 32.4 MiB; runtime/device_state.hpp).
inline constexpr std::size_t kHeapInternalBytes = 45 * 1024 * 1024;
}  // namespace gshmem
