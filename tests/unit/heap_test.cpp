// Symmetric heap: the offset allocator against a reference model, and the heap itself with one PE in this
// process and with several PEs in forked processes (host memfd backing; CUDA VMM backing where a GPU exists).
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "heap/offset_allocator.hpp"
#include "heap/symmetric_heap.hpp"
#include "runtime/error.hpp"

#ifdef GSHMEM_HAVE_CUDA
#include <cuda_runtime.h>

#include "transport/cuda_driver.hpp"
#endif

namespace {

using gshmem::Error;
using gshmem::heap::Backing;
using gshmem::heap::kMinAlignment;
using gshmem::heap::OffsetAllocator;
using gshmem::heap::Params;
using gshmem::heap::SymmetricHeap;
namespace bs = gshmem::bootstrap;

// ------------------------------------------------------------------------------------------------------------
// Allocator

// Reference model: a byte map in units of kMinAlignment; first fit = lowest aligned unit where the block fits.
class ModelAllocator {
 public:
  ModelAllocator(std::size_t begin, std::size_t capacity)
      : begin_(begin / kMinAlignment), used_(capacity / kMinAlignment, false) {}
  std::optional<std::size_t> allocate(std::size_t size, std::size_t alignment) {
    const std::size_t units = (size + kMinAlignment - 1) / kMinAlignment;
    const std::size_t step = std::max(alignment, kMinAlignment) / kMinAlignment;
    for (std::size_t u = (begin_ + step - 1) / step * step; u + units <= used_.size(); u += step) {
      if (std::all_of(used_.begin() + u, used_.begin() + u + units, [](bool b) { return !b; })) {
        std::fill(used_.begin() + u, used_.begin() + u + units, true);
        live_[u] = units;
        return u * kMinAlignment;
      }
    }
    return std::nullopt;
  }
  std::size_t free(std::size_t offset) {
    auto it = live_.find(offset / kMinAlignment);
    if (offset % kMinAlignment || it == live_.end()) return 0;
    std::fill(used_.begin() + it->first, used_.begin() + it->first + it->second, false);
    std::size_t bytes = it->second * kMinAlignment;
    live_.erase(it);
    return bytes;
  }
  void grow(std::size_t capacity) { used_.resize(capacity / kMinAlignment, false); }
  std::size_t used() const {
    std::size_t n = 0;
    for (auto& [u, units] : live_) n += units;
    return n * kMinAlignment;
  }
  std::size_t free_ranges() const {
    std::size_t n = 0;
    for (std::size_t u = begin_; u < used_.size(); ++u)
      if (!used_[u] && (u == begin_ || used_[u - 1])) ++n;
    return n;
  }
  std::vector<std::size_t> live_offsets() const {
    std::vector<std::size_t> v;
    for (auto& [u, units] : live_) v.push_back(u * kMinAlignment);
    return v;
  }

 private:
  std::size_t begin_;
  std::vector<bool> used_;
  std::map<std::size_t, std::size_t> live_;
};

// Runs a random sequence of allocate/free/grow on both and checks they agree step by step. Returns the offsets.
std::vector<std::size_t> run_random_sequence(unsigned seed, int steps) {
  std::mt19937 rng(seed);
  const std::size_t begin = 4096;
  std::size_t capacity = 256 * 1024;
  OffsetAllocator a(begin, capacity);
  ModelAllocator m(begin, capacity);
  std::vector<std::size_t> live, trace;
  for (int i = 0; i < steps; ++i) {
    int what = static_cast<int>(rng() % 100);
    if (what < 55 || live.empty()) {
      std::size_t size = 1 + rng() % (rng() % 4 == 0 ? 32768 : 2048);
      std::size_t alignment = std::size_t{1} << (rng() % 14);  // 1 .. 8192
      auto got = a.allocate(size, alignment);
      auto want = m.allocate(size, alignment);
      EXPECT_EQ(got, want) << "step " << i << " size " << size << " alignment " << alignment;
      if (got) {
        EXPECT_EQ(*got % std::max(alignment, kMinAlignment), 0u);
        EXPECT_GE(*got, begin);
        live.push_back(*got);
        trace.push_back(*got);
      } else {
        // It must fit once the allocator has what capacity_needed asks for.
        std::size_t need = a.capacity_needed(size, alignment);
        EXPECT_GT(need, capacity);
        if (rng() % 2 == 0 && need < 16u * 1024 * 1024) {
          capacity = (need + 4095) / 4096 * 4096;
          a.grow(capacity);
          m.grow(capacity);
          auto again = a.allocate(size, alignment);
          EXPECT_EQ(again, m.allocate(size, alignment));
          EXPECT_TRUE(again.has_value());
          if (again) live.push_back(*again), trace.push_back(*again);
        }
      }
    } else {
      std::size_t k = rng() % live.size();
      std::size_t off = live[k];
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      EXPECT_EQ(a.free(off), m.free(off)) << "step " << i;
    }
    auto s = a.stats();
    EXPECT_EQ(s.used, m.used()) << "step " << i;
    EXPECT_EQ(s.free_ranges, m.free_ranges()) << "step " << i;
    EXPECT_EQ(s.used + s.free, capacity - begin) << "step " << i;
    EXPECT_EQ(s.allocations, live.size());
  }
  return trace;
}

TEST(HeapAllocator, MatchesReferenceModelOnRandomSequences) {
  for (unsigned seed = 1; seed <= 12; ++seed) run_random_sequence(seed, 600);
}

TEST(HeapAllocator, IsDeterministic) {
  EXPECT_EQ(run_random_sequence(99, 400), run_random_sequence(99, 400));
}

TEST(HeapAllocator, AlignmentAndRounding) {
  OffsetAllocator a(100, 1 << 20);  // begin is rounded up to kMinAlignment
  EXPECT_EQ(a.begin(), kMinAlignment);
  EXPECT_EQ(a.allocate(1, 1), kMinAlignment);
  EXPECT_EQ(a.size_of(kMinAlignment), kMinAlignment);
  auto big = a.allocate(10, 65536);
  ASSERT_TRUE(big);
  EXPECT_EQ(*big, 65536u);
  // The gap left by alignment padding is reused.
  EXPECT_EQ(a.allocate(300, 0), 2 * kMinAlignment);
  for (std::size_t bad : {3ul, 24ul, 1000ul, 65537ul}) {
    try {
      a.allocate(16, bad);
      ADD_FAILURE() << "alignment " << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), GSHMEM_ERROR_INVALID_VALUE);
      EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(a.allocate(0, 0), Error);
  EXPECT_FALSE(a.allocate(SIZE_MAX - 10, 0));
  EXPECT_EQ(a.capacity_needed(SIZE_MAX - 10, 0), SIZE_MAX);
}

TEST(HeapAllocator, CoalescesFreeRanges) {
  const std::size_t cap = 64 * kMinAlignment;
  OffsetAllocator a(0, cap);
  auto x = a.allocate(kMinAlignment * 4, 0), y = a.allocate(kMinAlignment * 4, 0), z = a.allocate(kMinAlignment, 0);
  ASSERT_TRUE(x && y && z);
  EXPECT_EQ(a.stats().free_ranges, 1u);
  a.free(*x);
  a.free(*z);  // merges with the tail
  EXPECT_EQ(a.stats().free_ranges, 2u);
  a.free(*y);  // merges both sides
  auto s = a.stats();
  EXPECT_EQ(s.free_ranges, 1u);
  EXPECT_EQ(s.largest_free, cap);
  EXPECT_EQ(s.used, 0u);
  EXPECT_EQ(a.allocate(cap, 0), 0u);  // the whole range is one block again
}

TEST(HeapAllocator, GrowExtendsTheTail) {
  OffsetAllocator a(0, 4096);
  ASSERT_EQ(a.allocate(1024, 0), 0u);
  EXPECT_FALSE(a.allocate(4096, 0));
  EXPECT_EQ(a.capacity_needed(4096, 0), 1024u + 4096u);  // placed at the start of the tail free range
  EXPECT_EQ(a.capacity_needed(4096, 4096), 8192u);
  a.grow(1024 + 4096);
  EXPECT_EQ(a.stats().free_ranges, 1u);  // new space merged with the old tail
  EXPECT_EQ(a.allocate(4096, 0), 1024u);
  EXPECT_EQ(a.capacity_needed(256, 0), 1024u + 4096u + 256u);  // tail in use: after capacity
  EXPECT_THROW(a.grow(100), Error);
}

TEST(HeapAllocator, BadFreesAreRejected) {
  OffsetAllocator a(0, 1 << 16);
  auto x = a.allocate(1000, 0);
  ASSERT_TRUE(x);
  EXPECT_EQ(a.free(*x + kMinAlignment), 0u);  // inside the block
  EXPECT_EQ(a.free(12345), 0u);               // never allocated
  EXPECT_EQ(a.free(*x), 1024u);
  EXPECT_EQ(a.free(*x), 0u);  // twice
  EXPECT_EQ(a.stats().allocations, 0u);
}

// Two allocators that free the same blocks in different orders end in the same state: the same digest and the
// same next offsets (what lets PEs free in garbage-collection order); a different live set gives another digest.
TEST(HeapAllocator, FreeOrderDoesNotMatter) {
  OffsetAllocator a(0, 1 << 20), b(0, 1 << 20);
  std::vector<std::size_t> offs;
  std::mt19937_64 rng(20261128);
  for (int i = 0; i < 40; ++i) {
    const std::size_t size = 1 + rng() % 20000;
    auto x = a.allocate(size, 0);
    auto y = b.allocate(size, 0);
    ASSERT_TRUE(x && y && *x == *y);
    offs.push_back(*x);
  }
  EXPECT_EQ(a.live_digest(), b.live_digest());
  std::vector<std::size_t> gone(offs.begin(), offs.begin() + 25), order_b = gone;
  std::shuffle(order_b.begin(), order_b.end(), rng);
  if (order_b.back() == gone.back()) std::swap(order_b.front(), order_b.back());  // the last frees differ
  for (std::size_t i = 0; i + 1 < gone.size(); ++i) {
    a.free(gone[i]);
    b.free(order_b[i]);
  }
  EXPECT_NE(a.live_digest(), b.live_digest()) << "the live sets differ by one block here";
  a.free(gone.back());
  b.free(order_b.back());
  EXPECT_EQ(a.live_digest(), b.live_digest());
  EXPECT_EQ(a.stats().free_ranges, b.stats().free_ranges);
  for (int i = 0; i < 30; ++i) {
    const std::size_t size = 1 + rng() % 30000;
    EXPECT_EQ(a.allocate(size, 0), b.allocate(size, 0)) << "allocation " << i << " after the frees";
  }
  EXPECT_EQ(a.live_digest(), b.live_digest());
}

// ------------------------------------------------------------------------------------------------------------
// Helpers for heap tests

int fd_count() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - 1;  // the DIR's own fd
}

std::set<std::string> dir_listing(const char* path) {
  std::set<std::string> names;
  if (DIR* d = opendir(path)) {
    while (dirent* e = readdir(d)) names.insert(e->d_name);
    closedir(d);
  }
  return names;
}

bs::Secret test_secret() {
  bs::Secret s{};
  if (getrandom(s.data(), s.size(), 0) != static_cast<ssize_t>(s.size())) {
    std::uint64_t t = static_cast<std::uint64_t>(getpid()) * 0x9e3779b97f4a7c15ull;
    std::memcpy(s.data(), &t, sizeof t);
  }
  return s;
}

// One PE: every collective is a copy.
class SoloBootstrap final : public bs::Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* kind() const override { return "test-solo"; }
  const bs::Secret& secret() const override { return secret_; }
  void allgather(const void* in, void* out, std::size_t len) override { std::memmove(out, in, len); }
  void barrier() override {}
  void broadcast(void*, std::size_t, int) override {}
  void check_health() override {}
  void abort(const std::string&) noexcept override {}
  void finalize() override {}

 private:
  bs::Secret secret_ = test_secret();
};

// n PEs in forked processes; PE 0 is the hub of a star of socketpairs made before fork.
class PipeBootstrap final : public bs::Bootstrap {
 public:
  PipeBootstrap(int rank, int n, std::vector<int> socks, const bs::Secret& secret)
      : rank_(rank), n_(n), socks_(std::move(socks)), secret_(secret) {}
  ~PipeBootstrap() override {
    for (int s : socks_)
      if (s >= 0) close(s);
  }
  int rank() const override { return rank_; }
  int size() const override { return n_; }
  const char* kind() const override { return "test-pipes"; }
  const bs::Secret& secret() const override { return secret_; }
  void allgather(const void* in, void* out, std::size_t len) override {
    auto* o = static_cast<char*>(out);
    std::uint64_t l = len;
    if (rank_ == 0) {
      std::memmove(o, in, len);
      for (int r = 1; r < n_; ++r) {
        std::uint64_t theirs = 0;
        read_full(socks_[r], &theirs, sizeof theirs);
        if (theirs != l) gshmem::fail(GSHMEM_ERROR_MISMATCH, "test allgather: PE {} gave {} bytes, PE 0 {}", r, theirs, l);
        read_full(socks_[r], o + r * len, len);
      }
      for (int r = 1; r < n_; ++r) write_full(socks_[r], o, len * static_cast<std::size_t>(n_));
    } else {
      write_full(socks_[0], &l, sizeof l);
      write_full(socks_[0], in, len);
      read_full(socks_[0], o, len * static_cast<std::size_t>(n_));
    }
  }
  void barrier() override {
    std::vector<char> all(static_cast<std::size_t>(n_));
    char one = 1;
    allgather(&one, all.data(), 1);
  }
  void broadcast(void* buf, std::size_t len, int root) override {
    std::vector<char> all(len * static_cast<std::size_t>(n_));
    allgather(buf, all.data(), len);
    std::memcpy(buf, all.data() + len * static_cast<std::size_t>(root), len);
  }
  void check_health() override {}
  void abort(const std::string&) noexcept override {}
  void finalize() override {}

 private:
  static void write_full(int fd, const void* p, std::size_t len) {
    auto* c = static_cast<const char*>(p);
    while (len) {
      ssize_t n = ::write(fd, c, len);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) gshmem::fail(GSHMEM_ERROR_PEER_FAILED, "test bootstrap: write failed: {}", std::strerror(errno));
      c += n;
      len -= static_cast<std::size_t>(n);
    }
  }
  static void read_full(int fd, void* p, std::size_t len) {
    auto* c = static_cast<char*>(p);
    while (len) {
      pollfd pfd{fd, POLLIN, 0};
      if (::poll(&pfd, 1, 30000) == 0) gshmem::fail(GSHMEM_ERROR_TIMEOUT, "test bootstrap: no data for 30 s");
      ssize_t n = ::read(fd, c, len);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) gshmem::fail(GSHMEM_ERROR_PEER_FAILED, "test bootstrap: a peer went away");
      c += n;
      len -= static_cast<std::size_t>(n);
    }
  }
  int rank_, n_;
  std::vector<int> socks_;  // PE 0: socks_[r] talks to PE r; others: socks_[0] talks to PE 0
  bs::Secret secret_;
};

// Failure inside a forked PE: print and leave with status 1 (gtest assertions do not cross fork).
[[noreturn]] void child_fail(int rank, int line, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[PE %d] heap_test.cpp:%d: %s\n", rank, line, buf);
  std::fflush(stderr);
  _exit(1);
}
#define PE_CHECK(cond, ...)                                      \
  do {                                                           \
    if (!(cond)) child_fail(boot.rank(), __LINE__, __VA_ARGS__); \
  } while (0)

constexpr int kSkipExit = 77;

// Runs fn(boot) in n forked PEs and returns their exit statuses (0 = passed, kSkipExit = skipped).
std::vector<int> run_pes(int n, const std::function<void(PipeBootstrap&)>& fn) {
  const bs::Secret secret = test_secret();
  std::vector<std::array<int, 2>> pairs(static_cast<std::size_t>(n), {-1, -1});
  for (int r = 1; r < n; ++r) {
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pairs[r].data()) != 0) {
      ADD_FAILURE() << "socketpair: " << std::strerror(errno);
      return {};
    }
  }
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(120);  // a hung PE dies instead of hanging the test
      std::vector<int> mine(static_cast<std::size_t>(n), -1);
      for (int k = 1; k < n; ++k) {
        if (r == 0) {
          mine[k] = pairs[k][0];
          close(pairs[k][1]);
        } else if (k == r) {
          mine[0] = pairs[k][1];
          close(pairs[k][0]);
        } else {
          close(pairs[k][0]);
          close(pairs[k][1]);
        }
      }
      int code = 0;
      try {
        PipeBootstrap boot(r, n, mine, secret);
        fn(boot);
      } catch (const Error& e) {
        std::fprintf(stderr, "[PE %d] uncaught gshmem::Error (%s): %s\n", r, gshmem::status_name(e.status()), e.what());
        code = 2;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "[PE %d] uncaught exception: %s\n", r, e.what());
        code = 2;
      }
      std::fflush(nullptr);
      _exit(code);
    }
    pids.push_back(pid);
  }
  for (int r = 1; r < n; ++r) close(pairs[r][0]), close(pairs[r][1]);
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int st = 0;
    waitpid(pid, &st, 0);
    codes.push_back(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  }
  return codes;
}

// Expects `expr_` to throw gshmem::Error with status `code_` and a message containing every further argument.
#define PE_EXPECT_ERROR(expr_, code_, ...)                                                                 \
  do {                                                                                                     \
    bool threw_ = false;                                                                                   \
    try {                                                                                                  \
      expr_;                                                                                               \
    } catch (const Error& e_) {                                                                            \
      threw_ = true;                                                                                       \
      PE_CHECK(e_.status() == (code_), "%s: status %s, message: %s", #expr_,                               \
               gshmem::status_name(e_.status()), e_.what());                                               \
      for (const char* part_ : {__VA_ARGS__})                                                              \
        PE_CHECK(std::strstr(e_.what(), part_), "%s: message lacks '%s': %s", #expr_, part_, e_.what());   \
    }                                                                                                      \
    PE_CHECK(threw_, "%s did not throw", #expr_);                                                          \
  } while (0)

std::vector<int> all_pids(bs::Bootstrap& boot) {
  std::vector<int> pids(static_cast<std::size_t>(boot.size()));
  int me = static_cast<int>(getpid());
  boot.allgather(&me, pids.data(), sizeof me);
  return pids;
}

std::vector<int> iota_pes(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

Params host_params(int rank, int n, std::size_t initial, std::size_t max) {
  Params p;
  p.backing = Backing::Host;
  p.initial_size = initial;
  p.max_size = max;
  p.internal_size = 4096;
  p.my_pe = rank;
  p.n_pes = n;
  p.local_pes = iota_pes(n);
  return p;
}

unsigned char pattern(int pe, std::size_t i) { return static_cast<unsigned char>(pe * 37 + i * 7 + (i >> 9)); }

// ------------------------------------------------------------------------------------------------------------
// One PE in this process

TEST(HeapHost, SinglePeAllocatesGrowsAndCleansUp) {
  const auto shm_before = dir_listing("/dev/shm");
  const int fds_before = fd_count();
  {
    SoloBootstrap boot;
    bs::FdExchange fdx(boot.secret(), 0, {0}, {static_cast<int>(getpid())});
    SymmetricHeap heap(host_params(0, 1, 64 * 1024, 256u << 20), boot, fdx);
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    EXPECT_EQ(heap.size(), (64 * 1024 + 4096 + page - 1) / page * page);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(heap.base()) % (2u << 20), 0u);
    ASSERT_EQ(heap.peer_bases().size(), 1u);
    EXPECT_EQ(heap.peer_bases()[0], heap.base());
    EXPECT_EQ(heap.backing(), Backing::Host);

    auto* a = static_cast<unsigned char*>(heap.allocate(1000, 0, "gshmem_malloc"));
    ASSERT_NE(a, nullptr);
    EXPECT_GE(heap.offset_of(a), 4096u);  // the internal area is never handed out
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % kMinAlignment, 0u);
    EXPECT_TRUE(heap.contains(a, 1000));
    EXPECT_FALSE(heap.contains(heap.base() + heap.size()));
    EXPECT_FALSE(heap.contains(a, heap.size()));
    EXPECT_EQ(heap.peer_ptr(a, 0), a);
    EXPECT_EQ(heap.peer_ptr(a, 1), nullptr);
    for (std::size_t i = 0; i < 1000; ++i) a[i] = pattern(0, i);
    EXPECT_EQ(heap.allocate(0, 0, "gshmem_malloc"), nullptr);

    // Alignment: powers of two up to 2 MiB.
    void* al = heap.allocate(100, 1 << 21, "gshmem_align");
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(al) % (1u << 21), 0u);
    try {
      heap.allocate(100, 3, "gshmem_align");
      ADD_FAILURE() << "alignment 3 accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), GSHMEM_ERROR_INVALID_VALUE);
      EXPECT_NE(std::string(e.what()).find("gshmem_align"), std::string::npos) << e.what();
    }
    try {
      heap.allocate(100, 1 << 22, "gshmem_align");
      ADD_FAILURE() << "alignment 4 MiB accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), GSHMEM_ERROR_INVALID_VALUE) << e.what();
    }

    // Growth keeps what is there and maps the new memory.
    const std::size_t before = heap.size();
    auto* b = static_cast<unsigned char*>(heap.allocate(5u << 20, 0, "gshmem_malloc"));
    EXPECT_GT(heap.size(), before);
    EXPECT_TRUE(heap.contains(b, 5u << 20));
    std::memset(b, 0xab, 5u << 20);
    for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(a[i], pattern(0, i));

    auto u = heap.usage();
    EXPECT_EQ(u.allocations, 3u);
    EXPECT_EQ(u.heap_size, heap.size());
    EXPECT_EQ(u.internal, 4096u);
    EXPECT_EQ(u.max_size, 256u << 20);
    EXPECT_GE(u.used, 1024u + 256u + (5u << 20));

    // Bad frees name the call and the pointer; nullptr is fine.
    try {
      heap.free(a + 256, "gshmem_free");
      ADD_FAILURE() << "free inside an object accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), GSHMEM_ERROR_INVALID_VALUE);
      EXPECT_NE(std::string(e.what()).find("gshmem_free"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("not the start of a live"), std::string::npos) << e.what();
    }
    int local = 0;
    EXPECT_THROW(heap.free(&local, "gshmem_free"), Error);
    heap.free(nullptr, "gshmem_free");
    heap.free(a, "gshmem_free");
    EXPECT_THROW(heap.free(a, "gshmem_free"), Error);  // twice
    heap.free(b, "gshmem_free");
    heap.free(al, "gshmem_free");
    EXPECT_EQ(heap.usage().allocations, 0u);
    EXPECT_EQ(heap.usage().used, 0u);

    // Out of memory names the request and the limit.
    try {
      heap.allocate(300u << 20, 0, "gshmem_malloc");
      ADD_FAILURE() << "300 MiB fit in a 256 MiB heap";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), GSHMEM_ERROR_OUT_OF_MEMORY);
      std::string m = e.what();
      EXPECT_NE(m.find("gshmem_malloc(size=314572800)"), std::string::npos) << m;
      EXPECT_NE(m.find("GSHMEM_MAX_HEAP_SIZE=256M"), std::string::npos) << m;
    }
    // Still usable afterwards.
    void* c = heap.allocate(100u << 20, 0, "gshmem_malloc");
    EXPECT_NE(c, nullptr);
    heap.free(c, "gshmem_free");
  }
  EXPECT_EQ(fd_count(), fds_before);
  EXPECT_EQ(dir_listing("/dev/shm"), shm_before);
}

TEST(HeapHost, RejectsBadSettings) {
  SoloBootstrap boot;
  bs::FdExchange fdx(boot.secret(), 0, {0}, {static_cast<int>(getpid())});
  try {
    SymmetricHeap heap(host_params(0, 1, 64u << 20, 16u << 20), boot, fdx);
    ADD_FAILURE() << "initial size above the maximum accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), GSHMEM_ERROR_INVALID_VALUE);
    EXPECT_NE(std::string(e.what()).find("GSHMEM_MAX_HEAP_SIZE"), std::string::npos) << e.what();
  }
#ifndef GSHMEM_HAVE_CUDA
  Params p = host_params(0, 1, 1 << 20, 16u << 20);
  p.backing = Backing::Cuda;
  p.device = 0;
  try {
    SymmetricHeap heap(p, boot, fdx);
    ADD_FAILURE() << "GPU heap accepted in a CPU-only build";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), GSHMEM_ERROR_NOT_SUPPORTED) << e.what();
  }
#endif
}

// ------------------------------------------------------------------------------------------------------------
// Several PEs in forked processes sharing host memory

TEST(HeapLayout, RegularPeerStride) {
  using gshmem::heap::regular_peer_stride;
  std::vector<char> arena(1 << 16);
  char* b = arena.data();
  EXPECT_EQ(regular_peer_stride({b, b + 4096, b + 8192, b + 12288}), 4096u);
  EXPECT_EQ(regular_peer_stride({b, b + 4096}), 4096u);
  EXPECT_EQ(regular_peer_stride({b}), 1u) << "one PE: any non-zero stride maps it to itself";
  EXPECT_EQ(regular_peer_stride({nullptr}), 0u);
  EXPECT_EQ(regular_peer_stride({}), 0u);
  EXPECT_EQ(regular_peer_stride({b, b + 4096, b + 12288}), 0u) << "a gap breaks the stride";
  EXPECT_EQ(regular_peer_stride({b, b + 4096, nullptr}), 0u) << "an unmapped PE (another node)";
  EXPECT_EQ(regular_peer_stride({b + 4096, b}), 0u) << "descending order";
  EXPECT_EQ(regular_peer_stride({b, b}), 0u) << "equal bases";
}

TEST(HeapHost, ForkedPesShareGrowAndAgree) {
  const auto shm_before = dir_listing("/dev/shm");
  const int n = 3;
  auto codes = run_pes(n, [&](PipeBootstrap& boot) {
    const int me = boot.rank();
    const int fds_before = fd_count();
    {
      bs::FdExchange fdx(boot.secret(), me, iota_pes(n), all_pids(boot));
      SymmetricHeap heap(host_params(me, n, 64 * 1024, 64u << 20), boot, fdx);
      std::set<char*> bases(heap.peer_bases().begin(), heap.peer_bases().end());
      PE_CHECK(bases.size() == static_cast<std::size_t>(n) && !bases.count(nullptr), "peer bases not distinct");
      // One node, PEs in local order: the heaps lie at a fixed stride (what device code translates with).
      const std::uint64_t stride = gshmem::heap::regular_peer_stride(heap.peer_bases());
      PE_CHECK(stride != 0 && stride == static_cast<std::uint64_t>(heap.peer_bases()[1] - heap.peer_bases()[0]),
               "regular_peer_stride is %llu", static_cast<unsigned long long>(stride));

      // 1. Every PE writes its copy; every PE reads all copies.
      auto* a = static_cast<unsigned char*>(heap.allocate(4096, 0, "gshmem_malloc"));
      for (std::size_t i = 0; i < 4096; ++i) a[i] = pattern(me, i);
      boot.barrier();
      for (int pe = 0; pe < n; ++pe) {
        auto* q = static_cast<unsigned char*>(heap.peer_ptr(a, pe));
        for (std::size_t i = 0; i < 4096; ++i)
          PE_CHECK(q[i] == pattern(pe, i), "PE %d's copy byte %zu is %d", pe, i, q[i]);
      }

      // 2. Growth, many times: blocks beyond the initial size, written by their owner, read by all.
      const std::size_t initial = heap.size();
      std::vector<unsigned char*> blocks;
      for (int k = 0; k < 24; ++k) {
        std::size_t bytes = (std::size_t{1} << (10 + k % 11)) + 100 * k;
        auto* b = static_cast<unsigned char*>(heap.allocate(bytes, 0, "gshmem_malloc"));
        PE_CHECK(b && heap.contains(b, bytes), "block %d of %zu bytes not in the heap", k, bytes);
        b[0] = pattern(me, k);
        b[bytes - 1] = pattern(me, k + 1);
        blocks.push_back(b);
      }
      PE_CHECK(heap.size() > initial, "the heap did not grow (%zu bytes)", heap.size());
      boot.barrier();
      for (int pe = 0; pe < n; ++pe) {
        for (int k = 0; k < 24; ++k) {
          std::size_t bytes = (std::size_t{1} << (10 + k % 11)) + 100 * k;
          auto* q = static_cast<unsigned char*>(heap.peer_ptr(blocks[k], pe));
          PE_CHECK(q[0] == pattern(pe, k) && q[bytes - 1] == pattern(pe, k + 1), "PE %d block %d wrong", pe, k);
        }
        auto* q = static_cast<unsigned char*>(heap.peer_ptr(a, pe));
        PE_CHECK(q[4095] == pattern(pe, 4095), "PE %d's first object changed by growth", pe);
      }

      // 3. Writes through a peer mapping land in the peer's own copy.
      auto* c = static_cast<unsigned char*>(heap.allocate(3u << 20, 0, "gshmem_malloc"));
      auto* right = static_cast<unsigned char*>(heap.peer_ptr(c, (me + 1) % n));
      for (std::size_t i = 0; i < (3u << 20); i += 4093) right[i] = pattern(me, i);
      boot.barrier();
      const int left = (me + n - 1) % n;
      for (std::size_t i = 0; i < (3u << 20); i += 4093)
        PE_CHECK(c[i] == pattern(left, i), "byte %zu written by PE %d is %d", i, left, c[i]);

      // 4. Argument checks: the same error on every PE, and the heap stays usable.
      PE_EXPECT_ERROR(heap.allocate(me == 1 ? 8192 : 4096, 0, "gshmem_malloc"), GSHMEM_ERROR_MISMATCH,
                      "gshmem_malloc: PEs called it with different arguments", "PE 0 size=4096", "PE 1 size=8192",
                      "Fix:");
      PE_EXPECT_ERROR(heap.allocate(4096, me == 2 ? 4096 : 0, "gshmem_align"), GSHMEM_ERROR_MISMATCH,
                      "PE 0 size=4096 alignment=0", "PE 2 size=4096 alignment=4096");
      PE_EXPECT_ERROR(heap.free(a + 256, "gshmem_free"), GSHMEM_ERROR_INVALID_VALUE, "gshmem_free",
                      "not the start of a live");
      // Frees of different objects in one call are allowed (NVSHMEM compares nothing; destructors run in the order
      // garbage collection picks), but an allocation while the heaps differ is not; once every PE has freed the
      // same objects, allocations are symmetric again.
      void* x = heap.allocate(4096, 0, "gshmem_malloc");
      void* y = heap.allocate(8192, 0, "gshmem_malloc");
      heap.free(me == 2 ? x : y, "gshmem_free");
      PE_EXPECT_ERROR(heap.allocate(64, 0, "gshmem_malloc"), GSHMEM_ERROR_MISMATCH,
                      "gshmem_malloc: the PEs' symmetric heaps hold different objects",
                      "freed different objects: ", "PE 2 ", "Fix:");
      heap.free(me == 2 ? y : x, "gshmem_free");
      void* z = heap.allocate(4096, 0, "gshmem_malloc");
      PE_CHECK(z == x, "after the frees matched up, a 4096-byte object is at %p, not at the first one's %p", z, x);
      heap.free(me == 0 ? nullptr : z, "gshmem_free");
      heap.free(me == 0 ? z : nullptr, "gshmem_free");
      PE_CHECK(heap.usage().allocations == 26, "%llu allocations live after the mismatched frees, not 26 (a, c, "
               "24 blocks)", static_cast<unsigned long long>(heap.usage().allocations));
      int not_symmetric = 0;
      PE_EXPECT_ERROR(heap.free(me == 1 ? static_cast<void*>(&not_symmetric) : a, "gshmem_free"),
                      GSHMEM_ERROR_INVALID_VALUE, "PE 1 passed", "not in its symmetric heap");
      if (me == 0) {  // PE 0 frees while the others allocate
        PE_EXPECT_ERROR(heap.free(a, "gshmem_free"), GSHMEM_ERROR_MISMATCH, "not in the same collective heap call");
      } else {
        PE_EXPECT_ERROR(heap.allocate(64, 0, "gshmem_malloc"), GSHMEM_ERROR_MISMATCH,
                        "not in the same collective heap call");
      }
      PE_EXPECT_ERROR(heap.allocate(100u << 20, 0, "gshmem_malloc"), GSHMEM_ERROR_OUT_OF_MEMORY,
                      "gshmem_malloc(size=104857600)", "GSHMEM_MAX_HEAP_SIZE=64M");
      void* d = heap.allocate(4096, 0, "gshmem_malloc");
      PE_CHECK(d != nullptr, "allocation after errors failed");

      // 5. Free everything.
      heap.free(d, "gshmem_free");
      heap.free(c, "gshmem_free");
      for (auto* b : blocks) heap.free(b, "gshmem_free");
      heap.free(a, "gshmem_free");
      PE_CHECK(heap.usage().allocations == 0 && heap.usage().used == 0, "allocations left");
    }
    const int fds_after = fd_count();
    PE_CHECK(fds_after == fds_before, "%d fds open before, %d after", fds_before, fds_after);
  });
  ASSERT_EQ(codes.size(), static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) EXPECT_EQ(codes[r], 0) << "PE " << r << " failed (see its output above)";
  EXPECT_EQ(dir_listing("/dev/shm"), shm_before);
}

TEST(HeapHost, ForkedPesWithDifferentSettingsAllFail) {
  auto codes = run_pes(2, [&](PipeBootstrap& boot) {
    const int me = boot.rank();
    bs::FdExchange fdx(boot.secret(), me, iota_pes(2), all_pids(boot));
    PE_EXPECT_ERROR(SymmetricHeap(host_params(me, 2, me == 0 ? 1u << 20 : 2u << 20, 64u << 20), boot, fdx),
                    GSHMEM_ERROR_MISMATCH, "different heap settings", "GSHMEM_SYMMETRIC_SIZE=1M",
                    "GSHMEM_SYMMETRIC_SIZE=2M");
  });
  for (int c : codes) EXPECT_EQ(c, 0);
}

TEST(HeapHost, ForkedPesOnTwoNodesMapOnlyTheirOwn) {
  // 4 PEs as if on 2 nodes of 2: each heap maps only the local peer's copy; the others are nullptr.
  auto codes = run_pes(4, [&](PipeBootstrap& boot) {
    const int me = boot.rank();
    std::vector<int> local = me < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
    bs::FdExchange fdx(boot.secret(), me, local, all_pids(boot));
    Params p = host_params(me, 4, 64 * 1024, 16u << 20);
    p.local_pes = local;
    SymmetricHeap heap(p, boot, fdx);
    auto* a = static_cast<int*>(heap.allocate(sizeof(int) * 1024, 0, "gshmem_malloc"));
    a[1023] = 1000 + me;
    auto* big = static_cast<int*>(heap.allocate(1u << 20, 0, "gshmem_malloc"));  // grows
    big[0] = 2000 + me;
    boot.barrier();
    for (int pe = 0; pe < 4; ++pe) {
      bool is_local = std::find(local.begin(), local.end(), pe) != local.end();
      PE_CHECK((heap.peer_bases()[pe] != nullptr) == is_local, "peer base of PE %d", pe);
      if (!is_local) {
        PE_CHECK(heap.peer_ptr(a, pe) == nullptr, "PE %d is not local", pe);
        continue;
      }
      PE_CHECK(static_cast<int*>(heap.peer_ptr(a, pe))[1023] == 1000 + pe, "PE %d's copy", pe);
      PE_CHECK(static_cast<int*>(heap.peer_ptr(big, pe))[0] == 2000 + pe, "PE %d's grown copy", pe);
    }
    boot.barrier();
  });
  for (int c : codes) EXPECT_EQ(c, 0);
}

// ------------------------------------------------------------------------------------------------------------
// CUDA VMM backing (GPU machines only; every CUDA call happens in a forked PE so this process never
// initialises CUDA and can keep forking).

#ifdef GSHMEM_HAVE_CUDA
int visible_gpus_in_child() {
  auto codes = run_pes(1, [](PipeBootstrap&) {
    int count = 0;
    const gshmem::cuda::Driver* d = gshmem::cuda::driver();
    if (d) d->cuDeviceGetCount(&count);
    _exit(std::min(count, 60));
  });
  return codes.empty() ? 0 : codes[0];
}

#define CUDA_OK(call)                                                                           \
  do {                                                                                          \
    cudaError_t e_ = (call);                                                                    \
    PE_CHECK(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));                      \
  } while (0)

Params cuda_params(int rank, int n, int device) {
  Params p = host_params(rank, n, 32u << 20, 4ull << 30);
  p.backing = Backing::Cuda;
  p.device = device;
  return p;
}

// One heap's life on n GPU PEs: each PE writes its copy (in the initial chunk and in a grown one), then reads
// every local PE's copy through peer_ptr.
void cuda_heap_round(PipeBootstrap& boot, int n, int dev) {
  const int me = boot.rank();
  bs::FdExchange fdx(boot.secret(), me, iota_pes(n), all_pids(boot));
  SymmetricHeap heap(cuda_params(me, n, dev), boot, fdx);
  PE_CHECK(reinterpret_cast<std::uintptr_t>(heap.base()) % (2u << 20) == 0, "base not 2 MiB aligned");
  const std::size_t initial = heap.size();
  PE_CHECK(initial >= (32u << 20), "initial size %zu", initial);
  const std::size_t na = 1u << 20;
  std::vector<unsigned char> host(na), back(na);
  for (std::size_t i = 0; i < na; ++i) host[i] = pattern(me, i);
  void* a = heap.allocate(na, 0, "gshmem_malloc");
  CUDA_OK(cudaMemcpy(a, host.data(), na, cudaMemcpyHostToDevice));
  const std::size_t nb = 100u << 20;  // beyond the initial size: a new chunk
  void* b = heap.allocate(nb, 0, "gshmem_malloc");
  PE_CHECK(heap.size() > initial && heap.contains(b, nb), "heap did not grow: %zu", heap.size());
  void* b_end = static_cast<char*>(b) + nb - na;
  CUDA_OK(cudaMemcpy(b_end, host.data(), na, cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());
  boot.barrier();
  for (int pe = 0; pe < n; ++pe) {
    for (void* p : {a, b_end}) {
      std::fill(back.begin(), back.end(), 0);
      CUDA_OK(cudaMemcpy(back.data(), heap.peer_ptr(p, pe), na, cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < na; i += 997)
        PE_CHECK(back[i] == pattern(pe, i), "PE %d's GPU copy byte %zu is %d", pe, i, back[i]);
    }
  }
  boot.barrier();  // nobody unmaps while a peer still reads
  heap.free(b, "gshmem_free");
  heap.free(a, "gshmem_free");
}

TEST(HeapCuda, PesShareGpuMemoryAndGrow) {
  const int gpus = visible_gpus_in_child();
  if (gpus == 0) GTEST_SKIP() << "no GPU visible";
  for (int n : {1, 2}) {
    auto codes = run_pes(n, [&](PipeBootstrap& boot) {
      const int dev = boot.rank() % gpus;
      CUDA_OK(cudaSetDevice(dev));
      CUDA_OK(cudaFree(nullptr));
      // Two rounds: the driver may open files of its own the first time; a leak shows as a difference.
      int fds[2] = {0, 0};
      for (int round = 0; round < 2; ++round) {
        cuda_heap_round(boot, n, dev);
        fds[round] = fd_count();
      }
      PE_CHECK(fds[0] == fds[1], "%d fds open after the first heap, %d after the second", fds[0], fds[1]);
    });
    ASSERT_EQ(codes.size(), static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) EXPECT_EQ(codes[r], 0) << n << " PEs: PE " << r << " failed (see its output)";
  }
}

// Growth on a nearly full GPU: doubling does not fit, so the heap grows by just what is needed; a request the GPU
// cannot hold is OUT_OF_MEMORY on every PE, and the heap stays usable.
TEST(HeapCuda, GrowthFallsBackThenReportsOutOfMemory) {
  const int gpus = visible_gpus_in_child();
  if (gpus == 0) GTEST_SKIP() << "no GPU visible";
  const int n = std::min(gpus, 2);  // one GPU per PE: each PE may take most of its GPU
  auto codes = run_pes(n, [&](PipeBootstrap& boot) {
    const int me = boot.rank();
    CUDA_OK(cudaSetDevice(me));
    std::size_t free_b = 0, total_b = 0;
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    // Every PE must ask for the same sizes: agree on the smallest GPU.
    std::vector<std::size_t> totals(static_cast<std::size_t>(n));
    boot.allgather(&free_b, totals.data(), sizeof free_b);
    const std::size_t gpu = *std::min_element(totals.begin(), totals.end());
    bs::FdExchange fdx(boot.secret(), me, iota_pes(n), all_pids(boot));
    Params p = cuda_params(me, n, me);
    p.max_size = 4 * gpu;
    SymmetricHeap heap(p, boot, fdx);
    void* big = heap.allocate(gpu / 100 * 55, 0, "gshmem_malloc");  // 55%: doubling this would not fit
    void* more = heap.allocate(64u << 20, 0, "gshmem_malloc");       // wants 110%, falls back
    PE_CHECK(big && more && heap.size() < gpu, "heap %zu bytes on a GPU with %zu free", heap.size(), gpu);
    CUDA_OK(cudaMemset(more, 1, 64u << 20));
    CUDA_OK(cudaDeviceSynchronize());
    PE_EXPECT_ERROR(heap.allocate(gpu / 2 * 3, 0, "gshmem_malloc"), GSHMEM_ERROR_OUT_OF_MEMORY, "gshmem_malloc(size=",
                    "cuMemCreate", "could not grow");
    void* small = heap.allocate(4096, 0, "gshmem_malloc");
    PE_CHECK(small != nullptr, "allocation after out-of-memory failed");
    boot.barrier();
  });
  ASSERT_EQ(codes.size(), static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) EXPECT_EQ(codes[r], 0) << "PE " << r << " failed (see its output)";
}
#endif

}  // namespace
