// bidir_probe: two GPUs of one process, no library. How fast data crosses NVLink when both GPUs send at once (as
// in an allreduce or all-gather at 2 PEs), by SM stores, SM loads and the copy engine, against one direction alone;
// and the two shapes a 2-PE allreduce could take: one-shot (each GPU loads the peer's whole source and adds its own)
// and two-shot with a copy-engine gather (each GPU reduces its half from the peer's source by loads, then the copy
// engine writes that half into the peer's destination). Every variant's result is checked.
// And the copy engine cut into chunks, each followed by cuStreamWriteValue64 of a flag into the peer (what a
// sync-free push through scratch would issue, bench/NOTES.md entry 56), against one copy.
// And the one-shot push allreduce (NOTES entry 58): each GPU stores its source into the peer's scratch by SM stores in
// K parts a CTA, a flag after each part, and reduces the peer's part c - 1 (its source + the scratch) after pushing
// part c, so the reduce runs under the link traffic and only the last part's reduce is left after it.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -o bidir_probe bench/experiments/bidir_probe.cu -lcuda
// Run: ./bidir_probe [MiB ...] (default 16 256). Prints median µs over 10 runs and GB/s per direction.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

__global__ void copy16(int4* __restrict__ d, const int4* __restrict__ s, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) d[i] = s[i];
}
// d[i] = a[i] + b[i] over floats, 4 chunks a thread in flight
__global__ void add16(float4* __restrict__ d, const float4* __restrict__ a, const float4* __restrict__ b, size_t n) {
  const size_t step = size_t(gridDim.x) * blockDim.x;
  for (size_t base = blockIdx.x * size_t(blockDim.x) + threadIdx.x; base < n; base += 4 * step) {
    float4 va[4], vb[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (base + k * step < n) { va[k] = a[base + k * step]; vb[k] = b[base + k * step]; }
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (base + k * step < n)
        d[base + k * step] = make_float4(va[k].x + vb[k].x, va[k].y + vb[k].y, va[k].z + vb[k].z, va[k].w + vb[k].w);
  }
}
// Holds the stream until the host releases every GPU at once (flag >= epoch), so that "both" rows time the two
// GPUs' work from one moment, not from two launches some microseconds apart.
__global__ void gate(const volatile unsigned* flag, unsigned epoch) {
  while (*flag < epoch) {
  }
}
__device__ void store_release_sys(unsigned long long* p, unsigned long long v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ unsigned long long load_acquire_sys(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
// CTA b owns float4s [lo, hi) of the buffer, cut into `parts`; flag b of each GPU counts the parts the peer's CTA b
// has stored into this GPU's scratch (values base + 1 .. base + parts for this run).
__global__ void push_reduce(float4* __restrict__ dst, const float4* __restrict__ src, float4* peer_scratch,
                            const float4* scratch, unsigned long long* peer_flags, unsigned long long* flags, size_t n,
                            int parts, unsigned long long base) {
  const size_t per = (n + gridDim.x - 1) / gridDim.x;
  const size_t lo = min(n, blockIdx.x * per), len = min(n, lo + per) - lo, sub = (len + parts - 1) / parts;
  for (int c = 0; c <= parts; ++c) {
    if (c < parts) {
      const size_t a = lo + min(len, c * sub), b = lo + min(len, (c + 1) * sub);
      for (size_t i = a + threadIdx.x; i < b; i += blockDim.x) peer_scratch[i] = src[i];
      __syncthreads();
      if (threadIdx.x == 0) {
        __threadfence_system();
        store_release_sys(peer_flags + blockIdx.x, base + c + 1);
      }
    }
    if (c > 0) {
      if (threadIdx.x == 0)
        while (load_acquire_sys(flags + blockIdx.x) < base + c) {
        }
      __syncthreads();
      const size_t a = lo + min(len, (c - 1) * sub), b = lo + min(len, c * sub);
      for (size_t i = a + threadIdx.x; i < b; i += blockDim.x) {
        const float4 x = src[i], y = __ldcg(scratch + i);
        dst[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
      }
    }
  }
}
// A warp's lane-strided part [i, end) of float4s: into the peer's scratch, four a lane in flight; dst = src + scratch
__device__ void push_part(float4* peer_scratch, const float4* __restrict__ src, size_t i, size_t end) {
  for (; i + 96 < end; i += 128) {
    const float4 x0 = src[i], x1 = src[i + 32], x2 = src[i + 64], x3 = src[i + 96];
    peer_scratch[i] = x0;
    peer_scratch[i + 32] = x1;
    peer_scratch[i + 64] = x2;
    peer_scratch[i + 96] = x3;
  }
  for (; i < end; i += 32) peer_scratch[i] = src[i];
}
__device__ void reduce_part(float4* __restrict__ dst, const float4* __restrict__ src, const float4* scratch, size_t i,
                            size_t end) {
  for (; i < end; i += 32) {
    const float4 x = src[i], y = __ldcg(scratch + i);
    dst[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}
// The same with warps instead of CTAs (NOTES entry 60): warp w of the grid owns its own slice, parts and flag, with
// no barrier among the warps. Each round stores part c, then reduces part c - 1 while those stores drain, and only
// then fences and raises flag c, so the fence waits for what is left of the drain instead of all of it.
__global__ void push_reduce_warp(float4* __restrict__ dst, const float4* __restrict__ src, float4* peer_scratch,
                                 const float4* scratch, unsigned long long* peer_flags, unsigned long long* flags,
                                 size_t n, int parts, unsigned long long base) {
  const unsigned lane = threadIdx.x & 31;
  const size_t warps = size_t(gridDim.x) * (blockDim.x / 32), w = blockIdx.x * size_t(blockDim.x / 32) + threadIdx.x / 32;
  const size_t per = (n + warps - 1) / warps;
  const size_t lo = min(n, w * per), len = min(n, lo + per) - lo, sub = (len + parts - 1) / parts;
  for (int c = 0; c <= parts; ++c) {
    if (c < parts) {
      const size_t a = lo + min(len, c * sub), b = lo + min(len, (c + 1) * sub);
      push_part(peer_scratch, src, a + lane, b);
    }
    if (c > 0) {
      if (lane == 0)
        while (load_acquire_sys(flags + w) < base + c) {
        }
      __syncwarp();
      const size_t a = lo + min(len, (c - 1) * sub), b = lo + min(len, c * sub);
      reduce_part(dst, src, scratch, a + lane, b);
    }
    if (c < parts) {
      __syncwarp();
      if (lane == 0) {
        __threadfence_system();
        store_release_sys(peer_flags + w, base + c + 1);
      }
    }
  }
}
// Warp-specialised: in each CTA the first half of the warps only push (parts, a fence and a flag each) and the
// second half only reduce what the peer's matching warp pushed, part by part as its flags come, so the link never
// waits for a reduce.
__global__ void push_reduce_ws(float4* __restrict__ dst, const float4* __restrict__ src, float4* peer_scratch,
                               const float4* scratch, unsigned long long* peer_flags, unsigned long long* flags,
                               size_t n, int parts, unsigned long long base) {
  const unsigned lane = threadIdx.x & 31, half = blockDim.x / 64, wib = threadIdx.x / 32;
  const bool pusher = wib < half;
  const size_t warps = size_t(gridDim.x) * half, w = blockIdx.x * size_t(half) + (pusher ? wib : wib - half);
  const size_t per = (n + warps - 1) / warps;
  const size_t lo = min(n, w * per), len = min(n, lo + per) - lo, sub = (len + parts - 1) / parts;
  for (int c = 0; c < parts; ++c) {
    const size_t a = lo + min(len, c * sub), b = lo + min(len, (c + 1) * sub);
    if (pusher) {
      push_part(peer_scratch, src, a + lane, b);
      __syncwarp();
      if (lane == 0) {
        __threadfence_system();
        store_release_sys(peer_flags + w, base + c + 1);
      }
    } else {
      if (lane == 0)
        while (load_acquire_sys(flags + w) < base + c + 1) {
        }
      __syncwarp();
      reduce_part(dst, src, scratch, a + lane, b);
    }
  }
}
__global__ void fill(float* p, size_t n, float base) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = base + float(i % 1000);
}

struct Gpu {
  int dev;
  cudaStream_t st;
  cudaEvent_t a, b;
  float *src, *dst, *scratch;
  unsigned long long* flags;  // chunk flags the peer's stream writes (kMaxChunks)
  unsigned long long* part_flags;  // push_reduce's flags, one a CTA or warp (kMaxCtas), written by the peer
};
constexpr int kMaxChunks = 64;
constexpr int kMaxCtas = 1 << 16;  // flags for push_reduce's CTAs or push_reduce_warp's warps

int main(int argc, char** argv) {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) { std::printf("bidir_probe: needs 2 GPUs, found %d\n", n); return 0; }
  std::vector<size_t> mibs;
  for (int i = 1; i < argc; ++i) mibs.push_back(std::strtoull(argv[i], nullptr, 10));
  if (mibs.empty()) mibs = {16, 256};
  const size_t maxb = *std::max_element(mibs.begin(), mibs.end()) << 20;
  Gpu g[2];
  for (int i = 0; i < 2; ++i) {
    g[i].dev = i;
    CK(cudaSetDevice(i));
    CK(cudaDeviceEnablePeerAccess(1 - i, 0));
    CK(cudaStreamCreateWithFlags(&g[i].st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&g[i].a));
    CK(cudaEventCreate(&g[i].b));
    CK(cudaMalloc(&g[i].src, maxb));
    CK(cudaMalloc(&g[i].dst, maxb));
    CK(cudaMalloc(&g[i].flags, kMaxChunks * sizeof(unsigned long long)));
    CK(cudaMemset(g[i].flags, 0, kMaxChunks * sizeof(unsigned long long)));
    CK(cudaMalloc(&g[i].scratch, maxb));
    CK(cudaMalloc(&g[i].part_flags, kMaxCtas * sizeof(unsigned long long)));
    CK(cudaMemset(g[i].part_flags, 0, kMaxCtas * sizeof(unsigned long long)));
  }
  unsigned long long seq = 0;  // the value the chunked copies' flags carry, one per run
  unsigned long long part_base = 0;  // push_reduce's flag base, advanced by `parts` each run
  unsigned* flag = nullptr;  // mapped pinned memory that both GPUs' gate kernels read
  CK(cudaHostAlloc(&flag, sizeof(unsigned), cudaHostAllocMapped | cudaHostAllocPortable));
  *flag = 0;
  unsigned epoch = 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("bidir_probe: %s x2, %d SMs\n", prop.name, prop.multiProcessorCount);
  for (size_t mib : mibs) {
    const size_t bytes = mib << 20, nf = bytes / 4, n16 = bytes / 16;
    for (int i = 0; i < 2; ++i) {
      CK(cudaSetDevice(i));
      fill<<<264, 512>>>(g[i].src, nf, float(i + 1));
      CK(cudaDeviceSynchronize());
    }
    // `op(i)` enqueues GPU i's part on its stream behind a gate that the host opens for every GPU at once; `who` 1:
    // GPU 0 only, 2: both. Median over 10 of the slower GPU's time from the gate's opening to its end.
    auto run = [&](const char* name, int who, double moved, const std::function<void(int)>& op,
                   const std::function<bool()>& check) {
      std::vector<float> t;
      for (int rep = 0; rep < 13; ++rep) {
        ++epoch;
        for (int i = 0; i < who; ++i) {
          CK(cudaSetDevice(i));
          unsigned* dflag = nullptr;
          CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dflag), flag, 0));
          gate<<<1, 1, 0, g[i].st>>>(dflag, epoch);
          CK(cudaEventRecord(g[i].a, g[i].st));
          op(i);
          CK(cudaEventRecord(g[i].b, g[i].st));
        }
        reinterpret_cast<volatile unsigned*>(flag)[0] = epoch;  // both GPUs start now
        float worst = 0;
        for (int i = 0; i < who; ++i) {
          CK(cudaSetDevice(i));
          CK(cudaEventSynchronize(g[i].b));
          float ms;
          CK(cudaEventElapsedTime(&ms, g[i].a, g[i].b));
          worst = std::max(worst, ms);
        }
        if (rep >= 3) t.push_back(worst);
      }
      std::sort(t.begin(), t.end());
      const double us = 1000.0 * t[t.size() / 2];
      const bool ok = check();
      std::printf("%-44s %5zu MiB %s %10.1f us %7.1f GB/s per direction%s\n", name, mib, who == 2 ? "both" : "one ",
                  us, moved / us / 1000.0, ok ? "" : "  WRONG RESULT");
    };
    auto clear = [&] {
      for (int i = 0; i < 2; ++i) {
        CK(cudaSetDevice(i));
        CK(cudaMemset(g[i].dst, 0xff, bytes));
        CK(cudaDeviceSynchronize());
      }
    };
    // dst of GPU j holds src of GPU `from(j)` in [lo, hi) floats
    auto holds = [&](int j, int from, size_t lo, size_t hi, bool sum) {
      std::vector<float> h(hi - lo);
      CK(cudaSetDevice(j));
      CK(cudaMemcpy(h.data(), g[j].dst + lo, (hi - lo) * 4, cudaMemcpyDeviceToHost));
      for (size_t k = 0; k < hi - lo; k += 4099) {
        const float v = float((lo + k) % 1000);
        const float want = sum ? 3.0f + 2 * v : float(from + 1) + v;
        if (h[k] != want) return false;
      }
      return true;
    };
    for (int who = 1; who <= 2; ++who) {
      for (int ctas : {32, 132}) {
        clear();
        run(("SM stores, " + std::to_string(ctas) + " CTAs").c_str(), who, bytes, [&](int i) {
          copy16<<<ctas, 512, 0, g[i].st>>>(reinterpret_cast<int4*>(g[1 - i].dst), reinterpret_cast<int4*>(g[i].src), n16);
        }, [&] { return holds(1, 0, 0, nf, false) && (who == 1 || holds(0, 1, 0, nf, false)); });
        clear();
        run(("SM loads, " + std::to_string(ctas) + " CTAs").c_str(), who, bytes, [&](int i) {
          copy16<<<ctas, 512, 0, g[i].st>>>(reinterpret_cast<int4*>(g[i].dst), reinterpret_cast<int4*>(g[1 - i].src), n16);
        }, [&] { return holds(0, 1, 0, nf, false) && (who == 1 || holds(1, 0, 0, nf, false)); });
      }
      clear();
      run("copy engine (cudaMemcpyAsync into the peer)", who, bytes, [&](int i) {
        CK(cudaMemcpyAsync(g[1 - i].dst, g[i].src, bytes, cudaMemcpyDeviceToDevice, g[i].st));
      }, [&] { return holds(1, 0, 0, nf, false) && (who == 1 || holds(0, 1, 0, nf, false)); });
    }
    // Chunked copy-engine pushes, both GPUs, each chunk's flag written into the peer after it (stream order).
    for (int chunks : {4, 16, 64}) {
      clear();
      const size_t cb = bytes / chunks;
      run(("copy engine, " + std::to_string(chunks) + " chunks + a flag each").c_str(), 2, bytes, [&](int i) {
        if (i == 0) ++seq;
        for (int c = 0; c < chunks; ++c) {
          CK(cudaMemcpyAsync(reinterpret_cast<char*>(g[1 - i].dst) + c * cb, reinterpret_cast<char*>(g[i].src) + c * cb,
                             cb, cudaMemcpyDeviceToDevice, g[i].st));
          if (cuStreamWriteValue64(reinterpret_cast<CUstream>(g[i].st),
                                   reinterpret_cast<CUdeviceptr>(g[1 - i].flags + c), seq, 0) != CUDA_SUCCESS) {
            std::fprintf(stderr, "cuStreamWriteValue64 into the peer failed\n");
            std::exit(1);
          }
        }
      }, [&] {
        for (int j = 0; j < 2; ++j) {
          unsigned long long f[kMaxChunks];
          CK(cudaSetDevice(j));
          CK(cudaMemcpy(f, g[j].flags, sizeof(f), cudaMemcpyDeviceToHost));
          for (int c = 0; c < chunks; ++c)
            if (f[c] != seq) return false;
        }
        return holds(0, 1, 0, nf, false) && holds(1, 0, 0, nf, false);
      });
    }
    // allreduce shapes, both GPUs (dst = src0 + src1 on both). Two-shot: GPU i reduces its half [lo, lo + cnt) of
    // the float4s by loads from the peer, then one of the gathers below writes that half into the peer's dst.
    auto both_sums = [&] { return holds(0, 0, 0, nf, true) && holds(1, 0, 0, nf, true); };
    auto half = [&](int i, size_t& lo, size_t& cnt) {
      lo = i == 0 ? 0 : n16 / 2;
      cnt = i == 0 ? n16 / 2 : n16 - n16 / 2;
    };
    auto reduce_half = [&](int i, int ctas, size_t lo, size_t cnt) {
      add16<<<ctas, 512, 0, g[i].st>>>(reinterpret_cast<float4*>(g[i].dst) + lo,
                                       reinterpret_cast<float4*>(g[i].src) + lo,
                                       reinterpret_cast<float4*>(g[1 - i].src) + lo, cnt);
    };
    for (int ctas : {32, 132}) {
      clear();
      run(("allreduce one-shot loads, " + std::to_string(ctas) + " CTAs").c_str(), 2, bytes,
          [&](int i) { reduce_half(i, ctas, 0, n16); }, both_sums);
      clear();
      run(("allreduce two-shot, loads + CE gather, " + std::to_string(ctas)).c_str(), 2, bytes, [&](int i) {
        size_t lo, cnt;
        half(i, lo, cnt);
        reduce_half(i, ctas, lo, cnt);
        CK(cudaMemcpyAsync(reinterpret_cast<float4*>(g[1 - i].dst) + lo, reinterpret_cast<float4*>(g[i].dst) + lo,
                           cnt * 16, cudaMemcpyDeviceToDevice, g[i].st));
      }, both_sums);
      clear();
      run(("allreduce two-shot, loads + SM-store gather, " + std::to_string(ctas)).c_str(), 2, bytes, [&](int i) {
        size_t lo, cnt;
        half(i, lo, cnt);
        reduce_half(i, ctas, lo, cnt);
        copy16<<<ctas, 512, 0, g[i].st>>>(reinterpret_cast<int4*>(g[1 - i].dst) + lo,
                                          reinterpret_cast<int4*>(g[i].dst) + lo, cnt);
      }, both_sums);
    }
    // The one-shot push: grid sizes × parts a CTA, then a warp. Every flag only grows, so runs need no reset.
    for (int ctas : {132}) {
      for (int parts : {4}) {
        clear();
        run(("allreduce push, " + std::to_string(ctas) + " CTAs x " + std::to_string(parts) + " parts").c_str(), 2,
            bytes, [&](int i) {
          if (i == 0) part_base += parts;
          push_reduce<<<ctas, 512, 0, g[i].st>>>(reinterpret_cast<float4*>(g[i].dst),
                                                 reinterpret_cast<const float4*>(g[i].src),
                                                 reinterpret_cast<float4*>(g[1 - i].scratch),
                                                 reinterpret_cast<const float4*>(g[i].scratch), g[1 - i].part_flags,
                                                 g[i].part_flags, n16, parts, part_base - parts);
        }, both_sums);
      }
    }
    for (int ctas : {132, 264, 528}) {
      for (int parts : {1, 2, 4, 8, 16}) {
        for (int ws = 0; ws < 2; ++ws) {
        clear();
        run(((ws ? "allreduce push, warp-specialised, " : "allreduce push by warps, ") + std::to_string(ctas) +
             " CTAs x " + std::to_string(parts) + " parts").c_str(), 2, bytes, [&](int i) {
          if (i == 0) part_base += parts;
          (ws ? push_reduce_ws : push_reduce_warp)<<<ctas, 512, 0, g[i].st>>>(reinterpret_cast<float4*>(g[i].dst),
                                                      reinterpret_cast<const float4*>(g[i].src),
                                                      reinterpret_cast<float4*>(g[1 - i].scratch),
                                                      reinterpret_cast<const float4*>(g[i].scratch), g[1 - i].part_flags,
                                                      g[i].part_flags, n16, parts, part_base - parts);
        }, both_sums);
        }
      }
    }
  }
  return 0;
}
