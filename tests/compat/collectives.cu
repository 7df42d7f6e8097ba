// Collectives on GPU PEs in every form NVSHMEM has: host blocking (nvshmem_<T>_<op>_reduce, ..._broadcast,
// broadcastmem, ...), stream-ordered (nvshmemx_..._on_stream on a non-blocking stream) and in device code through
// nvshmemx_collective_launch by one thread (nvshmem_...), one warp (nvshmemx_..._warp) and one block
// (nvshmemx_..._block): reduce (in place and not; integer, bitwise and floating-point types), reducescatter,
// broadcast (typed and bytes, root 0 and the last member, in place), fcollect and alltoall, on NVSHMEM_TEAM_WORLD,
// on the team of my parity (even / odd PEs from nvshmem_team_split_strided, both working at once) and on
// NVSHMEMX_TEAM_NODE, with 0, 1, 13 and 64 elements per PE. Checks: compat_coll.h (fresh data, poisoned dest and
// guard tail, exact host reference).
//
// Then the calling patterns of programs in the wild (read for this test, none of their code copied):
//   on_stream_pipeline   NVIDIA/nvshmem examples/on-stream.cu: a kernel fills a symmetric partial sum on a stream,
//                        nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, full, partial, 1, stream), a second
//                        kernel on the same stream consumes `full`; one cudaStreamSynchronize at the end.
//   thread_group         NVIDIA/nvshmem examples/thread-group.cu: a collectively launched block computes
//                        partial[threadIdx.x] and the whole block calls nvshmemx_int_fcollect_block, or thread 0
//                        alone calls nvshmem_int_fcollect, nelems = blockDim.x. (The example calls the collective
//                        right after the stores; this test puts a __syncthreads between, which NVSHMEM's example
//                        relies on its block collective to do.)
//   perftest_loop        NVIDIA/nvshmem perftest/device/coll/reduction_latency.cu, alltoall_latency.cu: a kernel
//                        collectively launched with several blocks where only block 0 (its threads, warp or
//                        thread 0) calls the collective `iters` times back to back on the same buffers; source and
//                        dest are halves of one nvshmem_malloc; counts from size / (npes * sizeof); a
//                        cudaStreamNonBlocking stream.
//   default_stream       petsc/petsc src/vec/is/sf/impls/basic/nvshmem/sfnvshmem.cu (PetscNvshmemNorm2 / Sum):
//                        kernel<<<1,1>>> on the legacy default stream, nvshmemx_float_sum_reduce_on_stream(WORLD,
//                        a, a, 1, NULL) in place on stream 0, another kernel<<<1,1>>>, then cudaMemcpy.
//   reduce_then_copy     Neko's device GMRES (nvshmemx_double_sum_reduce_on_stream(WORLD, buf, buf, 1, stream)
//                        in place, cudaMemcpyAsync to the host on the same stream, cudaStreamSynchronize).
//   stream_validate      NVIDIA/nvshmem's broadcast-on-stream test and examples/user-buffer.cu: init kernel,
//                        nvshmemx_barrier_on_stream(team), nvshmemx_broadcastmem_on_stream(team, ...), a validate
//                        kernel and a reset kernel on the same stream, one cudaStreamSynchronize; on a split team.
//   in-place broadcast   PyTorch torch/csrc/distributed/c10d/symm_mem/nvshmem_extension.cu (nvshmem_broadcast:
//                        nvshmemx_broadcastmem_on_stream(team, buf, buf, bytes, root, stream) on a team made from a
//                        process group) and ParRes/Kernels Cxx11/prk_nvshmem.h (host): the in_place broadcasts.
//   alltoall bytes/npes  NVIDIA/TransformerEngine's nvshmem_api (nvshmemx_alltoallmem_on_stream with
//                        nelems = bytes / n_pes, nvshmemx_int16_fcollect_on_stream on the current stream).
//   stream_chain         a reduction's dest used at once by fcollect on the same stream, then the source
//                        overwritten by a kernel and reduced again (stream order only, no host sync between).
//   fresh_alltoall       ppl-ai/pplx-kernels csrc/core/distributed.cpp: nvshmem_malloc'd buffers per call,
//                        cudaMemcpy in, nvshmem_alltoallmem(WORLD, dst, src, size), nvshmem_quiet, cudaMemcpy out,
//                        nvshmem_free.
#include "compat_coll.h"

#include <algorithm>

namespace {

void write_dev(void* sym, const void* host, size_t bytes) {
  COMPAT_CUDA(cudaMemcpy(sym, host, bytes, cudaMemcpyHostToDevice));
  COMPAT_CUDA(cudaDeviceSynchronize());
}
void read_dev(void* host, const void* sym, size_t bytes) {
  COMPAT_CUDA(cudaDeviceSynchronize());
  COMPAT_CUDA(cudaMemcpy(host, sym, bytes, cudaMemcpyDeviceToHost));
}
const coll::IO kIO{write_dev, read_dev};

cudaStream_t g_stream;  // non-blocking, as NVSHMEM's perftests create theirs
int* g_status;          // device: what the collective returned in a kernel
uint64_t g_test = 0;

enum Kind { kReduce, kReducescatter, kBroadcast, kFcollect, kAlltoall };
enum Scope { kThread = 0, kWarp = 1, kBlock = 2 };
const char* const kScopeName[3] = {"thread", "warp", "block"};

// Block 0 calls the collective `iters` times: thread 0, warp 0 or the whole block; other blocks do nothing.
template <typename X, int K>
__global__ void coll_kernel(int scope, nvshmem_team_t team, typename X::type* d, const typename X::type* s,
                            size_t n, int root, int iters, int* status) {
  if (blockIdx.x != 0) return;
  if ((scope == kThread && threadIdx.x != 0) || (scope == kWarp && threadIdx.x >= 32)) return;
  int rc = 0;
  for (int it = 0; it < iters; ++it) {
    if constexpr (K == kReduce) rc |= X::reduce_dev(scope, team, d, s, n);
    if constexpr (K == kReducescatter) rc |= X::reducescatter_dev(scope, team, d, s, n);
    if constexpr (K == kBroadcast) rc |= X::broadcast_dev(scope, team, d, s, n, root);
    if constexpr (K == kFcollect) rc |= X::fcollect_dev(scope, team, d, s, n);
    if constexpr (K == kAlltoall) rc |= X::alltoall_dev(scope, team, d, s, n);
  }
  if (threadIdx.x == 0) *status = rc;
}

// Launches coll_kernel collectively on g_stream, waits, returns what the collective returned.
template <typename X, int K>
int launch(int scope, nvshmem_team_t team, typename X::type* d, const typename X::type* s, size_t n, int root,
           int blocks = 1, int iters = 1) {
  int* status = g_status;
  COMPAT_CUDA(cudaMemset(status, 0xFF, sizeof(int)));
  void* args[] = {&scope, &team, &d, &s, &n, &root, &iters, &status};
  const int rc = nvshmemx_collective_launch(reinterpret_cast<const void*>(coll_kernel<X, K>), dim3(blocks),
                                            dim3(scope == kBlock ? 128 : 64), args, 0, g_stream);
  if (rc != 0) {
    compat::fail("nvshmemx_collective_launch returned %d", rc);
    return rc;
  }
  COMPAT_CUDA(cudaStreamSynchronize(g_stream));
  int got = -1;
  COMPAT_CUDA(cudaMemcpy(&got, status, sizeof got, cudaMemcpyDeviceToHost));
  return got;
}

template <typename... R, typename F>
void each(F f) {
  (f(R{}), ...);
}

void run_team(const coll::Buffers& buf, const coll::Team& t, uint64_t seed) {
  char what[200];
  const nvshmem_team_t team = t.team;
  for (size_t n : {size_t(0), size_t(1), size_t(13), size_t(64)}) {
    // host and stream forms, every reduction the header names
    each<R_int_sum, R_int_prod, R_int_max, R_long_min, R_longlong_sum, R_uint_and, R_uint_or, R_ulonglong_xor,
         R_uint64_xor, R_uchar_or, R_int8_and, R_int16_sum, R_short_prod, R_schar_min, R_char_max, R_ushort_sum,
         R_size_max, R_int32_xor, R_int64_sum, R_uint32_prod, R_float_sum, R_float_max, R_float_prod, R_double_sum,
         R_double_min, R_double_prod>([&](auto r) {
      using R = decltype(r);
      using T = typename R::type;
      auto host = [&](T* d, const T* s, size_t k) { return R::reduce(team, d, s, k); };
      auto stream = [&](T* d, const T* s, size_t k) {
        const int rc = R::reduce_on_stream(team, d, s, k, g_stream);
        COMPAT_CUDA(cudaStreamSynchronize(g_stream));
        return rc;
      };
      for (bool in_place : {false, true}) {
        std::snprintf(what, sizeof what, "nvshmem_%s_reduce%s", R::name, in_place ? " (dest == source)" : "");
        coll::check_reduce<T>(kIO, buf, t, R::op, n, in_place, seed, ++g_test, what, host);
        std::snprintf(what, sizeof what, "nvshmemx_%s_reduce_on_stream%s", R::name,
                      in_place ? " (dest == source)" : "");
        coll::check_reduce<T>(kIO, buf, t, R::op, n, in_place, seed, ++g_test, what, stream);
      }
      if (!coll::checks_host_elements(n)) return;
      std::snprintf(what, sizeof what, "nvshmem_%s_reducescatter", R::name);
      coll::check_reducescatter<T>(kIO, buf, t, R::op, n, seed, ++g_test, what,
                                   [&](T* d, const T* s, size_t k) { return R::reducescatter(team, d, s, k); });
      std::snprintf(what, sizeof what, "nvshmemx_%s_reducescatter_on_stream", R::name);
      coll::check_reducescatter<T>(kIO, buf, t, R::op, n, seed, ++g_test, what, [&](T* d, const T* s, size_t k) {
        const int rc = R::reducescatter_on_stream(team, d, s, k, g_stream);
        COMPAT_CUDA(cudaStreamSynchronize(g_stream));
        return rc;
      });
    });
    // device forms: a few reductions of each family, thread / warp / block
    each<R_int_sum, R_uint64_xor, R_long_min, R_int8_and, R_char_max, R_float_sum, R_double_prod>([&](auto r) {
      using R = decltype(r);
      using T = typename R::type;
      for (int scope : {kThread, kWarp, kBlock}) {
        std::snprintf(what, sizeof what, "%s_reduce in a kernel (%s)", R::name, kScopeName[scope]);
        coll::check_reduce<T>(kIO, buf, t, R::op, n, false, seed, ++g_test, what,
                              [&](T* d, const T* s, size_t k) { return launch<R, kReduce>(scope, team, d, s, k, 0); });
        std::snprintf(what, sizeof what, "%s_reduce in a kernel (%s, dest == source)", R::name, kScopeName[scope]);
        coll::check_reduce<T>(kIO, buf, t, R::op, n, true, seed, ++g_test, what,
                              [&](T* d, const T* s, size_t k) { return launch<R, kReduce>(scope, team, d, s, k, 0); });
        std::snprintf(what, sizeof what, "%s_reducescatter in a kernel (%s)", R::name, kScopeName[scope]);
        coll::check_reducescatter<T>(kIO, buf, t, R::op, n, seed, ++g_test, what, [&](T* d, const T* s, size_t k) {
          return launch<R, kReducescatter>(scope, team, d, s, k, 0);
        });
      }
    });
    // data movement: host and stream forms of every type the header names, device forms of some
    each<D_int, D_double, D_uint8, D_int64, D_float, D_short, D_char, D_int16, D_mem>([&](auto dd) {
      using D = decltype(dd);
      using T = typename D::type;
      if (!coll::checks_host_elements(n)) return;
      for (int root : {0, t.n - 1}) {
        for (bool in_place : {false, true}) {
          const char* ip = in_place ? ", dest == source" : "";
          std::snprintf(what, sizeof what, "%s broadcast (host, root %d%s)", D::name, root, ip);
          coll::check_broadcast<T>(kIO, buf, t, root, n, in_place, seed, ++g_test, what,
                                   [&](T* d, const T* s, size_t k, int rt) { return D::broadcast(team, d, s, k, rt); });
          std::snprintf(what, sizeof what, "%s broadcast (on_stream, root %d%s)", D::name, root, ip);
          coll::check_broadcast<T>(kIO, buf, t, root, n, in_place, seed, ++g_test, what,
                                   [&](T* d, const T* s, size_t k, int rt) {
                                     const int rc = D::broadcast_on_stream(team, d, s, k, rt, g_stream);
                                     COMPAT_CUDA(cudaStreamSynchronize(g_stream));
                                     return rc;
                                   });
        }
      }
      std::snprintf(what, sizeof what, "%s fcollect (host)", D::name);
      coll::check_fcollect<T>(kIO, buf, t, n, seed, ++g_test, what,
                              [&](T* d, const T* s, size_t k) { return D::fcollect(team, d, s, k); });
      std::snprintf(what, sizeof what, "%s fcollect (on_stream)", D::name);
      coll::check_fcollect<T>(kIO, buf, t, n, seed, ++g_test, what, [&](T* d, const T* s, size_t k) {
        const int rc = D::fcollect_on_stream(team, d, s, k, g_stream);
        COMPAT_CUDA(cudaStreamSynchronize(g_stream));
        return rc;
      });
      std::snprintf(what, sizeof what, "%s alltoall (host)", D::name);
      coll::check_alltoall<T>(kIO, buf, t, n, seed, ++g_test, what,
                              [&](T* d, const T* s, size_t k) { return D::alltoall(team, d, s, k); });
      std::snprintf(what, sizeof what, "%s alltoall (on_stream)", D::name);
      coll::check_alltoall<T>(kIO, buf, t, n, seed, ++g_test, what, [&](T* d, const T* s, size_t k) {
        const int rc = D::alltoall_on_stream(team, d, s, k, g_stream);
        COMPAT_CUDA(cudaStreamSynchronize(g_stream));
        return rc;
      });
    });
    each<D_int, D_double, D_uint8, D_int64, D_mem>([&](auto dd) {
      using D = decltype(dd);
      using T = typename D::type;
      for (int scope : {kThread, kWarp, kBlock}) {
        std::snprintf(what, sizeof what, "%s broadcast in a kernel (%s, root %d)", D::name, kScopeName[scope], t.n - 1);
        coll::check_broadcast<T>(kIO, buf, t, t.n - 1, n, false, seed, ++g_test, what,
                                 [&](T* d, const T* s, size_t k, int rt) {
                                   return launch<D, kBroadcast>(scope, team, d, s, k, rt);
                                 });
        std::snprintf(what, sizeof what, "%s fcollect in a kernel (%s)", D::name, kScopeName[scope]);
        coll::check_fcollect<T>(kIO, buf, t, n, seed, ++g_test, what, [&](T* d, const T* s, size_t k) {
          return launch<D, kFcollect>(scope, team, d, s, k, 0);
        });
        std::snprintf(what, sizeof what, "%s alltoall in a kernel (%s)", D::name, kScopeName[scope]);
        coll::check_alltoall<T>(kIO, buf, t, n, seed, ++g_test, what, [&](T* d, const T* s, size_t k) {
          return launch<D, kAlltoall>(scope, team, d, s, k, 0);
        });
      }
    });
  }
}

// ---- patterns ----

__global__ void accumulate(const int* input, int* partial) {  // one block; partial = sum of input
  if (threadIdx.x == 0) *partial = 0;
  __syncthreads();
  atomicAdd(partial, input[threadIdx.x]);
}
__global__ void consume(const int* full, int* out) { *out = 2 * *full + 1; }

void pattern_on_stream_pipeline(uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const uint64_t test = ++g_test;
  const int nin = 256;
  int* input = static_cast<int*>(nvshmem_malloc(nin * sizeof(int)));
  int* partial = static_cast<int*>(nvshmem_malloc(sizeof(int)));
  int* full = static_cast<int*>(nvshmem_malloc(sizeof(int)));
  int* out;
  COMPAT_CUDA(cudaMalloc(&out, sizeof(int)));
  auto in_of = [&](int pe) {
    std::vector<int> v(nin);
    for (int i = 0; i < nin; ++i) v[i] = static_cast<int>(compat::mix(seed, test, pe * 1000 + i) % 10000);
    return v;
  };
  const std::vector<int> mine = in_of(me);
  kIO.write(input, mine.data(), nin * sizeof(int));
  coll::poison(kIO, full, sizeof(int));
  nvshmem_barrier_all();
  accumulate<<<1, nin, 0, g_stream>>>(input, partial);
  COMPAT_CUDA(cudaGetLastError());
  const int rc = nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, full, partial, 1, g_stream);
  consume<<<1, 1, 0, g_stream>>>(full, out);
  COMPAT_CUDA(cudaGetLastError());
  COMPAT_CUDA(cudaStreamSynchronize(g_stream));
  int got = 0;
  COMPAT_CUDA(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
  int want = 0;
  for (int p = 0; p < npes; ++p)
    for (int v : in_of(p)) want += v;
  if (rc != 0 || got != 2 * want + 1)
    compat::fail("on-stream pipeline: rc %d, consumer saw 2*sum+1 = %d, expected %d", rc, got, 2 * want + 1);
  nvshmem_barrier_all();
  COMPAT_CUDA(cudaFree(out));
  nvshmem_free(full);
  nvshmem_free(partial);
  nvshmem_free(input);
}

__global__ void vector_sum_fcollect(const int* x, const int* y, int* partial, int* sum, int whole_block, int* status) {
  const int i = threadIdx.x, n = blockDim.x;
  partial[i] = x[i] + y[i];
  __syncthreads();
  int rc = 0;
  if (whole_block)
    rc = nvshmemx_int_fcollect_block(NVSHMEM_TEAM_WORLD, sum, partial, n);
  else if (i == 0)
    rc = nvshmem_int_fcollect(NVSHMEM_TEAM_WORLD, sum, partial, n);
  if (i == 0) *status = rc;
}

void pattern_thread_group(uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const int nt = 256;
  int* x = static_cast<int*>(nvshmem_malloc(nt * sizeof(int)));
  int* y = static_cast<int*>(nvshmem_malloc(nt * sizeof(int)));
  int* partial = static_cast<int*>(nvshmem_malloc(nt * sizeof(int)));
  int* sum = static_cast<int*>(nvshmem_malloc((nt * npes + coll::kGuard) * sizeof(int)));
  for (int whole_block = 1; whole_block >= 0; --whole_block) {
    const uint64_t test = ++g_test;
    auto xy = [&](int pe, int which) { return coll::contribution<int>(seed, test * 2 + which, pe, nt, coll::Op::sum); };
    kIO.write(x, xy(me, 0).data(), nt * sizeof(int));
    kIO.write(y, xy(me, 1).data(), nt * sizeof(int));
    coll::poison(kIO, sum, (nt * npes + coll::kGuard) * sizeof(int));
    nvshmem_barrier_all();
    int* status = g_status;
    void* args[] = {&x, &y, &partial, &sum, &whole_block, &status};
    if (nvshmemx_collective_launch(reinterpret_cast<const void*>(vector_sum_fcollect), dim3(1), dim3(nt), args, 0, 0))
      compat::fail("thread-group pattern: nvshmemx_collective_launch failed");
    COMPAT_CUDA(cudaDeviceSynchronize());
    std::vector<int> want;
    for (int p = 0; p < npes; ++p) {
      const std::vector<int> a = xy(p, 0), b = xy(p, 1);
      for (int i = 0; i < nt; ++i) want.push_back(static_cast<int>(static_cast<unsigned>(a[i]) + static_cast<unsigned>(b[i])));
    }
    coll::Team world = coll::describe(NVSHMEM_TEAM_WORLD, "NVSHMEM_TEAM_WORLD");
    coll::expect(kIO, sum, want, whole_block ? "thread-group pattern: nvshmemx_int_fcollect_block"
                                             : "thread-group pattern: nvshmem_int_fcollect by thread 0",
                 world, nt);
    int rc = -1;
    COMPAT_CUDA(cudaMemcpy(&rc, g_status, sizeof rc, cudaMemcpyDeviceToHost));
    if (rc != 0) compat::fail("thread-group pattern: the fcollect returned %d", rc);
    nvshmem_barrier_all();
  }
  nvshmem_free(sum);
  nvshmem_free(partial);
  nvshmem_free(y);
  nvshmem_free(x);
}

// perftest: several blocks launched, block 0 repeats the collective; counts from a byte budget and npes.
void pattern_perftest_loop(const coll::Buffers& buf, uint64_t seed) {
  const coll::Team world = coll::describe(NVSHMEM_TEAM_WORLD, "NVSHMEM_TEAM_WORLD");
  const size_t budget = 4096;  // bytes of source per PE
  const size_t a2a = std::max<size_t>(1, budget / (world.n * sizeof(int64_t)));
  coll::check_alltoall<int64_t>(kIO, buf, world, a2a, seed, ++g_test, "perftest loop: int64 alltoall, block, x4",
                                [&](int64_t* d, const int64_t* s, size_t k) {
                                  return launch<D_int64, kAlltoall>(kBlock, NVSHMEM_TEAM_WORLD, d, s, k, 0, 2, 4);
                                });
  const size_t red = std::min<size_t>(4096, budget / sizeof(int32_t)) / 8;
  coll::check_reduce<int32_t>(kIO, buf, world, coll::Op::bxor, red, false, seed, ++g_test,
                              "perftest loop: int32 xor reduce, warp, x4", [&](int32_t* d, const int32_t* s, size_t k) {
                                return launch<R_int32_xor, kReduce>(kWarp, NVSHMEM_TEAM_WORLD, d, s, k, 0, 2, 4);
                              });
  coll::check_reduce<int>(kIO, buf, world, coll::Op::sum, 7, false, seed, ++g_test,
                          "perftest loop: int sum reduce, thread, x4", [&](int* d, const int* s, size_t k) {
                            return launch<R_int_sum, kReduce>(kThread, NVSHMEM_TEAM_WORLD, d, s, k, 0, 2, 4);
                          });
}

__global__ void square(float* a) { *a = *a * *a; }
__global__ void negate(float* a) { *a = -*a; }

// PETSc: the legacy default stream (NULL), in place, kernels before and after.
void pattern_default_stream(uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const uint64_t test = ++g_test;
  float* alpha = static_cast<float*>(nvshmem_malloc(sizeof(float)));
  auto v = [&](int pe) { return static_cast<float>(static_cast<int>(compat::mix(seed, test, pe) % 201) - 100); };
  const float mine = v(me);
  kIO.write(alpha, &mine, sizeof mine);
  nvshmem_barrier_all();
  square<<<1, 1>>>(alpha);
  const int rc = nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, alpha, alpha, 1, nullptr);
  negate<<<1, 1>>>(alpha);
  float got = 0;
  COMPAT_CUDA(cudaMemcpy(&got, alpha, sizeof got, cudaMemcpyDeviceToHost));
  float want = 0;
  for (int p = 0; p < npes; ++p) want += v(p) * v(p);
  if (rc != 0 || got != -want) compat::fail("default-stream pattern: rc %d, got %g, expected %g", rc, got, -want);
  nvshmem_barrier_all();
  nvshmem_free(alpha);
}

// Neko: in place on a user stream, cudaMemcpyAsync to pinned host memory on the same stream.
void pattern_reduce_then_copy(uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const uint64_t test = ++g_test;
  double* buf = static_cast<double*>(nvshmem_malloc(sizeof(double)));
  double* host;
  COMPAT_CUDA(cudaMallocHost(&host, sizeof(double)));
  const double mine = coll::value<double>(seed, test, me, 0, coll::Op::sum);
  kIO.write(buf, &mine, sizeof mine);
  nvshmem_barrier_all();
  const int rc = nvshmemx_double_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, buf, buf, 1, g_stream);
  COMPAT_CUDA(cudaMemcpyAsync(host, buf, sizeof(double), cudaMemcpyDeviceToHost, g_stream));
  COMPAT_CUDA(cudaStreamSynchronize(g_stream));
  double want = 0;
  for (int p = 0; p < npes; ++p) want += coll::value<double>(seed, test, p, 0, coll::Op::sum);
  if (rc != 0 || *host != want) compat::fail("reduce-then-copy pattern: rc %d, got %g, expected %g", rc, *host, want);
  nvshmem_barrier_all();
  COMPAT_CUDA(cudaFreeHost(host));
  nvshmem_free(buf);
}

__global__ void fill_bytes(unsigned char* p, size_t n, uint64_t seed, uint64_t test, int pe) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x)
    p[i] = static_cast<unsigned char>(compat::mix(seed, test, (static_cast<uint64_t>(pe) << 32) ^ i));
}
__global__ void validate_bytes(const unsigned char* p, size_t n, uint64_t seed, uint64_t test, int pe, int* bad) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x)
    if (p[i] != static_cast<unsigned char>(compat::mix(seed, test, (static_cast<uint64_t>(pe) << 32) ^ i)))
      atomicAdd(bad, 1);
}
__global__ void reset_bytes(unsigned char* p, size_t n) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) p[i] = 0xA5;  // coll::kPoison
}

// NVSHMEM's broadcast-on-stream test: init, barrier_on_stream(team), broadcast, validate, reset; one sync.
void pattern_stream_validate(const coll::Buffers& buf, const coll::Team& t, uint64_t seed) {
  const size_t n = 1000;
  const uint64_t test = ++g_test;
  unsigned char* src = reinterpret_cast<unsigned char*>(buf.a);
  unsigned char* dst = reinterpret_cast<unsigned char*>(buf.b);
  int* bad = g_status;
  COMPAT_CUDA(cudaMemset(bad, 0, sizeof(int)));
  const int root = t.n - 1;
  nvshmem_barrier(t.team);
  fill_bytes<<<1, 128, 0, g_stream>>>(src, n, seed, test, t.world[t.me]);
  int rc = nvshmemx_barrier_on_stream(t.team, g_stream);
  rc |= nvshmemx_broadcastmem_on_stream(t.team, dst, src, n, root, g_stream);
  validate_bytes<<<1, 128, 0, g_stream>>>(dst, n, seed, test, t.world[root], bad);
  reset_bytes<<<1, 128, 0, g_stream>>>(dst, n);
  COMPAT_CUDA(cudaGetLastError());
  COMPAT_CUDA(cudaStreamSynchronize(g_stream));
  int nbad = -1;
  COMPAT_CUDA(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
  if (rc != 0 || nbad != 0)
    compat::fail("stream-validate pattern on %s: rc %d, %d bytes differ from the root's", t.name, rc, nbad);
  nvshmem_barrier(t.team);
}

__global__ void overwrite_ints(int* p, size_t n, int delta) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) p[i] += delta;
}

// A reduction's dest gathered at once by fcollect, the source changed by a kernel and reduced again: stream only.
void pattern_stream_chain(const coll::Buffers& buf, const coll::Team& t, uint64_t seed) {
  const size_t n = 9;
  const uint64_t test = ++g_test;
  int* src = reinterpret_cast<int*>(buf.a);
  int* red1 = reinterpret_cast<int*>(buf.b);
  int* gathered = red1 + 64;
  int* red2 = gathered + 64 * 8 + 64;
  const std::vector<int> mine = coll::contribution<int>(seed, test, t.world[t.me], n, coll::Op::sum);
  kIO.write(src, mine.data(), n * sizeof(int));
  coll::poison(kIO, buf.b, buf.bytes);
  nvshmem_barrier(t.team);
  int rc = nvshmemx_int_sum_reduce_on_stream(t.team, red1, src, n, g_stream);
  rc |= nvshmemx_int_fcollect_on_stream(t.team, gathered, red1, n, g_stream);
  overwrite_ints<<<1, 32, 0, g_stream>>>(src, n, 7);
  rc |= nvshmemx_int_sum_reduce_on_stream(t.team, red2, src, n, g_stream);
  COMPAT_CUDA(cudaGetLastError());
  COMPAT_CUDA(cudaStreamSynchronize(g_stream));
  if (rc != 0) compat::fail("stream-chain pattern on %s: a call returned non-zero", t.name);
  std::vector<int> want(n, 0);
  for (int j = 0; j < t.n; ++j) {
    const std::vector<int> v = coll::contribution<int>(seed, test, t.world[j], n, coll::Op::sum);
    for (size_t i = 0; i < n; ++i) want[i] = coll::combine(coll::Op::sum, want[i], v[i]);
  }
  std::vector<int> all;
  for (int j = 0; j < t.n; ++j) all.insert(all.end(), want.begin(), want.end());
  std::vector<int> want2(want);
  for (int& w : want2) w = coll::combine(coll::Op::sum, w, 7 * t.n);
  coll::expect(kIO, red1, want, "stream-chain pattern: the first reduction", t, n);
  coll::expect(kIO, gathered, all, "stream-chain pattern: fcollect of the reduction", t, n);
  coll::expect(kIO, red2, want2, "stream-chain pattern: the reduction after the source changed", t, n);
  nvshmem_barrier(t.team);
}

// pplx-kernels: fresh buffers, cudaMemcpy in, alltoallmem, nvshmem_quiet, cudaMemcpy out, free.
void pattern_fresh_alltoall(uint64_t seed) {
  const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
  const size_t size = 40, total = size * npes;
  const uint64_t test = ++g_test;
  void* src = nvshmem_malloc(total);
  void* dst = nvshmem_malloc(total);
  const std::vector<unsigned char> mine = coll::contribution<unsigned char>(seed, test, me, total, coll::Op::sum);
  COMPAT_CUDA(cudaMemcpy(src, mine.data(), total, cudaMemcpyHostToDevice));
  const int rc = nvshmem_alltoallmem(NVSHMEM_TEAM_WORLD, dst, src, size);
  nvshmem_quiet();
  std::vector<unsigned char> got(total);
  COMPAT_CUDA(cudaMemcpy(got.data(), dst, total, cudaMemcpyDeviceToHost));
  if (rc != 0) compat::fail("pplx pattern: nvshmem_alltoallmem returned %d", rc);
  for (int p = 0; p < npes; ++p) {
    const std::vector<unsigned char> theirs = coll::contribution<unsigned char>(seed, test, p, total, coll::Op::sum);
    if (std::memcmp(&got[p * size], &theirs[me * size], size) != 0)
      compat::fail("pplx pattern: block %d of the dest is not PE %d's block %d", p, p, me);
  }
  nvshmem_free(dst);
  nvshmem_free(src);
}

}  // namespace

int main(int argc, char** argv) {
  const int mype = compat::init(&argc, &argv, "collectives");
  const int npes = nvshmem_n_pes();
  const uint64_t seed = compat::shared_seed();
  if (nvshmemx_init_status() == NVSHMEM_STATUS_LIMITED_MPG) {
    if (mype == 0) std::printf("[PE 0] collectives: skipped (NVSHMEM_STATUS_LIMITED_MPG: no collectives)\n");
    return compat::finish();
  }
  COMPAT_CUDA(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  COMPAT_CUDA(cudaMalloc(&g_status, sizeof(int)));
  const coll::Buffers buf = coll::alloc_buffers(64 * 1024);
  nvshmem_team_t parity[2];
  coll::Team teams[3];
  if (!coll::make_teams(npes, mype, parity, teams)) return compat::finish();
  for (const coll::Team& t : teams) run_team(buf, t, seed);
  nvshmem_barrier_all();
  pattern_on_stream_pipeline(seed);
  pattern_thread_group(seed);
  pattern_perftest_loop(buf, seed);
  pattern_default_stream(seed);
  pattern_reduce_then_copy(seed);
  for (const coll::Team& t : teams) {
    pattern_stream_validate(buf, t, seed);
    pattern_stream_chain(buf, t, seed);
  }
  pattern_fresh_alltoall(seed);
  nvshmem_barrier_all();
  for (nvshmem_team_t t : parity)
    if (t != NVSHMEM_TEAM_INVALID) nvshmem_team_destroy(t);
  nvshmem_free(buf.a);
  COMPAT_CUDA(cudaFree(g_status));
  COMPAT_CUDA(cudaStreamDestroy(g_stream));
  return compat::finish();
}
