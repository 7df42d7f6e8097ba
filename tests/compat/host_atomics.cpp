// Host-initiated atomics on every PE's symmetric counters: fetch_add / add (int, long), fetch_inc / inc
// (unsigned long long), compare_swap (one winner), swap, fetch / set, and / or / xor. Runs on CPU PEs too.
#include "compat_util.h"

#include <vector>

struct Counters {
  int add_i;
  long add_l;
  unsigned long long inc_u;
  int cswap;
  unsigned int or_bits;
  unsigned int and_bits;
  unsigned long long xor_bits;
  long set_slot;
};

int main(int argc, char** argv) {
  compat::Options opt;
  opt.gpu = false;
  const int mype = compat::init(&argc, &argv, "host_atomics", opt);
  const int npes = nvshmem_n_pes();
  const uint64_t seed = compat::shared_seed();
  Counters* c = static_cast<Counters*>(nvshmem_calloc(1, sizeof(Counters)));
  nvshmem_int_atomic_set(&c->cswap, -1, mype);
  nvshmem_uint_atomic_set(&c->and_bits, 0xFFFFFFFFu, mype);
  nvshmem_long_atomic_set(&c->set_slot, -1, mype);
  nvshmem_quiet();
  nvshmem_barrier_all();
  const int reps = 50;
  for (int r = 0; r < reps; ++r) {
    for (int pe = 0; pe < npes; ++pe) {
      const long v = static_cast<long>(compat::mix(seed, mype, r) % 100003);
      nvshmem_int_atomic_add(&c->add_i, 1, pe);
      const long old = nvshmem_long_atomic_fetch_add(&c->add_l, v, pe);
      if (old < 0) compat::fail("fetch_add returned %ld < 0 (all addends are >= 0)", old);
      nvshmem_ulonglong_atomic_inc(&c->inc_u, pe);
      (void)nvshmem_ulonglong_atomic_fetch_inc(&c->inc_u, pe);
    }
  }
  for (int pe = 0; pe < npes; ++pe) {
    nvshmem_int_atomic_compare_swap(&c->cswap, -1, mype, pe);
    nvshmem_uint_atomic_or(&c->or_bits, 1u << (mype % 32), pe);
    nvshmem_uint_atomic_and(&c->and_bits, ~(1u << (mype % 32)), pe);
    nvshmem_ulonglong_atomic_fetch_xor(&c->xor_bits, 1ull << (mype % 64), pe);
  }
  nvshmem_quiet();
  nvshmem_barrier_all();
  long want_l = 0;
  unsigned int want_or = 0;
  unsigned long long want_xor = 0;
  for (int q = 0; q < npes; ++q) {
    for (int r = 0; r < reps; ++r) want_l += static_cast<long>(compat::mix(seed, q, r) % 100003);
    want_or |= 1u << (q % 32);
    want_xor ^= 1ull << (q % 64);
  }
  if (nvshmem_int_atomic_fetch(&c->add_i, mype) != npes * reps)
    compat::fail("int add total %d, expected %d", nvshmem_int_atomic_fetch(&c->add_i, mype), npes * reps);
  if (nvshmem_long_atomic_fetch(&c->add_l, mype) != want_l)
    compat::fail("long fetch_add total %ld, expected %ld", nvshmem_long_atomic_fetch(&c->add_l, mype), want_l);
  if (nvshmem_ulonglong_atomic_fetch(&c->inc_u, mype) != 2ull * npes * reps)
    compat::fail("inc total %llu, expected %llu", nvshmem_ulonglong_atomic_fetch(&c->inc_u, mype),
                 2ull * npes * reps);
  const int w = nvshmem_int_atomic_fetch(&c->cswap, mype);
  if (w < 0 || w >= npes) compat::fail("compare_swap left %d, expected one PE's number", w);
  if (nvshmem_uint_atomic_fetch(&c->or_bits, mype) != want_or) compat::fail("or gives the wrong bits");
  if (nvshmem_uint_atomic_fetch(&c->and_bits, mype) != ~want_or) compat::fail("and gives the wrong bits");
  if (nvshmem_ulonglong_atomic_fetch(&c->xor_bits, mype) != want_xor) compat::fail("xor gives the wrong bits");
  nvshmem_barrier_all();
  // swap chain on PE 0's slot: every PE swaps its number in once; the old values plus the final value are -1 and
  // every PE exactly once.
  long* olds = static_cast<long*>(nvshmem_malloc(npes * sizeof(long)));
  const long old = nvshmem_long_atomic_swap(&c->set_slot, mype, 0);
  nvshmem_long_p(&olds[mype], old, 0);
  nvshmem_quiet();
  nvshmem_barrier_all();
  if (mype == 0) {
    std::vector<int> count(npes + 1, 0);
    for (int q = 0; q < npes; ++q) {
      const long v = nvshmem_long_g(&olds[q], 0);
      if (v >= -1 && v < npes) ++count[v + 1];
    }
    const long fin = nvshmem_long_atomic_fetch(&c->set_slot, 0);
    if (fin >= 0 && fin < npes) ++count[fin + 1];
    for (int v = -1; v < npes; ++v)
      if (count[v + 1] != 1) compat::fail("swap chain holds %d %d time(s), expected once", v, count[v + 1]);
  }
  nvshmem_barrier_all();
  nvshmem_free(olds);
  nvshmem_free(c);
  return compat::finish();
}
