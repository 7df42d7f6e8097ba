// mp_stream_ext_gpu: the stream-ordered host calls added for NVSHMEM compatibility, on GPU PEs (label gpu; skipped
// without a GPU by gpu_or_skip.sh). Fresh random data, poisoned destinations, exact comparison of whole buffers.
//   typed: gshmemx_<T>_{put_nbi,get_nbi,iput,iget,put_signal_nbi}_on_stream, gshmemx_<T>_g_on_stream (int, double,
//          and half / bfloat16 from <gshmem/device.cuh>);
//   sized: gshmemx_{put,get}<N>[_nbi]_on_stream, gshmemx_{iput,iget}<N>_on_stream,
//   gshmemx_put<N>_signal[_nbi]_on_stream; waits: gshmemx_<T>_wait_until_on_stream with every comparator,
//   _wait_until_all_on_stream (status NULL and a
//          device status array excluding elements that are never set), _wait_until_all_vector_on_stream; the data
//          read after the wait on the same stream is the data the peer put before its flag;
//   wait_timeout (only with --only=wait_timeout and GSHMEM_WAIT_TIMEOUT <= 5): a wait that never holds ends the
//          kernel with a message naming the call.
#include <cuda_runtime.h>

#include <gshmem/device.cuh>
#include <string>
#include <vector>

#include "harness.hpp"
#include "cuda_check.cuh"

using namespace mpt;

namespace {

// This PE's stream, created on first use (after gshmem_init chose the PE's GPU).
cudaStream_t strm() {
  static cudaStream_t s = nullptr;
  if (!s) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

std::vector<unsigned char> bytes_of(std::uint64_t tag, int round, int from, std::size_t n) {
  std::vector<unsigned char> d(n);
  for (std::size_t i = 0; i < n; ++i)
    d[i] = static_cast<unsigned char>(rnd(tag, static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(from), i));
  return d;
}

// One transfer into a poisoned symmetric buffer, checked whole. `put`: my data goes right, I check what my left
// neighbour sent; otherwise I fetch my right neighbour's source into a device buffer.
struct Bufs {
  unsigned char* sym_src;  // symmetric source (each PE's own data)
  unsigned char* sym_dst;  // symmetric destination
  unsigned char* dev;      // private device buffer
  std::uint64_t* sig;
  static constexpr std::size_t kBytes = 16384;
};

template <typename Op>
void transfer_case(const Bufs& b, const char* what, std::uint64_t tag, int round, bool put, std::size_t elem,
                   std::size_t n, std::ptrdiff_t ds, std::ptrdiff_t ss, Op op) {
  const int nn = npes(), my = me(), right = (my + 1) % nn, left = (my + nn - 1) % nn;
  const auto mine = bytes_of(tag, round, my, Bufs::kBytes);
  const auto theirs = bytes_of(tag, round, put ? left : right, Bufs::kBytes);
  std::vector<unsigned char> want(Bufs::kBytes), pois(Bufs::kBytes), got(Bufs::kBytes);
  for (std::size_t i = 0; i < Bufs::kBytes; ++i) pois[i] = static_cast<unsigned char>(~rnd(tag, round, 77, i));
  want = pois;
  for (std::size_t i = 0; i < n; ++i) std::memcpy(&want[i * ds * elem], &theirs[i * ss * elem], elem);
  local_write(b.sym_src, mine.data(), Bufs::kBytes);
  if (put) local_write(b.sym_dst, pois.data(), Bufs::kBytes);
  CK(cudaMemcpy(b.dev, put ? mine.data() : pois.data(), Bufs::kBytes, cudaMemcpyHostToDevice));
  local_set<std::uint64_t>(b.sig, 0);
  gshmem_barrier_all();
  op(right);  // put: into the right PE; get: from it
  if (put) gshmemx_barrier_all_on_stream(reinterpret_cast<gshmem_stream_t>(strm()));
  CK(cudaStreamSynchronize(strm()));
  if (put)
    local_read(got.data(), b.sym_dst, Bufs::kBytes);
  else
    CK(cudaMemcpy(got.data(), b.dev, Bufs::kBytes, cudaMemcpyDeviceToHost));
  MPT_CHECK_MEM(std::string(what) + " (" + std::to_string(n) + " elements)", got.data(), want.data(), Bufs::kBytes);
  gshmem_barrier_all();
}

gshmem_stream_t gs() {
  return reinterpret_cast<gshmem_stream_t>(strm());
}

MPT_CASE(typed_and_sized) {
  const std::uint64_t tag = tag_of("typed_and_sized");
  Bufs b{};
  b.sym_src = static_cast<unsigned char*>(gshmem_malloc(Bufs::kBytes));
  b.sym_dst = static_cast<unsigned char*>(gshmem_malloc(Bufs::kBytes));
  b.sig = static_cast<std::uint64_t*>(gshmem_malloc(sizeof(std::uint64_t)));
  CK(cudaMalloc(&b.dev, Bufs::kBytes));
  int round = 0;
  auto n_of = [&](std::size_t elem, std::ptrdiff_t stride) {
    return 1 + rnd(tag, static_cast<std::uint64_t>(round), 5) %
                   (Bufs::kBytes / elem / static_cast<std::size_t>(stride) - 1);
  };
  // typed, contiguous (put: device source -> symmetric dest at the right PE)
  {
    ++round;
    const std::size_t n = n_of(4, 1);
    transfer_case(b, "gshmemx_int_put_nbi_on_stream", tag, round, true, 4, n, 1, 1, [&](int pe) {
      gshmemx_int_put_nbi_on_stream(reinterpret_cast<int*>(b.sym_dst), reinterpret_cast<int*>(b.dev), n, pe, gs());
    });
    ++round;
    const std::size_t m = n_of(8, 1);
    transfer_case(b, "gshmemx_double_get_nbi_on_stream", tag, round, false, 8, m, 1, 1, [&](int pe) {
      gshmemx_double_get_nbi_on_stream(reinterpret_cast<double*>(b.dev), reinterpret_cast<double*>(b.sym_src), m, pe,
                                       gs());
    });
  }
  // typed and sized, strided
  for (int ds = 1; ds <= 3; ++ds) {
    const int ss = 4 - ds;
    ++round;
    std::size_t n = n_of(4, std::max(ds, ss));
    transfer_case(b, "gshmemx_float_iput_on_stream", tag, round, true, 4, n, ds, ss, [&](int pe) {
      gshmemx_float_iput_on_stream(reinterpret_cast<float*>(b.sym_dst), reinterpret_cast<float*>(b.dev), ds, ss, n, pe,
                                   gs());
    });
    ++round;
    n = n_of(8, std::max(ds, ss));
    transfer_case(b, "gshmemx_long_iget_on_stream", tag, round, false, 8, n, ds, ss, [&](int pe) {
      gshmemx_long_iget_on_stream(reinterpret_cast<long*>(b.dev), reinterpret_cast<long*>(b.sym_src), ds, ss, n, pe,
                                  gs());
    });
    ++round;
    n = n_of(2, std::max(ds, ss));
    transfer_case(b, "gshmemx_iput16_on_stream", tag, round, true, 2, n, ds, ss,
                  [&](int pe) { gshmemx_iput16_on_stream(b.sym_dst, b.dev, ds, ss, n, pe, gs()); });
    ++round;
    n = n_of(16, std::max(ds, ss));
    transfer_case(b, "gshmemx_iget128_on_stream", tag, round, false, 16, n, ds, ss,
                  [&](int pe) { gshmemx_iget128_on_stream(b.dev, b.sym_src, ds, ss, n, pe, gs()); });
    ++round;
    n = n_of(2, std::max(ds, ss));
    transfer_case(b, "gshmemx_half_iput_on_stream", tag, round, true, 2, n, ds, ss, [&](int pe) {
      gshmemx_half_iput_on_stream(reinterpret_cast<__half*>(b.sym_dst), reinterpret_cast<__half*>(b.dev), ds, ss, n, pe,
                                  gs());
    });
  }
  // sized, contiguous, every size
#define GT_SIZED(BITS)                                                                                               \
  {                                                                                                                  \
    ++round;                                                                                                         \
    const std::size_t n = n_of(BITS / 8, 1);                                                                         \
    transfer_case(b, "gshmemx_put" #BITS "_on_stream", tag, round, true, BITS / 8, n, 1, 1,                          \
                  [&](int pe) { gshmemx_put##BITS##_on_stream(b.sym_dst, b.dev, n, pe, gs()); });                    \
    ++round;                                                                                                         \
    transfer_case(b, "gshmemx_put" #BITS "_nbi_on_stream", tag, round, true, BITS / 8, n, 1, 1,                      \
                  [&](int pe) { gshmemx_put##BITS##_nbi_on_stream(b.sym_dst, b.dev, n, pe, gs()); });                \
    ++round;                                                                                                         \
    transfer_case(b, "gshmemx_get" #BITS "_on_stream", tag, round, false, BITS / 8, n, 1, 1,                         \
                  [&](int pe) { gshmemx_get##BITS##_on_stream(b.dev, b.sym_src, n, pe, gs()); });                    \
    ++round;                                                                                                         \
    transfer_case(b, "gshmemx_get" #BITS "_nbi_on_stream", tag, round, false, BITS / 8, n, 1, 1,                     \
                  [&](int pe) { gshmemx_get##BITS##_nbi_on_stream(b.dev, b.sym_src, n, pe, gs()); });                \
    ++round;                                                                                                         \
    transfer_case(b, "gshmemx_put" #BITS "_signal_on_stream", tag, round, true, BITS / 8, n, 1, 1, [&](int pe) {     \
      gshmemx_put##BITS##_signal_on_stream(b.sym_dst, b.dev, n, b.sig, 1, GSHMEM_SIGNAL_ADD, pe, gs());              \
      gshmemx_signal_wait_until_on_stream(b.sig, GSHMEM_CMP_EQ, 1, gs());                                            \
    });                                                                                                              \
    ++round;                                                                                                         \
    transfer_case(b, "gshmemx_put" #BITS "_signal_nbi_on_stream", tag, round, true, BITS / 8, n, 1, 1, [&](int pe) { \
      gshmemx_put##BITS##_signal_nbi_on_stream(b.sym_dst, b.dev, n, b.sig, 9, GSHMEM_SIGNAL_SET, pe, gs());          \
      gshmemx_signal_wait_until_on_stream(b.sig, GSHMEM_CMP_EQ, 9, gs());                                            \
    });                                                                                                              \
  }
  GT_SIZED(8)
  GT_SIZED(16)
  GT_SIZED(32)
  GT_SIZED(64)
  GT_SIZED(128)
#undef GT_SIZED
  // typed put_signal_nbi and half / bfloat16 contiguous forms
  {
    ++round;
    const std::size_t n = n_of(8, 1);
    transfer_case(b, "gshmemx_uint64_put_signal_nbi_on_stream", tag, round, true, 8, n, 1, 1, [&](int pe) {
      gshmemx_uint64_put_signal_nbi_on_stream(reinterpret_cast<std::uint64_t*>(b.sym_dst),
                                              reinterpret_cast<std::uint64_t*>(b.dev), n, b.sig, 3, GSHMEM_SIGNAL_ADD,
                                              pe, gs());
      gshmemx_signal_wait_until_on_stream(b.sig, GSHMEM_CMP_EQ, 3, gs());
    });
    ++round;
    const std::size_t h = n_of(2, 1);
    transfer_case(b, "gshmemx_bfloat16_put_on_stream", tag, round, true, 2, h, 1, 1, [&](int pe) {
      gshmemx_bfloat16_put_on_stream(reinterpret_cast<__nv_bfloat16*>(b.sym_dst),
                                     reinterpret_cast<__nv_bfloat16*>(b.dev), h, pe, gs());
    });
    ++round;
    transfer_case(b, "gshmemx_half_get_nbi_on_stream", tag, round, false, 2, h, 1, 1, [&](int pe) {
      gshmemx_half_get_nbi_on_stream(reinterpret_cast<__half*>(b.dev), reinterpret_cast<__half*>(b.sym_src), h, pe,
                                     gs());
    });
  }
  // g_on_stream: ordered after a put on the same stream; every PE's value
  {
    const int nn = npes(), my = me();
    auto* ints = static_cast<int*>(gshmem_malloc(static_cast<std::size_t>(nn) * sizeof(int)));
    auto* hs = static_cast<__half*>(gshmem_malloc(static_cast<std::size_t>(nn) * sizeof(__half)));
    local_fill(ints, static_cast<std::size_t>(nn), -1);
    gshmem_barrier_all();
    for (int j = 0; j < nn; ++j) {
      const int v =
          static_cast<int>(rnd(tag, 900, static_cast<std::uint64_t>(my), static_cast<std::uint64_t>(j)) >> 33);
      gshmemx_int_p_on_stream(ints + my, v, j, gs());
      __half hv;
      const unsigned short hb = static_cast<unsigned short>(v & 0x7BFF);
      std::memcpy(static_cast<void*>(&hv), &hb, 2);
      gshmemx_half_p_on_stream(hs + my, hv, j, gs());
    }
    gshmemx_barrier_all_on_stream(gs());
    for (int p = 0; p < nn; ++p) {
      const int want =
          static_cast<int>(rnd(tag, 900, static_cast<std::uint64_t>(p), static_cast<std::uint64_t>(my)) >> 33);
      MPT_CHECK_EQ(gshmemx_int_g_on_stream(ints + p, my, gs()), want);
      const int from_peer =
          static_cast<int>(rnd(tag, 900, static_cast<std::uint64_t>(my), static_cast<std::uint64_t>(p)) >> 33);
      MPT_CHECK_EQ(gshmemx_int_g_on_stream(ints + my, p, gs()), from_peer);
      const __half hv = gshmemx_half_g_on_stream(hs + my, p, gs());
      unsigned short hb = 0;
      std::memcpy(&hb, static_cast<const void*>(&hv), 2);
      MPT_CHECK_EQ(static_cast<int>(hb), from_peer & 0x7BFF);
    }
    gshmem_barrier_all();
    gshmem_free(hs);
    gshmem_free(ints);
  }
  CK(cudaFree(b.dev));
  gshmem_free(b.sig);
  gshmem_free(b.sym_dst);
  gshmem_free(b.sym_src);
}

// Values for comparator cmp that hold against base: (set value) for each GSHMEM_CMP_*.
template <typename T>
T satisfying(int cmp, T base) {
  switch (cmp) {
    case GSHMEM_CMP_EQ:
      return base;
    case GSHMEM_CMP_NE:
      return static_cast<T>(base + 3);
    case GSHMEM_CMP_GT:
      return static_cast<T>(base + 1);
    case GSHMEM_CMP_LE:
      return base;
    case GSHMEM_CMP_LT:
      return static_cast<T>(base - 1);
    default:
      return static_cast<T>(base + 2);  // GE
  }
}
// A start value that does not satisfy cmp against base.
template <typename T>
T failing(int cmp, T base) {
  switch (cmp) {
    case GSHMEM_CMP_EQ:
      return static_cast<T>(base + 5);
    case GSHMEM_CMP_NE:
      return base;
    case GSHMEM_CMP_GT:
      return base;
    case GSHMEM_CMP_LE:
      return static_cast<T>(base + 1);
    case GSHMEM_CMP_LT:
      return base;
    default:
      return static_cast<T>(base - 1);  // GE
  }
}

// The left PE puts data, then sets the flags; this PE's stream waits on its flags, then copies the data out.
template <typename T, typename Wait>
void wait_round(const char* what, std::uint64_t tag, int round, int cmp, std::size_t nflags, const int* d_status,
                const std::vector<int>& status, Wait wait) {
  const int nn = npes(), my = me(), right = (my + 1) % nn, left = (my + nn - 1) % nn;
  constexpr std::size_t kData = 4096;
  auto* data = static_cast<unsigned char*>(gshmem_malloc(kData));
  auto* flags = static_cast<T*>(gshmem_malloc(nflags * sizeof(T)));
  unsigned char* dout = nullptr;
  unsigned char* dsrc = nullptr;
  CK(cudaMalloc(&dout, kData));
  CK(cudaMalloc(&dsrc, kData));
  const T base = static_cast<T>(100 + rnd(tag, static_cast<std::uint64_t>(round)) % 1000);
  std::vector<T> start(nflags), fin(nflags);
  for (std::size_t i = 0; i < nflags; ++i) {
    start[i] = failing<T>(cmp, base);
    // excluded elements keep a failing value: the wait must not look at them
    fin[i] = (status.empty() || status[i] == 0) ? satisfying<T>(cmp, base) : start[i];
  }
  const auto mine = bytes_of(tag, round, my, kData), theirs = bytes_of(tag, round, left, kData);
  std::vector<unsigned char> pois(kData);
  poison_of(pois.data(), theirs.data(), kData);
  local_write(data, pois.data(), kData);
  local_write(flags, start.data(), nflags * sizeof(T));
  CK(cudaMemcpy(dsrc, mine.data(), kData, cudaMemcpyHostToDevice));
  CK(cudaMemset(dout, 0, kData));
  CK(cudaDeviceSynchronize());
  gshmem_barrier_all();
  cudaStream_t waiter;
  CK(cudaStreamCreateWithFlags(&waiter, cudaStreamNonBlocking));
  wait(flags, base, reinterpret_cast<gshmem_stream_t>(waiter));
  gshmemx_getmem_on_stream(dout, data, kData, my, reinterpret_cast<gshmem_stream_t>(waiter));
  // the sender: data, then the flags, on its own stream
  gshmemx_putmem_on_stream(data, dsrc, kData, right, gs());
  gshmemx_putmem_on_stream(flags, fin.data(), nflags * sizeof(T), right, gs());  // pageable source: staged copy
  CK(cudaStreamSynchronize(strm()));
  CK(cudaStreamSynchronize(waiter));
  std::vector<unsigned char> got(kData);
  CK(cudaMemcpy(got.data(), dout, kData, cudaMemcpyDeviceToHost));
  MPT_CHECK_MEM(std::string(what) + " cmp " + std::to_string(cmp) + ": data read after the wait", got.data(),
                theirs.data(), kData);
  CK(cudaStreamDestroy(waiter));
  gshmem_barrier_all();
  CK(cudaFree(dsrc));
  CK(cudaFree(dout));
  gshmem_free(flags);
  gshmem_free(data);
  (void)d_status;
}

template <typename T, typename Single, typename All, typename Vec>
void wait_type(const char* name, std::uint64_t tag, Single single, All all, Vec vec) {
  constexpr std::size_t kFlags = 9;
  std::vector<int> status(kFlags);
  for (std::size_t i = 0; i < kFlags; ++i) status[i] = (i % 3 == 1);  // 1: excluded
  int* d_status = nullptr;
  T* d_values = nullptr;
  CK(cudaMalloc(&d_status, kFlags * sizeof(int)));
  CK(cudaMalloc(&d_values, kFlags * sizeof(T)));
  CK(cudaMemcpy(d_status, status.data(), kFlags * sizeof(int), cudaMemcpyHostToDevice));
  for (int cmp = GSHMEM_CMP_EQ; cmp <= GSHMEM_CMP_GE; ++cmp) {
    const int round = cmp * 10;
    wait_round<T>((std::string(name) + "_wait_until_on_stream").c_str(), tag, round, cmp, 1, nullptr, {},
                  [&](T* f, T base, gshmem_stream_t s) { single(f, cmp, base, s); });
    wait_round<T>((std::string(name) + "_wait_until_all_on_stream (status NULL)").c_str(), tag, round + 1, cmp, kFlags,
                  nullptr, {}, [&](T* f, T base, gshmem_stream_t s) { all(f, kFlags, nullptr, cmp, base, s); });
    wait_round<T>((std::string(name) + "_wait_until_all_on_stream (status)").c_str(), tag, round + 2, cmp, kFlags,
                  d_status, status, [&](T* f, T base, gshmem_stream_t s) { all(f, kFlags, d_status, cmp, base, s); });
    wait_round<T>((std::string(name) + "_wait_until_all_vector_on_stream").c_str(), tag, round + 3, cmp, kFlags,
                  d_status, status, [&](T* f, T base, gshmem_stream_t s) {
                    std::vector<T> vals(kFlags, base);
                    CK(cudaMemcpy(d_values, vals.data(), kFlags * sizeof(T), cudaMemcpyHostToDevice));
                    vec(f, kFlags, d_status, cmp, d_values, s);
                  });
  }
  CK(cudaFree(d_values));
  CK(cudaFree(d_status));
}

MPT_CASE(stream_waits) {
  const std::uint64_t tag = tag_of("stream_waits");
#define GT_WAIT(T, N)                                                                                          \
  wait_type<T>("gshmemx_" #N, tag, gshmemx_##N##_wait_until_on_stream, gshmemx_##N##_wait_until_all_on_stream, \
               gshmemx_##N##_wait_until_all_vector_on_stream);
  GT_WAIT(short, short)
  GT_WAIT(int, int)
  GT_WAIT(unsigned long long, ulonglong)
  GT_WAIT(int64_t, int64)
  GT_WAIT(unsigned short, ushort)
  GT_WAIT(size_t, size)
#undef GT_WAIT
}

MPT_CASE(wait_timeout) {
  const char* t = std::getenv("GSHMEM_WAIT_TIMEOUT");
  if (!t || std::atof(t) <= 0 || std::atof(t) > 5) return;  // only in its own test (CMakeLists: --only=wait_timeout)
  auto* flags = static_cast<int*>(gshmem_calloc(2, sizeof(int)));
  local_set(flags, 1);
  gshmemx_int_wait_until_all_on_stream(flags, 2, nullptr, GSHMEM_CMP_EQ, 1, gs());  // element 1 stays 0
  const cudaError_t e = cudaStreamSynchronize(strm());
  std::fprintf(stderr, "wait_timeout: stream ended with %s\n", cudaGetErrorName(e));
  MPT_CHECK(e != cudaSuccess) << "a wait that never holds must end in an error";
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIP: no CUDA GPU\n");
    return 77;
  }
  return mpt::main(argc, argv);
}
