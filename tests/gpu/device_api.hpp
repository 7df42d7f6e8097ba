// Shared by the parts of gpu_device_api (device_api_*.cu): each part is a translation unit of its own (with its own
// gshmemi_dstate, so the program is also a many-TU test without -rdc) and exports one suite.
#pragma once
#include <gshmem/device.cuh>

#include <type_traits>

#include "harness.hpp"

namespace gt {

// Calls THREAD / WARP / BLOCK (free-function names) by the cooperation type C.
#define GT_SCOPED(C, THREAD, WARP, BLOCK, ...)                                                                 \
  do {                                                                                                         \
    if constexpr (std::is_same<C, gshmem::dev::Thread>::value) THREAD(__VA_ARGS__);                            \
    else if constexpr (std::is_same<C, gshmem::dev::Warp>::value) WARP(__VA_ARGS__);                           \
    else BLOCK(__VA_ARGS__);                                                                                   \
  } while (0)

inline const char* scope_name(int s) { return s == 0 ? "thread" : s == 1 ? "warp" : "block"; }

// Groups of a <<<grid, block>>> launch for cooperation C, and this thread's group.
template <typename C>
__device__ __forceinline__ unsigned group_count() {
  if constexpr (std::is_same<C, gshmem::dev::Thread>::value) return gridDim.x * blockDim.x;
  else if constexpr (std::is_same<C, gshmem::dev::Warp>::value) return gridDim.x * (blockDim.x / 32);
  else return gridDim.x;
}
template <typename C>
__device__ __forceinline__ unsigned group_index() {
  if constexpr (std::is_same<C, gshmem::dev::Thread>::value) return blockIdx.x * blockDim.x + threadIdx.x;
  else if constexpr (std::is_same<C, gshmem::dev::Warp>::value) return (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  else return blockIdx.x;
}

// Suites (each returns after its own checks; failures are counted in c).
void rma_typed_suite_1(Ctx& c); // device_api_rma_typed_1.cu: gshmem_<T>_* for half of the RMA types, half, bfloat16
void rma_typed_suite_2(Ctx& c); // device_api_rma_typed_2.cu: the other half of the RMA types
void rma_other_suite(Ctx& c);   // device_api_rma_other.cu: sized put8..128, putmem family, native gshmem::dev API
void amo_suite(Ctx& c);         // device_api_amo.cu: all-to-one atomics, exact final values
void wait_suite(Ctx& c);        // device_api_wait.cu: wait_until/test families, every comparator
void team_suite(Ctx& c);        // device_api_team.cu: device team queries and team barriers on split teams

}  // namespace gt
