#include "api/guard.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <thread>

#include "runtime/log.hpp"
#include "runtime/runtime.hpp"

namespace gshmem::api {
namespace {
thread_local std::string t_last_error;
}

void set_last_error(int status, const std::string& message) {
  (void)status;
  t_last_error = message;
}

const char* last_error() { return t_last_error.c_str(); }

namespace {
// Messages from the library already start with the call's name; add it where they do not.
std::string named(const char* call, const std::string& message) {
  return message.rfind(call, 0) == 0 ? message : std::string(call) + ": " + message;
}
}  // namespace

void report_out_of_memory(const char* call, const std::string& message) noexcept {
  const std::string text = named(call, message);
  log::write(log::Level::Error, fmt::format("{} (status: {}); {} returns NULL", text,
                                            status_name(GSHMEM_ERROR_OUT_OF_MEMORY), call));
  set_last_error(GSHMEM_ERROR_OUT_OF_MEMORY, text);
}

void fatal(const char* call, int status, const std::string& message) noexcept {
  const std::string text = named(call, message);
  log::write(log::Level::Error, fmt::format("{} (status: {})", text, status_name(status)));
  if (Runtime* rt = Runtime::current()) {
    if (rt->boot) {
      rt->boot->abort(text);
      // This process may host the rendezvous (rank 0 under torchrun, MPI or a unique id): give its server thread
      // a moment to deliver the replies and abort notices the other PEs are waiting for before we vanish.
      if (rt->n_pes > 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }
  std::fflush(nullptr);
  std::_Exit(status == GSHMEM_ERROR_PEER_FAILED ? 3 : 2);
}

}  // namespace gshmem::api
