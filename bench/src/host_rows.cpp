// gshmem-bench: rows driven from the host (CPU PEs and GPU PEs alike), written against the NVSHMEM names
// (api.hpp maps them onto gshmem, NVIDIA NVSHMEM or Open MPI's OSHMEM). Timed with std::chrono::steady_clock on
// PE 0; every sample starts after nvshmem_barrier_all(); a row is the median of Options::repeats samples after
// Options::warmup untimed ones.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>

#include "api.hpp"
#include "coll.hpp"
#include "common.hpp"

namespace bench {
namespace {

// PE 0 talks to PE 1 (to itself when alone). Uni: PE 0 alone issues; bi: PEs 0 and 1 both do.
struct Pair {
  int me, npes, peer;
  bool sends(bool bi) const { return me == 0 || (bi && me == 1 && npes > 1); }
};
Pair pair() {
  Pair p{nvshmem_my_pe(), nvshmem_n_pes(), 0};
  p.peer = p.npes > 1 ? (p.me ^ 1) : p.me;
  if (p.peer >= p.npes) p.peer = p.me;
  return p;
}

// Median seconds of `body` over the samples (each after a barrier).
template <class F>
double time_samples(const Options& o, F&& body) {
  std::vector<double> t;
  for (int r = 0; r < o.warmup + o.repeats; ++r) {
    nvshmem_barrier_all();
    const auto t0 = Clock::now();
    body();
    const double s = seconds_since(t0);
    if (r >= o.warmup) t.push_back(s);
  }
  nvshmem_barrier_all();
  return median(t);
}

// Symmetric scratch that every PE allocates with the same size (collective).
struct Sym {
  void* p = nullptr;
  explicit Sym(std::uint64_t bytes) {
    p = nvshmem_malloc(bytes);
    if (!p) throw std::runtime_error(fmt::format("nvshmem_malloc({}) returned NULL: raise the symmetric heap size "
                                                 "(NVSHMEM_SYMMETRIC_SIZE / GSHMEM_SYMMETRIC_SIZE)", bytes));
  }
  // Unwinding after an error on this PE: no collective free (the other PEs are not in it, so it would hang until
  // the wait timeout and hide the error); main reports the error and ends the job.
  ~Sym() {
    if (std::uncaught_exceptions() == 0) nvshmem_free(p);
  }
  Sym(const Sym&) = delete;
  Sym& operator=(const Sym&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(p); }
};

void host_bw(const Options& o, Rows& out) {
  const Pair pr = pair();
  const bool gpu = bench_pe_is_gpu();
  std::uint64_t max_bytes = 0;
  for (auto b : o.sizes) max_bytes = std::max(max_bytes, b);
  Sym src(max_bytes), dst(max_bytes);
  device_fill(src.p, 0x5a, max_bytes, gpu);
  device_fill(dst.p, 0, max_bytes, gpu);
  for (const bool get : {false, true}) {
    for (const auto& dir : o.dirs) {
      const bool bi = dir == "bi";
      if (bi && pr.npes < 2) continue;
      for (const std::uint64_t bytes : o.sizes) {
        const std::uint64_t it = bw_iters(o, bytes);
        const double s = time_samples(o, [&] {
          if (!pr.sends(bi)) return;
          for (std::uint64_t i = 0; i < it; ++i) {
            if (get) nvshmem_getmem(dst.p, src.p, bytes, pr.peer);
            else nvshmem_putmem(dst.p, src.p, bytes, pr.peer);
          }
          nvshmem_quiet();
        });
        const double moved = double(bytes) * double(it) * (bi ? 2 : 1);
        out.push_back({fmt::format("host_{}_bw/{}", get ? "get" : "put", dir), bytes, "GB/s", gbps(moved, s),
                       o.repeats, it,
                       fmt::format("nvshmem_{}mem from the host x{} then quiet{}", get ? "get" : "put", it,
                                   bi ? "; PEs 0 and 1 at once, both directions counted" : "")});
      }
    }
  }
}

void host_lat(const Options& o, Rows& out) {
  const Pair pr = pair();
  const bool gpu = bench_pe_is_gpu();
  const std::uint64_t it = o.lat_iters;
  Sym ints(64 * sizeof(int)), ulls(64 * sizeof(unsigned long long));
  device_fill(ints.p, 0, 64 * sizeof(int), gpu);
  device_fill(ulls.p, 0, 64 * sizeof(unsigned long long), gpu);
  int* target = ints.as<int>();
  int* flag = ints.as<int>() + 16;

  double s = time_samples(o, [&] {
    if (pr.me != 0) return;
    for (std::uint64_t i = 0; i < it; ++i) nvshmem_int_p(target, int(i), pr.peer);
    nvshmem_quiet();
  });
  out.push_back({"host_p", sizeof(int), "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmem_int_p from the host x{} then one quiet; time per p", it)});

  long long sink = 0;
  s = time_samples(o, [&] {
    if (pr.me != 0) return;
    for (std::uint64_t i = 0; i < it; ++i) sink += nvshmem_int_g(target, pr.peer);
  });
  out.push_back({"host_g", sizeof(int), "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmem_int_g from the host x{}; time per g (a round trip)", it)});
  if (sink == -1) fmt::print("");  // keeps the loads

#if BENCH_HOST_SIGNAL
  {
    auto* words = reinterpret_cast<std::uint64_t*>(ulls.as<unsigned long long>());
    s = time_samples(o, [&] {
      if (pr.me != 0) return;
      for (std::uint64_t i = 0; i < it; ++i)
        nvshmem_putmem_signal(words + 8, words + 16, 8, words + 24, i + 1, NVSHMEM_SIGNAL_SET, pr.peer);
    });
    out.push_back({"host_put_signal", 8, "us", s / double(it) * 1e6, o.repeats, it,
                   fmt::format("nvshmem_putmem_signal of 8 bytes (symmetric source), SIGNAL_SET, from the host x{}; "
                               "time per call", it)});
  }
#endif

#if BENCH_HOST_WAIT
  // Host p ping-pong: PE 0 sets PE 1's flag, PE 1 answers; half a round trip per exchange. Flag values keep
  // rising across samples, so nothing is reset between them.
  if (!gpu) {
    static int seq = 0;
    s = time_samples(o, [&] {
      if (pr.me > 1 || (pr.npes > 1 && pr.peer == pr.me)) return;
      for (std::uint64_t i = 0; i < it; ++i) {
        const int v = ++seq;
        if (pr.me == 0) {
          nvshmem_int_p(flag, v, pr.peer);
          nvshmem_int_wait_until(flag, NVSHMEM_CMP_GE, v);
        } else {
          nvshmem_int_wait_until(flag, NVSHMEM_CMP_GE, v);
          nvshmem_int_p(flag, v, pr.peer);
        }
      }
    });
    out.push_back({"host_p_pingpong", sizeof(int), "us", s / double(2 * it) * 1e6, o.repeats, it,
                   fmt::format("int_p + int_wait_until from the host, {} round trips; half round trip", it)});
  }
#else
  (void)flag;
#endif

#if BENCH_HOST_AMO
  if (!gpu) {
    unsigned long long* a = ulls.as<unsigned long long>();
    unsigned long long acc = 0;
    s = time_samples(o, [&] {
      if (pr.me != 0) return;
      for (std::uint64_t i = 0; i < it; ++i) acc += nvshmem_ulonglong_atomic_fetch_add(a, 1, pr.peer);
    });
    out.push_back({"host_amo_fetch_add", 8, "us", s / double(it) * 1e6, o.repeats, it,
                   fmt::format("ulonglong_atomic_fetch_add from the host x{}; time per op", it)});
    s = time_samples(o, [&] {
      if (pr.me != 0) return;
      for (std::uint64_t i = 0; i < it; ++i) nvshmem_ulonglong_atomic_add(a + 1, 1, pr.peer);
      nvshmem_quiet();
    });
    out.push_back({"host_amo_add_rate", 8, "Mop/s", double(it) / s / 1e6, o.repeats, it,
                   fmt::format("ulonglong_atomic_add from one host thread x{} then quiet", it)});
    if (acc == ~0ull) fmt::print("");
  }
#endif
}

void host_barrier(const Options& o, Rows& out) {
  const std::uint64_t it = o.lat_iters;
  double s = time_samples(o, [&] {
    for (std::uint64_t i = 0; i < it; ++i) nvshmem_barrier_all();
  });
  out.push_back({"host_barrier_all", 0, "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmem_barrier_all from the host x{} on every PE; time per barrier", it)});
  s = time_samples(o, [&] {
    for (std::uint64_t i = 0; i < it; ++i) nvshmem_sync_all();
  });
  out.push_back({"host_sync_all", 0, "us", s / double(it) * 1e6, o.repeats, it,
                 fmt::format("nvshmem_sync_all from the host x{} on every PE; time per sync", it)});
}

void malloc_free(const Options& o, Rows& out) {
  for (const std::uint64_t bytes : o.malloc_sizes) {
    std::vector<double> tm, tf;
    for (int r = 0; r < o.warmup + o.repeats; ++r) {
      nvshmem_barrier_all();
      auto t0 = Clock::now();
      void* p = nvshmem_malloc(bytes);
      const double m = seconds_since(t0);
      if (!p) throw std::runtime_error(fmt::format("nvshmem_malloc({}) returned NULL", bytes));
      nvshmem_barrier_all();
      t0 = Clock::now();
      nvshmem_free(p);
      const double f = seconds_since(t0);
      if (r >= o.warmup) {
        tm.push_back(m);
        tf.push_back(f);
      }
    }
    nvshmem_barrier_all();
    out.push_back({"malloc", bytes, "us", median(tm) * 1e6, o.repeats, 1,
                   "nvshmem_malloc (collective) on PE 0, after a barrier"});
    out.push_back({"free", bytes, "us", median(tf) * 1e6, o.repeats, 1,
                   "nvshmem_free (collective) on PE 0, after a barrier"});
  }
}

#if BENCH_HOST_COLL
// One blocking collective from the host on the world team (coll.hpp says what count means per kind).
void host_coll_call(coll::Kind k, void* d, const void* s, std::uint64_t count) {
  using coll::Kind;
  int rc = 0;
  switch (k) {
    case Kind::ReduceFloat:
      rc = nvshmem_float_sum_reduce(NVSHMEM_TEAM_WORLD, static_cast<float*>(d), static_cast<const float*>(s), count);
      break;
    case Kind::ReduceInt:
      rc = nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, static_cast<int*>(d), static_cast<const int*>(s), count);
      break;
    case Kind::ReducescatterFloat:
#if BENCH_HOST_REDUCESCATTER
      rc = nvshmem_float_sum_reducescatter(NVSHMEM_TEAM_WORLD, static_cast<float*>(d), static_cast<const float*>(s),
                                           count);
#else
      rc = -1;  // not reached: host_coll_skip leaves the row out
#endif
      break;
    case Kind::Broadcast: rc = nvshmem_broadcastmem(NVSHMEM_TEAM_WORLD, d, s, count, coll::kRoot); break;
    case Kind::Fcollect: rc = nvshmem_fcollectmem(NVSHMEM_TEAM_WORLD, d, s, count); break;
    case Kind::Alltoall: rc = nvshmem_alltoallmem(NVSHMEM_TEAM_WORLD, d, s, count); break;
  }
  if (rc != 0) throw std::runtime_error(fmt::format("host {} returned {}", coll::row_name(k, "host"), rc));
}

// Why this build has no row for kind k at shape sh (empty: it has one). OSHMEM (OpenSHMEM 1.4) has no
// reduce-scatter, and its broadcast, fcollect and alltoall move 32- or 64-bit words only (oshmem_coll.hpp).
std::string host_coll_skip(coll::Kind k, const coll::Shape& sh) {
  if (k == coll::Kind::ReducescatterFloat && !BENCH_HOST_REDUCESCATTER)
    return fmt::format("no reducescatter in {} (OpenSHMEM 1.4 has none)", BENCH_LIBRARY);
  if (coll::elem_size(k) == 1 && sh.count % BENCH_HOST_COLL_MEM_GRAIN)
    return fmt::format("{} B per call is not a multiple of {} B, the word of {}'s routines", sh.count,
                       BENCH_HOST_COLL_MEM_GRAIN, BENCH_LIBRARY);
  return {};
}

// The call, and in the OSHMEM build what the adapter (oshmem_coll.hpp) runs for it.
#if defined(BENCH_BACKEND_OSHMEM)
#define BENCH_VIA(routine) " (adapter: OpenSHMEM 1.4 " routine " over all PEs, pSync sets alternated)"
#else
#define BENCH_VIA(routine) ""
#endif
const char* host_call_name(coll::Kind k) {
  switch (k) {
    case coll::Kind::ReduceFloat: return "nvshmem_float_sum_reduce" BENCH_VIA("shmem_float_sum_to_all");
    case coll::Kind::ReduceInt: return "nvshmem_int_sum_reduce" BENCH_VIA("shmem_int_sum_to_all");
    case coll::Kind::ReducescatterFloat: return "nvshmem_float_sum_reducescatter";
    case coll::Kind::Broadcast:
      return "nvshmem_broadcastmem (root 0)" BENCH_VIA("shmem_broadcast64/32, then the root copies locally");
    case coll::Kind::Fcollect: return "nvshmem_fcollectmem" BENCH_VIA("shmem_fcollect64/32");
    case coll::Kind::Alltoall: return "nvshmem_alltoallmem" BENCH_VIA("shmem_alltoall64/32");
  }
  return "?";
}
#undef BENCH_VIA
#endif

}  // namespace

// Every PE's verdict on one collective row, gathered on PE 0 (collective; CPU and GPU PEs): each PE puts 1 (wrong)
// or 0 into its slot of PE 0's `slots` (npes symmetric ints), a barrier completes the puts, PE 0 reads them. PE 0
// gets the row's status ("" if right everywhere); the others get "" and go on too, so no PE leaves its peers waiting
// in the next row's barriers.
std::string coll_verdict(int* slots, bool wrong, int me, int npes) {
  nvshmem_int_p(slots + me, wrong ? 1 : 0, 0);
  nvshmem_barrier_all();
  if (me != 0) return {};
  std::vector<int> w(static_cast<std::size_t>(npes));
  for (int p = 0; p < npes; ++p) w[static_cast<std::size_t>(p)] = nvshmem_int_g(slots + p, 0);
  return std::count(w.begin(), w.end(), 0) == npes ? std::string() : coll::failed_status(w.data(), npes);
}

// Host collectives on CPU PEs: per kind and size, fill the source with the PE's known values and the destination
// with other ones, time `it` calls per sample, then check every element of this PE's result. A wrong result on any
// PE marks the row failed on PE 0 (no figure: a broken collective must not post one; the PE that found it prints
// the first wrong element) and the run goes on, every PE in step. A row the build's library cannot run
// (host_coll_skip) is left out, with a line on stderr from PE 0.
void host_coll_suite(const Options& o, Rows& out) {
#if BENCH_HOST_COLL
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const std::uint64_t maxb = coll::max_buffer_bytes(o.coll_sizes, npes);
  Sym src(maxb), dst(maxb), verdicts(std::uint64_t(npes) * sizeof(int));
  if (!BENCH_HOST_COLL_PREPARE(maxb))
    throw std::runtime_error(fmt::format("{}: no symmetric memory for the collectives' work arrays", BENCH_LIBRARY));
  const std::uint64_t cap = std::min<std::uint64_t>(o.lat_iters, 200);
  for (const coll::Kind k : coll::kKinds) {
    if (!coll::wanted(o.coll_kinds, k)) continue;
    const std::string name = coll::row_name(k, "host");
    for (const std::uint64_t size : o.coll_sizes) {
      const coll::Shape sh = coll::shape(k, size, npes);
      if (!sh.ok()) continue;  // smaller than one element per block: the same on every PE
      if (const std::string why = host_coll_skip(k, sh); !why.empty()) {  // the same on every PE
        if (me == 0) fmt::print(stderr, "gshmem-bench: {} at {} B left out: {}\n", name, sh.bytes, why);
        continue;
      }
      if (o.progress && me == 0) fmt::print(stderr, "gshmem-bench: {} at {} B\n", name, sh.bytes);
      for (std::uint64_t i = 0; i < sh.src_elems; ++i) coll::store(k, src.p, i, coll::source_value(k, me, i));
      std::memset(dst.p, 0xee, sh.dst_elems * coll::elem_size(k));
      const std::uint64_t it = coll::iters(o.iters, o.bw_target_bytes, cap, sh.bytes);
      const double s = time_samples(o, [&] {
        for (std::uint64_t i = 0; i < it; ++i) host_coll_call(k, dst.p, src.p, sh.count);
      });
      if (coll::fault_here(o.coll_fault, name, sh.bytes, me, npes))
        coll::store(k, dst.p, 0, coll::spoiled_value(k, me, npes, sh.count, 0));
      std::uint64_t bad = 0, first = 0;
      for (std::uint64_t i = 0; i < sh.dst_elems; ++i)
        if (coll::load(k, dst.p, i) != coll::expected_value(k, me, npes, sh.count, i) && bad++ == 0) first = i;
      if (bad)
        fmt::print(stderr, "gshmem-bench: PE {}: {}\n", me,
                   coll::mismatch_text(name, sh.bytes, me, bad, first, coll::load(k, dst.p, first),
                                       coll::expected_value(k, me, npes, sh.count, first)));
      const std::string how = fmt::format("{} from the host on every PE (world team, count {}) x{}, result checked",
                                          host_call_name(k), sh.count, it);
      if (const std::string status = coll_verdict(verdicts.as<int>(), bad != 0, me, npes); !status.empty()) {
        fmt::print(stderr, "gshmem-bench: {} at {} B {}\n", name, sh.bytes, status);
        coll::add_status_row(out, name, sh, status, how);
        continue;
      }
      coll::add_rows(out, k, name, sh, npes, s, o.repeats, it, how);
    }
  }
  BENCH_HOST_COLL_RELEASE();
#else
  (void)o;
  (void)out;
  if (nvshmem_my_pe() == 0)
    fmt::print(stderr, "gshmem-bench: suite coll: no host collective rows in the {} build\n", BENCH_LIBRARY);
#endif
}

void host_suite(const std::string& suite, const Options& o, Rows& out) {
  if (suite == "host-bw") host_bw(o, out);
  else if (suite == "host-lat") host_lat(o, out);
  else if (suite == "host-barrier") host_barrier(o, out);
  else if (suite == "malloc") malloc_free(o, out);
  else throw std::invalid_argument("unknown host suite " + suite);
}

}  // namespace bench
