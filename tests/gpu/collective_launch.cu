// gpu_collective_launch: gshmemx_collective_launch_query_gridsize gives the co-resident maximum; a kernel launched
// with that many blocks by gshmemx_collective_launch can use a grid-wide sync (cooperative launch) together with
// device puts and a device barrier between PEs; a grid one block larger and an empty grid are refused with
// GSHMEM_ERROR_INVALID_VALUE and nothing runs.
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
  GT_CUDA(cudaStreamDestroy(s));
  GT_CUDA(cudaFree(errors));
  GT_CUDA(cudaFree(ran));
  gshmem_free(slots);
  return gt::finish(c);
}
