// Spinner: the one way host code waits for memory another PE writes. Spins briefly (low latency when cores are
// free; Runtime::wait_spins pauses, fewer where PEs outnumber cores), then yields, and every few hundred steps asks the runtime whether a PE died
// or GSHMEM_WAIT_TIMEOUT passed, so no wait hangs forever. Such an error is thrown from the next pause(), after
// the caller checked its condition once more: a wait that a PE satisfied just before it died or left returns.
#pragma once
#include <sched.h>

#include <cstdint>
#include <exception>

#include "runtime/error.hpp"
#include "runtime/runtime.hpp"

namespace gshmem {

class Spinner {
 public:
  Spinner(Runtime& rt, const char* what) : rt_(rt), what_(what) {}
  void pause() {
    if (failed_) std::rethrow_exception(failed_);
    ++iter_;
    if (iter_ < rt_.wait_spins) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
      return;
    }
    if (start_ == 0) start_ = now_ns();
    sched_yield();
    if ((iter_ & 255) == 0) {
      try {
        rt_.poll_waiting(start_, what_);
      } catch (const Error&) {
        failed_ = std::current_exception();
      }
    }
  }

 private:
  Runtime& rt_;
  const char* what_;
  std::uint64_t iter_ = 0;
  std::uint64_t start_ = 0;
  std::exception_ptr failed_;  // thrown by the next pause()
};

}  // namespace gshmem
