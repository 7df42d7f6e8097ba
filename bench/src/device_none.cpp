// gshmem-bench without CUDA (CPU-only gshmem builds, the OSHMEM build): no device rows; host memory only.
#include <cstring>
#include <stdexcept>

#include "common.hpp"

namespace bench {
void device_suite(const std::string& suite, const Options&, Rows&) {
  throw std::invalid_argument("suite " + suite + " needs GPU PEs; this gshmem-bench was built without CUDA");
}
void device_coll_suite(const Options&, Rows&) {
  throw std::invalid_argument("suite coll on GPU PEs needs a gshmem-bench built with CUDA");
}
int device_count() { return 0; }
void device_select(int) {}
void device_warm_up_context() {}
int gpus_in_job() { return 0; }
std::string device_name(int, int) { return {}; }
void device_fill(void* p, int byte, std::uint64_t bytes, bool gpu) {
  if (gpu) throw std::logic_error("device_fill on a GPU PE in a build without CUDA");
  std::memset(p, byte, bytes);
}
bool device_rows_available() { return false; }
}  // namespace bench
