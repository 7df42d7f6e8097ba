// gshmem-bench: rows that run on GPU PEs: device-initiated put/get bandwidth by scope, p/g latency, p and
// put+signal ping-pong, atomics and barriers in kernels, plus stream-ordered transfers and barriers. Written
// against the NVSHMEM names (api.hpp). Timing: CUDA events on the PE's stream around the timed launch (or the
// stream calls), each sample after cudaStreamSynchronize + nvshmem_barrier_all; a row is the median of
// Options::repeats samples after Options::warmup untimed ones. Figures are PE 0's. Any number of PEs: pair rows
// run between PEs 0 and 1 while the others idle (they still join every barrier and sample); all-to-all rows
// (--pattern all) have every PE send to every other.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <vector>

#include "api.hpp"
#include "coll.hpp"
#include "coll_check.cuh"
#include "common.hpp"

namespace bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}
#define CK(x) check((x), #x)

enum class Scope { Thread, Warp, Block };

Scope parse_scope(const std::string& s) {
  if (s == "thread") return Scope::Thread;
  if (s == "warp") return Scope::Warp;
  if (s == "block") return Scope::Block;
  throw std::invalid_argument("scope must be thread, warp or block, not " + s);
}

// ---- kernels ----
// Kernels launched with up to 1024 threads per CTA (--threads) are bounded to it (BENCH_KERNEL): the compiler keeps
// them within 64 registers per thread (else a 1024-thread launch fails with "too many resources requested", as
// the all-to-all kernels would on sm_80 at 66-80 registers). The one-thread latency kernels are plain __global__.
// CI checks every kernel fits 64 registers without spills (tests/compile, compile.bench_regs_1024.*).
#define BENCH_KERNEL __global__ __launch_bounds__(1024)

// The bandwidth rows' unit of work (a thread, a warp or a CTA) and its one transfer, in the scope's NVSHMEM call.
template <Scope S>
__device__ __forceinline__ size_t bw_unit() {
  if constexpr (S == Scope::Block) return blockIdx.x;
  else if constexpr (S == Scope::Warp) return (size_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  else return size_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
template <Scope S, bool GET>
__device__ __forceinline__ void bw_transfer(char* d, const char* s, size_t n, int peer) {
  if constexpr (S == Scope::Block) {
    if constexpr (GET) nvshmemx_getmem_nbi_block(d, s, n, peer);
    else nvshmemx_putmem_nbi_block(d, s, n, peer);
  } else if constexpr (S == Scope::Warp) {
    if constexpr (GET) nvshmemx_getmem_nbi_warp(d, s, n, peer);
    else nvshmemx_putmem_nbi_warp(d, s, n, peer);
  } else {
    if constexpr (GET) nvshmem_getmem_nbi(d, s, n, peer);
    else nvshmem_putmem_nbi(d, s, n, peer);
  }
}

// Each unit (a thread, a warp or a CTA) moves its own slice [unit*chunk, +chunk) of a `bytes` message `iters`
// times, then quiet. Message i lies at (i % slots) * slot_stride in both buffers, so consecutive messages touch
// fresh memory (no cache reuse: reading the same remote slice again is served from this GPU's L1 and would
// report more than the link carries).
template <Scope S, bool GET>
BENCH_KERNEL void rma_bw_kernel(char* dst, const char* src, size_t bytes, size_t chunk, int peer, uint64_t iters,
                              size_t slot_stride, uint64_t slots) {
  const size_t first = bw_unit<S>() * chunk;
  if (first < bytes) {
    const size_t n = chunk < bytes - first ? chunk : bytes - first;
    for (uint64_t i = 0; i < iters; ++i) {
      const size_t off = first + size_t(i % slots) * slot_stride;
      bw_transfer<S, GET>(dst + off, src + off, n, peer);
    }
  }
  nvshmem_quiet();
}

// All-to-all: every PE runs this at once. Each unit moves its slice of a `bytes` message to each of the other
// npes-1 PEs per round, `iters` rounds, then quiet. Unit u visits the peers in the staggered order of SHMEM
// alltoall implementations (me+1, me+2, ...), starting u places further on, so at any moment a PE's units are
// spread over all peers (as all-to-all kernels that split their CTAs or warps among destinations) while each unit
// still serves every peer (so any unit count works, one CTA included). Layout as alltoall: round i uses the slot
// at (i % slots) * npes * slot_stride; within it the data for peer d lies at d * slot_stride in `src`, and lands
// at me * slot_stride in the peer's `dst` (every sender has its own region). get mirrors it: this PE fetches
// region `me` of peer d's `src` into region d of its own `dst`. The unit and the peer order are uniform within
// a warp (warp scope) and a CTA (block scope), as the collective calls require.
template <Scope S, bool GET>
BENCH_KERNEL void rma_bw_all_kernel(char* dst, const char* src, size_t bytes, size_t chunk, int me, int npes,
                                  uint64_t iters, size_t slot_stride, uint64_t slots) {
  const size_t unit = bw_unit<S>();
  const size_t first = unit * chunk;
  const int others = npes - 1;
  if (first < bytes && others > 0) {
    const size_t n = chunk < bytes - first ? chunk : bytes - first;
    const int start = int(unit % size_t(others));
    for (uint64_t i = 0; i < iters; ++i) {
      const size_t slot = size_t(i % slots) * size_t(npes) * slot_stride + first;
      for (int k = 0; k < others; ++k) {
        int step = start + k;
        if (step >= others) step -= others;
        int peer = me + 1 + step;
        if (peer >= npes) peer -= npes;
        const size_t mine = slot + size_t(me) * slot_stride, theirs = slot + size_t(peer) * slot_stride;
        if constexpr (GET) bw_transfer<S, GET>(dst + theirs, src + mine, n, peer);
        else bw_transfer<S, GET>(dst + mine, src + theirs, n, peer);
      }
    }
  }
  nvshmem_quiet();
}

__global__ void p_kernel(int* target, int peer, uint64_t iters) {
  for (uint64_t i = 0; i < iters; ++i) nvshmem_int_p(target, int(i), peer);
  nvshmem_quiet();
}

__global__ void g_kernel(const int* source, int peer, uint64_t iters, long long* out) {
  long long sum = 0;
  for (uint64_t i = 0; i < iters; ++i) sum += nvshmem_int_g(const_cast<int*>(source), peer);
  *out = sum;
}

// PE 0 sets the peer's flag and waits for its answer; the peer waits, then answers. Values rise from `base`.
__global__ void p_pingpong_kernel(int* flag, int base, int peer, int me, uint64_t iters) {
  for (uint64_t i = 0; i < iters; ++i) {
    const int v = base + int(i) + 1;
    if (me == 0) {
      nvshmem_int_p(flag, v, peer);
      nvshmem_int_wait_until(flag, NVSHMEM_CMP_GE, v);
    } else {
      nvshmem_int_wait_until(flag, NVSHMEM_CMP_GE, v);
      nvshmem_int_p(flag, v, peer);
    }
  }
}

// One CTA: put `bytes` with a signal (block scope), the other side waits for the signal and answers the same way.
BENCH_KERNEL void signal_pingpong_kernel(char* dst, const char* src, size_t bytes, uint64_t* sig, uint64_t base,
                                       int peer, int me, uint64_t iters) {
  for (uint64_t i = 0; i < iters; ++i) {
    const uint64_t v = base + i + 1;
    if (me == 0) {
      nvshmemx_putmem_signal_nbi_block(dst, src, bytes, sig, v, NVSHMEM_SIGNAL_SET, peer);
      if (threadIdx.x == 0) nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, v);
      __syncthreads();
    } else {
      if (threadIdx.x == 0) nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, v);
      __syncthreads();
      nvshmemx_putmem_signal_nbi_block(dst, src, bytes, sig, v, NVSHMEM_SIGNAL_SET, peer);
    }
  }
  nvshmem_quiet();
}

// One thread's fetch_adds. DEP false: independent ops (each result only summed), so a library may overlap them;
// DEP true: each op's address depends on the previous result (always the same word), so each waits for the
// previous one's reply: the round-trip latency.
template <bool DEP>
__global__ void amo_latency_kernel(unsigned long long* a, int peer, uint64_t iters, unsigned long long* out) {
  unsigned long long acc = 0;
  for (uint64_t i = 0; i < iters; ++i) {
    unsigned long long* target = a;
    if constexpr (DEP) target += (acc >> 63);  // acc never reaches 2^63: the same word, but a true dependency
    acc += nvshmem_ulonglong_atomic_fetch_add(target, 1ull, peer);
  }
  *out = acc;
}

// Every thread adds to its own word on the peer.
BENCH_KERNEL void amo_rate_kernel(unsigned long long* a, int peer, uint64_t iters) {
  unsigned long long* mine = a + size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (uint64_t i = 0; i < iters; ++i) nvshmem_ulonglong_atomic_add(mine, 1ull, peer);
  nvshmem_quiet();
}

// One thread: signal_wait_until on a word of this PE's heap that already satisfies the comparison, x iters (each
// call's address depends on the previous result): what a wait costs when the signal arrived long before, as for
// the count words of a small MoE dispatch (bench/NOTES.md entry 69).
__global__ void signal_wait_satisfied_kernel(uint64_t* sig, uint64_t iters, unsigned long long* out) {
  unsigned long long acc = 0;
  for (uint64_t i = 0; i < iters; ++i) acc += nvshmem_signal_wait_until(sig + (acc >> 63), NVSHMEM_CMP_GE, 1);
  *out = acc;
}
// One thread: nvshmemx_signal_op SET of a new value into the peer's word, x iters, then quiet.
__global__ void signal_set_kernel(uint64_t* sig, int peer, uint64_t iters) {
  for (uint64_t i = 0; i < iters; ++i) nvshmemx_signal_op(sig, i + 1, NVSHMEM_SIGNAL_SET, peer);
  nvshmem_quiet();
}

BENCH_KERNEL void barrier_all_block_kernel(uint64_t iters) {
  for (uint64_t i = 0; i < iters; ++i) nvshmemx_barrier_all_block();
}
BENCH_KERNEL void sync_all_block_kernel(uint64_t iters) {
  for (uint64_t i = 0; i < iters; ++i) nvshmemx_sync_all_block();
}
__global__ void barrier_all_thread_kernel(uint64_t iters) {
  for (uint64_t i = 0; i < iters; ++i) nvshmem_barrier_all();
}

// Nothing: the floor of a stream call that launches one kernel (empty_kernel_on_stream).
__global__ void empty_kernel() {}

// One CTA, `iters` block-scope collectives back to back on the world team (launched with
// nvshmemx_collective_launch); coll.hpp says what `count` means per kind.
template <coll::Kind K>
BENCH_KERNEL void coll_block_kernel(void* dst, const void* src, size_t count, uint64_t iters) {
  using coll::Kind;
  for (uint64_t i = 0; i < iters; ++i) {
    if constexpr (K == Kind::ReduceFloat)
      nvshmemx_float_sum_reduce_block(NVSHMEM_TEAM_WORLD, static_cast<float*>(dst), static_cast<const float*>(src),
                                      count);
    else if constexpr (K == Kind::ReduceInt)
      nvshmemx_int_sum_reduce_block(NVSHMEM_TEAM_WORLD, static_cast<int*>(dst), static_cast<const int*>(src), count);
    else if constexpr (K == Kind::ReducescatterFloat)
      nvshmemx_float_sum_reducescatter_block(NVSHMEM_TEAM_WORLD, static_cast<float*>(dst),
                                             static_cast<const float*>(src), count);
    else if constexpr (K == Kind::Broadcast)  // bytes; see coll_call_name
      nvshmemx_char_broadcast_block(NVSHMEM_TEAM_WORLD, static_cast<char*>(dst), static_cast<const char*>(src),
                                    count, coll::kRoot);
    else if constexpr (K == Kind::Fcollect)
      nvshmemx_fcollectmem_block(NVSHMEM_TEAM_WORLD, dst, src, count);
    else
      nvshmemx_alltoallmem_block(NVSHMEM_TEAM_WORLD, dst, src, count);
  }
}

// ---- host side ----

// PE 0 talks to PE 1 (to itself when alone); with more PEs the others idle but still join every barrier and
// every sample (time_events is collective). Uni: PE 0 alone issues; bi: PEs 0 and 1 both do.
struct Pair {
  int me, npes, peer;
  bool in_pair() const { return me == 0 || (me == 1 && npes > 1); }
  bool sends(bool bi) const { return me == 0 || (bi && me == 1 && npes > 1); }
};
Pair pair() {
  Pair p{nvshmem_my_pe(), nvshmem_n_pes(), 0};
  p.peer = p.npes < 2 ? p.me : p.me == 0 ? 1 : p.me == 1 ? 0 : p.me;  // idle PEs: themselves (never used)
  return p;
}

struct Sym {
  void* p = nullptr;
  explicit Sym(std::uint64_t bytes) {
    p = nvshmem_malloc(bytes);
    if (!p) throw std::runtime_error(fmt::format("nvshmem_malloc({}) returned NULL: raise the symmetric heap size "
                                                 "(NVSHMEM_SYMMETRIC_SIZE / GSHMEM_SYMMETRIC_SIZE)", bytes));
    CK(cudaMemset(p, 0, bytes));
    CK(cudaDeviceSynchronize());
  }
  // Unwinding after an error on this PE: no collective free (the other PEs are not in it, so it would hang until
  // the wait timeout and hide the error); main reports the error and ends the job.
  ~Sym() {
    if (std::uncaught_exceptions() == 0) nvshmem_free(p);
  }
  Sym(const Sym&) = delete;
  Sym& operator=(const Sym&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(p); }
};

struct Stream {
  cudaStream_t s{};
  cudaEvent_t a{}, b{};
  Stream() {
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
  ~Stream() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaStreamDestroy(s);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

// Median seconds between two events around `launch(stream)`, each sample after a stream sync and a barrier;
// host_s (where given): the median host wall time of launch() itself (issuing the work, not waiting for it).
template <class L>
double time_events(const Options& o, Stream& st, L&& launch, double* host_s = nullptr) {
  std::vector<double> t, h;
  for (int r = 0; r < o.warmup + o.repeats; ++r) {
    CK(cudaStreamSynchronize(st.s));
    nvshmem_barrier_all();
    CK(cudaEventRecord(st.a, st.s));
    const auto t0 = Clock::now();
    launch(st.s);
    if (r >= o.warmup) h.push_back(seconds_since(t0));
    CK(cudaGetLastError());
    CK(cudaEventRecord(st.b, st.s));
    CK(cudaEventSynchronize(st.b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, st.a, st.b));
    if (r >= o.warmup) t.push_back(ms * 1e-3);
  }
  CK(cudaStreamSynchronize(st.s));
  nvshmem_barrier_all();
  if (host_s) *host_s = median(h);
  return median(t);
}

std::uint64_t max_size(const std::vector<std::uint64_t>& v) {
  std::uint64_t m = 0;
  for (auto b : v) m = std::max(m, b);
  return m;
}

// Message slots: max(bytes, 4 KiB), 4 KiB aligned (see rma_bw_kernel).
size_t slot_stride_of(size_t bytes) { return (std::max<size_t>(bytes, 4096) + 4095) / 4096 * 4096; }

// One bandwidth launch: pair (rma_bw_kernel to `peer`) or all-to-all (rma_bw_all_kernel, every other PE).
struct BwLaunch {
  char* dst;
  const char* src;
  size_t bytes;
  int peer, me, npes;
  uint64_t iters;
  size_t window;  // bytes of each buffer the messages rotate through
  int ctas, threads;
  bool all;
};

// An all-to-all round needs npes slots of the message: sizes with npes * slot > window are skipped.
bool all_fits(size_t bytes, int npes, size_t window) { return slot_stride_of(bytes) * size_t(npes) <= window; }

template <Scope S, bool GET>
void launch_bw(cudaStream_t s, const BwLaunch& a) {
  const size_t units = S == Scope::Block  ? size_t(a.ctas)
                       : S == Scope::Warp ? size_t(a.ctas) * a.threads / 32
                                          : size_t(a.ctas) * a.threads;
  size_t chunk = (a.bytes + units - 1) / units;
  chunk = (chunk + 15) / 16 * 16;  // 16-byte aligned slices
  const size_t stride = slot_stride_of(a.bytes);
  if (a.all) {
    const uint64_t slots = a.window / (stride * size_t(a.npes));  // >= 1: all_fits checked it
    rma_bw_all_kernel<S, GET><<<a.ctas, a.threads, 0, s>>>(a.dst, a.src, a.bytes, chunk, a.me, a.npes, a.iters,
                                                             stride, slots);
  } else {
    const uint64_t slots = std::max<uint64_t>(1, a.window / stride);
    rma_bw_kernel<S, GET><<<a.ctas, a.threads, 0, s>>>(a.dst, a.src, a.bytes, chunk, a.peer, a.iters, stride,
                                                         slots);
  }
}

void launch_bw(Scope scope, bool get, cudaStream_t s, const BwLaunch& a) {
  switch (scope) {
    case Scope::Thread: get ? launch_bw<Scope::Thread, true>(s, a) : launch_bw<Scope::Thread, false>(s, a); break;
    case Scope::Warp: get ? launch_bw<Scope::Warp, true>(s, a) : launch_bw<Scope::Warp, false>(s, a); break;
    case Scope::Block: get ? launch_bw<Scope::Block, true>(s, a) : launch_bw<Scope::Block, false>(s, a); break;
  }
}

// The lowest of every PE's `v`, on PE 0 (the others get their own back). Collective: each PE writes its value
// into PE 0's slot array with a host-side p, a barrier completes the writes, PE 0 reads the array, and a second
// barrier keeps the next call's writes behind that read.
double min_over_pes(double v, double* slots) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  nvshmem_double_p(slots + me, v, 0);
  nvshmem_barrier_all();
  double m = v;
  if (me == 0) {
    std::vector<double> h(size_t(npes), 0.0);
    CK(cudaMemcpy(h.data(), slots, h.size() * sizeof(double), cudaMemcpyDeviceToHost));
    m = *std::min_element(h.begin(), h.end());
  }
  nvshmem_barrier_all();
  return m;
}

void device_bw(const Options& o, bool get, Rows& out) {
  const Pair pr = pair();
  // The rotation window: at least 256 MiB (several times L2), or the largest message.
  const std::uint64_t window = std::max<std::uint64_t>(max_size(o.sizes), 256ull << 20);
  Sym src(window), dst(window), figures(std::max(1, pr.npes) * sizeof(double));
  CK(cudaMemset(src.p, 0x5a, window));
  CK(cudaDeviceSynchronize());
  Stream st;
  if (o.threads % 32 != 0 || o.threads < 32 || o.threads > 1024)
    throw std::invalid_argument("--threads must be a multiple of 32 in [32, 1024]");
  const char* op = get ? "get" : "put";
  for (const auto& pattern : o.patterns) {
    const bool all = pattern == "all";
    if (all && pr.npes < 2) continue;  // nobody to send to
    for (const auto& scope_name : o.scopes) {
      const Scope scope = parse_scope(scope_name);
      for (const int ctas : o.ctas) {
        // all-to-all rows have no direction: every PE sends (get: fetches) to (from) every other one.
        const std::vector<std::string> dirs = all ? std::vector<std::string>{""} : o.dirs;
        for (const auto& dir : dirs) {
          const bool bi = dir == "bi";
          if (bi && pr.npes < 2) continue;
          for (const std::uint64_t bytes : o.sizes) {
            if (all && !all_fits(bytes, pr.npes, window)) continue;  // same decision on every PE
            // All-to-all: about the same bytes per sample as a pair row, spread over the npes-1 peers.
            const std::uint64_t it = bw_iters(o, all ? bytes * std::uint64_t(pr.npes - 1) : bytes);
            const BwLaunch a{dst.as<char>(), src.as<char>(), bytes, pr.peer, pr.me, pr.npes, it, window,
                             ctas, o.threads, all};
            const double sec = time_events(o, st, [&](cudaStream_t cs) {
              if (all || pr.sends(bi)) launch_bw(scope, get, cs, a);
            });
            if (all) {
              const double mine = gbps(double(bytes) * double(it) * double(pr.npes - 1), sec);
              const double lowest = min_over_pes(mine, figures.as<double>());
              out.push_back({fmt::format("{}_bw_all/{}/ctas={}/threads={}", op, scope_name, ctas, o.threads),
                             bytes, "GB/s", mine, o.repeats, it,
                             fmt::format("all-to-all: every PE at once {}s a message of this size {} each of the "
                                         "other {} PEs per round, {}mem_nbi ({} scope); each unit (thread, warp "
                                         "or CTA) serves every peer in turn, unit u starting u peers after "
                                         "me+1 (units spread over the peers), x{} rounds (messages rotate "
                                         "through the window, each sender its own region), then quiet; figure: "
                                         "bytes this PE {} per second, (n-1) x size x rounds / PE 0's time, "
                                         "per PE, not the total; min_over_pes: the slowest PE's figure",
                                         op, get ? "from" : "to", pr.npes - 1, op, scope_name, it,
                                         get ? "received" : "sent")});
              out.back().min_over_pes = lowest;
            } else {
              const double moved = double(bytes) * double(it) * (bi ? 2 : 1);
              out.push_back({fmt::format("{}_bw/{}/ctas={}/threads={}/{}", op, scope_name, ctas, o.threads, dir),
                             bytes, "GB/s", gbps(moved, sec), o.repeats, it,
                             fmt::format("{}mem_nbi ({} scope) in one kernel, each unit its slice x{} (messages "
                                         "rotate through a 256 MiB window), then quiet{}",
                                         op, scope_name, it,
                                         bi ? "; PEs 0 and 1 at once, both directions counted" : "")});
            }
          }
        }
      }
    }
  }
}

void stream_bw(const Options& o, Rows& out) {
  const Pair pr = pair();
  const std::uint64_t maxb = max_size(o.sizes);
  Sym src(maxb), dst(maxb);
  CK(cudaMemset(src.p, 0x5a, maxb));
  CK(cudaDeviceSynchronize());
  Stream st;
  for (const bool get : {false, true}) {
    for (const auto& dir : o.dirs) {
      const bool bi = dir == "bi";
      if (bi && pr.npes < 2) continue;
      for (const std::uint64_t bytes : o.sizes) {
        const std::uint64_t it = bw_iters(o, bytes);
        const double sec = time_events(o, st, [&](cudaStream_t cs) {
          if (!pr.sends(bi)) return;
          for (std::uint64_t i = 0; i < it; ++i) {
            if (get) nvshmemx_getmem_on_stream(dst.p, src.p, bytes, pr.peer, cs);
            else nvshmemx_putmem_on_stream(dst.p, src.p, bytes, pr.peer, cs);
          }
        });
        const double moved = double(bytes) * double(it) * (bi ? 2 : 1);
        out.push_back({fmt::format("stream_{}_bw/{}", get ? "get" : "put", dir), bytes, "GB/s", gbps(moved, sec),
                       o.repeats, it,
                       fmt::format("nvshmemx_{}mem_on_stream x{} between two events{}", get ? "get" : "put", it,
                                   bi ? "; PEs 0 and 1 at once, both directions counted" : "")});
      }
    }
  }
  // Single-word stream operations, PE 0 to its peer, back to back on one stream: time per operation.
  const std::uint64_t it = o.lat_iters;
  Sym words(64 * sizeof(std::uint64_t));
  CK(cudaMemset(words.p, 0, 64 * sizeof(std::uint64_t)));
  CK(cudaDeviceSynchronize());
  auto* sig = words.as<std::uint64_t>();
  auto* target = reinterpret_cast<int*>(sig + 8);
  struct Op {
    const char* name;
    std::uint64_t bytes;
    const char* what;
  };
  // put_signal_on_stream at 8 B (into a word beside the signals) and, where the sizes reach them, 4 and 64 KiB
  // (into dst): the sizes of a pipeline stage's activations at micro-batch 1 (docs/workloads.md)
  const Op ops[] = {{"p_on_stream", sizeof(int), "nvshmemx_int_p_on_stream"},
                    {"signal_set_on_stream", 8, "nvshmemx_signal_op_on_stream SIGNAL_SET"},
                    {"signal_add_on_stream", 8, "nvshmemx_signal_op_on_stream SIGNAL_ADD"},
                    {"put_signal_on_stream", 8, "nvshmemx_putmem_signal_on_stream of 8 bytes, SIGNAL_SET"},
                    {"put_signal_on_stream", 4096, "nvshmemx_putmem_signal_on_stream of 4 KiB, SIGNAL_SET"},
                    {"put_signal_on_stream", 65536, "nvshmemx_putmem_signal_on_stream of 64 KiB, SIGNAL_SET"}};
  for (int k = 0; k < 6; ++k) {
    if (ops[k].bytes > maxb) continue;
    const double sec = time_events(o, st, [&](cudaStream_t cs) {
      if (pr.me != 0) return;
      for (std::uint64_t i = 0; i < it; ++i) {
        if (k == 0) nvshmemx_int_p_on_stream(target, static_cast<int>(i), pr.peer, cs);
        else if (k == 1) nvshmemx_signal_op_on_stream(sig, i + 1, NVSHMEM_SIGNAL_SET, pr.peer, cs);
        else if (k == 2) nvshmemx_signal_op_on_stream(sig + 1, 1, NVSHMEM_SIGNAL_ADD, pr.peer, cs);
        else if (k == 3)
          nvshmemx_putmem_signal_on_stream(sig + 2, src.p, 8, sig + 3, i + 1, NVSHMEM_SIGNAL_SET, pr.peer, cs);
        else
          nvshmemx_putmem_signal_on_stream(dst.p, src.p, ops[k].bytes, sig + 3, i + 1, NVSHMEM_SIGNAL_SET, pr.peer,
                                           cs);
      }
    });
    out.push_back({ops[k].name, ops[k].bytes, "us", sec / double(it) * 1e6, o.repeats, it,
                   fmt::format("{} x{} between two events; time per operation", ops[k].what, it)});
  }
}

void p_lat(const Options& o, Rows& out) {
  const Pair pr = pair();
  const std::uint64_t it = o.lat_iters;
  Sym ints(64 * sizeof(int));
  Sym sink(sizeof(long long));
  Stream st;
  double s = time_events(o, st, [&](cudaStream_t cs) {
    if (pr.me == 0) p_kernel<<<1, 1, 0, cs>>>(ints.as<int>(), pr.peer, it);
  });
  out.push_back({"p", sizeof(int), "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmem_int_p by one thread x{} then quiet, one kernel; time per p", it)});
  s = time_events(o, st, [&](cudaStream_t cs) {
    if (pr.me == 0) g_kernel<<<1, 1, 0, cs>>>(ints.as<int>(), pr.peer, it, sink.as<long long>());
  });
  out.push_back({"g", sizeof(int), "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmem_int_g by one thread x{}, one kernel; time per g (a round trip)", it)});
}

void pingpong(const Options& o, Rows& out) {
  const Pair pr = pair();
  const std::uint64_t it = o.lat_iters;
  const bool active = pr.in_pair();  // PEs 0 and 1; the others idle through every sample
  Stream st;
  {
    Sym flag(64 * sizeof(int));
    int base = 0;
    const double s = time_events(o, st, [&](cudaStream_t cs) {
      if (active) p_pingpong_kernel<<<1, 1, 0, cs>>>(flag.as<int>(), base, pr.peer, pr.me, it);
      base += int(it);
    });
    out.push_back({"p_pingpong", sizeof(int), "us", s / double(2 * it) * 1e6, o.repeats, it,
                   fmt::format("int_p + int_wait_until, one thread per PE, {} round trips in one kernel; half "
                               "round trip", it)});
  }
  const std::uint64_t maxb = std::max<std::uint64_t>(max_size(o.signal_sizes), 8);
  Sym src(maxb), dst(maxb), sig(64 * sizeof(uint64_t));
  uint64_t base = 0;
  for (const std::uint64_t bytes : o.signal_sizes) {
    const double s = time_events(o, st, [&](cudaStream_t cs) {
      if (active)
        signal_pingpong_kernel<<<1, o.threads, 0, cs>>>(dst.as<char>(), src.as<char>(), bytes, sig.as<uint64_t>(),
                                                          base, pr.peer, pr.me, it);
      base += it;
    });
    out.push_back({fmt::format("put_signal_pingpong/threads={}", o.threads), bytes, "us",
                   s / double(2 * it) * 1e6, o.repeats, it,
                   fmt::format("putmem_signal_nbi_block + signal_wait_until, one CTA per PE, {} round trips in one "
                               "kernel; half round trip", it)});
  }
}

void amo(const Options& o, Rows& out) {
  const Pair pr = pair();
  const std::uint64_t it = o.lat_iters;
  const size_t words = size_t(o.amo_ctas) * o.amo_threads;
  Sym a(words * sizeof(unsigned long long)), sink(sizeof(unsigned long long));
  Stream st;
  double s = time_events(o, st, [&](cudaStream_t cs) {
    if (pr.me == 0) amo_latency_kernel<false><<<1, 1, 0, cs>>>(a.as<unsigned long long>(), pr.peer, it,
                                                               sink.as<unsigned long long>());
  });
  out.push_back({"amo_fetch_add", 8, "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("ulonglong_atomic_fetch_add by one thread x{}, one kernel, results only summed "
                             "(ops may overlap); time per op", it)});
  s = time_events(o, st, [&](cudaStream_t cs) {
    if (pr.me == 0) amo_latency_kernel<true><<<1, 1, 0, cs>>>(a.as<unsigned long long>(), pr.peer, it,
                                                              sink.as<unsigned long long>());
  });
  out.push_back({"amo_fetch_add_dep", 8, "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("ulonglong_atomic_fetch_add by one thread x{}, each op's address from the previous "
                             "result (round-trip latency); time per op", it)});
  s = time_events(o, st, [&](cudaStream_t cs) {
    if (pr.me == 0) amo_rate_kernel<<<o.amo_ctas, o.amo_threads, 0, cs>>>(a.as<unsigned long long>(), pr.peer, it);
  });
  out.push_back({fmt::format("amo_add_rate/ctas={}/threads={}", o.amo_ctas, o.amo_threads), 8, "Mop/s",
                 double(words) * double(it) / s / 1e6, o.repeats, it,
                 fmt::format("ulonglong_atomic_add, every thread x{} to its own word, then quiet", it)});
  // Signals: word 0 of `sig` holds 1 on every PE before the timing (each PE writes its own), word 1 takes the sets.
  Sym sig(2 * sizeof(std::uint64_t));
  const std::uint64_t one = 1;
  CK(cudaMemcpy(sig.p, &one, sizeof one, cudaMemcpyHostToDevice));
  nvshmem_barrier_all();
  s = time_events(o, st, [&](cudaStream_t cs) {
    if (pr.me == 0) signal_wait_satisfied_kernel<<<1, 1, 0, cs>>>(sig.as<uint64_t>(), it, sink.as<unsigned long long>());
  });
  out.push_back({"signal_wait_satisfied", 8, "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmem_signal_wait_until(GE 1) by one thread x{} on a word of its own heap that holds "
                             "1 (nothing to wait for; each call's address from the previous result); time per call",
                             it)});
  s = time_events(o, st, [&](cudaStream_t cs) {
    if (pr.me == 0) signal_set_kernel<<<1, 1, 0, cs>>>(sig.as<uint64_t>() + 1, pr.peer, it);
  });
  out.push_back({"signal_set", 8, "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmemx_signal_op SIGNAL_SET of a new value into the peer's word by one thread x{}, "
                             "then quiet; time per op", it)});
}

void barriers(const Options& o, Rows& out) {
  const std::uint64_t it = o.lat_iters;
  const int bt = 128;
  Stream st;
  double s = time_events(o, st, [&](cudaStream_t cs) { barrier_all_block_kernel<<<1, bt, 0, cs>>>(it); });
  out.push_back({fmt::format("barrier_all_block/threads={}", bt), 0, "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmemx_barrier_all_block x{} in one CTA per PE; time per barrier", it)});
  s = time_events(o, st, [&](cudaStream_t cs) { sync_all_block_kernel<<<1, bt, 0, cs>>>(it); });
  out.push_back({fmt::format("sync_all_block/threads={}", bt), 0, "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmemx_sync_all_block x{} in one CTA per PE; time per sync", it)});
  s = time_events(o, st, [&](cudaStream_t cs) { barrier_all_thread_kernel<<<1, 1, 0, cs>>>(it); });
  out.push_back({"barrier_all_thread", 0, "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmem_barrier_all x{} by one thread per PE; time per barrier", it)});
  s = time_events(o, st, [&](cudaStream_t cs) {
    for (std::uint64_t i = 0; i < it; ++i) nvshmemx_barrier_all_on_stream(cs);
  });
  out.push_back({"barrier_all_on_stream", 0, "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmemx_barrier_all_on_stream x{} between two events; time per barrier", it)});
  s = time_events(o, st, [&](cudaStream_t cs) {
    for (std::uint64_t i = 0; i < it; ++i) nvshmemx_sync_all_on_stream(cs);
  });
  out.push_back({"sync_all_on_stream", 0, "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmemx_sync_all_on_stream x{} between two events; time per sync", it)});
}


// ---- collectives (suite coll) ----

// One stream-ordered collective on the world team.
void coll_stream_call(coll::Kind k, void* d, const void* s, size_t count, cudaStream_t cs) {
  using coll::Kind;
  int rc = 0;
  switch (k) {
    case Kind::ReduceFloat:
      rc = nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, static_cast<float*>(d),
                                               static_cast<const float*>(s), count, cs);
      break;
    case Kind::ReduceInt:
      rc = nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, static_cast<int*>(d), static_cast<const int*>(s),
                                             count, cs);
      break;
    case Kind::ReducescatterFloat:
      rc = nvshmemx_float_sum_reducescatter_on_stream(NVSHMEM_TEAM_WORLD, static_cast<float*>(d),
                                                      static_cast<const float*>(s), count, cs);
      break;
    case Kind::Broadcast: rc = nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, d, s, count, coll::kRoot, cs); break;
    case Kind::Fcollect: rc = nvshmemx_fcollectmem_on_stream(NVSHMEM_TEAM_WORLD, d, s, count, cs); break;
    case Kind::Alltoall: rc = nvshmemx_alltoallmem_on_stream(NVSHMEM_TEAM_WORLD, d, s, count, cs); break;
  }
  if (rc != 0) throw std::runtime_error(fmt::format("{} returned {}", coll::row_name(k, "on_stream"), rc));
}

const void* coll_block_kernel_of(coll::Kind k) {
  using coll::Kind;
  switch (k) {
    case Kind::ReduceFloat: return reinterpret_cast<const void*>(coll_block_kernel<Kind::ReduceFloat>);
    case Kind::ReduceInt: return reinterpret_cast<const void*>(coll_block_kernel<Kind::ReduceInt>);
    case Kind::ReducescatterFloat: return reinterpret_cast<const void*>(coll_block_kernel<Kind::ReducescatterFloat>);
    case Kind::Broadcast: return reinterpret_cast<const void*>(coll_block_kernel<Kind::Broadcast>);
    case Kind::Fcollect: return reinterpret_cast<const void*>(coll_block_kernel<Kind::Fcollect>);
    case Kind::Alltoall: return reinterpret_cast<const void*>(coll_block_kernel<Kind::Alltoall>);
  }
  return nullptr;
}

// One CTA of `threads` running `it` block-scope collectives, by nvshmemx_collective_launch.
void coll_block_launch(coll::Kind k, void* d, const void* s, size_t count, uint64_t it, int threads,
                       cudaStream_t cs) {
  void* src = const_cast<void*>(s);
  void* args[] = {&d, &src, &count, &it};
  const int rc = nvshmemx_collective_launch(coll_block_kernel_of(k), dim3(1), dim3(unsigned(threads)), args, 0, cs);
  if (rc != 0)
    throw std::runtime_error(fmt::format("nvshmemx_collective_launch of the {} kernel returned {}",
                                         coll::row_name(k, "block", threads), rc));
}

const char* coll_call_name(coll::Kind k, bool block) {
  using coll::Kind;
  switch (k) {
    case Kind::ReduceFloat: return block ? "nvshmemx_float_sum_reduce_block" : "nvshmemx_float_sum_reduce_on_stream";
    case Kind::ReduceInt: return block ? "nvshmemx_int_sum_reduce_block" : "nvshmemx_int_sum_reduce_on_stream";
    case Kind::ReducescatterFloat:
      return block ? "nvshmemx_float_sum_reducescatter_block" : "nvshmemx_float_sum_reducescatter_on_stream";
    // NVSHMEM 3.4.5's host header declares nvshmemx_broadcastmem_block without PE_root (its device definition has
    // it), so a kernel calling it with a root does not compile there; the byte-typed form moves the same bytes.
    case Kind::Broadcast:
      return block ? "nvshmemx_char_broadcast_block (root 0)" : "nvshmemx_broadcastmem_on_stream (root 0)";
    case Kind::Fcollect: return block ? "nvshmemx_fcollectmem_block" : "nvshmemx_fcollectmem_on_stream";
    case Kind::Alltoall: return block ? "nvshmemx_alltoallmem_block" : "nvshmemx_alltoallmem_on_stream";
  }
  return "?";
}

// Why the block form is not run for kind k at shape sh in this build (empty: it is). NVSHMEM 3.4.5's device
// reducescatter stages all npes blocks of the source in the team's reduce scratch and only asserts that they fit
// (api.hpp, BENCH_DEVICE_REDUCESCATTER_MAX_BYTES): a larger source writes past it into other symmetric memory.
std::string coll_block_skip(coll::Kind k, const coll::Shape& sh) {
  const std::uint64_t limit = BENCH_DEVICE_REDUCESCATTER_MAX_BYTES();
  const std::uint64_t src_bytes = sh.src_elems * coll::elem_size(k);
  if (k == coll::Kind::ReducescatterFloat && limit > 0 && src_bytes > limit)
    return fmt::format("skipped: a {} B source is more than the {} B of the team's reduce scratch that {}'s device "
                       "reducescatter stages it in (half of NVSHMEM_REDUCE_SCRATCH_SIZE; a larger one is written "
                       "past it)",
                       src_bytes, limit, BENCH_LIBRARY);
  return {};
}

// Per kind, form (stream, block) and size: fill the source with this PE's known values and the destination with
// other ones (untimed), time `it` calls per sample (stream: the calls between two events; block: one kernel that
// loops over them), then check every element of this PE's result. A wrong result on any PE marks the row failed on
// PE 0 (no figure; the PE that found it prints the first wrong element) and the run goes on; a row the library
// cannot take (coll_block_skip) is recorded as skipped.
void coll_rows(const Options& o, Rows& out) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  if (o.threads % 32 != 0 || o.threads < 32 || o.threads > 1024)
    throw std::invalid_argument("--threads must be a multiple of 32 in [32, 1024]");
  const std::uint64_t maxb = coll::max_buffer_bytes(o.coll_sizes, npes);
  Sym src(maxb), dst(maxb), verdicts(std::uint64_t(npes) * sizeof(int));
  Stream st;
  const std::uint64_t cap = std::min<std::uint64_t>(o.lat_iters, 200);
  const auto form_wanted = [&](bool block) {
    return o.coll_forms.empty() ||
           std::find(o.coll_forms.begin(), o.coll_forms.end(), block ? "block" : "stream") != o.coll_forms.end();
  };
  if (form_wanted(false)) {
    // The host's floor under the stream rows, no library call: an empty kernel launched back to back. A stream
    // collective that launches one kernel a call cannot issue faster than this on this host (bench/NOTES.md 70).
    double host = -1;
    const double s = time_events(
        o, st, [&](cudaStream_t cs) { for (std::uint64_t i = 0; i < cap; ++i) empty_kernel<<<1, 32, 0, cs>>>(); },
        &host);
    Row r{"empty_kernel_on_stream", 0, "us", s / double(cap) * 1e6, o.repeats, cap,
          fmt::format("an empty kernel (one CTA of 32 threads, <<<>>>) x{} back to back between two events, no library "
                      "call: the floor of a stream call that launches one kernel; time per launch; host_us: the "
                      "host's wall time per launch", cap)};
    r.host_us = host / double(cap) * 1e6;
    out.push_back(r);
  }
  for (const bool block : {false, true}) {
    if (!form_wanted(block)) continue;
    for (const coll::Kind k : coll::kKinds) {
      if (!coll::wanted(o.coll_kinds, k)) continue;
      const std::string name = block ? coll::row_name(k, "block", o.threads) : coll::row_name(k, "on_stream");
      for (const std::uint64_t size : o.coll_sizes) {
        const coll::Shape sh = coll::shape(k, size, npes);
        if (!sh.ok()) continue;  // smaller than one element per block: the same on every PE
        const std::uint64_t it = coll::iters(o.iters, o.bw_target_bytes, cap, sh.bytes);
        const std::string how = block ? fmt::format("{} (count {}) x{} in one CTA of {} threads per PE (one kernel "
                                                    "by nvshmemx_collective_launch), result checked",
                                                    coll_call_name(k, true), sh.count, it, o.threads)
                                      : fmt::format("{} (count {}) x{} between two events, result checked",
                                                    coll_call_name(k, false), sh.count, it);
        if (const std::string why = block ? coll_block_skip(k, sh) : std::string(); !why.empty()) {  // every PE
          if (me == 0) {
            fmt::print(stderr, "gshmem-bench: {} at {} B {}\n", name, sh.bytes, why);
            coll::add_status_row(out, name, sh, why, how);
          }
          continue;
        }
        if (o.progress && me == 0) fmt::print(stderr, "gshmem-bench: {} at {} B\n", name, sh.bytes);
        coll::fill(k, src.p, dst.p, sh, me, st.s);
        double host = -1;
        const double sec = time_events(
            o, st,
            [&](cudaStream_t cs) {
              if (block) coll_block_launch(k, dst.p, src.p, sh.count, it, o.threads, cs);
              else
                for (std::uint64_t i = 0; i < it; ++i) coll_stream_call(k, dst.p, src.p, sh.count, cs);
            },
            block ? nullptr : &host);
        if (coll::fault_here(o.coll_fault, name, sh.bytes, me, npes)) coll::spoil(k, dst.p, sh, me, npes, st.s);
        const std::string wrong = coll::check(k, dst.p, sh, me, npes, name, st.s);
        if (!wrong.empty()) fmt::print(stderr, "gshmem-bench: PE {}: {}\n", me, wrong);
        if (const std::string status = coll_verdict(verdicts.as<int>(), !wrong.empty(), me, npes); !status.empty()) {
          fmt::print(stderr, "gshmem-bench: {} at {} B {}\n", name, sh.bytes, status);
          coll::add_status_row(out, name, sh, status, how);
          continue;
        }
        coll::add_rows(out, k, name, sh, npes, sec, o.repeats, it, how, host);
      }
    }
  }
}

}  // namespace

void device_coll_suite(const Options& o, Rows& out) { coll_rows(o, out); }

void device_suite(const std::string& suite, const Options& o, Rows& out) {
  if (suite == "put-bw") device_bw(o, false, out);
  else if (suite == "get-bw") device_bw(o, true, out);
  else if (suite == "stream-bw") stream_bw(o, out);
  else if (suite == "p-lat") p_lat(o, out);
  else if (suite == "pingpong") pingpong(o, out);
  else if (suite == "amo") amo(o, out);
  else if (suite == "barrier") barriers(o, out);
  else throw std::invalid_argument("unknown device suite " + suite);
}

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}
void device_select(int ordinal) { CK(cudaSetDevice(ordinal)); }
void device_warm_up_context() { CK(cudaFree(nullptr)); }
// Collective: each PE writes its GPU's PCI address into PE 0's slot array (host-side p), a barrier completes the
// writes, PE 0 counts the distinct ones. So a job of 2 PEs sharing one GPU is not labelled as a 2-GPU run.
int gpus_in_job() {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  int dev = 0;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  const long long id = (static_cast<long long>(prop.pciDomainID) << 32) | (prop.pciBusID << 8) | prop.pciDeviceID;
  Sym slots(std::size_t(npes) * sizeof(long long));
  nvshmem_longlong_p(slots.as<long long>() + me, id, 0);
  nvshmem_barrier_all();
  int distinct = 0;
  if (me == 0) {
    std::vector<long long> h(std::size_t(npes), 0);
    CK(cudaMemcpy(h.data(), slots.p, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    std::sort(h.begin(), h.end());
    distinct = int(std::unique(h.begin(), h.end()) - h.begin());
  }
  nvshmem_barrier_all();
  return distinct;
}
std::string device_name(int npes, int gpus) {
  int dev = 0;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  if (gpus < 0) return fmt::format("{} ({} PEs, GPUs not counted)", prop.name, npes);  // a run ended by an error
  return gpus == npes ? fmt::format("{} x{}", prop.name, gpus) : fmt::format("{} x{} ({} PEs)", prop.name, gpus, npes);
}
void device_fill(void* p, int byte, std::uint64_t bytes, bool gpu) {
  if (gpu) {
    CK(cudaMemset(p, byte, bytes));
    CK(cudaDeviceSynchronize());
  } else {
    std::memset(p, byte, bytes);
  }
}
bool device_rows_available() { return true; }

}  // namespace bench
