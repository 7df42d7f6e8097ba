// Device state (see device_state.hpp): device tables, the registry of per-translation-unit setters, and the
// exported C entry points gshmemx_device_handle / gshmemi_(un)register_device_state_setter.
#include "runtime/device_state.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include "api/guard.hpp"
#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"

#if GSHMEM_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>

#include "transport/cuda_driver.hpp"
#endif

namespace gshmem::device_state {
namespace {

// Registered setters and the state they were last given. Allocated once and never destroyed: device.cuh's
// registrars run during static initialisation and destruction of user modules, in any order relative to ours.
struct Registry {
  std::mutex mutex;
  std::vector<gshmemi_device_state_setter_t> setters;
  gshmem_device_state_t state{};                  // version 0 until the first publish
  const Runtime* owner = nullptr;                 // runtime the tables below belong to
  char** d_peer_bases = nullptr;                  // device tables (cudaMalloc'd by the library)
  gshmem_device_team_t* d_teams[2] = {nullptr, nullptr};  // double-buffered: kernels in flight keep their table
  int teams_buf = 0;                              // which of d_teams the state points at
  void* stream = nullptr;                         // private non-blocking stream (cudaStream_t) for table copies
  gshmem_device_team_t teams[kMaxTeams] = {};     // host copy of what d_teams holds
  // Member lists of list teams (gshmem/team_value.h), a row of n_pes per slot; `lists` is what each row holds. One
  // buffer: a slot's row changes only when its team does, and a team is destroyed only after the device is idle.
  std::int32_t* d_lists = nullptr;
  std::vector<std::int32_t> lists[kMaxTeams];
  // Modules / libraries the program loaded itself and handed over with gshmemx_cumodule_init /
  // gshmemx_culibrary_init: the device address of their gshmemi_dstate, filled like a setter's copy.
  struct External {
    void* handle;     // CUmodule or CUlibrary
    bool library;
    void* state;      // device address of that code's gshmemi_dstate
  };
  std::vector<External> externals;
};

Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

#if GSHMEM_HAVE_CUDA
void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  fail(GSHMEM_ERROR_SYSTEM, "device state: {} failed: {}. Fix: check that the GPU is healthy (nvidia-smi) and "
       "that no earlier kernel faulted (run with compute-sanitizer)", what, cuda::error_text(e));
}

// Calls one setter (it makes the PE's device current and restores the caller's). A failure is a warning, not an
// error: a translation unit without code for this GPU (built for other architectures) cannot take the state, but
// it may never launch a kernel; if it does, its kernels trap with "device state not published".
void call_setter(gshmemi_device_state_setter_t setter, const gshmem_device_state_t& s) {
  const int rc = setter(&s);
  if (rc != 0) {
    log::warn("device state: copying the state into a translation unit's gshmemi_dstate (cudaMemcpyToSymbol in "
              "code that includes <gshmem/device.cuh>) failed with cudaError {} ({}); kernels of that code will "
              "trap if they use gshmem. Fix: build it for this GPU's architecture (CMAKE_CUDA_ARCHITECTURES / "
              "-arch) and check that no earlier kernel faulted", rc,
              cuda::error_text(static_cast<cudaError_t>(rc)));
    (void)cudaGetLastError();
  }
}

// Writes `s` into a module's or library's copy of the state (device address `dst`), with the PE's GPU current.
int copy_to_external(void* dst, const gshmem_device_state_t& s) {
  try {
    const cuda::DeviceScope on_pe_gpu(s.device);
    return static_cast<int>(cudaMemcpy(dst, &s, sizeof s, cudaMemcpyDefault));
  } catch (const Error&) {
    return static_cast<int>(cudaErrorInvalidDevice);
  }
}

void update_externals(Registry& r, const gshmem_device_state_t& s) {
  for (const auto& m : r.externals) {
    const int rc = copy_to_external(m.state, s);
    if (rc != 0) {
      log::warn("device state: copying the state into a {} given to gshmemx_cu{}_init failed with cudaError {} "
                "({}); its kernels will trap if they use gshmem. Fix: keep the {} loaded until "
                "gshmemx_cu{}_finalize, and check that no earlier kernel faulted", m.library ? "library" : "module",
                m.library ? "library" : "module", rc, cuda::error_text(static_cast<cudaError_t>(rc)),
                m.library ? "library" : "module", m.library ? "library" : "module");
      (void)cudaGetLastError();
    }
  }
}

// Everything in the state except heap_size (growth changes only that, and kernels bound addresses by heap_max):
// when nothing else changed, the translation units' copies stay as they are.
bool same_but_heap_size(const gshmem_device_state_t& a, const gshmem_device_state_t& b) {
  gshmem_device_state_t x = a, y = b;
  x.heap_size = y.heap_size = 0;
  return std::memcmp(&x, &y, sizeof x) == 0;
}

void free_tables(Registry& r) {
  if (r.d_peer_bases) cudaFree(r.d_peer_bases);
  if (r.d_lists) cudaFree(r.d_lists);
  r.d_lists = nullptr;
  for (auto& l : r.lists) l.clear();
  for (auto*& t : r.d_teams) {
    if (t) cudaFree(t);
    t = nullptr;
  }
  if (r.stream) cudaStreamDestroy(static_cast<cudaStream_t>(r.stream));
  r.d_peer_bases = nullptr;
  r.stream = nullptr;
}
#endif

}  // namespace

gshmem_device_state_t current() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.state;
}

std::size_t coll_ll_limit(bool gpu_pe, const char* call) {
  const long long v = config::get().coll_ll_bytes;
  constexpr long long most = static_cast<long long>(coll::kLLBufBytes / 2);
  if (v < -1 || v > most)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: GSHMEM_COLL_LL_BYTES={} is outside -1..{} (data bytes per call up to "
         "which small collectives go by LL; the buffers hold {}). Fix: set 0 to {}, or unset it", call, v, most,
         most, most);
  if (v == -1) return gpu_pe ? coll::kLLDefaultBytes : 0;
  return static_cast<std::size_t>(v);
}

std::size_t coll_staged_limit(bool gpu_pe, const char* call) {
  const long long v = config::get().coll_staged_bytes;
  constexpr long long most = static_cast<long long>(coll::kStagedDefaultBytes);
  if (v < -1 || v > most)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: GSHMEM_COLL_STAGED_BYTES={} is outside -1..{} (data bytes per call up to "
         "which mid-sized collectives go staged, one flight through the receivers' buffers of {} bytes). Fix: set 0 "
         "to {}, or unset it", call, v, most, coll::kStagedDataBytes, most);
  if (v == -1) return gpu_pe ? coll::kStagedDefaultBytes : 0;
  return static_cast<std::size_t>(v);
}

void publish(Runtime& rt) {
#if GSHMEM_HAVE_CUDA
  if (rt.mode != Mode::Gpu) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  // The PE's GPU for the tables and the setters (each TU's setter switches only when another GPU is current), the
  // caller's context back afterwards; a thread without one gets no context on another GPU (cuda::DeviceScope: the
  // old cudaGetDevice/cudaSetDevice(previous) pair set device 0 on such a thread, creating its context).
  const cuda::DeviceScope on_pe_gpu(rt.device);
  char* base = rt.heap->base();
  // First publish of this runtime: init calls it before the runtime becomes current().
  const bool first = Runtime::current() != &rt || r.owner != &rt;
  if (first) {
    // A new runtime (first init, or init after finalize): fresh tables, zeroed device-barrier area.
    free_tables(r);
    r.owner = &rt;
    r.state = {};
    std::fill(std::begin(r.teams), std::end(r.teams), gshmem_device_team_t{});
    cudaStream_t st = nullptr;
    check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (device state)");
    r.stream = st;
    check(cudaMalloc(reinterpret_cast<void**>(&r.d_peer_bases), sizeof(char*) * static_cast<size_t>(rt.n_pes)),
          "cudaMalloc (device peer-base table)");
    for (auto*& t : r.d_teams)
      check(cudaMalloc(reinterpret_cast<void**>(&t), sizeof(gshmem_device_team_t) * kMaxTeams),
            "cudaMalloc (device team table)");
    check(cudaMalloc(reinterpret_cast<void**>(&r.d_lists),
                     sizeof(std::int32_t) * kMaxTeams * static_cast<size_t>(rt.n_pes)),
          "cudaMalloc (device table of team member lists)");
    check(cudaMemsetAsync(base + kDeviceBarrierOffset, 0, kDeviceInternalEnd - kDeviceBarrierOffset, st),
          "cudaMemsetAsync (device-barrier flags)");
    check(cudaMemsetAsync(base + kCollOffset, 0, kCollEnd - kCollOffset, st),
          "cudaMemsetAsync (collective workspace)");
    check(cudaMemsetAsync(base + kCollLLOffset, 0, kCollStagedEnd - kCollLLOffset, st),
          "cudaMemsetAsync (collectives' LL area, chunk flags and staged buffers)");
    // Peers' heaps sit at fixed slots of the reservation: the table never changes after this.
    const auto& bases = rt.heap->peer_bases();
    check(cudaMemcpyAsync(r.d_peer_bases, bases.data(), sizeof(char*) * static_cast<size_t>(rt.n_pes),
                          cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (device peer-base table)");
  }
  // Library copies go on a private non-blocking stream, so a kernel of the program that runs on (and waits for)
  // another PE never blocks this call: no device-wide synchronisation here.
  cudaStream_t st = static_cast<cudaStream_t>(r.stream);

  // Teams: a slot that went from live to unused gets its device-barrier flags and epoch zeroed, so that a team
  // later created in that slot starts from epoch 0 on every member. (Team destroy is collective and follows the
  // team's last barrier, so no peer still writes those flags.)
  // List teams' rows: where a slot's list changed, its new list goes to the device before the table points at it.
  rt.teams->set_device_lists(r.d_lists);
  gshmem_device_team_t teams[kMaxTeams] = {};
  std::vector<std::int32_t> lists[kMaxTeams];
  for (int slot = 0; slot < kMaxTeams; ++slot) {
    if (!rt.teams->valid(slot)) continue;
    const TeamInfo& t = rt.teams->get(slot, "device_state::publish");
    if (!t.live) continue;
    teams[slot] = t;  // the team value, member-list pointers included
    if (t.host_members) lists[slot].assign(t.host_members, t.host_members + t.size);
  }
  for (int slot = 0; slot < kMaxTeams; ++slot) {
    if (lists[slot].empty() || lists[slot] == r.lists[slot]) continue;
    check(cudaMemcpyAsync(r.d_lists + static_cast<size_t>(slot) * static_cast<size_t>(rt.n_pes), lists[slot].data(),
                          sizeof(std::int32_t) * lists[slot].size(), cudaMemcpyHostToDevice, st),
          "cudaMemcpyAsync (a team's member list)");
  }
  for (int slot = 0; slot < kMaxTeams; ++slot) {
    const gshmem_device_team_t& was = r.teams[slot];
    const gshmem_device_team_t& now = teams[slot];
    const bool same = was.start == now.start && was.stride == now.stride && was.size == now.size &&
                      was.my_rank == now.my_rank && lists[slot] == r.lists[slot];
    if (!first && !same && was.size > 0) {
      check(cudaMemsetAsync(base + kDeviceBarrierOffset + sizeof(std::uint64_t) * kMaxRounds * slot, 0,
                            sizeof(std::uint64_t) * kMaxRounds, st),
            "cudaMemsetAsync (device-barrier flags of a freed team)");
      check(cudaMemsetAsync(base + kDeviceEpochOffset + sizeof(std::uint64_t) * slot, 0, sizeof(std::uint64_t), st),
            "cudaMemsetAsync (device-barrier epoch of a freed team)");
    }
  }
  const bool teams_changed = first || !std::equal(std::begin(teams), std::end(teams), std::begin(r.teams),
                                                   [](const gshmem_device_team_t& a, const gshmem_device_team_t& b) {
                                                     return std::memcmp(&a, &b, sizeof a) == 0;
                                                   });
  if (teams_changed) {
    // Write the other buffer: kernels still running keep reading the table they were given.
    if (!first) r.teams_buf ^= 1;
    check(cudaMemcpyAsync(r.d_teams[r.teams_buf], teams, sizeof teams, cudaMemcpyHostToDevice, st),
          "cudaMemcpyAsync (device team table)");
  }
  std::copy(std::begin(teams), std::end(teams), std::begin(r.teams));
  for (int slot = 0; slot < kMaxTeams; ++slot) r.lists[slot] = std::move(lists[slot]);
  // (the copies read the host lists: this also keeps them alive until the device has them)
  check(cudaStreamSynchronize(st), "cudaStreamSynchronize (device state tables)");

  gshmem_device_state_t s{};
  s.version = GSHMEM_DEVICE_STATE_VERSION;
  s.my_pe = rt.my_pe;
  s.n_pes = rt.n_pes;
  s.device = rt.device;
  s.heap_base = base;
  s.heap_size = rt.heap->size();
  s.heap_max = rt.heap->usage().max_size;
  s.peer_bases = r.d_peer_bases;
  s.teams = r.d_teams[r.teams_buf];
  s.barrier_offset = kDeviceBarrierOffset;
  s.barrier_epochs = reinterpret_cast<std::uint64_t*>(base + kDeviceEpochOffset);
  s.coll_offset = kCollOffset;
  s.coll_ll_offset = kCollLLOffset;
  s.coll_ll_bytes = coll_ll_limit(true, "gshmem_init");
  const double t = config::get().wait_timeout;
  s.timeout_ns = t > 0 ? std::max<std::uint64_t>(static_cast<std::uint64_t>(t * 1e9), 1) : UINT64_MAX;  // state.h
  s.peer_stride = heap::regular_peer_stride(rt.heap->peer_bases());
  const bool unchanged = !first && same_but_heap_size(s, r.state);
  r.state = s;
  if (!unchanged) {
    for (auto setter : r.setters) call_setter(setter, s);
    update_externals(r, s);
  }
  log::info("device state published: {} PEs, {} translation unit(s) registered", rt.n_pes, r.setters.size());
#else
  (void)rt;
#endif
}

void reset(Runtime& rt) noexcept {
#if GSHMEM_HAVE_CUDA
  if (rt.mode != Mode::Gpu) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.owner != &rt) return;
  std::optional<cuda::DeviceScope> on_pe_gpu;  // as in publish(); without it the setters and frees go on anyway
  try {
    on_pe_gpu.emplace(rt.device);
  } catch (const Error& e) {
    log::warn("device state: {}", e.what());
  }
  // Kernels of a finalized PE must trap ("not published"), not dereference the freed heap and tables.
  gshmem_device_state_t s{};
  s.device = rt.device;  // the setters switch to this device; version 0 marks the state unusable
  r.state = s;
  for (auto setter : r.setters) call_setter(setter, s);
  update_externals(r, s);
  r.externals.clear();
  free_tables(r);
  r.state = {};
  r.owner = nullptr;
  std::fill(std::begin(r.teams), std::end(r.teams), gshmem_device_team_t{});
#else
  (void)rt;
#endif
}

namespace {
// gshmemx_cumodule_init / culibrary_init: finds `handle`'s gshmemi_dstate by name and keeps it filled.
// gshmemx_cumodule_finalize / culibrary_finalize (add == false): stops doing so.
void external(void* handle, bool library, bool add, const char* call) {
  Runtime& rt = Runtime::get(call);
  const char* kind = library ? "library" : "module";
  if (!handle)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: the {} is NULL. Fix: pass the handle cu{}Load* returned", call, kind,
         library ? "Library" : "Module");
  if (rt.mode != Mode::Gpu)
    fail(GSHMEM_ERROR_NOT_SUPPORTED, "{}: PE {} is a CPU PE; CUDA {}s need a GPU PE. Fix: run on a machine with an "
         "NVIDIA GPU (or unset GSHMEM_DEVICE=cpu)", call, rt.my_pe, kind);
#if GSHMEM_HAVE_CUDA
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = std::find_if(r.externals.begin(), r.externals.end(),
                         [&](const Registry::External& m) { return m.handle == handle && m.library == library; });
  if (!add) {
    if (it == r.externals.end())
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: this {} was not given to gshmemx_cu{}_init (or was finalized already). "
           "Fix: call gshmemx_cu{}_finalize once per successful gshmemx_cu{}_init", call, kind, kind, kind, kind);
    r.externals.erase(it);
    return;
  }
  // The driver's lookup, through the runtime's entry-point query (libcuda is never linked).
  const char* fn_name = library ? "cuLibraryGetGlobal" : "cuModuleGetGlobal";
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  cudaError_t e = cudaGetDriverEntryPointByVersion(fn_name, &fn, 12000, cudaEnableDefault, &q);
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn)
    fail(GSHMEM_ERROR_NOT_SUPPORTED, "{}: the CUDA driver has no {} ({}). Fix: update the NVIDIA driver", call,
         fn_name, cuda::error_text(e));
  CUdeviceptr dptr = 0;
  size_t bytes = 0;
  CUresult cr = CUDA_ERROR_NOT_FOUND;
  // The per-file copy is `static`: nvcc names it plainly in whole-program builds (some versions mangle it as a
  // C++ internal name); -rdc builds add a per-file hash, which cannot be looked up.
  // cuLibraryGetGlobal answers for the current context: make this PE's GPU current for the lookup.
  {
  const cuda::DeviceScope on_pe_gpu(rt.device);
  for (const char* name : {"gshmemi_dstate", "_ZL14gshmemi_dstate"}) {
    if (library)
      cr = reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t*, CUlibrary, const char*)>(fn)(
          &dptr, &bytes, static_cast<CUlibrary>(handle), name);
    else
      cr = reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t*, CUmodule, const char*)>(fn)(
          &dptr, &bytes, static_cast<CUmodule>(handle), name);
    if (cr != CUDA_ERROR_NOT_FOUND) break;
  }
  }
  if (cr == CUDA_ERROR_NOT_FOUND)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: the {} has no gshmem device state (no symbol gshmemi_dstate): none of its "
         "kernels uses gshmem (<nvshmem.h> / <gshmem/device.cuh>), or it was built with -rdc, which renames each "
         "file's copy. Fix: build the module's source without -rdc (gshmem needs none), e.g. nvcc -cubin "
         "-arch=sm_90 -I<gshmem>/include/gshmem/nvshmem -I<gshmem>/include k.cu", call, kind);
  if (cr != CUDA_SUCCESS)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: {}(\"gshmemi_dstate\") failed with CUresult {}. Fix: pass a {} loaded in "
         "this PE's CUDA context (GPU {})", call, fn_name, static_cast<int>(cr), kind, rt.device);
  if (bytes != sizeof(gshmem_device_state_t))
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: the {}'s gshmemi_dstate has {} bytes, this library's device state {}: "
         "the {} was built against another gshmem version. Fix: rebuild it with this gshmem's headers", call, kind,
         bytes, sizeof(gshmem_device_state_t), kind);
  void* state = reinterpret_cast<void*>(static_cast<std::uintptr_t>(dptr));
  if (it == r.externals.end()) r.externals.push_back(Registry::External{handle, library, state});
  else it->state = state;
  const int rc = copy_to_external(state, r.state);
  if (rc != 0)
    fail(GSHMEM_ERROR_SYSTEM, "{}: copying the device state into the {} failed: {}. Fix: check that no earlier "
         "kernel faulted (run with compute-sanitizer)", call, kind, cuda::error_text(static_cast<cudaError_t>(rc)));
#else
  (void)add;
  fail(GSHMEM_ERROR_NOT_SUPPORTED, "{}: this gshmem was built without GPU support", call);
#endif
}
}  // namespace

}  // namespace gshmem::device_state

using gshmem::device_state::registry;

extern "C" {

GSHMEM_API int gshmemx_device_handle(gshmem_device_state_t* state) {
  return gshmem::api::status_on_error("gshmemx_device_handle", [&] {
    if (!state)
      gshmem::fail(GSHMEM_ERROR_INVALID_VALUE, "gshmemx_device_handle: state is NULL. Fix: pass the address of a "
                   "gshmem_device_state_t to fill");
    gshmem::Runtime& rt = gshmem::Runtime::get("gshmemx_device_handle");
    if (rt.mode != gshmem::Mode::Gpu)
      gshmem::fail(GSHMEM_ERROR_NOT_SUPPORTED, "gshmemx_device_handle: PE {} is a CPU PE, so it has no device "
                   "state. Fix: run on a machine with an NVIDIA GPU (or unset GSHMEM_DEVICE=cpu)", rt.my_pe);
    *state = gshmem::device_state::current();
  });
}

GSHMEM_API void gshmemi_register_device_state_setter(gshmemi_device_state_setter_t setter) {
  if (!setter) return;
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (std::find(r.setters.begin(), r.setters.end(), setter) != r.setters.end()) return;
  r.setters.push_back(setter);
#if GSHMEM_HAVE_CUDA
  // Registered after init (a module loaded later): give it the current state now.
  if (r.state.version != 0 && gshmem::Runtime::current() != nullptr) {
    gshmem::api::fatal_on_error("gshmemi_register_device_state_setter", [&] {
      gshmem::device_state::call_setter(setter, r.state);
    });
  }
#endif
}

GSHMEM_API void gshmemi_unregister_device_state_setter(gshmemi_device_state_setter_t setter) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.setters.erase(std::remove(r.setters.begin(), r.setters.end(), setter), r.setters.end());
}

GSHMEM_API int gshmemx_cumodule_init(struct CUmod_st* module) {
  return gshmem::api::status_on_error("gshmemx_cumodule_init", [&] {
    gshmem::device_state::external(module, false, true, "gshmemx_cumodule_init");
  });
}
GSHMEM_API int gshmemx_cumodule_finalize(struct CUmod_st* module) {
  return gshmem::api::status_on_error("gshmemx_cumodule_finalize", [&] {
    gshmem::device_state::external(module, false, false, "gshmemx_cumodule_finalize");
  });
}
GSHMEM_API int gshmemx_culibrary_init(struct CUlib_st* library) {
  return gshmem::api::status_on_error("gshmemx_culibrary_init", [&] {
    gshmem::device_state::external(library, true, true, "gshmemx_culibrary_init");
  });
}
GSHMEM_API int gshmemx_culibrary_finalize(struct CUlib_st* library) {
  return gshmem::api::status_on_error("gshmemx_culibrary_finalize", [&] {
    gshmem::device_state::external(library, true, false, "gshmemx_culibrary_finalize");
  });
}

}  // extern "C"
