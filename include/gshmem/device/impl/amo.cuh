// gshmem device API, implementation: atomics on any PE's symmetric word (32- and 64-bit), system scope.
// OpenSHMEM AMOs order nothing by themselves (relaxed); fence/quiet order them with other operations.
#pragma once
#include "gshmem/device/impl/common.cuh"

namespace gshmem {
namespace dev {

#define GSHMEMI_AMO_REF(dst, pe) detail::sys_ref<T>(*detail::peer(h, dst, pe))
constexpr ::cuda::memory_order kAmoOrder = ::cuda::memory_order_relaxed;

template <typename T>
__device__ __forceinline__ T atomic_fetch(const DeviceHandle& h, const T* src, int pe) {
  return detail::sys_ref<T>(*const_cast<T*>(detail::peer(h, src, pe))).load(kAmoOrder);
}
template <typename T>
__device__ __forceinline__ void atomic_set(const DeviceHandle& h, T* dst, T v, int pe) {
  GSHMEMI_AMO_REF(dst, pe).store(v, kAmoOrder);
}
template <typename T>
__device__ __forceinline__ T atomic_swap(const DeviceHandle& h, T* dst, T v, int pe) {
  return GSHMEMI_AMO_REF(dst, pe).exchange(v, kAmoOrder);
}
template <typename T>
__device__ __forceinline__ T atomic_compare_swap(const DeviceHandle& h, T* dst, T cond, T v, int pe) {
  GSHMEMI_AMO_REF(dst, pe).compare_exchange_strong(cond, v, kAmoOrder, kAmoOrder);
  return cond;  // the old value either way
}
template <typename T>
__device__ __forceinline__ T atomic_fetch_add(const DeviceHandle& h, T* dst, T v, int pe) {
  return GSHMEMI_AMO_REF(dst, pe).fetch_add(v, kAmoOrder);
}
template <typename T>
__device__ __forceinline__ void atomic_add(const DeviceHandle& h, T* dst, T v, int pe) {
  GSHMEMI_AMO_REF(dst, pe).fetch_add(v, kAmoOrder);
}
template <typename T>
__device__ __forceinline__ T atomic_fetch_inc(const DeviceHandle& h, T* dst, int pe) {
  return GSHMEMI_AMO_REF(dst, pe).fetch_add(T(1), kAmoOrder);
}
template <typename T>
__device__ __forceinline__ void atomic_inc(const DeviceHandle& h, T* dst, int pe) {
  GSHMEMI_AMO_REF(dst, pe).fetch_add(T(1), kAmoOrder);
}
template <typename T>
__device__ __forceinline__ T atomic_fetch_and(const DeviceHandle& h, T* dst, T v, int pe) {
  return GSHMEMI_AMO_REF(dst, pe).fetch_and(v, kAmoOrder);
}
template <typename T>
__device__ __forceinline__ void atomic_and(const DeviceHandle& h, T* dst, T v, int pe) {
  GSHMEMI_AMO_REF(dst, pe).fetch_and(v, kAmoOrder);
}
template <typename T>
__device__ __forceinline__ T atomic_fetch_or(const DeviceHandle& h, T* dst, T v, int pe) {
  return GSHMEMI_AMO_REF(dst, pe).fetch_or(v, kAmoOrder);
}
template <typename T>
__device__ __forceinline__ void atomic_or(const DeviceHandle& h, T* dst, T v, int pe) {
  GSHMEMI_AMO_REF(dst, pe).fetch_or(v, kAmoOrder);
}
template <typename T>
__device__ __forceinline__ T atomic_fetch_xor(const DeviceHandle& h, T* dst, T v, int pe) {
  return GSHMEMI_AMO_REF(dst, pe).fetch_xor(v, kAmoOrder);
}
template <typename T>
__device__ __forceinline__ void atomic_xor(const DeviceHandle& h, T* dst, T v, int pe) {
  GSHMEMI_AMO_REF(dst, pe).fetch_xor(v, kAmoOrder);
}
#undef GSHMEMI_AMO_REF

}  // namespace dev
}  // namespace gshmem
