#include "transport/topology.hpp"

namespace gshmem::topology {
Report detect() {
  Report r;
  r.why_not = "this gshmem was built without GPU support (no nvcc at build time)";
  return r;
}
}  // namespace gshmem::topology
