// gshmem device API, implementation: collective (cooperative) kernel launch, host side.
//
// Inline host code in the header on purpose: the kernel `func` is registered with the *program's* CUDA runtime,
// so the occupancy query and cudaLaunchCooperativeKernel must run through that runtime, not the library's.
// Return values: GSHMEM_SUCCESS or a status, as NVSHMEM's nvshmemx_collective_launch returns 0 or an error code;
// on failure the reason (call, cause, fix) is printed to stderr, as the host API does.
#pragma once
#include <cuda_runtime.h>
#include <stdio.h>

#include "gshmem/gshmem.h"

namespace gshmem {
namespace launch_detail {

// Occupancy limit of `func` with `block` threads and `shmem` dynamic shared memory on this PE's GPU, which the
// caller has made current. Fills per_sm, sms. Returns a status; prints the reason on failure.
inline int co_resident_limit(const char* call, const void* func, dim3 block, size_t shmem, int device, int* per_sm,
                             int* sms) {
  int coop = 0;
  cudaError_t e = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device);
  if (e == cudaSuccess && !coop) {
    fprintf(stderr, "gshmem: %s: GPU %d does not support cooperative launch (cudaDevAttrCooperativeLaunch is 0). "
                    "Fix: use a GPU of compute capability 8.0 or newer, not in MPS-limited or vGPU mode without "
                    "cooperative launch\n", call, device);
    return GSHMEM_ERROR_NOT_SUPPORTED;
  }
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
  const int threads = static_cast<int>(block.x * block.y * block.z);
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, func, threads, shmem);
  if (e != cudaSuccess) {
    fprintf(stderr, "gshmem: %s: the occupancy query for the kernel failed on GPU %d: %s (%s). Fix: pass a "
                    "__global__ function of this program as func, with a block of at most 1024 threads and no more "
                    "dynamic shared memory than the kernel allows\n", call, device, cudaGetErrorName(e),
            cudaGetErrorString(e));
    (void)cudaGetLastError();
    return GSHMEM_ERROR_INVALID_VALUE;
  }
  return GSHMEM_SUCCESS;
}

// Makes this PE's GPU current for the duration of a launch call, restoring the caller's device after.
struct PeDevice {
  int device = -1, prev = -1;
  int status = GSHMEM_SUCCESS;
  explicit PeDevice(const char* call) {
    if (gshmemx_init_status() != GSHMEM_STATUS_IS_INITIALIZED) {
      fprintf(stderr, "gshmem: %s: gshmem is not initialised. Fix: call gshmem_init() (or gshmemx_init_attr) "
                      "first\n", call);
      status = GSHMEM_ERROR_NOT_INITIALIZED;
      return;
    }
    if (gshmemx_query_device(&device, nullptr) != GSHMEM_SUCCESS || device < 0) {
      fprintf(stderr, "gshmem: %s: this PE runs on the CPU, so it cannot launch kernels. Fix: run on a machine "
                      "with an NVIDIA GPU (or unset GSHMEM_DEVICE=cpu)\n", call);
      status = GSHMEM_ERROR_NOT_SUPPORTED;
      return;
    }
    if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
    if (prev != device && cudaSetDevice(device) != cudaSuccess) {
      fprintf(stderr, "gshmem: %s: cudaSetDevice(%d) (this PE's GPU) failed. Fix: check the GPU with "
                      "nvidia-smi\n", call, device);
      status = GSHMEM_ERROR_SYSTEM;
    }
  }
  ~PeDevice() {
    if (prev >= 0 && prev != device) (void)cudaSetDevice(prev);
  }
  PeDevice(const PeDevice&) = delete;
  PeDevice& operator=(const PeDevice&) = delete;
};

// The co-residency check of a cooperative launch of `grid` blocks on GPU `device`: a status, the reason printed on
// failure.
inline int check_grid(const char* call, const void* func, dim3 grid, dim3 block, size_t shmem, int device) {
  int per_sm = 0, sms = 0;
  const int rc = co_resident_limit(call, func, block, shmem, device, &per_sm, &sms);
  if (rc != GSHMEM_SUCCESS) return rc;
  const unsigned long long blocks = 1ull * grid.x * grid.y * grid.z;
  const unsigned long long limit = 1ull * static_cast<unsigned>(per_sm) * static_cast<unsigned>(sms);
  if (blocks == 0 || blocks > limit) {
    fprintf(stderr, "gshmem: %s on PE %d: a grid of %llu blocks (%ux%ux%u) of %u threads with %zu B of dynamic "
                    "shared memory %s: at most %llu blocks fit co-resident on GPU %d (%d per SM x %d SMs). Fix: "
                    "launch between 1 and %llu blocks (gshmemx_collective_launch_query_gridsize gives the "
                    "maximum), or use fewer threads, registers or shared memory per block\n",
            call, gshmem_my_pe(), blocks, grid.x, grid.y, grid.z, block.x * block.y * block.z, shmem,
            blocks == 0 ? "is empty" : "is too large", limit, device, per_sm, sms, limit);
    return GSHMEM_ERROR_INVALID_VALUE;
  }
  return GSHMEM_SUCCESS;
}

}  // namespace launch_detail
}  // namespace gshmem

// The largest grid (in blocks) of `func` with `block` threads and `shmem` bytes of dynamic shared memory whose
// blocks are all co-resident on this PE's GPU, i.e. that gshmemx_collective_launch accepts. args is unused (kept
// for NVSHMEM's signature). Returns GSHMEM_SUCCESS and sets *gridsize, or a status.
inline int gshmemx_collective_launch_query_gridsize(const void* func, dim3 block, void** args, size_t shmem,
                                                    int* gridsize) {
  const char* call = "gshmemx_collective_launch_query_gridsize";
  (void)args;
  if (gridsize == nullptr || func == nullptr) {
    fprintf(stderr, "gshmem: %s: %s is NULL. Fix: pass the kernel and the address of an int\n", call,
            func == nullptr ? "func" : "gridsize");
    return GSHMEM_ERROR_INVALID_VALUE;
  }
  gshmem::launch_detail::PeDevice pe(call);
  if (pe.status != GSHMEM_SUCCESS) return pe.status;
  int per_sm = 0, sms = 0;
  const int rc = gshmem::launch_detail::co_resident_limit(call, func, block, shmem, pe.device, &per_sm, &sms);
  if (rc != GSHMEM_SUCCESS) return rc;
  *gridsize = per_sm * sms;
  return GSHMEM_SUCCESS;
}

// Launches `func` cooperatively (cudaLaunchCooperativeKernel) on this PE's GPU in `stream`, after checking that all
// grid.x*grid.y*grid.z blocks can be co-resident (the occupancy API), so that device-side waits and barriers
// between blocks and PEs cannot deadlock on blocks that never run. Every PE calls it for its own kernel; args as
// for cudaLaunchCooperativeKernel. Returns GSHMEM_SUCCESS, GSHMEM_ERROR_INVALID_VALUE (grid too large or empty:
// the message names the grid size and the maximum), GSHMEM_ERROR_NOT_SUPPORTED, GSHMEM_ERROR_NOT_INITIALIZED or
// GSHMEM_ERROR_COLLECTIVE_LAUNCH_FAILED (the launch itself failed; NVSHMEM's code for it).
inline int gshmemx_collective_launch(const void* func, dim3 grid, dim3 block, void** args, size_t shmem,
                                     cudaStream_t stream) {
  const char* call = "gshmemx_collective_launch";
  if (func == nullptr) {
    fprintf(stderr, "gshmem: %s: func is NULL. Fix: pass the __global__ function to launch\n", call);
    return GSHMEM_ERROR_INVALID_VALUE;
  }
  gshmem::launch_detail::PeDevice pe(call);
  if (pe.status != GSHMEM_SUCCESS) return pe.status;
  const int rc = gshmem::launch_detail::check_grid(call, func, grid, block, shmem, pe.device);
  if (rc != GSHMEM_SUCCESS) return rc;
  const cudaError_t e = cudaLaunchCooperativeKernel(func, grid, block, args, shmem, stream);
  if (e != cudaSuccess) {
    fprintf(stderr, "gshmem: %s on PE %d: cudaLaunchCooperativeKernel failed: %s (%s). Fix: check the kernel "
                    "arguments and that the stream belongs to GPU %d\n", call, gshmem_my_pe(), cudaGetErrorName(e),
            cudaGetErrorString(e), pe.device);
    (void)cudaGetLastError();
    return GSHMEM_ERROR_COLLECTIVE_LAUNCH_FAILED;
  }
  return GSHMEM_SUCCESS;
}

// NVSHMEM 3.8's attribute form: the launch as a cudaLaunchConfig_t (grid, block, dynamic shared memory, stream and
// the caller's launch attributes), made cooperative unless the caller sets cudaLaunchAttributeCooperative itself
// (then its value wins, as NVSHMEM documents), with the same co-residency check as gshmemx_collective_launch when
// cooperative. The kernel runs on cuda_config.stream (NVSHMEM runs it on a stream of its own and orders the
// caller's stream after it: the same order as seen from the caller's stream). At most 15 caller attributes.
typedef struct gshmemx_collective_launch_attr {
  cudaLaunchConfig_t cuda_config;
} gshmemx_collective_launch_attr_t;
inline int gshmemx_collective_launch_attr(const gshmemx_collective_launch_attr_t* attr, const void* func,
                                          void** args) {
  const char* call = "gshmemx_collective_launch_attr";
  constexpr unsigned kMost = 15;
  if (attr == nullptr || func == nullptr) {
    fprintf(stderr, "gshmem: %s: %s is NULL. Fix: pass the launch's attributes (cuda_config filled in) and the "
                    "__global__ function to launch\n", call, attr == nullptr ? "attr" : "func");
    return GSHMEM_ERROR_INVALID_VALUE;
  }
  cudaLaunchConfig_t cfg = attr->cuda_config;
  if (cfg.numAttrs > kMost || (cfg.numAttrs > 0 && cfg.attrs == nullptr)) {
    fprintf(stderr, "gshmem: %s: cuda_config has numAttrs %u with attrs %s. Fix: pass at most %u launch attributes "
                    "in an array of that many\n", call, cfg.numAttrs, cfg.attrs == nullptr ? "NULL" : "set", kMost);
    return GSHMEM_ERROR_INVALID_VALUE;
  }
  gshmem::launch_detail::PeDevice pe(call);
  if (pe.status != GSHMEM_SUCCESS) return pe.status;
  cudaLaunchAttribute merged[kMost + 1] = {};
  bool set = false, cooperative = true;
  for (unsigned i = 0; i < cfg.numAttrs; ++i) {
    merged[i] = cfg.attrs[i];
    if (cfg.attrs[i].id == cudaLaunchAttributeCooperative) {
      set = true;
      cooperative = cfg.attrs[i].val.cooperative != 0;
    }
  }
  unsigned n = cfg.numAttrs;
  if (!set) {
    merged[n].id = cudaLaunchAttributeCooperative;
    merged[n].val.cooperative = 1;
    ++n;
  }
  if (cooperative) {
    const int rc = gshmem::launch_detail::check_grid(call, func, cfg.gridDim, cfg.blockDim, cfg.dynamicSmemBytes,
                                                     pe.device);
    if (rc != GSHMEM_SUCCESS) return rc;
  }
  cfg.attrs = merged;
  cfg.numAttrs = n;
  const cudaError_t e = cudaLaunchKernelExC(&cfg, func, args);
  if (e != cudaSuccess) {
    fprintf(stderr, "gshmem: %s on PE %d: cudaLaunchKernelExC failed: %s (%s). Fix: check the kernel arguments, "
                    "the launch attributes and that the stream belongs to GPU %d\n", call, gshmem_my_pe(),
            cudaGetErrorName(e), cudaGetErrorString(e), pe.device);
    (void)cudaGetLastError();
    return GSHMEM_ERROR_COLLECTIVE_LAUNCH_FAILED;
  }
  return GSHMEM_SUCCESS;
}

// C++ convenience: typed kernel pointer.
template <typename... Params>
inline int gshmemx_collective_launch(void (*func)(Params...), dim3 grid, dim3 block, void** args, size_t shmem,
                                     cudaStream_t stream) {
  return gshmemx_collective_launch(reinterpret_cast<const void*>(func), grid, block, args, shmem, stream);
}
template <typename... Params>
inline int gshmemx_collective_launch_attr(const gshmemx_collective_launch_attr_t* attr, void (*func)(Params...),
                                          void** args) {
  return gshmemx_collective_launch_attr(attr, reinterpret_cast<const void*>(func), args);
}
template <typename... Params>
inline int gshmemx_collective_launch_query_gridsize(void (*func)(Params...), dim3 block, void** args, size_t shmem,
                                                    int* gridsize) {
  return gshmemx_collective_launch_query_gridsize(reinterpret_cast<const void*>(func), block, args, shmem,
                                                  gridsize);
}
