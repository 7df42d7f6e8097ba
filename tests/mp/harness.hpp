// mpt: the small check harness every multi-PE test program in tests/mp uses.
//
// Every PE runs the same cases in the same order (the calls under test are collective). A failing check prints
// what differed, prefixed with the PE, and the case goes on (data checks never change the sequence of collective
// calls); at the end the PE exits 1 if any of its checks failed. Data comes from a seed PE 0 draws from
// std::random_device (or MPT_SEED=...), shared with every PE, printed at start, so a run can be repeated.
//
//   MPT_CASE(my_case) { ... MPT_CHECK(x == y) << "context"; ... }
//   int main(int argc, char** argv) { return mpt::main(argc, argv); }
//
// Options every program takes: --only=a,b (run these cases, and the setup cases, named "(...)"), --expect-npes=N (fail unless gshmem_n_pes()==N),
// --list, --init=default|mpi_comm|uid (the last two only in programs built with MPT_WITH_MPI).
#pragma once
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "gshmem/gshmem.h"

#ifdef MPT_WITH_MPI
#include <mpi.h>
#endif

namespace mpt {

// ---------------------------------------------------------------------------------------------------------------
// state
struct State {
  int me = -1, n = 0;
  bool gpu = false;      // this PE is a GPU PE (heap in device memory: touch it only through the API)
  std::uint64_t seed = 0;
  const char* current = "";  // current case
  long failures = 0;         // checks failed on this PE (all cases)
  long case_failures = 0;
  long checks = 0;
  std::string init_mode = "default";
  int expect_npes = -1;
};
inline State& st() {
  static State s;
  return s;
}
inline int me() { return st().me; }
inline int npes() { return st().n; }

// Scales an iteration count down for large PE counts (8 PEs share 2 cores in CI).
inline int scaled(int base, int min = 1) {
  int n = std::max(1, npes());
  int v = n <= 2 ? base : base * 2 / n;
  return std::max(v, min);
}

// ---------------------------------------------------------------------------------------------------------------
// checks
class Failure {
 public:
  Failure(const char* file, int line, const char* expr) {
    ++st().failures;
    ++st().case_failures;
    os_ << "[PE " << st().me << "] FAIL " << file << ":" << line << " in case '" << st().current << "': " << expr;
  }
  ~Failure() {
    os_ << "\n";
    std::string s = os_.str();
    std::fwrite(s.data(), 1, s.size(), stderr);
    std::fflush(stderr);
  }
  template <typename T>
  Failure& operator<<(const T& v) {
    os_ << " " << v;
    return *this;
  }

 private:
  std::ostringstream os_;
};

struct Voidify {
  void operator&(const Failure&) {}
};

#define MPT_CHECK(cond)                                                                                        \
  (++::mpt::st().checks, (cond)) ? (void)0 : ::mpt::Voidify() & ::mpt::Failure(__FILE__, __LINE__, #cond)

template <typename A, typename B>
std::string show2(const A& a, const B& b) {
  std::ostringstream os;
  if constexpr (std::is_same_v<A, char> || std::is_same_v<A, signed char> || std::is_same_v<A, unsigned char>)
    os << "got " << static_cast<int>(a) << " want " << static_cast<int>(b);
  else
    os << "got " << a << " want " << b;
  return os.str();
}
#define MPT_CHECK_EQ(a, b)                                                                                     \
  do {                                                                                                         \
    auto mpt_a_ = (a);                                                                                         \
    auto mpt_b_ = (b);                                                                                         \
    MPT_CHECK(mpt_a_ == mpt_b_) << #a " == " #b ":" << ::mpt::show2(mpt_a_, mpt_b_);                           \
  } while (0)

inline std::string hex(const void* p, std::size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    s += d[b[i] >> 4];
    s += d[b[i] & 15];
  }
  return s;
}

// Compares `n` elements of `esize` bytes exactly (bitwise); prints the first few differences. Returns true if
// they are equal.
inline bool check_bytes(const char* file, int line, const std::string& what, const void* got, const void* want,
                        std::size_t n, std::size_t esize) {
  ++st().checks;
  auto* g = static_cast<const unsigned char*>(got);
  auto* w = static_cast<const unsigned char*>(want);
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::memcmp(g + i * esize, w + i * esize, esize) != 0) {
      if (bad == 0) first = i;
      if (bad < 4) {
        Failure(file, line, "data differs:") << what << "element" << i << "of" << n << "got" << "0x" + hex(g + i * esize, esize) << "want"
                                             << "0x" + hex(w + i * esize, esize);
      }
      ++bad;
    }
  }
  if (bad > 4) Failure(file, line, "data differs:") << what << bad << "elements differ in all, first at" << first;
  return bad == 0;
}
#define MPT_CHECK_ARRAY(what, got, want, n)                                                                     \
  ::mpt::check_bytes(__FILE__, __LINE__, (what), (got), (want), (n), sizeof(*(got)))
#define MPT_CHECK_MEM(what, got, want, bytes) ::mpt::check_bytes(__FILE__, __LINE__, (what), (got), (want), (bytes), 1)

// Checks a status-returning call's result and that gshmemx_last_error() names the call.
#define MPT_CHECK_STATUS(expr, want_status, must_mention)                                                       \
  do {                                                                                                         \
    int mpt_s_ = (expr);                                                                                       \
    MPT_CHECK(mpt_s_ == (want_status)) << #expr << "returned" << mpt_s_ << "want" << (want_status)           \
                                       << "last_error:" << gshmemx_last_error();                              \
    if ((want_status) != GSHMEM_SUCCESS) {                                                                     \
      MPT_CHECK(std::strstr(gshmemx_last_error(), (must_mention)) != nullptr)                                  \
          << "last error does not mention" << (must_mention) << ": \"" << gshmemx_last_error() << "\"";        \
    }                                                                                                          \
  } while (0)

// ---------------------------------------------------------------------------------------------------------------
// random data: a pure function of (seed, tag, a, b, c), so any PE can compute what any other PE sent.
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline std::uint64_t rnd(std::uint64_t tag, std::uint64_t a = 0, std::uint64_t b = 0, std::uint64_t c = 0) {
  std::uint64_t h = mix(st().seed ^ mix(tag));
  h = mix(h ^ mix(a + 0x1111));
  h = mix(h ^ mix(b + 0x2222));
  return mix(h ^ mix(c + 0x3333));
}
inline std::uint64_t tag_of(const char* s) {
  std::uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
  return h;
}
// A random value of T: any bit pattern for integers, an exactly representable finite value for floats.
template <typename T>
T value_of(std::uint64_t r) {
  if constexpr (std::is_floating_point_v<T>) {
    std::int64_t m = static_cast<std::int64_t>(r % (1u << 22)) - (1 << 21);
    return static_cast<T>(m) / static_cast<T>(64);
  } else {  // integers and any trivially copyable T: random bytes (more than 8 drawn from r too)
    unsigned char b[sizeof(T)];
    for (std::size_t i = 0; i < sizeof(T); i += 8) {
      const std::uint64_t x = i ? mix(r + i) : r;
      std::memcpy(b + i, &x, sizeof(T) - i < 8 ? sizeof(T) - i : 8);
    }
    T v;
    std::memcpy(&v, b, sizeof v);
    return v;
  }
}
template <typename T>
T gen(std::uint64_t tag, std::uint64_t a = 0, std::uint64_t b = 0, std::uint64_t c = 0) {
  return value_of<T>(rnd(tag, a, b, c));
}
// Bytes that differ from `want` in every byte: the poison written before an operation that should overwrite it.
inline void poison_of(void* out, const void* want, std::size_t bytes) {
  auto* o = static_cast<unsigned char*>(out);
  auto* w = static_cast<const unsigned char*>(want);
  for (std::size_t i = 0; i < bytes; ++i) o[i] = static_cast<unsigned char>(~w[i]);
}

// ---------------------------------------------------------------------------------------------------------------
// symmetric memory access that works on CPU and GPU PEs: the heap is touched only through the API.
inline void local_write(void* sym, const void* src, std::size_t bytes) { gshmem_putmem(sym, src, bytes, me()); }
inline void local_read(void* dst, const void* sym, std::size_t bytes) { gshmem_getmem(dst, sym, bytes, me()); }
template <typename T>
void local_fill(T* sym, std::size_t n, T v) {
  std::vector<T> tmp(n, v);
  local_write(sym, tmp.data(), n * sizeof(T));
}
template <typename T>
std::vector<T> local_vec(const T* sym, std::size_t n) {
  std::vector<T> v(n);
  local_read(v.data(), sym, n * sizeof(T));
  return v;
}
template <typename T>
T local_get(const T* sym) {
  T v;
  local_read(&v, sym, sizeof v);
  return v;
}
template <typename T>
void local_set(T* sym, T v) {
  local_write(sym, &v, sizeof v);
}

// ---------------------------------------------------------------------------------------------------------------
// cases
struct Case {
  const char* name;
  void (*fn)();
};
inline std::vector<Case>& cases() {
  static std::vector<Case> c;
  return c;
}
struct Registrar {
  Registrar(const char* name, void (*fn)()) { cases().push_back({name, fn}); }
};
#define MPT_CASE(name)                                                                                         \
  static void mpt_case_##name();                                                                              \
  static ::mpt::Registrar mpt_reg_##name(#name, mpt_case_##name);                                              \
  static void mpt_case_##name()

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs `fn` collectively and aborts the whole job at once (gshmem_global_exit) where PEs could no longer stay in
// step; used for setup steps a check depends on.
inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "[PE %d] FATAL in case '%s': %s (last error: %s)\n", me(), st().current, what,
                 gshmemx_last_error());
    std::fflush(stderr);
    gshmem_global_exit(1);
  }
}

inline int count_open_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
    --n;  // the directory stream itself
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------------------
// init variants
#ifdef MPT_WITH_MPI
inline MPI_Comm& mpi_comm() {
  static MPI_Comm c = MPI_COMM_NULL;
  return c;
}
#endif

inline int init_gshmem() {
  const std::string& mode = st().init_mode;
  if (mode == "default") return gshmem_init();
#ifdef MPT_WITH_MPI
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
  int wrank = 0, wsize = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (mode == "mpi_comm") {
    // A communicator in reverse rank order, so a bootstrap that used MPI_COMM_WORLD instead would be caught.
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - 1 - wrank, &mpi_comm());
    gshmemx_init_attr_t attr = GSHMEMX_INIT_ATTR_INITIALIZER;
    attr.mpi_comm = &mpi_comm();
    int s = gshmemx_init_attr(GSHMEMX_INIT_WITH_MPI_COMM, &attr);
    if (s == GSHMEM_SUCCESS && gshmem_my_pe() != wsize - 1 - wrank) {
      std::fprintf(stderr, "[MPI rank %d] FAIL: gshmem_my_pe()=%d but my rank in the communicator given to "
                   "gshmemx_init_attr is %d\n", wrank, gshmem_my_pe(), wsize - 1 - wrank);
      ++st().failures;
    }
    return s;
  }
  if (mode == "uid") {
    gshmemx_uniqueid_t uid = GSHMEMX_UNIQUEID_INITIALIZER;
    if (wrank == 0 && gshmemx_get_uniqueid(&uid) != GSHMEM_SUCCESS) {
      std::fprintf(stderr, "gshmemx_get_uniqueid failed: %s\n", gshmemx_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Bcast(&uid, sizeof uid, MPI_BYTE, 0, MPI_COMM_WORLD);
    gshmemx_init_attr_t attr = GSHMEMX_INIT_ATTR_INITIALIZER;
    int s = gshmemx_set_attr_uniqueid_args(wrank, wsize, &uid, &attr);
    if (s != GSHMEM_SUCCESS) return s;
    s = gshmemx_init_attr(GSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (s == GSHMEM_SUCCESS && gshmem_my_pe() != wrank) {
      std::fprintf(stderr, "[MPI rank %d] FAIL: gshmem_my_pe()=%d after unique-id init with rank %d\n", wrank,
                   gshmem_my_pe(), wrank);
      ++st().failures;
    }
    return s;
  }
#endif
  std::fprintf(stderr, "unknown --init=%s (this program supports: default%s)\n", mode.c_str(),
#ifdef MPT_WITH_MPI
               ", mpi_comm, uid"
#else
               ""
#endif
  );
  std::exit(2);
}

inline void finalize_gshmem() {
  gshmem_finalize();
#ifdef MPT_WITH_MPI
  if (st().init_mode != "default") {
    if (mpi_comm() != MPI_COMM_NULL) MPI_Comm_free(&mpi_comm());
    MPI_Finalize();
  }
#endif
}

// Shares PE 0's seed with every PE through the heap (put + barrier).
inline void share_seed() {
  std::uint64_t seed = 0;
  if (const char* s = std::getenv("MPT_SEED")) {
    seed = std::strtoull(s, nullptr, 0);
  } else {
    std::random_device rd;
    seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
  auto* sym = static_cast<std::uint64_t*>(gshmem_malloc(sizeof(std::uint64_t)));
  require(sym != nullptr, "gshmem_malloc(8) for the seed returned NULL");
  gshmem_barrier_all();
  if (me() == 0)
    for (int pe = 0; pe < npes(); ++pe) gshmem_putmem(sym, &seed, sizeof seed, pe);
  gshmem_barrier_all();
  local_read(&st().seed, sym, sizeof seed);
  gshmem_free(sym);
}

inline bool selected(const std::string& only, const char* name) {
  if (only.empty()) return true;
  // Appended, not `"," + only`: GCC 12 at -O3 (Release) reports a false -Wrestrict on that form.
  std::string list(1, ',');
  list.append(only).push_back(',');
  std::string item(1, ',');
  item.append(name).push_back(',');
  return list.find(item) != std::string::npos;
}

inline int main(int argc, char** argv) {
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--only=", 0) == 0) only = a.substr(7);
    else if (a.rfind("--expect-npes=", 0) == 0) st().expect_npes = std::atoi(a.c_str() + 14);
    else if (a.rfind("--init=", 0) == 0) st().init_mode = a.substr(7);
    else if (a == "--list") {
      for (auto& c : cases()) std::printf("%s\n", c.name);
      return 0;
    } else {
      std::fprintf(stderr, "usage: %s [--only=case,case] [--expect-npes=N] [--init=default|mpi_comm|uid] [--list]\n",
                   argv[0]);
      return 2;
    }
  }
  for (const std::string& want : [&] {
         std::vector<std::string> v;
         std::stringstream ss(only);
         std::string item;
         while (std::getline(ss, item, ','))
           if (!item.empty()) v.push_back(item);
         return v;
       }()) {
    bool found = false;
    for (auto& c : cases()) found |= want == c.name;
    if (!found) {
      std::fprintf(stderr, "--only: no case named '%s' (see --list)\n", want.c_str());
      return 2;
    }
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const double t0 = now_s();
  int s = init_gshmem();
  if (s != GSHMEM_SUCCESS) {
    std::fprintf(stderr, "FAIL: gshmem init (%s) returned %d (%s): %s\n", st().init_mode.c_str(), s,
                 gshmemx_status_string(s), gshmemx_last_error());
    return 1;
  }
  st().me = gshmem_my_pe();
  st().n = gshmem_n_pes();
  int dev = -1;
  gshmemx_query_device(&dev, nullptr);
  st().gpu = dev >= 0;
  if (st().expect_npes > 0 && st().n != st().expect_npes) {
    std::fprintf(stderr, "[PE %d] FAIL: gshmem_n_pes()=%d but the launcher started %d PEs (is the bootstrap "
                 "being used?)\n", st().me, st().n, st().expect_npes);
    return 1;
  }
  share_seed();
  if (me() == 0)
    std::printf("mpt: %s: %d PEs on %s, init=%s, init took %.1f ms, seed=0x%016" PRIx64
                " (repeat with MPT_SEED=0x%016" PRIx64 ")\n",
                argv[0], npes(), st().gpu ? "GPUs" : "CPU PEs", st().init_mode.c_str(), (now_s() - t0) * 1e3,
                st().seed, st().seed);
  int ran = 0;
  for (auto& c : cases()) {
    if (c.name[0] != '(' && !selected(only, c.name)) continue;  // "(setup)" cases run under --only too
    st().current = c.name;
    st().case_failures = 0;
    const double c0 = now_s();
    gshmem_barrier_all();
    c.fn();
    gshmem_barrier_all();
    ++ran;
    if (st().case_failures)
      std::printf("[PE %d] case %-22s FAILED (%ld failed checks)\n", me(), c.name, st().case_failures);
    else if (me() == 0)
      std::printf("mpt: case %-22s ok (%.0f ms)\n", c.name, (now_s() - c0) * 1e3);
  }
  st().current = "(finalize)";
  if (ran == 0) {
    std::fprintf(stderr, "FAIL: no case ran\n");
    ++st().failures;
  }
  const long failures = st().failures;
  const long checks = st().checks;
  const int my = me();
  finalize_gshmem();
  if (failures) {
    std::fprintf(stderr, "[PE %d] FAILED: %ld of %ld checks failed\n", my, failures, checks);
    return 1;
  }
  std::printf("[PE %d] passed %ld checks in %d cases\n", my, checks, ran);
  return 0;
}

}  // namespace mpt
