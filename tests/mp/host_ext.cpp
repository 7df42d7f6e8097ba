// mp_host_ext: host calls added for NVSHMEM compatibility, on CPU PEs in CI and on GPU PEs (label gpu):
//   gshmem_realloc (NULL, grow, shrink, size 0; contents from every PE kept), gshmem_put<N>_signal[_nbi] (SET and
//   ADD, every size), gshmemx_buffer_register / unregister / unregister_all (bookkeeping and its errors, and a put
//   from a registered buffer), gshmem_query_thread, gshmemx_mc_ptr, gshmemx_set_attr_mpi_comm_args,
//   gshmemx_init_init_attr_ver_only.
#include <cstdlib>
#include <vector>

#include "harness.hpp"

using namespace mpt;

namespace {

MPT_CASE(realloc) {
  const int n = npes(), my = me(), right = (my + 1) % n, left = (my + n - 1) % n;
  const std::uint64_t tag = tag_of("realloc");
  // every PE writes its slice of the right PE's object; the object then changes size several times
  const std::size_t slice = 37;
  std::size_t count = slice * static_cast<std::size_t>(n);
  gshmemx_heap_usage_t before{};
  MPT_CHECK_STATUS(gshmemx_heap_usage(&before), GSHMEM_SUCCESS, "");
  auto* p = static_cast<std::uint32_t*>(gshmem_realloc(nullptr, count * sizeof(std::uint32_t)));
  require(p != nullptr, "gshmem_realloc(NULL, size)");
  std::vector<std::uint32_t> mine(slice);
  for (std::size_t i = 0; i < slice; ++i) mine[i] = gen<std::uint32_t>(tag, static_cast<std::uint64_t>(my), i);
  gshmem_barrier_all();
  gshmem_putmem(p + static_cast<std::size_t>(my) * slice, mine.data(), slice * sizeof(std::uint32_t), right);
  gshmem_barrier_all();
  // what PE `left` wrote into slot left is in my object; every other slot is what its writer PE wrote (the writer
  // of slot q is PE q, into its right neighbour): only slot `left` is written here.
  std::size_t kept = count;
  for (std::size_t bytes : {count * 4 * 8, std::size_t{40}, count * 4 * 3, std::size_t{8}, count * 4 + 4}) {
    const std::size_t elems = bytes / sizeof(std::uint32_t);
    auto* q = static_cast<std::uint32_t*>(gshmem_realloc(p, bytes));
    require(q != nullptr, "gshmem_realloc");
    kept = std::min(kept, elems);
    const std::size_t lo = static_cast<std::size_t>(left) * slice;
    if (lo < kept) {
      const std::size_t cnt = std::min(slice, kept - lo);
      std::vector<std::uint32_t> got(cnt), want(cnt);
      local_read(got.data(), q + lo, cnt * sizeof(std::uint32_t));
      for (std::size_t i = 0; i < cnt; ++i) want[i] = gen<std::uint32_t>(tag, static_cast<std::uint64_t>(left), i);
      MPT_CHECK_ARRAY("contents after gshmem_realloc to " + std::to_string(bytes) + " bytes", got.data(), want.data(),
                      cnt);
    }
    // the new object is symmetric: a put into its last element reaches the right PE
    std::uint32_t last = 0xC0DE0000u + static_cast<std::uint32_t>(my);
    gshmem_barrier_all();
    gshmem_putmem(q + elems - 1, &last, sizeof last, right);
    gshmem_barrier_all();
    MPT_CHECK_EQ(local_get(q + elems - 1), 0xC0DE0000u + static_cast<std::uint32_t>(left));
    gshmem_barrier_all();
    if (elems - 1 < kept) kept = elems - 1;  // that element no longer holds the original data
    p = q;
  }
  MPT_CHECK(gshmem_realloc(p, 0) == nullptr) << "gshmem_realloc(p, 0) must free and return NULL";
  gshmemx_heap_usage_t u{};
  MPT_CHECK_STATUS(gshmemx_heap_usage(&u), GSHMEM_SUCCESS, "");
  MPT_CHECK_EQ(u.allocations, before.allocations);  // every object realloc moved from was freed
  gshmem_barrier_all();
}

template <int BITS>
void sized_signal_round(std::uint64_t tag, int round) {
  constexpr std::size_t esize = BITS / 8;
  const int n = npes(), my = me(), right = (my + 1) % n, left = (my + n - 1) % n;
  const std::size_t nelems = 1 + rnd(tag, BITS, round) % 200;
  auto* dst = static_cast<unsigned char*>(gshmem_malloc((nelems + 4) * esize));
  auto* src = static_cast<unsigned char*>(gshmem_malloc(nelems * esize));
  auto* sig = static_cast<std::uint64_t*>(gshmem_malloc(sizeof(std::uint64_t)));
  std::vector<unsigned char> mine(nelems * esize), want((nelems + 4) * esize), pois((nelems + 4) * esize);
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<unsigned char>(rnd(tag, my, round, i * 7 + BITS));
  for (std::size_t i = 0; i < nelems * esize; ++i)
    want[i] = static_cast<unsigned char>(rnd(tag, left, round, i * 7 + BITS));
  poison_of(pois.data(), want.data(), want.size());
  for (std::size_t i = nelems * esize; i < want.size(); ++i) want[i] = pois[i];  // past the end: untouched
  local_write(src, mine.data(), mine.size());
  local_write(dst, pois.data(), pois.size());
  local_set<std::uint64_t>(sig, round % 2 ? 5 : 0);
  gshmem_barrier_all();
  const std::uint64_t v = 1 + rnd(tag, BITS, round, 99) % 1000;
  const bool add = round % 2 == 1, nbi = round >= 2;
  const int op = add ? GSHMEM_SIGNAL_ADD : GSHMEM_SIGNAL_SET;
  if constexpr (BITS == 8)
    (nbi ? gshmem_put8_signal_nbi : gshmem_put8_signal)(dst, src, nelems, sig, v, op, right);
  else if constexpr (BITS == 16)
    (nbi ? gshmem_put16_signal_nbi : gshmem_put16_signal)(dst, src, nelems, sig, v, op, right);
  else if constexpr (BITS == 32)
    (nbi ? gshmem_put32_signal_nbi : gshmem_put32_signal)(dst, src, nelems, sig, v, op, right);
  else if constexpr (BITS == 64)
    (nbi ? gshmem_put64_signal_nbi : gshmem_put64_signal)(dst, src, nelems, sig, v, op, right);
  else
    (nbi ? gshmem_put128_signal_nbi : gshmem_put128_signal)(dst, src, nelems, sig, v, op, right);
  const std::uint64_t want_sig = add ? 5 + v : v;
  (void)gshmem_signal_wait_until(sig, GSHMEM_CMP_EQ, want_sig);  // v is the same on every PE
  std::vector<unsigned char> got(want.size());
  local_read(got.data(), dst, got.size());
  MPT_CHECK_MEM("gshmem_put" + std::to_string(BITS) + "_signal" + (nbi ? "_nbi" : "") + (add ? " ADD" : " SET"),
                got.data(), want.data(), got.size());
  MPT_CHECK_EQ(gshmem_signal_fetch(sig), want_sig);
  gshmem_barrier_all();
  gshmem_free(sig);
  gshmem_free(src);
  gshmem_free(dst);
}

MPT_CASE(sized_put_signal) {
  const std::uint64_t tag = tag_of("sized_put_signal");
  for (int round = 0; round < 4; ++round) {
    sized_signal_round<8>(tag, round);
    sized_signal_round<16>(tag, round);
    sized_signal_round<32>(tag, round);
    sized_signal_round<64>(tag, round);
    sized_signal_round<128>(tag, round);
  }
}

MPT_CASE(buffer_register) {
  const int n = npes(), my = me(), right = (my + 1) % n, left = (my + n - 1) % n;
  const std::uint64_t tag = tag_of("buffer_register");
  std::vector<unsigned char> host(4096);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(rnd(tag, my, i));
  MPT_CHECK_STATUS(gshmemx_buffer_register(host.data(), host.size()), GSHMEM_SUCCESS, "");
  // bad input: overlap (inside, straddling the start, the same range), NULL, zero length, symmetric heap memory
  MPT_CHECK_STATUS(gshmemx_buffer_register(host.data() + 100, 10), GSHMEM_ERROR_INVALID_VALUE, "overlaps");
  std::vector<unsigned char> other(8192);
  MPT_CHECK_STATUS(gshmemx_buffer_register(other.data(), other.size()), GSHMEM_SUCCESS, "");
  MPT_CHECK_STATUS(gshmemx_buffer_register(host.data(), host.size()), GSHMEM_ERROR_INVALID_VALUE,
                   "gshmemx_buffer_register");
  MPT_CHECK_STATUS(gshmemx_buffer_register(nullptr, 16), GSHMEM_ERROR_INVALID_VALUE, "non-zero");
  MPT_CHECK_STATUS(gshmemx_buffer_register(host.data() + 4096, 0), GSHMEM_ERROR_INVALID_VALUE, "non-zero");
  auto* sym = static_cast<unsigned char*>(gshmem_malloc(host.size()));
  MPT_CHECK_STATUS(gshmemx_buffer_register(sym, 64), GSHMEM_ERROR_INVALID_VALUE, "symmetric heap");
  // a put from the registered buffer
  std::vector<unsigned char> pois(host.size());
  std::vector<unsigned char> want(host.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<unsigned char>(rnd(tag, left, i));
  poison_of(pois.data(), want.data(), pois.size());
  local_write(sym, pois.data(), pois.size());
  gshmem_barrier_all();
  gshmem_putmem(sym, host.data(), host.size(), right);
  gshmem_barrier_all();
  std::vector<unsigned char> got(host.size());
  local_read(got.data(), sym, got.size());
  MPT_CHECK_MEM("putmem from a registered buffer", got.data(), want.data(), got.size());
  // unregister: only starts of registrations, once
  MPT_CHECK_STATUS(gshmemx_buffer_unregister(host.data() + 1), GSHMEM_ERROR_INVALID_VALUE,
                   "not the start of a registered buffer");
  MPT_CHECK_STATUS(gshmemx_buffer_unregister(host.data()), GSHMEM_SUCCESS, "");
  MPT_CHECK_STATUS(gshmemx_buffer_unregister(host.data()), GSHMEM_ERROR_INVALID_VALUE, "gshmemx_buffer_unregister");
  MPT_CHECK_STATUS(gshmemx_buffer_register(host.data() + 100, 10), GSHMEM_SUCCESS, "");  // free again
  gshmemx_buffer_unregister_all();
  MPT_CHECK_STATUS(gshmemx_buffer_unregister(other.data()), GSHMEM_ERROR_INVALID_VALUE, "gshmemx_buffer_unregister");
  MPT_CHECK_STATUS(gshmemx_buffer_register(other.data(), other.size()), GSHMEM_SUCCESS, "");
  gshmemx_buffer_unregister_all();
  gshmem_barrier_all();
  gshmem_free(sym);
}

MPT_CASE(queries) {
  int level = -1;
  gshmem_query_thread(&level);
  MPT_CHECK_EQ(level, static_cast<int>(GSHMEM_THREAD_SERIALIZED));
  MPT_CHECK(gshmemx_mc_ptr(GSHMEM_TEAM_WORLD, nullptr) == nullptr) << "no multicast: NULL";
  auto* sym = static_cast<int*>(gshmem_malloc(64));
  MPT_CHECK(gshmemx_mc_ptr(GSHMEM_TEAM_WORLD, sym) == nullptr) << "no multicast: NULL";
  gshmem_free(sym);
  gshmemx_init_attr_t attr;
  std::memset(&attr, 0, sizeof attr);
  gshmemx_init_init_attr_ver_only(attr);
  MPT_CHECK_EQ(attr.version, GSHMEMX_INIT_ATTR_VERSION);
  int comm = 0;
  MPT_CHECK_STATUS(gshmemx_set_attr_mpi_comm_args(&comm, &attr), GSHMEM_SUCCESS, "");
  MPT_CHECK(attr.mpi_comm == &comm) << "gshmemx_set_attr_mpi_comm_args sets mpi_comm";
  MPT_CHECK_STATUS(gshmemx_set_attr_mpi_comm_args(&comm, nullptr), GSHMEM_ERROR_INVALID_VALUE,
                   "gshmemx_set_attr_mpi_comm_args");
  MPT_CHECK_STATUS(gshmemx_cumodule_init(nullptr), GSHMEM_ERROR_INVALID_VALUE, "gshmemx_cumodule_init");
  MPT_CHECK_STATUS(gshmemx_culibrary_finalize(nullptr), GSHMEM_ERROR_INVALID_VALUE, "gshmemx_culibrary_finalize");
}

}  // namespace

int main(int argc, char** argv) {
  return mpt::main(argc, argv);
}
