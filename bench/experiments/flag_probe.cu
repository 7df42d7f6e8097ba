// flag_probe: what a signal costs at each memory order, one thread, two GPUs of one process, no library. Asked by
// bench rows signal_set (gshmem 0.90 us a call, NVSHMEM 0.065) and signal_wait_satisfied (0.220 / 0.192) on
// 2 x H200 (bench/NOTES.md entry 71):
//   wait: a chain of N loads of a word of GPU 0's memory that already holds 1 (each address depends on the previous
//         value, so loads cannot overlap), by ld.acquire.sys, ld.acquire.gpu, ld.relaxed.sys, ld.volatile and
//         ld.relaxed.sys followed by fence.acq_rel.gpu, and the first and fourth on a generic address (no .global);
//         time per load.
//   set:  N stores or reductions into a word of GPU 1's memory by st.release.sys, st.relaxed.sys, st.volatile,
//         red.release.sys.add, red.relaxed.sys.add, then one fence.sc.sys; time per operation.
//   mp:   message passing across the link, R rounds: a thread on GPU 1 writes 8 data words of round r into GPU 0's
//         memory, then the flag with st.release.sys; a thread on GPU 0 reads the data once before waiting (to have
//         its lines in L1), waits for the flag >= r with each load order above, then reads the data with plain
//         loads and counts words older than r. The count is what each order lets through on this hardware.
// Every time is a median of 5 runs of a kernel timed with CUDA events. Needs 2 GPUs with peer access.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -o flag_probe bench/experiments/flag_probe.cu; STEPS=flagprobe
// scripts/gpu-all.sh builds, runs and disassembles it (the SASS of each variant shows what the order compiles to).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "flag_probe: %s failed: %s\n", #x, cudaGetErrorString(e_));             \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

enum Load { ACQ_SYS, ACQ_GPU, RLX_SYS, VOLATILE, RLX_FENCE_GPU, ACQ_SYS_GENERIC, VOLATILE_GENERIC, LOADS };
const char* load_name[] = {"ld.acquire.sys", "ld.acquire.gpu", "ld.relaxed.sys", "ld.volatile",
                           "ld.relaxed.sys + fence.acq_rel.gpu", "ld.acquire.sys (generic address)",
                           "ld.volatile (generic address)"};
enum Store { ST_REL_SYS, ST_RLX_SYS, ST_VOLATILE, RED_REL_SYS, RED_RLX_SYS, STORES };
const char* store_name[] = {"st.release.sys", "st.relaxed.sys", "st.volatile", "red.release.sys.add",
                            "red.relaxed.sys.add"};

template <int L>
__device__ __forceinline__ uint64_t load(const uint64_t* p) {
  uint64_t v;
  if constexpr (L == ACQ_SYS) asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  if constexpr (L == ACQ_GPU) asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  if constexpr (L == RLX_SYS) asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  if constexpr (L == VOLATILE) asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  if constexpr (L == RLX_FENCE_GPU)
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];\n\tfence.acq_rel.gpu;" : "=l"(v) : "l"(p) : "memory");
  if constexpr (L == ACQ_SYS_GENERIC) asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  if constexpr (L == VOLATILE_GENERIC) asm volatile("ld.volatile.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
template <int S>
__device__ __forceinline__ void store(uint64_t* p, uint64_t v) {
  if constexpr (S == ST_REL_SYS) asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  if constexpr (S == ST_RLX_SYS) asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  if constexpr (S == ST_VOLATILE) asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  if constexpr (S == RED_REL_SYS) asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  if constexpr (S == RED_RLX_SYS) asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// word[0] holds 1 and word[1] 0: the next address is word + (v >> 63), always word[0], but the load must wait.
template <int L>
__global__ void wait_chain(const uint64_t* word, uint64_t n, uint64_t* sink) {
  uint64_t acc = 0;
  for (uint64_t i = 0; i < n; ++i) acc += load<L>(word + (acc >> 63));
  *sink = acc;
}
template <int S>
__global__ void set_run(uint64_t* peer_word, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) store<S>(peer_word, i + 1);
  asm volatile("fence.sc.sys;" ::: "memory");
}

constexpr int kWords = 8;
// Writer on GPU 1: data (in GPU 0's memory) then the flag, round by round; waits for the reader's ack each round so
// that the reader's early read of round r's data sees round r - 1's.
__global__ void mp_writer(uint64_t* data, uint64_t* flag, const uint64_t* ack, uint64_t rounds) {
  for (uint64_t r = 1; r <= rounds; ++r) {
    while (load<ACQ_SYS>(ack) < r - 1) {
    }
    for (int i = 0; i < kWords; ++i) data[i] = r;
    store<ST_REL_SYS>(flag, r);
  }
}
template <int L>
__global__ void mp_reader(const uint64_t* data, const uint64_t* flag, uint64_t* ack, uint64_t rounds,
                          unsigned long long* stale) {
  unsigned long long bad = 0, early = 0;
  for (uint64_t r = 1; r <= rounds; ++r) {
    for (int i = 0; i < kWords; ++i) early += data[i];  // pulls the lines into L1
    while (load<L>(flag) < r) {
    }
    for (int i = 0; i < kWords; ++i) bad += data[i] < r;
    store<ST_REL_SYS>(ack, r);
  }
  stale[0] = bad;
  stale[1] = early;  // keeps the early reads
}

template <typename F>
float median_ms(F&& launch) {
  std::vector<float> t;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch();  // warm-up
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < 5; ++i) {
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[2];
}

template <int L>
void run_wait(uint64_t* word, uint64_t* sink, uint64_t n) {
  const float ms = median_ms([&] { wait_chain<L><<<1, 1>>>(word, n, sink); });
  std::printf("wait  %-36s %8.4f us per load\n", load_name[L], ms * 1e3 / double(n));
}
template <int S>
void run_set(uint64_t* peer_word, uint64_t n) {
  const float ms = median_ms([&] { set_run<S><<<1, 1>>>(peer_word, n); });
  std::printf("set   %-36s %8.4f us per op (into GPU 1)\n", store_name[S], ms * 1e3 / double(n));
}
template <int L>
void run_mp(uint64_t* data, uint64_t* flag, uint64_t* ack, unsigned long long* stale, uint64_t rounds) {
  CK(cudaMemset(data, 0, kWords * sizeof(uint64_t)));
  CK(cudaMemset(flag, 0, sizeof(uint64_t)));
  CK(cudaMemset(ack, 0, sizeof(uint64_t)));
  CK(cudaDeviceSynchronize());
  CK(cudaSetDevice(1));
  mp_writer<<<1, 1>>>(data, flag, ack, rounds);
  CK(cudaGetLastError());
  CK(cudaSetDevice(0));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a));
  mp_reader<L><<<1, 1>>>(data, flag, ack, rounds, stale);
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  CK(cudaSetDevice(1));
  CK(cudaDeviceSynchronize());
  CK(cudaSetDevice(0));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  unsigned long long h[2];
  CK(cudaMemcpy(h, stale, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("mp    %-36s %llu stale words in %llu rounds x %d (%.3f us a round trip)\n", load_name[L], h[0],
              static_cast<unsigned long long>(rounds), kWords, ms * 1e3 / double(rounds));
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  const uint64_t rounds = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100000;
  int ngpu = 0;
  CK(cudaGetDeviceCount(&ngpu));
  int can = 0;
  if (ngpu >= 2) CK(cudaDeviceCanAccessPeer(&can, 0, 1));
  if (!can) {
    std::fprintf(stderr, "flag_probe: needs 2 GPUs with peer access (found %d)\n", ngpu);
    return 2;
  }
  cudaDeviceProp p0{};
  CK(cudaGetDeviceProperties(&p0, 0));
  std::printf("flag_probe: %s x%d, %llu ops a run, %llu message-passing rounds\n", p0.name, ngpu,
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(rounds));
  CK(cudaSetDevice(1));
  CK(cudaDeviceEnablePeerAccess(0, 0));
  uint64_t* g1 = nullptr;
  CK(cudaMalloc(&g1, 64));
  CK(cudaMemset(g1, 0, 64));
  CK(cudaSetDevice(0));
  CK(cudaDeviceEnablePeerAccess(1, 0));
  uint64_t *word = nullptr, *sink = nullptr, *data = nullptr, *flag = nullptr, *ack = nullptr;
  unsigned long long* stale = nullptr;
  CK(cudaMalloc(&word, 2 * sizeof(uint64_t)));
  const uint64_t init[2] = {1, 0};
  CK(cudaMemcpy(word, init, sizeof init, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&sink, sizeof(uint64_t)));
  CK(cudaMalloc(&data, 256));  // data and flag on separate 128-byte lines
  flag = data + 16;
  CK(cudaMalloc(&ack, sizeof(uint64_t)));
  CK(cudaMalloc(&stale, 2 * sizeof(unsigned long long)));

  run_wait<ACQ_SYS>(word, sink, n);
  run_wait<ACQ_GPU>(word, sink, n);
  run_wait<RLX_SYS>(word, sink, n);
  run_wait<VOLATILE>(word, sink, n);
  run_wait<RLX_FENCE_GPU>(word, sink, n);
  run_wait<ACQ_SYS_GENERIC>(word, sink, n);
  run_wait<VOLATILE_GENERIC>(word, sink, n);
  run_set<ST_REL_SYS>(g1, n);
  run_set<ST_RLX_SYS>(g1, n);
  run_set<ST_VOLATILE>(g1, n);
  run_set<RED_REL_SYS>(g1, n);
  run_set<RED_RLX_SYS>(g1, n);
  run_mp<ACQ_SYS>(data, flag, ack, stale, rounds);
  run_mp<ACQ_GPU>(data, flag, ack, stale, rounds);
  run_mp<RLX_SYS>(data, flag, ack, stale, rounds);
  run_mp<VOLATILE>(data, flag, ack, stale, rounds);
  run_mp<RLX_FENCE_GPU>(data, flag, ack, stale, rounds);
  CK(cudaDeviceSynchronize());
  return 0;
}
