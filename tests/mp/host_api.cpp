// mp_host_api: every host call of include/gshmem/gshmem.h, checked exactly on fresh random data, with any number
// of PEs. Runs on CPU PEs and on GPU PEs alike: symmetric memory is only touched through the API (except where a
// case checks gshmem_ptr load/store on CPU PEs). See harness.hpp for the conventions.
#include <time.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace mpt;

namespace {

void sleep_ms(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

template <typename T>
T* sym_alloc(std::size_t count) {
  T* p = static_cast<T*>(gshmem_malloc(count * sizeof(T)));
  require(p != nullptr || count == 0, "gshmem_malloc returned NULL");
  return p;
}

// =============================================================================================================
// init and queries
MPT_CASE(init_query) {
  MPT_CHECK(me() >= 0 && me() < npes()) << "my_pe" << me() << "n_pes" << npes();
  MPT_CHECK_EQ(gshmem_n_pes(), npes());
  MPT_CHECK_EQ(gshmem_my_pe(), me());
  MPT_CHECK_EQ(gshmemx_init_status(), static_cast<int>(GSHMEM_STATUS_IS_INITIALIZED));
  int major = -1, minor = -1;
  gshmem_info_get_version(&major, &minor);
  MPT_CHECK_EQ(major, GSHMEM_VERSION_MAJOR);
  MPT_CHECK_EQ(minor, GSHMEM_VERSION_MINOR);
  char name[256];
  std::memset(name, 0x7f, sizeof name);
  gshmem_info_get_name(name);
  MPT_CHECK(std::memchr(name, 0, sizeof name) != nullptr) << "name not terminated";
  MPT_CHECK(std::strstr(name, "gshmem") != nullptr) << "name:" << name;
  int dev = -2, count = -2;
  MPT_CHECK_EQ(gshmemx_query_device(&dev, &count), static_cast<int>(GSHMEM_SUCCESS));
  MPT_CHECK_EQ(gshmemx_query_device(nullptr, nullptr), static_cast<int>(GSHMEM_SUCCESS));
  const char* want_dev = std::getenv("GSHMEM_DEVICE");
  if (want_dev && std::string(want_dev) == "cpu") {
    MPT_CHECK_EQ(dev, -1);
    MPT_CHECK_EQ(count, 0);
  } else if (want_dev && std::string(want_dev) == "gpu") {
    MPT_CHECK(dev >= 0 && dev < count) << "ordinal" << dev << "count" << count;
  }
  for (int s = 0; s <= GSHMEM_ERROR_INTERNAL; ++s)
    MPT_CHECK(gshmemx_status_string(s) != nullptr && *gshmemx_status_string(s)) << "status" << s;
  // A successful status call leaves no error text behind.
  MPT_CHECK(std::string(gshmemx_last_error()).empty()) << "last_error after success:" << gshmemx_last_error();

  // Every PE number is taken exactly once: each PE writes a value made from its number into its slot everywhere.
  auto* seen = sym_alloc<int>(static_cast<std::size_t>(npes()));
  local_fill(seen, static_cast<std::size_t>(npes()), -1);
  gshmem_barrier_all();
  for (int pe = 0; pe < npes(); ++pe) gshmem_int_p(seen + me(), me() * 7 + 3, pe);
  gshmem_barrier_all();
  auto got = local_vec(seen, static_cast<std::size_t>(npes()));
  std::vector<int> want(static_cast<std::size_t>(npes()));
  for (int pe = 0; pe < npes(); ++pe) want[static_cast<std::size_t>(pe)] = pe * 7 + 3;
  MPT_CHECK_ARRAY("PE numbers seen", got.data(), want.data(), want.size());
  gshmem_free(seen);
}

// =============================================================================================================
// RMA: one generic check over element size, driven by per-type function tables.
struct RmaOps {
  const char* name;
  std::size_t esize;
  void (*make)(void* out, std::uint64_t r);
  void (*put)(void*, const void*, std::size_t, int);
  void (*get)(void*, const void*, std::size_t, int);
  void (*put_nbi)(void*, const void*, std::size_t, int);
  void (*get_nbi)(void*, const void*, std::size_t, int);
  void (*p)(void*, const void*, int);   // null for the sized calls
  void (*g)(void*, const void*, int);   // null for the sized calls
  void (*iput)(void*, const void*, std::ptrdiff_t, std::ptrdiff_t, std::size_t, int);
  void (*iget)(void*, const void*, std::ptrdiff_t, std::ptrdiff_t, std::size_t, int);
  void (*put_signal)(void*, const void*, std::size_t, std::uint64_t*, std::uint64_t, int, int);      // typed only
  void (*put_signal_nbi)(void*, const void*, std::size_t, std::uint64_t*, std::uint64_t, int, int);  // typed only
};

enum RmaKind { K_PUT, K_PUT_NBI, K_P, K_IPUT, K_PUT_SIGNAL, K_PUT_SIGNAL_NBI, K_COUNT };
const char* const kRmaKindName[] = {"put", "put_nbi", "p", "iput", "put_signal(SET)", "put_signal_nbi(ADD)"};

void rma_check(const RmaOps& o) {
  const int n = npes(), my = me();
  const std::size_t es = o.esize, E = 33, slot = 2 * E;  // a slot per source PE, 2E elements (iput stride 2)
  const std::uint64_t tag = tag_of(o.name);
  auto* dst = sym_alloc<unsigned char>(static_cast<std::size_t>(n) * slot * es);
  auto* src = sym_alloc<unsigned char>(3 * E * es);
  auto* sig = sym_alloc<std::uint64_t>(static_cast<std::size_t>(n));
  const std::size_t total = static_cast<std::size_t>(n) * slot * es;
  // priv: a source region per target for the puts (an _nbi call's source stays untouched until the quiet)
  std::vector<unsigned char> want(total), pois(total), got(total), priv(static_cast<std::size_t>(n) * 3 * E * es),
      v(es);
  auto val = [&](void* out, int kind, int from, int to, std::size_t pos) {
    o.make(out, rnd(tag, static_cast<std::uint64_t>(kind), static_cast<std::uint64_t>(from * 4096 + to), pos));
  };
  auto sigval = [&](int kind, int from, int to) {
    return rnd(tag, 77, static_cast<std::uint64_t>(from * 4096 + to), static_cast<std::uint64_t>(kind)) | 1u;
  };

  for (int kind = 0; kind < K_COUNT; ++kind) {
    if (kind == K_P && !o.p) continue;
    if ((kind == K_PUT_SIGNAL || kind == K_PUT_SIGNAL_NBI) && !o.put_signal) continue;
    const std::string what = std::string(o.name) + " " + kRmaKindName[kind];
    // What my dst must hold afterwards: the written positions of each slot hold the sender's data, the rest keeps
    // the poison (which differs from the data in every byte).
    for (int s = 0; s < n; ++s)
      for (std::size_t p = 0; p < slot; ++p) {
        unsigned char* w = &want[(static_cast<std::size_t>(s) * slot + p) * es];
        val(w, kind, s, my, p);
        poison_of(&pois[(static_cast<std::size_t>(s) * slot + p) * es], w, es);
        const bool written = kind == K_IPUT ? p % 2 == 0 : p < E;
        if (!written) std::memcpy(w, &pois[(static_cast<std::size_t>(s) * slot + p) * es], es);
      }
    local_write(dst, pois.data(), total);
    local_fill<std::uint64_t>(sig, static_cast<std::size_t>(n), 0);
    gshmem_barrier_all();
    for (int k = 0; k < n; ++k) {
      const int t = (my + k) % n;
      unsigned char* mine = dst + static_cast<std::size_t>(my) * slot * es;
      unsigned char* from = priv.data() + static_cast<std::size_t>(t) * 3 * E * es;
      if (kind == K_IPUT) {
        for (std::size_t i = 0; i < 3 * E; ++i) o.make(&from[i * es], rnd(tag, 99, static_cast<std::uint64_t>(t), i));
        for (std::size_t j = 0; j < E; ++j) val(&from[3 * j * es], kind, my, t, 2 * j);
      } else {
        for (std::size_t i = 0; i < E; ++i) val(&from[i * es], kind, my, t, i);
      }
      switch (kind) {
        case K_PUT:
          o.put(mine, from, 0, t);  // zero elements: a no-op
          o.put(mine, from, E, t);
          break;
        case K_PUT_NBI: o.put_nbi(mine, from, E, t); break;
        case K_P:
          for (std::size_t i = 0; i < E; ++i) o.p(mine + i * es, &from[i * es], t);
          break;
        case K_IPUT: o.iput(mine, from, 2, 3, E, t); break;
        case K_PUT_SIGNAL:
          o.put_signal(mine, from, E, sig + my, sigval(kind, my, t), GSHMEM_SIGNAL_SET, t);
          break;
        case K_PUT_SIGNAL_NBI:
          o.put_signal_nbi(mine, from, E, sig + my, sigval(kind, my, t), GSHMEM_SIGNAL_ADD, t);
          break;
      }
    }
    if (kind == K_PUT_SIGNAL || kind == K_PUT_SIGNAL_NBI) {
      // The signal arrives after the data: wait for each sender's signal, no barrier.
      for (int s = 0; s < n; ++s) {
        std::uint64_t r = gshmem_signal_wait_until(sig + s, GSHMEM_CMP_EQ, sigval(kind, s, my));
        MPT_CHECK_EQ(r, sigval(kind, s, my));
      }
      gshmem_quiet();
    } else {
      if (kind == K_PUT_NBI) gshmem_quiet();
      gshmem_barrier_all();
    }
    local_read(got.data(), dst, total);
    MPT_CHECK_MEM(what, got.data(), want.data(), total);
    gshmem_barrier_all();
  }

  // ---- gets: every PE's src holds its own data; read every peer's ----
  for (std::size_t i = 0; i < 3 * E; ++i) val(&priv[i * es], 50, my, 0, i);
  local_write(src, priv.data(), 3 * E * es);
  gshmem_barrier_all();
  std::vector<unsigned char> exp(slot * es), buf(slot * es);
  for (int k = 0; k < n; ++k) {
    const int t = (my + k) % n;
    for (std::size_t i = 0; i < E; ++i) val(&exp[i * es], 50, t, 0, i);
    for (int variant = 0; variant < 3; ++variant) {  // get, get_nbi, g
      poison_of(buf.data(), exp.data(), E * es);
      if (variant == 0) o.get(buf.data(), src, E, t);
      if (variant == 1) {
        o.get_nbi(buf.data(), src, E, t);
        gshmem_quiet();
      }
      if (variant == 2) {
        if (!o.g) continue;
        for (std::size_t i = 0; i < E; ++i) o.g(&buf[i * es], src + i * es, t);
      }
      MPT_CHECK_MEM(std::string(o.name) + (variant == 0 ? " get" : variant == 1 ? " get_nbi" : " g") + " from PE " +
                        std::to_string(t),
                    buf.data(), exp.data(), E * es);
    }
    // iget: dst stride 2, src stride 3; odd dst positions must keep their poison.
    std::vector<unsigned char> iexp(slot * es);
    for (std::size_t p = 0; p < slot; ++p) {
      val(&iexp[p * es], 50, t, 0, 3 * (p / 2));
      poison_of(&buf[p * es], &iexp[p * es], es);
      if (p % 2) std::memcpy(&iexp[p * es], &buf[p * es], es);
    }
    o.iget(buf.data(), src, 2, 3, E, t);
    MPT_CHECK_MEM(std::string(o.name) + " iget from PE " + std::to_string(t), buf.data(), iexp.data(), slot * es);
    o.get(buf.data(), src, 0, t);  // zero elements: must not touch buf
    MPT_CHECK_MEM(std::string(o.name) + " get of 0 elements", buf.data(), iexp.data(), slot * es);
  }
  gshmem_barrier_all();
  gshmem_free(sig);
  gshmem_free(src);
  gshmem_free(dst);
}

template <typename T>
void make_value(void* out, std::uint64_t r) {
  T v = value_of<T>(r);
  std::memcpy(out, &v, sizeof v);
}
template <std::size_t B>
void make_bytes(void* out, std::uint64_t r) {
  auto* o = static_cast<unsigned char*>(out);
  for (std::size_t i = 0; i < B; ++i) o[i] = static_cast<unsigned char>(mix(r + i) >> 17);
}

#define MPT_TYPED_RMA_OPS(T, N)                                                                                \
  RmaOps{#N,                                                                                                   \
         sizeof(T),                                                                                            \
         make_value<T>,                                                                                        \
         [](void* d, const void* s, std::size_t k, int pe) { gshmem_##N##_put((T*)d, (const T*)s, k, pe); },   \
         [](void* d, const void* s, std::size_t k, int pe) { gshmem_##N##_get((T*)d, (const T*)s, k, pe); },   \
         [](void* d, const void* s, std::size_t k, int pe) { gshmem_##N##_put_nbi((T*)d, (const T*)s, k, pe); }, \
         [](void* d, const void* s, std::size_t k, int pe) { gshmem_##N##_get_nbi((T*)d, (const T*)s, k, pe); }, \
         [](void* d, const void* v, int pe) {                                                                  \
           T x;                                                                                                \
           std::memcpy(&x, v, sizeof x);                                                                       \
           gshmem_##N##_p((T*)d, x, pe);                                                                       \
         },                                                                                                    \
         [](void* out, const void* s, int pe) {                                                                \
           T x = gshmem_##N##_g((const T*)s, pe);                                                              \
           std::memcpy(out, &x, sizeof x);                                                                     \
         },                                                                                                    \
         [](void* d, const void* s, std::ptrdiff_t ds, std::ptrdiff_t ss, std::size_t k, int pe) {            \
           gshmem_##N##_iput((T*)d, (const T*)s, ds, ss, k, pe);                                              \
         },                                                                                                    \
         [](void* d, const void* s, std::ptrdiff_t ds, std::ptrdiff_t ss, std::size_t k, int pe) {            \
           gshmem_##N##_iget((T*)d, (const T*)s, ds, ss, k, pe);                                              \
         },                                                                                                    \
         [](void* d, const void* s, std::size_t k, std::uint64_t* sg, std::uint64_t sv, int op, int pe) {      \
           gshmem_##N##_put_signal((T*)d, (const T*)s, k, sg, sv, op, pe);                                    \
         },                                                                                                    \
         [](void* d, const void* s, std::size_t k, std::uint64_t* sg, std::uint64_t sv, int op, int pe) {      \
           gshmem_##N##_put_signal_nbi((T*)d, (const T*)s, k, sg, sv, op, pe);                                \
         }},

#define MPT_SIZED_RMA_OPS(BITS)                                                                                \
  RmaOps{"put" #BITS "/get" #BITS,                                                                             \
         BITS / 8,                                                                                             \
         make_bytes<BITS / 8>,                                                                                 \
         gshmem_put##BITS,                                                                                     \
         gshmem_get##BITS,                                                                                     \
         gshmem_put##BITS##_nbi,                                                                               \
         gshmem_get##BITS##_nbi,                                                                               \
         nullptr,                                                                                              \
         nullptr,                                                                                              \
         gshmem_iput##BITS,                                                                                    \
         gshmem_iget##BITS,                                                                                    \
         nullptr,                                                                                              \
         nullptr},

MPT_CASE(rma_typed) {
  const RmaOps ops[] = {GSHMEM_RMA_TYPES(MPT_TYPED_RMA_OPS)};
  MPT_CHECK_EQ(sizeof ops / sizeof ops[0], static_cast<std::size_t>(23));
  for (const RmaOps& o : ops) rma_check(o);
}

MPT_CASE(rma_sized) {
  const RmaOps ops[] = {MPT_SIZED_RMA_OPS(8) MPT_SIZED_RMA_OPS(16) MPT_SIZED_RMA_OPS(32) MPT_SIZED_RMA_OPS(64)
                            MPT_SIZED_RMA_OPS(128)};
  for (const RmaOps& o : ops) rma_check(o);
}

// putmem/getmem (+nbi): many sizes and unaligned offsets; the bytes around the target must stay untouched.
MPT_CASE(putmem_getmem) {
  const int n = npes(), my = me();
  const std::size_t sizes[] = {0, 1, 2, 3, 7, 8, 63, 64, 65, 4093, 65536 + 5, (std::size_t(1) << 20) + 3};
  const std::size_t maxb = (std::size_t(1) << 20) + 3 + 64 + 8;  // largest size + guard bytes + largest offset
  auto* buf = sym_alloc<unsigned char>(maxb);
  std::vector<unsigned char> want(maxb), pois(maxb), got(maxb), data(maxb);
  static const char* const vname[] = {"putmem", "putmem_nbi", "getmem", "getmem_nbi"};
  for (std::size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
    const std::size_t bytes = sizes[si];
    const std::size_t off = si % 4 == 0 ? 0 : si % 4 == 1 ? 1 : si % 4 == 2 ? 3 : 8;
    const std::size_t span = off + bytes + 64;  // what is checked: the target and 64 guard bytes after it
    for (int variant = 0; variant < 4; ++variant) {
      const int writer = static_cast<int>(si + static_cast<std::size_t>(variant)) % n;
      const std::uint64_t tg = tag_of("putmem") + si * 16 + static_cast<std::uint64_t>(variant);
      auto fill = [&](unsigned char* out, int from, int to) {
        for (std::size_t i = 0; i < span; i += 8) {
          const std::uint64_t w = rnd(tg, static_cast<std::uint64_t>(from), static_cast<std::uint64_t>(to), i);
          std::memcpy(out + i, &w, std::min<std::size_t>(8, span - i));
        }
      };
      const std::string what = std::string(vname[variant]) + " of " + std::to_string(bytes) + " bytes at offset " +
                               std::to_string(off) + ", PE " + std::to_string(writer) + "'s data";
      if (variant < 2) {  // PE `writer` puts into every PE's buf+off (to PE t: data(writer, t))
        fill(want.data(), writer, my);
        poison_of(pois.data(), want.data(), span);
        std::memcpy(want.data(), pois.data(), off);
        std::memcpy(want.data() + off + bytes, pois.data() + off + bytes, span - off - bytes);
        local_write(buf, pois.data(), span);
        gshmem_barrier_all();
        if (my == writer) {
          for (int k = 0; k < n; ++k) {
            const int t = (my + k) % n;
            fill(data.data(), writer, t);
            if (variant == 0) gshmem_putmem(buf + off, data.data() + off, bytes, t);
            else gshmem_putmem_nbi(buf + off, data.data() + off, bytes, t);
          }
          if (variant == 1) gshmem_quiet();
        }
        gshmem_barrier_all();
        local_read(got.data(), buf, span);
        MPT_CHECK_MEM(what, got.data(), want.data(), span);
      } else {  // every PE gets PE `writer`'s buf+off
        fill(data.data(), writer, 0);
        if (my == writer) local_write(buf, data.data(), span);
        gshmem_barrier_all();
        poison_of(got.data(), data.data(), span);
        std::memcpy(want.data(), got.data(), span);
        std::memcpy(want.data() + off, data.data() + off, bytes);
        if (variant == 2) {
          gshmem_getmem(got.data() + off, buf + off, bytes, writer);
        } else {
          gshmem_getmem_nbi(got.data() + off, buf + off, bytes, writer);
          gshmem_quiet();
        }
        MPT_CHECK_MEM(what, got.data(), want.data(), span);
      }
      gshmem_barrier_all();
    }
  }
  gshmem_free(buf);
}

// =============================================================================================================
// atomics
template <typename T>
struct AmoStd {
  const char* name;
  T (*fetch_inc)(T*, int);
  void (*inc)(T*, int);
  T (*fetch_add)(T*, T, int);
  void (*add)(T*, T, int);
  T (*compare_swap)(T*, T, T, int);
};

template <typename T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

template <typename T>
void amo_standard(const AmoStd<T>& o) {
  const int n = npes(), my = me();
  const int K = scaled(12, 3);
  const std::size_t NK = static_cast<std::size_t>(n) * static_cast<std::size_t>(K);
  const std::uint64_t tag = tag_of(o.name) ^ 0xA3;
  // [0] fetch_add chain, [1] fetch_inc, [2] add/inc, [3] cas race, [4] cas that must fail,
  // then records: fetch_add olds (NK), fetch_inc olds (NK), cas results (n)
  const std::size_t R_FA = 8, R_FI = R_FA + NK, R_CAS = R_FI + NK, TOTAL = R_CAS + static_cast<std::size_t>(n);
  T* a = sym_alloc<T>(TOTAL);
  auto small = [&](std::uint64_t x, std::uint64_t y, std::uint64_t z) {
    return static_cast<T>(rnd(tag, x, y, z) % 1000 + 1);
  };
  auto init = [&](int slot, int pe) { return small(100 + static_cast<std::uint64_t>(slot), static_cast<std::uint64_t>(pe), 0); };
  auto addv = [&](int from, int to, int k) {
    return small(200, static_cast<std::uint64_t>(from * 4096 + to), static_cast<std::uint64_t>(k));
  };
  auto uniq = [&](int from, int to) { return static_cast<T>(init(3, to) + 1 + static_cast<T>(from)); };
  std::vector<T> mine(TOTAL);
  for (std::size_t i = 0; i < TOTAL; ++i) mine[i] = static_cast<T>(~static_cast<T>(0));
  for (int s = 0; s < 5; ++s) mine[static_cast<std::size_t>(s)] = init(s, my);
  local_write(a, mine.data(), TOTAL * sizeof(T));
  gshmem_barrier_all();

  // phase 1: fetch_add chains, fetch_inc, compare_swap race, a compare_swap whose condition never holds
  std::vector<std::vector<T>> fa(static_cast<std::size_t>(n)), fi(static_cast<std::size_t>(n));
  std::vector<T> cas(static_cast<std::size_t>(n));
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < n; ++j) {
      const int t = (my + j) % n;
      fa[static_cast<std::size_t>(t)].push_back(o.fetch_add(a + 0, addv(my, t, k), t));
      fi[static_cast<std::size_t>(t)].push_back(o.fetch_inc(a + 1, t));
      if (k == 0) cas[static_cast<std::size_t>(t)] = o.compare_swap(a + 3, init(3, t), uniq(my, t), t);
      T r = o.compare_swap(a + 4, static_cast<T>(init(4, t) + 1), static_cast<T>(12345), t);
      MPT_CHECK_EQ(r, init(4, t));
    }
  for (int t = 0; t < n; ++t) {
    gshmem_putmem(a + R_FA + static_cast<std::size_t>(my * K), fa[static_cast<std::size_t>(t)].data(), static_cast<std::size_t>(K) * sizeof(T), t);
    gshmem_putmem(a + R_FI + static_cast<std::size_t>(my * K), fi[static_cast<std::size_t>(t)].data(), static_cast<std::size_t>(K) * sizeof(T), t);
    gshmem_putmem(a + R_CAS + static_cast<std::size_t>(my), &cas[static_cast<std::size_t>(t)], sizeof(T), t);
  }
  gshmem_barrier_all();
  auto v = local_vec(a, TOTAL);
  const std::string nm = o.name;
  // fetch_add: sorted by the old value they returned, the adds form one chain from init to the final value.
  {
    std::vector<std::pair<T, T>> ops;  // (old, added)
    for (int p = 0; p < n; ++p)
      for (int k = 0; k < K; ++k) ops.push_back({v[R_FA + static_cast<std::size_t>(p * K + k)], addv(p, my, k)});
    std::sort(ops.begin(), ops.end());
    T cur = init(0, my);
    bool chain = true;
    for (auto& [old, add] : ops) {
      if (old != cur) chain = false;
      cur = static_cast<T>(cur + add);
    }
    MPT_CHECK(chain) << nm << "fetch_add: the returned old values do not form one chain of the adds";
    MPT_CHECK_EQ(v[0], cur);
  }
  // fetch_inc: the olds are exactly init .. init+n*K-1.
  {
    std::vector<T> olds(v.begin() + static_cast<std::ptrdiff_t>(R_FI), v.begin() + static_cast<std::ptrdiff_t>(R_FI + NK));
    std::vector<T> want(NK);
    for (std::size_t i = 0; i < NK; ++i) want[i] = static_cast<T>(init(1, my) + static_cast<T>(i));
    auto s = sorted(olds);
    MPT_CHECK_ARRAY(nm + " fetch_inc returned values", s.data(), want.data(), NK);
    MPT_CHECK_EQ(v[1], static_cast<T>(init(1, my) + static_cast<T>(NK)));
  }
  // compare_swap race: exactly one winner; the losers saw the winner's value; it is what remains.
  {
    int winners = 0, winner = -1;
    for (int p = 0; p < n; ++p)
      if (v[R_CAS + static_cast<std::size_t>(p)] == init(3, my)) ++winners, winner = p;
    MPT_CHECK_EQ(winners, 1);
    if (winner >= 0) {
      MPT_CHECK_EQ(v[3], uniq(winner, my));
      for (int p = 0; p < n; ++p)
        if (p != winner) MPT_CHECK_EQ(v[R_CAS + static_cast<std::size_t>(p)], uniq(winner, my));
    }
    MPT_CHECK_EQ(v[4], init(4, my));
  }
  gshmem_barrier_all();
  // phase 2: non-fetching add and inc into one counter from every PE concurrently
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < n; ++j) {
      const int t = (my + j) % n;
      o.add(a + 2, addv(my, t, k), t);
      o.inc(a + 2, t);
    }
  gshmem_quiet();
  gshmem_barrier_all();
  T want2 = init(2, my);
  for (int p = 0; p < n; ++p)
    for (int k = 0; k < K; ++k) want2 = static_cast<T>(want2 + addv(p, my, k) + 1);
  MPT_CHECK_EQ(local_get(a + 2), want2);
  // compare_swap that succeeds on my own slot, from every PE in turn (PE p swaps p -> p+1)
  gshmem_barrier_all();
  local_set(a + 0, static_cast<T>(0));
  gshmem_barrier_all();
  for (int p = 0; p < n; ++p) {
    if (p == my)
      for (int t = 0; t < n; ++t) {
        T r = o.compare_swap(a + 0, static_cast<T>(p), static_cast<T>(p + 1), t);
        MPT_CHECK_EQ(r, static_cast<T>(p));
      }
    gshmem_barrier_all();
  }
  MPT_CHECK_EQ(local_get(a + 0), static_cast<T>(n));
  gshmem_barrier_all();
  gshmem_free(a);
}

#define MPT_AMO_STD_CALL(T, N)                                                                                 \
  amo_standard<T>(AmoStd<T>{#N, gshmem_##N##_atomic_fetch_inc, gshmem_##N##_atomic_inc,                         \
                            gshmem_##N##_atomic_fetch_add, gshmem_##N##_atomic_add,                             \
                            gshmem_##N##_atomic_compare_swap});
MPT_CASE(amo_standard) { GSHMEM_AMO_STANDARD_TYPES(MPT_AMO_STD_CALL) }

template <typename T>
struct AmoExt {
  const char* name;
  T (*fetch)(const T*, int);
  void (*set)(T*, T, int);
  T (*swap)(T*, T, int);
};

template <typename T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T>
void amo_extended(const AmoExt<T>& o) {
  const int n = npes(), my = me();
  const int K = scaled(8, 2);
  const std::uint64_t tag = tag_of(o.name) ^ 0xE7;
  const std::size_t N = static_cast<std::size_t>(n);
  // [0] swap chain; [1..n] set slots; then records of swaps (n*K)
  const std::size_t R = 1 + N, TOTAL = R + N * static_cast<std::size_t>(K);
  T* a = sym_alloc<T>(TOTAL);
  auto val = [&](std::uint64_t x, std::uint64_t y, std::uint64_t z) { return gen<T>(tag, x, y, z); };
  auto swapv = [&](int from, int to, int k) {
    return val(1, static_cast<std::uint64_t>(from * 4096 + to), static_cast<std::uint64_t>(k));
  };
  auto setv = [&](int from, int to) { return val(2, static_cast<std::uint64_t>(from * 4096 + to), 0); };
  std::vector<T> mine(TOTAL);
  for (std::size_t i = 0; i < TOTAL; ++i) mine[i] = val(3, static_cast<std::uint64_t>(my), i);  // also poison
  local_write(a, mine.data(), TOTAL * sizeof(T));
  const T init0 = mine[0];
  gshmem_barrier_all();
  // set my slot on every PE; swap K times into every PE's [0]
  std::vector<std::vector<T>> olds(N);
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < n; ++j) {
      const int t = (my + j) % n;
      if (k == 0) o.set(a + 1 + my, setv(my, t), t);
      olds[static_cast<std::size_t>(t)].push_back(o.swap(a + 0, swapv(my, t, k), t));
    }
  for (int t = 0; t < n; ++t)
    gshmem_putmem(a + R + static_cast<std::size_t>(my * K), olds[static_cast<std::size_t>(t)].data(),
                  static_cast<std::size_t>(K) * sizeof(T), t);
  gshmem_barrier_all();
  auto v = local_vec(a, TOTAL);
  const std::string nm = o.name;
  for (int p = 0; p < n; ++p) {
    T w = setv(p, my);
    MPT_CHECK(same_bits(v[1 + static_cast<std::size_t>(p)], w)) << nm << "atomic_set from PE" << p;
  }
  // swap: {olds} + {final} == {init} + {everything swapped in}, as multisets of bit patterns
  {
    auto key = [](const T& x) {
      std::uint64_t b = 0;
      std::memcpy(&b, &x, sizeof x);
      return b;
    };
    std::vector<std::uint64_t> lhs, rhs;
    for (std::size_t i = 0; i < N * static_cast<std::size_t>(K); ++i) lhs.push_back(key(v[R + i]));
    lhs.push_back(key(v[0]));
    rhs.push_back(key(init0));
    for (int p = 0; p < n; ++p)
      for (int k = 0; k < K; ++k) rhs.push_back(key(swapv(p, my, k)));
    std::sort(lhs.begin(), lhs.end());
    std::sort(rhs.begin(), rhs.end());
    MPT_CHECK_ARRAY(nm + " atomic_swap chain (olds + final vs init + swapped in)", lhs.data(), rhs.data(), lhs.size());
  }
  // fetch every PE's set slots
  for (int j = 0; j < n; ++j) {
    const int t = (my + j) % n;
    for (int p = 0; p < n; ++p) {
      T got = o.fetch(a + 1 + p, t);
      MPT_CHECK(same_bits(got, setv(p, t))) << nm << "atomic_fetch of slot" << p << "on PE" << t;
    }
  }
  gshmem_barrier_all();
  gshmem_free(a);
}
#define MPT_AMO_EXT_CALL(T, N)                                                                                 \
  amo_extended<T>(AmoExt<T>{#N, gshmem_##N##_atomic_fetch, gshmem_##N##_atomic_set, gshmem_##N##_atomic_swap});
MPT_CASE(amo_extended) { GSHMEM_AMO_EXTENDED_TYPES(MPT_AMO_EXT_CALL) }

template <typename T>
struct AmoBit {
  const char* name;
  T (*fetch_and)(T*, T, int);
  void (*and_)(T*, T, int);
  T (*fetch_or)(T*, T, int);
  void (*or_)(T*, T, int);
  T (*fetch_xor)(T*, T, int);
  void (*xor_)(T*, T, int);
};

template <typename T>
void amo_bitwise(const AmoBit<T>& o) {
  const int n = npes(), my = me();
  const int K = scaled(8, 2);
  const std::uint64_t tag = tag_of(o.name) ^ 0xB1;
  const std::size_t N = static_cast<std::size_t>(n);
  constexpr int BITS = static_cast<int>(sizeof(T) * 8);
  const std::size_t TOTAL = 3 + N;  // [0] and, [1] or, [2] xor (shared); [3+p] PE p's private slot
  T* a = sym_alloc<T>(TOTAL);
  auto r = [&](std::uint64_t x, std::uint64_t y, std::uint64_t z) { return value_of<T>(rnd(tag, x, y, z)); };
  auto bit = [&](std::uint64_t x, std::uint64_t y, std::uint64_t z) {
    return static_cast<T>(T(1) << (rnd(tag, x, y, z) % BITS));
  };
  auto init = [&](int s, int pe) { return r(10 + static_cast<std::uint64_t>(s), static_cast<std::uint64_t>(pe), 0); };
  std::vector<T> mine(TOTAL);
  for (std::size_t i = 0; i < TOTAL; ++i) mine[i] = init(static_cast<int>(i), my);
  local_write(a, mine.data(), TOTAL * sizeof(T));
  gshmem_barrier_all();
  const std::string nm = o.name;
  // concurrent: and clears one random bit, or sets one, xor flips a random mask (fetching and plain variants)
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < n; ++j) {
      const int t = (my + j) % n;
      const std::uint64_t id = static_cast<std::uint64_t>(my * 4096 + t);
      const T am = static_cast<T>(~bit(20, id, static_cast<std::uint64_t>(k)));
      const T om = bit(21, id, static_cast<std::uint64_t>(k));
      const T xm = r(22, id, static_cast<std::uint64_t>(k));
      if (k % 2) {
        o.and_(a + 0, am, t);
        o.or_(a + 1, om, t);
        o.xor_(a + 2, xm, t);
      } else {
        T x = o.fetch_and(a + 0, am, t);
        MPT_CHECK(static_cast<T>(x & ~init(0, t)) == 0) << nm << "fetch_and returned bits that were never set";
        x = o.fetch_or(a + 1, om, t);
        MPT_CHECK(static_cast<T>(x & init(1, t)) == init(1, t)) << nm << "fetch_or returned a value missing initial bits";
        (void)o.fetch_xor(a + 2, xm, t);
      }
    }
  // uncontended: my private slot on every PE, exact old values
  for (int j = 0; j < n; ++j) {
    const int t = (my + j) % n;
    const std::uint64_t id = static_cast<std::uint64_t>(my * 4096 + t);
    T cur = init(3 + my, t);
    const T m1 = r(30, id, 0), m2 = r(31, id, 0), m3 = r(32, id, 0);
    MPT_CHECK_EQ(o.fetch_and(a + 3 + my, m1, t), cur);
    cur = static_cast<T>(cur & m1);
    MPT_CHECK_EQ(o.fetch_or(a + 3 + my, m2, t), cur);
    cur = static_cast<T>(cur | m2);
    MPT_CHECK_EQ(o.fetch_xor(a + 3 + my, m3, t), cur);
  }
  gshmem_barrier_all();
  auto v = local_vec(a, TOTAL);
  T wa = init(0, my), wo = init(1, my), wx = init(2, my);
  for (int p = 0; p < n; ++p)
    for (int k = 0; k < K; ++k) {
      const std::uint64_t id = static_cast<std::uint64_t>(p * 4096 + my);
      wa = static_cast<T>(wa & static_cast<T>(~bit(20, id, static_cast<std::uint64_t>(k))));
      wo = static_cast<T>(wo | bit(21, id, static_cast<std::uint64_t>(k)));
      wx = static_cast<T>(wx ^ r(22, id, static_cast<std::uint64_t>(k)));
    }
  MPT_CHECK_EQ(v[0], wa);
  MPT_CHECK_EQ(v[1], wo);
  MPT_CHECK_EQ(v[2], wx);
  for (int p = 0; p < n; ++p) {
    const std::uint64_t id = static_cast<std::uint64_t>(p * 4096 + my);
    T w = static_cast<T>(((init(3 + p, my) & r(30, id, 0)) | r(31, id, 0)) ^ r(32, id, 0));
    MPT_CHECK_EQ(v[3 + static_cast<std::size_t>(p)], w);
  }
  // plain and/or/xor on my private slots, one at a time
  gshmem_barrier_all();
  for (int j = 0; j < n; ++j) {
    const int t = (my + j) % n;
    const std::uint64_t id = static_cast<std::uint64_t>(my * 4096 + t);
    o.and_(a + 3 + my, r(40, id, 0), t);
    o.or_(a + 3 + my, r(41, id, 0), t);
    o.xor_(a + 3 + my, r(42, id, 0), t);
  }
  gshmem_barrier_all();
  v = local_vec(a, TOTAL);
  for (int p = 0; p < n; ++p) {
    const std::uint64_t id = static_cast<std::uint64_t>(p * 4096 + my);
    T w = static_cast<T>(((init(3 + p, my) & r(30, id, 0)) | r(31, id, 0)) ^ r(32, id, 0));
    w = static_cast<T>(((w & r(40, id, 0)) | r(41, id, 0)) ^ r(42, id, 0));
    MPT_CHECK_EQ(v[3 + static_cast<std::size_t>(p)], w);
  }
  gshmem_barrier_all();
  gshmem_free(a);
}
#define MPT_AMO_BIT_CALL(T, N)                                                                                 \
  amo_bitwise<T>(AmoBit<T>{#N, gshmem_##N##_atomic_fetch_and, gshmem_##N##_atomic_and,                         \
                           gshmem_##N##_atomic_fetch_or, gshmem_##N##_atomic_or, gshmem_##N##_atomic_fetch_xor,  \
                           gshmem_##N##_atomic_xor});
MPT_CASE(amo_bitwise) { GSHMEM_AMO_BITWISE_TYPES(MPT_AMO_BIT_CALL) }

// =============================================================================================================
// wait_until / test with every comparator
template <typename T>
bool ref_compare(T a, int cmp, T b) {
  switch (cmp) {
    case GSHMEM_CMP_EQ: return a == b;
    case GSHMEM_CMP_NE: return a != b;
    case GSHMEM_CMP_GT: return a > b;
    case GSHMEM_CMP_LE: return a <= b;
    case GSHMEM_CMP_LT: return a < b;
    case GSHMEM_CMP_GE: return a >= b;
  }
  return false;
}
const char* const kCmpName[] = {"EQ", "NE", "GT", "LE", "LT", "GE"};

template <typename T>
struct WaitOps {
  const char* name;
  void (*wait_until)(T*, int, T);
  int (*test)(T*, int, T);
};

template <typename T>
void wait_test(const WaitOps<T>& o) {
  const int n = npes(), my = me();
  const std::uint64_t tag = tag_of(o.name) ^ 0x5A;
  const std::string nm = o.name;
  T* ivar = sym_alloc<T>(2);
  // test(): its verdict against a reference comparison, for random pairs, equal pairs and neighbours
  for (int i = 0; i < 12; ++i) {
    T cur = gen<T>(tag, 1, static_cast<std::uint64_t>(my), static_cast<std::uint64_t>(i));
    T other = gen<T>(tag, 2, static_cast<std::uint64_t>(my), static_cast<std::uint64_t>(i));
    if (i % 4 == 1) other = cur;
    if (i % 4 == 2) other = static_cast<T>(cur + 1);
    if (i % 4 == 3) other = static_cast<T>(cur - 1);
    local_set(ivar, cur);
    for (int c = 0; c < 6; ++c) {
      const int got = o.test(ivar, c, other);
      const bool want = ref_compare(cur, c, other);
      MPT_CHECK(got == (want ? 1 : 0)) << nm << "test(" << +cur << kCmpName[c] << +other << ") returned" << got;
      if (want) o.wait_until(ivar, c, other);  // already true: returns at once
    }
  }
  // wait_until across PEs: PE p sets the next PE's ivar to a value that makes the condition true.
  const T lo = std::is_signed_v<T> ? static_cast<T>(-1000) : static_cast<T>(100);
  for (int c = 0; c < 6; ++c) {
    const T v0 = static_cast<T>(lo + static_cast<T>(rnd(tag, 3, static_cast<std::uint64_t>(c), 0) % 1000));
    T cmpv = v0, vnew = v0;
    switch (c) {
      case GSHMEM_CMP_EQ: vnew = static_cast<T>(v0 + 7); cmpv = vnew; break;
      case GSHMEM_CMP_NE: vnew = static_cast<T>(v0 + 3); cmpv = v0; break;
      case GSHMEM_CMP_GT: vnew = static_cast<T>(v0 + 1); cmpv = v0; break;
      case GSHMEM_CMP_LE: vnew = static_cast<T>(v0 - 1); cmpv = static_cast<T>(v0 - 1); break;
      case GSHMEM_CMP_LT: vnew = static_cast<T>(v0 - 1); cmpv = v0; break;
      case GSHMEM_CMP_GE: vnew = static_cast<T>(v0 + 1); cmpv = static_cast<T>(v0 + 1); break;
    }
    local_set(ivar, v0);
    MPT_CHECK_EQ(o.test(ivar, c, cmpv), 0);
    gshmem_barrier_all();
    if (my == c % n) sleep_ms(2);  // someone is late, so a waiter really waits
    gshmem_putmem(ivar, &vnew, sizeof(T), (my + 1) % n);
    o.wait_until(ivar, c, cmpv);
    MPT_CHECK_EQ(local_get(ivar), vnew);
    MPT_CHECK_EQ(o.test(ivar, c, cmpv), 1);
    gshmem_barrier_all();
  }
  gshmem_free(ivar);
}
#define MPT_WAIT_CALL(T, N) wait_test<T>(WaitOps<T>{#N, gshmem_##N##_wait_until, gshmem_##N##_test});
MPT_CASE(wait_until_test) { GSHMEM_WAIT_TYPES(MPT_WAIT_CALL) }

// =============================================================================================================
// signals: putmem_signal (+nbi) SET/ADD, signal_op, signal_fetch, signal_wait_until
MPT_CASE(signals) {
  const int n = npes(), my = me();
  const std::size_t N = static_cast<std::size_t>(n), B = 1001;
  const std::uint64_t tag = tag_of("signals");
  auto* data = sym_alloc<unsigned char>(N * B);
  auto* sig = sym_alloc<std::uint64_t>(N + 2);  // [p]: PE p's; [N]: shared ADD; [N+1]: signal_op ADD race
  // priv: one source slice per target, so an _nbi call's source stays untouched until the round's quiet (barrier)
  std::vector<unsigned char> want(N * B), got(N * B), priv(N * B);
  auto fill = [&](unsigned char* out, int round, int from, int to) {
    for (std::size_t i = 0; i < B; ++i)
      out[i] = static_cast<unsigned char>(rnd(tag, static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(from * 4096 + to), i));
  };
  auto sv = [&](int round, int from, int to) {
    return rnd(tag, 1000 + static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(from * 4096 + to), 0) % (1ull << 40) + 1;
  };
  for (int round = 0; round < 4; ++round) {
    // 0: putmem_signal SET, 1: putmem_signal_nbi SET, 2: putmem_signal ADD, 3: putmem_signal_nbi ADD
    const bool nbi = round % 2 == 1, add = round >= 2;
    for (int s = 0; s < n; ++s) fill(want.data() + static_cast<std::size_t>(s) * B, round, s, my);
    poison_of(got.data(), want.data(), N * B);
    local_write(data, got.data(), N * B);
    local_fill<std::uint64_t>(sig, N + 2, 0);
    gshmem_barrier_all();
    for (int j = 0; j < n; ++j) {
      const int t = (my + j) % n;
      unsigned char* src = priv.data() + static_cast<std::size_t>(t) * B;
      fill(src, round, my, t);
      const int op = add ? GSHMEM_SIGNAL_ADD : GSHMEM_SIGNAL_SET;
      if (nbi) gshmem_putmem_signal_nbi(data + static_cast<std::size_t>(my) * B, src, B, sig + my, sv(round, my, t), op, t);
      else gshmem_putmem_signal(data + static_cast<std::size_t>(my) * B, src, B, sig + my, sv(round, my, t), op, t);
      if (add)  // a second signal into the shared word: it reaches the sum only once every sender's data is there
        gshmemx_signal_op(sig + N, sv(round, my, t), GSHMEM_SIGNAL_ADD, t);
    }
    if (add) {
      std::uint64_t total = 0;
      for (int s = 0; s < n; ++s) total += sv(round, s, my);
      std::uint64_t r = gshmem_signal_wait_until(sig + N, GSHMEM_CMP_GE, total);
      MPT_CHECK_EQ(r, total);
    }
    for (int s = 0; s < n; ++s) {
      std::uint64_t r = gshmem_signal_wait_until(sig + s, GSHMEM_CMP_EQ, sv(round, s, my));
      MPT_CHECK_EQ(r, sv(round, s, my));
      MPT_CHECK_EQ(gshmem_signal_fetch(sig + s), sv(round, s, my));
    }
    local_read(got.data(), data, N * B);
    MPT_CHECK_MEM(std::string("putmem_signal round ") + std::to_string(round), got.data(), want.data(), N * B);
    gshmem_barrier_all();
  }
  // signal_op: SET then ADD on my word at every PE; and an ADD race on one word
  local_fill<std::uint64_t>(sig, N + 2, 0);
  gshmem_barrier_all();
  const int K = scaled(16, 4);
  for (int j = 0; j < n; ++j) {
    const int t = (my + j) % n;
    gshmemx_signal_op(sig + my, sv(10, my, t), GSHMEM_SIGNAL_SET, t);
    gshmemx_signal_op(sig + my, sv(11, my, t), GSHMEM_SIGNAL_ADD, t);
    for (int k = 0; k < K; ++k) gshmemx_signal_op(sig + N + 1, sv(12 + k, my, t), GSHMEM_SIGNAL_ADD, t);
  }
  gshmem_barrier_all();
  std::uint64_t race = 0;
  for (int p = 0; p < n; ++p) {
    MPT_CHECK_EQ(gshmem_signal_fetch(sig + p), sv(10, p, my) + sv(11, p, my));
    for (int k = 0; k < K; ++k) race += sv(12 + k, p, my);
  }
  MPT_CHECK_EQ(gshmem_signal_fetch(sig + N + 1), race);
  // signal_wait_until with every comparator, on conditions that hold: returns the current value
  const std::uint64_t cur = gshmem_signal_fetch(sig + N + 1);
  const std::uint64_t arg[6] = {cur, cur + 1, cur - 1, cur, cur + 1, cur};
  for (int c = 0; c < 6; ++c) MPT_CHECK_EQ(gshmem_signal_wait_until(sig + N + 1, c, arg[c]), cur);
  gshmem_barrier_all();
  // a waiter that really waits: PE p's word at the next PE goes from 0 to > 0 late
  local_fill<std::uint64_t>(sig, N + 2, 0);
  gshmem_barrier_all();
  sleep_ms(my == 0 ? 3 : 0);
  gshmemx_signal_op(sig + my, sv(40, my, 0), GSHMEM_SIGNAL_SET, (my + 1) % n);
  const int prev = (my + n - 1) % n;
  MPT_CHECK_EQ(gshmem_signal_wait_until(sig + prev, GSHMEM_CMP_GT, 0), sv(40, prev, 0));
  gshmem_barrier_all();
  gshmem_free(sig);
  gshmem_free(data);
}

// =============================================================================================================
// quiet, fence, barrier_all, sync_all, barrier(WORLD), team_sync(WORLD)
MPT_CASE(ordering) {
  const int n = npes(), my = me();
  const std::size_t N = static_cast<std::size_t>(n), B = 64 * 1024;
  const std::uint64_t tag = tag_of("ordering");
  auto* slots = sym_alloc<std::uint64_t>(N);
  auto* big = sym_alloc<unsigned char>(B);
  auto* flag = sym_alloc<int>(1);
  const int R = scaled(12, 3);
  for (int kind = 0; kind < 4; ++kind) {  // barrier_all, sync_all(+quiet), barrier(WORLD), team_sync(WORLD)
    for (int r = 0; r < R; ++r) {
      if (my == r % n) sleep_ms(2);  // a late PE: nobody may pass the barrier before it arrives
      const std::uint64_t v = rnd(tag, static_cast<std::uint64_t>(kind), static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(my));
      for (int j = 0; j < n; ++j) gshmem_uint64_p(slots + my, v, (my + j) % n);
      switch (kind) {
        case 0: gshmem_barrier_all(); break;
        case 1: gshmem_quiet(); gshmem_sync_all(); break;
        case 2: MPT_CHECK_STATUS(gshmem_barrier(GSHMEM_TEAM_WORLD), GSHMEM_SUCCESS, ""); break;
        case 3: gshmem_quiet(); MPT_CHECK_STATUS(gshmem_team_sync(GSHMEM_TEAM_WORLD), GSHMEM_SUCCESS, ""); break;
      }
      auto got = local_vec(slots, N);
      std::vector<std::uint64_t> want(N);
      for (int p = 0; p < n; ++p) want[static_cast<std::size_t>(p)] = rnd(tag, static_cast<std::uint64_t>(kind), static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(p));
      static const char* kn[] = {"barrier_all", "sync_all", "barrier(WORLD)", "team_sync(WORLD)"};
      MPT_CHECK_ARRAY(std::string(kn[kind]) + " round " + std::to_string(r), got.data(), want.data(), N);
      gshmem_barrier_all();  // everyone read before the next round writes
    }
  }
  // fence and quiet: data then flag; the receiver that sees the flag sees the data.
  std::vector<unsigned char> d(B), want(B), got(B);
  local_set(flag, -1);
  gshmem_barrier_all();
  const int next = (my + 1) % n, prev = (my + n - 1) % n;
  for (int r = 0; r < 4; ++r) {
    for (std::size_t i = 0; i < B; ++i) d[i] = static_cast<unsigned char>(rnd(tag, 50 + static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(my), i / 8) >> (i % 8 * 8));
    for (std::size_t i = 0; i < B; ++i) want[i] = static_cast<unsigned char>(rnd(tag, 50 + static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(prev), i / 8) >> (i % 8 * 8));
    if (r % 2 == 0) {
      gshmem_putmem_nbi(big, d.data(), B, next);
      gshmem_fence();
      gshmem_int_p(flag, r, next);
    } else {
      gshmem_putmem_nbi(big, d.data(), B, next);
      gshmem_quiet();
      gshmem_int_atomic_set(flag, r, next);
    }
    gshmem_int_wait_until(flag, GSHMEM_CMP_EQ, r);
    local_read(got.data(), big, B);
    MPT_CHECK_MEM(std::string(r % 2 ? "quiet" : "fence") + ": data before flag, round " + std::to_string(r), got.data(), want.data(), B);
    gshmem_barrier_all();
  }
  gshmem_free(flag);
  gshmem_free(big);
  gshmem_free(slots);
}

// =============================================================================================================
// symmetric heap: malloc, calloc, align, free, ptr, heap_usage
MPT_CASE(heap) {
  const int n = npes(), my = me();
  const std::uint64_t tag = tag_of("heap");
  gshmemx_heap_usage_t u0{}, u1{}, u2{};
  MPT_CHECK_STATUS(gshmemx_heap_usage(&u0), GSHMEM_SUCCESS, "");
  MPT_CHECK(u0.heap_size > 0 && u0.used <= u0.heap_size && u0.heap_size <= u0.max_size)
      << "heap_size" << u0.heap_size << "used" << u0.used << "max" << u0.max_size;
  // malloc: usage grows by at least the size and one allocation; frees return it
  const std::size_t S = 100000 + rnd(tag, 1) % 4096;
  auto* p = static_cast<unsigned char*>(gshmem_malloc(S));
  MPT_CHECK(p != nullptr);
  MPT_CHECK_STATUS(gshmemx_heap_usage(&u1), GSHMEM_SUCCESS, "");
  MPT_CHECK(u1.used >= u0.used + S) << "used" << u0.used << "->" << u1.used << "after malloc of" << S;
  MPT_CHECK_EQ(u1.allocations, u0.allocations + 1);
  // the object is symmetric: write my data into the next PE's copy, read the previous PE's from mine
  std::vector<unsigned char> d(S), want(S), got(S);
  const int next = (my + 1) % n, prev = (my + n - 1) % n;
  for (std::size_t i = 0; i < S; ++i) d[i] = static_cast<unsigned char>(rnd(tag, 2, static_cast<std::uint64_t>(my), i));
  for (std::size_t i = 0; i < S; ++i) want[i] = static_cast<unsigned char>(rnd(tag, 2, static_cast<std::uint64_t>(prev), i));
  gshmem_putmem(p, d.data(), S, next);
  gshmem_barrier_all();
  local_read(got.data(), p, S);
  MPT_CHECK_MEM("malloc'd object written by the previous PE", got.data(), want.data(), S);
  gshmem_barrier_all();
  gshmem_free(p);
  MPT_CHECK_STATUS(gshmemx_heap_usage(&u2), GSHMEM_SUCCESS, "");
  MPT_CHECK_EQ(u2.used, u0.used);
  MPT_CHECK_EQ(u2.allocations, u0.allocations);
  gshmem_free(nullptr);  // OpenSHMEM: no action

  // calloc: zeroed, also where the memory was dirty before
  for (int round = 0; round < 3; ++round) {
    const std::size_t cnt = 1000 + rnd(tag, 3, static_cast<std::uint64_t>(round)) % 5000, sz = static_cast<std::size_t>(round * 4 + 1);
    auto* dirty = static_cast<unsigned char*>(gshmem_malloc(cnt * sz));
    MPT_CHECK(dirty != nullptr);
    local_fill<unsigned char>(dirty, cnt * sz, 0xC3);
    gshmem_barrier_all();
    gshmem_free(dirty);
    auto* z = static_cast<unsigned char*>(gshmem_calloc(cnt, sz));
    MPT_CHECK(z != nullptr);
    auto v = local_vec(z, cnt * sz);
    std::vector<unsigned char> zeros(cnt * sz, 0);
    MPT_CHECK_MEM("gshmem_calloc(" + std::to_string(cnt) + ", " + std::to_string(sz) + ") is zeroed", v.data(), zeros.data(), cnt * sz);
    gshmem_free(z);
  }
  // align: every power of two up to 4096, between odd-sized objects; usable from peers
  std::vector<void*> keep;
  for (std::size_t al = 1; al <= 4096; al *= 2) {
    keep.push_back(gshmem_malloc(3 + al % 7));
    auto* q = static_cast<std::uint64_t*>(gshmem_align(al, 24));
    MPT_CHECK(q != nullptr && reinterpret_cast<std::uintptr_t>(q) % al == 0) << "gshmem_align(" << al << ") returned" << static_cast<void*>(q);
    if (al >= 8 && q) {
      const std::uint64_t val = rnd(tag, 4, al, static_cast<std::uint64_t>(my));
      gshmem_uint64_p(q, val, next);
      gshmem_barrier_all();
      MPT_CHECK_EQ(local_get(q), rnd(tag, 4, al, static_cast<std::uint64_t>(prev)));
      gshmem_barrier_all();
    }
    keep.push_back(q);
  }
  for (auto it = keep.rbegin(); it != keep.rend(); ++it) gshmem_free(*it);
  gshmemx_heap_usage_t u3{};
  MPT_CHECK_STATUS(gshmemx_heap_usage(&u3), GSHMEM_SUCCESS, "");
  MPT_CHECK_EQ(u3.allocations, u0.allocations);
  MPT_CHECK_EQ(u3.used, u0.used);
  MPT_CHECK_STATUS(gshmemx_heap_usage(nullptr), GSHMEM_ERROR_INVALID_VALUE, "gshmemx_heap_usage");

  // gshmem_ptr: every PE of this node is reachable; a non-heap address gives NULL
  auto* w = sym_alloc<std::uint64_t>(static_cast<std::size_t>(n));
  local_fill<std::uint64_t>(w, static_cast<std::size_t>(n), 0);
  std::uint64_t on_stack = 0;
  gshmem_barrier_all();
  for (int pe = 0; pe < n; ++pe) {
    MPT_CHECK(gshmem_ptr(w, pe) != nullptr) << "gshmem_ptr(heap object, PE" << pe << ") is NULL on one node";
    MPT_CHECK(gshmem_ptr(&on_stack, pe) == nullptr) << "gshmem_ptr(stack address, PE" << pe << ") is not NULL";
    MPT_CHECK(gshmem_ptr(nullptr, pe) == nullptr);
  }
  if (!st().gpu) {  // CPU PEs: peer pointers work for loads and stores of this process
    MPT_CHECK(gshmem_ptr(w, my) == w) << "gshmem_ptr(p, my_pe) should be p";
    for (int pe = 0; pe < n; ++pe) {
      auto* q = static_cast<volatile std::uint64_t*>(gshmem_ptr(w, pe));
      if (q) q[my] = rnd(tag, 5, static_cast<std::uint64_t>(my), static_cast<std::uint64_t>(pe));
    }
    gshmem_barrier_all();
    for (int pe = 0; pe < n; ++pe) {
      MPT_CHECK_EQ(local_get(w + pe), rnd(tag, 5, static_cast<std::uint64_t>(pe), static_cast<std::uint64_t>(my)));
      auto* q = static_cast<volatile std::uint64_t*>(gshmem_ptr(w, pe));
      if (q) MPT_CHECK_EQ(static_cast<std::uint64_t>(q[(my + 1) % n]), rnd(tag, 5, static_cast<std::uint64_t>((my + 1) % n), static_cast<std::uint64_t>(pe)));
    }
  }
  gshmem_barrier_all();
  gshmem_free(w);
}

// Heap growth: allocate well past GSHMEM_SYMMETRIC_SIZE (run with GSHMEM_SYMMETRIC_SIZE=1M): 64 MiB in chunks,
// each written through the next PE, all read back after the last growth.
MPT_CASE(heap_growth) {
  const int n = npes(), my = me();
  const std::uint64_t tag = tag_of("heap_growth");
  gshmemx_heap_usage_t u0{}, u1{};
  gshmemx_heap_usage(&u0);
  const std::size_t M = std::size_t(1) << 20;
  const std::size_t sizes[] = {M + 3, 2 * M, 4 * M - 17, 8 * M, M / 2, 16 * M + 64, 33 * M + 5};
  std::vector<std::uint64_t*> chunks;
  std::size_t total = 0;
  const int next = (my + 1) % n, prev = (my + n - 1) % n;
  auto fill = [&](std::vector<std::uint64_t>& out, std::size_t c, int from, std::size_t words) {
    out.resize(words);
    for (std::size_t i = 0; i < words; ++i) out[i] = rnd(tag, c, static_cast<std::uint64_t>(from), i);
  };
  std::vector<std::uint64_t> d, want, got;
  for (std::size_t c = 0; c < sizeof sizes / sizeof sizes[0]; ++c) {
    const std::size_t words = sizes[c] / 8;
    auto* p = static_cast<std::uint64_t*>(c % 2 ? gshmem_calloc(words, 8) : gshmem_malloc(sizes[c]));
    MPT_CHECK(p != nullptr) << "allocation of" << sizes[c] << "bytes with" << total << "already allocated";
    require(p != nullptr, "heap growth allocation failed");
    if (c % 2) {  // calloc'd memory that came from growth is zero
      auto z = local_vec(p, words);
      std::vector<std::uint64_t> zeros(words, 0);
      MPT_CHECK_ARRAY("calloc after growth, chunk " + std::to_string(c), z.data(), zeros.data(), words);
      gshmem_barrier_all();  // every PE checked its zeros before anyone writes into the chunk
    }
    chunks.push_back(p);
    total += sizes[c];
    fill(d, c, my, words);
    gshmem_putmem(p, d.data(), words * 8, next);
    if (!st().gpu) {  // and through a peer pointer: the last word
      auto* q = static_cast<std::uint64_t*>(gshmem_ptr(p, next));
      MPT_CHECK(q != nullptr) << "gshmem_ptr on a chunk from heap growth";
      if (q) q[words - 1] = ~d[words - 1];
    }
  }
  MPT_CHECK(total >= 64 * M);
  gshmem_barrier_all();
  gshmemx_heap_usage(&u1);
  MPT_CHECK(u1.heap_size >= u0.used + total) << "heap_size" << u1.heap_size << "for" << total << "bytes";
  if (u0.heap_size < 64 * M) MPT_CHECK(u1.heap_size > u0.heap_size) << "the heap did not grow";
  else if (my == 0) std::printf("mpt: heap_growth: initial heap %llu bytes >= 64 MiB, growth not exercised "
                                "(run with GSHMEM_SYMMETRIC_SIZE=1M)\n", static_cast<unsigned long long>(u0.heap_size));
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const std::size_t words = sizes[c] / 8;
    fill(want, c, prev, words);
    if (!st().gpu) want[words - 1] = ~want[words - 1];
    got.assign(words, 0);
    local_read(got.data(), chunks[c], words * 8);
    MPT_CHECK_ARRAY("chunk " + std::to_string(c) + " (" + std::to_string(sizes[c]) + " bytes) after growth", got.data(), want.data(), words);
    fill(want, c, my, words);
    if (!st().gpu) want[words - 1] = ~want[words - 1];
    gshmem_getmem(got.data(), chunks[c], words * 8, next);
    MPT_CHECK_ARRAY("chunk " + std::to_string(c) + " read back from the next PE", got.data(), want.data(), words);
  }
  gshmem_barrier_all();
  for (auto it = chunks.rbegin(); it != chunks.rend(); ++it) gshmem_free(*it);
  gshmemx_heap_usage(&u1);
  MPT_CHECK_EQ(u1.used, u0.used);
  MPT_CHECK_EQ(u1.allocations, u0.allocations);
}

// =============================================================================================================
// teams
// Reference model: a team is the list of its world PEs.
using Members = std::vector<int>;
Members world_members() {
  Members m(static_cast<std::size_t>(npes()));
  std::iota(m.begin(), m.end(), 0);
  return m;
}
int index_in(const Members& m, int pe) {
  auto it = std::find(m.begin(), m.end(), pe);
  return it == m.end() ? -1 : static_cast<int>(it - m.begin());
}

// Checks a team handle against its reference member list, and that barrier/sync over it work (data moved
// between members before the barrier is seen by every member after it). `buf`: symmetric, n_pes uint64 slots.
void check_team(gshmem_team_t t, const Members& m, const std::string& what, std::uint64_t* buf, std::uint64_t round) {
  const int my = me(), n = npes();
  const int idx = index_in(m, my);
  if (idx < 0) {
    MPT_CHECK_EQ(t, GSHMEM_TEAM_INVALID);
    MPT_CHECK_EQ(gshmem_team_my_pe(t), -1);
    MPT_CHECK_EQ(gshmem_team_n_pes(t), -1);
    return;
  }
  MPT_CHECK(t != GSHMEM_TEAM_INVALID) << what << ": a member got GSHMEM_TEAM_INVALID";
  if (t == GSHMEM_TEAM_INVALID) return;
  const int size = static_cast<int>(m.size());
  MPT_CHECK(gshmem_team_my_pe(t) == idx) << what << "team_my_pe" << gshmem_team_my_pe(t) << "want" << idx;
  MPT_CHECK(gshmem_team_n_pes(t) == size) << what << "team_n_pes" << gshmem_team_n_pes(t) << "want" << size;
  for (int i = 0; i < size; ++i)
    MPT_CHECK(gshmem_team_translate_pe(t, i, GSHMEM_TEAM_WORLD) == m[static_cast<std::size_t>(i)])
        << what << "translate_pe(team," << i << ", WORLD) =" << gshmem_team_translate_pe(t, i, GSHMEM_TEAM_WORLD)
        << "want" << m[static_cast<std::size_t>(i)];
  for (int w = -1; w <= n; ++w)
    MPT_CHECK(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, w, t) == (w < 0 || w >= n ? -1 : index_in(m, w)))
        << what << "translate_pe(WORLD," << w << ", team) =" << gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, w, t);
  MPT_CHECK_EQ(gshmem_team_translate_pe(t, size, GSHMEM_TEAM_WORLD), -1);
  MPT_CHECK_EQ(gshmem_team_translate_pe(t, -1, GSHMEM_TEAM_WORLD), -1);
  MPT_CHECK_EQ(gshmem_team_translate_pe(t, idx, t), idx);
  gshmem_team_config_t cfg{};
  cfg.num_contexts = 77;
  gshmem_team_get_config(t, &cfg);
  MPT_CHECK_EQ(cfg.num_contexts, 0);
  // barrier: every member writes its value into its slot at every member; after the barrier all are there
  for (int kind = 0; kind < 2; ++kind) {
    const std::uint64_t v = rnd(tag_of("team"), round * 2 + static_cast<std::uint64_t>(kind), static_cast<std::uint64_t>(my));
    if (idx == static_cast<int>(round % static_cast<std::uint64_t>(size))) sleep_ms(1);
    for (int i = 0; i < size; ++i) gshmem_uint64_p(buf + my, v, m[static_cast<std::size_t>(i)]);
    if (kind == 0) MPT_CHECK_STATUS(gshmem_barrier(t), GSHMEM_SUCCESS, "");
    else {
      gshmem_quiet();
      MPT_CHECK_STATUS(gshmem_team_sync(t), GSHMEM_SUCCESS, "");
    }
    for (int i = 0; i < size; ++i) {
      const int pe = m[static_cast<std::size_t>(i)];
      MPT_CHECK(local_get(buf + pe) == rnd(tag_of("team"), round * 2 + static_cast<std::uint64_t>(kind), static_cast<std::uint64_t>(pe)))
          << what << (kind ? "team_sync" : "barrier") << ": the value of member" << i << "(PE" << pe << ") is missing";
    }
    MPT_CHECK_STATUS(gshmem_barrier(t), GSHMEM_SUCCESS, "");  // all read before anyone writes again
  }
}

// A small collective over a team: every member calls. `red` and `src`: symmetric, 2 ints each.
void check_team_collective(gshmem_team_t t, const Members& m, const std::string& what, int* red, int* src) {
  const int my = me(), size = static_cast<int>(m.size());
  int want0 = 0, want1 = 0;
  for (int pe : m) want0 += pe + 1, want1 += 2 * pe;
  gshmem_int_p(src, my + 1, my);
  gshmem_int_p(src + 1, 2 * my, my);
  gshmem_quiet();
  MPT_CHECK_STATUS(gshmem_int_sum_reduce(t, red, src, 2), GSHMEM_SUCCESS, what.c_str());
  MPT_CHECK(local_get(red) == want0 && local_get(red + 1) == want1)
      << what << "sum_reduce:" << local_get(red) << local_get(red + 1) << "want" << want0 << want1;
  const int root = size - 1, root_pe = m.back();
  MPT_CHECK_STATUS(gshmem_int_broadcast(t, red, src, 2, root), GSHMEM_SUCCESS, what.c_str());
  if (my != root_pe)
    MPT_CHECK(local_get(red) == root_pe + 1 && local_get(red + 1) == 2 * root_pe)
        << what << "broadcast from team index" << root << ":" << local_get(red) << local_get(red + 1);
  MPT_CHECK_STATUS(gshmem_barrier(t), GSHMEM_SUCCESS, what.c_str());
}

// The GPU teams' reference model: every PE's device (its CUDA ordinal; a CPU PE is a device of its own), swapped
// through `buf`. SAME_GPU: the PEs of my device; GPU_LEADERS: the lowest PE of each device.
struct GpuModel {
  Members same_gpu, leaders;
};
GpuModel gpu_model(std::uint64_t* buf) {
  const int my = me(), n = npes();
  int ordinal = -1;
  gshmemx_query_device(&ordinal, nullptr);
  const std::uint64_t key = ordinal >= 0 ? static_cast<std::uint64_t>(ordinal) : 1000000u + static_cast<std::uint64_t>(my);
  for (int p = 0; p < n; ++p) gshmem_uint64_p(buf + my, key, p);
  gshmem_barrier_all();
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) keys[static_cast<std::size_t>(p)] = local_get(buf + p);
  gshmem_barrier_all();
  GpuModel g;
  for (int p = 0; p < n; ++p) {
    const std::uint64_t k = keys[static_cast<std::size_t>(p)];
    if (k == key) g.same_gpu.push_back(p);
    if (std::find(keys.begin(), keys.begin() + p, k) == keys.begin() + p) g.leaders.push_back(p);
  }
  return g;
}

// A GPU team: its members get check_team and a collective (a member list where the PEs are not evenly spaced);
// elsewhere the handle answers like one of a team this PE is not in.
void check_gpu_team(gshmem_team_t t, const Members& m, const std::string& what, std::uint64_t* buf,
                    std::uint64_t round, int* red, int* src) {
  const int my = me();
  if (index_in(m, my) >= 0) {
    check_team(t, m, what, buf, round);
    check_team_collective(t, m, what, red, src);
    return;
  }
  MPT_CHECK(gshmem_team_my_pe(t) == -1 && gshmem_team_n_pes(t) == -1)
      << what << "on a PE it does not hold: team_my_pe" << gshmem_team_my_pe(t) << "team_n_pes"
      << gshmem_team_n_pes(t) << "(want -1, -1)";
  MPT_CHECK_EQ(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, my, t), -1);
  MPT_CHECK_EQ(gshmem_team_translate_pe(t, 0, GSHMEM_TEAM_WORLD), -1);
}

MPT_CASE(teams_predefined) {
  const int n = npes(), my = me();
  auto* buf = sym_alloc<std::uint64_t>(static_cast<std::size_t>(n));
  MPT_CHECK_EQ(gshmem_team_my_pe(GSHMEM_TEAM_WORLD), my);
  MPT_CHECK_EQ(gshmem_team_n_pes(GSHMEM_TEAM_WORLD), n);
  check_team(GSHMEM_TEAM_WORLD, world_members(), "TEAM_WORLD", buf, 1);
  check_team(GSHMEM_TEAM_SHARED, world_members(), "TEAM_SHARED (one node)", buf, 2);
  check_team(GSHMEMX_TEAM_NODE, world_members(), "TEAM_NODE (one node)", buf, 3);
  check_team(GSHMEMX_TEAM_SAME_MYPE_NODE, Members{my}, "TEAM_SAME_MYPE_NODE", buf, 4);
  const gshmem_team_t all[] = {GSHMEM_TEAM_WORLD, GSHMEM_TEAM_SHARED, GSHMEMX_TEAM_NODE};
  for (auto a : all)
    for (auto b : all)
      for (int p = 0; p < n; ++p) MPT_CHECK_EQ(gshmem_team_translate_pe(a, p, b), p);
  MPT_CHECK_EQ(gshmem_team_translate_pe(GSHMEMX_TEAM_SAME_MYPE_NODE, 0, GSHMEM_TEAM_WORLD), my);
  MPT_CHECK_EQ(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, my, GSHMEMX_TEAM_SAME_MYPE_NODE), 0);
  for (int p = 0; p < n; ++p)
    if (p != my) MPT_CHECK_EQ(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, p, GSHMEMX_TEAM_SAME_MYPE_NODE), -1);
  // SAME_GPU and GPU_LEADERS: on CPU PEs (each its own device) {me} and every PE; on GPU PEs from the devices
  MPT_CHECK_EQ(GSHMEM_TEAM_SAME_GPU_INDEX, GSHMEMX_TEAM_SAME_GPU);
  MPT_CHECK_EQ(GSHMEM_TEAM_GPU_LEADERS_INDEX, GSHMEMX_TEAM_GPU_LEADERS);
  MPT_CHECK_EQ(GSHMEM_TEAMS_MIN, 6);
  auto* red = sym_alloc<int>(2);
  auto* src = sym_alloc<int>(2);
  const GpuModel g = gpu_model(buf);
  int ordinal = -1;
  gshmemx_query_device(&ordinal, nullptr);
  if (ordinal < 0) {
    MPT_CHECK(g.same_gpu == Members{my}) << "CPU PE: the model's SAME_GPU is not {me}";
    MPT_CHECK(g.leaders == world_members()) << "CPU PEs: the model's GPU_LEADERS is not every PE";
  }
  check_team_collective(GSHMEMX_TEAM_SAME_MYPE_NODE, Members{my}, "TEAM_SAME_MYPE_NODE", red, src);
  gshmem_barrier_all();
  check_gpu_team(GSHMEMX_TEAM_SAME_GPU, g.same_gpu, "TEAM_SAME_GPU", buf, 5, red, src);
  gshmem_barrier_all();
  check_gpu_team(GSHMEMX_TEAM_GPU_LEADERS, g.leaders, "TEAM_GPU_LEADERS", buf, 6, red, src);
  gshmem_barrier_all();
  if (index_in(g.same_gpu, my) >= 0) {
    for (int i = 0; i < static_cast<int>(g.same_gpu.size()); ++i)  // between two predefined teams
      MPT_CHECK_EQ(gshmem_team_translate_pe(GSHMEMX_TEAM_SAME_GPU, i, GSHMEMX_TEAM_SAME_MYPE_NODE),
                   g.same_gpu[static_cast<std::size_t>(i)] == my ? 0 : -1);
    if (index_in(g.leaders, my) >= 0)  // index 0 of my GPU's PEs is its leader
      MPT_CHECK_EQ(gshmem_team_translate_pe(GSHMEMX_TEAM_SAME_GPU, 0, GSHMEMX_TEAM_GPU_LEADERS),
                   index_in(g.leaders, g.same_gpu.front()));
  }
  if (index_in(g.leaders, my) >= 0)
    for (int i = 0; i < static_cast<int>(g.leaders.size()); ++i)
      MPT_CHECK_EQ(gshmem_team_translate_pe(GSHMEMX_TEAM_GPU_LEADERS, i, GSHMEM_TEAM_WORLD),
                   g.leaders[static_cast<std::size_t>(i)]);
  gshmem_free(src);
  gshmem_free(red);
  MPT_CHECK_EQ(gshmem_team_translate_pe(GSHMEM_TEAM_INVALID, 0, GSHMEM_TEAM_WORLD), -1);
  MPT_CHECK_EQ(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, 0, GSHMEM_TEAM_INVALID), -1);
  MPT_CHECK_EQ(gshmem_team_my_pe(GSHMEM_TEAM_INVALID), -1);
  MPT_CHECK_EQ(gshmem_team_n_pes(GSHMEM_TEAM_INVALID), -1);
  gshmem_barrier_all();
  gshmem_free(buf);
}

MPT_CASE(teams_split_strided) {
  const int n = npes();
  auto* buf = sym_alloc<std::uint64_t>(static_cast<std::size_t>(n));
  struct Spec {
    int start, stride, size;
  };
  std::vector<Spec> specs = {{0, 1, n}, {0, 1, 1}, {n - 1, 1, 1}, {0, 2, (n + 1) / 2}, {n / 2, 1, n - n / 2}};
  if (n >= 2) specs.push_back({1, 2, n / 2});
  if (n >= 3) specs.push_back({1, 1, n - 1}), specs.push_back({0, n - 1, 2}), specs.push_back({2, 3, (n - 3) / 3 + 1});
  if (n >= 4) specs.push_back({1, 3, (n - 2) / 3 + 1});
  specs.push_back({n - 1, 7, 1});  // size 1: any stride
  for (std::size_t si = 0; si < specs.size(); ++si) {
    const Spec& s = specs[si];
    std::uint64_t round = 10 + 2 * si;  // the same on every PE, member or not
    Members ref;
    for (int i = 0; i < s.size; ++i) ref.push_back(s.start + i * s.stride);
    gshmem_team_t t = 12345;
    MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, s.start, s.stride, s.size, nullptr, 0, &t),
                     GSHMEM_SUCCESS, "");
    const std::string what = "split_strided(WORLD, " + std::to_string(s.start) + ", " + std::to_string(s.stride) +
                             ", " + std::to_string(s.size) + ")";
    check_team(t, ref, what, buf, round);
    // a split of the split: every other member, starting at its second (when it has one)
    if (t != GSHMEM_TEAM_INVALID && s.size >= 2) {
      Members sub;
      for (int i = 1; i < s.size; i += 2) sub.push_back(ref[static_cast<std::size_t>(i)]);
      gshmem_team_t u = 12345;
      MPT_CHECK_STATUS(gshmem_team_split_strided(t, 1, 2, static_cast<int>(sub.size()), nullptr, 0, &u), GSHMEM_SUCCESS, "");
      check_team(u, sub, what + " then (1, 2, " + std::to_string(sub.size()) + ")", buf, round + 1);
      if (u != GSHMEM_TEAM_INVALID) {
        for (int i = 0; i < static_cast<int>(sub.size()); ++i)
          MPT_CHECK_EQ(gshmem_team_translate_pe(u, i, t), 1 + 2 * i);
        gshmem_team_destroy(u);
      }
    }
    gshmem_barrier_all();
    gshmem_team_destroy(t);  // GSHMEM_TEAM_INVALID on non-members: a no-op
    gshmem_barrier_all();
  }
  gshmem_free(buf);
}

MPT_CASE(teams_split_2d) {
  const int n = npes(), my = me();
  auto* buf = sym_alloc<std::uint64_t>(static_cast<std::size_t>(n));
  std::vector<int> xranges = {1, 2, 3, n, n + 3};
  if (n > 4) xranges.push_back(n / 2);
  std::uint64_t round = 500;
  // over WORLD and over a strided parent (every PE but the first)
  for (int parent_kind = 0; parent_kind < 2; ++parent_kind) {
    Members parent = world_members();
    gshmem_team_t pt = GSHMEM_TEAM_WORLD;
    if (parent_kind == 1) {
      if (n < 2) continue;
      parent.erase(parent.begin());
      MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 1, 1, n - 1, nullptr, 0, &pt), GSHMEM_SUCCESS, "");
    }
    const int r = index_in(parent, my);
    for (int xr : xranges) {
      if (r >= 0) {
        const int m = static_cast<int>(parent.size());
        const int x = std::min(xr, m);
        Members xs, ys;
        for (int j = (r / x) * x; j < std::min((r / x) * x + x, m); ++j) xs.push_back(parent[static_cast<std::size_t>(j)]);
        for (int j = r % x; j < m; j += x) ys.push_back(parent[static_cast<std::size_t>(j)]);
        gshmem_team_t xt = 12345, yt = 12345;
        MPT_CHECK_STATUS(gshmem_team_split_2d(pt, xr, nullptr, 0, &xt, nullptr, 0, &yt), GSHMEM_SUCCESS, "");
        const std::string what = std::string(parent_kind ? "split_2d(WORLD minus PE 0, " : "split_2d(WORLD, ") +
                                 std::to_string(xr) + ")";
        // x and y teams over the whole parent: barriers are team-collective, so check x then y in turn
        check_team(xt, xs, what + " x-axis", buf, round++);
        check_team(yt, ys, what + " y-axis", buf, round++);
        MPT_CHECK_EQ(gshmem_team_my_pe(xt), r % x);
        MPT_CHECK_EQ(gshmem_team_my_pe(yt), r / x);
        for (int i = 0; i < static_cast<int>(xs.size()); ++i)
          MPT_CHECK_EQ(gshmem_team_translate_pe(xt, i, pt), (r / x) * x + i);
        for (int i = 0; i < static_cast<int>(ys.size()); ++i) MPT_CHECK_EQ(gshmem_team_translate_pe(yt, i, pt), r % x + i * x);
        MPT_CHECK_STATUS(gshmem_team_sync(pt), GSHMEM_SUCCESS, "");
        gshmem_team_destroy(xt);
        gshmem_team_destroy(yt);
      }
      gshmem_barrier_all();
    }
    if (parent_kind == 1 && pt != GSHMEM_TEAM_INVALID) gshmem_team_destroy(pt);
    gshmem_barrier_all();
  }
  gshmem_free(buf);
}

// Create/destroy many times (more cycles than team slots), several teams alive at once, destroyed in a random
// order; handles must keep working and destroyed handles must read as not live.
MPT_CASE(teams_cycles) {
  const int n = npes(), my = me();
  const int cycles = n <= 4 ? 100 : 70;
  std::map<int, int> handles_seen;
  for (int c = 0; c < cycles; ++c) {
    const int stride = 1 + c % 2, size = stride == 1 ? n : (n + 1) / 2;
    gshmem_team_t t = GSHMEM_TEAM_INVALID;
    MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, stride, size, nullptr, 0, &t), GSHMEM_SUCCESS, "");
    const bool member = my % stride == 0;
    if (member) {
      MPT_CHECK(t != GSHMEM_TEAM_INVALID) << "cycle" << c;
      MPT_CHECK_EQ(gshmem_team_my_pe(t), my / stride);
      MPT_CHECK_EQ(gshmem_team_n_pes(t), size);
      MPT_CHECK_STATUS(gshmem_team_sync(t), GSHMEM_SUCCESS, "");
      ++handles_seen[t];
    } else {
      MPT_CHECK_EQ(t, GSHMEM_TEAM_INVALID);
    }
    gshmem_team_destroy(t);
    if (member) MPT_CHECK(gshmem_team_n_pes(t) == -1) << "destroyed team" << t << "still answers n_pes";
    if (c % 10 == 9) {
      gshmem_team_t x, y;
      MPT_CHECK_STATUS(gshmem_team_split_2d(GSHMEM_TEAM_WORLD, 2, nullptr, 0, &x, nullptr, 0, &y), GSHMEM_SUCCESS, "");
      MPT_CHECK_EQ(gshmem_team_n_pes(x), std::min(2, n - (my / 2) * 2));
      gshmem_team_destroy(y);
      gshmem_team_destroy(x);
    }
  }
  if (my == 0)
    std::printf("mpt: teams_cycles: %d create/destroy cycles used %zu distinct handles\n", cycles, handles_seen.size());
  // several alive at once, destroyed in a random (but common) order, then split again
  auto* buf = sym_alloc<std::uint64_t>(static_cast<std::size_t>(n));
  const int alive = 12;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<gshmem_team_t> ts(static_cast<std::size_t>(alive), GSHMEM_TEAM_INVALID);
    std::vector<Members> refs(static_cast<std::size_t>(alive));
    for (int i = 0; i < alive; ++i) {
      const int start = static_cast<int>(rnd(tag_of("cycles"), static_cast<std::uint64_t>(rep), static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(n));
      const int size = n - start;
      for (int j = 0; j < size; ++j) refs[static_cast<std::size_t>(i)].push_back(start + j);
      MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, start, 1, size, nullptr, 0, &ts[static_cast<std::size_t>(i)]),
                       GSHMEM_SUCCESS, "");
    }
    std::vector<int> order(static_cast<std::size_t>(alive));
    std::iota(order.begin(), order.end(), 0);
    for (int i = alive - 1; i > 0; --i)
      std::swap(order[static_cast<std::size_t>(i)], order[rnd(tag_of("order"), static_cast<std::uint64_t>(rep), static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(i + 1)]);
    for (int k = 0; k < alive; ++k) {
      const int i = order[static_cast<std::size_t>(k)];
      if (k < 3) {  // use a few of them right before destroying
        gshmem_barrier_all();
        check_team(ts[static_cast<std::size_t>(i)], refs[static_cast<std::size_t>(i)], "team " + std::to_string(i) + " of " + std::to_string(alive) + " alive", buf,
                   1000 + static_cast<std::uint64_t>(rep * 100 + k));
        gshmem_barrier_all();
      }
      gshmem_team_destroy(ts[static_cast<std::size_t>(i)]);
    }
    gshmem_barrier_all();
  }
  gshmem_free(buf);
}

// Team calls that return a status: bad arguments fail the same way on every PE, naming the call.
MPT_CASE(team_errors) {
  const int n = npes(), my = me();
  gshmem_team_t t = 777;
  MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, n, 1, 1, nullptr, 0, &t), GSHMEM_ERROR_INVALID_VALUE,
                   "gshmem_team_split_strided");
  MPT_CHECK_EQ(t, GSHMEM_TEAM_INVALID);
  MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, n + 1, nullptr, 0, &t), GSHMEM_ERROR_INVALID_VALUE,
                   "gshmem_team_split_strided");
  MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, 0, nullptr, 0, &t), GSHMEM_ERROR_INVALID_VALUE,
                   "gshmem_team_split_strided");
  MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, n, nullptr, 0, nullptr), GSHMEM_ERROR_INVALID_VALUE,
                   "gshmem_team_split_strided");
  if (n >= 2) {  // PEs disagree on the arguments: every PE gets MISMATCH
    MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, my == 0 ? 1 : 2, nullptr, 0, &t),
                     GSHMEM_ERROR_MISMATCH, "gshmem_team_split_strided");
    MPT_CHECK_EQ(t, GSHMEM_TEAM_INVALID);
  }
  if (n >= 2) {
    // PEs may name different teams that do not overlap (DeepEP's rail teams): PE 0 alone, the others together
    gshmem_team_t part = 777;
    MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, my == 0 ? 0 : 1, 1, my == 0 ? 1 : n - 1, nullptr, 0,
                                               &part), GSHMEM_SUCCESS, "");
    MPT_CHECK_EQ(gshmem_team_n_pes(part), my == 0 ? 1 : n - 1);
    MPT_CHECK_EQ(gshmem_team_my_pe(part), my == 0 ? 0 : my - 1);
    MPT_CHECK_STATUS(gshmem_barrier(part), GSHMEM_SUCCESS, "");
    gshmem_team_destroy(part);
    // ... but not teams that overlap: PE 0 names the world, every other PE itself alone
    MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, my == 0 ? 0 : my, 1, my == 0 ? n : 1, nullptr, 0, &t),
                     GSHMEM_ERROR_MISMATCH, "which passed start=1 stride=1 size=1");
    MPT_CHECK_EQ(t, GSHMEM_TEAM_INVALID);
  }
  gshmem_team_t x = 777, y = 777;
  MPT_CHECK_STATUS(gshmem_team_split_2d(GSHMEM_TEAM_WORLD, 0, nullptr, 0, &x, nullptr, 0, &y), GSHMEM_ERROR_INVALID_VALUE,
                   "gshmem_team_split_2d");
  // a parent this PE holds as GSHMEM_TEAM_INVALID (it is not in it): fails here alone, the outputs INVALID
  x = y = t = 777;
  MPT_CHECK_STATUS(gshmem_team_split_2d(GSHMEM_TEAM_INVALID, 1, nullptr, 0, &x, nullptr, 0, &y),
                   GSHMEM_ERROR_INVALID_VALUE, "the parent team is GSHMEM_TEAM_INVALID");
  MPT_CHECK(x == GSHMEM_TEAM_INVALID && y == GSHMEM_TEAM_INVALID) << "split_2d of INVALID gave" << x << y;
  MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_INVALID, 0, 1, 1, nullptr, 0, &t), GSHMEM_ERROR_INVALID_VALUE,
                   "the parent team is GSHMEM_TEAM_INVALID");
  MPT_CHECK_EQ(t, GSHMEM_TEAM_INVALID);
  MPT_CHECK_STATUS(gshmem_barrier(4242), GSHMEM_ERROR_INVALID_VALUE, "gshmem_barrier");
  MPT_CHECK_STATUS(gshmem_team_sync(-7), GSHMEM_ERROR_INVALID_VALUE, "gshmem_team_sync");
  MPT_CHECK_STATUS(gshmem_barrier(GSHMEM_TEAM_INVALID), GSHMEM_ERROR_INVALID_VALUE, "gshmem_barrier");
  if (gshmem_team_my_pe(GSHMEMX_TEAM_GPU_LEADERS) < 0) {  // GPU PEs that share a GPU and are not its lowest PE
    MPT_CHECK_STATUS(gshmem_barrier(GSHMEMX_TEAM_GPU_LEADERS), GSHMEM_ERROR_INVALID_VALUE, "GSHMEMX_TEAM_GPU_LEADERS");
    MPT_CHECK_STATUS(gshmem_team_sync(GSHMEMX_TEAM_GPU_LEADERS), GSHMEM_ERROR_INVALID_VALUE, "gshmem_team_sync");
  }
  // slots run out after 64 - GSHMEM_TEAMS_MIN splits (the predefined slots are never handed out)
  std::vector<gshmem_team_t> many;
  for (int k = 0; k < 70; ++k) {
    gshmem_team_t u = GSHMEM_TEAM_INVALID;
    const int st = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, n, nullptr, 0, &u);
    if (st != GSHMEM_SUCCESS) {
      MPT_CHECK_STATUS(st, GSHMEM_ERROR_OUT_OF_MEMORY, "58 team slots for splits (64 in all, 6 predefined)");
      break;
    }
    MPT_CHECK(u >= GSHMEM_TEAMS_MIN && u < 64) << "split" << k << "took slot" << u;
    many.push_back(u);
  }
  MPT_CHECK_EQ(static_cast<int>(many.size()), 64 - GSHMEM_TEAMS_MIN);
  for (gshmem_team_t u : many) gshmem_team_destroy(u);
  // after all those errors the job still works
  gshmem_team_t ok = GSHMEM_TEAM_INVALID;
  MPT_CHECK_STATUS(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, n, nullptr, 0, &ok), GSHMEM_SUCCESS, "");
  MPT_CHECK_EQ(gshmem_team_n_pes(ok), n);
  MPT_CHECK(ok >= GSHMEM_TEAMS_MIN) << "a split took slot" << ok << ", a predefined team's";
  MPT_CHECK_STATUS(gshmem_barrier(ok), GSHMEM_SUCCESS, "");
  gshmem_team_destroy(ok);
}

// gshmemx_team_init (NVSHMEM 3.4's nvshmemx_team_init): teams made by their members alone from a unique ID that
// PE 0 gets and hands out through the heap. The whole world in order, the even and the odd PEs at once (two IDs),
// a team of one, sets that are no progression (a member list: the world reversed, NVSHMEM's own three test sets,
// and their splits), the same PEs over and over (slots come back), then the refusals: bad arguments (local), two
// members with one index and members that disagree on the size (every member: MISMATCH); after them a team is
// made as before.
MPT_CASE(team_init) {
  const int n = npes(), my = me();
  auto* buf = sym_alloc<std::uint64_t>(static_cast<std::size_t>(n));
  auto* ids = sym_alloc<std::uint64_t>(2);
  auto* red = sym_alloc<int>(2);
  auto* src = sym_alloc<int>(2);
  std::uint64_t round = 900;
  // Two fresh IDs from PE 0 on every PE (also a barrier: every PE is done with the previous team).
  auto fresh_ids = [&](std::uint64_t out[2]) {
    gshmem_barrier_all();
    if (my == 0) {
      for (int k = 0; k < 2; ++k) {
        gshmemx_team_uniqueid_t id = 0;
        MPT_CHECK_STATUS(gshmemx_team_get_uniqueid(&id), GSHMEM_SUCCESS, "");
        MPT_CHECK(id != 0 && id != UINT64_MAX) << "team_get_uniqueid gave" << id;
        local_write(ids + k, &id, sizeof id);  // the heap is GPU memory on GPU PEs
      }
    }
    gshmem_barrier_all();
    gshmem_getmem(out, ids, 2 * sizeof(std::uint64_t), 0);
  };
  auto init = [&](std::uint64_t id, int size, int idx, gshmem_team_t* t) {
    gshmem_team_config_t cfg = GSHMEM_TEAM_CONFIG_INITIALIZER;
    cfg.uniqueid = id;
    return gshmemx_team_init(t, &cfg, GSHMEM_TEAM_CONFIG_MASK_UNIQUEID, size, idx);
  };
  std::uint64_t id[2];
  // the world, in order
  fresh_ids(id);
  Members all;
  for (int pe = 0; pe < n; ++pe) all.push_back(pe);
  gshmem_team_t t = 777;
  MPT_CHECK_STATUS(init(id[0], n, my, &t), GSHMEM_SUCCESS, "");
  MPT_CHECK(t >= GSHMEM_TEAMS_MIN) << "team_init took slot" << t;
  check_team(t, all, "team_init(world)", buf, round++);
  check_team_collective(t, all, "team_init(world)", red, src);
  gshmem_team_destroy(t);
  // the even and the odd PEs, each its own ID, at the same time
  fresh_ids(id);
  Members half;
  for (int pe = my % 2; pe < n; pe += 2) half.push_back(pe);
  t = 777;
  MPT_CHECK_STATUS(init(id[my % 2], static_cast<int>(half.size()), my / 2, &t), GSHMEM_SUCCESS, "");
  check_team(t, half, my % 2 ? "team_init(odd PEs)" : "team_init(even PEs)", buf, round++);
  check_team_collective(t, half, "team_init(every other PE)", red, src);
  gshmem_team_destroy(t);
  // a team of one: the last PE alone (nobody to wait for)
  fresh_ids(id);
  if (my == n - 1) {
    t = 777;
    MPT_CHECK_STATUS(init(id[0], 1, 0, &t), GSHMEM_SUCCESS, "");
    check_team(t, Members{n - 1}, "team_init(last PE alone)", buf, round);
    gshmem_team_destroy(t);
  }
  round++;
  // Sets that are not start + i*stride (a member list): the world in decreasing order, and the three sets NVSHMEM's
  // own test teams make with team_init (gaps growing from 0 by one a member; gaps shrinking from n/2 + 1; from the
  // last PE down with growing gaps), each used, then split strided and 2d (children of a list team)
  auto gapped = [&](int first, int gap, int step) {
    Members m;
    for (int pe = first; pe >= 0 && pe < n; pe += first == n - 1 ? -gap : gap) {
      m.push_back(pe);
      gap += step;
      if (gap <= 0) break;
    }
    return m;
  };
  Members reversed;
  for (int pe = n - 1; pe >= 0; --pe) reversed.push_back(pe);
  const std::pair<Members, const char*> lists[] = {{reversed, "team_init(world reversed)"},
                                                   {gapped(0, 0, 1), "team_init(gaps growing)"},
                                                   {gapped(0, n / 2 + 1, -1), "team_init(gaps shrinking)"},
                                                   {gapped(n - 1, 0, 1), "team_init(from the last PE down)"}};
  for (const auto& [m, what] : lists) {
    fresh_ids(id);
    const int idx = index_in(m, my);
    t = 777;
    if (idx >= 0) {
      MPT_CHECK_STATUS(init(id[0], static_cast<int>(m.size()), idx, &t), GSHMEM_SUCCESS, what);
      check_team(t, m, what, buf, round++);
      check_team_collective(t, m, what, red, src);
      // every other member of the list (index 0, 2, ...) by a strided split, and its 2d split with xrange 2
      Members every_other, xrow, ycol;
      for (std::size_t i = 0; i < m.size(); i += 2) every_other.push_back(m[i]);
      gshmem_team_t s = 777, x = 777, y = 777;
      MPT_CHECK_STATUS(gshmem_team_split_strided(t, 0, 2, static_cast<int>(every_other.size()), nullptr, 0, &s),
                       GSHMEM_SUCCESS, what);
      check_team(s, every_other, std::string(what) + " split 0:2", buf, round++);
      if (s != GSHMEM_TEAM_INVALID) check_team_collective(s, every_other, std::string(what) + " split 0:2", red, src);
      MPT_CHECK_STATUS(gshmem_team_split_2d(t, 2, nullptr, 0, &x, nullptr, 0, &y), GSHMEM_SUCCESS, what);
      const std::size_t row = static_cast<std::size_t>(idx) / 2 * 2;
      for (std::size_t i = row; i < std::min(m.size(), row + 2); ++i) xrow.push_back(m[i]);
      for (std::size_t i = static_cast<std::size_t>(idx) % 2; i < m.size(); i += 2) ycol.push_back(m[i]);
      check_team(x, xrow, std::string(what) + " 2d x", buf, round++);
      check_team(y, ycol, std::string(what) + " 2d y", buf, round++);
      check_team_collective(y, ycol, std::string(what) + " 2d y", red, src);
      gshmem_team_destroy(y);
      gshmem_team_destroy(x);
      gshmem_team_destroy(s);
      gshmem_team_destroy(t);
    } else {
      round += 4;
    }
  }
  // made and destroyed more often than there are slots: each init finds its slot free again
  for (int k = 0; k < 70; ++k) {
    fresh_ids(id);
    t = 777;
    MPT_CHECK_STATUS(init(id[k % 2], n, my, &t), GSHMEM_SUCCESS, "");
    MPT_CHECK_EQ(gshmem_team_n_pes(t), n);
    MPT_CHECK_STATUS(gshmem_barrier(t), GSHMEM_SUCCESS, "");
    gshmem_team_destroy(t);
  }
  // one uid kept and used again at once (a program's config object): each use is a call of its own, the members
  // counting their calls with it, so a PE that is back before the others never meets their previous call
  fresh_ids(id);
  for (int k = 0; k < 4; ++k) {
    t = 777;
    MPT_CHECK_STATUS(init(id[0], n, my, &t), GSHMEM_SUCCESS, "");
    MPT_CHECK_EQ(gshmem_team_n_pes(t), n);
    MPT_CHECK_EQ(gshmem_team_my_pe(t), my);
    if (my == k % n) sleep_ms(2);  // one PE late each time
    gshmem_team_destroy(t);
  }
  // bad arguments: refused here, before this PE waits for anyone
  fresh_ids(id);
  gshmem_team_config_t cfg = GSHMEM_TEAM_CONFIG_INITIALIZER;
  cfg.uniqueid = id[0];
  t = 777;
  MPT_CHECK_STATUS(gshmemx_team_init(&t, nullptr, GSHMEM_TEAM_CONFIG_MASK_UNIQUEID, n, my),
                   GSHMEM_ERROR_INVALID_VALUE, "config is NULL");
  MPT_CHECK_EQ(t, GSHMEM_TEAM_INVALID);
  if (n >= 2) {  // no unique ID: only the whole world in order (below)
    cfg.uniqueid = UINT64_MAX;
    MPT_CHECK_STATUS(gshmemx_team_init(&t, &cfg, GSHMEM_TEAM_CONFIG_MASK_UNIQUEID, n - 1, 0),
                     GSHMEM_ERROR_INVALID_VALUE, "(not set)");
  }
  cfg.uniqueid = id[0];
  MPT_CHECK_STATUS(gshmemx_team_init(&t, &cfg, GSHMEM_TEAM_CONFIG_MASK_UNIQUEID, 0, 0), GSHMEM_ERROR_INVALID_VALUE,
                   "npes=0");
  MPT_CHECK_STATUS(gshmemx_team_init(&t, &cfg, GSHMEM_TEAM_CONFIG_MASK_UNIQUEID, n, n), GSHMEM_ERROR_INVALID_VALUE,
                   "pe_idx_in_team");
  MPT_CHECK_STATUS(gshmemx_team_init(nullptr, &cfg, GSHMEM_TEAM_CONFIG_MASK_UNIQUEID, n, my),
                   GSHMEM_ERROR_INVALID_VALUE, "team is NULL");
  gshmemx_team_uniqueid_t* no_id = nullptr;
  MPT_CHECK_STATUS(gshmemx_team_get_uniqueid(no_id), GSHMEM_ERROR_INVALID_VALUE, "uniqueid is NULL");
  if (n >= 2) {
    // PEs 0 and 1 both index 0 (index 1 never comes): every member sees the clash or a member that gave up
    fresh_ids(id);
    MPT_CHECK_STATUS(init(id[0], n, my == 1 ? 0 : my, &t), GSHMEM_ERROR_MISMATCH, "with uniqueid 0x");
    MPT_CHECK_EQ(t, GSHMEM_TEAM_INVALID);
  }
  if (n >= 3) {
    // PE 0 says the team has n - 1 (>= 2) members, the others n: no set of records can agree
    fresh_ids(id);
    MPT_CHECK_STATUS(init(id[0], my == 0 ? n - 1 : n, my == 0 ? 0 : my, &t), GSHMEM_ERROR_MISMATCH,
                     "with uniqueid 0x");
    MPT_CHECK_EQ(t, GSHMEM_TEAM_INVALID);
  }
  // after the refusals the next team is made as before; config_mask 0 with the ID set (users' code does so)
  fresh_ids(id);
  t = 777;
  cfg = gshmem_team_config_t GSHMEM_TEAM_CONFIG_INITIALIZER;
  cfg.uniqueid = id[1];
  MPT_CHECK_STATUS(gshmemx_team_init(&t, &cfg, 0, n, my), GSHMEM_SUCCESS, "");
  check_team(t, all, "team_init(world) after the refusals", buf, round++);
  gshmem_team_destroy(t);
  // no unique ID at all (nvshmem4py's tests): every PE in world order is still a team (a split of the world)
  gshmem_barrier_all();
  cfg = gshmem_team_config_t GSHMEM_TEAM_CONFIG_INITIALIZER;
  t = 777;
  MPT_CHECK_STATUS(gshmemx_team_init(&t, &cfg, 0, n, my), GSHMEM_SUCCESS, "");
  check_team(t, all, "team_init(world) without a unique ID", buf, round++);
  gshmem_team_destroy(t);
  gshmem_barrier_all();
  gshmem_free(src);
  gshmem_free(red);
  gshmem_free(ids);
  gshmem_free(buf);
}

// Status-returning stream calls on CPU PEs: NOT_SUPPORTED, naming the call, "CPU PE" and "stream".
MPT_CASE(stream_on_cpu) {
  if (st().gpu) {
    MPT_CHECK(true);  // covered by mp_stream_gpu on GPU PEs
    return;
  }
  MPT_CHECK_STATUS(gshmemx_barrier_on_stream(GSHMEM_TEAM_WORLD, nullptr), GSHMEM_ERROR_NOT_SUPPORTED,
                   "gshmemx_barrier_on_stream");
  MPT_CHECK(std::strstr(gshmemx_last_error(), "CPU PE") && std::strstr(gshmemx_last_error(), "stream"))
      << "message:" << gshmemx_last_error();
  MPT_CHECK_STATUS(gshmemx_team_sync_on_stream(GSHMEM_TEAM_WORLD, nullptr), GSHMEM_ERROR_NOT_SUPPORTED,
                   "gshmemx_team_sync_on_stream");
  MPT_CHECK(std::strstr(gshmemx_last_error(), "CPU PE") && std::strstr(gshmemx_last_error(), "stream"))
      << "message:" << gshmemx_last_error();
}

}  // namespace

int main(int argc, char** argv) { return mpt::main(argc, argv); }
