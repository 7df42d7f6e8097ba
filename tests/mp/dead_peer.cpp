// mp_dead_peer MODE [VICTIM] [SECONDS]: one PE (VICTIM, default 1) goes away while the others sit in
// gshmem_barrier_all(); the others must end non-zero by themselves, with a message, in bounded time.
//   exit  - the victim calls _exit(9)
//   exit0 - the victim calls exit(0) (atexit handlers and static destructors run) without gshmem_finalize
//   return - the victim returns 0 from main without gshmem_finalize while the others call gshmem_finalize
//   segv, abort - the victim raises SIGSEGV / calls abort() (core dumps off)
//   all_return - no victim: every PE returns 0 from main without gshmem_finalize, PE k after k*300 ms (PE 0,
//           which may host the rendezvous, first); the job must end cleanly, every PE with status 0
//   kill  - the victim raises SIGKILL
//   busy  - the victim raises SIGKILL while the others compute (sleep 60 s) outside any gshmem call: their
//           watchdog must end them (GSHMEM_PEER_FAILURE_EXIT, default 10 s) with status 3
//   hang  - the victim sleeps SECONDS (default 20) before the barrier; run with GSHMEM_WAIT_TIMEOUT=3 so the
//           others fail with a timeout (and the victim, on waking, finds them gone)
// A survivor whose barrier returns reports it and exits 0, which fails the test.
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gshmem/gshmem.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s exit|exit0|return|segv|abort|all_return|kill|busy|hang [VICTIM] [SECONDS]\n",
                 argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  int victim = argc > 2 ? std::atoi(argv[2]) : 1;
  const int hang_s = argc > 3 ? std::atoi(argv[3]) : 20;
  if (gshmem_init() != GSHMEM_SUCCESS) {
    std::fprintf(stderr, "dead_peer: gshmem_init failed: %s\n", gshmemx_last_error());
    return 1;
  }
  const int me = gshmem_my_pe(), n = gshmem_n_pes();
  if (n < 2) {
    std::fprintf(stderr, "dead_peer: needs at least 2 PEs\n");
    return 2;
  }
  if (victim < 0 || victim >= n) victim = n - 1;
  int* x = static_cast<int*>(gshmem_malloc(sizeof(int)));
  gshmem_barrier_all();
  std::fprintf(stderr, "dead_peer: PE %d (pid %d) ready, victim PE %d, mode %s\n", me, static_cast<int>(getpid()),
               victim, mode.c_str());
  std::fflush(stderr);
  if (mode == "all_return") {
    timespec ts{0, 300 * 1000 * 1000 * static_cast<long>(me % 3)};
    nanosleep(&ts, nullptr);
    std::fprintf(stderr, "dead_peer: PE %d returns from main without gshmem_finalize\n", me);
    return 0;
  }
  if (me == victim) {
    if (mode == "return") {
      std::fprintf(stderr, "dead_peer: PE %d returns from main without gshmem_finalize\n", me);
      return 0;
    }
    timespec ts{0, 300 * 1000 * 1000};  // let the others get into the barrier first
    nanosleep(&ts, nullptr);
    if (mode == "exit") _exit(9);
    if (mode == "exit0") std::exit(0);
    if (mode == "segv" || mode == "abort") {
      rlimit no_core{0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      if (mode == "segv") raise(SIGSEGV);
      std::abort();
    }
    if (mode == "kill" || mode == "busy") raise(SIGKILL);
    if (mode == "hang") {
      sleep(static_cast<unsigned>(hang_s));
      std::fprintf(stderr, "dead_peer: PE %d woke up after %d s and enters the barrier\n", me, hang_s);
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (mode == "busy") {
    sleep(60);  // "computing": no gshmem call could notice the dead peer
    std::fprintf(stderr, "dead_peer: PE %d: UNCAUGHT: computed 60 s although PE %d died\n", me, victim);
    return 0;
  }
  if (mode == "return") {
    gshmem_finalize();  // must fail: PE `victim` never comes
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "dead_peer: PE %d: UNCAUGHT: gshmem_finalize returned after %.1f s although PE %d left\n", me,
                 waited, victim);
    return 0;
  }
  gshmem_barrier_all();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "dead_peer: PE %d: UNCAUGHT: gshmem_barrier_all returned after %.1f s although PE %d %s\n", me,
               waited, victim, mode == "hang" ? "hung" : "died");
  gshmem_free(x);
  gshmem_finalize();
  return 0;
}
