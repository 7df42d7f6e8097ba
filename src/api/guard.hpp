// The C API boundary: gshmem::Error never crosses into C. Status-returning calls record the message (see
// gshmemx_last_error) and return the status; void calls report the error and end the job, telling the other PEs
// first so they fail at once instead of waiting for this one.
#pragma once
#include <exception>
#include <string>

#include "runtime/error.hpp"

namespace gshmem::api {

void set_last_error(int status, const std::string& message);
const char* last_error();  // this thread's last message from a status-returning call ("" after a success)
[[noreturn]] void fatal(const char* call, int status, const std::string& message) noexcept;

template <typename F>
auto fatal_on_error(const char* call, F&& f) noexcept -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    fatal(call, e.status(), e.what());
  } catch (const std::exception& e) {
    fatal(call, GSHMEM_ERROR_INTERNAL, e.what());
  }
}

// The allocation calls (pointer results): out of memory is reported and gives NULL, as NVSHMEM and OpenSHMEM
// specify, so programs that check for NULL (and fall back, retry smaller or report) work. The heap agrees on the
// failure across PEs and stays usable, so every PE gets NULL. Any other error (arguments that differ between PEs, a
// pointer that is not an allocation, ...) ends the job like fatal_on_error.
void report_out_of_memory(const char* call, const std::string& message) noexcept;
template <typename F>
auto null_on_out_of_memory(const char* call, F&& f) noexcept -> decltype(f()) {
  try {
    auto p = f();
    set_last_error(GSHMEM_SUCCESS, "");  // as status_on_error: the text is the last call's, "" after a success
    return p;
  } catch (const Error& e) {
    if (e.status() != GSHMEM_ERROR_OUT_OF_MEMORY) fatal(call, e.status(), e.what());
    report_out_of_memory(call, e.what());
    return nullptr;
  } catch (const std::exception& e) {
    fatal(call, GSHMEM_ERROR_INTERNAL, e.what());
  }
}

template <typename F>
int status_on_error(const char* call, F&& f) noexcept {
  try {
    f();
    set_last_error(GSHMEM_SUCCESS, "");
    return GSHMEM_SUCCESS;
  } catch (const Error& e) {
    set_last_error(e.status(), e.what());
    return e.status();
  } catch (const std::exception& e) {
    set_last_error(GSHMEM_ERROR_INTERNAL, std::string(call) + ": " + e.what());
    return GSHMEM_ERROR_INTERNAL;
  }
}

}  // namespace gshmem::api
