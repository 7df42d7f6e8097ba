// Point-to-point synchronisation in device code: nvshmem_<T>_wait_until with every comparator (int, long long,
// uint64_t), nvshmem_<T>_test, and the array forms wait_until_all / wait_until_any / wait_until_some (with a
// status mask). The previous PE releases the waits with nvshmem_<T>_p from its own kernel.
#include "compat_util.h"

constexpr int kVars = 8;

struct Flags {
  int i[6];
  long long ll[6];
  uint64_t u[6];
  int arr[kVars];
};

// Value v is "released" when it reaches target: comparators ask that of the stored value in six ways.
__global__ void waiter(Flags* f, int base, int* out) {
  // EQ, NE, GT, LE, LT, GE against base (the setter writes base for EQ, base+1 for NE/GT/GE, base-1 for LE/LT)
  nvshmem_int_wait_until(&f->i[0], NVSHMEM_CMP_EQ, base);
  nvshmem_int_wait_until(&f->i[1], NVSHMEM_CMP_NE, 0);
  nvshmem_int_wait_until(&f->i[2], NVSHMEM_CMP_GT, base);
  nvshmem_int_wait_until(&f->i[3], NVSHMEM_CMP_LE, base - 1);
  nvshmem_int_wait_until(&f->i[4], NVSHMEM_CMP_LT, base);
  nvshmem_int_wait_until(&f->i[5], NVSHMEM_CMP_GE, base + 1);
  nvshmem_longlong_wait_until(&f->ll[0], NVSHMEM_CMP_EQ, (long long)base << 33);
  nvshmem_longlong_wait_until(&f->ll[2], NVSHMEM_CMP_GT, (long long)base << 33);
  nvshmem_longlong_wait_until(&f->ll[4], NVSHMEM_CMP_LT, -((long long)base << 33));
  nvshmem_uint64_wait_until(&f->u[0], NVSHMEM_CMP_EQ, (uint64_t)base << 40);
  nvshmem_uint64_wait_until(&f->u[5], NVSHMEM_CMP_GE, (uint64_t)base << 40);
  out[0] = f->i[0];
  out[1] = nvshmem_int_test(&f->i[2], NVSHMEM_CMP_GT, base);      // 1
  out[2] = nvshmem_int_test(&f->i[2], NVSHMEM_CMP_LT, base);      // 0
  out[3] = nvshmem_uint64_test(&f->u[5], NVSHMEM_CMP_NE, 0);      // 1
  // arrays: element k is set to base + k by the setter; all of them, then any, then some with a mask
  nvshmem_int_wait_until_all(f->arr, kVars, nullptr, NVSHMEM_CMP_GE, base);
  int status[kVars];
  for (int k = 0; k < kVars; ++k) status[k] = (k % 2 == 0);  // 1: excluded (only odd ones take part)
  const size_t any = nvshmem_int_wait_until_any(f->arr, kVars, status, NVSHMEM_CMP_GE, base);
  out[4] = static_cast<int>(any);
  size_t idx[kVars];
  const size_t n = nvshmem_int_wait_until_some(f->arr, kVars, idx, status, NVSHMEM_CMP_GE, base + 4);
  out[5] = static_cast<int>(n);
  int ok = 1;
  for (size_t k = 0; k < n; ++k) ok &= (idx[k] % 2 == 1) && (f->arr[idx[k]] >= base + 4);
  out[6] = ok;
}

__global__ void setter(Flags* f, int base, int peer) {
  nvshmem_int_p(&f->i[0], base, peer);
  nvshmem_int_p(&f->i[1], base + 1, peer);
  nvshmem_int_p(&f->i[2], base + 1, peer);
  nvshmem_int_p(&f->i[3], base - 1, peer);
  nvshmem_int_p(&f->i[4], base - 1, peer);
  nvshmem_int_p(&f->i[5], base + 1, peer);
  nvshmem_longlong_p(&f->ll[0], (long long)base << 33, peer);
  nvshmem_longlong_p(&f->ll[2], ((long long)base << 33) + 1, peer);
  nvshmem_longlong_p(&f->ll[4], -((long long)base << 33) - 1, peer);
  nvshmem_uint64_p(&f->u[0], (uint64_t)base << 40, peer);
  nvshmem_uint64_p(&f->u[5], ((uint64_t)base << 40) + 7, peer);
  for (int k = 0; k < kVars; ++k) nvshmem_int_p(&f->arr[k], base + k, peer);
  nvshmem_quiet();
}

int main(int argc, char** argv) {
  const int mype = compat::init(&argc, &argv, "wait_until");
  const int npes = nvshmem_n_pes();
  const int right = (mype + 1) % npes;
  const uint64_t seed = compat::shared_seed();
  Flags* f = static_cast<Flags*>(nvshmem_calloc(1, sizeof(Flags)));
  int* out;
  COMPAT_CUDA(cudaMalloc(&out, 8 * sizeof(int)));
  cudaStream_t sw, ss;
  COMPAT_CUDA(cudaStreamCreateWithFlags(&sw, cudaStreamNonBlocking));
  COMPAT_CUDA(cudaStreamCreateWithFlags(&ss, cudaStreamNonBlocking));
  // Lazy module loading would let the first `setter` launch wait for the spinning `waiter`: load both first.
  cudaFuncAttributes attr;
  COMPAT_CUDA(cudaFuncGetAttributes(&attr, waiter));
  COMPAT_CUDA(cudaFuncGetAttributes(&attr, setter));
  for (int round = 0; round < 4; ++round) {
    const int base = 16 + static_cast<int>(compat::mix(seed, 7, round) % 100000);
    COMPAT_CUDA(cudaMemset(f, 0, sizeof(Flags)));
    COMPAT_CUDA(cudaMemset(out, 0xFF, 8 * sizeof(int)));
    COMPAT_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    waiter<<<1, 1, 0, sw>>>(f, base, out);
    setter<<<1, 1, 0, ss>>>(f, base, right);
    COMPAT_CUDA(cudaGetLastError());
    COMPAT_CUDA(cudaStreamSynchronize(ss));
    COMPAT_CUDA(cudaStreamSynchronize(sw));
    int h[8];
    COMPAT_CUDA(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    if (h[0] != base) compat::fail("round %d: wait_until EQ returned with value %d, expected %d", round, h[0], base);
    if (h[1] != 1 || h[2] != 0 || h[3] != 1)
      compat::fail("round %d: test gave %d %d %d, expected 1 0 1", round, h[1], h[2], h[3]);
    if (h[4] < 0 || h[4] >= kVars || h[4] % 2 != 1)
      compat::fail("round %d: wait_until_any returned %d, expected an odd index (even ones are excluded)", round,
                   h[4]);
    // odd k with base + k >= base + 4: k = 5, 7
    if (h[5] != 2 || h[6] != 1)
      compat::fail("round %d: wait_until_some found %d (indices ok=%d), expected 2 (indices 5 and 7)", round, h[5],
                   h[6]);
    nvshmem_barrier_all();
  }
  COMPAT_CUDA(cudaStreamDestroy(sw));
  COMPAT_CUDA(cudaStreamDestroy(ss));
  COMPAT_CUDA(cudaFree(out));
  nvshmem_free(f);
  return compat::finish();
}
