// moe-nvshmem-bench: MoE dispatch / combine written with NVSHMEM's public API names only (host and device), so the
// same file builds against gshmem (its compatibility headers include/gshmem/nvshmem, plain nvcc, no -rdc: target
// moe-nvshmem-bench of bench/CMakeLists.txt) and against NVIDIA NVSHMEM 3.4.5 (nvcc -rdc=true, nvshmem_host +
// nvshmem_device; scripts/moe-gpu.sh builds both). It measures what the library's device API costs for this
// exchange, beside gshmem's own MoE kernels (bench/moe/moe_bench.py).
//
// The exchange (pplx-kernels' internode scheme, simplified; dp_size 1, bf16 rows, no scales), one block per PE:
//   dispatch c: one thread scans the routing for each (token, k)'s slot among its expert's rows from this PE; the
//     per-expert counts go out first (signal SET c << 32 | n at the expert's PE); then each (token, k) row, packed
//     with its (token, k) meta, goes out as one putmem_signal_nbi_warp (signal ADD 1 on a per-(expert, source)
//     counter); the receiver waits for each count word, then for its counter to reach the running total of rows
//     it expects, and compacts the rows source by source.
//   combine c: each received row goes back (putmem_signal_nbi_warp, ADD 1 on a per-token counter) into staging
//     slot (token, k) at its source; each token's owner waits for K more, sums fmaf(w, y, acc) in k order; a
//     barrier_all_block at the end keeps the next dispatch from overwriting staging still being read.
// Checked: every rank's combined tokens equal its own reference bit for bit (expert output = the expert's input
// row, so out[i] = the fmaf chain of w[i][k] * x[i]).
//
//   BENCH_RANK=r BENCH_NRANKS=n moe-nvshmem-bench --uid-file <path> [--tokens 1,2,...] [--configs 64x6x2048,...]
//     [--warmup 10] [--iters 50] [--max-gib 40]
// Rank 0 prints one JSON line per (configuration, tokens): median µs of dispatch and combine (CUDA events, each
// phase after a barrier_all_on_stream), over --iters after --warmup. Never uses NVLink multicast.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// Which library the build links (bench/CMakeLists.txt and scripts/moe-gpu.sh set it); printed in the rows.
#ifndef MOE_BENCH_LIBRARY
#define MOE_BENCH_LIBRARY "unknown"
#endif

namespace {

#define CK(expr)                                                                                    \
  do {                                                                                              \
    cudaError_t e_ = (expr);                                                                        \
    if (e_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "moe-nvshmem-bench: %s: %s\n", #expr, cudaGetErrorString(e_));           \
      std::exit(2);                                                                                 \
    }                                                                                               \
  } while (0)

constexpr int kThreads = 512;
constexpr int kMetaBytes = 16;  // token index, k (uint32 each), padding to a 16-byte row end

struct Layout {
  int E, K, H, T, W, L, me;
  size_t row;  // bytes of a dispatch staging row: 2H + meta
};

// Symmetric areas (nvshmem_malloc) and this PE's own scratch (cudaMalloc).
struct Buffers {
  char* recv;         // [L][W][T] rows of `row` bytes
  uint64_t* cnt;      // [L][W]: c << 32 | rows from source s
  uint64_t* rsig;     // [L][W]: rows landed from source s, all calls
  char* comb;         // [T][K] rows of 2H bytes
  uint64_t* csig;     // [T]: rows landed for token i, all calls
  uint32_t* slot;     // [T * K]
  uint32_t* per;      // [E]
  uint64_t* rexp;     // [L][W]: rows expected from source s, all calls
  uint64_t* cexp;     // [T]
  char* pack;         // [T * K] rows of `row` bytes: the row and its meta, contiguous for one put
  uint32_t* meta;     // [L][W * T] source, token, k of each received row
  int32_t* counts;    // [L]
  __nv_bfloat16* x;   // [T][H]
  int32_t* idx;       // [T][K]
  float* w;           // [T][K]
  __nv_bfloat16* ex;  // [L][W * T][H]: received rows, also the experts' outputs
  __nv_bfloat16* out; // [T][H]
};

__device__ void copy16(void* d, const void* s, size_t bytes, int rank, int size) {
  const uint4* src = static_cast<const uint4*>(s);
  uint4* dst = static_cast<uint4*>(d);
  for (size_t n = static_cast<size_t>(rank); n < bytes / 16; n += static_cast<size_t>(size)) dst[n] = src[n];
}

__global__ void __launch_bounds__(kThreads) dispatch_kernel(Layout g, Buffers b, uint64_t c, int m) {
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32, warps = kThreads / 32;
  if (tid == 0) {
    for (int e = 0; e < g.E; ++e) b.per[e] = 0;
    for (int n = 0; n < m * g.K; ++n) b.slot[n] = b.per[b.idx[n]]++;
  }
  __syncthreads();
  for (int e = tid; e < g.E; e += kThreads)
    nvshmemx_signal_op(b.cnt + (e % g.L) * g.W + g.me, c << 32 | b.per[e], NVSHMEM_SIGNAL_SET, e / g.L);
  for (int n = warp; n < m * g.K; n += warps) {
    const int i = n / g.K, k = n % g.K, e = b.idx[n], l = e % g.L, pe = e / g.L;
    char* p = b.pack + static_cast<size_t>(n) * g.row;
    copy16(p, b.x + static_cast<size_t>(i) * g.H, 2 * static_cast<size_t>(g.H), lane, 32);
    if (lane == 0) {
      uint32_t* meta = reinterpret_cast<uint32_t*>(p + 2 * static_cast<size_t>(g.H));
      meta[0] = static_cast<uint32_t>(i);
      meta[1] = static_cast<uint32_t>(k);
    }
    __syncwarp();
    char* dst = b.recv + ((static_cast<size_t>(l) * g.W + g.me) * g.T + b.slot[n]) * g.row;
    nvshmemx_putmem_signal_nbi_warp(dst, p, g.row, b.rsig + l * g.W + g.me, 1, NVSHMEM_SIGNAL_ADD, pe);
  }
  __shared__ uint64_t n_rows;
  const int left = g.E - g.me * g.L, mine = left < 0 ? 0 : left > g.L ? g.L : left;  // experts this PE holds
  for (int l = 0; l < g.L; ++l) {
    uint64_t off = 0;
    for (int s = 0; l < mine && s < g.W; ++s) {
      if (tid == 0) {
        nvshmem_signal_wait_until(b.cnt + l * g.W + s, NVSHMEM_CMP_GE, c << 32);
        const uint64_t n = *reinterpret_cast<volatile uint64_t*>(b.cnt + l * g.W + s) & 0xffffffffu;
        b.rexp[l * g.W + s] += n;
        nvshmem_signal_wait_until(b.rsig + l * g.W + s, NVSHMEM_CMP_GE, b.rexp[l * g.W + s]);
        n_rows = n;
      }
      __syncthreads();
      const uint64_t n = n_rows;
      for (uint64_t j = 0; j < n; ++j) {
        const char* row = b.recv + ((static_cast<size_t>(l) * g.W + s) * g.T + j) * g.row;
        const size_t at = static_cast<size_t>(l) * g.W * g.T + off + j;
        copy16(b.ex + at * g.H, row, 2 * static_cast<size_t>(g.H), tid, kThreads);
        if (tid == 0) {
          const uint32_t* meta = reinterpret_cast<const uint32_t*>(row + 2 * static_cast<size_t>(g.H));
          b.meta[at * 3] = static_cast<uint32_t>(s);
          b.meta[at * 3 + 1] = meta[0];
          b.meta[at * 3 + 2] = meta[1];
        }
      }
      off += n;
      __syncthreads();
    }
    if (tid == 0) b.counts[l] = static_cast<int32_t>(off);
  }
}

__global__ void __launch_bounds__(kThreads) combine_kernel(Layout g, Buffers b, int m) {
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, warps = kThreads / 32;
  for (int l = 0; l < g.L; ++l) {
    const int n = b.counts[l];
    for (int j = warp; j < n; j += warps) {
      const size_t at = static_cast<size_t>(l) * g.W * g.T + static_cast<size_t>(j);
      const int s = static_cast<int>(b.meta[at * 3]);
      const uint32_t i = b.meta[at * 3 + 1], k = b.meta[at * 3 + 2];
      char* dst = b.comb + (static_cast<size_t>(i) * g.K + k) * 2 * g.H;
      nvshmemx_putmem_signal_nbi_warp(dst, b.ex + at * g.H, 2 * static_cast<size_t>(g.H), b.csig + i, 1,
                                      NVSHMEM_SIGNAL_ADD, s);
    }
  }
  for (int i = 0; i < m; ++i) {
    if (tid == 0) {
      b.cexp[i] += static_cast<uint64_t>(g.K);
      nvshmem_signal_wait_until(b.csig + i, NVSHMEM_CMP_GE, b.cexp[i]);
    }
    __syncthreads();
    for (int h = tid; h < g.H; h += kThreads) {
      float acc = 0.0f;
      for (int k = 0; k < g.K; ++k) {
        const __nv_bfloat16* y = reinterpret_cast<const __nv_bfloat16*>(b.comb + (static_cast<size_t>(i) * g.K + k) *
                                                                                     2 * g.H);
        acc = fmaf(b.w[i * g.K + k], __bfloat162float(y[h]), acc);
      }
      b.out[static_cast<size_t>(i) * g.H + h] = __float2bfloat16_rn(acc);
    }
  }
  nvshmemx_barrier_all_block();  // every PE is done with this call's staging before the next dispatch writes it
}

// ---- host ----
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

void init_with_uid_file(const std::string& path, int rank, int nranks) {
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (rank == 0) {
    if (nvshmemx_get_uniqueid(&id) != 0) std::exit(2);
    const std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f || std::fwrite(&id, sizeof id, 1, f) != 1 || std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()))
      std::exit(2);
  } else {
    for (int tries = 0;; ++tries) {
      FILE* f = std::fopen(path.c_str(), "rb");
      if (f) {
        const bool ok = std::fread(&id, sizeof id, 1, f) == 1;
        std::fclose(f);
        if (ok) break;
      }
      if (tries > 60000) {
        std::fprintf(stderr, "moe-nvshmem-bench: no unique id in %s after 60 s\n", path.c_str());
        std::exit(2);
      }
      usleep(1000);
    }
  }
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  if (nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr) != 0 ||
      nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0) {
    std::fprintf(stderr, "moe-nvshmem-bench: init with the unique id failed\n");
    std::exit(2);
  }
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t a = 0;
  while (a <= s.size()) {
    const size_t b = s.find(',', a);
    out.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) break;
    a = b + 1;
  }
  return out;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0f : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

template <typename T>
T* sym(size_t count) {
  void* p = nvshmem_calloc(count ? count : 1, sizeof(T));
  if (!p) {
    const char* size = std::getenv("NVSHMEM_SYMMETRIC_SIZE");
    std::fprintf(stderr, "moe-nvshmem-bench: nvshmem_calloc of %zu bytes failed (NVSHMEM_SYMMETRIC_SIZE=%s)\n",
                 count * sizeof(T), size ? size : "(unset)");
    std::exit(2);
  }
  return static_cast<T*>(p);
}
template <typename T>
T* local(size_t count) {
  void* p = nullptr;
  CK(cudaMalloc(&p, (count ? count : 1) * sizeof(T)));
  CK(cudaMemset(p, 0, (count ? count : 1) * sizeof(T)));
  return static_cast<T*>(p);
}

// One (configuration, m): returns false if the check failed.
bool run(int E, int K, int H, int m, int warmup, int iters, const char* name, cudaStream_t st) {
  const int me = nvshmem_my_pe(), W = nvshmem_n_pes();
  Layout g{E, K, H, m, W, (E + W - 1) / W, me, 2 * static_cast<size_t>(H) + kMetaBytes};
  const size_t T = static_cast<size_t>(m), L = static_cast<size_t>(g.L), WT = static_cast<size_t>(W) * T;
  Buffers b{};
  b.recv = sym<char>(L * WT * g.row);
  b.cnt = sym<uint64_t>(L * W);
  b.rsig = sym<uint64_t>(L * W);
  b.comb = sym<char>(T * K * 2 * H);
  b.csig = sym<uint64_t>(T);
  b.slot = local<uint32_t>(T * K);
  b.per = local<uint32_t>(E);
  b.rexp = local<uint64_t>(L * W);
  b.cexp = local<uint64_t>(T);
  b.pack = local<char>(T * K * g.row);
  b.meta = local<uint32_t>(L * WT * 3);
  b.counts = local<int32_t>(L);
  b.x = local<__nv_bfloat16>(T * H);
  b.idx = local<int32_t>(T * K);
  b.w = local<float>(T * K);
  b.ex = local<__nv_bfloat16>(L * WT * H);
  b.out = local<__nv_bfloat16>(T * H);
  // Tokens, distinct experts per token, weights: from a generator seeded by the rank.
  std::mt19937_64 rng(1234u + static_cast<unsigned>(me));
  std::vector<__nv_bfloat16> x(T * H);
  std::vector<int32_t> idx(T * K);
  std::vector<float> w(T * K);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (auto& v : x) v = __float2bfloat16_rn(normal(rng));
  std::vector<int32_t> pool(E);
  for (size_t i = 0; i < T; ++i) {
    for (int e = 0; e < E; ++e) pool[e] = e;
    for (int k = 0; k < K; ++k) {
      std::swap(pool[k], pool[k + static_cast<int>(rng() % static_cast<uint64_t>(E - k))]);
      idx[i * K + k] = pool[k];
      w[i * K + k] = unit(rng);
    }
  }
  CK(cudaMemcpy(b.x, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.idx, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.w, w.data(), w.size() * 4, cudaMemcpyHostToDevice));
  nvshmem_barrier_all();
  uint64_t c = 0;
  std::vector<float> d_us, c_us;
  cudaEvent_t ev[4];
  for (auto& e : ev) CK(cudaEventCreate(&e));
  bool ok = true;
  for (int it = 0; it < warmup + iters; ++it) {
    ++c;
    nvshmemx_barrier_all_on_stream(st);
    CK(cudaEventRecord(ev[0], st));
    dispatch_kernel<<<1, kThreads, 0, st>>>(g, b, c, m);
    CK(cudaEventRecord(ev[1], st));
    nvshmemx_barrier_all_on_stream(st);
    CK(cudaEventRecord(ev[2], st));
    combine_kernel<<<1, kThreads, 0, st>>>(g, b, m);
    CK(cudaEventRecord(ev[3], st));
    CK(cudaEventSynchronize(ev[3]));
    CK(cudaGetLastError());
    if (it == 0) {  // the first call checked bit for bit
      std::vector<__nv_bfloat16> out(T * H);
      CK(cudaMemcpy(out.data(), b.out, out.size() * 2, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < T && ok; ++i)
        for (int h = 0; h < H; ++h) {
          float acc = 0.0f;
          for (int k = 0; k < K; ++k) acc = std::fmaf(w[i * K + k], __bfloat162float(x[i * H + h]), acc);
          const __nv_bfloat16 want = __float2bfloat16_rn(acc);
          if (std::memcmp(&want, &out[i * H + h], 2) != 0) {
            std::fprintf(stderr, "moe-nvshmem-bench: PE %d %s m=%d: token %zu column %d differs\n", me, name, m, i,
                         h);
            ok = false;
            break;
          }
        }
    }
    if (it >= warmup) {
      float a = 0, z = 0;
      CK(cudaEventElapsedTime(&a, ev[0], ev[1]));
      CK(cudaEventElapsedTime(&z, ev[2], ev[3]));
      d_us.push_back(a * 1e3f);
      c_us.push_back(z * 1e3f);
    }
  }
  if (me == 0)
    std::printf("{\"config\": \"%s\", \"experts\": %d, \"topk\": %d, \"hidden\": %d, \"tokens\": %d, \"ranks\": %d, "
                "\"library\": \"%s\", \"dispatch_us\": %.2f, \"combine_us\": %.2f, \"checked\": %s}\n",
                name, E, K, H, m, W, MOE_BENCH_LIBRARY, median(d_us), median(c_us), ok ? "true" : "false");
  std::fflush(stdout);
  for (auto& e : ev) CK(cudaEventDestroy(e));
  for (void* p : {static_cast<void*>(b.slot), static_cast<void*>(b.per), static_cast<void*>(b.rexp),
                  static_cast<void*>(b.cexp), static_cast<void*>(b.pack), static_cast<void*>(b.meta),
                  static_cast<void*>(b.counts), static_cast<void*>(b.x), static_cast<void*>(b.idx),
                  static_cast<void*>(b.w), static_cast<void*>(b.ex), static_cast<void*>(b.out)})
    CK(cudaFree(p));
  nvshmem_barrier_all();
  for (void* p : {static_cast<void*>(b.recv), static_cast<void*>(b.cnt), static_cast<void*>(b.rsig),
                  static_cast<void*>(b.comb), static_cast<void*>(b.csig)})
    nvshmem_free(p);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string uid, tokens = "1,2,4,8,16,32,64,128,4096", configs = "64x6x2048,256x8x7168";
  int warmup = 10, iters = 50;
  double max_gib = 40;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string k = argv[a], v = argv[a + 1];
    if (k == "--uid-file") uid = v;
    else if (k == "--tokens") tokens = v;
    else if (k == "--configs") configs = v;
    else if (k == "--warmup") warmup = std::atoi(v.c_str());
    else if (k == "--iters") iters = std::atoi(v.c_str());
    else if (k == "--max-gib") max_gib = std::atof(v.c_str());
    else {
      std::fprintf(stderr, "moe-nvshmem-bench: unknown option %s (see the head of bench/moe/moe_nvshmem.cu)\n",
                   k.c_str());
      return 2;
    }
  }
  const int rank = env_int("BENCH_RANK", -1), nranks = env_int("BENCH_NRANKS", -1);
  if (uid.empty() || rank < 0 || nranks < 1) {
    std::fprintf(stderr, "moe-nvshmem-bench: needs --uid-file and BENCH_RANK, BENCH_NRANKS\n");
    return 2;
  }
  int ngpu = 0;
  CK(cudaGetDeviceCount(&ngpu));
  CK(cudaSetDevice(rank % std::max(ngpu, 1)));
  init_with_uid_file(uid, rank, nranks);
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  bool ok = true;
  for (const std::string& cfg : split(configs)) {
    int E = 0, K = 0, H = 0;
    if (std::sscanf(cfg.c_str(), "%dx%dx%d", &E, &K, &H) != 3 || E < 1 || K < 1 || K > E || H < 8 || H % 8) {
      std::fprintf(stderr, "moe-nvshmem-bench: bad configuration %s (experts x topk x hidden)\n", cfg.c_str());
      return 2;
    }
    for (const std::string& t : split(tokens)) {
      const int m = std::atoi(t.c_str());
      const double L = std::ceil(static_cast<double>(E) / nranks);
      // Staging (symmetric) and the received rows, plus the combine staging and the send rows with their meta.
      const double row = 2.0 * H + kMetaBytes;
      const double gib = (L * nranks * m * (row + 2.0 * H) + m * K * (2.0 * H + row)) / (1 << 30);
      if (m < 1 || gib > max_gib) {
        if (nvshmem_my_pe() == 0)
          std::printf("{\"config\": \"%s\", \"tokens\": %d, \"skipped\": \"about %.1f GiB > --max-gib\"}\n",
                      cfg.c_str(), m, gib);
        continue;
      }
      ok = run(E, K, H, m, warmup, iters, cfg.c_str(), st) && ok;
    }
  }
  CK(cudaStreamDestroy(st));
  nvshmem_finalize();
  return ok ? 0 : 1;
}
