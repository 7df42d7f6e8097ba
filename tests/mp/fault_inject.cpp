// libmp_fault.so: an LD_PRELOAD library that breaks one gshmem call (chosen by MPT_FAULT) in the way a library
// bug would. The mp.selftest.* tests run mp_host_api with it and expect the matching case to FAIL, which shows
// that the checks can fail (no check that cannot). Each override forwards to the real call (RTLD_NEXT) and then
// misbehaves; it is only active when MPT_FAULT names it.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gshmem/gshmem.h"

namespace {

bool active(const char* name) {
  static const char* f = std::getenv("MPT_FAULT");
  return f && std::strcmp(f, name) == 0;
}

template <typename F>
F real(const char* sym) {
  void* p = dlsym(RTLD_NEXT, sym);
  if (!p) {
    std::fprintf(stderr, "libmp_fault: dlsym(%s) failed: %s\n", sym, dlerror());
    std::abort();
  }
  return reinterpret_cast<F>(p);
}
#define REAL(name) static auto real_##name = real<decltype(&name)>(#name)

}  // namespace

extern "C" {

// mp_host_ext's calls
void* gshmem_realloc(void* ptr, size_t size) {
  REAL(gshmem_realloc);
  void* q = real_gshmem_realloc(ptr, size);
  if (active("realloc_flips_byte") && q && ptr) static_cast<unsigned char*>(q)[0] ^= 0x01;  // CPU PEs only
  return q;
}

void gshmem_put32_signal(void* dest, const void* source, size_t nelems, uint64_t* sig, uint64_t signal, int op,
                         int pe) {
  REAL(gshmem_put32_signal);
  real_gshmem_put32_signal(dest, source, active("put32_signal_short") && nelems > 1 ? nelems - 1 : nelems, sig,
                           signal, op, pe);
}

int gshmemx_buffer_register(void* addr, size_t length) {
  REAL(gshmemx_buffer_register);
  const int s = real_gshmemx_buffer_register(addr, length);
  return active("register_accepts_all") ? GSHMEM_SUCCESS : s;
}

void gshmem_int_put(int* dest, const int* source, size_t nelems, int pe) {
  REAL(gshmem_int_put);
  real_gshmem_int_put(dest, source, active("put_short") && nelems > 1 ? nelems - 1 : nelems, pe);
}

void gshmem_long_iput(long* dest, const long* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {
  REAL(gshmem_long_iput);
  real_gshmem_long_iput(dest, source, active("iput_stride") ? 1 : dst, sst, nelems, pe);
}

float gshmem_float_g(const float* source, int pe) {
  REAL(gshmem_float_g);
  float v = real_gshmem_float_g(source, pe);
  return active("g_wrong") ? v + 1.0f : v;
}

void gshmem_getmem(void* dest, const void* source, size_t bytes, int pe) {
  REAL(gshmem_getmem);
  real_gshmem_getmem(dest, source, bytes, pe);
  if (active("getmem_last_byte") && bytes == 4093) static_cast<unsigned char*>(dest)[bytes - 1] ^= 0x10;
}

uint64_t gshmem_uint64_atomic_fetch_add(uint64_t* dest, uint64_t value, int pe) {
  REAL(gshmem_uint64_atomic_fetch_add);
  uint64_t r = real_gshmem_uint64_atomic_fetch_add(dest, value, pe);
  return active("fetch_add_off") ? r + 1 : r;
}

int gshmem_int_atomic_compare_swap(int* dest, int cond, int value, int pe) {
  REAL(gshmem_int_atomic_compare_swap);
  int r = real_gshmem_int_atomic_compare_swap(dest, cond, value, pe);
  return active("cswap_always_wins") ? cond : r;
}

double gshmem_double_atomic_swap(double* dest, double value, int pe) {
  REAL(gshmem_double_atomic_swap);
  double r = real_gshmem_double_atomic_swap(dest, value, pe);
  return active("swap_returns_new") ? value : r;
}

void gshmem_uint_atomic_xor(unsigned int* dest, unsigned int value, int pe) {
  REAL(gshmem_uint_atomic_xor);
  REAL(gshmem_uint_atomic_or);
  if (active("xor_as_or")) real_gshmem_uint_atomic_or(dest, value, pe);
  else real_gshmem_uint_atomic_xor(dest, value, pe);
}

int gshmem_short_test(short* ivar, int cmp, short cmp_value) {
  REAL(gshmem_short_test);
  int r = real_gshmem_short_test(ivar, cmp, cmp_value);
  return active("test_lt_inverted") && cmp == GSHMEM_CMP_LT ? !r : r;
}

void gshmemx_signal_op(uint64_t* sig_addr, uint64_t signal, int sig_op, int pe) {
  REAL(gshmemx_signal_op);
  real_gshmemx_signal_op(sig_addr, signal, active("signal_add_as_set") ? GSHMEM_SIGNAL_SET : sig_op, pe);
}

void gshmem_barrier_all(void) {
  REAL(gshmem_barrier_all);
  static long calls = 0;
  // Every PE skips the same calls, so the PEs stay in step; data written right before them is not waited for.
  if (active("barrier_skip") && ++calls % 4 == 0) return;
  real_gshmem_barrier_all();
}

void* gshmem_calloc(size_t count, size_t size) {
  REAL(gshmem_calloc);
  REAL(gshmem_putmem);
  void* p = real_gshmem_calloc(count, size);
  if (active("calloc_dirty") && p && count * size > 7) {
    unsigned char one = 1;
    real_gshmem_putmem(static_cast<unsigned char*>(p) + 7, &one, 1, gshmem_my_pe());
  }
  return p;
}

void* gshmem_ptr(const void* dest, int pe) {
  REAL(gshmem_ptr);
  void* p = real_gshmem_ptr(dest, pe);
  return active("ptr_never_null") && !p ? const_cast<void*>(dest) : p;
}

int gshmem_team_my_pe(gshmem_team_t team) {
  REAL(gshmem_team_my_pe);
  int r = real_gshmem_team_my_pe(team);
  return active("team_my_pe_off") && team >= GSHMEM_TEAMS_MIN && r >= 0 ? r + 1 : r;
}

int gshmem_team_translate_pe(gshmem_team_t src_team, int src_pe, gshmem_team_t dest_team) {
  REAL(gshmem_team_translate_pe);
  int r = real_gshmem_team_translate_pe(src_team, src_pe, dest_team);
  return active("translate_reversed") && src_team >= GSHMEM_TEAMS_MIN && r > 0 ? r - 1 : r;
}

int gshmem_barrier(gshmem_team_t team) {
  REAL(gshmem_barrier);
  int r = real_gshmem_barrier(team);
  return active("barrier_status_ok") ? GSHMEM_SUCCESS : r;
}

int gshmemx_barrier_on_stream(gshmem_team_t team, gshmem_stream_t stream) {
  REAL(gshmemx_barrier_on_stream);
  int r = real_gshmemx_barrier_on_stream(team, stream);
  return active("stream_status_ok") ? GSHMEM_SUCCESS : r;
}

const char* gshmemx_last_error(void) {
  REAL(gshmemx_last_error);
  return active("last_error_blank") ? "" : real_gshmemx_last_error();
}

}  // extern "C"
