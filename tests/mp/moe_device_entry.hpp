// mp_moe_gpu's device_entry case: the launchers of moe_device_entry.cu (the test's kernels calling
// gshmem/moe/device.cuh's dev::moe_dispatch / dev::moe_combine), seen from moe.cpp (C++).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "gshmem/gshmem.hpp"
#include "gshmem/moe/dispatch_combine.h"

struct MoeEntryCall {
  gshmem::moe::Plan plan;
  void* ws;                  // the case's own symmetric workspace (plan.bytes, zeroed)
  std::uint64_t call_no;     // 1, 2, ...: dispatch c and combine c share it
  std::int32_t* counts;      // dispatch's outputs and inputs (device memory)
  void *ex, *es;
  const void *x, *xs;
  const std::uint32_t* idx;
  const std::uint32_t* bound_m;  // device memory: the live token count
  void* out;                 // combine's output and inputs
  const float* w;
  const void* y;
  gshmem::host::ReduceType ty, to;
};

// One block of `threads` (a multiple of 32), or one warp (`warp`), on `st`; cudaErrorInvalidValue for a type
// pairing the file does not instantiate.
cudaError_t moe_entry_dispatch(bool warp, unsigned threads, cudaStream_t st, const MoeEntryCall& a);
cudaError_t moe_entry_combine(bool warp, unsigned threads, cudaStream_t st, const MoeEntryCall& a);
