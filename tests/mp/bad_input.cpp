// mp_bad_input CASE: makes one bad call and expects the library to end the job with a message naming the call
// (checked by expect_fail.py from CTest: non-zero exit AND the message). If the library accepts the bad call,
// this program says so and exits 0, which fails the test.
//
// Unless a case says otherwise, only the last PE makes the bad call while the others wait in
// gshmem_barrier_all(): they must be ended too (the failing PE tells them), not hang.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gshmem/gshmem.h"

namespace {

int me = -1, npes = 0;

void say(const char* what) {
  std::fprintf(stderr, "bad_input: PE %d: %s\n", me, what);
  std::fflush(stderr);
}

// The bad call returned: the library did not catch it.
int accepted(const std::string& c) {
  std::fprintf(stderr, "bad_input: PE %d: UNCAUGHT: the bad call of case '%s' returned normally\n", me, c.c_str());
  return 0;
}

// An allocation that cannot be had returns NULL (OpenSHMEM, NVSHMEM) after gshmem reported why: the case ends here.
int null_result(const std::string& c) {
  std::fprintf(stderr, "bad_input: PE %d: case '%s': the allocation returned NULL (%s)\n", me, c.c_str(),
               gshmemx_last_error()[0] ? "gshmemx_last_error() is set" : "gshmemx_last_error() is EMPTY");
  return gshmemx_last_error()[0] ? 1 : 0;
}

bool init() {
  int s = gshmem_init();
  if (s != GSHMEM_SUCCESS) {
    std::fprintf(stderr, "bad_input: gshmem_init failed (%d): %s\n", s, gshmemx_last_error());
    return false;
  }
  me = gshmem_my_pe();
  npes = gshmem_n_pes();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CASE\n", argv[0]);
    return 2;
  }
  const std::string c = argv[1];
  int stack_int[4] = {1, 2, 3, 4};
  long stack_long = 0;

  // ---- cases that need no initialised job ----
  if (c == "before_init") {
    say("calling gshmem_int_put before gshmem_init");
    gshmem_int_put(stack_int, stack_int + 1, 1, 0);
    return accepted(c);
  }
  if (c == "uid_garbage") {  // a unique id that no gshmemx_get_uniqueid made
    gshmemx_uniqueid_t uid = GSHMEMX_UNIQUEID_INITIALIZER;
    std::memset(uid.internal, 0x3c, sizeof uid.internal);
    gshmemx_init_attr_t attr = GSHMEMX_INIT_ATTR_INITIALIZER;
    gshmemx_set_attr_uniqueid_args(0, 1, &uid, &attr);
    int s = gshmemx_init_attr(GSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (s == GSHMEM_SUCCESS) return accepted(c);
    std::fprintf(stderr, "bad_input: gshmemx_init_attr returned %d (%s): %s\n", s, gshmemx_status_string(s),
                 gshmemx_last_error());
    return s == GSHMEM_ERROR_INVALID_VALUE ? 1 : 0;
  }
  if (c == "attr_bad_version") {
    gshmemx_uniqueid_t uid = GSHMEMX_UNIQUEID_INITIALIZER;
    gshmemx_init_attr_t attr = GSHMEMX_INIT_ATTR_INITIALIZER;
    gshmemx_set_attr_uniqueid_args(0, 1, &uid, &attr);
    // gshmemx_init_attr stamps this header's layout versions (as NVSHMEM's does), so only a program compiled
    // against other gshmem headers reaches the library with another one: call the library's entry as it would.
    attr.version = 99;
    int s = gshmemxi_init_attr(GSHMEMX_INIT_WITH_UNIQUEID, &attr, GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR,
                               GSHMEM_VERSION_PATCH);
    if (s == GSHMEM_SUCCESS) return accepted(c);
    std::fprintf(stderr, "bad_input: gshmemx_init_attr returned %d (%s): %s\n", s, gshmemx_status_string(s),
                 gshmemx_last_error());
    return s == GSHMEM_ERROR_INVALID_VALUE ? 1 : 0;
  }

  if (!init()) return 1;
  const int last = npes - 1;
  int* buf = static_cast<int*>(gshmem_malloc(64 * sizeof(int)));
  long* lbuf = static_cast<long*>(gshmem_malloc(8 * sizeof(long)));
  std::uint64_t* sig = static_cast<std::uint64_t*>(gshmem_malloc(sizeof(std::uint64_t)));
  gshmem_barrier_all();

  // ---- cases every PE takes part in ----
  if (c == "malloc_mismatch") {  // a different size on each PE: every PE must report the mismatch
    say("calling gshmem_malloc with a different size on each PE");
    void* p = gshmem_malloc(1024 * static_cast<std::size_t>(me + 1));
    (void)p;
    return accepted(c);
  }
  if (c == "malloc_too_large") {  // every PE asks for 1 TiB: more than the heap may ever grow to
    say("calling gshmem_malloc(1 TiB) on an empty heap");
    if (gshmem_malloc(std::size_t{1} << 40) != nullptr) return accepted(c);  // out of memory: NULL, reported
    const int r = null_result(c);
    // The heap stays usable, and the next call that succeeds clears gshmemx_last_error() (as status calls do).
    void* small = gshmem_malloc(64);
    if (small == nullptr || gshmemx_last_error()[0]) {
      std::fprintf(stderr, "bad_input: PE %d: after it, gshmem_malloc(64) returned %p and gshmemx_last_error() is "
                   "\"%s\" (want an address and \"\")\n", me, small, gshmemx_last_error());
      return 0;
    }
    gshmem_free(small);
    return r;
  }
  if (c == "heap_full") {  // with GSHMEM_MAX_HEAP_SIZE=60M (45 MiB the library's): 1 MiB objects until it is full
    say("calling gshmem_malloc(1 MiB) until the heap is full");
    for (int i = 0; i < 64; ++i)
      if (gshmem_malloc(std::size_t{1} << 20) == nullptr) return null_result(c);
    return accepted(c);
  }
  if (c == "free_non_heap") {  // every PE frees a stack address
    say("calling gshmem_free(stack address)");
    gshmem_free(stack_int);
    return accepted(c);
  }
  if (c == "free_mismatch") {  // PE 0 frees one object, the others another (allowed), then an allocation (not)
    say("calling gshmem_free with a different object on PE 0, then gshmem_malloc");
    gshmem_free(me == 0 ? static_cast<void*>(buf) : static_cast<void*>(lbuf));
    if (gshmem_malloc(64) == nullptr) return null_result(c);
    return accepted(c);
  }
  if (c == "after_finalize") {
    gshmem_finalize();
    say("calling gshmem_barrier_all after gshmem_finalize");
    gshmem_barrier_all();
    return accepted(c);
  }
  if (c == "team_invalid_status") {  // status-returning team call: the status and gshmemx_last_error()
    say("calling gshmem_barrier(4242)");
    int s = gshmem_barrier(4242);
    if (s == GSHMEM_SUCCESS) return accepted(c);
    std::fprintf(stderr, "bad_input: PE %d: gshmem_barrier returned %d (%s): %s\n", me, s, gshmemx_status_string(s),
                 gshmemx_last_error());
    return s == GSHMEM_ERROR_INVALID_VALUE ? 1 : 0;
  }

  // ---- cases where the last PE alone goes wrong ----
  if (me != last) {
    gshmem_barrier_all();  // must not return: the last PE fails instead of arriving
    std::fprintf(stderr, "bad_input: PE %d: gshmem_barrier_all returned although PE %d made a bad call\n", me, last);
    gshmem_finalize();
    return 0;
  }
  say(("making the bad call of case " + c).c_str());
  if (c == "pe_out_of_range") gshmem_int_put(buf, stack_int, 1, npes);
  else if (c == "pe_negative") gshmem_getmem(stack_int, buf, sizeof(int), -1);
  else if (c == "nonsymmetric_dest") gshmem_int_put(stack_int, stack_int + 1, 1, 0);
  else if (c == "nonsymmetric_source") gshmem_long_get(&stack_long, &stack_long, 1, 0);
  else if (c == "null_source") gshmem_putmem(buf, nullptr, 8, 0);
  else if (c == "stream_on_cpu") gshmemx_putmem_on_stream(buf, stack_int, sizeof(int), 0, nullptr);
  else if (c == "stream_barrier_on_cpu") gshmemx_barrier_all_on_stream(nullptr);
  else if (c == "team_invalid") gshmem_team_destroy(4242);
  else if (c == "team_predefined_destroy") gshmem_team_destroy(GSHMEM_TEAM_WORLD);
  else if (c == "team_gpu_leaders_destroy") gshmem_team_destroy(GSHMEMX_TEAM_GPU_LEADERS);
  else if (c == "team_get_config_invalid") {
    gshmem_team_config_t cfg{};
    gshmem_team_get_config(4242, &cfg);
  }
  else if (c == "amo_misaligned") gshmem_int_atomic_add(reinterpret_cast<int*>(reinterpret_cast<char*>(buf) + 1), 1, 0);
  else if (c == "amo_nonsymmetric") (void)gshmem_long_atomic_fetch_add(&stack_long, 1, 0);
  else if (c == "bad_sig_op") gshmemx_signal_op(sig, 1, 99, 0);
  else if (c == "bad_cmp") gshmem_int_wait_until(buf, 42, 0);
  else if (c == "bad_stride") gshmem_int_iput(buf, stack_int, 0, 1, 4, 0);
  else if (c == "stream_wait_on_cpu") gshmemx_int_wait_until_on_stream(buf, GSHMEM_CMP_EQ, 1, nullptr);
  else if (c == "stream_g_on_cpu") (void)gshmemx_long_g_on_stream(&stack_long, 0, nullptr);
  else if (c == "stream_iput_on_cpu") gshmemx_iput32_on_stream(buf, stack_int, 1, 1, 2, 0, nullptr);
  else if (c == "realloc_non_heap") (void)gshmem_realloc(stack_int, 64);
  else if (c == "realloc_inside") (void)gshmem_realloc(reinterpret_cast<char*>(buf) + 8, 64);
  else if (c == "put_signal_sized_bad_op") gshmem_put64_signal(buf, stack_int, 1, sig, 1, 77, 0);
  else if (c == "sig_misaligned")  // inside the heap (lbuf holds 8 longs) but not on an 8-byte boundary
    gshmemx_signal_op(reinterpret_cast<std::uint64_t*>(reinterpret_cast<char*>(lbuf) + 4), 1, GSHMEM_SIGNAL_SET, 0);
  else if (c == "put_signal_sig_misaligned")
    gshmem_putmem_signal(buf, stack_int, sizeof(int),
                         reinterpret_cast<std::uint64_t*>(reinterpret_cast<char*>(lbuf) + 4), 1, GSHMEM_SIGNAL_SET, 0);
  else {
    std::fprintf(stderr, "bad_input: unknown case '%s'\n", c.c_str());
    return 2;
  }
  accepted(c);
  gshmem_barrier_all();
  gshmem_finalize();
  return 0;
}
