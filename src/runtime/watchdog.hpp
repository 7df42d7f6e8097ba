// Watchdog: a thread per PE that notices a dead peer even while this PE is inside CUDA or its own code, not in a
// gshmem wait. It polls the bootstrap every 50 ms; on a peer failure it stops the library's spinning kernels (the
// GPU context's peer-failure flag) and, if this PE has not reported the failure through a gshmem call within
// GSHMEM_PEER_FAILURE_EXIT seconds, ends the process with status 3 and the reason on stderr. A PE that left without
// gshmem_finalize stops the kernels too, but does not end this PE (it may end without finalize as well).
#pragma once
#include <condition_variable>
#include <mutex>
#include <thread>

namespace gshmem {

class Runtime;

class Watchdog {
 public:
  explicit Watchdog(Runtime& rt);
  ~Watchdog();  // stops and joins
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void loop();
  Runtime& rt_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gshmem
