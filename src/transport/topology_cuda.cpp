// GPU discovery through the CUDA runtime, and NVLink counts through NVML loaded at run time (never linked).
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstring>

#include "transport/cuda_driver.hpp"
#include "transport/gpu.hpp"
#include "transport/topology.hpp"

namespace gshmem::topology {
namespace {

// The few NVML entry points used, declared by their documented C signatures.
struct Nvml {
  using Device = void*;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_pci)(const char*, Device*) = nullptr;
  int (*link_state)(Device, unsigned, int*) = nullptr;
  int (*remote_pci)(Device, unsigned, void*) = nullptr;  // nvmlPciInfo_t*
  int (*remote_type)(Device, unsigned, int*) = nullptr;  // nvmlIntNvLinkDeviceType_t: 0 GPU, 1 IBM NPU, 2 switch
  bool load() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    shutdown = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlShutdown"));
    by_pci = reinterpret_cast<int (*)(const char*, Device*)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    link_state = reinterpret_cast<int (*)(Device, unsigned, int*)>(dlsym(lib, "nvmlDeviceGetNvLinkState"));
    remote_pci = reinterpret_cast<int (*)(Device, unsigned, void*)>(dlsym(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2"));
    remote_type = reinterpret_cast<int (*)(Device, unsigned, int*)>(dlsym(lib, "nvmlDeviceGetNvLinkRemoteDeviceType"));
    return init && shutdown && by_pci && link_state && remote_pci && init() == 0;
  }
};

// nvmlPciInfo_t: busIdLegacy[16], domain, bus, device, pciDeviceId, pciSubSystemId, busId[32].
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

bool same_bus(const std::string& a, const char* b) {
  // NVML may print an 8-digit domain ("00000000:18:00.0"); CUDA prints 4 ("0000:18:00.0"). Compare the tail.
  std::string x = a, y = b;
  for (auto* s : {&x, &y})
    for (auto& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto tail = [](const std::string& s) { auto p = s.find(':'); return p == std::string::npos ? s : s.substr(p); };
  return tail(x) == tail(y);
}

}  // namespace

Report detect() {
  Report r;
  std::string why;
  r.driver = cuda::driver() != nullptr;
  if (!gpu::available(&why)) r.why_not = why;
  int n = 0;
  if (!r.driver || cudaGetDeviceCount(&n) != cudaSuccess) return r;
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    char bus[32] = {0};
    cudaDeviceGetPCIBusId(bus, sizeof bus, d);
    r.gpus.push_back(Gpu{d, p.name, bus, p.major, p.minor, static_cast<unsigned long long>(p.totalGlobalMem)});
  }
  Nvml nvml;
  r.nvml = nvml.load();
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      Link l{a, b};
      int ab = 0, ba = 0, atom = 0;
      cudaDeviceCanAccessPeer(&ab, a, b);
      cudaDeviceCanAccessPeer(&ba, b, a);
      cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, a, b);
      l.p2p = ab && ba;
      l.native_atomics = atom != 0;
      if (r.nvml) {
        // Links of `a` that end at `b` directly, and links of each that end at an NVSwitch (on switched
        // systems every GPU on the fabric is reached through all of its switch links).
        auto count = [&](int g, int peer, int& direct) {
          int to_switch = 0;
          Nvml::Device dev = nullptr;
          if (nvml.by_pci(r.gpus[static_cast<size_t>(g)].pci_bus_id.c_str(), &dev) != 0) return 0;
          for (unsigned link = 0; link < 64; ++link) {
            int active = 0;
            if (nvml.link_state(dev, link, &active) != 0) break;
            if (!active) continue;
            int type = -1;
            if (nvml.remote_type && nvml.remote_type(dev, link, &type) == 0 && type == 2) {
              ++to_switch;
              continue;
            }
            NvmlPciInfo info{};
            if (nvml.remote_pci(dev, link, &info) == 0 &&
                same_bus(r.gpus[static_cast<size_t>(peer)].pci_bus_id, info.bus_id))
              ++direct;
          }
          return to_switch;
        };
        int direct = 0, unused = 0;
        int sa = count(a, b, direct);
        int sb = count(b, a, unused);
        l.nvlinks = direct ? direct : std::min(sa, sb);
      }
      r.links.push_back(l);
    }
  if (r.nvml) nvml.shutdown();
  return r;
}

}  // namespace gshmem::topology
