// CUDA backing for GPU PEs: the heap is a list of VMM chunks (cuMemCreate, pinned on this PE's GPU, exportable
// as POSIX fds). Each new chunk is mapped at my slot, exported, sent to the local peers over FdExchange, and
// every peer's chunk is imported and mapped at that peer's slot, readable and writable by my GPU (P2P).
// Every step ends in an agreement over all PEs, so a failure on one PE is an error on all of them.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
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

std::string cu_text(CUresult r) {
  const char* name = "CUDA_ERROR_?";
  const char* text = "";
  if (const cuda::Driver* d = cuda::driver()) {
    d->cuGetErrorName(r, &name);
    d->cuGetErrorString(r, &text);
  }
  return fmt::format("{} ({})", name ? name : "CUDA_ERROR_?", text ? text : "");
}

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

 private:
  // Backs [offset, offset+bytes) of every local heap with one new chunk per PE. "" or the no-memory cause.
  std::string add_chunk(std::size_t offset, std::size_t bytes);
  StepStatus check_peer_access(const std::vector<GpuId>& ids);
  void release() noexcept;

  struct Mapping {
    CUdeviceptr va;
    std::size_t size;
    CUmemGenericAllocationHandle handle;
  };

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

  // 2. Send my chunk to the local peers, receive theirs.
  std::vector<std::vector<int>> got;
  try {
    got = fdx_.exchange({fd}, tag, &boot_);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  ++chunks_;

  // 3. Map every peer's chunk at its slot, read/write for my GPU.
  st = step_ok();
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
                        fmt::format("importing PE {}'s heap chunk (cuMemImportFromShareableHandle) failed: {}", pe,
                                    cu_text(r)));
      } else if ((r = d_.cuMemMap(pva, bytes, 0, ph, 0)) != CUDA_SUCCESS) {
        d_.cuMemRelease(ph);
        st = step_error(StepStatus::kFailed,
                        fmt::format("mapping PE {}'s heap chunk (cuMemMap) failed: {}", pe, cu_text(r)));
      } else {
        mappings_.push_back({pva, bytes, ph});
        if ((r = d_.cuMemSetAccess(pva, bytes, &access_, 1)) != CUDA_SUCCESS) {
          st = step_error(StepStatus::kFailed,
                          fmt::format("GPU {} cannot access PE {}'s heap (cuMemSetAccess: {}). Fix: {}", ordinal_,
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
  agree_or_throw(boot_, st, "symmetric heap (CUDA memory)");
  size_ = offset + bytes;
  return {};
}

CudaMemory::~CudaMemory() { release(); }

// Order matters: unmap every range, then release the handles (the memory goes away with the last reference),
// then free the address range.
void CudaMemory::release() noexcept {
  for (auto it = mappings_.rbegin(); it != mappings_.rend(); ++it) {
    CUresult r = d_.cuMemUnmap(it->va, it->size);
    if (r != CUDA_SUCCESS) log::warn("symmetric heap: cuMemUnmap failed: {}", cu_text(r));
  }
  for (const Mapping& m : mappings_) {
    CUresult r = d_.cuMemRelease(m.handle);
    if (r != CUDA_SUCCESS) log::warn("symmetric heap: cuMemRelease failed: {}", cu_text(r));
  }
  mappings_.clear();
  if (base_) {
    CUresult r = d_.cuMemAddressFree(base_, reserved_);
    if (r != CUDA_SUCCESS) log::warn("symmetric heap: cuMemAddressFree failed: {}", cu_text(r));
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
