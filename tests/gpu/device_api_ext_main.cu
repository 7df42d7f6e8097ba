// gpu_device_api_ext: the device calls added for NVSHMEM compatibility, in every scope they have, on fresh random
// data (seed printed; replay with GSHMEM_TEST_SEED), poisoned destinations and exact comparison; any number of PEs.
// Suites live in their own translation units (device_api_ext_*.cu), built without -rdc.
#include "device_api_ext.hpp"

int main() {
  gt::Ctx c;
  if (!gt::start(c, "gpu_device_api_ext")) return 77;
  struct Suite {
    const char* name;
    void (*run)(gt::Ctx&);
  } suites[] = {{"typed iput/iget warp/block", gt::ext_typed_strided_suite},
                {"sized signal/strided", gt::ext_sized_suite},
                {"warpgroup barrier, mc_ptr", gt::ext_team_suite}};
  for (const Suite& s : suites) {
    const long before = c.failures, checks = c.checks;
    s.run(c);
    GT_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();
    if (c.me == 0 || c.failures != before)
      std::printf("[gpu_device_api_ext] PE %d: %-28s %5ld checks, %ld failures\n", c.me, s.name, c.checks - checks,
                  c.failures - before);
  }
  return gt::finish(c);
}
