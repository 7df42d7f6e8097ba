// Stream-ordered typed waits (gshmemx_<T>_wait_until[_all[_vector]]_on_stream), strided copies and reads on the
// user's stream, for GPU PEs. Declared at the end of transport/gpu.hpp. The wait kernel is bounded the way the
// library's other stream kernels are: GSHMEM_WAIT_TIMEOUT, and an immediate stop when the watchdog reports a dead
// peer through the mapped peer-failure flag.
#include <cuda_runtime.h>

#include <cstring>
#include <cuda/atomic>
#include <string>

#include "gshmem/device/impl/common.cuh"
#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "transport/cuda_driver.hpp"
#include "transport/gpu.hpp"
#include "transport/stream_kernel.cuh"

namespace gshmem::gpu {
namespace {

void check(cudaError_t e, const char* call, const char* what) {
  if (e == cudaSuccess) return;
  fail(GSHMEM_ERROR_SYSTEM, "{}: {} failed: {}. Fix: {}", call, what, cuda::error_text(e),
       e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure
           ? "a kernel on this GPU faulted earlier (often a bad pointer, or a wait that timed out); run with "
             "compute-sanitizer to find it"
           : "check the arguments (a valid stream of this PE's GPU) and that the GPU is healthy (nvidia-smi)");
}

// Kernel arguments: plain data, the call's name copied in so device messages can name it.
struct WaitArgs {
  const void* ivars;
  const int* status;   // nullptr: every element
  const void* values;  // nullptr: compare with `value`
  unsigned long long value;
  unsigned long long n;
  unsigned long long timeout_ns;
  const volatile int* abort_flag;
  int cmp;
  int pad;
  char call[96];
};
static_assert(sizeof(WaitArgs) == 160, "WaitArgs is a kernel argument: keep its layout fixed");

// The device API's own primitives: acquire load at system scope (2/4/8 bytes), comparison, global timer.
using dev::detail::compare;
using dev::detail::globaltimer;
using dev::detail::load_acquire;

template <typename T>
__global__ void typed_wait_kernel(WaitArgs a) {
  stream_kernel_entry();
  const T* ivars = static_cast<const T*>(a.ivars);
  const T* values = static_cast<const T*>(a.values);
  const unsigned long long start = globaltimer();
  unsigned iter = 0;
  for (unsigned long long i = 0; i < a.n; ++i) {
    if (a.status && a.status[i] != 0) continue;
    const T want = values ? values[i] : static_cast<T>(a.value);
    while (!compare(load_acquire(&ivars[i]), a.cmp, want)) {
      if ((++iter & 1023) == 0 && *a.abort_flag != 0) {
        printf("gshmem: %s: a peer PE died while this stream waited for element %llu at %p; aborting the kernel. "
               "Fix: see the dead PE's output for its cause; this job is ending\n",
               a.call, i, static_cast<const void*>(&ivars[i]));
        __trap();
      }
      if (a.timeout_ns && globaltimer() - start > a.timeout_ns) {
        printf(
            "gshmem: %s: element %llu at %p never satisfied comparison %d in %.0f s (GSHMEM_WAIT_TIMEOUT); "
            "aborting the kernel. Fix: check that the peers write the values this PE waits for, or raise "
            "GSHMEM_WAIT_TIMEOUT (0 = no limit)\n",
            a.call, i, static_cast<const void*>(&ivars[i]), a.cmp, a.timeout_ns / 1e9);
        __trap();
      }
      __nanosleep(64);
    }
  }
}

// A flag that is never set, for contexts without one (the kernel always reads it).
__device__ int g_never_failed = 0;

}  // namespace

void copy_strided_on_stream(Context* ctx, void* dst, const void* src, std::size_t elem, std::ptrdiff_t dst_stride,
                            std::ptrdiff_t src_stride, std::size_t n, gshmem_stream_t s, const char* call) {
  const cuda::DeviceScope bind(device_of(ctx));
  check(cudaMemcpy2DAsync(dst, static_cast<std::size_t>(dst_stride) * elem, src,
                          static_cast<std::size_t>(src_stride) * elem, elem, n, cudaMemcpyDefault,
                          reinterpret_cast<cudaStream_t>(s)),
        call, "cudaMemcpy2DAsync (strided transfer on the stream)");
}

void synchronize_stream(Context* ctx, gshmem_stream_t s, const char* call) {
  const cuda::DeviceScope bind(device_of(ctx));
  refuse_capture(ctx, s, call);
  check(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(s)), call, "cudaStreamSynchronize");
}

void refuse_capture(Context* ctx, gshmem_stream_t s, const char* call) {
  const cuda::DeviceScope bind(device_of(ctx));
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(reinterpret_cast<cudaStream_t>(s), &st), call, "cudaStreamIsCapturing");
  if (st != cudaStreamCaptureStatusNone)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "{}: the stream is being captured into a CUDA graph, but this call returns a "
         "value and so must wait for the stream. Fix: call it outside the capture, or capture "
         "gshmemx_getmem_on_stream into a device buffer instead",
         call);
}

bool device_accessible(Context* ctx, const void* p) {
  const cuda::DeviceScope bind(device_of(ctx));
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (attr.type != cudaMemoryTypeUnregistered) return true;
  int dev = 0, pageable = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return pageable != 0;
}

void wait_all_on_stream(Context* ctx, const void* ivars, std::size_t n, const int* status, WaitType type, int cmp,
                        std::uint64_t value, const void* values, gshmem_stream_t s, const char* call) {
  const cuda::DeviceScope bind(device_of(ctx));
  if (n == 0) return;
  WaitArgs a{};
  a.ivars = ivars;
  a.status = status;
  a.values = values;
  a.value = value;
  a.n = n;
  const double t = config::get().wait_timeout;
  a.timeout_ns = t > 0 ? static_cast<unsigned long long>(t * 1e9) : 0;
  void* flag = peer_failure_flag(ctx);
  if (!flag) check(cudaGetSymbolAddress(&flag, g_never_failed), call, "cudaGetSymbolAddress");
  a.abort_flag = static_cast<const volatile int*>(flag);
  a.cmp = cmp;
  std::strncpy(a.call, call, sizeof a.call - 1);
  auto stream = reinterpret_cast<cudaStream_t>(s);
  const bool overlap = overlap_launch(ctx);
  cudaError_t e = cudaSuccess;
  switch (type) {
    case WaitType::I16:
      e = launch_stream_kernel(overlap, typed_wait_kernel<short>, 1, stream, a);
      break;
    case WaitType::U16:
      e = launch_stream_kernel(overlap, typed_wait_kernel<unsigned short>, 1, stream, a);
      break;
    case WaitType::I32:
      e = launch_stream_kernel(overlap, typed_wait_kernel<int>, 1, stream, a);
      break;
    case WaitType::U32:
      e = launch_stream_kernel(overlap, typed_wait_kernel<unsigned int>, 1, stream, a);
      break;
    case WaitType::I64:
      e = launch_stream_kernel(overlap, typed_wait_kernel<long long>, 1, stream, a);
      break;
    case WaitType::U64:
      e = launch_stream_kernel(overlap, typed_wait_kernel<unsigned long long>, 1, stream, a);
      break;
  }
  check(e, call, "launching the stream wait kernel");
}

}  // namespace gshmem::gpu
