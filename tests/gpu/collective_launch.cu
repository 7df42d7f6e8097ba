// gpu_collective_launch: gshmemx_collective_launch_query_gridsize gives the co-resident maximum; a kernel launched
// with that many blocks by gshmemx_collective_launch can use a grid-wide sync (cooperative launch) together with
// device puts and a device barrier between PEs; a grid one block larger and an empty grid are refused with
// GSHMEM_ERROR_INVALID_VALUE and nothing runs. Two calling patterns of public programs too: the launch captured
// into a CUDA graph and replayed (PyTorch's all_to_all_vdev launches collectively on a stream torch may capture),
// each replay with a fresh stamp read from device memory; and a kernel with 96 KiB of dynamic shared memory after
// cudaFuncSetAttribute (Mirage's persistent kernel), whose blocks use all of it.
#include <cooperative_groups.h>
#include <gshmem/device.cuh>

#include "harness.hpp"

namespace {

constexpr int kMaxBlocks = 1 << 16;

__global__ void grid_kernel(uint64_t* slots, int* errors, uint64_t base, int* ran) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  const int me = gshmem_my_pe(), n = gshmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  if (threadIdx.x == 0) {
    atomicAdd(ran, 1);
    gshmem_uint64_p(&slots[blockIdx.x], base ^ (static_cast<uint64_t>(me) << 32) ^ blockIdx.x, right);
  }
  grid.sync();
  if (blockIdx.x == 0) gshmemx_barrier_all_block();
  grid.sync();
  if (threadIdx.x == 0 && slots[blockIdx.x] != (base ^ (static_cast<uint64_t>(left) << 32) ^ blockIdx.x))
    atomicAdd(errors, 1);
}

// The same exchange with the stamp read from device memory, so that every replay of a captured launch checks a
// new one.
__global__ void graph_kernel(uint64_t* slots, int* errors, const uint64_t* stamp) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  const int me = gshmem_my_pe(), n = gshmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  const uint64_t base = *stamp;
  if (threadIdx.x == 0)
    gshmem_uint64_p(&slots[blockIdx.x], base ^ (static_cast<uint64_t>(me) << 32) ^ blockIdx.x, right);
  grid.sync();
  if (blockIdx.x == 0) gshmemx_barrier_all_block();
  grid.sync();
  if (threadIdx.x == 0 && slots[blockIdx.x] != (base ^ (static_cast<uint64_t>(left) << 32) ^ blockIdx.x))
    atomicAdd(errors, 1);
}

constexpr int kBigSmem = 96 * 1024;

// Every thread fills its part of the whole dynamic shared memory from the stamp, the block syncs, and thread 0
// puts a word folded from all of it: a block without its 96 KiB would fault or fold another value.
__global__ void smem_kernel(uint64_t* slots, int* errors, uint64_t base) {
  extern __shared__ uint64_t words[];
  constexpr int kWords = kBigSmem / 8;
  for (int i = threadIdx.x; i < kWords; i += blockDim.x) words[i] = base * (i + 1) + blockIdx.x;
  __syncthreads();
  const int me = gshmem_my_pe(), n = gshmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  if (threadIdx.x == 0) {
    uint64_t fold = 0;
    for (int i = 0; i < kWords; ++i) fold ^= words[kWords - 1 - i] + i;
    gshmem_uint64_p(&slots[blockIdx.x], fold ^ (static_cast<uint64_t>(me) << 32), right);
  }
  cooperative_groups::this_grid().sync();
  if (blockIdx.x == 0) gshmemx_barrier_all_block();
  cooperative_groups::this_grid().sync();
  if (threadIdx.x == 0) {
    uint64_t fold = 0;
    for (int i = 0; i < kWords; ++i) fold ^= (base * (kWords - i) + blockIdx.x) + i;
    if (slots[blockIdx.x] != (fold ^ (static_cast<uint64_t>(left) << 32))) atomicAdd(errors, 1);
  }
}

}  // namespace

int main() {
  gt::Ctx c;
  if (!gt::start(c, "gpu_collective_launch")) return 77;
  auto* slots = static_cast<uint64_t*>(gshmem_calloc(kMaxBlocks, sizeof(uint64_t)));
  int *errors, *ran;
  GT_CUDA(cudaMalloc(&errors, sizeof(int)));
  GT_CUDA(cudaMalloc(&ran, sizeof(int)));
  GT_CUDA(cudaMemset(errors, 0, sizeof(int)));
  GT_CUDA(cudaMemset(ran, 0, sizeof(int)));
  uint64_t base = gt::mix(c.seed);
  void* args[] = {&slots, &errors, &base, &ran};
  const dim3 block(128);
  int max_grid = 0;
  c.expect(gshmemx_collective_launch_query_gridsize(grid_kernel, block, args, 0, &max_grid) == GSHMEM_SUCCESS,
           "gshmemx_collective_launch_query_gridsize");
  c.expect(max_grid > 0 && max_grid <= kMaxBlocks, "query_gridsize: a positive grid within the test's buffer");
  if (max_grid > kMaxBlocks) max_grid = kMaxBlocks;
  if (c.me == 0) std::printf("[gpu_collective_launch] co-resident maximum: %d blocks of %u threads\n", max_grid,
                             block.x);
  cudaStream_t s;
  GT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  gshmem_barrier_all();
  c.expect(gshmemx_collective_launch(reinterpret_cast<const void*>(grid_kernel), dim3(max_grid), block, args, 0, s) ==
               GSHMEM_SUCCESS, "gshmemx_collective_launch with the maximum grid");
  GT_CUDA(cudaStreamSynchronize(s));
  int e = -1, r = -1;
  GT_CUDA(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
  GT_CUDA(cudaMemcpy(&r, ran, sizeof r, cudaMemcpyDeviceToHost));
  c.expect(e == 0, "collective kernel: a block's slot does not hold the left neighbour's stamp");
  c.expect(r == max_grid, "collective kernel: not every block ran");
  gshmem_barrier_all();
  // Refusals: one block too many, and an empty grid (the library prints the reason to stderr).
  std::fprintf(stderr, "[gpu_collective_launch] expected refusals follow:\n");
  c.expect(gshmemx_collective_launch(grid_kernel, dim3(max_grid + 1), block, args, 0, s) ==
               GSHMEM_ERROR_INVALID_VALUE, "collective launch of max+1 blocks must fail with INVALID_VALUE");
  c.expect(gshmemx_collective_launch(grid_kernel, dim3(0), block, args, 0, s) == GSHMEM_ERROR_INVALID_VALUE,
           "collective launch of 0 blocks must fail with INVALID_VALUE");
  GT_CUDA(cudaStreamSynchronize(s));
  GT_CUDA(cudaMemcpy(&r, ran, sizeof r, cudaMemcpyDeviceToHost));
  c.expect(r == max_grid, "a refused collective launch ran blocks");

  // Captured into a graph and replayed 3 times, a fresh stamp and poisoned slots before each replay.
  uint64_t* stamp;
  GT_CUDA(cudaMalloc(&stamp, sizeof(uint64_t)));
  GT_CUDA(cudaMemset(errors, 0, sizeof(int)));
  const int graph_grid = max_grid < 8 ? max_grid : 8;
  void* gargs[] = {&slots, &errors, &stamp};
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  GT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));  // torch.cuda.graph's default mode
  const int captured = gshmemx_collective_launch(reinterpret_cast<const void*>(graph_kernel), dim3(graph_grid), block,
                                                 gargs, 0, s);
  GT_CUDA(cudaStreamEndCapture(s, &graph));
  c.expect(captured == GSHMEM_SUCCESS, "gshmemx_collective_launch inside stream capture");
  GT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    const uint64_t fresh = gt::mix(c.seed ^ (0x6A09E667ull + replay));
    GT_CUDA(cudaMemcpy(stamp, &fresh, sizeof fresh, cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemset(slots, 0xA5, graph_grid * sizeof(uint64_t)));
    GT_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();  // every PE's slots poisoned and stamp set before any replay puts into them
    GT_CUDA(cudaGraphLaunch(exec, s));
    GT_CUDA(cudaStreamSynchronize(s));
    gshmem_barrier_all();
  }
  GT_CUDA(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
  c.expect(e == 0, "captured collective launch: a replay's slot does not hold the left neighbour's stamp");
  GT_CUDA(cudaGraphExecDestroy(exec));
  GT_CUDA(cudaGraphDestroy(graph));
  GT_CUDA(cudaFree(stamp));

  // 96 KiB of dynamic shared memory a block, allowed by cudaFuncSetAttribute before the query and the launch.
  GT_CUDA(cudaFuncSetAttribute(smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kBigSmem));
  GT_CUDA(cudaMemset(errors, 0, sizeof(int)));
  uint64_t sbase = gt::mix(c.seed ^ 0xBB67AE85ull);
  void* sargs[] = {&slots, &errors, &sbase};
  int smem_grid = 0;
  c.expect(gshmemx_collective_launch_query_gridsize(smem_kernel, block, sargs, kBigSmem, &smem_grid) ==
               GSHMEM_SUCCESS && smem_grid > 0, "query_gridsize with 96 KiB of dynamic shared memory");
  if (smem_grid > kMaxBlocks) smem_grid = kMaxBlocks;
  if (smem_grid > 0) {
    GT_CUDA(cudaMemset(slots, 0xA5, smem_grid * sizeof(uint64_t)));
    GT_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();
    c.expect(gshmemx_collective_launch(reinterpret_cast<const void*>(smem_kernel), dim3(smem_grid), block, sargs,
                                       kBigSmem, s) == GSHMEM_SUCCESS,
             "gshmemx_collective_launch with 96 KiB of dynamic shared memory");
    GT_CUDA(cudaStreamSynchronize(s));
    GT_CUDA(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
    c.expect(e == 0, "96 KiB shared-memory kernel: a block's slot does not hold the left neighbour's fold");
    gshmem_barrier_all();
  }
  GT_CUDA(cudaStreamDestroy(s));
  GT_CUDA(cudaFree(errors));
  GT_CUDA(cudaFree(ran));
  gshmem_free(slots);
  return gt::finish(c);
}
