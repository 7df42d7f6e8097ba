// mp_register_symmetric: gshmemx_buffer_register_symmetric / _unregister_symmetric on CPU PEs (NVSHMEM's
// nvshmemx_buffer_register_symmetric): each PE's own MAP_SHARED memfd buffer becomes one symmetric object; puts,
// gets, atomics and put+signal from every PE land in the owner's own mapping of its buffer, exactly; heap growth
// and a second registration keep every address symmetric; unregistering makes the address unknown again; bad
// inputs are errors on every PE naming the call, the cause and the fix. The GPU counterpart: register_symmetric_gpu.cu.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "harness.hpp"

using namespace mpt;

namespace {

// A buffer the program made shareable: memfd + MAP_SHARED, `pages` pages.
struct SharedBuffer {
  int fd = -1;
  void* p = nullptr;
  std::size_t bytes = 0;
  explicit SharedBuffer(std::size_t pages, bool keep_fd = true) {
    bytes = pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    fd = memfd_create("mp_register_symmetric", MFD_CLOEXEC);
    require(fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) == 0, "memfd_create + ftruncate");
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    require(p != MAP_FAILED, "mmap MAP_SHARED");
    if (!keep_fd) {
      close(fd);
      fd = -1;
    }
  }
  ~SharedBuffer() {
    munmap(p, bytes);
    if (fd >= 0) close(fd);
  }
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;
};

std::size_t page() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

MPT_CASE(put_get_signal) {
  const int n = npes(), my = me(), next = (my + 1) % n, prev = (my + n - 1) % n;
  const std::size_t N = static_cast<std::size_t>(n);
  const std::uint64_t tag = tag_of("put_get_signal");
  SharedBuffer buf(4);
  auto* own = static_cast<unsigned char*>(buf.p);
  auto* sym = static_cast<unsigned char*>(gshmemx_buffer_register_symmetric(buf.p, buf.bytes, 0));
  require(sym != nullptr, gshmemx_last_error());
  MPT_CHECK(gshmem_ptr(sym, my) == sym);
  for (int p = 0; p < n; ++p) MPT_CHECK(gshmem_ptr(sym, p) != nullptr) << "pe" << p;
  // Layout of the region: [0, B) data put by the previous PE, then N words for fetch_add, then a signal word.
  const std::size_t B = 3 * page() + 123;  // crosses pages, odd length
  auto* words = reinterpret_cast<std::uint64_t*>(own + 3 * page() + 128);
  auto* sym_words = reinterpret_cast<std::uint64_t*>(sym + 3 * page() + 128);
  auto* sig = words + N;
  auto* sym_sig = sym_words + N;
  for (int round = 0; round < scaled(4); ++round) {
    std::vector<unsigned char> mine(B), want(B);
    for (std::size_t i = 0; i < B; ++i) {
      mine[i] = static_cast<unsigned char>(rnd(tag, static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(my), i));
      want[i] = static_cast<unsigned char>(rnd(tag, static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(prev), i));
    }
    poison_of(own, want.data(), B);  // through the program's own mapping
    std::memset(words, 0, (N + 1) * sizeof(std::uint64_t));
    gshmem_barrier_all();
    // put + signal into the next PE's region, a fetch_add into every PE's word [my]
    gshmem_putmem_signal(sym, mine.data(), B, sym_sig, static_cast<std::uint64_t>(round) + 1, GSHMEM_SIGNAL_SET, next);
    for (int t = 0; t < n; ++t)
      gshmem_uint64_atomic_fetch_add(sym_words + my, rnd(tag, 99, static_cast<std::uint64_t>(my)) + 1, t);
    gshmem_signal_wait_until(sym_sig, GSHMEM_CMP_EQ, static_cast<std::uint64_t>(round) + 1);
    MPT_CHECK_MEM("data put by the previous PE, in my own mapping", own, want.data(), B);
    MPT_CHECK_EQ(*sig, static_cast<std::uint64_t>(round) + 1);
    gshmem_barrier_all();
    for (int p = 0; p < n; ++p) MPT_CHECK_EQ(words[p], rnd(tag, 99, static_cast<std::uint64_t>(p)) + 1);
    // get the next PE's region (what I put there) back, into a poisoned private buffer
    std::vector<unsigned char> got(B);
    poison_of(got.data(), mine.data(), B);
    gshmem_getmem(got.data(), sym, B, next);
    MPT_CHECK_MEM("get from the next PE's registered region", got.data(), mine.data(), B);
    gshmem_barrier_all();
  }
  MPT_CHECK_STATUS(gshmemx_buffer_unregister_symmetric(sym, buf.bytes), GSHMEM_SUCCESS, "");
  MPT_CHECK(gshmem_ptr(sym, my) == nullptr) << "the address is unknown after unregistering";
}

// Two registrations and heap growth in between: every address stays symmetric and each region its own memory.
MPT_CASE(two_regions_and_growth) {
  const int n = npes(), my = me(), next = (my + 1) % n, prev = (my + n - 1) % n;
  const std::uint64_t tag = tag_of("two_regions_and_growth");
  SharedBuffer a(2), b(1, /*keep_fd=*/true);
  auto* sa = static_cast<std::uint64_t*>(gshmemx_buffer_register_symmetric(a.p, a.bytes, 0));
  require(sa != nullptr, gshmemx_last_error());
  void* big = gshmem_malloc(std::size_t(8) << 20);  // heap growth while a region sits above the heap
  require(big != nullptr, "gshmem_malloc");
  auto* sb = static_cast<std::uint64_t*>(gshmemx_buffer_register_symmetric(b.p, b.bytes, 0));
  require(sb != nullptr, gshmemx_last_error());
  MPT_CHECK(sa != sb);
  const std::uint64_t va = rnd(tag, 1, static_cast<std::uint64_t>(my)), vb = rnd(tag, 2, static_cast<std::uint64_t>(my));
  static_cast<std::uint64_t*>(a.p)[5] = ~rnd(tag, 1, static_cast<std::uint64_t>(prev));
  static_cast<std::uint64_t*>(b.p)[7] = ~rnd(tag, 2, static_cast<std::uint64_t>(prev));
  gshmem_barrier_all();
  gshmem_uint64_p(sa + 5, va, next);
  gshmem_uint64_p(sb + 7, vb, next);
  gshmem_barrier_all();
  MPT_CHECK_EQ(static_cast<std::uint64_t*>(a.p)[5], rnd(tag, 1, static_cast<std::uint64_t>(prev)));
  MPT_CHECK_EQ(static_cast<std::uint64_t*>(b.p)[7], rnd(tag, 2, static_cast<std::uint64_t>(prev)));
  MPT_CHECK_EQ(gshmem_uint64_g(sb + 7, prev), rnd(tag, 2, static_cast<std::uint64_t>((prev + n - 1) % n)));
  MPT_CHECK_STATUS(gshmemx_buffer_unregister_symmetric(sa, a.bytes), GSHMEM_SUCCESS, "");
  // b still works after a is gone
  gshmem_uint64_p(sb + 8, va, next);
  gshmem_barrier_all();
  MPT_CHECK_EQ(static_cast<std::uint64_t*>(b.p)[8], rnd(tag, 1, static_cast<std::uint64_t>(prev)));
  MPT_CHECK_STATUS(gshmemx_buffer_unregister_symmetric(sb, b.bytes), GSHMEM_SUCCESS, "");
  gshmem_free(big);
}

// Every bad input is an error on every PE (so no PE waits), naming the call and the fix; the heap stays usable.
MPT_CASE(bad_inputs) {
  const int my = me();
  const char* reg = "gshmemx_buffer_register_symmetric";
  auto expect_null = [&](void* got, const char* must_mention) {
    MPT_CHECK(got == nullptr) << "registration should have failed";
    MPT_CHECK(std::strstr(gshmemx_last_error(), reg) != nullptr) << gshmemx_last_error();
    MPT_CHECK(std::strstr(gshmemx_last_error(), must_mention) != nullptr)
        << "want" << must_mention << "in" << gshmemx_last_error();
  };
  // private memory (malloc) on every PE
  std::vector<unsigned char> priv(3 * page());
  void* aligned = priv.data() + (page() - reinterpret_cast<std::uintptr_t>(priv.data()) % page()) % page();
  expect_null(gshmemx_buffer_register_symmetric(aligned, page(), 0), "MAP_SHARED");
  // private memory on one PE only: still an error everywhere
  {
    SharedBuffer s(1);
    expect_null(gshmemx_buffer_register_symmetric(my == 0 ? aligned : s.p, page(), 0), "PE 0");
  }
  expect_null(gshmemx_buffer_register_symmetric(nullptr, page(), 0), "NULL");
  SharedBuffer s(2);
  expect_null(gshmemx_buffer_register_symmetric(s.p, 0, 0), "size=0");
  expect_null(gshmemx_buffer_register_symmetric(s.p, page() + 8, 0), "granularity");
  expect_null(gshmemx_buffer_register_symmetric(static_cast<char*>(s.p) + 8, page(), 0), "granularity");
  expect_null(gshmemx_buffer_register_symmetric(s.p, page(), 1), "flags");
  expect_null(gshmemx_buffer_register_symmetric(s.p, 4 * page(), 0), "runs past");
  if (npes() > 1) expect_null(gshmemx_buffer_register_symmetric(s.p, (my == 0 ? 2 : 1) * page(), 0), "different sizes");
  // unregister: unknown address, heap memory, wrong size, NULL
  const char* unreg = "gshmemx_buffer_unregister_symmetric";
  MPT_CHECK_STATUS(gshmemx_buffer_unregister_symmetric(s.p, s.bytes), GSHMEM_ERROR_INVALID_VALUE, unreg);
  MPT_CHECK_STATUS(gshmemx_buffer_unregister_symmetric(nullptr, s.bytes), GSHMEM_ERROR_INVALID_VALUE, "NULL");
  void* heap = gshmem_malloc(page());
  MPT_CHECK_STATUS(gshmemx_buffer_unregister_symmetric(heap, page()), GSHMEM_ERROR_INVALID_VALUE,
                   "not a registered symmetric buffer");
  void* sym = gshmemx_buffer_register_symmetric(s.p, s.bytes, 0);
  MPT_CHECK(sym != nullptr) << gshmemx_last_error();
  MPT_CHECK_STATUS(gshmemx_buffer_unregister_symmetric(sym, page()), GSHMEM_ERROR_INVALID_VALUE, "registered with");
  MPT_CHECK_STATUS(gshmemx_buffer_unregister_symmetric(sym, s.bytes), GSHMEM_SUCCESS, "");
  MPT_CHECK_STATUS(gshmemx_buffer_unregister_symmetric(sym, s.bytes), GSHMEM_ERROR_INVALID_VALUE,
                   "unregistered already");
  gshmem_free(heap);
}

}  // namespace

int main(int argc, char** argv) { return mpt::main(argc, argv); }
