// mp_register_symmetric_gpu: gshmemx_buffer_register_symmetric on GPU PEs. Each PE cuMemCreate's a buffer on its GPU
// with a POSIX-fd handle type, maps it itself and registers it; then a host put, a stream put + signal and a device
// kernel's put + signal into the next PE's region land exactly in that PE's own mapping of its buffer (read back
// through the program's mapping, not the registered address); unregistering works; cudaMalloc memory and a VMM
// allocation without a shareable handle type are refused on every PE with a message naming the fix. Needs GPU PEs
// (CTest label gpu; skipped without a GPU). The CPU-PE counterpart: register_symmetric.cpp.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gshmem/device.cuh"
#include "harness.hpp"
#include "cuda_check.cuh"

using namespace mpt;

namespace {

gshmem_stream_t gs(cudaStream_t s) { return reinterpret_cast<gshmem_stream_t>(s); }

// A buffer made by the program with the CUDA virtual memory API on this PE's GPU.
struct VmmBuffer {
  CUdeviceptr va = 0;
  CUmemGenericAllocationHandle h = 0;
  std::size_t bytes = 0;
  VmmBuffer(std::size_t granules, CUmemAllocationHandleType type) {
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = type;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    std::size_t g = 0;
    CU(DRV(cuMemGetAllocationGranularity)(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    bytes = granules * g;
    CU(DRV(cuMemAddressReserve)(&va, bytes, g, 0, 0));
    CU(DRV(cuMemCreate)(&h, bytes, &prop, 0));
    CU(DRV(cuMemMap)(va, bytes, 0, h, 0));
    CUmemAccessDesc acc{};
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU(DRV(cuMemSetAccess)(va, bytes, &acc, 1));
  }
  ~VmmBuffer() {
    DRV(cuMemUnmap)(va, bytes);
    DRV(cuMemRelease)(h);
    DRV(cuMemAddressFree)(va, bytes);
  }
  void* ptr() const { return reinterpret_cast<void*>(va); }
  VmmBuffer(const VmmBuffer&) = delete;
  VmmBuffer& operator=(const VmmBuffer&) = delete;
};

std::vector<unsigned char> data_of(std::uint64_t tag, int k, int from, std::size_t bytes) {
  std::vector<unsigned char> d(bytes);
  for (std::size_t i = 0; i < bytes; ++i)
    d[i] = static_cast<unsigned char>(rnd(tag, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(from), i));
  return d;
}

__global__ void put_signal_kernel(void* dst, const void* src, std::size_t n, std::uint64_t* sig, std::uint64_t v,
                                  int pe) {
  if (threadIdx.x == 0 && blockIdx.x == 0) gshmem_putmem_signal(dst, src, n, sig, v, GSHMEM_SIGNAL_SET, pe);
}

MPT_CASE(host_stream_device) {
  const int n = npes(), my = me(), next = (my + 1) % n, prev = (my + n - 1) % n;
  const std::uint64_t tag = tag_of("register_symmetric_gpu");
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  VmmBuffer buf(2, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  auto* own = static_cast<unsigned char*>(buf.ptr());
  auto* sym = static_cast<unsigned char*>(gshmemx_buffer_register_symmetric(buf.ptr(), buf.bytes, 0));
  require(sym != nullptr, gshmemx_last_error());
  MPT_CHECK(gshmem_ptr(sym, next) != nullptr);
  // Regions: [0, B) host put, [R, R + B) stream put, [2R, 2R + B) device put; signals at the end.
  const std::size_t B = 100000 + 13, R = 128 * 1024;
  auto* sig = reinterpret_cast<std::uint64_t*>(sym + 3 * R);
  unsigned char* dsrc = nullptr;
  CK(cudaMalloc(&dsrc, 3 * B));
  std::vector<unsigned char> want(3 * R + 16), got(3 * R + 16);
  for (int round = 0; round < 3; ++round) {
    std::vector<unsigned char> mine[3], theirs[3];
    for (int k = 0; k < 3; ++k) {
      mine[k] = data_of(tag, 10 * round + k, my, B);
      theirs[k] = data_of(tag, 10 * round + k, prev, B);
      CK(cudaMemcpy(dsrc + static_cast<std::size_t>(k) * B, mine[k].data(), B, cudaMemcpyHostToDevice));
    }
    // Poison my whole buffer's used part through my own mapping.
    std::memset(want.data(), 0, want.size());
    for (int k = 0; k < 3; ++k) std::memcpy(want.data() + static_cast<std::size_t>(k) * R, theirs[k].data(), B);
    const std::uint64_t sv[2] = {static_cast<std::uint64_t>(round) * 2 + 1, static_cast<std::uint64_t>(round) * 2 + 2};
    std::vector<unsigned char> poison(want.size());
    poison_of(poison.data(), want.data(), want.size());
    std::memset(poison.data() + 3 * R, 0, 16);  // signals start at 0
    CK(cudaMemcpy(own, poison.data(), poison.size(), cudaMemcpyHostToDevice));
    // Bytes between the regions are never written: they keep the poison.
    for (std::size_t k = 0; k < 3; ++k) std::memcpy(want.data() + k * R + B, poison.data() + k * R + B, R - B);
    std::memcpy(want.data() + 3 * R, sv, 16);
    gshmem_barrier_all();
    gshmem_putmem(sym, mine[0].data(), B, next);                                               // host
    gshmemx_putmem_signal_on_stream(sym + R, dsrc + B, B, sig, sv[0], GSHMEM_SIGNAL_SET, next, gs(stream));  // stream
    put_signal_kernel<<<1, 32, 0, stream>>>(sym + 2 * R, dsrc + 2 * B, B, sig + 1, sv[1], next);  // device
    CK(cudaGetLastError());
    gshmemx_signal_wait_until_on_stream(sig, GSHMEM_CMP_EQ, sv[0], gs(stream));
    gshmemx_signal_wait_until_on_stream(sig + 1, GSHMEM_CMP_EQ, sv[1], gs(stream));
    CK(cudaStreamSynchronize(stream));
    gshmem_barrier_all();
    CK(cudaMemcpy(got.data(), own, got.size(), cudaMemcpyDeviceToHost));  // the program's own mapping
    MPT_CHECK_MEM("registered buffer after host/stream/device puts from the previous PE", got.data(), want.data(),
                  got.size());
    gshmem_barrier_all();
  }
  CK(cudaFree(dsrc));
  MPT_CHECK_STATUS(gshmemx_buffer_unregister_symmetric(sym, buf.bytes), GSHMEM_SUCCESS, "");
  MPT_CHECK(gshmem_ptr(sym, my) == nullptr);
  CK(cudaStreamDestroy(stream));
}

MPT_CASE(refused) {
  const char* call = "gshmemx_buffer_register_symmetric";
  std::size_t g = 0;
  {
    VmmBuffer probe(1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    g = probe.bytes;
  }
  void* plain = nullptr;
  CK(cudaMalloc(&plain, 4 * g));
  void* aligned = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(plain) + g - 1) / g * g);
  void* r = gshmemx_buffer_register_symmetric(aligned, g, 0);
  MPT_CHECK(r == nullptr) << "cudaMalloc memory was registered";
  MPT_CHECK(std::strstr(gshmemx_last_error(), call) && std::strstr(gshmemx_last_error(), "cuMemCreate") &&
            std::strstr(gshmemx_last_error(), "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR"))
      << gshmemx_last_error();
  CK(cudaFree(plain));
  VmmBuffer unshareable(1, CU_MEM_HANDLE_TYPE_NONE);
  r = gshmemx_buffer_register_symmetric(unshareable.ptr(), unshareable.bytes, 0);
  MPT_CHECK(r == nullptr) << "a VMM allocation without a shareable handle type was registered";
  MPT_CHECK(std::strstr(gshmemx_last_error(), "requestedHandleTypes")) << gshmemx_last_error();
  // The heap is still usable after the refusals.
  VmmBuffer ok(1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  void* sym = gshmemx_buffer_register_symmetric(ok.ptr(), ok.bytes, 0);
  MPT_CHECK(sym != nullptr) << gshmemx_last_error();
  if (sym) MPT_CHECK_STATUS(gshmemx_buffer_unregister_symmetric(sym, ok.bytes), GSHMEM_SUCCESS, "");
}

}  // namespace

int main(int argc, char** argv) {
  static mpt::Registrar first("(needs GPU PEs)", [] {
    if (!st().gpu) {
      std::fprintf(stderr, "[PE %d] FAIL: mp_register_symmetric_gpu needs GPU PEs but this is a CPU PE\n", me());
      gshmem_global_exit(1);
    }
  });
  auto& c = mpt::cases();
  std::rotate(c.begin(), c.end() - 1, c.end());
  return mpt::main(argc, argv);
}
