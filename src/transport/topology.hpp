// What GPUs this process sees and how they are linked (for gshmem-info and logs).
#pragma once
#include <string>
#include <vector>

namespace gshmem::topology {

struct Gpu {
  int ordinal = -1;
  std::string name;
  std::string pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  unsigned long long memory_bytes = 0;
};

struct Link {
  int a = -1, b = -1;
  bool p2p = false;          // cudaDeviceCanAccessPeer both ways
  bool native_atomics = false;
  int nvlinks = 0;           // NVLinks between the two (NVML), 0 if none or unknown
};

struct Report {
  bool driver = false;
  std::string why_not;       // when no GPU can be used
  std::vector<Gpu> gpus;
  std::vector<Link> links;
  bool nvml = false;         // NVLink counts come from NVML
};

Report detect();

}  // namespace gshmem::topology
