#include "api/guard.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

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

void fatal(const char* call, int status, const std::string& message) noexcept {
  // Messages from the library already start with the call's name; add it where they do not.
  std::string text = message.rfind(call, 0) == 0 ? message : std::string(call) + ": " + message;
  log::write(log::Level::Warn, fmt::format("fatal error ({}): {}", status_name(status), text));
  if (Runtime* rt = Runtime::current()) {
    if (rt->boot) rt->boot->abort(text);
  }
  std::fflush(nullptr);
  std::_Exit(status == GSHMEM_ERROR_PEER_FAILED ? 3 : 2);
}

}  // namespace gshmem::api
