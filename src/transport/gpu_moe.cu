// GPU PEs: MoE dispatch / combine stream kernels. Each call is one cooperative grid (as many blocks as the work
// needs, at most what the GPU holds at once) running the one implementation (gshmem/moe/dispatch_combine.h through
// dev::moe_*_counted of gshmem/moe/device.cuh) with the whole grid as its group (dev::detail::MoeGrid: the grid's
// warps are the parts that move rows; its syncs a grid-wide barrier on a workspace word), so the stream forms, the
// blocking host forms (these kernels on the context's internal stream, waited for) and user device code share
// every line of the algorithm. Nothing here synchronises with the host unless the call is blocking, and
// every value that changes from call to call (the call number, the dispatch's m) lives in device memory, so a
// captured graph replays correctly (docs/moe.md, "GPU PEs").
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstring>
#include <mutex>
#if defined(GSHMEM_MOE_STAMPS)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>
#endif

#include "gshmem/moe/device.cuh"
#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "transport/cuda_driver.hpp"
#include "transport/gpu.hpp"
#include "transport/stream_kernel.cuh"

namespace gshmem::gpu {
namespace {

// The API call's name, by value in the kernel's parameters: the kernel's messages name the call the program made
// (a host string is not readable on the device), and a graph keeps its copy.
struct CallName {
  char text[80];
};
static_assert(sizeof(CallName) == 80, "CallName is plain data crossing host and device");

CallName call_name(const char* call) {
  CallName n{};
  std::strncpy(n.text, call, sizeof n.text - 1);
  return n;
}

// Launch bounds of the largest GSHMEM_MOE_THREADS, so every allowed setting launches (512: up to 128 registers a
// thread). ptxas -v: docs/moe.md ("GPU PEs").
constexpr unsigned kMoeMaxThreads = 512;

__device__ __forceinline__ void moe_kernel_begin(const gshmem_device_state_t& h, const moe::Plan& p, void* ws,
                                                 const CallName& name) {
  stream_kernel_entry();
  unsigned* word = reinterpret_cast<unsigned*>(moe::state_word(p, static_cast<char*>(ws), moe::kStateGridBarrier));
  dev::detail::moe_grid_begin(word, h.timeout_ns, h.my_pe, name.text);
}

#if defined(GSHMEM_MOE_STAMPS)
// The phase stamps' row of one dispatch (gshmem/moe/device.cuh), by the grid's rank 0 after the algorithm's last
// sync (every part's stamps are in by then), and the stamps zeroed for the next call.
__device__ void moe_stamp_row(const moe::Plan& p, uint64_t m) {
  using namespace dev::detail;
  const unsigned long long start = ~0ull - moe_stamp_now[0], end = dev::detail::globaltimer();
  unsigned long long* row = moe_stamp_log[moe_stamp_rows++ % kStampLogRows];
  row[0] = p.num_experts;
  row[1] = p.experts_per_token;
  row[2] = p.x_bytes;
  row[3] = m;
  for (int k = 0; k < moe::kStamps; ++k) {
    const unsigned long long t = moe_stamp_now[1 + k];
    row[4 + k] = t >= start ? t - start : ~0ull;  // ~0: no part reached the phase this call
    moe_stamp_now[1 + k] = 0;
  }
  row[4 + moe::kStamps] = end - start;
  moe_stamp_now[0] = 0;
}
#endif

__global__ void __launch_bounds__(kMoeMaxThreads)
    moe_dispatch_kernel(gshmem_device_state_t h, moe::Plan p, void* ws, int32_t* counts, void* ex, void* es,
                        const void* x, const void* xs, const uint32_t* idx, uint64_t rows, const uint32_t* bound_m,
                        const volatile int* abort_flag, CallName name) {
#if defined(GSHMEM_MOE_STAMPS)
  if (threadIdx.x == 0)
    atomicMax(&dev::detail::moe_stamp_now[0], ~0ull - static_cast<unsigned long long>(dev::detail::globaltimer()));
#endif
  moe_kernel_begin(h, p, ws, name);
  dev::moe_dispatch_counted<dev::detail::MoeGrid>(h, p, ws, counts, ex, es, x, xs, idx, rows, bound_m, abort_flag,
                                                  name.text);
#if defined(GSHMEM_MOE_STAMPS)
  if (dev::detail::MoeGrid::rank() == 0) moe_stamp_row(p, bound_m != nullptr ? *bound_m : rows);
#endif
}

#if defined(GSHMEM_MOE_STAMPS)
// At exit (registered at the first dispatch, after CUDA's own handlers, so it runs before them): the stamp log,
// one line per (E, K, row bytes, tokens) with the median ns from the kernel's start to each phase's end.
int stamp_pe = -1;
void print_stamps() {
  using namespace dev::detail;
  static unsigned long long log[kStampLogRows][kStampLogWords];
  unsigned long long rows = 0;
  if (cudaMemcpyFromSymbol(&rows, moe_stamp_rows, sizeof rows) != cudaSuccess ||
      cudaMemcpyFromSymbol(log, moe_stamp_log, sizeof log) != cudaSuccess)
    return;
  const unsigned long long n = rows < kStampLogRows ? rows : kStampLogRows;
  std::vector<std::vector<unsigned long long>> keys;
  for (unsigned long long i = 0; i < n; ++i) {
    std::vector<unsigned long long> key(log[i], log[i] + 4);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  for (const auto& key : keys) {
    std::string line = fmt::format("gshmem MoE dispatch stamps, PE {}: E {} K {} row {} B m {}:", stamp_pe, key[0],
                                   key[1], key[2], key[3]);
    static const char* names[] = {"scanned", "numbered", "sent", "received", "end"};
    std::size_t calls = 0;
    for (int k = 0; k <= moe::kStamps; ++k) {
      std::vector<unsigned long long> t;
      for (unsigned long long i = 0; i < n; ++i)
        if (std::equal(key.begin(), key.end(), log[i]) && log[i][4 + k] != ~0ull) t.push_back(log[i][4 + k]);
      calls = std::max(calls, t.size());
      if (t.empty()) {
        line += fmt::format(" {} -", names[k]);
        continue;
      }
      std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
      line += fmt::format(" {} {:.1f}", names[k], static_cast<double>(t[t.size() / 2]) / 1e3);
    }
    std::fprintf(stderr, "%s us (median of %zu calls, from the kernel's start)\n", line.c_str(), calls);
  }
}
#endif

template <typename TY, typename TO>
__global__ void __launch_bounds__(kMoeMaxThreads)
    moe_combine_kernel(gshmem_device_state_t h, moe::Plan p, void* ws, TO* out, const uint32_t* idx, const float* w,
                       const TY* y, uint64_t rows, const uint32_t* bound_m, const volatile int* abort_flag,
                       CallName name) {
  moe_kernel_begin(h, p, ws, name);
  dev::moe_combine_counted<dev::detail::MoeGrid, TY, TO>(h, p, ws, out, idx, w, y, rows, bound_m, abort_flag,
                                                         name.text);
}

// Most blocks of `threads` of `kernel` resident at once on the current device (SMs x blocks per SM, the occupancy
// API), cached per (kernel, threads, device): the query is host work on every call otherwise.
cudaError_t resident_blocks(const void* kernel, unsigned threads, unsigned* blocks) {
  struct Entry {
    const void* kernel;
    unsigned threads;
    int device;
    unsigned blocks;
  };
  static std::mutex mu;
  static Entry cache[64];
  static unsigned used = 0;
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  {
    const std::lock_guard<std::mutex> lock(mu);
    for (unsigned i = 0; i < used; ++i)
      if (cache[i].kernel == kernel && cache[i].threads == threads && cache[i].device == device) {
        *blocks = cache[i].blocks;
        return cudaSuccess;
      }
  }
  int sms = 0, per_sm = 0;
  e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(threads), 0);
  if (e != cudaSuccess) return e;
  *blocks = static_cast<unsigned>(sms > 0 && per_sm > 0 ? sms * per_sm : 1);
  const std::lock_guard<std::mutex> lock(mu);
  if (used < 64) cache[used++] = Entry{kernel, threads, device, *blocks};
  return cudaSuccess;
}

// Blocks for a call over `rows` token rows of K experts each: about two warps per (token, k) row (its send, and
// the receive side's share), at most what is resident at once (a grid-wide barrier needs every block resident).
template <typename Kernel>
cudaError_t moe_blocks(Kernel kernel, unsigned threads, uint64_t rows, uint64_t K, unsigned* blocks) {
  unsigned most = 1;
  const cudaError_t e = resident_blocks(reinterpret_cast<const void*>(kernel), threads, &most);
  if (e != cudaSuccess) return e;
  const uint64_t warps = threads / 32;
  const long long set = config::get().moe_blocks;
  const uint64_t want = set > 0 ? static_cast<uint64_t>(set) : (2 * (rows == 0 ? 1 : rows) * K + warps - 1) / warps;
  *blocks = static_cast<unsigned>(want < most ? want : most);
  return cudaSuccess;
}

// The plan a launch passes: the all-to-all's, with the send-side pieces as GSHMEM_MOE_SEND_PIECES says for this
// direction (1, the default: dispatch only; 2: both; 0: neither). A PE's own choice: receivers do not depend on how
// a row was sent, only on its flag.
moe::Plan launch_plan(const moe::Plan& p, bool combine, const char* call) {
  const long long v = config::get().moe_send_pieces;
  if (v < 0 || v > 2)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: GSHMEM_MOE_SEND_PIECES={} is not 0, 1 or 2 (send wide rows in pieces: 0 "
         "never, 1 in dispatch, 2 in dispatch and combine). Fix: set 0, 1 or 2, or unset it (1)", call, v);
  const long long share = config::get().moe_recv_share;
  if (share < 0 || share > 99)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: GSHMEM_MOE_RECV_SHARE={} is not a percentage from 0 to 99 (the warps of a "
         "large dispatch that receive while the others send; 0: receive after sending). Fix: set 0..99, or unset it "
         "({})", call, share, moe::kRecvShare);
  moe::Plan q = p;
  if (v == 0 || (combine && v == 1)) q.send_piece_bytes = ~uint64_t{0};
  q.recv_share = static_cast<uint64_t>(share);
  return q;
}

// GSHMEM_MOE_THREADS, checked.
unsigned moe_threads(const char* call) {
  const long long t = config::get().moe_threads;
  if (t < 32 || t > kMoeMaxThreads || t % 32 != 0)
    fail(GSHMEM_ERROR_INVALID_VALUE, "{}: GSHMEM_MOE_THREADS={} must be a multiple of 32 from 32 to 512 (threads "
         "per block of the grid that runs one PE's dispatch or combine). Fix: set it to 32..512, or unset it (512)",
         call, t);
  return static_cast<unsigned>(t);
}

void finish(cudaError_t e, bool blocking, cudaStream_t st, const char* what, const char* call) {
  if (e != cudaSuccess)
    fail(GSHMEM_ERROR_SYSTEM, "{}: launching the MoE {} kernel (a cooperative grid) failed: {}. Fix: check "
         "that the GPU is healthy (nvidia-smi), that no earlier kernel faulted, that GSHMEM_MOE_THREADS fits the GPU, "
         "and that no other cooperative kernel runs beside it (MPS or a shared GPU can make it too large)", call, what,
         cudaGetErrorString(e));
  if (!blocking) return;
  const cudaError_t w = cudaStreamSynchronize(st);
  if (w != cudaSuccess)
    fail(GSHMEM_ERROR_SYSTEM, "{}: the MoE {} kernel failed: {}. Fix: a trap message above names the cause (a bad "
         "index, bound_m, calls out of order, a PE that never made the matching call (GSHMEM_WAIT_TIMEOUT), or a "
         "dead peer); run with compute-sanitizer for a fault", call, what, cudaGetErrorString(w));
}

template <typename TY, typename TO>
cudaError_t launch_combine(bool ov, unsigned threads, cudaStream_t st, const gshmem_device_state_t& h,
                           const moe::Plan& p, void* ws, void* out, const uint32_t* idx, const float* w, const void* y,
                           uint64_t rows, const uint32_t* bound_m, const volatile int* abort_flag,
                           const CallName& name) {
  (void)ov;  // cooperative launches are not overlapped (stream_kernel.cuh)
  unsigned blocks = 1;
  const cudaError_t e = moe_blocks(moe_combine_kernel<TY, TO>, threads, rows, p.experts_per_token, &blocks);
  if (e != cudaSuccess) return e;
  return launch_cooperative_grid(moe_combine_kernel<TY, TO>, blocks, threads, st, h, p, ws, static_cast<TO*>(out),
                                 idx, w, static_cast<const TY*>(y), rows, bound_m, abort_flag, name);
}

template <typename TY>
cudaError_t launch_combine_y(ReduceType out_type, bool ov, unsigned threads, cudaStream_t st,
                             const gshmem_device_state_t& h, const moe::Plan& p, void* ws, void* out,
                             const uint32_t* idx, const float* w, const void* y, uint64_t rows,
                             const uint32_t* bound_m, const volatile int* abort_flag, const CallName& name) {
  switch (out_type) {
    case ReduceType::Float:
      return launch_combine<TY, float>(ov, threads, st, h, p, ws, out, idx, w, y, rows, bound_m, abort_flag, name);
    case ReduceType::Half:
      return launch_combine<TY, __half>(ov, threads, st, h, p, ws, out, idx, w, y, rows, bound_m, abort_flag, name);
    case ReduceType::Bfloat16:
      return launch_combine<TY, __nv_bfloat16>(ov, threads, st, h, p, ws, out, idx, w, y, rows, bound_m, abort_flag,
                                               name);
    default: return cudaErrorInvalidValue;  // the host layer accepts only the three
  }
}

}  // namespace

void moe_dispatch_on_stream(Context* c, const gshmem_device_state_t& h, const moe::Plan& p, void* ws,
                            std::int32_t* out_expert_num_tokens, void* out_expert_x, void* out_expert_x_scale,
                            const void* dp_x, const void* dp_x_scale, const std::uint32_t* indices, std::size_t rows,
                            const std::uint32_t* bound_m, gshmem_stream_t s, bool blocking, const char* call) {
  const cuda::DeviceScope bind(device_of(c));
  const unsigned threads = moe_threads(call);
  cudaStream_t st = reinterpret_cast<cudaStream_t>(blocking ? internal_stream(c) : s);
  const auto* abort_flag = static_cast<const volatile int*>(peer_failure_flag(c));
  const moe::Plan q = launch_plan(p, false, call);
#if defined(GSHMEM_MOE_STAMPS)
  static std::once_flag stamps_at_exit;
  std::call_once(stamps_at_exit, [&] {
    stamp_pe = h.my_pe;
    std::atexit(print_stamps);
  });
#endif
  unsigned blocks = 1;
  cudaError_t e = moe_blocks(moe_dispatch_kernel, threads, static_cast<uint64_t>(rows), p.experts_per_token, &blocks);
  if (e == cudaSuccess)
    e = launch_cooperative_grid(moe_dispatch_kernel, blocks, threads, st, h, q, ws, out_expert_num_tokens,
                                out_expert_x, out_expert_x_scale, dp_x, dp_x_scale, indices,
                                static_cast<uint64_t>(rows), bound_m, abort_flag, call_name(call));
  finish(e, blocking, st, "dispatch", call);
}

void moe_combine_on_stream(Context* c, const gshmem_device_state_t& h, const moe::Plan& p, void* ws,
                           void* out_tokens, ReduceType out_type, const std::uint32_t* indices, const float* weights,
                           const void* expert_y, ReduceType y_type, std::size_t rows, const std::uint32_t* bound_m,
                           gshmem_stream_t s, bool blocking, const char* call) {
  const cuda::DeviceScope bind(device_of(c));
  const unsigned threads = moe_threads(call);
  cudaStream_t st = reinterpret_cast<cudaStream_t>(blocking ? internal_stream(c) : s);
  const bool ov = overlap_launch(c);
  const auto* abort_flag = static_cast<const volatile int*>(peer_failure_flag(c));
  const CallName name = call_name(call);
  const uint64_t n = static_cast<uint64_t>(rows);
  const moe::Plan q = launch_plan(p, true, call);
  cudaError_t e = cudaErrorInvalidValue;
  switch (y_type) {
    case ReduceType::Float:
      e = launch_combine_y<float>(out_type, ov, threads, st, h, q, ws, out_tokens, indices, weights, expert_y, n,
                                  bound_m, abort_flag, name);
      break;
    case ReduceType::Half:
      e = launch_combine_y<__half>(out_type, ov, threads, st, h, q, ws, out_tokens, indices, weights, expert_y, n,
                                   bound_m, abort_flag, name);
      break;
    case ReduceType::Bfloat16:
      e = launch_combine_y<__nv_bfloat16>(out_type, ov, threads, st, h, q, ws, out_tokens, indices, weights,
                                          expert_y, n, bound_m, abort_flag, name);
      break;
    default: break;
  }
  finish(e, blocking, st, "combine", call);
}

}  // namespace gshmem::gpu
