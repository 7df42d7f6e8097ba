// Host-side API only (runs on CPU PEs too, where gshmem has no GPU): a ring of nvshmem_int_put from symmetric
// memory, nvshmem_int_p / nvshmem_int_g / nvshmem_getmem, quiet and barrier_all, plus the library queries
// (versions, name, init status, team config), and DeepEP's team split (a config never initialised, mask 0;
// nvshmem_align(128, ...)) beside one with NVSHMEM_TEAM_CONFIG_INITIALIZER and a mask. Sources and readbacks stay in symmetric memory or go through p/g,
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
  // DeepEP's team split: a config never initialised, mask 0 (nothing in it is read); and with NVSHMEM's
  // initializer and a mask naming num_contexts. The PEs of my parity, a put to the next one in the team.
  // (NVSHMEM refuses team splits in its limited mode for PEs sharing a GPU; gshmem has no such mode.)
  const bool limited = nvshmemx_init_status() == NVSHMEM_STATUS_LIMITED_MPG;
  if (limited && mype == 0) std::printf("[PE 0] host_ring: team split skipped (NVSHMEM_STATUS_LIMITED_MPG)\n");
  for (int with_config = 0; with_config < 2 && !limited; ++with_config) {
    nvshmem_team_config_t tcfg;
    std::memset(&tcfg, 0xA5, sizeof tcfg);
    long mask = 0;
    if (with_config) {
      nvshmem_team_config_t init = NVSHMEM_TEAM_CONFIG_INITIALIZER;
      tcfg = init;
      tcfg.num_contexts = 1;
      mask = NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS;
    }
    const int start = mype % 2, size = npes > start ? (npes - start + 1) / 2 : 0;
    nvshmem_team_t team = NVSHMEM_TEAM_INVALID;
    int* box = static_cast<int*>(nvshmem_align(128, 2 * sizeof(int)));  // DeepEP allocates with nvshmem_align
    if (reinterpret_cast<uintptr_t>(box) % 128 != 0) compat::fail("nvshmem_align(128, ...) gave %p", (void*)box);
    // every PE takes part in both splits (even and odd): a split is collective over the parent team
    nvshmem_team_t teams[2] = {NVSHMEM_TEAM_INVALID, NVSHMEM_TEAM_INVALID};
    for (int parity = 0; parity < 2 && parity < npes; ++parity) {
      const int psize = (npes - parity + 1) / 2;
      if (nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, parity, 2, psize, &tcfg, mask, &teams[parity]) != 0)
        compat::fail("team_split_strided(WORLD, %d, 2, %d, config %s, mask %ld) failed", parity, psize,
                     with_config ? "initialised" : "never initialised", mask);
    }
    team = teams[start];  // every PE is in the team of its parity (size >= 1)
    const bool ok = nvshmem_team_my_pe(team) == mype / 2 && nvshmem_team_n_pes(team) == size;
    if (!ok)
      compat::fail("split team: my_pe %d n_pes %d, expected %d %d", nvshmem_team_my_pe(team),
                   nvshmem_team_n_pes(team), mype / 2, size);
    const int next = ok ? nvshmem_team_translate_pe(team, (mype / 2 + 1) % size, NVSHMEM_TEAM_WORLD) : mype;
    const int prev = ok ? nvshmem_team_translate_pe(team, (mype / 2 + size - 1) % size, NVSHMEM_TEAM_WORLD) : mype;
    if (ok && next != (mype / 2 + 1 < size ? mype + 2 : start))
      compat::fail("team_translate_pe: the next PE of my parity team is %d", next);
    nvshmem_int_p(&box[0], -1, mype);  // poison
    nvshmem_quiet();
    nvshmem_barrier_all();
    nvshmem_int_p(&box[0], static_cast<int>(compat::mix(seed, 1000 + with_config, mype)), next);
    nvshmem_quiet();
    nvshmem_barrier_all();
    const int want = static_cast<int>(compat::mix(seed, 1000 + with_config, prev));
    if (ok && nvshmem_int_g(&box[0], mype) != want) compat::fail("split team put from PE %d lost", prev);
    nvshmem_barrier_all();
    for (nvshmem_team_t t : teams)
      if (t != NVSHMEM_TEAM_INVALID) nvshmem_team_destroy(t);
    nvshmem_free(box);
  }
  return compat::finish();
}
