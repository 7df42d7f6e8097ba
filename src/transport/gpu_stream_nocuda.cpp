// CPU-only builds: the stream-ordered compat entry points of transport/gpu.hpp (gpu_stream_wait.cu with CUDA).
// The host layer refuses stream calls on CPU PEs before it gets here; these only say so if reached anyway.
#include "runtime/error.hpp"
#include "transport/gpu.hpp"

namespace gshmem::gpu {
namespace {
[[noreturn]] void unavailable(const char* call) {
  fail(GSHMEM_ERROR_NOT_SUPPORTED, "{}: this gshmem was built without GPU support (no CUDA compiler at build time), "
       "and stream-ordered calls need GPU PEs. Fix: rebuild with the CUDA toolkit installed (nvcc on PATH), or use "
       "the blocking host calls on CPU PEs", call);
}
}  // namespace

void copy_strided_on_stream(Context*, void*, const void*, std::size_t, std::ptrdiff_t, std::ptrdiff_t, std::size_t,
                            gshmem_stream_t, const char* call) {
  unavailable(call);
}
void synchronize_stream(Context*, gshmem_stream_t, const char* call) { unavailable(call); }
void refuse_capture(Context*, gshmem_stream_t, const char* call) { unavailable(call); }
bool device_accessible(Context*, const void*) { return false; }
void wait_all_on_stream(Context*, const void*, std::size_t, const int*, WaitType, int, std::uint64_t, const void*,
                        gshmem_stream_t, const char* call) {
  unavailable(call);
}

void collective_on_stream(Context*, CollKind, const gshmem_device_state_t&, const TeamValue&, int, void*, const void*,
                          const coll::Exchange&, int, gshmem_stream_t, const char* call, void*) {
  unavailable(call);
}
void reduction_on_stream(Context*, coll::ReduceOp, ReduceType, bool, const gshmem_device_state_t&, const TeamValue&,
                         int, void*, const void*, std::size_t, gshmem_stream_t, const char* call, void*) {
  unavailable(call);
}

void moe_dispatch_on_stream(Context*, const gshmem_device_state_t&, const moe::Plan&, void*, std::int32_t*, void*,
                            void*, const void*, const void*, const std::uint32_t*, std::size_t, const std::uint32_t*,
                            gshmem_stream_t, bool, const char* call) {
  unavailable(call);
}
void moe_combine_on_stream(Context*, const gshmem_device_state_t&, const moe::Plan&, void*, void*, ReduceType,
                           const std::uint32_t*, const float*, const void*, ReduceType, std::size_t,
                           const std::uint32_t*, gshmem_stream_t, bool, const char* call) {
  unavailable(call);
}

}  // namespace gshmem::gpu
