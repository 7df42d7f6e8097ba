// gpu_ordering: memory-ordering tests of the device API over many rounds (argument: rounds, default 10000; the
// sanitizer script passes fewer). Every PE sends to its right neighbour and receives from its left one, in one
// kernel (sender block and receiver block), so it works for any number of PEs.
//  1. put_signal, paced: the receiver waits for the round's signal, then checks every data word exactly
//     (thread: gshmem_uint64_put_signal SET; warp: gshmemx_uint64_put_signal_nbi_warp ADD; block:
//     gshmemx_putmem_signal_block SET), and acknowledges. The sender writes the round's source in the same kernel
//     right before the put (a guard for any non-coherent source path; one was tried in ee3bdfc and reverted): by
//     the whole block then a CTA barrier, by the calling thread alone with no barrier (scope 3), and into shared
//     memory (scope 4, block put from a __shared__ source).
//  2. unpaced message passing, the receiver never waiting for the sender: whenever it reads the flag (acquire),
//     the data written before it must be at least as new:  p(a); fence; p(flag)  |  putmem_nbi; fence; p(flag)  |
//     putmem_nbi; quiet; atomic_set(flag) (and a get after quiet sees the put)  |  putmem_signal_nbi  |
//     putmem_nbi; fence; signal_op SET / ADD (signal_op itself is relaxed: the fence orders).
//  3. device barrier: every PE puts a stamp to every other, barrier_all (native Block scope, and the thread-scope
//     free function), then checks every stamp.
#include <gshmem/device.cuh>

#include <cstdlib>

#include "harness.hpp"

namespace {

namespace dev = gshmem::dev;
constexpr int kWords = 1024;  // paced put_signal payload (uint64)
constexpr int kMp = 8;        // unpaced payload words

struct Bufs {
  uint64_t* src;   // kWords, local source
  uint64_t* dst;   // kWords, written by the left neighbour
  uint64_t* sig;   // [0] signal, [1] ack (written by the right neighbour), [2] flag
  uint64_t* a;     // kMp words
  uint64_t* slots; // 2 x 64 barrier stamps
  int* errors;     // device memory
};

__device__ __forceinline__ uint64_t word(int r, int i) { return (static_cast<uint64_t>(r) << 20) ^ (i * 2654435761u); }

__device__ void bounded(uint64_t t0, const char* what) {
  if (dev::detail::globaltimer() - t0 > 30000000000ull) {
    printf("gpu_ordering: PE %d waited 30 s for %s; aborting\n", gshmem_my_pe(), what);
    __trap();
  }
}

__global__ void paced_signal(Bufs b, int scope, int rounds) {
  const int me = gshmem_my_pe(), n = gshmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  __shared__ int bad;
  __shared__ uint64_t shared_src[kWords];
  if (blockIdx.x == 0) {  // sender
    for (int r = 1; r <= rounds; ++r) {
      if (threadIdx.x == 0) gshmem_signal_wait_until(&b.sig[1], GSHMEM_CMP_EQ, static_cast<uint64_t>(r - 1));
      __syncthreads();
      if (scope == 3) {  // one thread writes its source and puts it at once
        if (threadIdx.x == 0) {
          for (int i = 0; i < kWords; ++i) b.src[i] = word(r, i);
          gshmem_putmem_signal(b.dst, b.src, kWords * sizeof(uint64_t), &b.sig[0], static_cast<uint64_t>(r),
                               GSHMEM_SIGNAL_SET, right);
        }
        __syncthreads();
        continue;
      }
      if (scope == 4) {  // the block fills shared memory and puts from it (the call's entry barrier orders it)
        for (int i = threadIdx.x; i < kWords; i += blockDim.x) shared_src[i] = word(r, i);
        gshmemx_putmem_signal_block(b.dst, shared_src, kWords * sizeof(uint64_t), &b.sig[0],
                                    static_cast<uint64_t>(r), GSHMEM_SIGNAL_SET, right);
        __syncthreads();
        continue;
      }
      for (int i = threadIdx.x; i < kWords; i += blockDim.x) b.src[i] = word(r, i);
      __syncthreads();
      if (scope == 0) {
        if (threadIdx.x == 0)
          gshmem_uint64_put_signal(b.dst, b.src, kWords, &b.sig[0], static_cast<uint64_t>(r), GSHMEM_SIGNAL_SET,
                                   right);
      } else if (scope == 1) {
        if (threadIdx.x < 32)
          gshmemx_uint64_put_signal_nbi_warp(b.dst, b.src, kWords, &b.sig[0], 1, GSHMEM_SIGNAL_ADD, right);
      } else {
        gshmemx_putmem_signal_block(b.dst, b.src, kWords * sizeof(uint64_t), &b.sig[0], static_cast<uint64_t>(r),
                                    GSHMEM_SIGNAL_SET, right);
      }
      __syncthreads();
    }
  } else {  // receiver
    for (int r = 1; r <= rounds; ++r) {
      if (threadIdx.x == 0) {
        bad = 0;
        gshmem_signal_wait_until(&b.sig[0], GSHMEM_CMP_EQ, static_cast<uint64_t>(r));
      }
      __syncthreads();
      for (int i = threadIdx.x; i < kWords; i += blockDim.x)
        if (b.dst[i] != word(r, i)) atomicAdd(&bad, 1);
      __syncthreads();
      if (threadIdx.x == 0) {
        if (bad) atomicAdd(b.errors, bad);
        // signal_op is relaxed: the fence orders the block's reads of this round (through the barrier above) before
        // the ack that lets the sender overwrite them.
        gshmem_fence();
        gshmemx_signal_op(&b.sig[1], static_cast<uint64_t>(r), GSHMEM_SIGNAL_SET, left);
      }
    }
  }
}

enum Mp { MP_P_FENCE_P, MP_PUT_FENCE_P, MP_PUT_QUIET_AMO, MP_PUT_SIGNAL, MP_PUT_FENCE_SET, MP_PUT_FENCE_ADD,
          MP_COUNT };
const char* mp_name(int m) {
  static const char* n[] = {"p; fence; p", "putmem_nbi; fence; p", "putmem_nbi; quiet; atomic_set",
                            "putmem_signal_nbi", "putmem_nbi; fence; signal_op SET",
                            "putmem_nbi; fence; signal_op ADD"};
  return n[m];
}

__global__ void message_passing(Bufs b, int mode, int rounds) {
  if (threadIdx.x != 0) return;
  const int me = gshmem_my_pe(), n = gshmem_n_pes();
  const int right = (me + 1) % n;
  uint64_t* flag = &b.sig[2];
  if (blockIdx.x == 0) {
    for (int r = 1; r <= rounds; ++r) {
      const uint64_t v = static_cast<uint64_t>(r);
      for (int i = 0; i < kMp; ++i) b.src[i] = v;
      switch (mode) {
        case MP_P_FENCE_P:
          gshmem_uint64_p(b.a, v, right);
          gshmem_fence();
          gshmem_uint64_p(flag, v, right);
          break;
        case MP_PUT_FENCE_P:
          gshmem_putmem_nbi(b.a, b.src, kMp * sizeof(uint64_t), right);
          gshmem_fence();
          gshmem_uint64_p(flag, v, right);
          break;
        case MP_PUT_QUIET_AMO:
          gshmem_putmem_nbi(b.a, b.src, kMp * sizeof(uint64_t), right);
          gshmem_quiet();
          if (gshmem_uint64_g(&b.a[kMp - 1], right) < v) atomicAdd(b.errors, 1);  // complete after quiet
          gshmem_uint64_atomic_set(flag, v, right);
          break;
        case MP_PUT_FENCE_SET:  // signal_op is relaxed (NVSHMEM's too): the fence is what orders the data first
          gshmem_putmem_nbi(b.a, b.src, kMp * sizeof(uint64_t), right);
          gshmem_fence();
          gshmemx_signal_op(flag, v, GSHMEM_SIGNAL_SET, right);
          break;
        case MP_PUT_FENCE_ADD:  // the flag counts rounds: +1 each
          gshmem_putmem_nbi(b.a, b.src, kMp * sizeof(uint64_t), right);
          gshmem_fence();
          gshmemx_signal_op(flag, 1, GSHMEM_SIGNAL_ADD, right);
          break;
        default:
          gshmem_putmem_signal_nbi(b.a, b.src, kMp * sizeof(uint64_t), flag, v, GSHMEM_SIGNAL_SET, right);
          break;
      }
      gshmem_quiet();  // the source words are rewritten next round
    }
    return;
  }
  // Receiver: read the flag (acquire), then the data; the data must never be older than the flag.
  const uint64_t t0 = dev::detail::globaltimer();
  const int words = mode == MP_P_FENCE_P ? 1 : kMp;
  uint64_t seen = 0;
  while (seen < static_cast<uint64_t>(rounds)) {
    seen = gshmem_signal_fetch(flag);
    for (int i = 0; i < words; ++i) {
      const uint64_t d = *reinterpret_cast<volatile uint64_t*>(&b.a[i]);
      if (d < seen) atomicAdd(b.errors, 1);
    }
    bounded(t0, "the last round's flag");
  }
}

__global__ void barrier_rounds(gshmem::DeviceHandle h, Bufs b, int native, int rounds) {
  const int me = dev::my_pe(h), n = dev::n_pes(h);
  if (!native && threadIdx.x != 0) return;
  const int step = native ? static_cast<int>(blockDim.x) : 1;
  for (int r = 0; r < rounds; ++r) {
    uint64_t* s = b.slots + (r & 1) * 64;
    for (int pe = static_cast<int>(threadIdx.x); pe < n; pe += step)
      if (pe != me) dev::p(h, &s[me], (static_cast<uint64_t>(r) << 8) | static_cast<uint64_t>(me), pe);
    if (native) dev::barrier_all<dev::Block>(h);
    else gshmem_barrier_all();
    for (int pe = static_cast<int>(threadIdx.x); pe < n; pe += step)
      if (pe != me && s[pe] != ((static_cast<uint64_t>(r) << 8) | static_cast<uint64_t>(pe))) atomicAdd(b.errors, 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  gt::Ctx c;
  if (!gt::start(c, "gpu_ordering")) return 77;
  int rounds = argc > 1 ? std::atoi(argv[1]) : 10000;
  // PEs of one node sharing a GPU run their kernels time-sliced (one context at a time), so each paced round waits
  // for a context switch: 10000 rounds would take minutes. Fewer rounds still cross many switches.
  int ngpu = 0;
  GT_CUDA(cudaGetDeviceCount(&ngpu));
  if (ngpu < gshmem_team_n_pes(GSHMEM_TEAM_SHARED) && rounds > 500) {
    if (c.me == 0)
      std::printf("[gpu_ordering] %d PEs share %d GPU(s), time-sliced: %d rounds instead of %d\n",
                  gshmem_team_n_pes(GSHMEM_TEAM_SHARED), ngpu, 500, rounds);
    rounds = 500;
  }
  Bufs b{};
  b.src = static_cast<uint64_t*>(gshmem_calloc(kWords, 8));
  b.dst = static_cast<uint64_t*>(gshmem_calloc(kWords, 8));
  b.sig = static_cast<uint64_t*>(gshmem_calloc(4, 8));
  b.a = static_cast<uint64_t*>(gshmem_calloc(kMp, 8));
  b.slots = static_cast<uint64_t*>(gshmem_calloc(128, 8));
  GT_CUDA(cudaMalloc(&b.errors, sizeof(int)));
  const gshmem::DeviceHandle h = gshmem::device_handle();
  auto reset = [&] {
    GT_CUDA(cudaMemset(b.sig, 0, 4 * 8));
    GT_CUDA(cudaMemset(b.a, 0, kMp * 8));
    GT_CUDA(cudaMemset(b.dst, 0, kWords * 8));
    GT_CUDA(cudaMemset(b.errors, 0, sizeof(int)));
    GT_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();
  };
  auto result = [&](const char* what) {
    GT_CUDA(cudaGetLastError());
    GT_CUDA(cudaDeviceSynchronize());
    int e = 0;
    GT_CUDA(cudaMemcpy(&e, b.errors, sizeof e, cudaMemcpyDeviceToHost));
    char msg[200];
    std::snprintf(msg, sizeof msg, "%s: %d violations in %d rounds", what, e, rounds);
    c.expect(e == 0, msg);
    if (c.me == 0) std::printf("[gpu_ordering] %-48s %d rounds, %d violations\n", what, rounds, e);
    gshmem_barrier_all();
  };
  const char* scopes[] = {"put_signal paced, thread (SET)", "put_signal_nbi paced, warp (ADD)",
                          "putmem_signal paced, block (SET)", "source written by the putting thread",
                          "putmem_signal_block from shared memory"};
  for (int s = 0; s < 5; ++s) {
    reset();
    paced_signal<<<2, 128>>>(b, s, rounds);
    result(scopes[s]);
  }
  for (int m = 0; m < MP_COUNT; ++m) {
    reset();
    message_passing<<<2, 32>>>(b, m, rounds);
    result(mp_name(m));
  }
  reset();
  barrier_rounds<<<1, 128>>>(h, b, 1, rounds);
  result("puts then barrier_all<Block> (native)");
  reset();
  barrier_rounds<<<1, 32>>>(h, b, 0, rounds);
  result("puts then gshmem_barrier_all (thread)");
  gshmem_free(b.src);
  gshmem_free(b.dst);
  gshmem_free(b.sig);
  gshmem_free(b.a);
  gshmem_free(b.slots);
  GT_CUDA(cudaFree(b.errors));
  return gt::finish(c);
}
