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
  dev::iput<Coop>(h, reinterpret_cast<short*>(buf), reinterpret_cast<const short*>(buf + 64), 2, 3, 4, pe);
  dev::iget<Coop>(h, reinterpret_cast<__half*>(buf), reinterpret_cast<const __half*>(buf + 64), 1, 2, 4, pe);
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
  int status[2] = {0, 1};
  size_t idx[2];
  dev::wait_until_all(h, p, 2, status, GSHMEM_CMP_EQ, r);
  r += static_cast<T>(dev::wait_until_any(h, p, 2, nullptr, GSHMEM_CMP_GT, r));
  r += static_cast<T>(dev::wait_until_some(h, p, 2, idx, status, GSHMEM_CMP_LE, r));
  dev::wait_until_all_vector(h, p, 2, status, GSHMEM_CMP_EQ, p);
  r += static_cast<T>(dev::wait_until_any_vector(h, p, 2, nullptr, GSHMEM_CMP_GT, p));
  r += static_cast<T>(dev::wait_until_some_vector(h, p, 2, idx, status, GSHMEM_CMP_LE, p));
  r += static_cast<T>(dev::test_all(h, p, 2, status, GSHMEM_CMP_LT, r) + dev::test_any(h, p, 2, status, 0, r) +
                      dev::test_some(h, p, 2, idx, status, 0, r) + dev::test_all_vector(h, p, 2, status, 0, p) +
                      dev::test_any_vector(h, p, 2, status, 0, p) + dev::test_some_vector(h, p, 2, idx, status, 0, p));
  if (r == T(7)) dev::quiet();
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
  buf[2] = static_cast<char>(dev::team_my_pe(h, 5) + dev::team_n_pes(h, 0) + dev::team_translate_pe(h, 0, 1, 4));
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
  gshmem_put128(buf, buf + 64, 2, pe);
  gshmem_iget32(buf, buf + 64, 2, 1, 3, pe);
  gshmemx_get64_nbi_warp(buf, buf + 64, 2, pe);
  gshmemx_put8_block(buf, buf + 64, 2, pe);
  gshmem_int_iput(i, i + 8, 1, 2, 3, pe);
  __half* hp = reinterpret_cast<__half*>(buf);
  gshmem_half_p(hp, gshmem_half_g(hp + 1, pe), pe);
  gshmemx_bfloat16_put_signal_nbi_block(reinterpret_cast<__nv_bfloat16*>(buf), reinterpret_cast<__nv_bfloat16*>(buf),
                                        3, sig, 1, GSHMEM_SIGNAL_ADD, pe);
  size_t idx[4];
  long* l = reinterpret_cast<long*>(buf);
  gshmem_long_wait_until_all(l, 4, nullptr, GSHMEM_CMP_EQ, 0L);
  if (gshmem_long_wait_until_any_vector(l, 4, nullptr, GSHMEM_CMP_EQ, l) + gshmem_long_test_some(l, 4, idx, nullptr,
      GSHMEM_CMP_EQ, 1L) + gshmem_ushort_test_any(reinterpret_cast<unsigned short*>(buf), 2, nullptr, 0, 1) > 2)
    gshmem_quiet();
  buf[3] = static_cast<char>(gshmem_team_my_pe(GSHMEM_TEAM_WORLD) + gshmem_team_n_pes(1) +
                             gshmem_team_translate_pe(0, 1, 2));
  gshmemx_barrier_block(GSHMEM_TEAM_WORLD);
  gshmemx_team_sync_warp(GSHMEM_TEAM_WORLD);
}

int main() {
  native_kernel<<<1, 32>>>(gshmem::DeviceHandle{}, nullptr, nullptr);
  free_kernel<<<1, 32>>>(nullptr, nullptr);
  // Host side of the header: collective launch and the half/bfloat16 host forms.
  int grid = 0;
  char* buf = nullptr;
  uint64_t* sig = nullptr;
  void* args[] = {&buf, &sig};
  if (gshmemx_collective_launch_query_gridsize(free_kernel, dim3(32), args, 0, &grid) == GSHMEM_SUCCESS)
    (void)gshmemx_collective_launch(reinterpret_cast<const void*>(free_kernel), dim3(grid), dim3(32), args, 0, 0);
  __half hv = gshmem_half_g(reinterpret_cast<__half*>(buf), 0);
  gshmem_half_p(reinterpret_cast<__half*>(buf), hv, 0);
  gshmem_bfloat16_iput(nullptr, nullptr, 1, 1, 0, 0);
  return 0;
}
