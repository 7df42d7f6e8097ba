// bcast_probe: a broadcast from GPU 0 to the other GPUs of one process (3 or more), no library. Asked by the 4-PE
// broadcast rows on 4 x H200 (bench/NOTES.md entry 77): gshmem's two-shot (the root scatters a piece to each other
// GPU, each forwards its own piece to the rest) ran 15 % above the root's S / 354 GB/s at 256 MiB, where NCCL's ring
// is level with it, and a ring by SM copies with a fence and a flag a chunk lost to two-shot at every chunk size
// (each chunk cost a CTA ~2 us that no other work hid). What this measures, each shape's result checked:
//   ce two-shot   the root's copy engines send piece j to GPU j (one stream a piece); GPU j's stream waits for
//                 the root's flag, then copies its piece to every other non-root GPU (one stream a destination);
//                 one flag write a copy, no chunks.
//   ce chain      root -> 1 -> 2 -> ... by copy engines in K chunks over s streams per GPU (chunk c on stream
//                 c % s): GPU i's stream waits (cuStreamWaitValue64) for its flag of chunk c, copies chunk c from
//                 its buffer into GPU i + 1's, then writes GPU i + 1's flag (cuStreamWriteValue64 into the peer).
//                 With s = 2 a stream's ~2-5 us of memory operations a chunk (NOTES entry 69: 4 / 16 / 64 chunks
//                 with a flag each, 70.8 / 136.2 / 379.3 us at 16 MiB against 55.8 for one copy) can overlap the
//                 other stream's copy.
//   sm chain      the same chain by one kernel per GPU, C CTAs of 512 threads: CTA b copies its part of chunk c
//                 into the next GPU, then __syncthreads, one thread's __threadfence_system and a flag store; the
//                 next GPU's CTA b waits for it (the shape gshmem's ring broadcast had, bench/NOTES.md entry 77
//                 point 6). With G groups, CTA b is in group b % G and its group takes every G-th chunk, so that a
//                 group's fence overlaps the other groups' copies. First run (entry 78, 32 CTAs, 1 group): 852 us
//                 at 256 MiB in 64 chunks, so C = 32-128, G = 1-4 and up to 256 chunks now.
//   ll128 chain   the chain with no fence: 128-byte lines of 120 data bytes and the run's flag (NCCL's LL128
//                 layout), written by a warp's 16-byte-a-lane stores; a GPU waits on each line's flag, forwards the
//                 line and unpacks it. It carries 16/15 of the data (809 us at 256 MiB at 354 GB/s), but pays no
//                 fence and no chunk, so it should win from 1 to 64 MiB, where NCCL is 12.3 / 25.1 / 61.3 / 205 us
//                 at 1 / 4 / 16 / 64 MiB and gshmem's two-shot 15.4 / 30.2 / 68.5 / 228.
// The copy-engine shapes lost (entry 78: 937 us at best at 256 MiB); BCAST_SHAPES="ce sm ll128" runs them again
// (default "sm ll128").
// Each row: median of 10 (after 3 warm-ups; the last run's result checked word by word on every GPU) of the
// slowest GPU's time from a gate that the host opens for every GPU at once to its last operation's end; GB/s =
// S / time (a broadcast's bus bandwidth).
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -o bcast_probe bench/experiments/bcast_probe.cu -lcuda
// Run: ./bcast_probe [MiB ...] (default 1 4 16 64 256). STEPS=bcastprobe scripts/gpu-all.sh (with PES=4 on x4).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                                     \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)
#define CU(x)                                                                                     \
  do {                                                                                            \
    CUresult r_ = (x);                                                                            \
    if (r_ != CUDA_SUCCESS) {                                                                     \
      const char* s_ = nullptr;                                                                   \
      cuGetErrorString(r_, &s_);                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?");              \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

namespace {

constexpr int kMaxStreams = 4;
constexpr int kFlags = 256;  // flags a GPU holds: one a stream (ce chain), one a CTA (sm chain), one for two-shot

// Holds the stream until the host releases every GPU at once (flag >= epoch).
__global__ void gate(const volatile unsigned* flag, unsigned epoch) {
  while (*flag < epoch) {
  }
}
__global__ void fill(unsigned* p, size_t n, unsigned salt) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = static_cast<unsigned>(i * 2654435761u) ^ salt;
}
__device__ size_t dmin(size_t a, size_t b) { return a < b ? a : b; }
// Nanoseconds (%globaltimer): a wait gives up after 2 s, so that a shape that loses a flag ends with a wrong
// result instead of a hang.
__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
constexpr unsigned long long kWaitNs = 2000000000ull;
__device__ unsigned long long load_acquire_sys(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
// One GPU's part of the SM chain: `from` is the root's source or this GPU's buffer, `to` the next GPU's buffer
// (null on the last GPU), `mine` this GPU's flags (one a CTA), `next` the next GPU's; chunk c's flag value is
// base + c + 1. With `groups` > 1 the CTAs form that many groups (CTA b in group b % groups) and a group takes every
// groups-th chunk, so that one group's fence and flag overlap another group's copy.
__global__ void __launch_bounds__(512) sm_chain(const int4* from, int4* to, const unsigned long long* mine,
                                                unsigned long long* next, size_t n16, int chunks, int groups,
                                                bool root, unsigned long long base) {
  if (to == nullptr) return;
  const int group = blockIdx.x % groups, parts = gridDim.x / groups, part = blockIdx.x / groups;
  const size_t per_chunk = (n16 + chunks - 1) / chunks;
  for (int c = group; c < chunks; c += groups) {
    const size_t clo = dmin(n16, c * per_chunk), chi = dmin(n16, clo + per_chunk);
    const size_t per = (chi - clo + parts - 1) / parts;
    const size_t lo = dmin(chi, clo + part * per), hi = dmin(chi, lo + per);
    if (!root) {
      if (threadIdx.x == 0) {
        const unsigned long long t0 = now_ns();
        while (load_acquire_sys(mine + blockIdx.x) < base + c + 1 && now_ns() - t0 < kWaitNs) {
        }
      }
      __syncthreads();
    }
    for (size_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      int4 v;
      asm volatile("ld.global.v4.s32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(from + i));  // not the read-only path: the previous GPU wrote it during this kernel
      to[i] = v;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence_system();
      asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(next + blockIdx.x), "l"(base + c + 1) : "memory");
    }
  }
}

// One GPU's part of the LL128 chain: the data travels in 128-byte lines of 120 data bytes and, in the last 8, the
// run's flag value, so a line's flag says its data arrived (NVLink delivers a warp's aligned 128-byte store whole;
// NCCL's LL128 protocol rests on the same property, and the run's check would show a torn line) and no fence is
// needed. A warp moves 4 lines at a time, 8 lanes a line, 16 bytes a lane (lane 7 of 8: 8 data bytes and the
// flag); warp w takes line groups w, w + warps, ... so that every GPU's warps walk the data in the same order.
// The root packs `src` into the next GPU's staging lines; a middle GPU waits for its lines, forwards them
// unchanged, then unpacks them into `dst`; the last GPU waits and unpacks.
__global__ void __launch_bounds__(512) ll128_chain(const unsigned char* src, unsigned char* dst,
                                                   const ulonglong2* stage, ulonglong2* next_stage, size_t bytes,
                                                   unsigned long long flag) {
  const size_t lines = (bytes + 119) / 120;
  const int lane = threadIdx.x & 31, t = lane & 7;
  const size_t warp = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const size_t warps = (size_t(gridDim.x) * blockDim.x) >> 5;
  for (size_t l0 = warp * 4; l0 < lines; l0 += warps * 4) {
    const size_t line = l0 + (lane >> 3);
    const bool have = line < lines;
    const size_t off = line * 120 + 16 * t;  // this lane's data bytes in the payload
    unsigned long long x = 0, y = 0;
    if (stage == nullptr) {
      if (have) {
        if (off < bytes) x = *reinterpret_cast<const unsigned long long*>(src + off);
        if (t < 7) {
          if (off + 8 < bytes) y = *reinterpret_cast<const unsigned long long*>(src + off + 8);
        } else {
          y = flag;
        }
      }
    } else {
      const unsigned long long t0 = now_ns();
      for (;;) {
        if (have)
          asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(x), "=l"(y) : "l"(stage + line * 8 + t));
        const unsigned long long f = __shfl_sync(0xffffffffu, y, lane | 7);
        if (__all_sync(0xffffffffu, !have || f == flag) || __any_sync(0xffffffffu, now_ns() - t0 > kWaitNs)) break;
      }
    }
    if (have && next_stage != nullptr)
      asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(next_stage + line * 8 + t), "l"(x), "l"(y)
                   : "memory");
    if (have && dst != nullptr) {
      if (off < bytes) *reinterpret_cast<unsigned long long*>(dst + off) = x;
      if (t < 7 && off + 8 < bytes) *reinterpret_cast<unsigned long long*>(dst + off + 8) = y;
    }
  }
}

struct Gpu {
  cudaStream_t st[kMaxStreams];
  cudaStream_t main;
  cudaEvent_t a, b, done[kMaxStreams];
  unsigned* buf;                // the data: the source on GPU 0, the destination elsewhere
  unsigned long long* flags;    // kFlags, written by other GPUs
  ulonglong2* stage;            // the LL128 chain's lines, written by the previous GPU
};

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 3) {
    std::printf("bcast_probe: needs 3 GPUs or more, found %d\n", n);
    return 0;
  }
  std::vector<size_t> mibs;
  for (int i = 1; i < argc; ++i) mibs.push_back(std::strtoull(argv[i], nullptr, 10));
  if (mibs.empty()) mibs = {1, 4, 16, 64, 256};
  // BCAST_SHAPES: which shapes run ("ce", "sm", "ll128"; default "sm ll128": the copy-engine shapes were measured in
  // bench/NOTES.md entry 78 and lost)
  const char* shapes_env = std::getenv("BCAST_SHAPES");
  const std::string shapes = std::string(" ") + (shapes_env != nullptr ? shapes_env : "sm ll128") + " ";
  auto want = [&](const char* shape) { return shapes.find(std::string(" ") + shape + " ") != std::string::npos; };
  const size_t maxb = *std::max_element(mibs.begin(), mibs.end()) << 20;
  std::vector<Gpu> g(n);
  for (int i = 0; i < n; ++i) {
    CK(cudaSetDevice(i));
    for (int j = 0; j < n; ++j)
      if (j != i) {
        int can = 0;
        CK(cudaDeviceCanAccessPeer(&can, i, j));
        if (!can) {
          std::printf("bcast_probe: GPU %d cannot reach GPU %d\n", i, j);
          return 0;
        }
        CK(cudaDeviceEnablePeerAccess(j, 0));
      }
    for (auto& s : g[i].st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&g[i].main, cudaStreamNonBlocking));
    CK(cudaEventCreate(&g[i].a));
    CK(cudaEventCreate(&g[i].b));
    for (auto& e : g[i].done) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CK(cudaMalloc(&g[i].buf, maxb));
    CK(cudaMalloc(&g[i].flags, kFlags * sizeof(unsigned long long)));
    CK(cudaMalloc(&g[i].stage, (maxb + 119) / 120 * 128));
    CK(cudaMemset(g[i].flags, 0, kFlags * sizeof(unsigned long long)));
  }
  unsigned* hflag = nullptr;
  CK(cudaHostAlloc(&hflag, sizeof(unsigned), cudaHostAllocMapped | cudaHostAllocPortable));
  *hflag = 0;
  unsigned epoch = 0;
  unsigned long long seq = 0;  // flag values only grow: each run's start, advanced past its largest value
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("bcast_probe: %s x%d, broadcast from GPU 0\n", prop.name, n);
  for (size_t mib : mibs) {
    const size_t bytes = mib << 20, nu = bytes / 4;
    // `op(i, base)` enqueues GPU i's part on streams st[0..streams) behind a gate every GPU's main stream waits on;
    // `base` is the run's first flag value. The time is main's, which waits for the streams it used.
    auto run = [&](const std::string& name, int streams, const std::function<void(int, unsigned long long)>& op) {
      std::vector<float> t;
      bool ok = true;
      for (int rep = 0; rep < 13; ++rep) {
        const unsigned salt = 0x9e3779b9u * unsigned(rep + 1) + unsigned(mib);
        CK(cudaSetDevice(0));
        fill<<<264, 512>>>(g[0].buf, nu, salt);
        CK(cudaDeviceSynchronize());
        for (int i = 1; i < n; ++i) {
          CK(cudaSetDevice(i));
          CK(cudaMemset(g[i].buf, 0xff, bytes));
          CK(cudaDeviceSynchronize());
        }
        ++epoch;
        const unsigned long long base = seq;
        seq += 1 << 20;
        for (int i = 0; i < n; ++i) {
          CK(cudaSetDevice(i));
          unsigned* dflag = nullptr;
          CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dflag), hflag, 0));
          gate<<<1, 1, 0, g[i].main>>>(dflag, epoch);
          CK(cudaEventRecord(g[i].a, g[i].main));
          for (int s = 0; s < streams; ++s) CK(cudaStreamWaitEvent(g[i].st[s], g[i].a, 0));
          op(i, base);
          for (int s = 0; s < streams; ++s) {
            CK(cudaEventRecord(g[i].done[s], g[i].st[s]));
            CK(cudaStreamWaitEvent(g[i].main, g[i].done[s], 0));
          }
          CK(cudaEventRecord(g[i].b, g[i].main));
        }
        reinterpret_cast<volatile unsigned*>(hflag)[0] = epoch;  // every GPU starts now
        float worst = 0;
        for (int i = 0; i < n; ++i) {
          CK(cudaSetDevice(i));
          CK(cudaEventSynchronize(g[i].b));
          float ms;
          CK(cudaEventElapsedTime(&ms, g[i].a, g[i].b));
          worst = std::max(worst, ms);
        }
        if (rep >= 3) t.push_back(worst);
        if (rep != 12) continue;  // the last run's result is checked whole on every GPU
        std::vector<unsigned> h(nu);
        for (int i = 1; i < n && ok; ++i) {
          CK(cudaSetDevice(i));
          CK(cudaMemcpy(h.data(), g[i].buf, bytes, cudaMemcpyDeviceToHost));
          for (size_t k = 0; k < nu && ok; ++k)
            if (h[k] != (static_cast<unsigned>(k * 2654435761u) ^ salt)) {
              std::printf("  %s: GPU %d word %zu wrong\n", name.c_str(), i, k);
              ok = false;
            }
        }
      }
      std::sort(t.begin(), t.end());
      const double us = 1000.0 * t[t.size() / 2];
      std::printf("%-40s %5zu MiB %10.1f us %7.1f GB/s%s\n", name.c_str(), mib, us, bytes / us / 1000.0,
                  ok ? "" : "  WRONG RESULT");
      std::fflush(stdout);
    };
    auto peer_flag = [&](int to, int k) { return reinterpret_cast<CUdeviceptr>(g[to].flags + k); };
    auto mine_flag = [&](int i, int k) { return reinterpret_cast<CUdeviceptr>(g[i].flags + k); };
    auto cs = [&](int i, int s) { return reinterpret_cast<CUstream>(g[i].st[s]); };
    // ce two-shot: pieces j = 1 .. n - 1 of the data, piece j owned by GPU j.
    if (want("ce")) {
      const size_t per = (nu / (n - 1) + 63) / 64 * 64;
      auto piece = [&](int j, size_t& lo, size_t& len) {
        lo = std::min(nu, (j - 1) * per);
        len = std::min(nu, lo + per) - lo;
      };
      const int streams = std::min(kMaxStreams, n - 1);
      run("ce two-shot", streams, [&](int i, unsigned long long base) {
        size_t lo, len;
        if (i == 0) {
          for (int j = 1; j < n; ++j) {
            piece(j, lo, len);
            const int s = (j - 1) % streams;
            CK(cudaMemcpyAsync(g[j].buf + lo, g[0].buf + lo, len * 4, cudaMemcpyDeviceToDevice, g[0].st[s]));
            CU(cuStreamWriteValue64(cs(0, s), peer_flag(j, kFlags - 1), base + 1, 0));
          }
          return;
        }
        piece(i, lo, len);
        CU(cuStreamWaitValue64(cs(i, 0), mine_flag(i, kFlags - 1), base + 1, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cudaEventRecord(g[i].done[0], g[i].st[0]));
        int s = 0;
        for (int k = 1; k < n; ++k) {
          const int to = (i + k) % n;
          if (to == 0) continue;
          if (s > 0) CK(cudaStreamWaitEvent(g[i].st[s % streams], g[i].done[0], 0));
          CK(cudaMemcpyAsync(g[to].buf + lo, g[i].buf + lo, len * 4, cudaMemcpyDeviceToDevice,
                             g[i].st[s % streams]));
          ++s;
        }
      });
    }
    // ce chain: K chunks over s streams.
    for (int streams : {1, 2}) {
      if (!want("ce")) break;
      for (int chunks : {4, 8, 16, 32, 64}) {
        if (static_cast<size_t>(chunks) << 20 > bytes * 4) continue;  // chunks of 256 KiB at least
        const size_t per = (nu / chunks + 63) / 64 * 64;
        run("ce chain, " + std::to_string(chunks) + " chunks, " + std::to_string(streams) + " stream" +
                (streams > 1 ? "s" : ""),
            streams, [&](int i, unsigned long long base) {
              if (i == n - 1) return;
              for (int c = 0; c < chunks; ++c) {
                const size_t lo = std::min(nu, c * per), len = std::min(nu, lo + per) - lo;
                const int s = c % streams;
                if (i > 0)
                  CU(cuStreamWaitValue64(cs(i, s), mine_flag(i, s), base + c + 1, CU_STREAM_WAIT_VALUE_GEQ));
                if (len > 0)
                  CK(cudaMemcpyAsync(g[i + 1].buf + lo, g[i].buf + lo, len * 4, cudaMemcpyDeviceToDevice,
                                     g[i].st[s]));
                CU(cuStreamWriteValue64(cs(i, s), peer_flag(i + 1, s), base + c + 1, 0));
              }
            });
      }
    }
    // sm chain: K chunks over C CTAs in G groups, a flag a CTA (chunks of 64 KiB at least).
    if (want("sm")) {
      struct Shape {
        int ctas, groups;
        std::vector<int> chunks;
      };
      for (const Shape& sh : {Shape{32, 1, {16, 64, 128, 256}}, Shape{64, 1, {64, 128, 256}},
                              Shape{128, 1, {64, 128, 256}}, Shape{64, 2, {64, 128, 256}},
                              Shape{128, 2, {64, 128, 256}}, Shape{128, 4, {128, 256}}}) {
        for (int chunks : sh.chunks) {
          if (static_cast<size_t>(chunks) << 16 > bytes) continue;
          run("sm chain, " + std::to_string(chunks) + " chunks, " + std::to_string(sh.ctas) + " CTAs" +
                  (sh.groups > 1 ? " / " + std::to_string(sh.groups) + " groups" : ""),
              1, [&](int i, unsigned long long base) {
                sm_chain<<<sh.ctas, 512, 0, g[i].st[0]>>>(
                    reinterpret_cast<const int4*>(g[i].buf), i + 1 < n ? reinterpret_cast<int4*>(g[i + 1].buf) : nullptr,
                    g[i].flags, i + 1 < n ? g[i + 1].flags : nullptr, bytes / 16, chunks, sh.groups, i == 0, base);
              });
        }
      }
    }
    // ll128 chain: C CTAs of 512 threads, the flag in every line.
    if (want("ll128")) {
      for (int ctas : {32, 64, 132}) {
        run("ll128 chain, " + std::to_string(ctas) + " CTAs", 1, [&](int i, unsigned long long base) {
          ll128_chain<<<ctas, 512, 0, g[i].st[0]>>>(
              reinterpret_cast<const unsigned char*>(g[i].buf), i > 0 ? reinterpret_cast<unsigned char*>(g[i].buf) : nullptr,
              i > 0 ? g[i].stage : nullptr, i + 1 < n ? g[i + 1].stage : nullptr, bytes, base + 1);
        });
      }
    }
  }
  return 0;
}
