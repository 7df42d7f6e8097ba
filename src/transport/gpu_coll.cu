// GPU PEs: the collectives' stream kernels. One CTA runs the block-scope form of the one implementation of each
// collective (gshmem/coll/algorithms.h) with the device API's environment (device/impl/coll.cuh), so the stream
// forms, the blocking host forms (this kernel on the context's internal stream, waited for) and the device API
// share every line of the algorithm.
#include <cuda_runtime.h>

#include "gshmem/device/impl/coll.cuh"
#include "runtime/error.hpp"
#include "transport/cuda_driver.hpp"
#include "transport/gpu.hpp"
#include "transport/stream_kernel.cuh"

namespace gshmem::gpu {
namespace {

// Threads of the collectives' CTA: enough lanes for a flat sync of 32 members and for copies.
constexpr unsigned kCollThreads = 512;

__global__ void __launch_bounds__(kCollThreads) coll_kernel(gshmem_device_state_t h, TeamValue t, int slot, int kind,
                                                            void* dest, const void* src, std::size_t bytes, int root,
                                                            const volatile int* abort_flag) {
  stream_kernel_entry();
  // Named in the kernel's timeout and peer-failure messages (device string literals).
  const char* call = kind == static_cast<int>(CollKind::Broadcast)  ? "gshmem broadcast (stream kernel)"
                     : kind == static_cast<int>(CollKind::Fcollect) ? "gshmem fcollect (stream kernel)"
                                                                    : "gshmem alltoall (stream kernel)";
  dev::detail::CollEnv env{h, abort_flag};
  switch (static_cast<CollKind>(kind)) {
    case CollKind::Broadcast:
      coll::broadcast<dev::Block>(env, t, slot, dest, src, bytes, root, call);
      break;
    case CollKind::Fcollect:
      coll::fcollect<dev::Block>(env, t, slot, dest, src, bytes, call);
      break;
    case CollKind::Alltoall:
      coll::alltoall<dev::Block>(env, t, slot, dest, src, bytes, call);
      break;
  }
}

}  // namespace

void collective_on_stream(Context* c, CollKind kind, const gshmem_device_state_t& h, const TeamValue& t, int slot,
                          void* dest, const void* src, std::size_t bytes, int root, gshmem_stream_t s,
                          const char* call) {
  const cuda::DeviceScope bind(device_of(c));
  cudaStream_t st = s ? reinterpret_cast<cudaStream_t>(s) : reinterpret_cast<cudaStream_t>(internal_stream(c));
  const cudaError_t e = launch_stream_kernel(overlap_launch(c), coll_kernel, kCollThreads, st, h, t, slot,
                                             static_cast<int>(kind), dest, src, bytes, root,
                                             static_cast<const volatile int*>(peer_failure_flag(c)));
  if (e != cudaSuccess)
    fail(GSHMEM_ERROR_SYSTEM, "{}: launching the collective kernel failed: {}. Fix: check that the GPU is healthy "
         "(nvidia-smi) and that no earlier kernel faulted", call, cudaGetErrorString(e));
  if (!s) {
    const cudaError_t w = cudaStreamSynchronize(st);
    if (w != cudaSuccess)
      fail(GSHMEM_ERROR_SYSTEM, "{}: the collective kernel failed: {}. Fix: a trap message above names the cause "
           "(a member that never called, GSHMEM_WAIT_TIMEOUT, or a dead peer); run with compute-sanitizer for a "
           "fault", call, cudaGetErrorString(w));
  }
}

}  // namespace gshmem::gpu
