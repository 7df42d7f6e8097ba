// CPU-only builds (no nvcc at build time): GPU PEs are unavailable and every GPU entry point says so.
#include "runtime/error.hpp"
#include "transport/gpu.hpp"

namespace gshmem::gpu {
namespace {
[[noreturn]] void unavailable() {
  fail(GSHMEM_ERROR_NOT_SUPPORTED, "this gshmem was built without GPU support (no CUDA compiler at build time). "
       "Fix: rebuild with the CUDA toolkit installed (nvcc on PATH) to run GPU PEs");
}
}  // namespace

bool available(std::string* why) {
  if (why) *why = "this gshmem was built without GPU support (no nvcc at build time)";
  return false;
}
int device_count() { return 0; }
int select_device(int, int, char*) { unavailable(); }
Context* create_context(Runtime&) { unavailable(); }
void destroy_context(Context*) noexcept {}
void copy(Context*, void*, const void*, std::size_t, bool) { unavailable(); }
void load(Context*, void*, const void*, std::size_t) { unavailable(); }
void signal_nbi(Context*, std::uint64_t*, std::uint64_t, int) { unavailable(); }
void copy_strided(Context*, void*, const void*, std::size_t, std::ptrdiff_t, std::ptrdiff_t, std::size_t, bool) {
  unavailable();
}
void memset_zero(Context*, void*, std::size_t) { unavailable(); }
void quiet(Context*) { unavailable(); }
void signal_peer_failure(Context*) noexcept {}
int* peer_failure_flag(Context*) { return nullptr; }
int device_of(Context*) { return -1; }
void synchronize_device(Context*, const char*) { unavailable(); }
void reset_team_slot(Context*, int) { unavailable(); }
std::uint64_t amo(Context*, void*, int, AmoOp, std::uint64_t, std::uint64_t) { unavailable(); }
void copy_on_stream(Context*, void*, const void*, std::size_t, gshmem_stream_t) { unavailable(); }
void store_on_stream(Context*, void*, std::uint64_t, int, gshmem_stream_t) { unavailable(); }
void signal_on_stream(Context*, std::uint64_t*, std::uint64_t, int, gshmem_stream_t) { unavailable(); }
void put_signal_on_stream(Context*, void*, const void*, std::size_t, bool, std::uint64_t*, std::uint64_t, int,
                          gshmem_stream_t) {
  unavailable();
}
void wait_on_stream(Context*, std::uint64_t*, int, std::uint64_t, gshmem_stream_t) { unavailable(); }
void quiet_on_stream(Context*, gshmem_stream_t) { unavailable(); }
void barrier_on_stream(Context*, int, const TeamValue&, gshmem_stream_t) { unavailable(); }
}  // namespace gshmem::gpu
