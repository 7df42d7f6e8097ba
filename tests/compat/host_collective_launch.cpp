// Host-only C++ (no nvcc) that launches a kernel collectively through NVSHMEM's names, as NVSHMEM allows:
// nvshmemx_collective_launch and _query_gridsize must be declared by <nvshmem.h> without CUDA compilation.
// Built (not run): the check is that it compiles and links against gshmem.
#include <nvshmem.h>
#include <nvshmemx.h>

int launch_collectively(const void* kernel, int* data) {
  void* args[] = {&data};
  int grid = 0;
  int s = nvshmemx_collective_launch_query_gridsize(kernel, dim3(128), args, 0, &grid);
  if (s != 0) return s;
  return nvshmemx_collective_launch(kernel, dim3(grid), dim3(128), args, 0, nullptr);
}

int main(int argc, char**) { return argc > 100 ? launch_collectively(nullptr, nullptr) : 0; }
