// gpu_device_api, part: every AMO (gshmem_<T>_atomic_* and the native gshmem::dev::atomic_*) all-to-one: every
// thread of every PE (2 blocks x 64 threads per PE) hits counters on one root PE (rotating), and the root checks
// exact final values and, where they are determined, the values fetched (fetch_inc / compare_swap tickets form a
// permutation, fetch_add values form one chain, swapped-out values plus the final value are exactly what went in).
#include <algorithm>
#include <cstring>

#include "device_api.hpp"

namespace gt {
namespace {

constexpr int kThreads = 64, kBlocks = 2, kLocal = kThreads * kBlocks;
namespace dev = gshmem::dev;

template <typename T>
struct NativeAmo {
  using type = T;
  static constexpr const char* name = "gshmem::dev::atomic_* (native)";
#define GT_N1(OP) \
  static __device__ T OP(const gshmem::DeviceHandle& h, T* d, T v, int pe) { return dev::atomic_##OP(h, d, v, pe); }
#define GT_N0(OP) \
  static __device__ void OP(const gshmem::DeviceHandle& h, T* d, T v, int pe) { dev::atomic_##OP(h, d, v, pe); }
  GT_N1(fetch_add) GT_N0(add) GT_N1(swap) GT_N0(set) GT_N1(fetch_and) GT_N1(fetch_or) GT_N1(fetch_xor)
#undef GT_N1
#undef GT_N0
  static __device__ T fetch_inc(const gshmem::DeviceHandle& h, T* d, int pe) { return dev::atomic_fetch_inc(h, d, pe); }
  static __device__ void inc(const gshmem::DeviceHandle& h, T* d, int pe) { dev::atomic_inc(h, d, pe); }
  static __device__ T compare_swap(const gshmem::DeviceHandle& h, T* d, T c, T v, int pe) {
    return dev::atomic_compare_swap(h, d, c, v, pe);
  }
  static __device__ T fetch(const gshmem::DeviceHandle& h, const T* s, int pe) { return dev::atomic_fetch(h, s, pe); }
};

#define GT_STD_OPS(T, N)                                                                                       \
  struct StdOps_##N {                                                                                          \
    using type = T;                                                                                            \
    static constexpr const char* name = "gshmem_" #N "_atomic_*";                                              \
    static __device__ T fetch_add(const gshmem::DeviceHandle&, T* d, T v, int pe) {                            \
      return gshmem_##N##_atomic_fetch_add(d, v, pe);                                                          \
    }                                                                                                          \
    static __device__ void add(const gshmem::DeviceHandle&, T* d, T v, int pe) { gshmem_##N##_atomic_add(d, v, pe); } \
    static __device__ T fetch_inc(const gshmem::DeviceHandle&, T* d, int pe) {                                 \
      return gshmem_##N##_atomic_fetch_inc(d, pe);                                                            \
    }                                                                                                          \
    static __device__ void inc(const gshmem::DeviceHandle&, T* d, int pe) { gshmem_##N##_atomic_inc(d, pe); }  \
    static __device__ T compare_swap(const gshmem::DeviceHandle&, T* d, T c, T v, int pe) {                    \
      return gshmem_##N##_atomic_compare_swap(d, c, v, pe);                                                    \
    }                                                                                                          \
  };
#define GT_EXT_OPS(T, N)                                                                                       \
  struct ExtOps_##N {                                                                                          \
    using type = T;                                                                                            \
    static constexpr const char* name = "gshmem_" #N "_atomic_{fetch,set,swap}";                              \
    static __device__ T swap(const gshmem::DeviceHandle&, T* d, T v, int pe) {                                 \
      return gshmem_##N##_atomic_swap(d, v, pe);                                                               \
    }                                                                                                          \
    static __device__ void set(const gshmem::DeviceHandle&, T* d, T v, int pe) { gshmem_##N##_atomic_set(d, v, pe); } \
    static __device__ T fetch(const gshmem::DeviceHandle&, const T* s, int pe) {                               \
      return gshmem_##N##_atomic_fetch(s, pe);                                                                 \
    }                                                                                                          \
  };
#define GT_BIT_OPS(T, N)                                                                                       \
  struct BitOps_##N {                                                                                          \
    using type = T;                                                                                            \
    static constexpr const char* name = "gshmem_" #N "_atomic_{and,or,xor}";                                   \
    static __device__ T fetch_and(const gshmem::DeviceHandle&, T* d, T v, int pe) {                            \
      return gshmem_##N##_atomic_fetch_and(d, v, pe);                                                          \
    }                                                                                                          \
    static __device__ void and_(const gshmem::DeviceHandle&, T* d, T v, int pe) { gshmem_##N##_atomic_and(d, v, pe); } \
    static __device__ T fetch_or(const gshmem::DeviceHandle&, T* d, T v, int pe) {                             \
      return gshmem_##N##_atomic_fetch_or(d, v, pe);                                                           \
    }                                                                                                          \
    static __device__ void or_(const gshmem::DeviceHandle&, T* d, T v, int pe) { gshmem_##N##_atomic_or(d, v, pe); } \
    static __device__ T fetch_xor(const gshmem::DeviceHandle&, T* d, T v, int pe) {                            \
      return gshmem_##N##_atomic_fetch_xor(d, v, pe);                                                          \
    }                                                                                                          \
    static __device__ void xor_(const gshmem::DeviceHandle&, T* d, T v, int pe) { gshmem_##N##_atomic_xor(d, v, pe); } \
  };
GSHMEM_AMO_STANDARD_TYPES(GT_STD_OPS)
GSHMEM_AMO_EXTENDED_TYPES(GT_EXT_OPS)
GSHMEM_AMO_BITWISE_TYPES(GT_BIT_OPS)
#undef GT_STD_OPS
#undef GT_EXT_OPS
#undef GT_BIT_OPS

template <typename T>
struct NativeBit : NativeAmo<T> {
  static __device__ void and_(const gshmem::DeviceHandle& h, T* d, T v, int pe) { dev::atomic_and(h, d, v, pe); }
  static __device__ void or_(const gshmem::DeviceHandle& h, T* d, T v, int pe) { dev::atomic_or(h, d, v, pe); }
  static __device__ void xor_(const gshmem::DeviceHandle& h, T* d, T v, int pe) { dev::atomic_xor(h, d, v, pe); }
};

// Counters on the root: ctr[0..13); results on every PE: res[r * kLocal + local thread].
struct AmoArgs {
  void* ctr;
  void* res;
  int root;
  int me;
  int phase;
};

__device__ __forceinline__ unsigned long long gid_of(int me) {
  return static_cast<unsigned long long>(me) * kLocal + blockIdx.x * blockDim.x + threadIdx.x;
}

template <typename Ops>
__global__ void std_kernel(gshmem::DeviceHandle h, AmoArgs a) {
  using T = typename Ops::type;
  T* ctr = static_cast<T*>(a.ctr);
  T* res = static_cast<T*>(a.res);
  const unsigned local = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long gid = gid_of(a.me);
  const T v = static_cast<T>(gid % 5 + 1);
  res[0 * kLocal + local] = Ops::fetch_add(h, &ctr[0], v, a.root);
  Ops::add(h, &ctr[1], v, a.root);
  res[1 * kLocal + local] = Ops::fetch_inc(h, &ctr[2], a.root);
  Ops::inc(h, &ctr[3], a.root);
  // Ticket by compare-and-swap: retry with the value seen until this thread's increment lands (bounded).
  T guess = static_cast<T>(0);
  const uint64_t t0 = dev::detail::globaltimer();
  for (;;) {
    const T old = Ops::compare_swap(h, &ctr[4], guess, static_cast<T>(guess + 1), a.root);
    if (old == guess) break;
    guess = old;
    if (dev::detail::globaltimer() - t0 > 20000000000ull) {
      printf("std_kernel: compare_swap ticket on PE %d never succeeded in 20 s\n", a.root);
      __trap();
    }
  }
  res[2 * kLocal + local] = guess;
}

template <typename Ops>
__global__ void ext_kernel(gshmem::DeviceHandle h, AmoArgs a) {
  using T = typename Ops::type;
  T* ctr = static_cast<T*>(a.ctr);
  T* res = static_cast<T*>(a.res);
  const unsigned local = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long gid = gid_of(a.me);
  if (a.phase == 0) {
    res[3 * kLocal + local] = Ops::swap(h, &ctr[5], static_cast<T>(gid + 1), a.root);
    if (local == 0) Ops::set(h, &ctr[6], static_cast<T>(100000 + a.me), a.root);
  } else {
    res[4 * kLocal + local] = Ops::fetch(h, &ctr[6], a.root);
  }
}

template <typename Ops>
__global__ void bit_kernel(gshmem::DeviceHandle h, AmoArgs a) {
  using T = typename Ops::type;
  T* ctr = static_cast<T*>(a.ctr);
  T* res = static_cast<T*>(a.res);
  const unsigned local = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long gid = gid_of(a.me);
  const T mask = static_cast<T>(static_cast<T>(1) << (gid % (8 * sizeof(T))));
  res[5 * kLocal + local] = Ops::fetch_or(h, &ctr[7], mask, a.root);
  Ops::or_(h, &ctr[8], mask, a.root);
  res[6 * kLocal + local] = Ops::fetch_and(h, &ctr[9], static_cast<T>(~mask), a.root);
  Ops::and_(h, &ctr[10], static_cast<T>(~mask), a.root);
  res[7 * kLocal + local] = Ops::fetch_xor(h, &ctr[11], mask, a.root);
  Ops::xor_(h, &ctr[12], mask, a.root);
}

struct AmoBuffers {
  void* ctr;  // 16 x 8 bytes
  void* res;  // 8 x kLocal x 8 bytes
};

uint64_t amo_case = 0;

template <typename T>
std::vector<T> gather(const AmoBuffers& b, int n, int r) {  // root: result row r of every PE, by global id
  std::vector<T> all(static_cast<size_t>(n) * kLocal);
  for (int pe = 0; pe < n; ++pe)
    gshmem_getmem(&all[static_cast<size_t>(pe) * kLocal], static_cast<T*>(b.res) + r * kLocal, kLocal * sizeof(T),
                  pe);
  return all;
}

template <typename T>
std::vector<T> read_ctr(const AmoBuffers& b) {
  std::vector<T> v(16);
  GT_CUDA(cudaMemcpy(v.data(), b.ctr, 16 * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

// One all-to-one round: counters set on the root, every PE launches, root checks with `check`.
template <typename T, typename Launch, typename Check>
void amo_round(Ctx& c, const AmoBuffers& b, const std::vector<T>& init, Launch launch, Check check) {
  const uint64_t id = ++amo_case;
  const int root = static_cast<int>(id % static_cast<uint64_t>(c.n));
  if (c.me == root) GT_CUDA(cudaMemcpy(b.ctr, init.data(), 16 * sizeof(T), cudaMemcpyHostToDevice));
  GT_CUDA(cudaMemset(b.res, 0, 8 * kLocal * 8));
  GT_CUDA(cudaDeviceSynchronize());
  gshmem_barrier_all();
  launch(root);
  GT_CUDA(cudaDeviceSynchronize());
  gshmem_barrier_all();
  if (c.me == root) check(root);
  gshmem_barrier_all();
}

template <typename Ops>
void std_suite(Ctx& c, const AmoBuffers& b, const gshmem::DeviceHandle& h) {
  using T = typename Ops::type;
  if (!c.sample()) return;
  const unsigned long long K = static_cast<unsigned long long>(c.n) * kLocal;
  std::vector<T> init(16);
  auto rng = c.case_rng(0xA70 + amo_case);
  for (int i = 0; i < 4; ++i) init[i] = static_cast<T>(rng() % 1000);
  init[4] = 0;
  amo_round<T>(c, b, init, [&](int root) {
    std_kernel<Ops><<<kBlocks, kThreads>>>(h, AmoArgs{b.ctr, b.res, root, c.me, 0});
    GT_CUDA(cudaGetLastError());
  }, [&](int) {
    const auto ctr = read_ctr<T>(b);
    unsigned long long sum = 0;
    for (unsigned long long g = 0; g < K; ++g) sum += g % 5 + 1;
    char what[256];
    auto report = [&](bool ok, const char* op) {
      std::snprintf(what, sizeof what, "%s: %s from %llu threads on %d PEs", Ops::name, op, K, c.n);
      c.expect(ok, what);
    };
    report(ctr[0] == static_cast<T>(init[0] + static_cast<T>(sum)), "fetch_add final value");
    report(ctr[1] == static_cast<T>(init[1] + static_cast<T>(sum)), "add final value");
    report(ctr[2] == static_cast<T>(init[2] + static_cast<T>(K)), "fetch_inc final value");
    report(ctr[3] == static_cast<T>(init[3] + static_cast<T>(K)), "inc final value");
    report(ctr[4] == static_cast<T>(K), "compare_swap ticket final value");
    // fetch_add: the fetched values, ordered, form one chain init -> ... -> final with each thread's addend.
    auto fa = gather<T>(b, c.n, 0);
    std::vector<std::pair<T, T>> chain;
    for (unsigned long long g = 0; g < K; ++g) chain.emplace_back(fa[g], static_cast<T>(g % 5 + 1));
    std::sort(chain.begin(), chain.end());
    bool ok = chain[0].first == init[0];
    for (size_t i = 0; i + 1 < chain.size(); ++i)
      ok = ok && chain[i + 1].first == static_cast<T>(chain[i].first + chain[i].second);
    report(ok, "fetch_add fetched values (one chain)");
    auto fi = gather<T>(b, c.n, 1);
    auto cs = gather<T>(b, c.n, 2);
    std::sort(fi.begin(), fi.end());
    std::sort(cs.begin(), cs.end());
    bool perm_fi = true, perm_cs = true;
    for (unsigned long long g = 0; g < K; ++g) {
      perm_fi = perm_fi && fi[g] == static_cast<T>(init[2] + static_cast<T>(g));
      perm_cs = perm_cs && cs[g] == static_cast<T>(g);
    }
    report(perm_fi, "fetch_inc fetched values (a permutation)");
    report(perm_cs, "compare_swap tickets (a permutation)");
  });
}

template <typename Ops>
void ext_suite(Ctx& c, const AmoBuffers& b, const gshmem::DeviceHandle& h) {
  using T = typename Ops::type;
  if (!c.sample()) return;
  const unsigned long long K = static_cast<unsigned long long>(c.n) * kLocal;
  std::vector<T> init(16, static_cast<T>(0));
  init[5] = static_cast<T>(77);
  const uint64_t id = ++amo_case;
  const int root = static_cast<int>(id % static_cast<uint64_t>(c.n));
  if (c.me == root) GT_CUDA(cudaMemcpy(b.ctr, init.data(), 16 * sizeof(T), cudaMemcpyHostToDevice));
  GT_CUDA(cudaDeviceSynchronize());
  gshmem_barrier_all();
  ext_kernel<Ops><<<kBlocks, kThreads>>>(h, AmoArgs{b.ctr, b.res, root, c.me, 0});
  GT_CUDA(cudaGetLastError());
  GT_CUDA(cudaDeviceSynchronize());
  gshmem_barrier_all();
  ext_kernel<Ops><<<kBlocks, kThreads>>>(h, AmoArgs{b.ctr, b.res, root, c.me, 1});
  GT_CUDA(cudaGetLastError());
  GT_CUDA(cudaDeviceSynchronize());
  gshmem_barrier_all();
  if (c.me == root) {
    const auto ctr = read_ctr<T>(b);
    char what[256];
    auto sw = gather<T>(b, c.n, 3);
    sw.push_back(ctr[5]);
    std::vector<T> want{init[5]};
    for (unsigned long long g = 0; g < K; ++g) want.push_back(static_cast<T>(g + 1));
    std::sort(sw.begin(), sw.end());
    std::sort(want.begin(), want.end());
    std::snprintf(what, sizeof what, "%s: swapped-out values plus the final value are not exactly the %llu values "
                  "swapped in plus the initial one", Ops::name, K);
    c.expect(sw == want, what);
    const auto fe = gather<T>(b, c.n, 4);
    bool same = true;
    for (const T& v : fe) same = same && v == ctr[6];
    bool from_a_pe = false;
    for (int pe = 0; pe < c.n; ++pe) from_a_pe = from_a_pe || ctr[6] == static_cast<T>(100000 + pe);
    std::snprintf(what, sizeof what, "%s: set by every PE then fetch by every thread: not one PE's value everywhere",
                  Ops::name);
    c.expect(same && from_a_pe, what);
  }
  gshmem_barrier_all();
}

template <typename Ops>
void bit_suite(Ctx& c, const AmoBuffers& b, const gshmem::DeviceHandle& h) {
  using T = typename Ops::type;
  if (!c.sample()) return;
  const unsigned long long K = static_cast<unsigned long long>(c.n) * kLocal;
  std::vector<T> init(16, static_cast<T>(0));
  auto rng = c.case_rng(0xB17 + amo_case);
  init[9] = init[10] = static_cast<T>(~static_cast<T>(0));
  init[11] = init[12] = static_cast<T>(rng());
  amo_round<T>(c, b, init, [&](int root) {
    bit_kernel<Ops><<<kBlocks, kThreads>>>(h, AmoArgs{b.ctr, b.res, root, c.me, 0});
    GT_CUDA(cudaGetLastError());
  }, [&](int) {
    const auto ctr = read_ctr<T>(b);
    T ors = 0, xors = init[11];
    for (unsigned long long g = 0; g < K; ++g) {
      const T m = static_cast<T>(static_cast<T>(1) << (g % (8 * sizeof(T))));
      ors = static_cast<T>(ors | m);
      xors = static_cast<T>(xors ^ m);
    }
    char what[256];
    auto report = [&](bool ok, const char* op) {
      std::snprintf(what, sizeof what, "%s: %s from %llu threads on %d PEs", Ops::name, op, K, c.n);
      c.expect(ok, what);
    };
    report(ctr[7] == ors && ctr[8] == ors, "fetch_or/or final value");
    report(ctr[9] == static_cast<T>(~ors) && ctr[10] == static_cast<T>(~ors), "fetch_and/and final value");
    report(ctr[11] == xors && ctr[12] == xors, "fetch_xor/xor final value");
    bool ok = true;
    for (const T& v : gather<T>(b, c.n, 5)) ok = ok && (v & static_cast<T>(~ors)) == 0;
    report(ok, "fetch_or fetched values (subset of the final bits)");
    ok = true;
    const T kept = static_cast<T>(~ors);  // bits no thread clears
    for (const T& v : gather<T>(b, c.n, 6)) ok = ok && static_cast<T>(v & kept) == kept;
    report(ok, "fetch_and fetched values (keep the bits nobody clears)");
  });
}

}  // namespace

void amo_suite(Ctx& c) {
  AmoBuffers b{gshmem_calloc(16, 8), gshmem_calloc(8 * kLocal, 8)};
  const gshmem::DeviceHandle h = gshmem::device_handle();
#define GT_RUN_STD(T, N) std_suite<StdOps_##N>(c, b, h);
#define GT_RUN_EXT(T, N) ext_suite<ExtOps_##N>(c, b, h);
#define GT_RUN_BIT(T, N) bit_suite<BitOps_##N>(c, b, h);
  GSHMEM_AMO_STANDARD_TYPES(GT_RUN_STD)
  GSHMEM_AMO_EXTENDED_TYPES(GT_RUN_EXT)
  GSHMEM_AMO_BITWISE_TYPES(GT_RUN_BIT)
#undef GT_RUN_STD
#undef GT_RUN_EXT
#undef GT_RUN_BIT
  std_suite<NativeAmo<int>>(c, b, h);
  std_suite<NativeAmo<unsigned long long>>(c, b, h);
  ext_suite<NativeAmo<float>>(c, b, h);
  ext_suite<NativeAmo<int64_t>>(c, b, h);
  bit_suite<NativeBit<uint32_t>>(c, b, h);
  bit_suite<NativeBit<uint64_t>>(c, b, h);
  gshmem_free(b.ctr);
  gshmem_free(b.res);
}

}  // namespace gt
