// The one error type is gshmem::Error (public: include/gshmem/gshmem.hpp). Internal code throws it with a cause
// and a fix through fail(); the C API boundary (api/guard.hpp) turns it into a status or a fatal report.
#pragma once
#include <fmt/format.h>

#include <string>

#include "gshmem/gshmem.hpp"

namespace gshmem {

// fail(status, "call: cause ... Fix: ...", args...) throws Error with a formatted message.
template <typename... Args>
[[noreturn]] void fail(int status, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(status, fmt::format(f, std::forward<Args>(args)...));
}

// Message for errno-style failures: "what: strerror(err)".
std::string errno_text(const char* what, int err);

const char* status_name(int status);

}  // namespace gshmem
