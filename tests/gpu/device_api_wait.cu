// gpu_device_api, part: point-to-point synchronisation for every wait type and comparator: gshmem_<T>_wait_until,
// _wait_until_{all,any,some}[_vector], _test, _test_{all,any,some}[_vector], gshmem_signal_wait_until, and the
// native gshmem::dev forms. The left neighbour makes exactly the chosen elements satisfy the comparison (excluded
// ones never do; for any/some only one chosen element k does), so returns and indices are checked exactly. The
// test forms run on a local array of known values against a host computation.
#include <cstring>

#include "device_api.hpp"

namespace gt {
namespace {

constexpr int kN = 8;  // elements per ivars array

template <typename T>
struct WaitPlan {
  int cmp;
  int k;                 // the only included element the any/some forms see satisfied
  int status[kN];        // 0 = included
  int none[kN];          // every element excluded
  T v, sat;              // scalar comparison value and a value satisfying it
  T sati[kN];            // per-element values satisfying vals[i]
  uint64_t vsig, sigsat;
};

struct WaitBufs {
  void* w;         // symmetric: 7 arrays of kN (wait forms), written by the left neighbour
  void* tarr;      // symmetric: kN values the test forms read
  void* vals;      // symmetric: kN per-element comparison values
  int* status;     // device: plan.status then plan.none
  uint64_t* sig;   // symmetric
  unsigned long long* r;  // device: results
};

#define GT_WAIT_OPS(T, N)                                                                                      \
  struct WaitOps_##N {                                                                                         \
    using type = T;                                                                                            \
    static constexpr const char* name = "gshmem_" #N;                                                          \
    static __device__ void p(const gshmem::DeviceHandle&, T* d, T v, int pe) { gshmem_##N##_p(d, v, pe); }    \
    static __device__ void wait_until(const gshmem::DeviceHandle&, T* a, int c, T v) {                        \
      gshmem_##N##_wait_until(a, c, v);                                                                        \
    }                                                                                                          \
    static __device__ int test(const gshmem::DeviceHandle&, T* a, int c, T v) { return gshmem_##N##_test(a, c, v); } \
    static __device__ void wait_until_all(const gshmem::DeviceHandle&, T* a, size_t n, const int* s, int c, T v) { \
      gshmem_##N##_wait_until_all(a, n, s, c, v);                                                              \
    }                                                                                                          \
    static __device__ size_t wait_until_any(const gshmem::DeviceHandle&, T* a, size_t n, const int* s, int c,   \
                                            T v) {                                                             \
      return gshmem_##N##_wait_until_any(a, n, s, c, v);                                                       \
    }                                                                                                          \
    static __device__ size_t wait_until_some(const gshmem::DeviceHandle&, T* a, size_t n, size_t* x,           \
                                             const int* s, int c, T v) {                                       \
      return gshmem_##N##_wait_until_some(a, n, x, s, c, v);                                                   \
    }                                                                                                          \
    static __device__ void wait_until_all_vector(const gshmem::DeviceHandle&, T* a, size_t n, const int* s,     \
                                                 int c, T* v) {                                                \
      gshmem_##N##_wait_until_all_vector(a, n, s, c, v);                                                       \
    }                                                                                                          \
    static __device__ size_t wait_until_any_vector(const gshmem::DeviceHandle&, T* a, size_t n, const int* s,   \
                                                   int c, T* v) {                                              \
      return gshmem_##N##_wait_until_any_vector(a, n, s, c, v);                                                \
    }                                                                                                          \
    static __device__ size_t wait_until_some_vector(const gshmem::DeviceHandle&, T* a, size_t n, size_t* x,    \
                                                    const int* s, int c, T* v) {                               \
      return gshmem_##N##_wait_until_some_vector(a, n, x, s, c, v);                                            \
    }                                                                                                          \
    static __device__ int test_all(const gshmem::DeviceHandle&, T* a, size_t n, const int* s, int c, T v) {    \
      return gshmem_##N##_test_all(a, n, s, c, v);                                                             \
    }                                                                                                          \
    static __device__ size_t test_any(const gshmem::DeviceHandle&, T* a, size_t n, const int* s, int c, T v) { \
      return gshmem_##N##_test_any(a, n, s, c, v);                                                             \
    }                                                                                                          \
    static __device__ size_t test_some(const gshmem::DeviceHandle&, T* a, size_t n, size_t* x, const int* s,   \
                                       int c, T v) {                                                           \
      return gshmem_##N##_test_some(a, n, x, s, c, v);                                                         \
    }                                                                                                          \
    static __device__ int test_all_vector(const gshmem::DeviceHandle&, T* a, size_t n, const int* s, int c,    \
                                          T* v) {                                                              \
      return gshmem_##N##_test_all_vector(a, n, s, c, v);                                                      \
    }                                                                                                          \
    static __device__ size_t test_any_vector(const gshmem::DeviceHandle&, T* a, size_t n, const int* s, int c,  \
                                             T* v) {                                                           \
      return gshmem_##N##_test_any_vector(a, n, s, c, v);                                                      \
    }                                                                                                          \
    static __device__ size_t test_some_vector(const gshmem::DeviceHandle&, T* a, size_t n, size_t* x,          \
                                              const int* s, int c, T* v) {                                     \
      return gshmem_##N##_test_some_vector(a, n, x, s, c, v);                                                  \
    }                                                                                                          \
    static __device__ uint64_t signal_wait_until(const gshmem::DeviceHandle&, uint64_t* s, int c, uint64_t v) { \
      return gshmem_signal_wait_until(s, c, v);                                                                \
    }                                                                                                          \
    static __device__ void signal_set(const gshmem::DeviceHandle&, uint64_t* s, uint64_t v, int pe) {          \
      gshmemx_signal_op(s, v, GSHMEM_SIGNAL_SET, pe);                                                          \
    }                                                                                                          \
  };
GSHMEM_WAIT_TYPES(GT_WAIT_OPS)
#undef GT_WAIT_OPS

namespace dev = gshmem::dev;
template <typename T>
struct NativeWait {
  using type = T;
  static constexpr const char* name = "gshmem::dev (native wait/test)";
  using H = gshmem::DeviceHandle;
  static __device__ void p(const H& h, T* d, T v, int pe) { dev::p(h, d, v, pe); }
  static __device__ void wait_until(const H& h, T* a, int c, T v) { dev::wait_until(h, a, c, v); }
  static __device__ int test(const H& h, T* a, int c, T v) { return dev::test(h, a, c, v); }
  static __device__ void wait_until_all(const H& h, T* a, size_t n, const int* s, int c, T v) {
    dev::wait_until_all(h, a, n, s, c, v);
  }
  static __device__ size_t wait_until_any(const H& h, T* a, size_t n, const int* s, int c, T v) {
    return dev::wait_until_any(h, a, n, s, c, v);
  }
  static __device__ size_t wait_until_some(const H& h, T* a, size_t n, size_t* x, const int* s, int c, T v) {
    return dev::wait_until_some(h, a, n, x, s, c, v);
  }
  static __device__ void wait_until_all_vector(const H& h, T* a, size_t n, const int* s, int c, T* v) {
    dev::wait_until_all_vector(h, a, n, s, c, v);
  }
  static __device__ size_t wait_until_any_vector(const H& h, T* a, size_t n, const int* s, int c, T* v) {
    return dev::wait_until_any_vector(h, a, n, s, c, v);
  }
  static __device__ size_t wait_until_some_vector(const H& h, T* a, size_t n, size_t* x, const int* s, int c, T* v) {
    return dev::wait_until_some_vector(h, a, n, x, s, c, v);
  }
  static __device__ int test_all(const H& h, T* a, size_t n, const int* s, int c, T v) {
    return dev::test_all(h, a, n, s, c, v);
  }
  static __device__ size_t test_any(const H& h, T* a, size_t n, const int* s, int c, T v) {
    return dev::test_any(h, a, n, s, c, v);
  }
  static __device__ size_t test_some(const H& h, T* a, size_t n, size_t* x, const int* s, int c, T v) {
    return dev::test_some(h, a, n, x, s, c, v);
  }
  static __device__ int test_all_vector(const H& h, T* a, size_t n, const int* s, int c, T* v) {
    return dev::test_all_vector(h, a, n, s, c, v);
  }
  static __device__ size_t test_any_vector(const H& h, T* a, size_t n, const int* s, int c, T* v) {
    return dev::test_any_vector(h, a, n, s, c, v);
  }
  static __device__ size_t test_some_vector(const H& h, T* a, size_t n, size_t* x, const int* s, int c, T* v) {
    return dev::test_some_vector(h, a, n, x, s, c, v);
  }
  static __device__ uint64_t signal_wait_until(const H& h, uint64_t* s, int c, uint64_t v) {
    return dev::signal_wait_until(h, s, c, v);
  }
  static __device__ void signal_set(const H& h, uint64_t* s, uint64_t v, int pe) {
    dev::signal_op(h, s, v, GSHMEM_SIGNAL_SET, pe);
  }
};

// Result slots in r[].
enum : int { R_TEST = 0, R_TALL, R_TANY, R_TSOME, R_TALLV, R_TANYV, R_TSOMEV, R_TALL0, R_TANY0, R_TSOME0,
             R_TSOME_IDX = 10, R_TSOMEV_IDX = 18, R_TSOME0_IDX = 26, R_WANY = 40, R_WSOME, R_WSOME_IDX = 42,
             R_WANYV = 50, R_WSOMEV, R_WSOMEV_IDX = 52, R_SIG = 60, R_NONE_ANY, R_NONE_SOME, R_DONE, R_COUNT = 64 };

template <typename Ops>
__global__ void wait_kernel(gshmem::DeviceHandle h, WaitBufs b, WaitPlan<typename Ops::type> plan, int right) {
  using T = typename Ops::type;
  if (threadIdx.x != 0) return;
  T* w = static_cast<T*>(b.w);
  T* vals = static_cast<T*>(b.vals);
  if (blockIdx.x == 0) {
    // Writer: make the chosen elements of the right neighbour's arrays satisfy the comparison, slowly.
    for (int f = 0; f < 7; ++f) {
      __nanosleep(2000);
      const bool vec = f >= 4;
      for (int i = 0; i < kN; ++i) {
        const bool all_form = f == 1 || f == 4;
        const bool write = f == 0 ? i == 0 : all_form ? plan.status[i] == 0 : i == plan.k;
        if (write) Ops::p(h, &w[f * kN + i], vec ? plan.sati[i] : plan.sat, right);
      }
    }
    dev::fence();
    Ops::signal_set(h, b.sig, plan.sigsat, right);
    return;
  }
  unsigned long long* r = b.r;
  T* t = static_cast<T*>(b.tarr);
  size_t idx[kN];
  const int c = plan.cmp;
  r[R_TEST] = static_cast<unsigned long long>(Ops::test(h, t, c, plan.v));
  r[R_TALL] = static_cast<unsigned long long>(Ops::test_all(h, t, kN, b.status, c, plan.v));
  r[R_TANY] = Ops::test_any(h, t, kN, b.status, c, plan.v);
  r[R_TSOME] = Ops::test_some(h, t, kN, idx, b.status, c, plan.v);
  for (size_t i = 0; i < r[R_TSOME]; ++i) r[R_TSOME_IDX + i] = idx[i];
  r[R_TALLV] = static_cast<unsigned long long>(Ops::test_all_vector(h, t, kN, b.status, c, vals));
  r[R_TANYV] = Ops::test_any_vector(h, t, kN, b.status, c, vals);
  r[R_TSOMEV] = Ops::test_some_vector(h, t, kN, idx, b.status, c, vals);
  for (size_t i = 0; i < r[R_TSOMEV]; ++i) r[R_TSOMEV_IDX + i] = idx[i];
  r[R_TALL0] = static_cast<unsigned long long>(Ops::test_all(h, t, kN, nullptr, c, plan.v));
  r[R_TANY0] = Ops::test_any(h, t, kN, nullptr, c, plan.v);
  r[R_TSOME0] = Ops::test_some(h, t, kN, idx, nullptr, c, plan.v);
  for (size_t i = 0; i < r[R_TSOME0]; ++i) r[R_TSOME0_IDX + i] = idx[i];
  // Everything excluded: the waits return at once.
  Ops::wait_until_all(h, w + 1 * kN, kN, b.status + kN, c, plan.v);
  r[R_NONE_ANY] = Ops::wait_until_any(h, w + 2 * kN, kN, b.status + kN, c, plan.v);
  r[R_NONE_SOME] = Ops::wait_until_some(h, w + 3 * kN, kN, idx, b.status + kN, c, plan.v);
  // The waits proper (the left neighbour's writes make them return).
  Ops::wait_until(h, w, c, plan.v);
  Ops::wait_until_all(h, w + 1 * kN, kN, b.status, c, plan.v);
  r[R_WANY] = Ops::wait_until_any(h, w + 2 * kN, kN, b.status, c, plan.v);
  r[R_WSOME] = Ops::wait_until_some(h, w + 3 * kN, kN, idx, b.status, c, plan.v);
  for (size_t i = 0; i < r[R_WSOME] && i < kN; ++i) r[R_WSOME_IDX + i] = idx[i];
  Ops::wait_until_all_vector(h, w + 4 * kN, kN, b.status, c, vals);
  r[R_WANYV] = Ops::wait_until_any_vector(h, w + 5 * kN, kN, b.status, c, vals);
  r[R_WSOMEV] = Ops::wait_until_some_vector(h, w + 6 * kN, kN, idx, b.status, c, vals);
  for (size_t i = 0; i < r[R_WSOMEV] && i < kN; ++i) r[R_WSOMEV_IDX + i] = idx[i];
  r[R_SIG] = Ops::signal_wait_until(h, b.sig, c, plan.vsig);
  r[R_DONE] = 1;
}

template <typename T>
bool host_cmp(T a, int cmp, T b) {
  switch (cmp) {
    case GSHMEM_CMP_EQ: return a == b;
    case GSHMEM_CMP_NE: return a != b;
    case GSHMEM_CMP_GT: return a > b;
    case GSHMEM_CMP_LE: return a <= b;
    case GSHMEM_CMP_LT: return a < b;
    default: return a >= b;
  }
}
// A value satisfying (cmp, v) and one that does not; v is at least 8, so v-1 fits every type.
template <typename T>
void sat_unsat(int cmp, T v, T* sat, T* unsat) {
  const T up = static_cast<T>(v + 1), down = static_cast<T>(v - 1);
  switch (cmp) {
    case GSHMEM_CMP_EQ: *sat = v; *unsat = up; break;
    case GSHMEM_CMP_NE: *sat = up; *unsat = v; break;
    case GSHMEM_CMP_GT: *sat = up; *unsat = v; break;
    case GSHMEM_CMP_LE: *sat = v; *unsat = up; break;
    case GSHMEM_CMP_LT: *sat = down; *unsat = v; break;
    default: *sat = v; *unsat = down; break;
  }
}
const char* cmp_name(int c) {
  static const char* n[] = {"EQ", "NE", "GT", "LE", "LT", "GE"};
  return n[c];
}

uint64_t wait_case = 0;

template <typename Ops>
void wait_suite_t(Ctx& c, const WaitBufs& b, const gshmem::DeviceHandle& h) {
  using T = typename Ops::type;
  if (!c.sample()) return;
  const int right = (c.me + 1) % c.n;
  for (int cmp = 0; cmp < 6; ++cmp) {
    auto rng = c.case_rng(0x3A17ull << 32 | ++wait_case);
    WaitPlan<T> plan{};
    plan.cmp = cmp;
    plan.k = static_cast<int>(rng() % kN);
    for (int i = 0; i < kN; ++i) plan.status[i] = static_cast<int>(rng() % 3 == 0);
    plan.status[plan.k] = 0;
    plan.status[(plan.k + 1) % kN] = 1;
    for (int i = 0; i < kN; ++i) plan.none[i] = 1;
    T unsat;
    plan.v = static_cast<T>(8 + rng() % 1000);
    sat_unsat(cmp, plan.v, &plan.sat, &unsat);
    T vals[kN], unsati[kN], w[7 * kN], tarr[kN];
    for (int i = 0; i < kN; ++i) {
      vals[i] = static_cast<T>(8 + rng() % 1000);
      sat_unsat(cmp, vals[i], &plan.sati[i], &unsati[i]);
    }
    for (int f = 0; f < 7; ++f)
      for (int i = 0; i < kN; ++i) w[f * kN + i] = f >= 4 ? unsati[i] : unsat;
    // Test array: each element satisfies both the scalar and its own comparison, or neither, or one of them.
    for (int i = 0; i < kN; ++i) {
      const int pick = static_cast<int>(rng() % 4);
      tarr[i] = pick == 0 ? plan.sat : pick == 1 ? unsat : pick == 2 ? plan.sati[i] : unsati[i];
    }
    uint64_t sigunsat;
    plan.vsig = 8 + rng() % 1000;
    sat_unsat<uint64_t>(cmp, plan.vsig, &plan.sigsat, &sigunsat);
    int st[2 * kN];
    std::memcpy(st, plan.status, sizeof plan.status);
    std::memcpy(st + kN, plan.none, sizeof plan.none);
    GT_CUDA(cudaMemcpy(b.w, w, sizeof w, cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemcpy(b.tarr, tarr, sizeof tarr, cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemcpy(b.vals, vals, sizeof vals, cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemcpy(b.status, st, sizeof st, cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemcpy(b.sig, &sigunsat, sizeof sigunsat, cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemset(b.r, 0xFF, R_COUNT * sizeof(unsigned long long)));
    GT_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();
    wait_kernel<Ops><<<2, 32>>>(h, b, plan, right);
    GT_CUDA(cudaGetLastError());
    GT_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();
    unsigned long long r[R_COUNT];
    GT_CUDA(cudaMemcpy(r, b.r, sizeof r, cudaMemcpyDeviceToHost));
    // Expected test results.
    auto expect_tests = [&](const int* status, bool vec, int r_all, int r_any, int r_some, int r_idx,
                            const char* form) {
      unsigned long long all = 1, any = ~0ull, some = 0;
      std::vector<unsigned long long> idx;
      for (int i = 0; i < kN; ++i) {
        if (status && status[i]) continue;
        const bool ok = host_cmp(tarr[i], cmp, vec ? vals[i] : plan.v);
        if (!ok) all = 0;
        if (ok && any == ~0ull) any = static_cast<unsigned long long>(i);
        if (ok) {
          ++some;
          idx.push_back(static_cast<unsigned long long>(i));
        }
      }
      bool ok = r[r_all] == all && r[r_any] == any && r[r_some] == some;
      for (size_t i = 0; ok && i < idx.size(); ++i) ok = r[r_idx + i] == idx[i];
      char what[200];
      std::snprintf(what, sizeof what, "%s test_all/any/some%s CMP_%s: got %llu/%llu/%llu, expected %llu/%llu/%llu",
                    Ops::name, form, cmp_name(cmp), r[r_all], r[r_any], r[r_some], all, any, some);
      c.expect(ok, what);
    };
    char what[200];
    std::snprintf(what, sizeof what, "%s test CMP_%s", Ops::name, cmp_name(cmp));
    c.expect(r[R_TEST] == (host_cmp(tarr[0], cmp, plan.v) ? 1u : 0u), what);
    expect_tests(plan.status, false, R_TALL, R_TANY, R_TSOME, R_TSOME_IDX, "");
    expect_tests(plan.status, true, R_TALLV, R_TANYV, R_TSOMEV, R_TSOMEV_IDX, "_vector");
    expect_tests(nullptr, false, R_TALL0, R_TANY0, R_TSOME0, R_TSOME0_IDX, " (status NULL)");
    const unsigned long long k = static_cast<unsigned long long>(plan.k);
    std::snprintf(what, sizeof what, "%s wait_until_any/some CMP_%s: any=%llu some=%llu [%llu], expected %llu, 1 "
                  "[%llu] (only element %llu ever satisfies)", Ops::name, cmp_name(cmp), r[R_WANY], r[R_WSOME],
                  r[R_WSOME_IDX], k, k, k);
    c.expect(r[R_WANY] == k && r[R_WSOME] == 1 && r[R_WSOME_IDX] == k, what);
    std::snprintf(what, sizeof what, "%s wait_until_any/some_vector CMP_%s: any=%llu some=%llu [%llu], expected %llu",
                  Ops::name, cmp_name(cmp), r[R_WANYV], r[R_WSOMEV], r[R_WSOMEV_IDX], k);
    c.expect(r[R_WANYV] == k && r[R_WSOMEV] == 1 && r[R_WSOMEV_IDX] == k, what);
    std::snprintf(what, sizeof what, "%s wait_until_any/some with every element excluded CMP_%s: %llu/%llu, "
                  "expected SIZE_MAX/0", Ops::name, cmp_name(cmp), r[R_NONE_ANY], r[R_NONE_SOME]);
    c.expect(r[R_NONE_ANY] == ~0ull && r[R_NONE_SOME] == 0, what);
    std::snprintf(what, sizeof what, "gshmem_signal_wait_until CMP_%s returned %llu, expected %llu", cmp_name(cmp),
                  r[R_SIG], static_cast<unsigned long long>(plan.sigsat));
    c.expect(r[R_SIG] == plan.sigsat && r[R_DONE] == 1, what);
  }
}

}  // namespace

void wait_suite(Ctx& c) {
  WaitBufs b{};
  b.w = gshmem_calloc(7 * kN, 8);
  b.tarr = gshmem_calloc(kN, 8);
  b.vals = gshmem_calloc(kN, 8);
  b.sig = static_cast<uint64_t*>(gshmem_calloc(1, 8));
  GT_CUDA(cudaMalloc(&b.status, 2 * kN * sizeof(int)));
  GT_CUDA(cudaMalloc(&b.r, R_COUNT * sizeof(unsigned long long)));
  const gshmem::DeviceHandle h = gshmem::device_handle();
#define GT_RUN(T, N) wait_suite_t<WaitOps_##N>(c, b, h);
  GSHMEM_WAIT_TYPES(GT_RUN)
#undef GT_RUN
  wait_suite_t<NativeWait<short>>(c, b, h);
  wait_suite_t<NativeWait<int>>(c, b, h);
  wait_suite_t<NativeWait<uint64_t>>(c, b, h);
  gshmem_free(b.w);
  gshmem_free(b.tarr);
  gshmem_free(b.vals);
  gshmem_free(b.sig);
  GT_CUDA(cudaFree(b.status));
  GT_CUDA(cudaFree(b.r));
}

}  // namespace gt
