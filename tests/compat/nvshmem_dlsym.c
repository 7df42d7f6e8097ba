/* nvshmem_dlsym: a program that finds NVSHMEM at run time, the way the host sides of NVIDIA Warp, Mojo's bindings,
 * nvshmem4py's generated bindings and CUDA-hook libraries do: no NVSHMEM header and no link to it, but
 * dlopen("libnvshmem_host.so.3") and dlsym of each function, with the program's own declarations of NVSHMEM's
 * types (the layouts of NVSHMEM 3.x's headers, written out here).
 *
 * Covered: open by soname, then again with RTLD_NOLOAD (Warp: "is NVSHMEM loaded?") and RTLD_GLOBAL followed by
 * dlsym(RTLD_DEFAULT, ...) (hook libraries); the version queries; init status before, after init (NVIDIA's says
 * IS_BOOTSTRAPPED there, gshmem IS_INITIALIZED) and after the first allocation; start through
 * nvshmemx_hostlib_init_attr (flags 0: the launcher's bootstrap; DLSYM_INIT=uid: a unique ID broadcast over MPI,
 * nvshmem4py's way); my_pe / n_pes / team queries; malloc, ptr, int64_p + quiet + barrier_all (PE 0's seed to
 * all), putmem to the right and getmem from the left on fresh random data with poisoned targets; int sum reduce;
 * symmetric memory (GPU memory on GPU PEs) only through the library: putmem / getmem to and from the PE itself;
 * half p, bfloat16 g (2-byte values passed as a struct, as CUDA's types are), half / bfloat16 sum reduce, half
 * fcollect and bfloat16 broadcast; a strided team
 * split, used and destroyed; a team of PEs 1..n-1 made by its members alone (nvshmemx_team_get_uniqueid on PE 0,
 * handed out through the heap, nvshmemx_team_init), used and destroyed; nvshmem_debug_log's lines by level
 * (NVSHMEM_DEBUG); free and hostlib_finalize. Exact comparison; exit 1 with a message on any mismatch.
 *
 * DLSYM_CUDA=1: device 0's primary context made current first (the driver API, found at run time).
 * Run with the library's folder on the library path: LD_LIBRARY_PATH=<build>/lib/nvshmem_abi (gshmem's), or
 * NVIDIA's lib folder (the same program against NVIDIA NVSHMEM). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#if DLSYM_WITH_MPI
#include <mpi.h>
#endif

/* NVSHMEM 3.x's layouts, as binding generators write them */
typedef struct {
  int32_t version;
  char internal[124];
} uid_t_;
typedef struct {
  int32_t version;
  uid_t_ *id;
  int32_t myrank;
  int32_t nranks;
} uid_args_t;
typedef struct {
  int32_t version;
  uid_args_t uid_args;
  char content[96];
} init_args_t;
typedef struct {
  int32_t version;
  void *mpi_comm;
  init_args_t args;
} init_attr_t;
typedef struct {
  uint16_t bits;
} f16_t; /* CUDA's __half and __nv_bfloat16: a struct of one unsigned short */
typedef struct {
  int32_t version;
  int32_t num_contexts;
  uint64_t uniqueid;
  char padding[48];
} team_config_t; /* nvshmem_team_config_t, version 2 (NVSHMEM 3.4) */
enum { INIT_WITH_UNIQUEID = 1 << 3, TEAM_WORLD = 0, TEAM_INVALID = -1 };
enum { TEAM_CONFIG_MASK_UNIQUEID = 2 };
enum { STATUS_NOT_INITIALIZED = 0, STATUS_IS_BOOTSTRAPPED = 1, STATUS_IS_INITIALIZED = 2 };

static const char *kLib = "libnvshmem_host.so.3";
static void *lib;
static int me = -1;
static uint64_t seed_used; /* the run's data seed, printed with any failure (0 until known) */

static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[PE %d] nvshmem_dlsym (seed %llu): FAIL: ", me, (unsigned long long)seed_used);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}
static void *need(const char *name) {
  dlerror();
  void *p = dlsym(lib, name);
  if (p == NULL) fail("dlsym(%s, \"%s\") found nothing: %s", kLib, name, dlerror());
  return p;
}
#define SYM(ret, name, args) ret(*name) args = (ret(*) args)need(#name)

/* splitmix64: the value of element i of PE pe's data for this run's seed */
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
static uint64_t value(uint64_t seed, int pe, size_t i) { return mix(seed ^ mix(((uint64_t)pe << 32) + i)); }
/* binary16 and bfloat16 bits of a small non-negative integer k (exact: k < 256) */
static uint16_t half_of(unsigned k) {
  if (k == 0) return 0;
  int e = 0;
  while ((k >> (e + 1)) != 0) ++e;
  return (uint16_t)(((unsigned)(e + 15) << 10) | ((k << (10 - e)) & 0x3ffu));
}
static uint16_t bf16_of(unsigned k) {
  float f = (float)k;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (uint16_t)(u >> 16);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  const char *mode = getenv("DLSYM_INIT") ? getenv("DLSYM_INIT") : "attr";
  if (getenv("DLSYM_CUDA")) { /* a CUDA context current first, as the frameworks that host such code have: NVIDIA's
                                 library needs one (gshmem picks its GPU itself); the driver API, found at run time */
    void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (cu == NULL) fail("DLSYM_CUDA: dlopen(\"libcuda.so.1\"): %s", dlerror());
    int (*cu_init)(unsigned) = (int (*)(unsigned))dlsym(cu, "cuInit");
    int (*cu_device_get)(int *, int) = (int (*)(int *, int))dlsym(cu, "cuDeviceGet");
    int (*cu_retain)(void **, int) = (int (*)(void **, int))dlsym(cu, "cuDevicePrimaryCtxRetain");
    int (*cu_set)(void *) = (int (*)(void *))dlsym(cu, "cuCtxSetCurrent");
    int dev = -1;
    void *ctx = NULL;
    if (!cu_init || !cu_device_get || !cu_retain || !cu_set || cu_init(0) != 0 || cu_device_get(&dev, 0) != 0 ||
        cu_retain(&ctx, dev) != 0 || cu_set(ctx) != 0)
      fail("DLSYM_CUDA: could not make device 0's primary context current");
  }
  lib = dlopen(kLib, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    fail("dlopen(\"%s\"): %s. Fix: put the folder that holds it on LD_LIBRARY_PATH (gshmem's: <build>/lib/nvshmem_abi)",
         kLib, dlerror());
  void *again = dlopen(kLib, RTLD_NOW | RTLD_NOLOAD);
  if (again != lib) fail("dlopen(\"%s\", RTLD_NOLOAD) gave %p, not the loaded library %p", kLib, again, lib);
  dlclose(again);

  SYM(int, nvshmemx_init_status, (void));
  SYM(void, nvshmem_info_get_version, (int *, int *));
  SYM(void, nvshmemx_vendor_get_version_info, (int *, int *, int *));
  SYM(int, nvshmemx_hostlib_init_attr, (unsigned, init_attr_t *));
  SYM(void, nvshmemx_hostlib_finalize, (void));
  SYM(int, nvshmem_my_pe, (void));
  SYM(int, nvshmem_n_pes, (void));
  SYM(int, nvshmem_team_my_pe, (int));
  SYM(int, nvshmem_team_n_pes, (int));
  SYM(void *, nvshmem_malloc, (size_t));
  SYM(void, nvshmem_free, (void *));
  SYM(void *, nvshmem_ptr, (const void *, int));
  SYM(void, nvshmem_int64_p, (int64_t *, int64_t, int));
  SYM(int64_t, nvshmem_int64_g, (const int64_t *, int));
  SYM(void, nvshmem_quiet, (void));
  SYM(void, nvshmem_barrier_all, (void));
  SYM(void, nvshmem_putmem, (void *, const void *, size_t, int));
  SYM(void, nvshmem_getmem, (void *, const void *, size_t, int));
  SYM(int, nvshmem_int_sum_reduce, (int, int *, const int *, size_t));
  SYM(int, nvshmem_half_sum_reduce, (int, f16_t *, const f16_t *, size_t));
  SYM(int, nvshmem_bfloat16_sum_reduce, (int, f16_t *, const f16_t *, size_t));
  SYM(void, nvshmem_half_p, (f16_t *, f16_t, int));
  SYM(f16_t, nvshmem_bfloat16_g, (const f16_t *, int));
  SYM(int, nvshmem_half_fcollect, (int, f16_t *, const f16_t *, size_t));
  SYM(int, nvshmem_bfloat16_broadcast, (int, f16_t *, const f16_t *, size_t, int));
  SYM(int, nvshmem_team_split_strided, (int, int, int, int, const void *, long, int *));
  SYM(void, nvshmem_team_destroy, (int));
  SYM(int, nvshmemx_team_get_uniqueid, (uint64_t *));
  SYM(int, nvshmemx_team_init, (int *, team_config_t *, long, int, int));
  SYM(void, nvshmem_debug_log, (int, unsigned long, const char *, int, const char *, ...));

  if (getenv("DLSYM_NV_DEVICE_LIB")) { /* gshmem's library only: NVIDIA's device library's entry points refuse */
    typedef struct {
      int major, minor, patch;
    } nv_version_t;
    SYM(int, nvshmemid_init_status, (void));
    SYM(int, nvshmemid_hostlib_init_attr, (int, int *, unsigned, init_attr_t *, nv_version_t, void *));
    if (nvshmemid_init_status() != STATUS_NOT_INITIALIZED) fail("nvshmemid_init_status gave %d", nvshmemid_init_status());
    int provided = -1;
    const nv_version_t v = {3, 4, 5};
    const int refused = nvshmemid_hostlib_init_attr(0, &provided, 0, NULL, v, NULL);
    if (refused == 0) fail("nvshmemid_hostlib_init_attr returned 0 on gshmem's library");
    printf("nvshmem_dlsym: NVIDIA's device library's init refused with %d\n", refused);
    return 0;
  }
  int major = -1, minor = -1, patch = -1;
  nvshmemx_vendor_get_version_info(&major, &minor, &patch);
  if (major != 3 || minor < 0 || patch < 0) fail("nvshmemx_vendor_get_version_info gave %d.%d.%d", major, minor, patch);
  nvshmem_info_get_version(&major, &minor);
  if (major != 1 || minor < 0) fail("nvshmem_info_get_version gave %d.%d (OpenSHMEM 1.x expected)", major, minor);
  if (nvshmemx_init_status() != STATUS_NOT_INITIALIZED)
    fail("nvshmemx_init_status before init gave %d", nvshmemx_init_status());

  /* never initialised, versions included, as nvshmem4py hands it over (measured: its ranks' versions differed) */
  init_attr_t attr;
  memset(&attr, 0x5a, sizeof attr);
  unsigned flags = 0;
  if (strcmp(mode, "uid") == 0) {
#if DLSYM_WITH_MPI
    SYM(int, nvshmemx_get_uniqueid, (uid_t_ *));
    SYM(int, nvshmemx_set_attr_uniqueid_args, (int, int, const uid_t_ *, init_attr_t *));
    MPI_Init(NULL, NULL);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static uid_t_ uid;
    memset(&uid, 0, sizeof uid);
    uid.version = (1 << 16) + (int32_t)sizeof(uid_t_);
    if (rank == 0 && nvshmemx_get_uniqueid(&uid) != 0) fail("nvshmemx_get_uniqueid failed");
    MPI_Bcast(&uid, (int)sizeof uid, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (nvshmemx_set_attr_uniqueid_args(rank, size, &uid, &attr) != 0) fail("nvshmemx_set_attr_uniqueid_args failed");
    flags = INIT_WITH_UNIQUEID;
#else
    fail("DLSYM_INIT=uid needs the MPI build of this program");
#endif
  } else if (strcmp(mode, "attr") != 0) {
    fail("DLSYM_INIT=%s: expected attr or uid", mode);
  }
  int rc = nvshmemx_hostlib_init_attr(flags, &attr);
  if (rc != 0) fail("nvshmemx_hostlib_init_attr(%u) returned %d", flags, rc);
  /* NVIDIA's library says IS_BOOTSTRAPPED (1) here (measured, 3.4.5: its device side starts at the first use);
   * gshmem, which has no device library to start, says IS_INITIALIZED (2). Both are "started"; after the first
   * allocation both must say at least IS_INITIALIZED (below). */
  const int started = nvshmemx_init_status();
  if (started != STATUS_IS_BOOTSTRAPPED && started != STATUS_IS_INITIALIZED)
    fail("nvshmemx_init_status after init gave %d, not %d or %d", started, STATUS_IS_BOOTSTRAPPED,
         STATUS_IS_INITIALIZED);
  me = nvshmem_my_pe();
  const int n = nvshmem_n_pes();
  if (n < 1 || me < 0 || me >= n) fail("my_pe %d of n_pes %d", me, n);
  if (n > 64) fail("n_pes %d: this program's buffers hold at most 64 PEs", n);
  if (nvshmem_team_my_pe(TEAM_WORLD) != me || nvshmem_team_n_pes(TEAM_WORLD) != n)
    fail("team_my_pe / team_n_pes of TEAM_WORLD gave %d / %d, not %d / %d", nvshmem_team_my_pe(TEAM_WORLD),
         nvshmem_team_n_pes(TEAM_WORLD), me, n);

  /* NVSHMEM's logger, which its plugins import: a WARN line (printed where NVSHMEM_DEBUG is WARN, INFO or TRACE)
   * and a TRACE line (printed only at TRACE), stderr caught in a file */
  {
    char path[] = "/tmp/nvshmem_dlsym_log_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) fail("mkstemp for nvshmem_debug_log's output failed");
    unlink(path);
    fflush(stderr);
    const int saved = dup(2);
    dup2(fd, 2);
    nvshmem_debug_log(2 /* WARN */, ~0ul, "nvshmem_dlsym.c", 1, "dlsym warn %d of PE %d", 4242, me);
    nvshmem_debug_log(5 /* TRACE */, ~0ul, "nvshmem_dlsym.c", 2, "dlsym trace %d", 4343);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[4096];
    memset(text, 0, sizeof text);
    if (lseek(fd, 0, SEEK_SET) != 0 || read(fd, text, sizeof text - 1) < 0) fail("reading the log back failed");
    close(fd);
    const char *level = getenv("NVSHMEM_DEBUG");
    /* NVSHMEM's levels in order: VERSION, WARN, INFO, ABORT, TRACE */
    const int warn = level && (!strcasecmp(level, "WARN") || !strcasecmp(level, "INFO") ||
                               !strcasecmp(level, "ABORT") || !strcasecmp(level, "TRACE"));
    const int trace = level && !strcasecmp(level, "TRACE");
    char want[64];
    snprintf(want, sizeof want, "dlsym warn 4242 of PE %d", me);
    if ((strstr(text, want) != NULL) != warn || (strstr(text, "dlsym trace 4343") != NULL) != trace)
      fail("nvshmem_debug_log at NVSHMEM_DEBUG=%s printed \"%s\"", level ? level : "(unset)", text);
  }

  /* the hook libraries' lookup: the library made global, then found by name in the default scope */
  void *global = dlopen(kLib, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  if (global != lib) fail("dlopen(RTLD_NOLOAD | RTLD_GLOBAL) gave %p, not %p", global, lib);
  void *hook = dlsym(RTLD_DEFAULT, "nvshmemx_cumodule_init");
  if (hook == NULL || hook != need("nvshmemx_cumodule_init"))
    fail("dlsym(RTLD_DEFAULT, \"nvshmemx_cumodule_init\") gave %p, the library's is %p", hook,
         need("nvshmemx_cumodule_init"));
  dlclose(global);

  /* Symmetric memory is GPU memory on GPU PEs: this program (no CUDA) touches it only through the library, host
   * buffers in and out (putmem / getmem to and from itself included). */
  enum { N = 1000 };
  int64_t *seedbuf = (int64_t *)nvshmem_malloc(sizeof(int64_t));
  int *src = (int *)nvshmem_malloc(N * sizeof(int));
  int *dst = (int *)nvshmem_malloc(N * sizeof(int));
  f16_t *h = (f16_t *)nvshmem_malloc(2 * N * sizeof(f16_t));
  f16_t *hr = (f16_t *)nvshmem_malloc(2 * N * sizeof(f16_t));
  if (!seedbuf || !src || !dst || !h || !hr) fail("nvshmem_malloc gave NULL");
  if (nvshmemx_init_status() < STATUS_IS_INITIALIZED)
    fail("nvshmemx_init_status after nvshmem_malloc gave %d, not at least %d", nvshmemx_init_status(),
         STATUS_IS_INITIALIZED);
  if (nvshmem_ptr(src, me) != src) fail("nvshmem_ptr(p, my_pe) gave %p, not %p", nvshmem_ptr(src, me), (void *)src);
  /* PE 0's seed to every PE by int64_p + quiet + barrier_all over a poisoned word, read with int64_g from itself
   * and from PE 0 */
  const int64_t seed_poison = (int64_t)0x5eed5eed5eed5eedull;
  nvshmem_putmem(seedbuf, &seed_poison, sizeof seed_poison, me);
  nvshmem_barrier_all();
  if (me == 0) {
    int64_t seed = (int64_t)(mix((uint64_t)time(NULL)) ^ mix((uint64_t)getpid()));
    if (seed == seed_poison) seed = ~seed;
    for (int pe = 0; pe < n; ++pe) nvshmem_int64_p(seedbuf, seed, pe);
    nvshmem_quiet();
  }
  nvshmem_barrier_all();
  const uint64_t seed = (uint64_t)nvshmem_int64_g(seedbuf, me);
  seed_used = seed;
  if ((int64_t)seed == seed_poison) fail("int64_p: PE 0's seed never arrived (the word still holds its poison)");
  if (nvshmem_int64_g(seedbuf, 0) != (int64_t)seed)
    fail("int64_g from PE 0 gave %lld, this PE's copy %lld", (long long)nvshmem_int64_g(seedbuf, 0), (long long)seed);
  const int right = (me + 1) % n, left = (me + n - 1) % n;

  /* src = this PE's values, dst poisoned (each through putmem to itself); putmem of a host buffer to the right's
   * dst; getmem of the left's src into a host buffer */
  static int mine[N], poison[N], got[N];
  for (size_t i = 0; i < N; ++i) {
    mine[i] = (int)value(seed, me, i);
    poison[i] = (int)0xdeadbeef;
  }
  nvshmem_putmem(src, mine, sizeof mine, me);
  nvshmem_putmem(dst, poison, sizeof poison, me);
  nvshmem_barrier_all();
  nvshmem_putmem(dst, mine, sizeof mine, right);
  nvshmem_barrier_all();
  nvshmem_getmem(got, dst, sizeof got, me);
  for (size_t i = 0; i < N; ++i)
    if (got[i] != (int)value(seed, left, i))
      fail("putmem: element %zu from PE %d is %d, not %d", i, left, got[i], (int)value(seed, left, i));
  memset(got, 0xa5, sizeof got);
  nvshmem_getmem(got, src, sizeof got, left);
  for (size_t i = 0; i < N; ++i)
    if (got[i] != (int)value(seed, left, i)) fail("getmem: element %zu of PE %d is %d", i, left, got[i]);
  nvshmem_barrier_all();

  /* int sum reduce on TEAM_WORLD */
  nvshmem_putmem(dst, poison, sizeof poison, me);
  if ((rc = nvshmem_int_sum_reduce(TEAM_WORLD, dst, src, N)) != 0) fail("nvshmem_int_sum_reduce returned %d", rc);
  nvshmem_getmem(got, dst, sizeof got, me);
  for (size_t i = 0; i < N; ++i) {
    uint32_t want = 0;
    for (int pe = 0; pe < n; ++pe) want += (uint32_t)(int)value(seed, pe, i);
    if ((uint32_t)got[i] != want) fail("int_sum_reduce: element %zu is %d, not %d", i, got[i], (int)want);
  }

  /* half and bfloat16: small integers (exact), summed; then half_p to the right and bfloat16_g from the left */
  static f16_t hv[2 * N], hnan[2 * N], hgot[2 * N];
  for (size_t i = 0; i < N; ++i) {
    const unsigned k = (unsigned)(value(seed, me, i) % 8);
    hv[i].bits = half_of(k);
    hv[N + i].bits = bf16_of(k);
    hnan[i].bits = hnan[N + i].bits = 0x7e00; /* NaN */
  }
  nvshmem_putmem(h, hv, sizeof hv, me);
  nvshmem_putmem(hr, hnan, sizeof hnan, me);
  if ((rc = nvshmem_half_sum_reduce(TEAM_WORLD, hr, h, N)) != 0) fail("nvshmem_half_sum_reduce returned %d", rc);
  if ((rc = nvshmem_bfloat16_sum_reduce(TEAM_WORLD, hr + N, h + N, N)) != 0)
    fail("nvshmem_bfloat16_sum_reduce returned %d", rc);
  nvshmem_getmem(hgot, hr, sizeof hgot, me);
  for (size_t i = 0; i < N; ++i) {
    unsigned want = 0;
    for (int pe = 0; pe < n; ++pe) want += (unsigned)(value(seed, pe, i) % 8);
    if (hgot[i].bits != half_of(want))
      fail("half_sum_reduce: element %zu is 0x%04x, not 0x%04x", i, hgot[i].bits, half_of(want));
    if (hgot[N + i].bits != bf16_of(want))
      fail("bfloat16_sum_reduce: element %zu is 0x%04x, not 0x%04x", i, hgot[N + i].bits, bf16_of(want));
  }
  nvshmem_putmem(hr, hnan, sizeof hnan, me);
  nvshmem_barrier_all();
  for (size_t i = 0; i < 16; ++i) nvshmem_half_p(&hr[i], hv[i], right);
  nvshmem_barrier_all();
  nvshmem_getmem(hgot, hr, 16 * sizeof(f16_t), me);
  for (size_t i = 0; i < 16; ++i) {
    if (hgot[i].bits != half_of((unsigned)(value(seed, left, i) % 8)))
      fail("half_p: element %zu from PE %d is 0x%04x", i, left, hgot[i].bits);
    const f16_t g = nvshmem_bfloat16_g(&h[N + i], left);
    if (g.bits != bf16_of((unsigned)(value(seed, left, i) % 8)))
      fail("bfloat16_g: element %zu of PE %d is 0x%04x", i, left, g.bits);
  }
  nvshmem_barrier_all();

  /* 2-byte moves that go to int16's: half fcollect (every PE's first 16 values, in PE order) and bfloat16
   * broadcast from the last PE (its first N values), into poisoned destinations */
  f16_t *all = (f16_t *)nvshmem_malloc((size_t)n * 16 * sizeof(f16_t));
  if (!all) fail("nvshmem_malloc gave NULL");
  static f16_t allgot[64 * 16];
  for (size_t i = 0; i < (size_t)n * 16; ++i) allgot[i].bits = 0x7e00;
  nvshmem_putmem(all, allgot, (size_t)n * 16 * sizeof(f16_t), me);
  nvshmem_putmem(hr, hnan, sizeof hnan, me);
  if ((rc = nvshmem_half_fcollect(TEAM_WORLD, all, h, 16)) != 0) fail("nvshmem_half_fcollect returned %d", rc);
  if ((rc = nvshmem_bfloat16_broadcast(TEAM_WORLD, hr + N, h + N, N, n - 1)) != 0)
    fail("nvshmem_bfloat16_broadcast returned %d", rc);
  nvshmem_getmem(allgot, all, (size_t)n * 16 * sizeof(f16_t), me);
  nvshmem_getmem(hgot, hr, sizeof hgot, me);
  for (int pe = 0; pe < n; ++pe)
    for (size_t i = 0; i < 16; ++i)
      if (allgot[pe * 16 + i].bits != half_of((unsigned)(value(seed, pe, i) % 8)))
        fail("half_fcollect: element %zu of PE %d's block is 0x%04x", i, pe, allgot[pe * 16 + i].bits);
  for (size_t i = 0; i < N; ++i)
    if (hgot[N + i].bits != bf16_of((unsigned)(value(seed, n - 1, i) % 8)))
      fail("bfloat16_broadcast: element %zu is 0x%04x", i, hgot[N + i].bits);
  nvshmem_barrier_all();
  nvshmem_free(all);

  /* Two teams, each queried, used for a reduce and destroyed: the even PEs by a split (kind 0); world PEs 1..n-1
   * (PE 0 alone at 1 PE) made by the members alone from a unique ID that PE 0 gets and hands out through the heap
   * (kind 1, NVSHMEM 3.4's nvshmemx_team_init). Members: first, first + stride, ... (size of them). */
  uint64_t *idbuf = (uint64_t *)nvshmem_malloc(sizeof(uint64_t));
  if (idbuf == NULL) fail("nvshmem_malloc of the team's unique id failed");
  for (int kind = 0; kind < 2; ++kind) {
    const int first = kind == 0 || n == 1 ? 0 : 1, stride = kind == 0 ? 2 : 1, size = (n - first + stride - 1) / stride;
    const char *what = kind == 0 ? "the even PEs' split" : "team_init's team";
    const int mine = me >= first && (me - first) % stride == 0;
    int team = TEAM_INVALID;
    if (kind == 0) {
      if ((rc = nvshmem_team_split_strided(TEAM_WORLD, first, stride, size, NULL, 0, &team)) != 0)
        fail("nvshmem_team_split_strided returned %d", rc);
    } else {
      uint64_t tid = 0;
      if (me == 0) {
        if ((rc = nvshmemx_team_get_uniqueid(&tid)) != 0) fail("nvshmemx_team_get_uniqueid returned %d", rc);
        nvshmem_putmem(idbuf, &tid, sizeof tid, 0);
        nvshmem_quiet();
      }
      nvshmem_barrier_all();
      nvshmem_getmem(&tid, idbuf, sizeof tid, 0);
      if (mine) {
        team_config_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.version = (2 << 16) + (int)sizeof cfg;
        cfg.num_contexts = -1;
        cfg.uniqueid = tid;
        if ((rc = nvshmemx_team_init(&team, &cfg, TEAM_CONFIG_MASK_UNIQUEID, size, (me - first) / stride)) != 0)
          fail("nvshmemx_team_init (PEs %d..%d) returned %d", first, n - 1, rc);
      }
    }
    if (mine != (team != TEAM_INVALID)) fail("%s: team %d on PE %d", what, team, me);
    if (team != TEAM_INVALID) {
      if (nvshmem_team_my_pe(team) != (me - first) / stride || nvshmem_team_n_pes(team) != size)
        fail("%s: team_my_pe %d, team_n_pes %d", what, nvshmem_team_my_pe(team), nvshmem_team_n_pes(team));
      nvshmem_putmem(dst, poison, sizeof poison, me);
      if ((rc = nvshmem_int_sum_reduce(team, dst, src, N)) != 0) fail("int_sum_reduce on %s returned %d", what, rc);
      nvshmem_getmem(got, dst, sizeof got, me);
      for (size_t i = 0; i < N; ++i) {
        uint32_t want = 0;
        for (int pe = first; pe < n; pe += stride) want += (uint32_t)(int)value(seed, pe, i);
        if ((uint32_t)got[i] != want) fail("%s's sum: element %zu is %d, not %d", what, i, got[i], (int)want);
      }
      nvshmem_team_destroy(team);
    }
    nvshmem_barrier_all();
  }
  nvshmem_free(idbuf);
  nvshmem_free(hr);
  nvshmem_free(h);
  nvshmem_free(dst);
  nvshmem_free(src);
  nvshmem_free(seedbuf);
  printf("[PE %d] nvshmem_dlsym: PASS (%d PEs, init %s)\n", me, n, mode);
  fflush(stdout);
  nvshmemx_hostlib_finalize();
#if DLSYM_WITH_MPI
  if (strcmp(mode, "uid") == 0) MPI_Finalize();
#endif
  dlclose(lib);
  return 0;
}
