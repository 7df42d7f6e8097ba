// peer_vm_probe: does the CUDA driver itself keep host address space after a peer GPU's memory was mapped and
// unmapped? gshmem's leak test (tests/mp/leak_fds.cpp) saw VmSize grow by ~552 MiB over init..finalize on 2 PEs on
// 2 GPUs, in PROT_NONE reservations, with no context left on the other GPU; on one GPU it does not grow. This probe
// does only what the heap does, with the driver API and no gshmem: two processes (fork), each on its own GPU's
// primary context, each cycle creates 64 MiB on its GPU (cuMemCreate, POSIX fd handle), passes the fd to the other
// over a socketpair, imports the peer's, maps both into one reservation, writes into the peer's memory, then unmaps,
// releases and frees everything. Cycle 0 maps only its own memory. Prints VmSize after each cycle and the mappings
// that appeared since before cycle 0. Needs 2 GPUs. Build: nvcc -O2 -std=c++17 -o peer_vm_probe peer_vm_probe.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>

namespace {

#define CK(x)                                                                      \
  do {                                                                             \
    CUresult r_ = (x);                                                             \
    if (r_ != CUDA_SUCCESS) {                                                      \
      const char* s_ = nullptr;                                                    \
      cuGetErrorName(r_, &s_);                                                     \
      std::fprintf(stderr, "peer_vm_probe: %s failed: %s\n", #x, s_ ? s_ : "?");   \
      std::exit(2);                                                                \
    }                                                                              \
  } while (0)

long vm_kb() {
  std::ifstream st("/proc/self/status");
  std::string k;
  while (st >> k) {
    if (k == "VmSize:") {
      long v = 0;
      st >> v;
      return v;
    }
    std::getline(st, k);
  }
  return -1;
}

std::map<unsigned long, std::string> maps() {
  std::map<unsigned long, std::string> out;
  std::ifstream f("/proc/self/maps");
  std::string line;
  while (std::getline(f, line)) {
    unsigned long a = 0, b = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &a, &b) != 2) continue;
    const auto name = line.find('/') != std::string::npos ? line.find('/') : line.find('[');
    out[a] = std::to_string((b - a) / 1024) + " kB " + line.substr(line.find(' ') + 1, 4) + " " +
             (name != std::string::npos ? line.substr(name) : "(anonymous)");
  }
  return out;
}

// One byte of payload and room for one descriptor (SCM_RIGHTS).
struct FdMsg {
  char c = 0;
  iovec io{&c, 1};
  alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
  msghdr m{};
  FdMsg() {
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = buf;
    m.msg_controllen = sizeof buf;
  }
};

void send_fd(int sock, int fd) {
  FdMsg msg;
  cmsghdr* h = CMSG_FIRSTHDR(&msg.m);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(h), &fd, sizeof fd);
  if (sendmsg(sock, &msg.m, 0) != 1) std::exit(3);
}

int recv_fd(int sock) {
  FdMsg msg;
  if (recvmsg(sock, &msg.m, 0) != 1) std::exit(3);
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&msg.m)), sizeof fd);
  return fd;
}

void sync_pair(int sock) {
  char c = 1;
  if (write(sock, &c, 1) != 1 || read(sock, &c, 1) != 1) std::exit(3);
}

int run(int rank, int sock) {
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, rank));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = rank;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  std::size_t gran = 0;
  CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  const std::size_t size = ((std::size_t(64) << 20) + gran - 1) / gran * gran;
  // Runtime (cudart, static as in libgshmem) calls of the kinds gshmem's init makes, each step's VmSize growth.
  long vm_prev = vm_kb();
  auto step = [&](const char* what) {
    const long v = vm_kb();
    std::printf("peer_vm_probe: rank %d: runtime step %-40s VmSize %+ld kB\n", rank, what, v - vm_prev);
    vm_prev = v;
  };
  int ndev = 0;
  cudaGetDeviceCount(&ndev);
  step("cudaGetDeviceCount");
  cudaSetDevice(rank);
  cudaFree(nullptr);
  step("cudaSetDevice(own) + cudaFree(0)");
  char bus[32];
  for (int d = 0; d < ndev; ++d) cudaDeviceGetPCIBusId(bus, sizeof bus, d);
  step("cudaDeviceGetPCIBusId(every GPU)");
  int can = 0, attr = 0;
  for (int d = 0; d < ndev; ++d)
    if (d != rank) cudaDeviceCanAccessPeer(&can, rank, d);
  step("cudaDeviceCanAccessPeer(own, other)");
  for (int d = 0; d < ndev; ++d) cudaDeviceGetAttribute(&attr, cudaDevAttrComputeCapabilityMajor, d);
  step("cudaDeviceGetAttribute(every GPU)");
  cudaDeviceProp prop_d{};
  for (int d = 0; d < ndev; ++d) cudaGetDeviceProperties(&prop_d, d);
  step("cudaGetDeviceProperties(every GPU)");
  int atom = 0;
  if (ndev > 1) cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, 0, 1);
  step("cudaDeviceGetP2PAttribute(0, 1)");
  if (void* nv = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    step("dlopen libnvidia-ml");
    auto ninit = reinterpret_cast<int (*)()>(dlsym(nv, "nvmlInit_v2"));
    auto nshut = reinterpret_cast<int (*)()>(dlsym(nv, "nvmlShutdown"));
    auto by_pci = reinterpret_cast<int (*)(const char*, void**)>(dlsym(nv, "nvmlDeviceGetHandleByPciBusId_v2"));
    auto lstate = reinterpret_cast<int (*)(void*, unsigned, int*)>(dlsym(nv, "nvmlDeviceGetNvLinkState"));
    if (ninit && ninit() == 0) {
      step("nvmlInit_v2");
      char b0[32];
      cudaDeviceGetPCIBusId(b0, sizeof b0, rank);
      void* h = nullptr;
      int act = 0;
      if (by_pci && by_pci(b0, &h) == 0 && lstate) lstate(h, 0, &act);
      step("nvml handle by PCI + NvLink state");
      if (nshut) nshut();
      step("nvmlShutdown");
    }
  }
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  void* hp = nullptr;
  cudaHostAlloc(&hp, 1 << 20, cudaHostAllocMapped | cudaHostAllocPortable);
  step("stream + cudaHostAlloc(mapped, portable)");
  cudaFreeHost(hp);
  cudaStreamDestroy(st);
  step("cudaFreeHost + cudaStreamDestroy");
  for (int d = 0; d < ndev; ++d) {
    unsigned flags = 0;
    int active = 0;
    CUdevice dd;
    cuDeviceGet(&dd, d);
    cuDevicePrimaryCtxGetState(dd, &flags, &active);
    if (d != rank && active) std::printf("peer_vm_probe: rank %d: primary context on GPU %d is active\n", rank, d);
  }
  void* dm = nullptr;
  cudaMalloc(&dm, 1 << 20);
  step("cudaMalloc(1 MiB)");
  cudaMemset(dm, 0, 1 << 20);
  cudaDeviceSynchronize();
  step("cudaMemset");
  cudaFree(dm);
  step("cudaFree");
  CUdeviceptr dd;
  CK(cuMemAlloc(&dd, 64 << 20));
  step("cuMemAlloc(64 MiB)");
  CK(cuMemFree(dd));
  step("cuMemFree");
  // The heap's address-space reservation: GSHMEM_MAX_HEAP_SIZE (256 GiB) per PE, some memory mapped into it.
  for (int k = 0; k < 2; ++k) {
    CUdeviceptr big;
    const std::size_t span = std::size_t(256) << 30;
    CK(cuMemAddressReserve(&big, 2 * span, 0, 0, 0));
    step("cuMemAddressReserve(512 GiB)");
    CUmemAllocationProp p0{};
    p0.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p0.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p0.location.id = rank;
    CUmemGenericAllocationHandle h;
    CK(cuMemCreate(&h, std::size_t(32) << 20, &p0, 0));
    CK(cuMemMap(big + span, std::size_t(32) << 20, 0, h, 0));
    CUmemAccessDesc a0{};
    a0.location = p0.location;
    a0.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CK(cuMemSetAccess(big + span, std::size_t(32) << 20, &a0, 1));
    CK(cuMemsetD32(big + span, 7, 1024));
    CK(cuCtxSynchronize());
    step("map 32 MiB at +256 GiB, set access, memset");
    CK(cuMemUnmap(big + span, std::size_t(32) << 20));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(big, 2 * span));
    step("unmap, release, cuMemAddressFree");
  }
  const auto maps0 = maps();
  const long vm0 = vm_kb();
  for (int cycle = 0; cycle < 4; ++cycle) {
    const bool peer = cycle > 0;
    CUmemGenericAllocationHandle own, other{};
    CK(cuMemCreate(&own, size, &prop, 0));
    int fd = -1;
    CK(cuMemExportToShareableHandle(&fd, own, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    send_fd(sock, fd);
    const int pfd = recv_fd(sock);
    CUdeviceptr va;
    CK(cuMemAddressReserve(&va, 2 * size, 0, 0, 0));
    CK(cuMemMap(va, size, 0, own, 0));
    if (peer) {
      CK(cuMemImportFromShareableHandle(&other, reinterpret_cast<void*>(static_cast<std::uintptr_t>(pfd)),
                                        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
      CK(cuMemMap(va + size, size, 0, other, 0));
    }
    CUmemAccessDesc acc{};
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc.location.id = rank;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CK(cuMemSetAccess(va, peer ? 2 * size : size, &acc, 1));
    CK(cuMemsetD32(va, 0x1234u + rank, size / 4));
    if (peer) CK(cuMemsetD32(va + size, 0x5678u + rank, 1024));
    CK(cuCtxSynchronize());
    sync_pair(sock);
    CK(cuMemUnmap(va, peer ? 2 * size : size));
    if (peer) CK(cuMemRelease(other));
    CK(cuMemRelease(own));
    CK(cuMemAddressFree(va, 2 * size));
    close(fd);
    close(pfd);
    sync_pair(sock);
    std::printf("peer_vm_probe: rank %d (GPU %d): cycle %d (%s): VmSize %+ld kB since before cycle 0\n", rank, rank,
                cycle, peer ? "own + peer mapped" : "own only", vm_kb() - vm0);
  }
  for (const auto& [a, what] : maps()) {
    auto it = maps0.find(a);
    if (it == maps0.end() || it->second != what) std::printf("peer_vm_probe: rank %d:   new %lx %s\n", rank, a, what.c_str());
  }
  CK(cuDevicePrimaryCtxRelease(dev));
  std::printf("peer_vm_probe: rank %d: VmSize %+ld kB after releasing the primary context\n", rank, vm_kb() - vm0);
  return 0;
}

}  // namespace

int main() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 3;
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    close(sv[0]);
    const int rc = run(1, sv[1]);
    std::fflush(stdout);
    std::_Exit(rc);
  }
  close(sv[1]);
  const int rc = run(0, sv[0]);
  int st = 0;
  waitpid(child, &st, 0);
  return rc != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}
