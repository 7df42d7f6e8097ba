// Whether the library is there, asked the way programs in the wild ask it, then used (runs on CPU PEs too).
//
// How programs ask (read for this test, none of their code copied):
//   pytorch/pytorch torch/csrc/distributed/c10d/symm_mem/nvshmem_extension.cu: inside its own namespace it
//   redeclares `extern "C" void nvshmem_init() __attribute__((weak));` after including <nvshmem.h> and
//   <nvshmemx.h>, and takes the library as linked when that function's address is not null (else it dlopens
//   libnvshmem_host.so.3). With gshmem the address must be gshmem's nvshmem_init, not null and not a second
//   function: this program redeclares it the same way (and at file scope, which NVSHMEM 3.4.5's static inline
//   nvshmem_init does not allow, so only gshmem's build has that one), checks both addresses are the one the header
//   names, starts the PE through the redeclared name, and runs a ring of nvshmem_int_p and a sum reduce on it. Built
//   against NVIDIA NVSHMEM (scripts/nvshmem-compat.sh) there is no redeclaration at all, only the header's
//   nvshmem_init, the ring and the reduce: NVSHMEM 3.4.5's nvshmem_init is a static inline, and with the weak
//   redeclaration beside it the call went to another definition whose start failed ("nvshmemi_check_state_and_init:
//   nvshmem initialization failed", 2 x H100, 2026-11-26; bench/NOTES.md entry 39).
#include "compat_coll.h"

#if defined(GSHMEM_NVSHMEM_COMPAT)
namespace probe {
extern "C" void nvshmem_init() __attribute__((weak));
bool linked() { return nvshmem_init != nullptr; }
void (*address())() { return &nvshmem_init; }
}  // namespace probe

extern "C" void nvshmem_init() __attribute__((weak));
#endif

int main(int argc, char** argv) {
  compat::prog_name() = "host_probe_init";
#if defined(GSHMEM_NVSHMEM_COMPAT)
  if (!probe::linked()) {
    std::fprintf(stderr, "host_probe_init: FAIL the weak nvshmem_init redeclared in a namespace is null: the library "
                         "does not export it\n");
    return 1;
  }
  void (*from_header)() = &nvshmem_init;
  if (probe::address() != from_header) {
    std::fprintf(stderr, "host_probe_init: FAIL the redeclared nvshmem_init (%p) is not the header's (%p)\n",
                 reinterpret_cast<void*>(probe::address()), reinterpret_cast<void*>(from_header));
    return 1;
  }
#else
  // NVIDIA NVSHMEM 3.4.5's nvshmem_init is a static inline: no redeclaration, no address checks (see the top).
  std::printf("host_probe_init: note: the weak redeclaration and its address checks are gshmem's only (NVSHMEM's "
              "nvshmem_init is a static inline)\n");
#endif
  (void)argc;
  (void)argv;
#if defined(GSHMEM_NVSHMEM_COMPAT)
  probe::nvshmem_init();  // the call goes through the redeclared name, as a program that found it would make it
#else
  nvshmem_init();
#endif
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  compat::my_pe_cache() = me;
  const uint64_t seed = compat::shared_seed();
  auto value = [&](int pe) { return static_cast<int>(compat::mix(seed, 1, static_cast<uint64_t>(pe)) % 1000000); };
  int* ring = static_cast<int*>(nvshmem_malloc(sizeof(int)));
  int* sum = static_cast<int*>(nvshmem_malloc(sizeof(int)));
  if (!ring || !sum) compat::fail("nvshmem_malloc returned NULL");
  const int mine = value(me);
  nvshmem_barrier_all();
  nvshmem_int_p(ring, mine, (me + 1) % npes);
  nvshmem_barrier_all();
  const int got = nvshmem_int_g(ring, me);
  const int want = value((me + npes - 1) % npes);
  if (got != want) compat::fail("ring: PE %d holds %d, expected %d", me, got, want);
  nvshmem_int_p(sum, -1, me);
  nvshmem_barrier_all();
  if (nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, sum, ring, 1) != 0) compat::fail("nvshmem_int_sum_reduce failed");
  const int total = nvshmem_int_g(sum, me);
  int expect = 0;
  for (int pe = 0; pe < npes; ++pe) expect += value(pe);
  if (total != expect) compat::fail("sum reduce gives %d, expected %d", total, expect);
  nvshmem_barrier_all();
  nvshmem_free(sum);
  nvshmem_free(ring);
  nvshmem_finalize();
  if (compat::failures()) return 1;
  std::printf("host_probe_init: PASS (PE %d of %d)\n", me, npes);
  return 0;
}
