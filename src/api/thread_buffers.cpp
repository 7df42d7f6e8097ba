// gshmem::host: thread levels (gshmem_init_thread / gshmem_query_thread) and the table of registered local
// buffers (gshmemx_buffer_register and friends).
//
// Thread level: gshmem's host calls may come from any thread, one at a time (GSHMEM_THREAD_SERIALIZED). Not
// MULTIPLE: on GPU PEs, host atomics of one PE return their result through one pinned word and one stream
// (transport/gpu.cu), and host barriers of one team share one epoch; concurrent calls would mix them up.
//
// Registered buffers: GPU PEs reach peers over NVLink (loads, stores, copy engines on mapped memory) and CPU PEs
// through shared memory, so a local buffer needs no registration to be the source or destination of a put or get.
// The table exists so that programs written for NVSHMEM's remote transports keep working and keep their pairing
// honest: overlapping registrations, registrations inside the symmetric heap, and unregistering something that
// was never registered are errors with a message, as they are bugs in the program.
#include "api/thread_buffers.hpp"

#include <map>
#include <mutex>

#include "gshmem/gshmem.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime.hpp"

namespace gshmem::host {
namespace {

std::mutex g_mutex;
int g_level = GSHMEM_THREAD_SERIALIZED;           // what the current (or next) init provides
std::map<std::uintptr_t, std::size_t> g_buffers;  // start -> length, disjoint

const char* level_name(int l) {
  switch (l) {
    case GSHMEM_THREAD_SINGLE:
      return "GSHMEM_THREAD_SINGLE";
    case GSHMEM_THREAD_FUNNELED:
      return "GSHMEM_THREAD_FUNNELED";
    case GSHMEM_THREAD_SERIALIZED:
      return "GSHMEM_THREAD_SERIALIZED";
    case GSHMEM_THREAD_MULTIPLE:
      return "GSHMEM_THREAD_MULTIPLE";
  }
  return "?";
}

}  // namespace

int thread_level() {
  Runtime::get("gshmem_query_thread");
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_level;
}

void init_thread(int requested, int* provided, int major, int minor, int patch) {
  const char* call = "gshmem_init_thread";
  if (requested < GSHMEM_THREAD_SINGLE || requested > GSHMEM_THREAD_MULTIPLE)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "{}: requested={} is not a thread level. Fix: pass GSHMEM_THREAD_SINGLE, "
         "_FUNNELED, _SERIALIZED or _MULTIPLE (NVSHMEM_THREAD_*)",
         call, requested);
  const int level = requested < GSHMEM_THREAD_SERIALIZED ? requested : GSHMEM_THREAD_SERIALIZED;
  init(0, nullptr, major, minor, patch);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_level = level;
  }
  if (provided) *provided = level;
  if (requested > level)
    log::info("{}: {} requested, {} provided (host calls from any thread, one at a time)", call, level_name(requested),
              level_name(level));
}

void reset_thread_level() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_level = GSHMEM_THREAD_SERIALIZED;
}

void buffer_register(void* addr, std::size_t length) {
  const char* call = "gshmemx_buffer_register";
  Runtime& r = Runtime::get(call);
  if (!addr || !length)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "{}: addr={} length={}: both must be non-zero. Fix: pass the start and size in "
         "bytes of a local buffer",
         call, addr, length);
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  if (length > UINTPTR_MAX - a)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: addr={} + length={} wraps around the address space. Fix: pass the "
         "start and size in bytes of a local buffer", call, addr, length);
  const auto heap_lo = reinterpret_cast<std::uintptr_t>(r.heap->base());
  const auto heap_hi = heap_lo + r.heap->usage().max_size;
  if (a < heap_hi && a + length > heap_lo)  // the range overlaps the heap's slot (not only at its ends)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "{}: [{}, +{}) lies in the symmetric heap, which every put and get can use "
         "already. Fix: register only memory from outside the heap (cudaMalloc, host memory), or do not register",
         call, addr, length);
  std::lock_guard<std::mutex> lock(g_mutex);
  auto next = g_buffers.lower_bound(a);
  auto overlap = [&](std::map<std::uintptr_t, std::size_t>::const_iterator it) {
    return it != g_buffers.end() && it->first < a + length && a < it->first + it->second;
  };
  auto hit = overlap(next)                                           ? next
             : next != g_buffers.begin() && overlap(std::prev(next)) ? std::prev(next)
                                                                     : g_buffers.end();
  if (hit != g_buffers.end())
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "{}: [{}, +{}) overlaps the registered buffer [{:#x}, +{}). Fix: unregister "
         "that one first (gshmemx_buffer_unregister), or register each buffer once",
         call, addr, length, hit->first, hit->second);
  g_buffers.emplace(a, length);
}

void buffer_unregister(void* addr) {
  const char* call = "gshmemx_buffer_unregister";
  Runtime::get(call);
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_buffers.find(reinterpret_cast<std::uintptr_t>(addr));
  if (it == g_buffers.end())
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "{}: {} is not the start of a registered buffer ({} registered). Fix: pass the "
         "address given to gshmemx_buffer_register, once",
         call, addr, g_buffers.size());
  g_buffers.erase(it);
}

void buffer_unregister_all() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_buffers.clear();
}

}  // namespace gshmem::host
