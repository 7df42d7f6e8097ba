// gpu_device_api: every device call of <gshmem/device.cuh> in every scope, on fresh random data (seed printed),
// poisoned destinations and exact comparison; works for any number of PEs (run: gshmemrun -n N gpu_device_api).
// Each suite lives in its own translation unit (device_api_*.cu), built without -rdc.
#include "device_api.hpp"

int main() {
  gt::Ctx c;
  if (!gt::start(c, "gpu_device_api")) return 77;
  struct Suite {
    const char* name;
    void (*run)(gt::Ctx&);
  } suites[] = {{"rma typed (1)", gt::rma_typed_suite_1}, {"rma typed (2)", gt::rma_typed_suite_2},
                {"rma sized/mem/native", gt::rma_other_suite}, {"atomics", gt::amo_suite}, {"wait/test", gt::wait_suite}, {"teams", gt::team_suite}};
  for (const Suite& s : suites) {
    const long before = c.failures, checks = c.checks;
    s.run(c);
    GT_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();
    if (c.me == 0 || c.failures != before)
      std::printf("[gpu_device_api] PE %d: %-22s %5ld checks, %ld failures\n", c.me, s.name, c.checks - checks,
                  c.failures - before);
  }
  return gt::finish(c);
}
