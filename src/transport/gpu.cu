// GPU PEs: device selection, per-PE context, host-blocking copies and atomics, and the stream-ordered kernels.
// Peers' heaps are mapped into this process (heap/), so every operation here is a plain copy, store or atomic
// on a local address: NVLink carries it, no proxy thread is involved.
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "runtime/control_segment.hpp"
#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime.hpp"
#include "transport/cuda_driver.hpp"
#include "transport/gpu.hpp"
#include "transport/stream_kernel.cuh"

namespace gshmem::gpu {
namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  fail(GSHMEM_ERROR_SYSTEM, "{} failed: {}. Fix: {}", what, cuda::error_text(e),
       e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure
           ? "a kernel on this GPU faulted earlier (often a bad pointer or a peer address used after free); run "
             "with compute-sanitizer to find it"
           : "check the arguments and that the GPU is healthy (nvidia-smi)");
}

// Layout of the library's part at the start of every symmetric heap (kHeapInternalBytes).
constexpr std::size_t kFlagsOffset = 0;  // uint64 [kMaxTeams][kMaxRounds]: stream-barrier flags
constexpr std::size_t kEpochOffset = kFlagsOffset + sizeof(std::uint64_t) * kMaxTeams * kMaxRounds;
constexpr std::size_t kInternalUsed = kEpochOffset + sizeof(std::uint64_t) * kMaxTeams;
// One more 8-byte word after kInternalUsed: the stream memory operations' trial write (setup_memops; on PE p, written
// by PE p - 1 only).
static_assert(kInternalUsed + 8 <= kHeapInternalBytes, "internal heap layout outgrew kHeapInternalBytes");
// runtime/device_state.hpp places the device API's barrier flags after this area (kDeviceBarrierOffset, 32 KiB).
static_assert(kInternalUsed + 8 <= 32 * 1024, "stream-barrier area would overlap the device-barrier flags");

using sys_atomic64 = ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_system>;
using sys_atomic32 = ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_system>;

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ bool cmp_u64(unsigned long long a, int cmp, unsigned long long b) {
  switch (cmp) {
    case GSHMEM_CMP_EQ: return a == b;
    case GSHMEM_CMP_NE: return a != b;
    case GSHMEM_CMP_GT: return a > b;
    case GSHMEM_CMP_LE: return a <= b;
    case GSHMEM_CMP_LT: return a < b;
    default: return a >= b;
  }
}

template <typename T, typename Ref>
__device__ T amo_body(Ref ref, int op, T v, T c) {
  switch (static_cast<AmoOp>(op)) {
    case AmoOp::Fetch: return ref.load(::cuda::memory_order_seq_cst);
    case AmoOp::Set: ref.store(v, ::cuda::memory_order_seq_cst); return 0;
    case AmoOp::Swap: return ref.exchange(v, ::cuda::memory_order_seq_cst);
    case AmoOp::CompareSwap: ref.compare_exchange_strong(c, v, ::cuda::memory_order_seq_cst); return c;
    case AmoOp::FetchAdd: return ref.fetch_add(v, ::cuda::memory_order_seq_cst);
    case AmoOp::FetchAnd: return ref.fetch_and(v, ::cuda::memory_order_seq_cst);
    case AmoOp::FetchOr: return ref.fetch_or(v, ::cuda::memory_order_seq_cst);
    case AmoOp::FetchXor: return ref.fetch_xor(v, ::cuda::memory_order_seq_cst);
  }
  return 0;
}

__global__ void amo_kernel(void* target, int bytes, int op, unsigned long long v, unsigned long long c,
                           unsigned long long* result) {
  unsigned long long old;
  if (bytes == 4) {
    old = amo_body<unsigned int>(sys_atomic32(*static_cast<unsigned int*>(target)), op,
                                 static_cast<unsigned int>(v), static_cast<unsigned int>(c));
  } else {
    old = amo_body<unsigned long long>(sys_atomic64(*static_cast<unsigned long long*>(target)), op, v, c);
  }
  if (result) *result = old;
}

__global__ void store_kernel(void* dst, unsigned long long v, int bytes) {
  stream_kernel_entry();
  switch (bytes) {
    case 1: *static_cast<unsigned char*>(dst) = static_cast<unsigned char>(v); break;
    case 2: *static_cast<unsigned short*>(dst) = static_cast<unsigned short>(v); break;
    case 4: *static_cast<unsigned int*>(dst) = static_cast<unsigned int>(v); break;
    default: *static_cast<unsigned long long*>(dst) = v; break;
  }
  __threadfence_system();
}

__global__ void signal_kernel(unsigned long long* sig, unsigned long long v, int op) {
  stream_kernel_entry();
  __threadfence_system();  // everything earlier on this stream is visible before the signal
  sys_atomic64 ref(*sig);
  if (op == GSHMEM_SIGNAL_ADD) ref.fetch_add(v, ::cuda::memory_order_release);
  else ref.store(v, ::cuda::memory_order_release);
}

// putmem_signal_on_stream in one launch (put_signal_on_stream below): the block copies src to dst (the target's
// memory) in the widest words (16, 8, 4, 2 or 1 bytes) at which the two addresses agree (dst ^ src), with the
// bytes before dst's first such boundary and after the last whole word one by one, then one thread updates the
// signal with release order at system scope, which the block barrier makes cumulative over every thread's copy:
// the signal is never visible before the data (as the device API's put_signal).
constexpr unsigned kPutSignalThreads = 512;
template <class W>
__device__ __forceinline__ void block_copy_words(char* dst, const char* src, std::size_t bytes) {
  constexpr std::size_t w = sizeof(W);
  std::size_t head = (w - (reinterpret_cast<std::uintptr_t>(dst) & (w - 1))) & (w - 1);
  if (head > bytes) head = bytes;
  const std::size_t words = (bytes - head) / w, tail = head + words * w;
  for (std::size_t i = threadIdx.x; i < head; i += blockDim.x) dst[i] = src[i];
  for (std::size_t i = threadIdx.x; i < words; i += blockDim.x)
    reinterpret_cast<W*>(dst + head)[i] = reinterpret_cast<const W*>(src + head)[i];
  for (std::size_t i = tail + threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
}
__global__ void put_signal_kernel(char* dst, const char* src, std::size_t bytes, unsigned long long* sig,
                                  unsigned long long v, int op) {
  stream_kernel_entry();
  // The lowest set bit of dst ^ src: the widest word at whose boundaries both addresses fall together.
  const std::uintptr_t x = reinterpret_cast<std::uintptr_t>(dst) ^ reinterpret_cast<std::uintptr_t>(src);
  if ((x & 15) == 0) block_copy_words<uint4>(dst, src, bytes);
  else if ((x & 7) == 0) block_copy_words<unsigned long long>(dst, src, bytes);
  else if ((x & 3) == 0) block_copy_words<unsigned>(dst, src, bytes);
  else if ((x & 1) == 0) block_copy_words<unsigned short>(dst, src, bytes);
  else block_copy_words<char>(dst, src, bytes);
  __syncthreads();
  if (threadIdx.x == 0) {
    sys_atomic64 ref(*sig);
    if (op == GSHMEM_SIGNAL_ADD) ref.fetch_add(v, ::cuda::memory_order_release);
    else ref.store(v, ::cuda::memory_order_release);
  }
}

// Set (through mapped pinned memory) by the host's watchdog when a peer PE died: spinning kernels give up at once.
__device__ __forceinline__ bool peer_failed(const volatile int* abort_flag, unsigned iter) {
  return (iter & 1023) == 0 && *abort_flag != 0;
}

__global__ void wait_kernel(unsigned long long* sig, int cmp, unsigned long long v, unsigned long long timeout_ns,
                            const volatile int* abort_flag) {
  stream_kernel_entry();
  sys_atomic64 ref(*sig);
  const unsigned long long start = globaltimer();
  unsigned long long cur;
  unsigned iter = 0;
  while (!cmp_u64(cur = ref.load(::cuda::memory_order_acquire), cmp, v)) {
    if (peer_failed(abort_flag, ++iter)) {
      printf("gshmem: gshmemx_signal_wait_until_on_stream: a peer PE died while this kernel waited for the signal "
             "at %p; aborting the kernel\n", sig);
      __trap();
    }
    if (timeout_ns && globaltimer() - start > timeout_ns) {
      printf("gshmem: gshmemx_signal_wait_until_on_stream: signal at %p is %llu, waited %.0f s for (cmp %d, "
             "value %llu) (GSHMEM_WAIT_TIMEOUT); aborting the kernel. Fix: check that the peer sends the signal\n",
             sig, cur, timeout_ns / 1e9, cmp, v);
      __trap();
    }
    __nanosleep(64);
  }
}

// Launched once at context creation to see that this driver takes overlapped launches.
__global__ void overlap_trial_kernel() { stream_kernel_entry(); }

// Barrier on the stream, one warp. Flags live in each PE's heap (internal area), per team slot. Epochs (one per
// slot, in this PE's heap) are read and advanced by the kernel, so a captured graph replays correctly.
//   flat (size <= kMaxRounds): lane 0 makes the stream's earlier work visible (one fence.acq_rel.sys: ~0.6 us, the
//   floor of any release) and writes this PE's epoch into flag [my rank] of every other member; lane r waits for
//   flag [r] of its own. dissemination (larger teams): lane 0, round k: flag [k] of the member 2^k ahead.
__device__ __forceinline__ unsigned long long* flag_slot(char* heap, int slot, int index) {
  return reinterpret_cast<unsigned long long*>(heap + kFlagsOffset) + slot * kMaxRounds + index;
}
__device__ __forceinline__ char* heap_of(char* const* peer_bases, char* my_heap, unsigned long long peer_stride,
                                         int me_pe, int pe) {
  return peer_stride ? my_heap + static_cast<long long>(pe - me_pe) * static_cast<long long>(peer_stride)
                     : peer_bases[pe];
}
__device__ void wait_flag(const unsigned long long* f, unsigned long long epoch, int slot, int from_pe, int me_pe,
                          unsigned long long timeout_ns, const volatile int* abort_flag) {
  sys_atomic64 mine(*const_cast<unsigned long long*>(f));
  if (mine.load(::cuda::memory_order_acquire) >= epoch) return;
  const unsigned long long t0 = globaltimer();
  unsigned iter = 0;
  while (mine.load(::cuda::memory_order_acquire) < epoch) {
    if (peer_failed(abort_flag, ++iter)) {
      printf("gshmem: barrier on stream (team slot %d): a peer PE died during the barrier; aborting the kernel\n",
             slot);
      __trap();
    }
    if (timeout_ns && globaltimer() - t0 > timeout_ns) {
      printf("gshmem: barrier on stream (team slot %d): PE %d waited %.0f s for PE %d (GSHMEM_WAIT_TIMEOUT); "
             "aborting the kernel. Fix: every team member must call the barrier\n", slot, me_pe,
             timeout_ns / 1e9, from_pe);
      __trap();
    }
  }
}

__global__ void barrier_kernel(char* const* peer_bases, char* my_heap, unsigned long long peer_stride, int slot,
                               TeamValue t, unsigned long long timeout_ns, const volatile int* abort_flag) {
  stream_kernel_entry();
  const int lane = static_cast<int>(threadIdx.x);
  const int size = t.size, me = t.my_rank;
  const int me_pe = team_world_pe(t, me);
  auto* epochs = reinterpret_cast<unsigned long long*>(my_heap + kEpochOffset);
  const unsigned long long epoch = epochs[slot] + 1;
  __syncwarp();
  if (size <= kMaxRounds) {
    if (lane == 0) {
      asm volatile("fence.acq_rel.sys;" ::: "memory");
      for (int r = 0; r < size; ++r) {
        if (r == me) continue;
        char* h = heap_of(peer_bases, my_heap, peer_stride, me_pe, team_world_pe(t, r));
        asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(flag_slot(h, slot, me)), "l"(epoch) : "memory");
      }
      epochs[slot] = epoch;
    }
    __syncwarp();  // the other lanes start polling after lane 0's fence and stores, not interleaved with them
    for (int r = lane; r < size; r += 32)
      if (r != me) wait_flag(flag_slot(my_heap, slot, r), epoch, slot, team_world_pe(t, r), me_pe, timeout_ns,
                             abort_flag);
  } else if (lane == 0) {
    for (int k = 0; (1 << k) < size; ++k) {
      const int to = team_world_pe(t, (me + (1 << k)) % size);
      char* h = heap_of(peer_bases, my_heap, peer_stride, me_pe, to);
      sys_atomic64(*flag_slot(h, slot, k)).store(epoch, ::cuda::memory_order_release);
      wait_flag(flag_slot(my_heap, slot, k), epoch, slot, team_world_pe(t, (me - (1 << k) % size + size) % size),
                me_pe, timeout_ns, abort_flag);
    }
    epochs[slot] = epoch;
  }
}

}  // namespace

struct Context {
  int device = -1;
  cudaStream_t stream = nullptr;           // host-initiated operations, in order
  unsigned long long* result = nullptr;    // mapped pinned host scratch (kLoadMax bytes): atomic results, loads
  char** d_peer_bases = nullptr;           // device copy of the peer base table
  char* heap_base = nullptr;
  unsigned long long peer_stride = 0;      // heap::regular_peer_stride of the peer table (0: use the table)
  unsigned long long timeout_ns = 0;
  int* abort_flag = nullptr;               // mapped pinned word: non-zero once a peer PE died
  bool overlap_launch = false;             // stream kernels with programmatic serialization (stream_kernel.cuh)
  bool pending = false;                    // nbi work on `stream` that no quiet has waited for yet
  // copy_engine_broadcast's second streams, one per stream it was called on (so calls on different streams, and a
  // graph capture on one of them, never wait for each other), with their fork / join events; made at first use.
  struct Side {
    cudaStream_t stream = nullptr;
    cudaEvent_t fork = nullptr, join = nullptr;
  };
  std::unordered_map<cudaStream_t, Side> sides;
  bool ce_said = false;           // the INFO line of copy_engine_broadcast's first use is written
  bool ce_exchange_said = false;  // and copy_engine_exchange's
  // Driver entry points of the CUDA 12.0 ABI for p and SET signals without a kernel (setup_memops), or all null:
  // kernels instead. A write-value: 8-byte p and SET signals; one-element memsets: p of 1, 2 and 4 bytes.
  CUresult (*write64)(CUstream, CUdeviceptr, cuuint64_t, unsigned) = nullptr;
  CUresult (*memset8)(CUdeviceptr, unsigned char, std::size_t, CUstream) = nullptr;
  CUresult (*memset16)(CUdeviceptr, unsigned short, std::size_t, CUstream) = nullptr;
  CUresult (*memset32)(CUdeviceptr, unsigned int, std::size_t, CUstream) = nullptr;
};

namespace {

// p_on_stream and SET signals without a kernel. cuStreamWriteValue64: the GPU's front end writes the value after
// everything earlier on the stream has completed, behind a system-scope memory barrier (the default flags), as one
// 64-bit write; one-element cuMemsetD8/D16/D32Async for smaller p. One H200, back to back: write-value 1.8 us,
// 4-byte memset 0.9, the one-thread store kernel (overlapped launch) 2.5-4.0 (bench/NOTES.md entry 14). Resolved
// at context creation and tried once on a peer's memory (`trial`: the next PE's spare internal word, which only
// this PE writes), left null where the driver or device refuses; GSHMEM_STREAM_MEMOPS=0 turns them off.
void setup_memops(Context* c, char* trial) {
  if (!config::get().stream_memops) {
    log::info("stream memory operations: off (GSHMEM_STREAM_MEMOPS=0); p and signals on streams launch kernels");
    return;
  }
  const auto why_not = [&]() -> std::string {
#if CUDART_VERSION < 12050
    return "built with a CUDA runtime older than 12.5 (no cudaGetDriverEntryPointByVersion)";
#else
    // The driver's entry points of the CUDA 12.0 ABI, by name.
    const auto entry = [](const char* name, auto& fn) {
      cudaDriverEntryPointQueryResult q{};
      void* f = nullptr;
      if (cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
          q != cudaDriverEntryPointSuccess || !f) {
        (void)cudaGetLastError();  // that call's own error: later launch checks must not see it
        return false;
      }
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(f);
      return true;
    };
    if (!entry("cuStreamWriteValue64", c->write64) || !entry("cuMemsetD8Async", c->memset8) ||
        !entry("cuMemsetD16Async", c->memset16) || !entry("cuMemsetD32Async", c->memset32))
      return "this driver lacks cuStreamWriteValue64 or cuMemsetD8/D16/D32Async";
    int ok64 = 0;
    const cuda::Driver* drv = cuda::driver();
    if (drv->cuDeviceGetAttribute(&ok64, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, c->device) !=
            CUDA_SUCCESS || !ok64)
      return "the device does not take 64-bit stream memory operations";
    // Trial: each kind into that word through this PE's mapping of it, then read back the same way.
    const auto word = reinterpret_cast<CUdeviceptr>(trial);
    const auto cs = reinterpret_cast<CUstream>(c->stream);
    const unsigned long long want = 0x5eed5eed00c0ffeeull;
    unsigned long long got = 0;
    CUresult r = c->write64(cs, word, want, 0);                              // bytes ee ff c0 00 ed 5e ed 5e
    if (r == CUDA_SUCCESS) r = c->memset32(word + 4, 0xabcd1234u, 1, cs);  // ee ff c0 00 34 12 cd ab
    if (r == CUDA_SUCCESS) r = c->memset8(word + 2, 0x77, 1, cs);          // ee ff 77 00 34 12 cd ab
    if (r == CUDA_SUCCESS) r = c->memset16(word + 6, 0x4321, 1, cs);       // ee ff 77 00 34 12 21 43
    if (r != CUDA_SUCCESS) return "the trial write failed: " + cuda::error_text(r);
    // Read back through the pinned scratch, as load() reads (no pageable staging of the peer's memory).
    check(cudaMemcpyAsync(c->result, reinterpret_cast<void*>(word), sizeof got, cudaMemcpyDefault, c->stream),
          "cudaMemcpyAsync (stream memory operation trial)");
    check(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize (stream memory operation trial)");
    got = *c->result;
    if (got != 0x432112340077ffeeull) return "the trial writes did not land";
    return {};
#endif
  }();
  if (!why_not.empty()) {
    c->write64 = nullptr;
    c->memset8 = nullptr;
    c->memset16 = nullptr;
    c->memset32 = nullptr;
    log::warn("stream memory operations: {}; p and signals on streams launch kernels instead", why_not);
    return;
  }
  log::info("stream memory operations: p_on_stream is a one-element memset (8 bytes: cuStreamWriteValue64), SET "
            "signals on streams cuStreamWriteValue64");
}

// Every entry point below that issues CUDA work starts with `Bind b(c)`: the PE's GPU is current on the calling thread
// for its runtime and driver calls (cuda::DeviceScope). Without it, a thread that has made no CUDA call issued to
// device 0: its kernels and copies ran on GPU 0 in a PE of GPU 1, whose heap mappings are accessible to GPU 1 only
// (an illegal address: gpu.mp.stream.no_memops.n2, case fresh_thread, 2 PEs on 2 GPUs), and created a context on
// GPU 0 there.
using Bind = cuda::DeviceScope;
#define GSHMEM_BIND(c) const Bind bind_((c)->device)

void release_context(Context* c) noexcept;

// A SET signal as one 64-bit write-value on `s` (setup_memops found them usable).
void write_signal(const Context* c, CUstream s, std::uint64_t* sig, std::uint64_t value, const char* what) {
  cuda::check(c->write64(s, reinterpret_cast<CUdeviceptr>(sig), value, 0), what);
}

}  // namespace

bool available(std::string* why) {
  if (!cuda::driver()) {
    if (why) *why = cuda::reason();
    return false;
  }
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why) *why = "the CUDA runtime sees no GPU: " + cuda::error_text(e);
    return false;
  }
  int usable = 0;
  for (int d = 0; d < n; ++d) {
    int major = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d);
    if (major >= 8) ++usable;
  }
  if (!usable) {
    if (why) *why = "no visible GPU has compute capability 8.0 or newer (A100, H100, ...), which gshmem needs";
    return false;
  }
  return true;
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

int select_device(int local_index, int local_size, char pci_bus_id[16]) {
  const cuda::Driver* drv = cuda::driver();
  int dev = -1;
  CUcontext ctx = nullptr;
  if (drv && drv->cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx) {
    CUdevice d;
    cuda::check(drv->cuCtxGetDevice(&d), "cuCtxGetDevice");
    dev = static_cast<int>(d);
    log::info("using GPU {} that the program selected before init", dev);
  } else {
    int n = device_count();
    dev = local_index % n;
    if (local_size > n)
      log::info("{} PEs on this node share {} GPUs: PE with local index {} takes GPU {}", local_size, n,
                local_index, dev);
  }
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (major < 8)
    fail(GSHMEM_ERROR_NOT_SUPPORTED, "init: GPU {} (taken for local PE {}) has compute capability {}.{}; gshmem "
         "needs 8.0 or newer (A100, H100, ...). Fix: make only such GPUs visible (CUDA_VISIBLE_DEVICES), or set "
         "GSHMEM_DEVICE=cpu", dev, local_index, major, minor);
  check(cudaSetDevice(dev), "cudaSetDevice");
  check(cudaFree(nullptr), "creating the CUDA context");
  std::memset(pci_bus_id, 0, 16);
  check(cudaDeviceGetPCIBusId(pci_bus_id, 16, dev), "cudaDeviceGetPCIBusId");
  return dev;
}

Context* create_context(Runtime& rt) {
  auto* c = new Context();
  try {
    c->device = rt.device;
    GSHMEM_BIND(c);
    c->heap_base = rt.heap->base();
    const double t = config::get().wait_timeout;
    c->timeout_ns = t > 0 ? static_cast<unsigned long long>(t * 1e9) : 0;
    check(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    static_assert(kLoadMax >= sizeof(unsigned long long), "the pinned scratch holds an atomic's result");
    check(cudaHostAlloc(reinterpret_cast<void**>(&c->result), kLoadMax, cudaHostAllocMapped),
          "cudaHostAlloc (pinned scratch)");
    check(cudaHostAlloc(reinterpret_cast<void**>(&c->abort_flag), sizeof(int), cudaHostAllocMapped),
          "cudaHostAlloc (peer-failure flag)");
    *c->abort_flag = 0;
    const auto& bases = rt.heap->peer_bases();
    c->peer_stride = heap::regular_peer_stride(bases);
    check(cudaMalloc(reinterpret_cast<void**>(&c->d_peer_bases), bases.size() * sizeof(char*)),
          "cudaMalloc (peer table)");
    check(cudaMemcpy(c->d_peer_bases, bases.data(), bases.size() * sizeof(char*), cudaMemcpyHostToDevice),
          "cudaMemcpy (peer table)");
    // Overlapped launches need the device (9.0+) and the kernels' code (PTX 9.0+: its stream_kernel_entry() holds
    // the wait; code JIT-compiled from older PTX has none). gpu_stream_wait.cu's kernels are built with the same
    // architectures as barrier_kernel.
    int major = 0;
    check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, c->device), "cudaDeviceGetAttribute");
    cudaFuncAttributes fa{};
    check(cudaFuncGetAttributes(&fa, barrier_kernel), "cudaFuncGetAttributes (stream barrier kernel)");
    c->overlap_launch = config::get().stream_overlap && major >= 9 && fa.ptxVersion >= 90;
    if (c->overlap_launch) {
      // A driver that refuses the attribute would fail every stream call: try once, fall back to plain launches.
      const cudaError_t e = launch_stream_kernel(true, overlap_trial_kernel, 1, c->stream);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();
        log::warn("stream kernels: this driver refused an overlapped launch ({}); using plain launches",
                  cudaGetErrorString(e));
        c->overlap_launch = false;
      }
    }
    log::info("stream kernels: {} (compute capability {}.x, kernel code for {})",
              c->overlap_launch ? "overlapped launches (programmatic stream serialization)" : "plain launches",
              major, fa.ptxVersion);
    check(cudaMemset(c->heap_base, 0, kInternalUsed), "cudaMemset (barrier flags)");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (context setup)");
    char* next = bases[static_cast<std::size_t>(rt.my_pe + 1) % bases.size()];
    setup_memops(c, (next ? next : c->heap_base) + kInternalUsed);
  } catch (...) {
    destroy_context(c);
    throw;
  }
  return c;
}

void destroy_context(Context* c) noexcept {
  if (!c) return;
  try {
    GSHMEM_BIND(c);
    release_context(c);
  } catch (...) {  // the GPU could not be made current: release what can be without it
    release_context(c);
  }
}

namespace {
void release_context(Context* c) noexcept {
  if (c->stream) {
    cudaStreamSynchronize(c->stream);
    cudaStreamDestroy(c->stream);
  }
  for (auto& [user, side] : c->sides) {
    (void)user;
    if (side.stream) {
      cudaStreamSynchronize(side.stream);
      cudaStreamDestroy(side.stream);
    }
    if (side.fork) cudaEventDestroy(side.fork);
    if (side.join) cudaEventDestroy(side.join);
  }
  if (c->result) cudaFreeHost(c->result);
  if (c->abort_flag) cudaFreeHost(c->abort_flag);
  if (c->d_peer_bases) cudaFree(c->d_peer_bases);
  delete c;
}
}  // namespace

void copy(Context* c, void* dst, const void* src, std::size_t bytes, bool nbi) {
  GSHMEM_BIND(c);
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, c->stream), "cudaMemcpyAsync");
  if (nbi) c->pending = true;
  else check(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize (blocking copy)");
}

void copy_strided(Context* c, void* dst, const void* src, std::size_t elem, std::ptrdiff_t dst_stride,
                  std::ptrdiff_t src_stride, std::size_t n, bool nbi) {
  GSHMEM_BIND(c);
  check(cudaMemcpy2DAsync(dst, static_cast<std::size_t>(dst_stride) * elem, src,
                          static_cast<std::size_t>(src_stride) * elem, elem, n, cudaMemcpyDefault, c->stream),
        "cudaMemcpy2DAsync (strided transfer)");
  if (nbi) c->pending = true;
  else check(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize (strided transfer)");
}

void load(Context* c, void* out, const void* src, std::size_t bytes) {
  GSHMEM_BIND(c);
  // One H200: 6.5-6.9 us per 16 B-4 KiB read this way against 7.2-7.9 us straight into pageable memory (the
  // driver's staged path), 12.5 vs 16.1 us at 64 KiB (host_ops_probe).
  check(cudaMemcpyAsync(c->result, src, bytes, cudaMemcpyDefault, c->stream), "cudaMemcpyAsync (read into the host)");
  check(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize (read into the host)");
  std::memcpy(out, c->result, bytes);
}

void memset_zero(Context* c, void* dst, std::size_t bytes) {
  GSHMEM_BIND(c);
  check(cudaMemsetAsync(dst, 0, bytes, c->stream), "cudaMemsetAsync");
  check(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize (zeroing)");
}

// Every blocking host operation waits for the stream itself, so only nbi work can be outstanding: without any, a
// quiet (and each host barrier_all, which starts with one) costs no stream synchronisation.
void quiet(Context* c) {
  if (!c->pending) return;
  GSHMEM_BIND(c);
  check(cudaStreamSynchronize(c->stream), "gshmem_quiet: cudaStreamSynchronize");
  c->pending = false;
}

void signal_peer_failure(Context* c) noexcept {
  if (c && c->abort_flag) __atomic_store_n(c->abort_flag, 1, __ATOMIC_SEQ_CST);
}

int* peer_failure_flag(Context* c) { return c ? c->abort_flag : nullptr; }

int device_of(Context* c) { return c ? c->device : -1; }

bool overlap_launch(Context* c) { return c && c->overlap_launch; }

gshmem_stream_t internal_stream(Context* c) { return reinterpret_cast<gshmem_stream_t>(c->stream); }

namespace {
// Two copies by the copy engines at once: the local one (src -> dest) on the second stream of `st`, the peer's
// (peer_src -> peer_dest) on `st`.
cudaError_t fork_copies(Context* c, cudaStream_t st, void* peer_dest, const void* peer_src, void* dest,
                        const void* src, std::size_t bytes) {
  Context::Side& side = c->sides[st];
  cudaError_t e = cudaSuccess;
  if (!side.stream || !side.fork || !side.join) {
    // Made at the first call on `st`, which may come while the program captures a graph (nothing of this is
    // captured): relaxed capture mode meanwhile, so that the creation does not invalidate the program's capture.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    e = cudaThreadExchangeStreamCaptureMode(&mode);
    if (e == cudaSuccess && !side.stream) e = cudaStreamCreateWithFlags(&side.stream, cudaStreamNonBlocking);
    if (e == cudaSuccess && !side.fork) e = cudaEventCreateWithFlags(&side.fork, cudaEventDisableTiming);
    if (e == cudaSuccess && !side.join) e = cudaEventCreateWithFlags(&side.join, cudaEventDisableTiming);
    const cudaError_t back = cudaThreadExchangeStreamCaptureMode(&mode);
    if (e == cudaSuccess) e = back;
  }
  // The local copy on the second stream, after everything earlier on `s` (the entry sync); the copy to the peer on
  // `s`; then `s` waits for the local one, so what follows on `s` (the exit sync) comes after both.
  if (e == cudaSuccess) e = cudaEventRecord(side.fork, st);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(side.stream, side.fork, 0);
  if (e == cudaSuccess) e = cudaMemcpyAsync(dest, src, bytes, cudaMemcpyDefault, side.stream);
  if (e == cudaSuccess) e = cudaMemcpyAsync(peer_dest, peer_src, bytes, cudaMemcpyDefault, st);
  if (e == cudaSuccess) e = cudaEventRecord(side.join, side.stream);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(st, side.join, 0);
  return e;
}
}  // namespace

int copy_engine_broadcast(Context* c, gshmem_stream_t s, void* peer_dest, void* dest, const void* src,
                          std::size_t bytes) {
  GSHMEM_BIND(c);
  auto st = reinterpret_cast<cudaStream_t>(s);
  cudaError_t e = cudaSuccess;
  if (dest == src) {
    e = cudaMemcpyAsync(peer_dest, src, bytes, cudaMemcpyDefault, st);
  } else {
    e = fork_copies(c, st, peer_dest, src, dest, src, bytes);
  }
  if (e == cudaSuccess && !c->ce_said) {
    c->ce_said = true;
    log::info("broadcast: the root copies by the copy engines (GSHMEM_COLL_BCAST_CE_BYTES)");
  }
  return e;
}

int copy_engine_exchange(Context* c, gshmem_stream_t s, void* peer_dest, const void* peer_src, void* dest,
                         const void* src, std::size_t bytes) {
  GSHMEM_BIND(c);
  const cudaError_t e = fork_copies(c, reinterpret_cast<cudaStream_t>(s), peer_dest, peer_src, dest, src, bytes);
  if (e == cudaSuccess && !c->ce_exchange_said) {
    c->ce_exchange_said = true;
    log::info("fcollect / alltoall: the blocks go by the copy engines (GSHMEM_COLL_EXCHANGE_CE_BYTES)");
  }
  return e;
}

void synchronize_device(Context* c, const char* call) {
  GSHMEM_BIND(c);
  std::string what = std::string(call) + ": cudaDeviceSynchronize";
  check(cudaDeviceSynchronize(), what.c_str());
}

void reset_team_slot(Context* c, int slot) {
  GSHMEM_BIND(c);
  check(cudaMemsetAsync(c->heap_base + kFlagsOffset + sizeof(std::uint64_t) * slot * kMaxRounds, 0,
                        sizeof(std::uint64_t) * kMaxRounds, c->stream),
        "cudaMemsetAsync (team slot flags)");
  check(cudaMemsetAsync(c->heap_base + kEpochOffset + sizeof(std::uint64_t) * slot, 0, sizeof(std::uint64_t),
                        c->stream),
        "cudaMemsetAsync (team slot epoch)");
  check(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize (team slot reset)");
}

std::uint64_t amo(Context* c, void* target, int bytes, AmoOp op, std::uint64_t value, std::uint64_t cond) {
  GSHMEM_BIND(c);
  amo_kernel<<<1, 1, 0, c->stream>>>(target, bytes, static_cast<int>(op), value, cond, c->result);
  check(cudaGetLastError(), "launching the atomic kernel");
  check(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize (atomic)");
  return *c->result;
}

void signal_nbi(Context* c, std::uint64_t* sig, std::uint64_t value, int sig_op) {
  GSHMEM_BIND(c);
  c->pending = true;
  if (c->write64 && sig_op == GSHMEM_SIGNAL_SET) {
    write_signal(c, reinterpret_cast<CUstream>(c->stream), sig, value, "cuStreamWriteValue64 (signal from the host)");
    return;
  }
  const AmoOp op = sig_op == GSHMEM_SIGNAL_ADD ? AmoOp::FetchAdd : AmoOp::Set;
  amo_kernel<<<1, 1, 0, c->stream>>>(sig, 8, static_cast<int>(op), static_cast<unsigned long long>(value), 0ull,
                                     nullptr);
  check(cudaGetLastError(), "launching the signal kernel");
}

void copy_on_stream(Context* c, void* dst, const void* src, std::size_t bytes, gshmem_stream_t s) {
  GSHMEM_BIND(c);
  // The copy engine, at every size: a copy kernel was slower here even for 16 bytes (3.2 vs 2.3 us per call on
  // H200, where an empty kernel launch alone took 3.2 us back to back; bench/NOTES.md).
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, reinterpret_cast<cudaStream_t>(s)),
        "cudaMemcpyAsync on the user's stream");
}

void store_on_stream(Context* c, void* dst, std::uint64_t value, int bytes, gshmem_stream_t s) {
  GSHMEM_BIND(c);
  const auto a = reinterpret_cast<std::uintptr_t>(dst);
  const auto cs = reinterpret_cast<CUstream>(s);
  if (c->write64 && bytes == 8 && a % 8 == 0) {
    cuda::check(c->write64(cs, a, value, 0), "cuStreamWriteValue64 (p on a stream)");
    return;
  }
  // 1, 2 and 4 bytes: a one-element memset, whose value travels in the call. One H200, GPU time per p back to back:
  // 0.91 us against 1.78-1.82 for a 4-byte write-value (host_ops_probe; bench/NOTES.md entry 14).
  if (c->memset32 && bytes == 4 && a % 4 == 0) {
    cuda::check(c->memset32(a, static_cast<unsigned>(value), 1, cs), "cuMemsetD32Async (p on a stream)");
    return;
  }
  if (c->memset16 && bytes == 2 && a % 2 == 0) {
    cuda::check(c->memset16(a, static_cast<unsigned short>(value), 1, cs), "cuMemsetD16Async (p on a stream)");
    return;
  }
  if (c->memset8 && bytes == 1) {
    cuda::check(c->memset8(a, static_cast<unsigned char>(value), 1, cs), "cuMemsetD8Async (p on a stream)");
    return;
  }
  check(launch_stream_kernel(c->overlap_launch, store_kernel, 1, reinterpret_cast<cudaStream_t>(s), dst,
                             static_cast<unsigned long long>(value), bytes),
        "launching the p_on_stream kernel");
}

void signal_on_stream(Context* c, std::uint64_t* sig, std::uint64_t value, int sig_op, gshmem_stream_t s) {
  GSHMEM_BIND(c);
  if (c->write64 && sig_op == GSHMEM_SIGNAL_SET) {  // ADD needs an atomic: the kernel
    write_signal(c, reinterpret_cast<CUstream>(s), sig, value, "cuStreamWriteValue64 (signal on a stream)");
    return;
  }
  check(launch_stream_kernel(c->overlap_launch, signal_kernel, 1, reinterpret_cast<cudaStream_t>(s),
                             reinterpret_cast<unsigned long long*>(sig), static_cast<unsigned long long>(value),
                             sig_op),
        "launching the signal kernel");
}

void put_signal_on_stream(Context* c, void* dst, const void* src, std::size_t bytes, bool src_in_heap,
                          std::uint64_t* sig, std::uint64_t value, int sig_op, gshmem_stream_t s) {
  GSHMEM_BIND(c);
  // One kernel instead of two stream operations (a copy-engine copy, then a write-value or a signal kernel) for
  // small payloads: bench/NOTES.md entry 71. The kernel reads src, so src must be this GPU's memory. A 0-byte call
  // is the signal alone (a write-value for SET).
  bool kernel = bytes != 0 && bytes <= config::get().put_signal_kernel_bytes;
  if (kernel && !src_in_heap) {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, src) == cudaSuccess) {
      kernel = a.type == cudaMemoryTypeDevice && a.device == c->device;
    } else {
      kernel = false;
      // Not reported by a later call. This also clears an error the caller's own work left pending (which can be
      // what made the query fail): the runtime has no way to clear one error only.
      (void)cudaGetLastError();
    }
  }
  if (!kernel) {
    if (bytes) copy_on_stream(c, dst, src, bytes, s);
    signal_on_stream(c, sig, value, sig_op, s);
    return;
  }
  check(launch_stream_kernel(c->overlap_launch, put_signal_kernel, kPutSignalThreads,
                             reinterpret_cast<cudaStream_t>(s), static_cast<char*>(dst),
                             static_cast<const char*>(src), bytes, reinterpret_cast<unsigned long long*>(sig),
                             static_cast<unsigned long long>(value), sig_op),
        "launching the put-with-signal kernel");
}

void wait_on_stream(Context* c, std::uint64_t* sig, int cmp, std::uint64_t value, gshmem_stream_t s) {
  GSHMEM_BIND(c);
  check(launch_stream_kernel(c->overlap_launch, wait_kernel, 1, reinterpret_cast<cudaStream_t>(s),
                             reinterpret_cast<unsigned long long*>(sig), cmp, static_cast<unsigned long long>(value),
                             c->timeout_ns, static_cast<const volatile int*>(c->abort_flag)),
        "launching the signal-wait kernel");
}

void quiet_on_stream(Context*, gshmem_stream_t) {
  // Stream-ordered transfers to NVLink peers are complete when their stream operation completes, and later work
  // on the stream starts after that: ordering on the stream is already quiet's guarantee.
}

void barrier_on_stream(Context* c, int slot, const TeamValue& t, gshmem_stream_t s) {
  if (t.size <= 1) return;
  GSHMEM_BIND(c);
  check(launch_stream_kernel(c->overlap_launch, barrier_kernel, 32, reinterpret_cast<cudaStream_t>(s),
                             static_cast<char* const*>(c->d_peer_bases), c->heap_base, c->peer_stride, slot, t,
                             c->timeout_ns, static_cast<const volatile int*>(c->abort_flag)),
        "launching the barrier kernel");
}

}  // namespace gshmem::gpu
