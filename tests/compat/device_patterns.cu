// Device-side calling patterns read in public NVSHMEM programs that the other compat programs do not cover (none of
// their code copied). Ring: each PE sends to the right one; fresh random data every round, poisoned destinations,
// exact comparison.
//
//   stack nbi   latency tests (Livinfly's): each thread puts a value it holds in a local variable with a
//               non-blocking put (nvshmem_long_put_nbi, nvshmem_putmem_nbi of a small struct) and reuses the variable
//               for the next value at once, then one nvshmem_quiet. The source is registers / the thread's stack, not
//               symmetric memory. (OpenSHMEM lets a put_nbi read its source until the quiet; over NVLink NVSHMEM's
//               device puts are stores that read it in the call, and programs rely on that.)
//   managed     benchmark and SpMV codes (YuxinxinChen's): the source of thread, warp and block puts is
//               cudaMallocManaged memory the host wrote just before the launch; and a block get whose destination is
//               managed memory the host reads after the kernel.
//   branchy barrier  a database kernel (nvshmem-db): one thread calls nvshmem_barrier_all inside branches that
//               differ per PE (the round's root stores to every other PE with nvshmem_int_p, then barriers; the others
//               barrier, then read), under nvshmemx_collective_launch, for several rounds in one kernel.
#include "compat_util.h"

namespace {

constexpr int kThreads = 128, kBlocks = 4, kPerThread = 8;
constexpr int kSenders = kThreads * kBlocks;

struct Triple {  // a small struct put whole with nvshmem_putmem_nbi
  int a;
  int b;
  int c;
};

COMPAT_HD long stack_value(uint64_t seed, int pe, int round, int t, int k) {
  return static_cast<long>(compat::mix(seed, 1000 + round, (uint64_t(pe) << 40) ^ (uint64_t(t) << 8) ^ k));
}

__global__ void stack_nbi(long* dst, Triple* tdst, uint64_t seed, int me, int right, int round) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  long v;
  for (int k = 0; k < kPerThread; ++k) {
    v = stack_value(seed, me, round, t, k);  // the same variable, refilled right after each put
    nvshmem_long_put_nbi(dst + t * kPerThread + k, &v, 1, right);
  }
  Triple s;
  s.a = static_cast<int>(stack_value(seed, me, round, t, 100));
  s.b = static_cast<int>(stack_value(seed, me, round, t, 101));
  s.c = static_cast<int>(stack_value(seed, me, round, t, 102));
  nvshmem_putmem_nbi(tdst + t, &s, sizeof s, right);
  s.a = s.b = s.c = -1;  // overwritten before the quiet
  nvshmem_quiet();
  (void)s;
}

// mode 0: each thread puts kChunk ints (nvshmem_int_put); 1: each warp a warp chunk (nvshmemx_int_put_warp);
// 2: each block its block chunk (nvshmemx_putmem_block). Every mode covers [0, kSenders * kChunk) ints.
constexpr int kChunk = 7;
__global__ void managed_put(int* dst, const int* src, int right, int mode) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (mode == 0) {
    nvshmem_int_put(dst + t * kChunk, src + t * kChunk, kChunk, right);
  } else if (mode == 1) {
    const int w = t / 32, per = 32 * kChunk;
    nvshmemx_int_put_warp(dst + w * per, src + w * per, per, right);
  } else {
    const size_t per = static_cast<size_t>(kThreads) * kChunk;
    nvshmemx_putmem_block(dst + blockIdx.x * per, src + blockIdx.x * per, per * sizeof(int), right);
  }
}

__global__ void managed_get(int* out, const int* src, int peer) {
  const size_t per = static_cast<size_t>(kThreads) * kChunk;
  nvshmemx_getmem_block(out + blockIdx.x * per, src + blockIdx.x * per, per * sizeof(int), peer);
}

constexpr int kRounds = 12;
__global__ void branchy_barrier(int* box, int* seen, uint64_t seed, int me, int npes) {
  if (threadIdx.x == 0) {
    for (int r = 0; r < kRounds; ++r) {
      const int root = r % npes;
      if (me == root) {
        const int v = static_cast<int>(compat::mix(seed, 2000, r));
        for (int pe = 0; pe < npes; ++pe)
          if (pe != me) nvshmem_int_p(box + r, v, pe);
        nvshmem_barrier_all();
        seen[r] = v;
      } else {
        nvshmem_barrier_all();
        seen[r] = *reinterpret_cast<volatile int*>(box + r);
      }
    }
  }
  __syncthreads();
}

void check_stack_nbi(uint64_t seed, int me, int npes) {
  const int right = (me + 1) % npes, left = (me + npes - 1) % npes;
  const size_t n = static_cast<size_t>(kSenders) * kPerThread;
  long* dst = static_cast<long*>(nvshmem_malloc((n + 8) * sizeof(long)));
  Triple* tdst = static_cast<Triple*>(nvshmem_malloc((kSenders + 2) * sizeof(Triple)));
  std::vector<long> got(n + 8);
  std::vector<Triple> tgot(kSenders + 2);
  for (int round = 0; round < 3; ++round) {
    COMPAT_CUDA(cudaMemset(dst, 0xA5, (n + 8) * sizeof(long)));
    COMPAT_CUDA(cudaMemset(tdst, 0xA5, (kSenders + 2) * sizeof(Triple)));
    COMPAT_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    stack_nbi<<<kBlocks, kThreads>>>(dst, tdst, seed, me, right, round);
    COMPAT_CUDA(cudaGetLastError());
    COMPAT_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    COMPAT_CUDA(cudaMemcpy(got.data(), dst, got.size() * sizeof(long), cudaMemcpyDeviceToHost));
    COMPAT_CUDA(cudaMemcpy(tgot.data(), tdst, tgot.size() * sizeof(Triple), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int t = 0; t < kSenders; ++t) {
      for (int k = 0; k < kPerThread; ++k) {
        const long want = stack_value(seed, left, round, t, k);
        if (got[t * kPerThread + k] != want && bad++ < 4)
          compat::fail("stack nbi round %d: thread %d value %d from PE %d is %ld, expected %ld", round, t, k, left,
                       got[t * kPerThread + k], want);
      }
      const Triple& s = tgot[t];
      const int wa = static_cast<int>(stack_value(seed, left, round, t, 100));
      const int wb = static_cast<int>(stack_value(seed, left, round, t, 101));
      const int wc = static_cast<int>(stack_value(seed, left, round, t, 102));
      if ((s.a != wa || s.b != wb || s.c != wc) && bad++ < 4)
        compat::fail("stack nbi round %d: thread %d's struct from PE %d is {%d, %d, %d}, expected {%d, %d, %d}",
                     round, t, left, s.a, s.b, s.c, wa, wb, wc);
    }
    const unsigned char* g = reinterpret_cast<const unsigned char*>(got.data() + n);
    const unsigned char* tg = reinterpret_cast<const unsigned char*>(tgot.data() + kSenders);
    for (size_t b = 0; b < 8 * sizeof(long); ++b)
      if (g[b] != 0xA5 && bad++ < 4) compat::fail("stack nbi round %d: byte %zu past the longs was written", round, b);
    for (size_t b = 0; b < 2 * sizeof(Triple); ++b)
      if (tg[b] != 0xA5 && bad++ < 4)
        compat::fail("stack nbi round %d: byte %zu past the structs was written", round, b);
    nvshmem_barrier_all();
  }
  nvshmem_free(tdst);
  nvshmem_free(dst);
}

void check_managed(uint64_t seed, int me, int npes) {
  const int right = (me + 1) % npes, left = (me + npes - 1) % npes;
  const size_t n = static_cast<size_t>(kSenders) * kChunk;
  int* dst = static_cast<int*>(nvshmem_malloc((n + 16) * sizeof(int)));
  int* src = nullptr;
  int* out = nullptr;
  COMPAT_CUDA(cudaMallocManaged(&src, n * sizeof(int)));
  COMPAT_CUDA(cudaMallocManaged(&out, (n + 16) * sizeof(int)));
  std::vector<int> got(n + 16);
  const char* names[3] = {"nvshmem_int_put (thread)", "nvshmemx_int_put_warp", "nvshmemx_putmem_block"};
  for (int mode = 0; mode < 3; ++mode) {
    COMPAT_CUDA(cudaDeviceSynchronize());
    for (size_t i = 0; i < n; ++i)
      src[i] = static_cast<int>(compat::mix(seed, 3000 + mode, (uint64_t(me) << 32) ^ i));  // the host writes it
    COMPAT_CUDA(cudaMemset(dst, 0xA5, (n + 16) * sizeof(int)));
    COMPAT_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    managed_put<<<kBlocks, kThreads>>>(dst, src, right, mode);
    COMPAT_CUDA(cudaGetLastError());
    COMPAT_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    COMPAT_CUDA(cudaMemcpy(got.data(), dst, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (size_t i = 0; i < n; ++i) {
      const int want = static_cast<int>(compat::mix(seed, 3000 + mode, (uint64_t(left) << 32) ^ i));
      if (got[i] != want && bad++ < 4)
        compat::fail("managed source, %s: int %zu from PE %d is %d, expected %d", names[mode], i, left, got[i], want);
    }
    for (size_t i = n; i < n + 16; ++i)
      if (static_cast<unsigned>(got[i]) != 0xA5A5A5A5u && bad++ < 4)
        compat::fail("managed source, %s: int %zu past the data was written", names[mode], i);
    // a block get into managed memory, read by the host after the kernel: the right PE's dst holds what this PE sent
    for (size_t i = 0; i < n + 16; ++i) out[i] = static_cast<int>(0xC3C3C3C3u);
    managed_get<<<kBlocks, kThreads>>>(out, dst, right);
    COMPAT_CUDA(cudaGetLastError());
    COMPAT_CUDA(cudaDeviceSynchronize());
    for (size_t i = 0; i < n + 16; ++i) {
      const int want = i < n ? src[i] : static_cast<int>(0xC3C3C3C3u);
      if (out[i] != want && bad++ < 4)
        compat::fail("managed destination, nvshmemx_getmem_block after %s: int %zu is %d, expected %d", names[mode],
                     i, out[i], want);
    }
    nvshmem_barrier_all();
  }
  COMPAT_CUDA(cudaFree(out));
  COMPAT_CUDA(cudaFree(src));
  nvshmem_free(dst);
}

void check_branchy_barrier(uint64_t seed, int me, int npes) {
  int* box = static_cast<int*>(nvshmem_malloc(kRounds * sizeof(int)));
  int* seen = nullptr;
  COMPAT_CUDA(cudaMalloc(&seen, kRounds * sizeof(int)));
  COMPAT_CUDA(cudaMemset(box, 0xA5, kRounds * sizeof(int)));
  COMPAT_CUDA(cudaMemset(seen, 0xA5, kRounds * sizeof(int)));
  COMPAT_CUDA(cudaDeviceSynchronize());
  nvshmem_barrier_all();
  void* args[] = {&box, &seen, &seed, &me, &npes};
  if (nvshmemx_collective_launch((const void*)branchy_barrier, dim3(1), dim3(64), args, 0, 0) != 0)
    compat::fail("branchy barrier: nvshmemx_collective_launch of one block did not return 0");
  COMPAT_CUDA(cudaGetLastError());
  COMPAT_CUDA(cudaDeviceSynchronize());
  std::vector<int> got(kRounds);
  COMPAT_CUDA(cudaMemcpy(got.data(), seen, kRounds * sizeof(int), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int r = 0; r < kRounds; ++r) {
    const int want = static_cast<int>(compat::mix(seed, 2000, r));
    if (got[r] != want && bad++ < 4)
      compat::fail("branchy barrier: round %d (root PE %d) read %d after nvshmem_barrier_all, expected %d", r,
                   r % npes, got[r], want);
  }
  nvshmem_barrier_all();
  COMPAT_CUDA(cudaFree(seen));
  nvshmem_free(box);
}

}  // namespace

int main(int argc, char** argv) {
  const int me = compat::init(&argc, &argv, "device_patterns");
  const int npes = nvshmem_n_pes();
  const uint64_t seed = compat::shared_seed();
  check_stack_nbi(seed, me, npes);
  check_managed(seed, me, npes);
  check_branchy_barrier(seed, me, npes);
  return compat::finish();
}
