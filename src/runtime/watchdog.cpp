#include "runtime/watchdog.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime.hpp"
#include "transport/gpu.hpp"

namespace gshmem {

Watchdog::Watchdog(Runtime& rt) : rt_(rt), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (cv_.wait_for(lock, std::chrono::milliseconds(50), [this] { return stop_; })) return;
    try {
      lock.unlock();
      rt_.boot->check_health();
      lock.lock();
      continue;
    } catch (const Error& e) {
      if (!lock.owns_lock()) lock.lock();
      if (stop_) return;
      // The library's kernels that wait (for that PE, maybe) stop either way.
      if (rt_.gpu) gpu::signal_peer_failure(rt_.gpu);
      if (rt_.boot->failure_is_departure()) {
        // A PE ended without finalize: an error for whoever waits for it (the waits report it), but this PE may
        // be busy elsewhere and end without finalize as well, so it is not ended here.
        log::info("watchdog: {}; this PE's next gshmem wait reports it", e.what());
        return;
      }
      const double grace = config::get().peer_failure_exit;
      log::info("watchdog: {}; waiting up to {} s for this PE to report it", e.what(), grace);
      if (grace <= 0) return;
      if (cv_.wait_for(lock, std::chrono::duration<double>(grace), [this] { return stop_; })) return;
      log::write(log::Level::Error,
                 fmt::format("{} (peer failed). This PE reached no gshmem call that could report it within {} s "
                             "(GSHMEM_PEER_FAILURE_EXIT), so the watchdog ends it", e.what(), grace));
      std::fflush(nullptr);
      std::_Exit(3);
    }
  }
}

}  // namespace gshmem
