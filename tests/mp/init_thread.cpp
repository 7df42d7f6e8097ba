// mp_init_thread MODE: thread levels and NVSHMEM's hostlib init/finalize, one init per process (MODE):
//   multiple: gshmem_init_thread(MULTIPLE) provides SERIALIZED (and query_thread says so); single: SINGLE gives
//   SINGLE; plain: gshmem_init provides SERIALIZED; hostlib: gshmemx_hostlib_init_attr / gshmemx_hostlib_finalize
//   start and end the job like init_attr / finalize. Every mode first asks for a level that does not exist
//   (GSHMEM_ERROR_INVALID_VALUE naming the call, nothing started), and ends with a put ring. Exit 1 on a mismatch.
#include <cstdio>
#include <cstring>

#include "gshmem/gshmem.h"

namespace {
int failures = 0;
#define CHECK(cond, ...)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "init_thread: FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                \
      std::fprintf(stderr, "\n");                                                       \
      ++failures;                                                                       \
    }                                                                                   \
  } while (0)

// A ring of one int per PE, to show the job works in this cycle.
void ring(int cycle) {
  const int me = gshmem_my_pe(), n = gshmem_n_pes();
  int* v = static_cast<int*>(gshmem_malloc(sizeof(int)));
  gshmem_barrier_all();
  gshmem_int_p(v, cycle * 1000 + me, (me + 1) % n);
  gshmem_barrier_all();
  const int got = gshmem_int_g(v, me);
  CHECK(got == cycle * 1000 + (me + n - 1) % n, "cycle %d: ring value %d", cycle, got);
  gshmem_barrier_all();
  gshmem_free(v);
}
}  // namespace

int main(int argc, char** argv) {
  // One init per process (a launcher's rendezvous serves one job): the mode picks which.
  const char* mode = argc > 1 ? argv[1] : "multiple";
  int provided = -1, q = -1;
  // not a level: refused before anything starts
  int s = gshmem_init_thread(7, &provided);
  CHECK(s == GSHMEM_ERROR_INVALID_VALUE, "gshmem_init_thread(7) returned %d", s);
  CHECK(std::strstr(gshmemx_last_error(), "gshmem_init_thread") != nullptr, "message: %s", gshmemx_last_error());
  CHECK(gshmemx_init_status() == GSHMEM_STATUS_NOT_INITIALIZED, "init status %d after a refused init",
        gshmemx_init_status());

  if (std::strcmp(mode, "multiple") == 0 || std::strcmp(mode, "single") == 0) {
    const bool single = mode[0] == 's';
    s = gshmem_init_thread(single ? GSHMEM_THREAD_SINGLE : GSHMEM_THREAD_MULTIPLE, &provided);
    CHECK(s == GSHMEM_SUCCESS, "gshmem_init_thread returned %d: %s", s, gshmemx_last_error());
    if (s != GSHMEM_SUCCESS) return 1;
    const int want = single ? GSHMEM_THREAD_SINGLE : GSHMEM_THREAD_SERIALIZED;
    CHECK(provided == want, "provided %d, expected %d", provided, want);
    gshmem_query_thread(&q);
    CHECK(q == want, "query_thread gave %d, expected %d", q, want);
    ring(1);
    gshmem_finalize();
  } else if (std::strcmp(mode, "plain") == 0) {
    s = gshmem_init();
    CHECK(s == GSHMEM_SUCCESS, "gshmem_init: %d", s);
    if (s != GSHMEM_SUCCESS) return 1;
    gshmem_query_thread(&q);
    CHECK(q == GSHMEM_THREAD_SERIALIZED, "query_thread gave %d after plain init", q);
    ring(2);
    gshmem_finalize();
  } else if (std::strcmp(mode, "hostlib") == 0) {
    s = gshmemx_hostlib_init_attr(0, nullptr);
    CHECK(s == GSHMEM_SUCCESS, "gshmemx_hostlib_init_attr: %d: %s", s, gshmemx_last_error());
    if (s != GSHMEM_SUCCESS) return 1;
    CHECK(gshmemx_init_status() == GSHMEM_STATUS_IS_INITIALIZED, "init status %d", gshmemx_init_status());
    ring(3);
    gshmemx_hostlib_finalize();
    CHECK(gshmemx_init_status() == GSHMEM_STATUS_NOT_INITIALIZED, "init status %d after hostlib_finalize",
          gshmemx_init_status());
  } else {
    std::fprintf(stderr, "usage: %s multiple|single|plain|hostlib\n", argv[0]);
    return 2;
  }
  std::printf("init_thread %s: %s\n", mode, failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
