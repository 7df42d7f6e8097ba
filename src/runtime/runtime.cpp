#include "runtime/runtime.hpp"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <vector>

#include "runtime/config.hpp"
#include "runtime/device_state.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"
#include "runtime/node_exchange.hpp"
#include "transport/gpu.hpp"

namespace gshmem {
namespace {

// The settings that pick a collective's algorithm (LL, two-shot) decide how many syncs and which flags each member
// uses, and the CTA settings how many parts a two-shot broadcast's chunks are cut into (CTA b of a member waits for
// CTA b of the root): members with different values would wait for each other until the timeout. Every PE must
// start with the same; compared here, once, so a difference is an error at init naming it.
void check_collective_settings(Runtime& rt, bool gpu_pe) {
  struct CollConfig {
    std::uint64_t ll_bytes, two_shot_bytes, bcast_two_shot_bytes, ctas, cta_bytes, staged_bytes, staged_cta_bytes,
        reduce_ce_bytes;
    bool operator==(const CollConfig& o) const {
      return ll_bytes == o.ll_bytes && two_shot_bytes == o.two_shot_bytes &&
             bcast_two_shot_bytes == o.bcast_two_shot_bytes && ctas == o.ctas && cta_bytes == o.cta_bytes &&
             staged_bytes == o.staged_bytes && staged_cta_bytes == o.staged_cta_bytes &&
             reduce_ce_bytes == o.reduce_ce_bytes;
    }
  };
  const auto& cfg = config::get();
  const CollConfig mine{device_state::coll_ll_limit(gpu_pe, "gshmem_init"), cfg.coll_two_shot_bytes,
                        cfg.coll_bcast_two_shot_bytes, static_cast<std::uint64_t>(cfg.coll_ctas), cfg.coll_cta_bytes,
                        device_state::coll_staged_limit(gpu_pe, "gshmem_init"), cfg.coll_staged_cta_bytes,
                        cfg.coll_reduce_ce_bytes};
  std::vector<CollConfig> all(static_cast<std::size_t>(rt.n_pes));
  rt.node_boot->allgather(&mine, all.data(), sizeof(CollConfig));
  for (std::size_t pe = 0; pe < all.size(); ++pe) {
    if (all[pe] == all[0]) continue;
    const CollConfig &a = all[0], &b = all[pe];
    fail(GSHMEM_ERROR_MISMATCH, "gshmem_init: PEs were started with different collective settings: PE 0 has "
         "GSHMEM_COLL_LL_BYTES {}, GSHMEM_COLL_TWO_SHOT_BYTES {}, GSHMEM_COLL_BCAST_TWO_SHOT_BYTES {}, "
         "GSHMEM_COLL_CTAS {}, GSHMEM_COLL_CTA_BYTES {}, GSHMEM_COLL_STAGED_BYTES {}, "
         "GSHMEM_COLL_STAGED_CTA_BYTES {} and GSHMEM_COLL_REDUCE_CE_BYTES {}, PE {} has {}, {}, {}, {}, {}, {}, {} and "
         "{} (the LL and staged limits as "
         "resolved: unset is 131072 and 2097152 on GPU PEs, 0 on CPU PEs). Fix: start every PE with the same "
         "GSHMEM_COLL_LL_BYTES, GSHMEM_COLL_TWO_SHOT_BYTES, GSHMEM_COLL_BCAST_TWO_SHOT_BYTES, GSHMEM_COLL_CTAS, "
         "GSHMEM_COLL_CTA_BYTES, GSHMEM_COLL_STAGED_BYTES, GSHMEM_COLL_STAGED_CTA_BYTES and GSHMEM_COLL_REDUCE_CE_BYTES "
         "(or leave them unset "
         "everywhere)", a.ll_bytes, a.two_shot_bytes, a.bcast_two_shot_bytes, static_cast<long long>(a.ctas),
         a.cta_bytes, a.staged_bytes, a.staged_cta_bytes, a.reduce_ce_bytes, pe, b.ll_bytes, b.two_shot_bytes,
         b.bcast_two_shot_bytes, static_cast<long long>(b.ctas), b.cta_bytes, b.staged_bytes, b.staged_cta_bytes,
         b.reduce_ce_bytes);
  }
}
std::unique_ptr<Runtime> g_runtime;
std::mutex g_init_mutex;

// Runs at exit() (also after main returns), before the static destructors of the library: a PE that ends
// without gshmem_finalize says so (with its exit status) instead of waiting in the collective finalize.
void leave_at_exit(int status, void*) {
  Runtime::leave_current(fmt::format("its process exited with status {}", status));
}

// Pauses a host wait spins before it yields (GSHMEM_WAIT_SPINS; -1: auto). Auto: 512, enough to catch a peer on
// another core without a system call; 16 where this node's PEs outnumber the cores this process may run on (a
// process pinned to one core counts the machine's online cores: the launcher pinned the PEs apart), since PEs then
// take turns on a core and a waiter spinning out its time slice delays the PE it waits for (CPU PEs, 2 cores, 4
// PEs: an 8-byte broadcast took 103 us with 512, 14.5 us with 16; bench/NOTES.md entry 19).
std::uint64_t wait_spins_for(int local_pes) {
  const long long set = config::get().wait_spins;
  if (set >= 0) return static_cast<std::uint64_t>(set);
  cpu_set_t mask;
  CPU_ZERO(&mask);
  long cores = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : 0;
  if (cores <= 1) cores = sysconf(_SC_NPROCESSORS_ONLN);
  return local_pes > cores ? 16 : 512;
}

std::uint64_t host_hash() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::string id = host;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  if (boot >> boot_id) id += "/" + boot_id;
  // FNV-1a: stable across processes (std::hash need not be).
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
  return h;
}

const char* mode_name(std::int32_t m) { return m == static_cast<int>(Mode::Gpu) ? "GPU" : "CPU"; }
}  // namespace

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

Runtime* Runtime::current() { return g_runtime.get(); }

Runtime& Runtime::get(const char* call) {
  Runtime* rt = g_runtime.get();
  if (!rt)
    fail(GSHMEM_ERROR_NOT_INITIALIZED, "{}: gshmem is not initialised in this process. Fix: call gshmem_init() "
         "(or gshmemx_init_attr) first, and do not use gshmem after gshmem_finalize()", call);
  return *rt;
}

void Runtime::init(const bootstrap::Options& opts, int major, int minor, int patch) {
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (g_runtime) {
    log::info("init called again while initialised: ignored (OpenSHMEM allows repeated init)");
    return;
  }
  const auto t0 = now_ns();
  config::reload();
  log::set_level_from_config();
  // 0.x: the inline C++ layer may change between minor versions, so those must match too.
  if (major != GSHMEM_VERSION_MAJOR || (GSHMEM_VERSION_MAJOR == 0 && minor != GSHMEM_VERSION_MINOR))
    fail(GSHMEM_ERROR_INVALID_VALUE, "init: this program was compiled against gshmem {}.{}.{} headers but loaded "
         "libgshmem {}. Fix: rebuild the program against the installed gshmem, or point LD_LIBRARY_PATH at the "
         "library its headers came from", major, minor, patch, GSHMEM_VERSION_STRING);

  std::unique_ptr<Runtime> rt(new Runtime());
  // Where init spends its time, for GSHMEM_DEBUG=INFO.
  std::string phases;
  auto t_prev = t0;
  auto phase = [&](const char* name) {
    const auto t = now_ns();
    phases += fmt::format(" {} {:.1f}", name, static_cast<double>(t - t_prev) / 1e6);
    t_prev = t;
  };
  rt->uid_mark = bootstrap::unique_ids_made();
  rt->boot = bootstrap::connect(opts);
  phase("bootstrap");
  rt->my_pe = rt->boot->rank();
  rt->n_pes = rt->boot->size();
  log::set_pe(rt->my_pe);
  try {
    const auto& cfg = config::get();
    for (const auto& row : config::describe())
      if (row.from_env && std::string(row.name).rfind("NVSHMEM_", 0) == 0)
        log::info("{}={} accepted for NVSHMEM compatibility: {}", row.name, row.current_value, row.doc);
    if (cfg.nvshmem_remote_transport != "none" && !cfg.nvshmem_remote_transport.empty())
      log::warn("NVSHMEM_REMOTE_TRANSPORT={} asks for a remote transport; gshmem runs PEs of one node only and "
                "ignores it", cfg.nvshmem_remote_transport);
    // ---- mode ----
    std::string why = "GSHMEM_DEVICE=cpu was set";
    const bool gpu_ok = cfg.device != "cpu" && gpu::available(&why);
    if (cfg.device == "gpu" && !gpu_ok)
      fail(GSHMEM_ERROR_NOT_SUPPORTED, "init: GSHMEM_DEVICE=gpu but no GPU PE is possible here: {}. Fix: run on "
           "a machine with an NVIDIA GPU and driver, or unset GSHMEM_DEVICE to use CPU PEs", why);
    if (cfg.device != "gpu" && cfg.device != "cpu" && cfg.device != "auto")
      fail(GSHMEM_ERROR_INVALID_VALUE, "init: GSHMEM_DEVICE=\"{}\" is not one of auto, cpu, gpu. Fix: set one of those or unset "
           "it", cfg.device);
    rt->mode = (cfg.device == "cpu" || !gpu_ok) ? Mode::Cpu : Mode::Gpu;
    if (cfg.nvshmem_disable_p2p)
      log::warn("NVSHMEM_DISABLE_P2P=1 asks for the PEs of this node to be reached over a remote transport; gshmem "
                "has none and keeps reaching them directly ({}). Fix: unset it, or set it to 0",
                rt->mode == Mode::Gpu ? "P2P over NVLink or PCIe" : "shared memory");
    phase("driver");
    if (rt->mode == Mode::Cpu) {
      rt->cpu_reason = why;
      if (cfg.device == "auto") log::info("running as a CPU PE: {}", why);
    }

    // ---- who is where ----
    PeRecord me{};
    me.host_hash = host_hash();
    me.pid = static_cast<std::int32_t>(getpid());
    me.device = -1;
    me.mode = static_cast<std::int32_t>(rt->mode);
    me.version_major = GSHMEM_VERSION_MAJOR;
    me.version_minor = GSHMEM_VERSION_MINOR;
    me.version_patch = GSHMEM_VERSION_PATCH;
    rt->pes.resize(static_cast<size_t>(rt->n_pes));
    rt->boot->allgather(&me, rt->pes.data(), sizeof me);
    rt->local_index.assign(static_cast<size_t>(rt->n_pes), -1);
    for (int pe = 0; pe < rt->n_pes; ++pe) {
      const PeRecord& r = rt->pes[static_cast<size_t>(pe)];
      if (r.version_major != me.version_major || r.version_minor != me.version_minor)
        fail(GSHMEM_ERROR_MISMATCH, "init: PE {} runs gshmem {}.{}.{}, PE {} runs {}.{}.{}. Fix: use one gshmem "
             "installation for every PE", pe, r.version_major, r.version_minor, r.version_patch, rt->my_pe,
             me.version_major, me.version_minor, me.version_patch);
      if (r.mode != me.mode)
        fail(GSHMEM_ERROR_MISMATCH, "init: PE {} would run on {} but PE {} on {} (every PE must be of one kind). "
             "Fix: make the GPUs visible to every PE, or set GSHMEM_DEVICE=cpu for all", pe, mode_name(r.mode),
             rt->my_pe, mode_name(me.mode));
      if (r.host_hash == me.host_hash) {
        rt->local_index[static_cast<size_t>(pe)] = static_cast<int>(rt->local_pes.size());
        rt->local_pes.push_back(pe);
      }
    }
    if (static_cast<int>(rt->local_pes.size()) != rt->n_pes)
      fail(GSHMEM_ERROR_NOT_SUPPORTED, "init: the job spans several nodes ({} of {} PEs are on this one); this "
           "gshmem version runs PEs of one node only (NVLink / shared memory). Fix: run every PE on one node",
           rt->local_pes.size(), rt->n_pes);

    rt->wait_spins = wait_spins_for(static_cast<int>(rt->local_pes.size()));
    log::info("host waits spin {} pauses before yielding ({} PEs on this node)", rt->wait_spins,
              rt->local_pes.size());
    phase("gather");
    // ---- device ----
    const int local_me = rt->local_index[static_cast<size_t>(rt->my_pe)];
    if (rt->mode == Mode::Gpu) {
      rt->visible_devices = gpu::device_count();
      rt->device = gpu::select_device(local_me, static_cast<int>(rt->local_pes.size()), me.pci_bus_id);
      me.device = rt->device;
      rt->boot->allgather(&me, rt->pes.data(), sizeof me);
      phase("device");
    }

    // ---- shared memory with local peers ----
    std::vector<int> pids(static_cast<size_t>(rt->n_pes));
    for (int pe = 0; pe < rt->n_pes; ++pe) pids[static_cast<size_t>(pe)] = rt->pes[static_cast<size_t>(pe)].pid;
    rt->fdx = std::make_unique<bootstrap::FdExchange>(rt->boot->secret(), rt->my_pe, rt->local_pes, pids);
    rt->ctrl = std::make_unique<ControlSegment>(rt->my_pe, rt->local_pes, rt->n_pes, *rt->fdx, *rt->boot);
    phase("control");

    heap::Params hp;
    hp.backing = rt->mode == Mode::Gpu ? heap::Backing::Cuda : heap::Backing::Host;
    hp.device = rt->device;
    hp.initial_size = cfg.symmetric_size;
    hp.max_size = cfg.max_heap_size;
    hp.internal_size = kHeapInternalBytes;
    hp.my_pe = rt->my_pe;
    hp.n_pes = rt->n_pes;
    hp.local_pes = rt->local_pes;
    // All PEs are on this node (checked above): the heap's collective steps go through shared memory.
    rt->node_boot = std::make_unique<NodeExchange>(*rt, *rt->boot);
    rt->heap = std::make_unique<heap::SymmetricHeap>(hp, *rt->node_boot, *rt->fdx);
    phase("heap");
    check_collective_settings(*rt, rt->mode == Mode::Gpu);
    rt->teams = std::make_unique<TeamTable>(*rt);
    if (rt->mode == Mode::Gpu) rt->gpu = gpu::create_context(*rt);
    device_state::publish(*rt);  // before the closing barrier: zeroes the device-barrier flags peers will write
    phase("context");
    rt->boot->barrier();
    phase("barrier");
    rt->watchdog = std::make_unique<Watchdog>(*rt);
    rt->init_ms = static_cast<double>(now_ns() - t0) / 1e6;
    log::info("initialised PE {} of {} on {} (device {}) via {} bootstrap in {:.1f} ms (ms per phase:{})",
              rt->my_pe, rt->n_pes, mode_name(me.mode), rt->device, rt->boot->kind(), rt->init_ms, phases);
  } catch (const std::exception& e) {
    // Tell the others at once (they may sit in a collective), and skip the bootstrap's collective finalize.
    rt->boot->abort(e.what());
    rt->finalize_boot = false;
    throw;
  }
  rt->pid = getpid();
  g_runtime = std::move(rt);
  static std::once_flag exit_hook;
  std::call_once(exit_hook, [] { ::on_exit(leave_at_exit, nullptr); });
}

void Runtime::finalize() {
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (!g_runtime) return;
  Runtime& rt = *g_runtime;
  rt.watchdog.reset();  // from here on, failures surface in the calls below
  // Work the program left on its streams may still touch the heap (a stream barrier polls flags in it).
  if (rt.gpu) gpu::synchronize_device(rt.gpu, "gshmem_finalize");
  rt.teams->barrier(GSHMEM_TEAM_WORLD, "gshmem_finalize");
  device_state::reset(rt);
  rt.finalized = true;
  const std::uint64_t uid_mark = rt.uid_mark;
  g_runtime.reset();  // ~Runtime releases everything and ends the bootstrap in order
  bootstrap::drop_unused_unique_ids(uid_mark);
}

void Runtime::leave_current(const std::string& how) noexcept {
  std::unique_lock<std::mutex> lock(g_init_mutex, std::try_to_lock);  // during init or finalize: nothing to tell
  if (!lock.owns_lock() || !g_runtime) return;
  if (g_runtime->pid != getpid()) {
    (void)g_runtime.release();  // a fork()ed child: not the PE; its threads and connections are the parent's
    return;
  }
  g_runtime->leave(how);
}

void Runtime::leave(const std::string& how) noexcept {
  watchdog.reset();
  if (boot && finalize_boot) {
    log::info("ending without gshmem_finalize ({}): telling the other PEs", how);
    boot->leave(how);
  }
  finalize_boot = false;
}

Runtime::~Runtime() {
  watchdog.reset();
  if (gpu) gpu::destroy_context(gpu);
  gpu = nullptr;
  teams.reset();
  heap.reset();
  node_boot.reset();
  ctrl.reset();
  fdx.reset();
  if (boot && finalize_boot && !finalized) {
    // Destroyed at exit without gshmem_finalize, and the exit hook did not run (e.g. the library was unloaded).
    boot->leave("its program ended without gshmem_finalize");
  } else if (boot && finalize_boot) {
    try {
      boot->finalize();
    } catch (const Error& e) {
      log::warn("finalize: {}", e.what());
    }
  }
}

void Runtime::check_pe(int pe, const char* call) const {
  if (pe < 0 || pe >= n_pes)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: pe={} is out of range: this job has PEs 0..{}. Fix: pass a PE number "
         "from 0 to gshmem_n_pes()-1", call, pe, n_pes - 1);
}

void Runtime::check_symmetric(const void* p, std::size_t bytes, const char* what, const char* call) const {
  if (!heap->contains(p, bytes))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: {}={} ({} bytes) is not inside the symmetric heap [{}, {}) of PE {}. "
         "Fix: {} must point into memory from gshmem_malloc/gshmem_calloc/gshmem_align (every PE allocates it)",
         call, what, p, bytes, static_cast<const void*>(heap->base()),
         static_cast<const void*>(heap->base() + heap->size()), my_pe, what);
}

void* Runtime::peer(const void* p, int pe) const {
  void* q = heap->peer_ptr(p, pe);
  if (!q)
    fail(GSHMEM_ERROR_NOT_SUPPORTED, "PE {} is not reachable from PE {} by load/store. Fix: run all PEs on one "
         "node", pe, my_pe);
  return q;
}

void Runtime::poll_waiting(std::uint64_t start_ns, const char* what) {
  boot->check_health();
  double limit = config::get().wait_timeout;
  if (limit > 0 && static_cast<double>(now_ns() - start_ns) / 1e9 > limit)
    fail(GSHMEM_ERROR_TIMEOUT, "{}: waited more than {} s (GSHMEM_WAIT_TIMEOUT) and the condition never became "
         "true. Fix: check that every PE makes the matching call (a missing barrier, put or signal on another "
         "PE), or raise GSHMEM_WAIT_TIMEOUT (0 = no limit)", what, limit);
}

}  // namespace gshmem
