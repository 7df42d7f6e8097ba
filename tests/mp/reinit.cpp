// mp_reinit [MODE [VICTIM]]: several gshmem_init .. gshmem_finalize cycles in one process (as pytest fixtures or
// nvshmem4py programs that initialise again do). Every cycle: the same PE number and count, a fresh random seed
// from PE 0 (put to every PE), each PE's 1000 values put to the next PE, barrier, exact compare with what the
// previous PE must have sent, free, finalize. MODE:
//   cycles [N]     - N cycles (default 3); exits 0 when every check passed
//   exit_early     - after cycle 1 the victim (default the last PE) exits 0 at once; the others call gshmem_init
//                    again 500 ms later (its exit comes before their join): their init must fail naming it
//   exit_late      - the same, but the victim exits 1 s after its finalize (after the others joined again)
//   kill           - the victim raises SIGKILL right after its first finalize; the others re-init 500 ms later
//   segv2, exit0_2 - cycle 2 starts on every PE; then the victim raises SIGSEGV / calls exit(0) without
//                    gshmem_finalize while the others wait in gshmem_barrier_all: failures of a later cycle are
//                    reported as in the first
// A PE whose failing init or barrier returns success reports it (UNCAUGHT) and exits 0, which fails the test.
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gshmem/gshmem.h"
#include "harness.hpp"  // mpt::mix only: this program runs its own init..finalize cycles, not mpt's cases

namespace {

constexpr int kValues = 1000;

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000 * 1000};
  nanosleep(&ts, nullptr);
}

// The value PE `pe` sends as element i in the cycle with this seed.
std::uint64_t value(std::uint64_t seed, int pe, int i) {
  return mpt::mix(seed ^ mpt::mix(static_cast<std::uint64_t>(pe) << 32 | static_cast<std::uint32_t>(i)));
}

// One cycle's checks (gshmem is initialised). Returns the number of failed checks.
int check_cycle(int cycle, int want_me, int want_n) {
  const int me = gshmem_my_pe(), n = gshmem_n_pes();
  int failures = 0;
  if ((want_me >= 0 && me != want_me) || (want_n > 0 && n != want_n)) {
    std::fprintf(stderr, "reinit: cycle %d: FAIL: PE %d of %d, the first cycle was PE %d of %d\n", cycle, me, n,
                 want_me, want_n);
    ++failures;
  }
  auto* seed = static_cast<std::uint64_t*>(gshmem_malloc(sizeof(std::uint64_t)));
  auto* in = static_cast<std::uint64_t*>(gshmem_malloc(kValues * sizeof(std::uint64_t)));
  if (!seed || !in) {
    std::fprintf(stderr, "reinit: PE %d cycle %d: FAIL: gshmem_malloc returned NULL: %s\n", me, cycle,
                 gshmemx_last_error());
    return failures + 1;
  }
  if (me == 0) {
    std::random_device rd;
    std::uint64_t s = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    for (int pe = 0; pe < n; ++pe) gshmem_uint64_p(seed, s, pe);
  }
  gshmem_barrier_all();
  std::uint64_t s = 0;
  gshmem_getmem(&s, seed, sizeof s, me);
  // poison what we will receive with the complement of what must arrive
  const int prev = (me + n - 1) % n, next = (me + 1) % n;
  std::vector<std::uint64_t> want(kValues), mine(kValues), got(kValues);
  for (int i = 0; i < kValues; ++i) {
    want[i] = value(s, prev, i);
    mine[i] = value(s, me, i);
    got[i] = ~want[i];
  }
  gshmem_putmem(in, got.data(), kValues * sizeof(std::uint64_t), me);
  gshmem_barrier_all();
  gshmem_putmem(in, mine.data(), kValues * sizeof(std::uint64_t), next);
  gshmem_barrier_all();
  gshmem_getmem(got.data(), in, kValues * sizeof(std::uint64_t), me);
  int wrong = 0, first = -1;
  for (int i = 0; i < kValues; ++i)
    if (got[i] != want[i] && wrong++ == 0) first = i;
  if (wrong) {
    std::fprintf(stderr,
                 "reinit: PE %d cycle %d: FAIL: %d of %d values from PE %d differ (seed 0x%016" PRIx64
                 "); first at %d: got 0x%016" PRIx64 ", want 0x%016" PRIx64 "\n",
                 me, cycle, wrong, kValues, prev, s, first, got[first], want[first]);
    ++failures;
  }
  gshmem_barrier_all();
  gshmem_free(in);
  gshmem_free(seed);
  std::printf("reinit: PE %d of %d: cycle %d: %d values from PE %d %s (seed 0x%016" PRIx64 ")\n", me, n, cycle, kValues,
              prev, wrong ? "WRONG" : "ok", s);
  std::fflush(stdout);
  return failures;
}

int init_or_report(int cycle) {
  if (gshmem_init() == GSHMEM_SUCCESS) return 0;
  std::fprintf(stderr, "reinit: gshmem_init (cycle %d) failed: %s\n", cycle, gshmemx_last_error());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "cycles";
  const bool fail_mode = mode != "cycles";
  if (fail_mode && mode != "exit_early" && mode != "exit_late" && mode != "kill" && mode != "segv2" &&
      mode != "exit0_2") {
    std::fprintf(stderr, "usage: %s [cycles [N] | exit_early|exit_late|kill|segv2|exit0_2 [VICTIM]]\n", argv[0]);
    return 2;
  }
  const int cycles = !fail_mode && argc > 2 ? std::atoi(argv[2]) : 3;
  int victim = fail_mode && argc > 2 ? std::atoi(argv[2]) : -1;
  int me = -1, n = 0, failures = 0;
  for (int cycle = 1; cycle <= (fail_mode ? 2 : cycles); ++cycle) {
    if (init_or_report(cycle)) return 1;
    if (cycle == 1) {
      me = gshmem_my_pe();
      n = gshmem_n_pes();
      if (fail_mode && (n < 2)) {
        std::fprintf(stderr, "reinit: %s needs at least 2 PEs\n", mode.c_str());
        return 2;
      }
      if (victim < 0 || victim >= n) victim = n - 1;
    }
    failures += check_cycle(cycle, me, n);
    if (cycle == 2 && (mode == "segv2" || mode == "exit0_2")) {
      if (me == victim) {
        sleep_ms(300);  // let the others get into the barrier first
        std::fprintf(stderr, "reinit: PE %d leaves in cycle 2 (%s)\n", me, mode.c_str());
        std::fflush(stderr);
        if (mode == "exit0_2") std::exit(0);
        rlimit no_core{0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        raise(SIGSEGV);
      }
      const auto t0 = std::chrono::steady_clock::now();
      gshmem_barrier_all();
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "reinit: PE %d: UNCAUGHT: gshmem_barrier_all returned after %.1f s although PE %d left\n",
                   me, waited, victim);
      return 0;
    }
    gshmem_finalize();
    if (cycle == 1 && fail_mode && mode != "segv2" && mode != "exit0_2") {
      if (me == victim) {
        std::fprintf(stderr, "reinit: PE %d ends after its first gshmem_finalize (%s)\n", me, mode.c_str());
        std::fflush(stderr);
        if (mode == "exit_late") sleep_ms(1000);
        if (mode == "kill") raise(SIGKILL);
        return 0;
      }
      if (mode != "exit_late") sleep_ms(500);
      const auto t0 = std::chrono::steady_clock::now();
      if (gshmem_init() != GSHMEM_SUCCESS) {
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "reinit: PE %d: gshmem_init (cycle 2) failed after %.1f s: %s\n", me, waited,
                     gshmemx_last_error());
        return 1;
      }
      std::fprintf(stderr, "reinit: PE %d: UNCAUGHT: gshmem_init succeeded although PE %d ended\n", me, victim);
      return 0;
    }
  }
  if (failures) std::fprintf(stderr, "reinit: PE %d: %d checks FAILED\n", me, failures);
  return failures ? 1 : 0;
}
