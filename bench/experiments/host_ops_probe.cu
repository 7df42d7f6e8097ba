// host_ops_probe: what one host-initiated small operation costs on a GPU PE, each way the library could issue it.
// Not the library: plain CUDA runtime and driver calls on one GPU (the "peer" is a second buffer on the same GPU,
// cudaMalloc'd and VMM-backed as the library's heap; with two GPUs and peer access, also a buffer on GPU 1, each
// way, written and read by GPU 0's copies). Decides how transport/gpu.cu issues host put/get/p/g and p/signals on
// streams (bench/NOTES.md entries 14-15). --stream-memops: stream memory
// operations against kernels (barrier of two "PEs" as two host threads, order checks, single writes).
//   nvcc -O3 -arch=sm_90 -std=c++17 -o build-probe/host_ops_probe bench/experiments/host_ops_probe.cu -lcuda
// Every variant moves real data; each timed batch is checked afterwards (a mismatch is printed and exits 1).
#include <cuda.h>
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "../../src/transport/stream_kernel.cuh"  // the library's stream-kernel launcher (PDL on 9.0+)

namespace {

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}
void ck(CUresult e, const char* what) {
  if (e != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(e, &s);
    std::fprintf(stderr, "%s: %s\n", what, s ? s : "?");
    std::exit(2);
  }
}

using Clock = std::chrono::steady_clock;

// Median over `reps` batches of `iters` calls of the time per call, in microseconds.
double per_call_us(int reps, int iters, const std::function<void(int)>& body, const std::function<void()>& after) {
  std::vector<double> t;
  for (int r = 0; r < reps + 1; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) body(i);
    after();
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters;
    if (r) t.push_back(us);  // batch 0 is warm-up
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

__global__ void store_kernel(int* dst, int v) { *dst = v; }
__global__ void store64_kernel(unsigned long long* dst, unsigned long long v) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(*dst).store(v, cuda::memory_order_seq_cst);
}
__global__ void load_kernel(const int* src, int* host_mapped) { *host_mapped = *src; }
// One CTA copying 16-byte vectors (the probe's sizes are multiples of 16 and its buffers 256-byte aligned).
__global__ void copy16_kernel(uint4* dst, const uint4* src, size_t n) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
}

constexpr int kReps = 7;
constexpr int kIters = 2000;
constexpr int kRing = 4096;  // pinned staging slots (16 bytes each) for the staged p

int failures = 0;
void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("  CHECK FAILED: %s\n", what);
    ++failures;
  }
}

struct Target {
  const char* name;
  char* peer;  // device buffer written/read by the ops
};

void run(const Target& t, char* local, cudaStream_t s, CUstream cs, char* pinned, int* mapped, int* mapped_dev) {
  std::printf("target: %s\n", t.name);
  auto sync = [&] { ck(cudaStreamSynchronize(s), "sync"); };
  for (size_t bytes : {size_t(16), size_t(4096), size_t(65536)}) {
    std::vector<char> pat(bytes), back(bytes);
    for (size_t i = 0; i < bytes; ++i) pat[i] = char(std::rand());
    ck(cudaMemcpy(local, pat.data(), bytes, cudaMemcpyHostToDevice), "fill");
    auto verify = [&](const char* what) {
      ck(cudaMemcpy(back.data(), t.peer, bytes, cudaMemcpyDeviceToHost), "verify");
      expect(std::memcmp(back.data(), pat.data(), bytes) == 0, what);
      ck(cudaMemset(t.peer, 0xee, bytes), "poison");
      ck(cudaDeviceSynchronize(), "poison sync");
    };
    ck(cudaMemset(t.peer, 0xee, bytes), "poison");
    ck(cudaDeviceSynchronize(), "poison sync");
    double a = per_call_us(kReps, kIters, [&](int) {
      ck(cudaMemcpyAsync(t.peer, local, bytes, cudaMemcpyDefault, s), "copy");
      sync();
    }, [] {});
    verify("put rt Default");
    double b = per_call_us(kReps, kIters, [&](int) {
      ck(cudaMemcpyAsync(t.peer, local, bytes, cudaMemcpyDeviceToDevice, s), "copy");
      sync();
    }, [] {});
    verify("put rt DtoD");
    double c = per_call_us(kReps, kIters, [&](int) {
      ck(cuMemcpyDtoDAsync(CUdeviceptr(t.peer), CUdeviceptr(local), bytes, cs), "cuMemcpyDtoDAsync");
      ck(cuStreamSynchronize(cs), "cuStreamSynchronize");
    }, [] {});
    verify("put drv DtoD");
    double d = per_call_us(kReps, kIters, [&](int) {
      ck(cuMemcpyAsync(CUdeviceptr(t.peer), CUdeviceptr(local), bytes, cs), "cuMemcpyAsync");
      ck(cuStreamSynchronize(cs), "cuStreamSynchronize");
    }, [] {});
    verify("put drv generic");
    double e = per_call_us(kReps, kIters, [&](int) {
      ck(cudaMemcpyAsync(t.peer, local, bytes, cudaMemcpyDefault, s), "copy");
    }, sync);
    verify("put rt nbi");
    double k = per_call_us(kReps, kIters, [&](int) {
      copy16_kernel<<<1, 256, 0, s>>>(reinterpret_cast<uint4*>(t.peer), reinterpret_cast<const uint4*>(local),
                                      bytes / 16);
      sync();
    }, [] {});
    verify("put kernel");
    std::printf("  put %6zu B blocking: rt Default %.3f  rt DtoD %.3f  drv DtoD %.3f  drv generic %.3f  kernel %.3f us;"
                "  nbi (one sync per batch) %.3f us\n", bytes, a, b, c, d, k, e);

    // get into this GPU's memory (host getmem into a symmetric buffer, gshmem-bench's host_get_bw rows).
    ck(cudaMemcpy(t.peer, pat.data(), bytes, cudaMemcpyHostToDevice), "fill peer");
    auto verify_get = [&](const char* what) {
      ck(cudaMemcpy(back.data(), local, bytes, cudaMemcpyDeviceToHost), "verify get");
      expect(std::memcmp(back.data(), pat.data(), bytes) == 0, what);
      ck(cudaMemset(local, 0xee, bytes), "poison local");
      ck(cudaDeviceSynchronize(), "poison sync");
    };
    ck(cudaMemset(local, 0xee, bytes), "poison local");
    ck(cudaDeviceSynchronize(), "poison sync");
    double ga = per_call_us(kReps, kIters, [&](int) {
      ck(cudaMemcpyAsync(local, t.peer, bytes, cudaMemcpyDefault, s), "get");
      sync();
    }, [] {});
    verify_get("get rt Default");
    double gc = per_call_us(kReps, kIters, [&](int) {
      ck(cuMemcpyDtoDAsync(CUdeviceptr(local), CUdeviceptr(t.peer), bytes, cs), "cuMemcpyDtoDAsync");
      ck(cuStreamSynchronize(cs), "cuStreamSynchronize");
    }, [] {});
    verify_get("get drv DtoD");
    double gk = per_call_us(kReps, kIters, [&](int) {
      copy16_kernel<<<1, 256, 0, s>>>(reinterpret_cast<uint4*>(local), reinterpret_cast<const uint4*>(t.peer),
                                      bytes / 16);
      sync();
    }, [] {});
    verify_get("get kernel");
    std::printf("  get %6zu B blocking into GPU 0: rt Default %.3f  drv DtoD %.3f  kernel %.3f us\n", bytes, ga, gc,
                gk);

    // get into pageable host memory (what getmem into a host buffer does) against a pinned bounce buffer.
    ck(cudaMemcpy(t.peer, pat.data(), bytes, cudaMemcpyHostToDevice), "fill peer");
    std::vector<char> host(bytes);
    double g1 = per_call_us(kReps, kIters / 2, [&](int) {
      ck(cudaMemcpyAsync(host.data(), t.peer, bytes, cudaMemcpyDefault, s), "get");
      sync();
    }, [] {});
    expect(std::memcmp(host.data(), pat.data(), bytes) == 0, "get pageable");
    std::memset(host.data(), 0, bytes);
    double g2 = per_call_us(kReps, kIters / 2, [&](int) {
      ck(cudaMemcpyAsync(pinned, t.peer, bytes, cudaMemcpyDefault, s), "get");
      sync();
      std::memcpy(host.data(), pinned, bytes);
    }, [] {});
    expect(std::memcmp(host.data(), pat.data(), bytes) == 0, "get pinned bounce");
    std::printf("  get %6zu B to host: pageable %.3f  pinned bounce + memcpy %.3f us\n", bytes, g1, g2);
  }

  // p of an int from a host value.
  int* dst = reinterpret_cast<int*>(t.peer);
  int last = 0;
  auto check_p = [&](const char* what) {
    int v = -1;
    ck(cudaMemcpy(&v, dst, 4, cudaMemcpyDeviceToHost), "p check");
    expect(v == last, what);
    ck(cudaMemset(dst, 0xee, 4), "p poison");
    ck(cudaDeviceSynchronize(), "p poison sync");
  };
  int base = std::rand() & 0xffff;
  double p1 = per_call_us(kReps, kIters, [&](int i) {
    int v = base + i;
    last = v;
    ck(cudaMemcpyAsync(dst, &v, 4, cudaMemcpyDefault, s), "p");
    sync();
  }, [] {});
  check_p("p pageable+sync");
  double p2 = per_call_us(kReps, kIters, [&](int i) {
    int v = base + 2 * i;
    last = v;
    ck(cudaMemcpyAsync(dst, &v, 4, cudaMemcpyDefault, s), "p");  // the driver stages pageable sources
  }, sync);
  check_p("p pageable no sync");
  int slot = 0;
  double p3 = per_call_us(kReps, kIters, [&](int i) {
    if (slot == kRing) {
      sync();
      slot = 0;
    }
    int v = base + 3 * i;
    last = v;
    char* st = pinned + 16 * slot++;
    std::memcpy(st, &v, 4);
    ck(cudaMemcpyAsync(dst, st, 4, cudaMemcpyHostToDevice, s), "p");
  }, [&] {
    sync();
    slot = 0;
  });
  check_p("p pinned ring");
  double p4 = per_call_us(kReps, kIters, [&](int i) {
    int v = base + 4 * i;
    last = v;
    store_kernel<<<1, 1, 0, s>>>(dst, v);
  }, sync);
  check_p("p kernel");
  double p5 = per_call_us(kReps, kIters, [&](int i) {
    if (slot == kRing) {
      ck(cuStreamSynchronize(cs), "sync");
      slot = 0;
    }
    int v = base + 5 * i;
    last = v;
    char* st = pinned + 16 * slot++;
    std::memcpy(st, &v, 4);
    ck(cuMemcpyHtoDAsync(CUdeviceptr(dst), st, 4, cs), "p");
  }, [&] {
    ck(cuStreamSynchronize(cs), "sync");
    slot = 0;
  });
  check_p("p pinned ring drv");
  double p6 = per_call_us(kReps, kIters, [&](int i) {
    int v = base + 6 * i;
    last = v;
    ck(cuStreamWriteValue32(cs, CUdeviceptr(dst), static_cast<cuuint32_t>(v), CU_STREAM_WRITE_VALUE_DEFAULT), "p");
    ck(cuStreamSynchronize(cs), "sync");
  }, [] {});
  check_p("p writeValue32 + sync");
  double p7 = per_call_us(kReps, kIters, [&](int i) {
    int v = base + 7 * i;
    last = v;
    ck(cuStreamWriteValue32(cs, CUdeviceptr(dst), static_cast<cuuint32_t>(v), CU_STREAM_WRITE_VALUE_DEFAULT), "p");
  }, [&] { ck(cuStreamSynchronize(cs), "sync"); });
  check_p("p writeValue32 no sync");
  double p8 = per_call_us(kReps, kIters, [&](int i) {
    int v = base + 8 * i;
    last = v;
    ck(cuMemsetD32Async(CUdeviceptr(dst), static_cast<unsigned>(v), 1, cs), "p");
  }, [&] { ck(cuStreamSynchronize(cs), "sync"); });
  check_p("p memsetD32 no sync");
  double p9 = per_call_us(kReps, kIters, [&](int i) {
    int v = base + 9 * i;
    last = v;
    cudaStreamCaptureStatus cap;
    ck(cudaStreamIsCapturing(s, &cap), "capturing?");
    if (cap == cudaStreamCaptureStatusNone) ck(cudaMemcpyAsync(dst, &v, 4, cudaMemcpyHostToDevice, s), "p");
  }, sync);
  check_p("p capture check + pageable no sync");
  std::printf("  p int: pageable+sync %.3f  pageable no sync %.3f  pinned ring (rt) %.3f  pinned ring (drv) %.3f"
              "  kernel %.3f  writeValue32+sync %.3f  writeValue32 no sync %.3f  memsetD32 no sync %.3f"
              "  capture check + pageable no sync %.3f us\n", p1, p2, p3, p5, p4, p6, p7, p8, p9);

  // The same p's on the GPU timeline (events around 2000 back to back on one stream): what gshmem-bench's
  // p_on_stream row sees. Host issue time (above) and GPU time differ where the GPU, not the host, is the bottleneck.
  {
    cudaEvent_t e0, e1;
    ck(cudaEventCreate(&e0), "event");
    ck(cudaEventCreate(&e1), "event");
    CUstream us = reinterpret_cast<CUstream>(s);
    auto gpu_us = [&](const std::function<void(int)>& op) {
      std::vector<double> t;
      for (int r = 0; r <= kReps; ++r) {
        ck(cudaEventRecord(e0, s), "record");
        for (int i = 0; i < kIters; ++i) op(i);
        ck(cudaEventRecord(e1, s), "record");
        ck(cudaEventSynchronize(e1), "sync");
        float ms = 0;
        ck(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
        if (r) t.push_back(ms * 1e3 / kIters);
      }
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    const double w32 = gpu_us([&](int i) {
      last = base + 10 * i;
      ck(cuStreamWriteValue32(us, CUdeviceptr(dst), static_cast<cuuint32_t>(last), CU_STREAM_WRITE_VALUE_DEFAULT),
         "p");
    });
    check_p("gpu time: writeValue32");
    const double cp = gpu_us([&](int i) {
      int v = base + 11 * i;
      last = v;
      ck(cudaMemcpyAsync(dst, &v, 4, cudaMemcpyHostToDevice, s), "p");
    });
    check_p("gpu time: pageable copy");
    const double ms = gpu_us([&](int i) {
      last = base + 12 * i;
      ck(cuMemsetD32Async(CUdeviceptr(dst), static_cast<unsigned>(last), 1, us), "p");
    });
    check_p("gpu time: memsetD32");
    const double kr = gpu_us([&](int i) {
      last = base + 13 * i;
      store_kernel<<<1, 1, 0, s>>>(dst, last);
    });
    check_p("gpu time: kernel");
    std::printf("  p int, GPU time per op: writeValue32 %.3f  pageable copy %.3f  memsetD32 %.3f  kernel %.3f us\n",
                w32, cp, ms, kr);
    ck(cudaEventDestroy(e0), "event");
    ck(cudaEventDestroy(e1), "event");
  }

  // Host put+signal of 8 bytes (the data from device memory, then a SET signal): copy + wait + signal kernel + wait
  // (gshmem before 2bd1389's successor) against copy + write-value + one wait.
  {
    auto* data = reinterpret_cast<unsigned long long*>(t.peer + 64);
    auto* sig = reinterpret_cast<unsigned long long*>(t.peer + 128);
    unsigned long long lastsig = 0;
    double s1 = per_call_us(kReps, kIters / 2, [&](int i) {
      ck(cudaMemcpyAsync(data, local, 8, cudaMemcpyDefault, s), "copy");
      sync();
      lastsig = static_cast<unsigned long long>(i) + 1;
      store64_kernel<<<1, 1, 0, s>>>(sig, lastsig);
      sync();
    }, [] {});
    unsigned long long got = 0;
    ck(cudaMemcpy(&got, sig, 8, cudaMemcpyDeviceToHost), "sig");
    expect(got == lastsig, "put+signal (two waits) signal");
    double s2 = per_call_us(kReps, kIters / 2, [&](int i) {
      ck(cudaMemcpyAsync(data, local, 8, cudaMemcpyDefault, s), "copy");
      lastsig = static_cast<unsigned long long>(i) + 7;
      ck(cuStreamWriteValue64(reinterpret_cast<CUstream>(s), CUdeviceptr(sig), lastsig, CU_STREAM_WRITE_VALUE_DEFAULT),
         "write64");
      sync();
    }, [] {});
    ck(cudaMemcpy(&got, sig, 8, cudaMemcpyDeviceToHost), "sig");
    expect(got == lastsig, "put+signal (write-value) signal");
    std::printf("  put+signal 8 B: copy+wait+kernel+wait %.3f  copy+writeValue64+wait %.3f us\n", s1, s2);
  }

  // g of an int into the host.
  ck(cudaMemcpy(dst, &base, 4, cudaMemcpyHostToDevice), "g fill");
  long long sum = 0;
  double q1 = per_call_us(kReps, kIters, [&](int) {
    int v = 0;
    ck(cudaMemcpyAsync(&v, dst, 4, cudaMemcpyDefault, s), "g");
    sync();
    sum += v;
  }, [] {});
  double q2 = per_call_us(kReps, kIters, [&](int) {
    ck(cudaMemcpyAsync(pinned, dst, 4, cudaMemcpyDeviceToHost, s), "g");
    sync();
    int v;
    std::memcpy(&v, pinned, 4);
    sum += v;
  }, [] {});
  double q3 = per_call_us(kReps, kIters, [&](int) {
    ck(cuMemcpyDtoHAsync(pinned, CUdeviceptr(dst), 4, cs), "g");
    ck(cuStreamSynchronize(cs), "sync");
    int v;
    std::memcpy(&v, pinned, 4);
    sum += v;
  }, [] {});
  double q4 = per_call_us(kReps, kIters, [&](int) {
    load_kernel<<<1, 1, 0, s>>>(dst, mapped_dev);
    sync();
    sum += *reinterpret_cast<volatile int*>(mapped);
  }, [] {});
  expect(sum == static_cast<long long>(base) * 4 * (kReps + 1) * kIters, "g values");
  std::printf("  g int: pageable %.3f  pinned (rt) %.3f  pinned (drv) %.3f  kernel to mapped %.3f us\n", q1, q2, q3,
              q4);
}

// ---- stream memory operations (--stream-memops): a stream barrier of two "PEs" (two host threads, a stream each
// on GPU 0) from cuStreamWriteValue64 + cuStreamWaitValue64, against the kernel barrier the library launches (one
// thread stores the peer's flag, then polls its own), plainly and with PDL. Flags live in a VMM allocation
// (cuMemCreate + cuMemMap), as the library's heap does.
__global__ void kbarrier(unsigned long long* peer_flag, const unsigned long long* my_flag, unsigned long long e) {
  gshmem::gpu::stream_kernel_entry();
  __threadfence_system();
  *reinterpret_cast<volatile unsigned long long*>(peer_flag) = e;
  while (*reinterpret_cast<const volatile unsigned long long*>(my_flag) < e) {
  }
}
// A kernel that stores v into *p after `ns` nanoseconds (the ordering check's late producer).
__global__ void late_store(int* p, int v, unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
  *p = v;
}
__global__ void read_int(const int* p, int* out) { *out = *reinterpret_cast<const volatile int*>(p); }
// The same store from a PDL-aware kernel that lets its dependents launch at once.
__global__ void late_store_trigger(int* p, int v, unsigned long long ns) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
  *p = v;
}
// Reads without griddepcontrol.wait (launched with PDL: would run early if the launch overlapped a memop).
__global__ void read_int_nowait(const int* p, int* out) { *out = *reinterpret_cast<const volatile int*>(p); }

int stream_memops() {
  ck(cudaSetDevice(0), "cudaSetDevice");
  ck(cudaFree(nullptr), "context");
  CUdevice dev;
  ck(cuDeviceGet(&dev, 0), "cuDeviceGet");
  int v64 = 0;
  ck(cuDeviceGetAttribute(&v64, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, dev), "attr");
  int flush = 0;
  ck(cuDeviceGetAttribute(&flush, CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, dev), "attr");
  std::printf("stream mem ops: 64-bit %s, flush remote writes %s\n", v64 ? "yes" : "no", flush ? "yes" : "no");
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t gran = 0;
  ck(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "granularity");
  CUmemGenericAllocationHandle h;
  ck(cuMemCreate(&h, gran, &prop, 0), "cuMemCreate");
  CUdeviceptr base;
  ck(cuMemAddressReserve(&base, gran, 0, 0, 0), "reserve");
  ck(cuMemMap(base, gran, 0, h, 0), "map");
  CUmemAccessDesc acc{};
  acc.location = prop.location;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  ck(cuMemSetAccess(base, gran, &acc, 1), "access");
  ck(cuMemsetD8(base, 0, gran), "zero");
  // PE i's heap: flags at [0, 64) (slot j = word 8 * j), data at 4096.
  char* heap[2] = {reinterpret_cast<char*>(base), reinterpret_cast<char*>(base) + gran / 2};
  auto flag = [&](int pe, int slot) { return reinterpret_cast<unsigned long long*>(heap[pe]) + 8 * slot; };
  cudaStream_t st[2];
  cudaEvent_t ea[2], eb[2];
  for (int i = 0; i < 2; ++i) {
    ck(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking), "stream");
    ck(cudaEventCreate(&ea[i]), "event");
    ck(cudaEventCreate(&eb[i]), "event");
  }
  int* out;
  ck(cudaHostAlloc(reinterpret_cast<void**>(&out), 4096, cudaHostAllocMapped), "out");
  unsigned long long epoch[2] = {0, 0};
  // (CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER: "invalid argument" from cuStreamWriteValue64 on H200, CUDA 13.)
  enum Way { kMemops, kKernel, kKernelPdl };
  const char* way_name[] = {"writeValue64 + waitValue64 GEQ", "kernel, plain launch", "kernel, PDL launch"};
  // One barrier on PE me's stream (slot 0: PE me's flag written by the other PE).
  auto barrier = [&](Way w, int me) {
    const unsigned long long e = ++epoch[me];
    CUstream cs = reinterpret_cast<CUstream>(st[me]);
    if (w == kMemops) {
      ck(cuStreamWriteValue64(cs, CUdeviceptr(flag(1 - me, 0)), e, CU_STREAM_WRITE_VALUE_DEFAULT),
         "cuStreamWriteValue64");
      ck(cuStreamWaitValue64(cs, CUdeviceptr(flag(me, 0)), e, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue64");
    } else {
      ck(gshmem::gpu::launch_stream_kernel(w == kKernelPdl, kbarrier, 1, st[me], flag(1 - me, 0),
                                           static_cast<const unsigned long long*>(flag(me, 0)), e),
         "launch");
    }
  };
  const int nb = 2000, reps = 7;
  std::printf("== stream barrier of 2 (%d back to back, a host thread per PE), us per barrier\n", nb);
  for (int round = 0; round < 2; ++round)
    for (Way w : {kMemops, kKernel, kKernelPdl}) {
      std::vector<double> gpu, host;
      for (int r = 0; r <= reps; ++r) {
        std::atomic<int> ready{0};
        double issue[2] = {0, 0};
        auto pe = [&](int me) {
          ck(cudaSetDevice(0), "dev");
          ck(cudaEventRecord(ea[me], st[me]), "rec");
          ready.fetch_add(1);
          while (ready.load() < 2) {
          }
          const auto t0 = Clock::now();
          for (int i = 0; i < nb; ++i) barrier(w, me);
          issue[me] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
          ck(cudaEventRecord(eb[me], st[me]), "rec");
        };
        std::thread t1(pe, 1);
        pe(0);
        t1.join();
        ck(cudaDeviceSynchronize(), "sync");
        float ms = 0;
        ck(cudaEventElapsedTime(&ms, ea[0], eb[0]), "elapsed");
        if (r) {
          gpu.push_back(ms * 1e3 / nb);
          host.push_back(issue[0] / nb);
        }
      }
      std::sort(gpu.begin(), gpu.end());
      std::sort(host.begin(), host.end());
      unsigned long long f[2];
      ck(cudaMemcpy(&f[0], flag(0, 0), 8, cudaMemcpyDeviceToHost), "flag");
      ck(cudaMemcpy(&f[1], flag(1, 0), 8, cudaMemcpyDeviceToHost), "flag");
      expect(f[0] == epoch[1] && f[1] == epoch[0], "barrier flags hold the last epochs");
      std::printf("sbarrier  %-34s host %6.3f  gpu %6.3f us\n", way_name[w], host[host.size() / 2],
                  gpu[gpu.size() / 2]);
    }
  // Ordering: PE 0 stores into PE 1's data word from a kernel that runs 20 us (the store comes last), then enters
  // the barrier; PE 1 reads the word right after its barrier. A trial fails when PE 1 read the old value.
  std::printf("== ordering: a late store on PE 0's stream before the barrier, read on PE 1's after it\n");
  int* word = reinterpret_cast<int*>(heap[1] + 4096);
  for (Way w : {kMemops, kKernel, kKernelPdl}) {
    int early = 0;
    const int trials = 200;
    for (int t = 0; t < trials; ++t) {
      ck(cudaMemset(word, 0, 4), "clear");
      ck(cudaDeviceSynchronize(), "sync");
      const int v = t + 1;
      std::thread t1([&] {
        ck(cudaSetDevice(0), "dev");
        barrier(w, 1);
        read_int<<<1, 1, 0, st[1]>>>(word, out + (t & 511));
      });
      late_store<<<1, 1, 0, st[0]>>>(word, v, 20000);
      barrier(w, 0);
      t1.join();
      ck(cudaDeviceSynchronize(), "sync");
      if (out[t & 511] != v) ++early;
    }
    std::printf("order     %-34s %3d of %d early\n", way_name[w], early, trials);
    expect(early == 0, "barrier orders the earlier store");
  }
  // Stream order around a write-value on one stream: (1) behind a kernel that triggers its dependents early and
  // stores 20 us in (the write-value must land after that store), (2) before a PDL-launched kernel that reads without
  // griddepcontrol.wait (it must see the write-value's value).
  {
    CUstream c0 = reinterpret_cast<CUstream>(st[0]);
    int bad1 = 0, bad2 = 0;
    const int trials = 200;
    for (int t = 0; t < trials; ++t) {
      const int v = t + 1;
      late_store_trigger<<<1, 1, 0, st[0]>>>(word, v, 20000);
      ck(cuStreamWriteValue32(c0, CUdeviceptr(word), v + 1000, CU_STREAM_WRITE_VALUE_DEFAULT), "write32");
      ck(gshmem::gpu::launch_stream_kernel(true, read_int_nowait, 1, st[0], static_cast<const int*>(word),
                                           out + (t & 511)),
         "launch");
      ck(cudaStreamSynchronize(st[0]), "sync");
      int final_word = 0;
      ck(cudaMemcpy(&final_word, word, 4, cudaMemcpyDeviceToHost), "read back");
      if (final_word != v + 1000) ++bad1;
      if (out[t & 511] != v + 1000) ++bad2;
    }
    std::printf("order     writeValue32 after a kernel that triggers early: %d of %d overtaken\n", bad1, trials);
    std::printf("order     PDL kernel (no wait) after a writeValue32:      %d of %d early\n", bad2, trials);
    expect(bad1 == 0 && bad2 == 0, "write-value keeps stream order");
  }
  // p and signal-wait pieces on one stream: a write-value against a one-thread store kernel (back to back).
  std::printf("== one stream, %d back to back, us per op (events)\n", nb);
  auto per_op = [&](const std::function<void(int)>& op) {
    std::vector<double> gpu;
    for (int r = 0; r <= reps; ++r) {
      ck(cudaEventRecord(ea[0], st[0]), "rec");
      for (int i = 0; i < nb; ++i) op(i);
      ck(cudaEventRecord(eb[0], st[0]), "rec");
      ck(cudaEventSynchronize(eb[0]), "sync");
      float ms = 0;
      ck(cudaEventElapsedTime(&ms, ea[0], eb[0]), "elapsed");
      if (r) gpu.push_back(ms * 1e3 / nb);
    }
    std::sort(gpu.begin(), gpu.end());
    return gpu[gpu.size() / 2];
  };
  auto* pw = reinterpret_cast<unsigned long long*>(heap[1] + 8192);
  CUstream cs0 = reinterpret_cast<CUstream>(st[0]);
  const double wv = per_op([&](int i) {
    ck(cuStreamWriteValue64(cs0, CUdeviceptr(pw), i + 1, CU_STREAM_WRITE_VALUE_DEFAULT), "write");
  });
  unsigned long long got = 0;
  ck(cudaMemcpy(&got, pw, 8, cudaMemcpyDeviceToHost), "check");
  expect(got == nb, "writeValue64 stored the last value");
  const double kv = per_op([&](int i) {
    ck(gshmem::gpu::launch_stream_kernel(true, kbarrier, 1, st[0], pw, static_cast<const unsigned long long*>(pw),
                                         static_cast<unsigned long long>(i + 1)),
       "launch");
  });
  const double wt = per_op([&](int) {
    ck(cuStreamWaitValue64(cs0, CUdeviceptr(pw), 1, CU_STREAM_WAIT_VALUE_GEQ), "wait");  // *pw >= 1 already
  });
  std::printf("p/sig     writeValue64 %.3f  store kernel (PDL) %.3f  satisfied waitValue64 %.3f us\n", wv, kv, wt);
  for (int i = 0; i < 2; ++i) {
    ck(cudaStreamDestroy(st[i]), "destroy");
    ck(cudaEventDestroy(ea[i]), "destroy");
    ck(cudaEventDestroy(eb[i]), "destroy");
  }
  ck(cudaFreeHost(out), "free");
  ck(cuMemUnmap(base, gran), "unmap");
  ck(cuMemAddressFree(base, gran), "free va");
  ck(cuMemRelease(h), "release");
  std::printf(failures ? "host_ops_probe: %d check(s) FAILED\n" : "host_ops_probe: all checks passed\n", failures);
  return failures ? 1 : 0;
}

}  // namespace

// A buffer backed the way the library backs its heap: a VMM allocation (cuMemCreate, pinned, exportable as a POSIX
// fd) on GPU `dev`, mapped into a reserved range with read/write access for GPU 0, whose copies are timed (each PE
// grants its own GPU access to the peers' chunks it maps), and for `dev` itself, so that the probe's checks and
// poison writes work whichever context the runtime picks for them.
char* vmm_buffer(int dev, std::size_t bytes) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  std::size_t gran = 0;
  ck(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "granularity");
  bytes = (bytes + gran - 1) / gran * gran;
  CUmemGenericAllocationHandle h;
  ck(cuMemCreate(&h, bytes, &prop, 0), "cuMemCreate");
  CUdeviceptr va = 0;
  ck(cuMemAddressReserve(&va, bytes, 0, 0, 0), "cuMemAddressReserve");
  ck(cuMemMap(va, bytes, 0, h, 0), "cuMemMap");
  CUmemAccessDesc access[2]{};
  for (int i = 0; i < 2; ++i) {
    access[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access[i].location.id = i == 0 ? 0 : dev;
    access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  ck(cuMemSetAccess(va, bytes, access, dev == 0 ? 1 : 2), "cuMemSetAccess");
  return reinterpret_cast<char*>(va);  // kept for the process's life, like the probe's other buffers
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc > 1 && std::strcmp(argv[1], "--stream-memops") == 0) return stream_memops();
  // --sched spin|yield: the context's host wait mode (default: the driver's auto choice, spin while the process has
  // fewer active contexts than cores), set before the context exists.
  unsigned sched = cudaDeviceScheduleAuto;
  if (argc > 1 && std::strcmp(argv[1], "--sched") == 0) {
    if (argc > 2 && std::strcmp(argv[2], "spin") == 0) sched = cudaDeviceScheduleSpin;
    else if (argc > 2 && std::strcmp(argv[2], "yield") == 0) sched = cudaDeviceScheduleYield;
    else {
      std::fprintf(stderr, "host_ops_probe: --sched takes spin or yield\n");
      return 2;
    }
  }
  int n = 0;
  ck(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  ck(cudaSetDevice(0), "cudaSetDevice");
  if (sched != cudaDeviceScheduleAuto) ck(cudaSetDeviceFlags(sched), "cudaSetDeviceFlags");
  ck(cudaFree(nullptr), "context");
  cudaDeviceProp prop{};
  ck(cudaGetDeviceProperties(&prop, 0), "props");
  std::printf("host_ops_probe: %d GPU(s), GPU 0 %s; %d calls per batch, median of %d batches; host waits: %s\n", n,
              prop.name, kIters, kReps,
              sched == cudaDeviceScheduleSpin ? "spin" : sched == cudaDeviceScheduleYield ? "yield" : "auto");
  std::srand(12345);
  cudaStream_t s;
  ck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  CUstream cs;
  ck(cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  char *local, *peer0, *pinned;
  int *mapped, *mapped_dev;
  ck(cudaMalloc(&local, 1 << 20), "malloc");
  ck(cudaMalloc(&peer0, 1 << 20), "malloc");
  ck(cudaHostAlloc(reinterpret_cast<void**>(&pinned), 16 * kRing + (1 << 20), cudaHostAllocDefault), "pinned");
  ck(cudaHostAlloc(reinterpret_cast<void**>(&mapped), 64, cudaHostAllocMapped), "mapped");
  ck(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped_dev), mapped, 0), "mapped ptr");
  run({"same GPU", peer0}, local, s, cs, pinned, mapped, mapped_dev);
  char* vmm_local = vmm_buffer(0, 1 << 20);  // the VMM targets' source too, as a symmetric buffer is
  run({"same GPU, VMM mapping both sides (as the library's heap)", vmm_buffer(0, 1 << 20)}, vmm_local, s, cs, pinned,
      mapped, mapped_dev);
  if (n > 1) {
    int can = 0;
    ck(cudaDeviceCanAccessPeer(&can, 0, 1), "canAccessPeer");
    if (can) {
      char* peer1;
      ck(cudaSetDevice(1), "dev1");
      ck(cudaMalloc(&peer1, 1 << 20), "malloc1");
      ck(cudaSetDevice(0), "dev0");
      ck(cudaDeviceEnablePeerAccess(1, 0), "peer access");
      run({"GPU 1 (peer access)", peer1}, local, s, cs, pinned, mapped, mapped_dev);
      run({"GPU 1, VMM mapping (as the library maps a peer's heap), VMM source",
           vmm_buffer(1, 1 << 20)}, vmm_local, s, cs, pinned, mapped, mapped_dev);
    }
  }
  std::printf(failures ? "host_ops_probe: %d check(s) FAILED\n" : "host_ops_probe: all checks passed\n", failures);
  return failures ? 1 : 0;
}
