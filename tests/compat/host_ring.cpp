// Host-side API only (runs on CPU PEs too, where gshmem has no GPU): a ring of nvshmem_int_put from symmetric
// memory, nvshmem_int_p / nvshmem_int_g / nvshmem_getmem, quiet and barrier_all, plus the library queries
// (versions, name, init status, team config). Sources and readbacks stay in symmetric memory or go through p/g,
// which NVSHMEM allows from the host for any symmetric address.
#include "compat_util.h"

int main(int argc, char** argv) {
  compat::Options opt;
  opt.gpu = false;
  const int mype = compat::init(&argc, &argv, "host_ring", opt);
  const int npes = nvshmem_n_pes();
  const int right = (mype + 1) % npes, left = (mype + npes - 1) % npes;
  const uint64_t seed = compat::shared_seed();

  // queries
  int major = -1, minor = -1;
  nvshmem_info_get_version(&major, &minor);
  if (major != NVSHMEM_MAJOR_VERSION || minor != NVSHMEM_MINOR_VERSION)
    compat::fail("nvshmem_info_get_version gives %d.%d, NVSHMEM_MAJOR/MINOR_VERSION are %d.%d", major, minor,
                 NVSHMEM_MAJOR_VERSION, NVSHMEM_MINOR_VERSION);
  char name[NVSHMEM_MAX_NAME_LEN];
  std::memset(name, 0, sizeof name);
  nvshmem_info_get_name(name);
  if (std::strcmp(name, NVSHMEM_VENDOR_STRING) != 0)
    compat::fail("nvshmem_info_get_name gives \"%s\", NVSHMEM_VENDOR_STRING is \"%s\"", name, NVSHMEM_VENDOR_STRING);
  if (mype == 0)
    std::printf("[PE 0] %s (OpenSHMEM %d.%d, NVSHMEM API %d.%d.%d)\n", name, major, minor,
                NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION, NVSHMEM_VENDOR_PATCH_VERSION);
  nvshmem_team_config_t cfg;
  std::memset(&cfg, 0x7F, sizeof cfg);
  nvshmem_team_get_config(NVSHMEM_TEAM_WORLD, &cfg);  // void in NVSHMEM 3.4.5, as in gshmem
  if (nvshmem_team_my_pe(NVSHMEM_TEAM_WORLD) != mype) compat::fail("team_my_pe(WORLD) != my_pe");

  for (int n : {1, 17, 4096}) {
    int* src = static_cast<int*>(nvshmem_malloc(n * sizeof(int)));
    int* dst = static_cast<int*>(nvshmem_malloc((n + 8) * sizeof(int)));
    for (int i = 0; i < n; ++i) nvshmem_int_p(&src[i], static_cast<int>(compat::mix(seed, mype * 10 + n, i)), mype);
    for (int i = 0; i < n + 8; ++i) nvshmem_int_p(&dst[i], -0x5A5A5A5B, mype);  // poison + guard
    nvshmem_quiet();
    nvshmem_barrier_all();
    nvshmem_int_put(dst, src, n, right);
    nvshmem_quiet();
    nvshmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < n + 8; ++i) {
      const int want = i < n ? static_cast<int>(compat::mix(seed, left * 10 + n, i)) : -0x5A5A5A5B;
      const int got = nvshmem_int_g(&dst[i], mype);
      if (got != want && bad++ < 5) compat::fail("n=%d dst[%d] = %d, expected %d", n, i, got, want);
    }
    // the right neighbour's copy of what I sent, fetched with a get into symmetric memory
    int* back = static_cast<int*>(nvshmem_malloc(n * sizeof(int)));
    nvshmem_barrier_all();
    nvshmem_int_get(back, dst, n, right);
    for (int i = 0; i < n; ++i) {
      const int got = nvshmem_int_g(&back[i], mype);
      if (got != static_cast<int>(compat::mix(seed, mype * 10 + n, i)) && bad++ < 5)
        compat::fail("n=%d get from PE %d: [%d] = %d", n, right, i, got);
    }
    nvshmem_barrier_all();
    nvshmem_free(back);
    nvshmem_free(dst);
    nvshmem_free(src);
  }
  return compat::finish();
}
