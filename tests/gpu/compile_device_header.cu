// Compile test: <gshmem/device.cuh> included twice, built by plain nvcc without -rdc, instantiating every native
// function template in every scope and calling a sample of the free functions. Not run.
#include <gshmem/device.cuh>
#include <gshmem/device.cuh>

namespace dev = gshmem::dev;

template <typename Coop>
__device__ void scoped(const gshmem::DeviceHandle& h, char* buf, uint64_t* sig, int pe) {
  dev::putmem<Coop>(h, buf, buf + 64, 64, pe);
  dev::getmem<Coop>(h, buf, buf + 64, 64, pe);
  dev::putmem_nbi<Coop>(h, buf, buf + 64, 64, pe);
  dev::getmem_nbi<Coop>(h, buf, buf + 64, 64, pe);
  dev::put<Coop>(h, reinterpret_cast<float*>(buf), reinterpret_cast<const float*>(buf + 64), 4, pe);
  dev::get<Coop>(h, reinterpret_cast<double*>(buf), reinterpret_cast<const double*>(buf + 64), 4, pe);
  dev::putmem_signal<Coop>(h, buf, buf + 64, 64, sig, 1, GSHMEM_SIGNAL_ADD, pe);
  dev::putmem_signal_nbi<Coop>(h, buf, buf + 64, 64, sig, 1, GSHMEM_SIGNAL_SET, pe);
  dev::barrier_all<Coop>(h);
  dev::sync_all<Coop>(h);
  dev::barrier<Coop>(h, GSHMEM_TEAM_WORLD);
  dev::team_sync<Coop>(h, GSHMEM_TEAM_WORLD);
}

template <typename T>
__device__ void amos(const gshmem::DeviceHandle& h, T* p, int pe) {
  T r = dev::atomic_fetch(h, p, pe);
  dev::atomic_set(h, p, r, pe);
  r += dev::atomic_swap(h, p, r, pe) + dev::atomic_compare_swap(h, p, r, T(1), pe);
  r += dev::atomic_fetch_add(h, p, r, pe) + dev::atomic_fetch_inc(h, p, pe);
  dev::atomic_add(h, p, r, pe);
  dev::atomic_inc(h, p, pe);
  r += dev::atomic_fetch_and(h, p, r, pe) + dev::atomic_fetch_or(h, p, r, pe) + dev::atomic_fetch_xor(h, p, r, pe);
  dev::atomic_and(h, p, r, pe);
  dev::atomic_or(h, p, r, pe);
  dev::atomic_xor(h, p, r, pe);
  dev::wait_until(h, p, GSHMEM_CMP_GE, r);
  if (dev::test(h, p, GSHMEM_CMP_NE, r)) dev::quiet();
}

__global__ void native_kernel(gshmem::DeviceHandle h, char* buf, uint64_t* sig) {
  const int pe = (dev::my_pe(h) + 1) % dev::n_pes(h);
  scoped<dev::Thread>(h, buf, sig, pe);
  scoped<dev::Warp>(h, buf, sig, pe);
  scoped<dev::Block>(h, buf, sig, pe);
  amos(h, reinterpret_cast<int*>(buf), pe);
  amos(h, reinterpret_cast<unsigned long long*>(buf), pe);
  dev::p(h, buf, 'x', pe);
  buf[1] = dev::g(h, buf, pe);
  dev::signal_op(h, sig, 2, GSHMEM_SIGNAL_ADD, pe);
  dev::signal_wait_until(h, sig, GSHMEM_CMP_GE, dev::signal_fetch(h, sig));
  dev::wait_until(h, reinterpret_cast<short*>(buf), GSHMEM_CMP_EQ, short(1));
  if (dev::ptr(h, buf, pe) == nullptr) dev::fence();
}

__global__ void free_kernel(char* buf, uint64_t* sig) {
  const int pe = (gshmem_my_pe() + 1) % gshmem_n_pes();
  int* i = reinterpret_cast<int*>(buf);
  gshmem_int_p(i, gshmem_int_g(i, pe), pe);
  gshmem_double_put(reinterpret_cast<double*>(buf), reinterpret_cast<const double*>(buf + 64), 2, pe);
  gshmem_putmem(buf, buf + 64, 64, pe);
  gshmemx_putmem_block(buf, buf + 64, 64, pe);
  gshmemx_getmem_nbi_warp(buf, buf + 64, 64, pe);
  gshmemx_float_put_signal_nbi_block(reinterpret_cast<float*>(buf), reinterpret_cast<const float*>(buf), 1, sig, 1,
                                     GSHMEM_SIGNAL_SET, pe);
  gshmem_putmem_signal_nbi(buf, buf + 64, 64, sig, 1, GSHMEM_SIGNAL_ADD, pe);
  gshmemx_signal_op(sig, 1, GSHMEM_SIGNAL_SET, pe);
  gshmem_signal_wait_until(sig, GSHMEM_CMP_GE, gshmem_signal_fetch(sig));
  gshmem_uint64_atomic_fetch_xor(reinterpret_cast<uint64_t*>(buf), 3, pe);
  gshmem_int_atomic_compare_swap(i, 0, 1, pe);
  gshmem_float_atomic_swap(reinterpret_cast<float*>(buf), 1.0f, pe);
  gshmem_short_wait_until(reinterpret_cast<short*>(buf), GSHMEM_CMP_NE, short(0));
  if (gshmem_long_test(reinterpret_cast<long*>(buf), GSHMEM_CMP_LT, 5L)) gshmem_quiet();
  if (gshmem_ptr(buf, pe)) gshmem_fence();
  gshmem_barrier_all();
  gshmemx_barrier_all_block();
  gshmemx_sync_all_warp();
  gshmem_team_sync(GSHMEM_TEAM_WORLD);
}

int main() {
  native_kernel<<<1, 32>>>(gshmem::DeviceHandle{}, nullptr, nullptr);
  free_kernel<<<1, 32>>>(nullptr, nullptr);
  return 0;
}
