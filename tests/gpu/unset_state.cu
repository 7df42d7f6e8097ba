// A kernel that uses gshmem before gshmem_init must stop with the library's message, not fault or hang: the device
// state is then all zeros, and each kind of call checks it on its slow path (the peer-table translation for RMA,
// atomics and signals; the spin of a wait that has to wait; the team load of a barrier; the queries). One case per
// process (a trapped kernel leaves the CUDA context unusable), chosen by argv[1]; CTest runs each and requires the
// message in the output (PASS_REGULAR_EXPRESSION). Exit 0: the kernel failed as it should; 1: it did not; 77: no GPU.
#include <cuda_runtime.h>
#include <gshmem/device.cuh>

#include <cstdio>
#include <cstring>

namespace {

__global__ void case_kernel(int which, int* buf, uint64_t* sig, int* out) {
  switch (which) {
    case 0: gshmem_int_p(buf, 1, 1); break;                                         // RMA
    case 1: *out = gshmem_int_atomic_fetch_add(buf, 1, 1); break;                   // atomic
    case 2: gshmemx_signal_op(sig, 1, GSHMEM_SIGNAL_SET, 1); break;                 // signal
    case 3: *out = static_cast<int>(gshmem_signal_wait_until(sig, GSHMEM_CMP_EQ, 1)); break;  // wait that waits
    case 4: gshmem_barrier_all(); break;                                            // barrier
    case 5: *out = gshmem_n_pes(); break;                                           // query
    default: break;
  }
}

const char* const kCases[] = {"p", "fetch_add", "signal_op", "signal_wait_until", "barrier_all", "n_pes"};

}  // namespace

int main(int argc, char** argv) {
  int which = -1;
  for (int i = 0; argc > 1 && i < static_cast<int>(sizeof kCases / sizeof kCases[0]); ++i)
    if (std::strcmp(argv[1], kCases[i]) == 0) which = i;
  if (which < 0) {
    std::fprintf(stderr, "usage: unset_state p|fetch_add|signal_op|signal_wait_until|barrier_all|n_pes\n");
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("unset_state: no usable GPU, skipped\n");
    return 77;
  }
  // Device memory that is not the (absent) symmetric heap: what a program might pass by mistake.
  int* buf = nullptr;
  uint64_t* sig = nullptr;
  int* out = nullptr;
  if (cudaMalloc(&buf, 64) != cudaSuccess || cudaMalloc(&sig, 8) != cudaSuccess || cudaMalloc(&out, 4) != cudaSuccess ||
      cudaMemset(sig, 0, 8) != cudaSuccess) {
    std::fprintf(stderr, "unset_state: cudaMalloc/cudaMemset failed\n");
    return 1;
  }
  case_kernel<<<1, 1>>>(which, buf, sig, out);
  const cudaError_t launch = cudaGetLastError();
  const cudaError_t done = cudaDeviceSynchronize();
  std::fflush(stdout);
  if (launch == cudaSuccess && done == cudaSuccess) {
    std::fprintf(stderr, "unset_state %s: FAIL: the kernel finished although gshmem_init was never called\n",
                 kCases[which]);
    return 1;
  }
  std::printf("unset_state %s: the kernel stopped (%s), as it should\n", kCases[which],
              cudaGetErrorName(done != cudaSuccess ? done : launch));
  return 0;
}
