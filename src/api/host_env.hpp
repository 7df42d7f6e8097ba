// The host environment of the algorithms written once over a scope and an environment (gshmem/coll/algorithms.h,
// gshmem/moe/dispatch_combine.h) on a CPU PE: peers through the runtime's mapping of their heaps, C++ atomics and
// fences, waits through Spinner (yields, notices dead peers, ends at GSHMEM_WAIT_TIMEOUT naming the call).
// collectives.cpp extends it with the team flags (CollEnv); moe.cpp uses it as is.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>

#include "runtime/runtime.hpp"
#include "runtime/spin.hpp"

namespace gshmem {
namespace host {

struct HostPeerEnv {
  Runtime& r;
  void release_fence() const { std::atomic_thread_fence(std::memory_order_seq_cst); }
  void store_relaxed(std::uint64_t* p, std::uint64_t v) const { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
  void store_release(std::uint64_t* p, std::uint64_t v) const { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
  // Acquire loads until *f >= epoch.
  void wait_flag(const std::uint64_t* f, std::uint64_t epoch, const char* call) const {
    if (__atomic_load_n(f, __ATOMIC_ACQUIRE) >= epoch) return;
    Spinner spin(r, call);
    while (__atomic_load_n(f, __ATOMIC_ACQUIRE) < epoch) spin.pause();
  }
  template <typename T>
  T* peer(T* p, int pe) const {
    return static_cast<T*>(r.peer(p, pe));
  }
  template <typename Scope>
  void copy(void* d, const void* s, std::size_t bytes) const {
    std::memcpy(d, s, bytes);
  }
  template <typename Scope>  // data peers wrote during the call (the staged collectives' buffers): a plain copy here
  void copy_landed(void* d, const void* s, std::size_t bytes) const {
    std::memcpy(d, s, bytes);
  }
};

}  // namespace host
}  // namespace gshmem
