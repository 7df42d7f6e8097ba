// mp_cxx_api: the C++ RAII API (gshmem.hpp): Context, Buffer<T>, Team, atomics, UniqueId, gshmem::Error, on
// any number of PEs. Errors are exceptions here, so bad inputs are checked in-process: each must throw
// gshmem::Error with the right status and a message naming the call, and the job must go on working after it.
#include <cinttypes>
#include <optional>
#include <string>
#include <vector>

#include "gshmem/gshmem.hpp"
#include "harness.hpp"

using namespace mpt;

namespace {

template <typename F>
void expect_error(const char* what, int status, const char* must_mention, F&& f) {
  try {
    f();
    MPT_CHECK(false) << what << ": no gshmem::Error thrown";
  } catch (const gshmem::Error& e) {
    MPT_CHECK(e.status() == status) << what << ": status" << e.status() << "want" << status << ":" << e.what();
    MPT_CHECK(std::strstr(e.what(), must_mention) != nullptr)
        << what << ": message does not mention" << must_mention << ":" << e.what();
  } catch (const std::exception& e) {
    MPT_CHECK(false) << what << ": threw something other than gshmem::Error:" << e.what();
  }
}

template <typename T>
void buffer_roundtrip(const gshmem::Context& ctx, std::uint64_t tag) {
  const int n = ctx.n_pes(), my = ctx.my_pe();
  const std::size_t E = 41, N = static_cast<std::size_t>(n);
  gshmem::Buffer<T> b(ctx, N * E);
  MPT_CHECK(b.data() != nullptr && b.size() == N * E);
  auto val = [&](int kind, int from, int to, std::size_t i) {
    return gen<T>(tag, static_cast<std::uint64_t>(kind), static_cast<std::uint64_t>(from * 4096 + to), i);
  };
  std::vector<T> src(E), got(N * E), want(N * E);
  for (int kind = 0; kind < 3; ++kind) {  // put, put_nbi + quiet, p
    for (int s = 0; s < n; ++s)
      for (std::size_t i = 0; i < E; ++i) want[static_cast<std::size_t>(s) * E + i] = val(kind, s, my, i);
    std::vector<T> pois(N * E);
    poison_of(pois.data(), want.data(), N * E * sizeof(T));
    b.put(pois.data(), N * E, my);
    ctx.barrier_all();
    for (int j = 0; j < n; ++j) {
      const int t = (my + j) % n;
      for (std::size_t i = 0; i < E; ++i) src[i] = val(kind, my, t, i);
      if (kind == 0) b.put(src.data(), E, t, static_cast<std::size_t>(my) * E);
      if (kind == 1) b.put_nbi(src.data(), E, t, static_cast<std::size_t>(my) * E);
      if (kind == 2)
        for (std::size_t i = 0; i < E; ++i) b.p(static_cast<std::size_t>(my) * E + i, src[i], t);
    }
    if (kind == 1) ctx.quiet();
    ctx.barrier_all();
    b.get(got.data(), N * E, my);
    MPT_CHECK_ARRAY(std::string("Buffer put kind ") + std::to_string(kind), got.data(), want.data(), N * E);
    // get and g from every PE: slot s of PE t holds val(kind, s, t)
    for (int j = 0; j < n; ++j) {
      const int t = (my + j) % n;
      std::vector<T> w(E), g(E);
      for (std::size_t i = 0; i < E; ++i) w[i] = val(kind, my, t, i);
      poison_of(g.data(), w.data(), E * sizeof(T));
      b.get(g.data(), E, t, static_cast<std::size_t>(my) * E);
      MPT_CHECK_ARRAY("Buffer get from PE " + std::to_string(t), g.data(), w.data(), E);
      const std::size_t i = static_cast<std::size_t>(kind) * 7 % E;
      T one = b.g(static_cast<std::size_t>(my) * E + i, t);
      MPT_CHECK(std::memcmp(&one, &w[i], sizeof(T)) == 0) << "Buffer::g from PE" << t;
    }
    ctx.barrier_all();
  }
}

void run(gshmem::Context& ctx) {
  const int n = ctx.n_pes(), my = ctx.my_pe();
  const std::uint64_t tag = tag_of("cxx");
  st().current = "context";
  MPT_CHECK_EQ(my, gshmem_my_pe());
  MPT_CHECK_EQ(n, gshmem_n_pes());
  MPT_CHECK(gshmem::host::initialized());
  MPT_CHECK_EQ(ctx.on_gpu(), ctx.device() >= 0);
  if (st().gpu == false) MPT_CHECK_EQ(ctx.device(), -1);

  st().current = "buffer";
  buffer_roundtrip<std::int32_t>(ctx, tag ^ 1);
  buffer_roundtrip<double>(ctx, tag ^ 2);
  buffer_roundtrip<std::uint8_t>(ctx, tag ^ 3);
  struct Pod {
    std::uint64_t a;
    std::int16_t b;
    char c[5];
  };
  buffer_roundtrip<Pod>(ctx, tag ^ 4);
  {
    const auto u0 = ctx.heap_usage();
    std::optional<gshmem::Buffer<double>> z;
    z.emplace(ctx, 5000, true);
    std::vector<double> v(5000, -1.0), zeros(5000, 0.0);
    z->get(v.data(), 5000, my);
    MPT_CHECK_ARRAY("Buffer(ctx, n, zero=true) is zeroed", v.data(), zeros.data(), 5000);
    MPT_CHECK_EQ(ctx.heap_usage().allocations, u0.allocations + 1);
    gshmem::Buffer<double> moved(std::move(*z));
    MPT_CHECK(z->data() == nullptr && z->size() == 0) << "moved-from Buffer still holds memory";
    MPT_CHECK(moved.size() == 5000);
    z.reset();  // destroying the moved-from buffer frees nothing
    MPT_CHECK_EQ(ctx.heap_usage().allocations, u0.allocations + 1);
    {
      gshmem::Buffer<double> other(ctx, 10);
      other = std::move(moved);  // frees other's 10 doubles, takes the 5000
      MPT_CHECK_EQ(ctx.heap_usage().allocations, u0.allocations + 1);
      MPT_CHECK(other.size() == 5000);
    }
    MPT_CHECK_EQ(ctx.heap_usage().allocations, u0.allocations);
    MPT_CHECK_EQ(ctx.heap_usage().used, u0.used);
  }
  {
    gshmem::Buffer<std::uint64_t> b(ctx, static_cast<std::size_t>(n));
    for (int pe = 0; pe < n; ++pe) MPT_CHECK(b.peer(pe) != nullptr) << "Buffer::peer(" << pe << ")";
    if (!ctx.on_gpu()) {
      MPT_CHECK(b.peer(my) == b.data());
      for (int pe = 0; pe < n; ++pe) b.peer(pe)[my] = rnd(tag, 9, static_cast<std::uint64_t>(my), static_cast<std::uint64_t>(pe));
      ctx.barrier_all();
      for (int pe = 0; pe < n; ++pe)
        MPT_CHECK_EQ(b.data()[pe], rnd(tag, 9, static_cast<std::uint64_t>(pe), static_cast<std::uint64_t>(my)));
    }
    ctx.barrier_all();
  }

  st().current = "atomics";
  {
    gshmem::Buffer<std::uint64_t> c(ctx, 2, true);
    gshmem::Buffer<std::int32_t> cas(ctx, 1, true);
    const int K = scaled(20, 4);
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < n; ++j) gshmem::atomic_fetch_add<std::uint64_t>(c.data(), rnd(tag, 20, static_cast<std::uint64_t>(my), static_cast<std::uint64_t>(k)) % 1000, (my + j) % n);
    const std::int32_t old = gshmem::atomic_compare_swap<std::int32_t>(cas.data(), 0, my + 1, 0);
    ctx.barrier_all();
    std::uint64_t want = 0;
    for (int p = 0; p < n; ++p)
      for (int k = 0; k < K; ++k) want += rnd(tag, 20, static_cast<std::uint64_t>(p), static_cast<std::uint64_t>(k)) % 1000;
    MPT_CHECK_EQ(c.g(0, my), want);
    // compare_swap race on PE 0: one winner (old 0); the others saw the winner's value, which remains
    gshmem::Buffer<std::int32_t> olds(ctx, static_cast<std::size_t>(n));
    olds.p(static_cast<std::size_t>(my), old, 0);
    ctx.barrier_all();
    if (my == 0) {
      std::vector<std::int32_t> o(static_cast<std::size_t>(n));
      olds.get(o.data(), static_cast<std::size_t>(n), 0);
      const std::int32_t fin = cas.g(0, 0);
      int winners = 0;
      for (int p = 0; p < n; ++p) {
        if (o[static_cast<std::size_t>(p)] == 0) {
          ++winners;
          MPT_CHECK_EQ(fin, p + 1);
        } else {
          MPT_CHECK_EQ(o[static_cast<std::size_t>(p)], fin);
        }
      }
      MPT_CHECK_EQ(winners, 1);
    }
    ctx.barrier_all();
  }

  st().current = "teams";
  {
    gshmem::Team w = gshmem::Team::world();
    MPT_CHECK_EQ(w.my_pe(), my);
    MPT_CHECK_EQ(w.n_pes(), n);
    MPT_CHECK_EQ(gshmem::Team::node().n_pes(), n);
    MPT_CHECK_EQ(gshmem::Team::shared().my_pe(), my);
    gshmem::Buffer<std::uint64_t> buf(ctx, static_cast<std::size_t>(n), true);
    for (int cycle = 0; cycle < (n <= 4 ? 80 : 70); ++cycle) {  // more than the team slots: RAII must free them
      gshmem::Team odd = w.split_strided(1 % n, 2, n / 2 > 0 ? n / 2 : 1);
      const bool member = n == 1 ? true : my % 2 == 1;
      MPT_CHECK_EQ(odd.valid(), member);
      if (member) {
        MPT_CHECK_EQ(odd.my_pe(), n == 1 ? 0 : my / 2);
        MPT_CHECK_EQ(odd.translate(odd.my_pe(), w), my);
        if (cycle % 20 == 0) {
          const int size = odd.n_pes();
          for (int i = 0; i < size; ++i) buf.p(static_cast<std::size_t>(my), static_cast<std::uint64_t>(cycle + 1), odd.translate(i, w));
          odd.barrier();
          for (int i = 0; i < size; ++i) MPT_CHECK_EQ(buf.g(static_cast<std::size_t>(odd.translate(i, w)), my), static_cast<std::uint64_t>(cycle + 1));
          odd.sync();
        }
      }
      if (cycle % 10 == 0) {
        auto [x, y] = w.split_2d(2);
        MPT_CHECK(x.valid() && y.valid());
        MPT_CHECK_EQ(x.my_pe(), my % 2);
        MPT_CHECK_EQ(y.my_pe(), my / 2);
        MPT_CHECK_EQ(y.translate(y.my_pe(), w), my);
        x.barrier();
        y.sync();
      }
      gshmem::Team moved = std::move(odd);
      MPT_CHECK(!odd.valid());
      MPT_CHECK_EQ(moved.valid(), member);
      ctx.sync_all();
    }
    ctx.barrier_all();
  }

  st().current = "errors";
  {
    gshmem::Buffer<int> b(ctx, 4);
    int v[4] = {1, 2, 3, 4};
    expect_error("Buffer::put to PE n_pes", GSHMEM_ERROR_INVALID_VALUE, "gshmem::Buffer::put", [&] { b.put(v, 1, n); });
    expect_error("Buffer::get from PE -1", GSHMEM_ERROR_INVALID_VALUE, "gshmem::Buffer::get", [&] { b.get(v, 1, -1); });
    expect_error("Team(4242).barrier()", GSHMEM_ERROR_INVALID_VALUE, "gshmem::Team::barrier",
                 [&] { gshmem::Team(4242).barrier(); });
    expect_error("host::putmem to a stack address", GSHMEM_ERROR_INVALID_VALUE, "my_put",
                 [&] { gshmem::host::putmem(v, v, sizeof v, 0, false, "my_put"); });
    expect_error("atomic on a misaligned address", GSHMEM_ERROR_INVALID_VALUE, "gshmem::atomic_fetch_add", [&] {
      gshmem::atomic_fetch_add<std::int32_t>(reinterpret_cast<std::int32_t*>(reinterpret_cast<char*>(b.data()) + 1), 1, 0);
    });
    if (!ctx.on_gpu()) {
      expect_error("Buffer::put_on_stream on a CPU PE", GSHMEM_ERROR_NOT_SUPPORTED, "gshmem::Buffer::put_on_stream",
                   [&] { b.put_on_stream(v, 1, 0, nullptr); });
      expect_error("Context::barrier_all_on_stream on a CPU PE", GSHMEM_ERROR_NOT_SUPPORTED, "CPU PE",
                   [&] { ctx.barrier_all_on_stream(nullptr); });
    }
    ctx.barrier_all();
    // the job still works after the errors
    b.p(0, my + 100, (my + 1) % n);
    ctx.barrier_all();
    MPT_CHECK_EQ(b.g(0, my), (my + n - 1) % n + 100);
    ctx.barrier_all();
  }
  st().current = "unique id";
  {
    MPT_CHECK_EQ(gshmem::UniqueId::size(), static_cast<std::size_t>(GSHMEMX_UNIQUEID_BYTES));
    gshmemx_uniqueid_t raw = GSHMEMX_UNIQUEID_INITIALIZER;
    std::memset(raw.internal, 0x5c, sizeof raw.internal);
    auto u = gshmem::UniqueId::from_bytes(&raw);
    MPT_CHECK(std::memcmp(u.bytes(), &raw, sizeof raw) == 0);
  }
}

}  // namespace

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  long failures = 0, checks = 0;
  int my = -1;
  try {
    gshmem::Context ctx;
    st().me = my = ctx.my_pe();
    st().n = ctx.n_pes();
    st().gpu = ctx.on_gpu();
    share_seed();
    if (my == 0) std::printf("mpt: cxx_api: %d PEs, seed=0x%016" PRIx64 "\n", st().n, st().seed);
    run(ctx);
    failures = st().failures;
    checks = st().checks;
  } catch (const gshmem::Error& e) {
    std::fprintf(stderr, "[PE %d] FAIL: unexpected gshmem::Error (status %d) in '%s': %s\n", my, e.status(),
                 st().current, e.what());
    return 1;
  }
  // ~Context finalised gshmem
  if (gshmem::host::initialized()) {
    std::fprintf(stderr, "[PE %d] FAIL: gshmem still initialised after ~Context\n", my);
    return 1;
  }
  if (failures) {
    std::fprintf(stderr, "[PE %d] FAILED: %ld of %ld checks failed\n", my, failures, checks);
    return 1;
  }
  std::printf("[PE %d] passed %ld checks\n", my, checks);
  return 0;
}
