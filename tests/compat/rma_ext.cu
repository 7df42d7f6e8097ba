// A sample of the NVSHMEM names added after the first compat programs: device nvshmemx_int_iput_block,
// nvshmemx_iget32_warp, nvshmem_put64_signal, nvshmemx_barrier_warpgroup; host nvshmemx_int_wait_until_on_stream,
// nvshmemx_int_g_on_stream, nvshmemx_int_iput_on_stream, nvshmem_realloc, nvshmem_query_thread, nvshmemx_mc_ptr;
// NVSHMEM 3.7-3.8's TMA shared memory (nvshmemx_ask_smem / give_smem / release_smem) and
// nvshmemx_collective_launch_attr, as the current perftests use them; NVSHMEM's headers by their installed sub-paths
// (host/..., device/...), as flux and the perftests include them.
// Ring: each PE sends to the right one; fresh random data every round, poisoned destinations, exact comparison.
#include <device/nvshmemx_collective_launch_apis.h>
#include <host/nvshmem_api.h>
#include <host/nvshmemx_api.h>

#include "compat_util.h"

constexpr int kN = 96;  // ints sent by iput (stride 2 at the target)
constexpr int kM = 40;  // 64-bit words sent by put64_signal
constexpr int kG = 24;  // ints fetched by iget32 (source stride 3)

struct Buffers {
  int src[3 * kN];
  int dst[2 * kN];
  uint64_t src64[kM];
  uint64_t dst64[kM];
  uint64_t sig;
  int flag;
};

__global__ void sender(Buffers* b, int right, int round) {
  nvshmemx_int_iput_block(b->dst, b->src, 2, 1, kN, right);
  if (threadIdx.x == 0) {
    nvshmem_put64_signal(b->dst64, b->src64, kM, &b->sig, 1, NVSHMEM_SIGNAL_ADD, right);
    nvshmem_quiet();  // the block's iput (synchronised at its end) and the put are visible before the flag
    nvshmem_int_p(&b->flag, round, right);
  }
}

// After the ring: warp 0 gathers every third int of the right PE's source, then one warpgroup per PE barriers.
__global__ void fetcher(Buffers* b, int* out, int right) {
  if (threadIdx.x < 32) nvshmemx_iget32_warp(out, b->src, 1, 3, kG, right);
  __syncthreads();
  if (threadIdx.x < 128) nvshmemx_barrier_warpgroup(NVSHMEM_TEAM_WORLD);
}

// TMA-style put from shared memory: each CTA hands its dynamic shared memory to the library (ask_smem sizes it),
// keeps its payload after the part asked for the library's barriers, fills it, puts it to the right PE's slot of
// this CTA, and releases the shared memory; quiet by thread 0 before the release.
constexpr int kSmemInts = 512;  // payload ints per CTA
__global__ void smem_put(int* dst, uint64_t seed, int mype, int right, int round) {
  extern __shared__ __align__(16) char smem[];
  nvshmemx_give_smem(smem, static_cast<size_t>(nvshmemx_ask_smem(NVSHMEMX_SMEM_RECOMMENDED)));
  int* payload = reinterpret_cast<int*>(smem + nvshmemx_ask_smem(NVSHMEMX_SMEM_BARRIERS_ONLY));
  for (int i = threadIdx.x; i < kSmemInts; i += blockDim.x)
    payload[i] = static_cast<int>(compat::mix(seed, 600 + round, mype * 100000 + blockIdx.x * kSmemInts + i));
  __syncthreads();
  nvshmemx_putmem_nbi_block(dst + blockIdx.x * kSmemInts, payload, kSmemInts * sizeof(int), right);
  if (threadIdx.x == 0) nvshmem_quiet();
  __syncthreads();
  nvshmemx_release_smem();
}

int main(int argc, char** argv) {
  const int mype = compat::init(&argc, &argv, "rma_ext");
  const int npes = nvshmem_n_pes();
  const int right = (mype + 1) % npes, left = (mype + npes - 1) % npes;
  const uint64_t seed = compat::shared_seed();
  int level = -1;
  nvshmem_query_thread(&level);
  if (level < NVSHMEM_THREAD_SINGLE || level > NVSHMEM_THREAD_MULTIPLE)
    compat::fail("nvshmem_query_thread gave %d, not a thread level", level);
  (void)nvshmemx_mc_ptr(NVSHMEM_TEAM_WORLD, nullptr);  // NULL where multicast is off; must exist and not fail

  Buffers* b = static_cast<Buffers*>(nvshmem_malloc(sizeof(Buffers)));
  int* out;
  COMPAT_CUDA(cudaMalloc(&out, kG * sizeof(int)));
  cudaStream_t s1, s2;
  COMPAT_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  COMPAT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaFuncAttributes fa;
  COMPAT_CUDA(cudaFuncGetAttributes(&fa, sender));  // loaded before the stream wait spins (lazy loading)
  COMPAT_CUDA(cudaFuncGetAttributes(&fa, fetcher));
  static Buffers mine, theirs, got;
  for (int round = 1; round <= 4; ++round) {
    auto fill = [&](Buffers& x, int pe) {
      for (int i = 0; i < 3 * kN; ++i) x.src[i] = static_cast<int>(compat::mix(seed, 100 + round, pe * 1000 + i));
      for (int i = 0; i < kM; ++i) x.src64[i] = compat::mix(seed, 200 + round, pe * 1000 + i);
    };
    fill(mine, mype);
    fill(theirs, left);
    for (int i = 0; i < 2 * kN; ++i) mine.dst[i] = ~static_cast<int>(compat::mix(seed, 300 + round, i));
    for (int i = 0; i < kM; ++i) mine.dst64[i] = ~compat::mix(seed, 400 + round, i);
    mine.sig = 0;
    mine.flag = 0;
    COMPAT_CUDA(cudaMemcpy(b, &mine, sizeof mine, cudaMemcpyHostToDevice));
    COMPAT_CUDA(cudaMemset(out, 0xA5, kG * sizeof(int)));
    COMPAT_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    sender<<<1, 128, 0, s1>>>(b, right, round);
    COMPAT_CUDA(cudaGetLastError());
    nvshmemx_int_wait_until_on_stream(&b->flag, NVSHMEM_CMP_EQ, round, s2);
    const int first = nvshmemx_int_g_on_stream(&b->dst[0], mype, s2);  // after the wait: the left PE's data
    if (first != theirs.src[0])
      compat::fail("round %d: nvshmemx_int_g_on_stream after the wait gave %d, expected %d", round, first,
                   theirs.src[0]);
    COMPAT_CUDA(cudaStreamSynchronize(s1));
    nvshmem_barrier_all();
    fetcher<<<1, 256, 0, s1>>>(b, out, right);
    COMPAT_CUDA(cudaGetLastError());
    COMPAT_CUDA(cudaStreamSynchronize(s1));
    COMPAT_CUDA(cudaMemcpy(&got, b, sizeof got, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 2 * kN; ++i) {
      const int want = i % 2 == 0 ? theirs.src[i / 2] : mine.dst[i];
      if (got.dst[i] != want) {
        compat::fail("round %d: iput_block dst[%d] is %d, expected %d", round, i, got.dst[i], want);
        break;
      }
    }
    if (std::memcmp(got.dst64, theirs.src64, sizeof got.dst64) != 0)
      compat::fail("round %d: put64_signal data differs", round);
    if (got.sig != 1)
      compat::fail("round %d: put64_signal signal is %llu, expected 1", round, (unsigned long long)got.sig);
    int g[kG];
    COMPAT_CUDA(cudaMemcpy(g, out, sizeof g, cudaMemcpyDeviceToHost));
    for (int i = 0; i < kG; ++i) {
      const int want = static_cast<int>(compat::mix(seed, 100 + round, right * 1000 + 3 * i));
      if (g[i] != want) {
        compat::fail("round %d: iget32_warp element %d is %d, expected %d", round, i, g[i], want);
        break;
      }
    }
    nvshmem_barrier_all();
  }
  // Shared-memory puts in a kernel started by nvshmemx_collective_launch_attr (4 CTAs, the RECOMMENDED dynamic
  // shared memory, a launch attribute of the caller's kept beside the library's cooperative one), twice.
  {
    constexpr int kCtas = 4;
    int* sdst = static_cast<int*>(nvshmem_malloc(kCtas * kSmemInts * sizeof(int)));
    const int smem_bytes = nvshmemx_ask_smem(NVSHMEMX_SMEM_RECOMMENDED);
    if (smem_bytes < nvshmemx_ask_smem(NVSHMEMX_SMEM_BARRIERS_ONLY) + kSmemInts * static_cast<int>(sizeof(int)))
      compat::fail("nvshmemx_ask_smem: RECOMMENDED %d bytes cannot hold %d ints after BARRIERS_ONLY's %d", smem_bytes,
                   kSmemInts, nvshmemx_ask_smem(NVSHMEMX_SMEM_BARRIERS_ONLY));
    if (smem_bytes > 48 * 1024)
      COMPAT_CUDA(cudaFuncSetAttribute(smem_put, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
    for (int round = 1; round <= 2; ++round) {
      COMPAT_CUDA(cudaMemset(sdst, 0x5A, kCtas * kSmemInts * sizeof(int)));
      COMPAT_CUDA(cudaDeviceSynchronize());
      nvshmem_barrier_all();
      uint64_t seed_arg = seed;
      int pe_arg = mype, right_arg = right, round_arg = round;
      void* args[] = {&sdst, &seed_arg, &pe_arg, &right_arg, &round_arg};
      cudaLaunchAttribute user[1] = {};
      user[0].id = cudaLaunchAttributePriority;
      user[0].val.priority = 0;
      nvshmemx_collective_launch_attr_t la{};
      la.cuda_config.gridDim = dim3(kCtas);
      la.cuda_config.blockDim = dim3(round == 1 ? 256 : 96);
      la.cuda_config.dynamicSmemBytes = static_cast<size_t>(smem_bytes);
      la.cuda_config.stream = s1;
      la.cuda_config.attrs = user;
      la.cuda_config.numAttrs = 1;
      const int rc = nvshmemx_collective_launch_attr(&la, reinterpret_cast<const void*>(smem_put), args);
      if (rc != 0) compat::fail("round %d: nvshmemx_collective_launch_attr returned %d", round, rc);
      COMPAT_CUDA(cudaStreamSynchronize(s1));
      nvshmem_barrier_all();
      static int sgot[kCtas * kSmemInts];
      COMPAT_CUDA(cudaMemcpy(sgot, sdst, sizeof sgot, cudaMemcpyDeviceToHost));
      for (int i = 0; i < kCtas * kSmemInts; ++i) {
        const int want = static_cast<int>(compat::mix(seed, 600 + round, left * 100000 + i));
        if (sgot[i] != want) {
          compat::fail("round %d: shared-memory put element %d is %d, expected %d", round, i, sgot[i], want);
          break;
        }
      }
    }
    nvshmem_barrier_all();
    nvshmem_free(sdst);
  }
  // host iput on a stream, then realloc keeps the contents
  int* a = static_cast<int*>(nvshmem_malloc(kN * sizeof(int)));
  int* da;
  COMPAT_CUDA(cudaMalloc(&da, kN * sizeof(int)));
  int vals[kN], back[kN];
  for (int i = 0; i < kN; ++i) vals[i] = static_cast<int>(compat::mix(seed, 500, mype * 1000 + i));
  COMPAT_CUDA(cudaMemcpy(da, vals, sizeof vals, cudaMemcpyHostToDevice));
  COMPAT_CUDA(cudaMemset(a, 0, kN * sizeof(int)));
  COMPAT_CUDA(cudaDeviceSynchronize());
  nvshmem_barrier_all();
  nvshmemx_int_iput_on_stream(a, da, 1, 1, kN, right, s2);  // stride 1 both sides: the whole array
  nvshmemx_barrier_all_on_stream(s2);
  COMPAT_CUDA(cudaStreamSynchronize(s2));
  int* a2 = static_cast<int*>(nvshmem_realloc(a, 4 * kN * sizeof(int)));
  nvshmem_int_get(back, a2, kN, mype);
  for (int i = 0; i < kN; ++i) {
    const int want = static_cast<int>(compat::mix(seed, 500, left * 1000 + i));
    if (back[i] != want) {
      compat::fail("iput_on_stream + realloc: element %d is %d, expected %d", i, back[i], want);
      break;
    }
  }
  nvshmem_barrier_all();
  nvshmem_free(a2);
  COMPAT_CUDA(cudaFree(da));
  COMPAT_CUDA(cudaStreamDestroy(s1));
  COMPAT_CUDA(cudaStreamDestroy(s2));
  COMPAT_CUDA(cudaFree(out));
  nvshmem_free(b);
  return compat::finish();
}
