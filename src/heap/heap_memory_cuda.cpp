// CUDA backing for GPU PEs: the heap is a list of VMM chunks (cuMemCreate, pinned on this PE's GPU, exportable
// as POSIX fds). Each new chunk is mapped at my slot, exported, sent to the local peers over FdExchange, and
// every peer's chunk is imported and mapped at that peer's slot, readable and writable by my GPU (P2P).
// Every step ends in an agreement over all PEs, so a failure on one PE is an error on all of them.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "heap/heap_memory.hpp"
#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"
#include "transport/cuda_driver.hpp"

namespace gshmem::heap {
namespace {

constexpr const char* kP2pFix =
    "gshmem needs peer access (NVLink or PCIe P2P) between the GPUs of one node for now: run one PE per node, "
    "use GPUs with P2P between them (nvidia-smi topo -p2p r), or use CPU PEs (GSHMEM_DEVICE=cpu)";

const cuda::Driver& driver_or_throw(int device) {
  const cuda::Driver* d = cuda::driver();
  if (!d) {
    fail(GSHMEM_ERROR_NOT_SUPPORTED,
         "symmetric heap on GPU {}: no usable CUDA driver: {}. Fix: install the NVIDIA driver, or use CPU PEs "
         "(GSHMEM_DEVICE=cpu)", device, cuda::reason());
  }
  return *d;
}

// "CUDA_ERROR_X (text)", also where the driver cannot name the code (cuda::error_text).
std::string cu_text(CUresult r) { return cuda::error_text(r); }

CUmemAllocationProp chunk_prop(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

// Identifies a GPU across processes (ordinals differ under CUDA_VISIBLE_DEVICES; PCI addresses do not).
struct GpuId {
  std::int32_t domain = -1, bus = -1, dev = -1, valid = 0;
  bool operator==(const GpuId& o) const { return valid && o.valid && domain == o.domain && bus == o.bus && dev == o.dev; }
};
static_assert(sizeof(GpuId) == 16, "GpuId crosses process boundaries: keep its layout fixed");

GpuId gpu_id(const cuda::Driver& d, CUdevice dev) {
  GpuId id;
  if (d.cuDeviceGetAttribute(&id.domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev) == CUDA_SUCCESS &&
      d.cuDeviceGetAttribute(&id.bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) == CUDA_SUCCESS &&
      d.cuDeviceGetAttribute(&id.dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev) == CUDA_SUCCESS) {
    id.valid = 1;
  }
  return id;
}

std::string pci_text(const GpuId& id) {
  if (!id.valid) return "PCI ?";
  return fmt::format("PCI {:04x}:{:02x}:{:02x}.0", id.domain, id.bus, id.dev);
}

std::string gpu_text(const cuda::Driver& d, CUdevice dev, int ordinal) {
  char name[128] = {};
  if (d.cuDeviceGetName(name, sizeof(name) - 1, dev) != CUDA_SUCCESS) std::snprintf(name, sizeof(name), "?");
  return fmt::format("GPU {} ({}, {})", ordinal, name, pci_text(gpu_id(d, dev)));
}

class CudaMemory final : public HeapMemory {
 public:
  CudaMemory(const Layout& layout, int device, bootstrap::Bootstrap& boot, bootstrap::FdExchange& fdx);
  ~CudaMemory() override;
  CudaMemory(const CudaMemory&) = delete;
  CudaMemory& operator=(const CudaMemory&) = delete;

  char* slot_base(int local) const override {
    return reinterpret_cast<char*>(base_ + static_cast<CUdeviceptr>(local) * layout_.slot);
  }
  std::size_t size() const override { return size_; }
  const char* kind() const override { return "CUDA VMM"; }
  std::string grow(std::size_t new_size) override { return add_chunk(size_, new_size - size_); }
  void map_external(std::size_t offset, void* user, std::size_t bytes, std::uint64_t tag, const char* call) override;
  void unmap_external(std::size_t offset) noexcept override;

 private:
  struct Mapping {
    CUdeviceptr va;
    std::size_t size;
    CUmemGenericAllocationHandle handle;
  };

  // Backs [offset, offset+bytes) of every local heap with one new chunk per PE. "" or the no-memory cause.
  std::string add_chunk(std::size_t offset, std::size_t bytes);
  // The half of a chunk's or registered buffer's sharing that is the same for both: sends my exported `fd` (closed
  // here) to the local peers, imports theirs and maps each at `offset` of its slot, read/write for my GPU, adding
  // the mappings to `into`; agreement over all PEs (throws on every PE, naming `what`, if one failed).
  void share_with_peers(std::size_t offset, std::size_t bytes, int fd, std::uint64_t tag,
                        std::vector<Mapping>& into, const char* what);
  StepStatus export_external(CUdeviceptr va, void* user, std::size_t bytes, Mapping& mine, int& fd,
                             const char* call);
  StepStatus check_peer_access(const std::vector<GpuId>& ids);
  void unmap_all(std::vector<Mapping>& ms) noexcept;
  void release() noexcept;

  const cuda::Driver& d_;
  Layout layout_;
  int ordinal_;
  CUdevice dev_ = 0;
  bootstrap::Bootstrap& boot_;
  bootstrap::FdExchange& fdx_;
  CUmemAllocationProp prop_{};
  CUmemAccessDesc access_{};     // read/write for my GPU
  CUdeviceptr base_ = 0;         // aligned start of slot 0 (cuMemAddressReserve aligns it)
  std::size_t reserved_ = 0;
  std::size_t size_ = 0;
  std::uint64_t chunks_ = 0;
  std::vector<Mapping> mappings_;  // every chunk mapped here (mine and the peers'), in mapping order
  std::map<std::size_t, std::vector<Mapping>> externals_;  // registered buffers by offset: mine and the peers'
};

CudaMemory::CudaMemory(const Layout& layout, int device, bootstrap::Bootstrap& boot, bootstrap::FdExchange& fdx)
    : d_(driver_or_throw(device)), layout_(layout), ordinal_(device), boot_(boot), fdx_(fdx) {
  try {
    prop_ = chunk_prop(device);
    access_.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access_.location.id = device;
    access_.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

    // 1. Which GPU this is, by PCI address, for every PE (ordinals are per process).
    StepStatus st = step_ok();
    GpuId mine;
    CUresult r = d_.cuDeviceGet(&dev_, device);
    if (r != CUDA_SUCCESS) {
      st = step_error(StepStatus::kFailed, fmt::format("cuDeviceGet({}) failed: {}. Fix: pass a GPU ordinal "
                                                       "visible to this process (check CUDA_VISIBLE_DEVICES)",
                                                       device, cu_text(r)),
                      GSHMEM_ERROR_INVALID_VALUE);
    } else {
      mine = gpu_id(d_, dev_);
    }
    std::vector<GpuId> ids(static_cast<std::size_t>(boot.size()));
    boot.allgather(&mine, ids.data(), sizeof(GpuId));

    // 2. Peer access to every local peer's GPU, and the address space for every local heap.
    if (st.code == StepStatus::kOk) st = check_peer_access(ids);
    if (st.code == StepStatus::kOk) {
      const std::size_t total = layout_.slot * static_cast<std::size_t>(layout_.n_local);
      r = d_.cuMemAddressReserve(&base_, total, layout_.alignment, 0, 0);
      if (r != CUDA_SUCCESS) {
        base_ = 0;
        st = step_error(StepStatus::kFailed,
                        fmt::format("cuMemAddressReserve of {} bytes ({} local PEs x {}) failed: {}. Fix: lower "
                                    "GSHMEM_MAX_HEAP_SIZE",
                                    total, layout_.n_local, config::format_size(layout_.slot), cu_text(r)),
                        GSHMEM_ERROR_OUT_OF_MEMORY);
      } else {
        reserved_ = total;
      }
    }
    agree_or_throw(boot, st, "symmetric heap (CUDA memory)");

    // 3. The first chunk.
    std::string why = add_chunk(0, layout_.initial);
    if (!why.empty()) {
      fail(GSHMEM_ERROR_OUT_OF_MEMORY,
           "symmetric heap: could not allocate the initial {} bytes of GPU memory ({}). Fix: lower "
           "GSHMEM_SYMMETRIC_SIZE, or free GPU memory held by other processes (nvidia-smi)",
           layout_.initial, why);
    }
  } catch (...) {
    release();
    throw;
  }
}

StepStatus CudaMemory::check_peer_access(const std::vector<GpuId>& ids) {
  const GpuId mine = ids[static_cast<std::size_t>(layout_.local_pes[layout_.my_local])];
  int count = 0;
  if (d_.cuDeviceGetCount(&count) != CUDA_SUCCESS) count = 0;
  for (int i = 0; i < layout_.n_local; ++i) {
    if (i == layout_.my_local) continue;
    const int pe = layout_.local_pes[i];
    const GpuId& theirs = ids[static_cast<std::size_t>(pe)];
    if (theirs == mine) continue;  // same GPU: no P2P needed
    // Find the peer's GPU among the ones this process sees; if it is not visible here the check is left to
    // cuMemSetAccess at mapping time (which fails with the same advice).
    for (int o = 0; o < count; ++o) {
      CUdevice other = 0;
      if (d_.cuDeviceGet(&other, o) != CUDA_SUCCESS || !(gpu_id(d_, other) == theirs)) continue;
      int can = 0;
      CUresult r = d_.cuDeviceCanAccessPeer(&can, dev_, other);
      if (r != CUDA_SUCCESS || !can) {
        return step_error(StepStatus::kFailed,
                          fmt::format("{} of PE {} cannot access {} of PE {} (cuDeviceCanAccessPeer: {}). Fix: {}",
                                      gpu_text(d_, dev_, ordinal_), layout_.local_pes[layout_.my_local],
                                      gpu_text(d_, other, o), pe, r == CUDA_SUCCESS ? "0" : cu_text(r), kP2pFix),
                          GSHMEM_ERROR_NOT_SUPPORTED);
      }
      break;
    }
  }
  return step_ok();
}

std::string CudaMemory::add_chunk(std::size_t offset, std::size_t bytes) {
  const int me = layout_.my_local;
  const std::uint64_t tag = kCudaFdTag + chunks_;

  // 1. My chunk: create, map at my slot, give my GPU access, export as an fd.
  CUmemGenericAllocationHandle h = 0;
  int fd = -1;
  bool created = false, mapped = false;
  const CUdeviceptr va = reinterpret_cast<CUdeviceptr>(slot_base(me)) + offset;
  auto make_mine = [&]() -> StepStatus {
    CUresult r = d_.cuMemCreate(&h, bytes, &prop_, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      return step_error(StepStatus::kNoMemory,
                        fmt::format("cuMemCreate of {} bytes on GPU {}: {}", bytes, ordinal_, cu_text(r)));
    }
    if (r != CUDA_SUCCESS) {
      return step_error(StepStatus::kFailed,
                        fmt::format("cuMemCreate of {} bytes on GPU {} failed: {}", bytes, ordinal_, cu_text(r)));
    }
    created = true;
    if ((r = d_.cuMemMap(va, bytes, 0, h, 0)) != CUDA_SUCCESS) {
      return step_error(StepStatus::kFailed, fmt::format("cuMemMap of {} bytes failed: {}", bytes, cu_text(r)));
    }
    mapped = true;
    if ((r = d_.cuMemSetAccess(va, bytes, &access_, 1)) != CUDA_SUCCESS) {
      return step_error(StepStatus::kFailed, fmt::format("cuMemSetAccess failed: {}", cu_text(r)));
    }
    r = d_.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (r != CUDA_SUCCESS) {
      fd = -1;
      return step_error(StepStatus::kFailed, fmt::format("cuMemExportToShareableHandle failed: {}", cu_text(r)));
    }
    return step_ok();
  };
  StepStatus st = make_mine();
  StepStatus all = agree(boot_, st);
  if (all.code != StepStatus::kOk) {
    if (fd >= 0) close(fd);
    if (mapped) d_.cuMemUnmap(va, bytes);
    if (created) d_.cuMemRelease(h);
    if (all.code == StepStatus::kNoMemory) return all.text;
    throw Error(all.status, std::string("symmetric heap (CUDA memory): ") + all.text);
  }
  mappings_.push_back({va, bytes, h});

  ++chunks_;
  share_with_peers(offset, bytes, fd, tag, mappings_, "symmetric heap (CUDA memory)");
  size_ = offset + bytes;
  return {};
}

void CudaMemory::share_with_peers(std::size_t offset, std::size_t bytes, int fd, std::uint64_t tag,
                                  std::vector<Mapping>& into, const char* what) {
  const int me = layout_.my_local;
  // 1. Send my memory to the local peers, receive theirs.
  std::vector<std::vector<int>> got;
  try {
    got = fdx_.exchange({fd}, tag, &boot_);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);

  // 2. Map every peer's memory at its slot, read/write for my GPU.
  StepStatus st = step_ok();
  CUresult r = CUDA_SUCCESS;
  for (int i = 0; i < static_cast<int>(got.size()); ++i) {
    for (std::size_t k = 0; k < got[i].size(); ++k) {
      const int pfd = got[i][k];
      if (i == me || k != 0 || i >= layout_.n_local || st.code != StepStatus::kOk) {
        close(pfd);
        continue;
      }
      const int pe = layout_.local_pes[i];
      CUmemGenericAllocationHandle ph = 0;
      const CUdeviceptr pva = reinterpret_cast<CUdeviceptr>(slot_base(i)) + offset;
      r = d_.cuMemImportFromShareableHandle(&ph, reinterpret_cast<void*>(static_cast<std::uintptr_t>(pfd)),
                                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
      close(pfd);
      if (r != CUDA_SUCCESS) {
        st = step_error(StepStatus::kFailed,
                        fmt::format("importing PE {}'s memory (cuMemImportFromShareableHandle) failed: {}", pe,
                                    cu_text(r)));
      } else if ((r = d_.cuMemMap(pva, bytes, 0, ph, 0)) != CUDA_SUCCESS) {
        d_.cuMemRelease(ph);
        st = step_error(StepStatus::kFailed,
                        fmt::format("mapping PE {}'s memory (cuMemMap) failed: {}", pe, cu_text(r)));
      } else {
        into.push_back({pva, bytes, ph});
        if ((r = d_.cuMemSetAccess(pva, bytes, &access_, 1)) != CUDA_SUCCESS) {
          st = step_error(StepStatus::kFailed,
                          fmt::format("GPU {} cannot access PE {}'s memory (cuMemSetAccess: {}). Fix: {}", ordinal_,
                                      pe, cu_text(r), kP2pFix),
                          GSHMEM_ERROR_NOT_SUPPORTED);
        }
      }
    }
  }
  if (st.code == StepStatus::kOk && got.size() != static_cast<std::size_t>(layout_.n_local)) {
    st = step_error(StepStatus::kFailed,
                    fmt::format("fd exchange returned {} entries for {} local PEs", got.size(), layout_.n_local),
                    GSHMEM_ERROR_INTERNAL);
  }
  agree_or_throw(boot_, st, what);
}

// My registered buffer: its allocation handle (the user's cuMemCreate), mapped a second time at `va` in my slot,
// read/write for my GPU, exported as a POSIX fd. Every refusal says what the buffer must be.
StepStatus CudaMemory::export_external(CUdeviceptr va, void* user, std::size_t bytes, Mapping& mine, int& fd,
                                       const char* call) {
  constexpr const char* kFix =
      "Fix: allocate the buffer with cuMemCreate (CU_MEM_ALLOCATION_TYPE_PINNED on this PE's GPU, requestedHandleTypes "
      "= CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, size a multiple of cuMemGetAllocationGranularity), map it with "
      "cuMemMap + cuMemSetAccess, and pass the mapped address";
  CUmemGenericAllocationHandle h = 0;
  CUresult r = d_.cuMemRetainAllocationHandle(&h, user);
  if (r != CUDA_SUCCESS) {
    return step_error(StepStatus::kFailed,
                      fmt::format("{}: buf_ptr={} is not memory mapped with the CUDA virtual memory API "
                                  "(cuMemRetainAllocationHandle: {}); cudaMalloc / cudaMallocHost / host memory "
                                  "cannot be shared with other processes this way. {}",
                                  call, user, cu_text(r), kFix),
                      GSHMEM_ERROR_INVALID_VALUE);
  }
  CUmemAllocationProp prop{};
  std::string why;
  CUdeviceptr range_base = 0;
  std::size_t range_size = 0;
  if ((r = d_.cuMemGetAllocationPropertiesFromHandle(&prop, h)) != CUDA_SUCCESS) {
    why = fmt::format("cuMemGetAllocationPropertiesFromHandle failed: {}", cu_text(r));
  } else if (!(prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
    why = fmt::format("its allocation was created without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in "
                      "requestedHandleTypes (it has {:#x}), so it cannot be exported to the other PEs",
                      static_cast<unsigned>(prop.requestedHandleTypes));
  } else if (prop.location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop.location.id != ordinal_) {
    why = fmt::format("its memory lies on {} {}, but this PE uses GPU {}",
                      prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? "GPU" : "location type",
                      prop.location.id, ordinal_);
  } else if (d_.cuMemGetAddressRange_v2(&range_base, &range_size, reinterpret_cast<CUdeviceptr>(user)) ==
                 CUDA_SUCCESS &&
             (range_base != reinterpret_cast<CUdeviceptr>(user) || bytes > range_size)) {
    why = fmt::format("it is not the start of a mapping of at least size={} bytes (the mapping containing it is "
                      "[{:#x}, +{}))", bytes, range_base, range_size);
  }
  if (!why.empty()) {
    d_.cuMemRelease(h);
    return step_error(StepStatus::kFailed, fmt::format("{}: buf_ptr={}: {}. {}", call, user, why, kFix),
                      GSHMEM_ERROR_INVALID_VALUE);
  }
  if ((r = d_.cuMemMap(va, bytes, 0, h, 0)) != CUDA_SUCCESS) {
    d_.cuMemRelease(h);
    return step_error(StepStatus::kFailed,
                      fmt::format("{}: mapping buf_ptr={} into the symmetric address space (cuMemMap of {} bytes) "
                                  "failed: {}. {}", call, user, bytes, cu_text(r), kFix),
                      GSHMEM_ERROR_INVALID_VALUE);
  }
  mine = {va, bytes, h};
  if ((r = d_.cuMemSetAccess(va, bytes, &access_, 1)) != CUDA_SUCCESS)
    return step_error(StepStatus::kFailed, fmt::format("{}: cuMemSetAccess failed: {}", call, cu_text(r)));
  if ((r = d_.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) != CUDA_SUCCESS) {
    fd = -1;
    return step_error(StepStatus::kFailed,
                      fmt::format("{}: exporting buf_ptr={} (cuMemExportToShareableHandle) failed: {}. {}", call,
                                  user, cu_text(r), kFix),
                      GSHMEM_ERROR_INVALID_VALUE);
  }
  return step_ok();
}

void CudaMemory::map_external(std::size_t offset, void* user, std::size_t bytes, std::uint64_t tag,
                              const char* call) {
  const CUdeviceptr va = reinterpret_cast<CUdeviceptr>(slot_base(layout_.my_local)) + offset;
  std::vector<Mapping> maps;
  Mapping mine{0, 0, 0};
  int fd = -1;
  const StepStatus st = export_external(va, user, bytes, mine, fd, call);
  if (mine.handle) maps.push_back(mine);
  try {
    const StepStatus all = agree(boot_, st);
    if (all.code != StepStatus::kOk) throw Error(all.status, all.text);
    share_with_peers(offset, bytes, fd, tag, maps, call);
    fd = -1;
  } catch (...) {
    if (fd >= 0) close(fd);
    unmap_all(maps);
    throw;
  }
  externals_[offset] = std::move(maps);
}

void CudaMemory::unmap_external(std::size_t offset) noexcept {
  auto it = externals_.find(offset);
  if (it == externals_.end()) return;
  unmap_all(it->second);
  externals_.erase(it);
}

// A teardown call that failed. Quiet (INFO) where there is nothing to fix and the memory goes anyway: the driver
// already shut down (a process exiting: CUDA's own exit handler can run before the library's), or the context holds
// a sticky fault (a kernel trapped or faulted; that was reported where it happened, and every later call in the
// context fails with it). Anything else warns.
void teardown_failed(const char* call, CUresult r) noexcept {
  switch (r) {
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      log::info("symmetric heap: {} failed at teardown: {} (the driver shut down or the context holds an earlier "
                "fault; the memory goes with the process)", call, cu_text(r));
      return;
    default: log::warn("symmetric heap: {} failed: {}", call, cu_text(r));
  }
}

void CudaMemory::unmap_all(std::vector<Mapping>& ms) noexcept {
  for (auto it = ms.rbegin(); it != ms.rend(); ++it) {
    CUresult r = d_.cuMemUnmap(it->va, it->size);
    if (r != CUDA_SUCCESS) teardown_failed("cuMemUnmap", r);
  }
  for (const Mapping& m : ms) {
    CUresult r = d_.cuMemRelease(m.handle);
    if (r != CUDA_SUCCESS) teardown_failed("cuMemRelease", r);
  }
  ms.clear();
}

CudaMemory::~CudaMemory() { release(); }

// Order matters: unmap every range, then release the handles (the memory goes away with the last reference),
// then free the address range.
void CudaMemory::release() noexcept {
  for (auto& [offset, ms] : externals_) unmap_all(ms);
  externals_.clear();
  unmap_all(mappings_);
  if (base_) {
    CUresult r = d_.cuMemAddressFree(base_, reserved_);
    if (r != CUDA_SUCCESS) teardown_failed("cuMemAddressFree", r);
  }
  base_ = 0;
}

}  // namespace

std::size_t cuda_granularity(int device) {
  const cuda::Driver& d = driver_or_throw(device);
  int count = 0;
  cuda::check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (device < 0 || device >= count) {
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "symmetric heap: GPU ordinal {} is not one of the {} GPUs this process sees. Fix: pass an ordinal below "
         "{} (check CUDA_VISIBLE_DEVICES)", device, count, count);
  }
  CUmemAllocationProp prop = chunk_prop(device);
  std::size_t g = 0;
  cuda::check(d.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
              "cuMemGetAllocationGranularity (exportable pinned memory)",
              "gshmem needs CUDA VMM with POSIX-fd export (driver R525+ on Linux)");
  return g;
}

std::unique_ptr<HeapMemory> make_cuda_memory(const Layout& layout, int device, bootstrap::Bootstrap& boot,
                                             bootstrap::FdExchange& fdx) {
  return std::make_unique<CudaMemory>(layout, device, boot, fdx);
}

}  // namespace gshmem::heap
