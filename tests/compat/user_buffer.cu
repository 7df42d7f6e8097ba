// A buffer the program allocates itself with the CUDA driver's VMM API (cuMemCreate with a POSIX-fd handle type,
// cuMemAddressReserve, cuMemMap, cuMemSetAccess), the same size on every PE, made symmetric with
// nvshmemx_buffer_register_symmetric, as NVSHMEM 3.x programs do, then used like heap memory: cudaMemset on the
// returned address, a device block put to the right neighbour, nvshmemx_putmem_signal_on_stream +
// nvshmemx_signal_wait_until_on_stream, nvshmemx_barrier_all_on_stream; unregistered before finalize, the user's
// allocation released after it. Only <nvshmem.h> / <nvshmemx.h> are included: the driver API comes with them.
// The buffer is 512 MiB, the size NVSHMEM's own user-buffer example registers. Fresh random data, poisoned
// destinations, exact comparison.
#include "compat_util.h"

#define COMPAT_CU(call)                                                                                       \
  do {                                                                                                        \
    CUresult r_ = (call);                                                                                     \
    if (r_ != CUDA_SUCCESS) {                                                                                 \
      const char* s_ = nullptr;                                                                               \
      if (cuGetErrorName(r_, &s_) != CUDA_SUCCESS) s_ = "?";                                                   \
      std::fprintf(stderr, "[PE %d] user_buffer: %s failed: %s (%s:%d)\n", compat::my_pe_cache(), #call, s_,   \
                   __FILE__, __LINE__);                                                                       \
      std::exit(1);                                                                                           \
    }                                                                                                         \
  } while (0)

constexpr size_t kBytes = size_t(512) << 20;
constexpr int kInts = 1 << 16;  // per region

__global__ void fill(int* p, int n, uint64_t seed, int pe, int stream) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    p[i] = static_cast<int>(compat::mix(seed, 8 * pe + stream, i));
}

__global__ void block_put(int* dst, const int* src, int n, int peer) {
  nvshmemx_int_put_block(dst, src, n, peer);
}

int main(int argc, char** argv) {
  const int mype = compat::init(&argc, &argv, "user_buffer");
  const int npes = nvshmem_n_pes();
  const int right = (mype + 1) % npes, left = (mype + npes - 1) % npes;
  const uint64_t seed = compat::shared_seed();
  int dev = -1;
  COMPAT_CUDA(cudaGetDevice(&dev));
  COMPAT_CUDA(cudaFree(nullptr));  // the runtime's primary context is current for the driver calls below

  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t gran = 0;
  COMPAT_CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  if (kBytes % gran != 0) compat::fail("512 MiB is not a multiple of the granularity %zu", gran);
  CUmemGenericAllocationHandle handle;
  CUdeviceptr base = 0;
  COMPAT_CU(cuMemCreate(&handle, kBytes, &prop, 0));
  COMPAT_CU(cuMemAddressReserve(&base, kBytes, 0, 0, 0));
  COMPAT_CU(cuMemMap(base, kBytes, 0, handle, 0));
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  COMPAT_CU(cuMemSetAccess(base, kBytes, &access, 1));

  void* sym = nvshmemx_buffer_register_symmetric(reinterpret_cast<void*>(base), kBytes, 0);
  if (sym == nullptr) {
    compat::fail("nvshmemx_buffer_register_symmetric returned NULL");
    return compat::finish();
  }
  // regions: [0] source, [1] block-put destination, [2] put-with-signal destination; the signal word at the end
  int* src = static_cast<int*>(sym);
  int* dst_put = src + kInts;
  int* dst_sig = src + 2 * kInts;
  uint64_t* sig = reinterpret_cast<uint64_t*>(static_cast<char*>(sym) + kBytes - sizeof(uint64_t));
  cudaStream_t stream;
  COMPAT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  COMPAT_CUDA(cudaMemset(sym, 0xA5, kBytes));  // poison everything, the signal word to 0 below
  COMPAT_CUDA(cudaMemset(sig, 0, sizeof *sig));
  COMPAT_CUDA(cudaDeviceSynchronize());  // the memsets ran on the legacy stream; `stream` does not wait for it
  fill<<<64, 256, 0, stream>>>(src, kInts, seed, mype, 0);
  COMPAT_CUDA(cudaGetLastError());
  COMPAT_CUDA(cudaStreamSynchronize(stream));
  nvshmemx_barrier_all_on_stream(stream);

  block_put<<<1, 256, 0, stream>>>(dst_put, src, kInts, right);
  COMPAT_CUDA(cudaGetLastError());
  nvshmemx_putmem_signal_on_stream(dst_sig, src, kInts * sizeof(int), sig, 1 + mype, NVSHMEM_SIGNAL_SET, right,
                                   stream);
  nvshmemx_signal_wait_until_on_stream(sig, NVSHMEM_CMP_EQ, 1 + left, stream);
  nvshmemx_barrier_all_on_stream(stream);
  COMPAT_CUDA(cudaStreamSynchronize(stream));

  int* host = static_cast<int*>(std::malloc(2 * kInts * sizeof(int)));
  COMPAT_CUDA(cudaMemcpy(host, dst_put, 2 * kInts * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < kInts; ++i) {
      const int want = static_cast<int>(compat::mix(seed, 8 * left, i));
      if (host[r * kInts + i] != want && bad++ < 5)
        compat::fail("%s[%d] = %d, expected %d (from PE %d)", r ? "put_signal" : "block_put", i,
                     host[r * kInts + i], want, left);
    }
  uint64_t sig_host = 0;
  COMPAT_CUDA(cudaMemcpy(&sig_host, sig, sizeof sig_host, cudaMemcpyDeviceToHost));
  if (sig_host != static_cast<uint64_t>(1 + left)) compat::fail("signal = %llu, expected %d",
                                                                (unsigned long long)sig_host, 1 + left);
  std::free(host);
  COMPAT_CUDA(cudaStreamDestroy(stream));
  nvshmem_barrier_all();
  if (nvshmemx_buffer_unregister_symmetric(sym, kBytes) != 0)
    compat::fail("nvshmemx_buffer_unregister_symmetric failed");
  const int rc = compat::finish();
  // the program's own allocation is released after finalize, as NVSHMEM's example does
  COMPAT_CU(cuMemUnmap(base, kBytes));
  COMPAT_CU(cuMemAddressFree(base, kBytes));
  COMPAT_CU(cuMemRelease(handle));
  return rc;
}
