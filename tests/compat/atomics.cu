// Device atomics: every PE's threads hit counters on every PE with fetch_add / add / fetch_inc / inc (int, long,
// unsigned long long), compare_swap and swap (exactly one winner), and and/or/xor with per-PE bits; host-side
// atomics are in host_atomics.cpp. Final values are checked exactly.
#include "compat_util.h"

#include <vector>

constexpr int kThreads = 256;

struct Counters {
  int add_i;
  long add_l;
  unsigned long long inc_u;
  int cswap_winner;
  unsigned int or_bits;
  unsigned int and_bits;
  unsigned long long xor_bits;
  int swap_slot;
};

__global__ void hammer(Counters* c, int mype, int npes, const long* vals, unsigned long long* bad_fetch,
                       int* swaps_seen) {
  const int t = threadIdx.x;
  for (int pe = 0; pe < npes; ++pe) {
    nvshmem_int_atomic_add(&c->add_i, t + 1, pe);
    const long old = nvshmem_long_atomic_fetch_add(&c->add_l, vals[t], pe);
    if (old < 0) atomicAdd(bad_fetch, 1ull);  // all addends are >= 0
    nvshmem_ulonglong_atomic_inc(&c->inc_u, pe);
    const unsigned long long before = nvshmem_ulonglong_atomic_fetch_inc(&c->inc_u, pe);
    if (before >= 2ull * npes * kThreads) atomicAdd(bad_fetch, 1ull);  // never more than the final total
    if (t == 0) {
      nvshmem_int_atomic_compare_swap(&c->cswap_winner, -1, mype, pe);
      nvshmem_uint_atomic_or(&c->or_bits, 1u << (mype % 32), pe);
      nvshmem_uint_atomic_and(&c->and_bits, ~(1u << (mype % 32)), pe);
      nvshmem_ulonglong_atomic_xor(&c->xor_bits, 1ull << (mype % 64), pe);
      const int prev = nvshmem_int_atomic_swap(&c->swap_slot, mype, pe);
      swaps_seen[pe] = prev;
    }
  }
}

int main(int argc, char** argv) {
  const int mype = compat::init(&argc, &argv, "atomics");
  const int npes = nvshmem_n_pes();
  const uint64_t seed = compat::shared_seed();
  Counters* c = static_cast<Counters*>(nvshmem_malloc(sizeof(Counters)));
  Counters init{};
  init.cswap_winner = -1;
  init.and_bits = 0xFFFFFFFFu;
  init.swap_slot = -1;
  COMPAT_CUDA(cudaMemcpy(c, &init, sizeof init, cudaMemcpyHostToDevice));
  long* vals;
  unsigned long long* fetched;
  int* swaps;
  COMPAT_CUDA(cudaMalloc(&vals, kThreads * sizeof(long)));
  COMPAT_CUDA(cudaMalloc(&fetched, sizeof *fetched));
  COMPAT_CUDA(cudaMalloc(&swaps, npes * sizeof(int)));
  COMPAT_CUDA(cudaMemset(fetched, 0, sizeof *fetched));
  // Every PE's values are computable by all: thread t of PE q adds mix(seed, q, t) % 1000003.
  long hv[kThreads];
  for (int t = 0; t < kThreads; ++t) hv[t] = static_cast<long>(compat::mix(seed, mype, t) % 1000003);
  COMPAT_CUDA(cudaMemcpy(vals, hv, sizeof hv, cudaMemcpyHostToDevice));
  COMPAT_CUDA(cudaDeviceSynchronize());
  nvshmem_barrier_all();

  hammer<<<1, kThreads>>>(c, mype, npes, vals, fetched, swaps);
  COMPAT_CUDA(cudaGetLastError());
  COMPAT_CUDA(cudaDeviceSynchronize());
  nvshmem_barrier_all();

  unsigned long long hbad = 0;
  COMPAT_CUDA(cudaMemcpy(&hbad, fetched, sizeof hbad, cudaMemcpyDeviceToHost));
  if (hbad) compat::fail("%llu fetched values were out of range", hbad);
  Counters r{};
  COMPAT_CUDA(cudaMemcpy(&r, c, sizeof r, cudaMemcpyDeviceToHost));
  const long want_i = static_cast<long>(npes) * kThreads * (kThreads + 1) / 2;
  long want_l = 0;
  unsigned int want_or = 0;
  unsigned long long want_xor = 0;
  for (int q = 0; q < npes; ++q) {
    for (int t = 0; t < kThreads; ++t) want_l += static_cast<long>(compat::mix(seed, q, t) % 1000003);
    want_or |= 1u << (q % 32);
    want_xor ^= 1ull << (q % 64);
  }
  if (r.add_i != static_cast<int>(want_i)) compat::fail("int atomic_add total %d, expected %ld", r.add_i, want_i);
  if (r.add_l != want_l) compat::fail("long atomic_fetch_add total %ld, expected %ld", r.add_l, want_l);
  if (r.inc_u != 2ull * npes * kThreads)
    compat::fail("ulonglong inc + fetch_inc total %llu, expected %llu", r.inc_u, 2ull * npes * kThreads);
  if (r.cswap_winner < 0 || r.cswap_winner >= npes)
    compat::fail("compare_swap left %d, expected the PE number of the one winner", r.cswap_winner);
  if (r.or_bits != want_or) compat::fail("uint atomic_or gives %#x, expected %#x", r.or_bits, want_or);
  if (r.and_bits != ~want_or) compat::fail("uint atomic_and gives %#x, expected %#x", r.and_bits, ~want_or);
  if (r.xor_bits != want_xor) compat::fail("ulonglong atomic_xor gives %#llx, expected %#llx", r.xor_bits, want_xor);
  if (r.swap_slot < 0 || r.swap_slot >= npes) compat::fail("swap left %d, expected a PE number", r.swap_slot);
  // The swap chain on each target: the values returned (one per PE) plus the final value are -1 and every PE
  // exactly once. Gather what this PE saw from every target to PE-local arrays on every PE.
  int* seen = static_cast<int*>(nvshmem_malloc(npes * npes * sizeof(int)));
  int hs[64];
  const int m = npes < 64 ? npes : 64;
  COMPAT_CUDA(cudaMemcpy(hs, swaps, m * sizeof(int), cudaMemcpyDeviceToHost));
  nvshmem_barrier_all();
  for (int pe = 0; pe < m; ++pe) nvshmem_int_p(&seen[mype * npes + pe], hs[pe], pe);  // what I got from pe's slot
  nvshmem_quiet();
  nvshmem_barrier_all();
  if (npes <= 64) {
    std::vector<int> count(npes + 1, 0);
    for (int q = 0; q < npes; ++q) {
      const int v = nvshmem_int_g(&seen[q * npes + mype], mype);
      if (v < -1 || v >= npes) compat::fail("swap on my slot returned %d to PE %d", v, q);
      else ++count[v + 1];
    }
    ++count[r.swap_slot + 1];
    for (int v = -1; v < npes; ++v)
      if (count[v + 1] != 1) compat::fail("swap chain on my slot holds %d %d time(s), expected once", v, count[v + 1]);
  }
  nvshmem_barrier_all();
  nvshmem_free(seen);
  COMPAT_CUDA(cudaFree(vals));
  COMPAT_CUDA(cudaFree(fetched));
  COMPAT_CUDA(cudaFree(swaps));
  nvshmem_free(c);
  return compat::finish();
}
