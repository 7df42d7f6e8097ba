#include "runtime/error.hpp"

#include <cstring>

namespace gshmem {

Error::~Error() = default;

std::string errno_text(const char* what, int err) { return fmt::format("{}: {}", what, std::strerror(err)); }

const char* status_name(int status) {
  switch (status) {
    case GSHMEM_SUCCESS: return "success";
    case GSHMEM_ERROR_INVALID_VALUE: return "invalid value";
    case GSHMEM_ERROR_NOT_INITIALIZED: return "not initialized";
    case GSHMEM_ERROR_OUT_OF_MEMORY: return "out of memory";
    case GSHMEM_ERROR_PEER_FAILED: return "peer failed";
    case GSHMEM_ERROR_TIMEOUT: return "timeout";
    case GSHMEM_ERROR_NOT_SUPPORTED: return "not supported";
    case GSHMEM_ERROR_SYSTEM: return "system error";
    case GSHMEM_ERROR_MISMATCH: return "collective mismatch";
    case GSHMEM_ERROR_INTERNAL: return "internal error";
    default: return "unknown status";
  }
}

}  // namespace gshmem
