// mp_collectives_gpu: broadcast, fcollect and alltoall on GPU PEs through the _on_stream forms (typed and mem) and
// the device forms of each scope (gshmem_<T>_fcollect & co by one thread, gshmemx_<T>_*_warp by one warp,
// gshmemx_<T>_*_block by a block of 256, and the mem forms), with the checks of collectives_check.hpp (random
// data, poisoned destination with guards, exact comparison, source unchanged) on every team shape and size; the
// reductions (reduce, reducescatter) of a few ops over int, unsigned, float and double the same way; half and
// bfloat16 (every form, by their typed names), alltoalls (device thread form), nvshmemx_double2_maxloc_reduce_block,
// and the _on_stream forms captured in a CUDA graph and replayed.
// Needs GPU PEs (CTest label gpu; skipped without a GPU by gpu_or_skip.sh).
#include "collectives_gpu.cuh"

using namespace mpc;
using namespace mpcg;

namespace {

cudaStream_t stream = nullptr;


// The device forms by name, for each scope (free functions as NVSHMEM names them).
template <typename T>
struct DevCall;
#define MPC_DEV_CALL(T, N)                                                                                     \
  template <>                                                                                                  \
  struct DevCall<T> {                                                                                          \
    static __device__ int run(int scope, int k, gshmem_team_t t, T* d, const T* s, size_t n, int root) {      \
      if (scope == kThread)                                                                                    \
        return k == 0 ? gshmem_##N##_broadcast(t, d, s, n, root)                                               \
               : k == 1 ? gshmem_##N##_fcollect(t, d, s, n) : gshmem_##N##_alltoall(t, d, s, n);               \
      if (scope == kWarp)                                                                                      \
        return k == 0 ? gshmemx_##N##_broadcast_warp(t, d, s, n, root)                                         \
               : k == 1 ? gshmemx_##N##_fcollect_warp(t, d, s, n) : gshmemx_##N##_alltoall_warp(t, d, s, n);   \
      return k == 0 ? gshmemx_##N##_broadcast_block(t, d, s, n, root)                                          \
             : k == 1 ? gshmemx_##N##_fcollect_block(t, d, s, n) : gshmemx_##N##_alltoall_block(t, d, s, n);   \
    }                                                                                                          \
  };
MPC_DEV_CALL(unsigned char, uchar)
MPC_DEV_CALL(int, int)
MPC_DEV_CALL(double, double)
MPC_DEV_CALL(int64_t, int64)
MPC_DEV_CALL(uint16_t, uint16)
MPC_DEV_CALL(__half, half)
MPC_DEV_CALL(__nv_bfloat16, bfloat16)
#undef MPC_DEV_CALL

__device__ int mem_call(int scope, int k, gshmem_team_t t, void* d, const void* s, size_t b, int root) {
  if (scope == kThread)
    return k == 0 ? gshmem_broadcastmem(t, d, s, b, root) : k == 1 ? gshmem_fcollectmem(t, d, s, b)
                                                                    : gshmem_alltoallmem(t, d, s, b);
  if (scope == kWarp)
    return k == 0 ? gshmemx_broadcastmem_warp(t, d, s, b, root) : k == 1 ? gshmemx_fcollectmem_warp(t, d, s, b)
                                                                          : gshmemx_alltoallmem_warp(t, d, s, b);
  return k == 0 ? gshmemx_broadcastmem_block(t, d, s, b, root) : k == 1 ? gshmemx_fcollectmem_block(t, d, s, b)
                                                                         : gshmemx_alltoallmem_block(t, d, s, b);
}

// Thread scope: thread 0 calls; warp scope: warp 0 calls; block scope: every thread. ret[0] = thread 0's result.
template <typename T>
__global__ void coll_kernel(int scope, int k, gshmem_team_t t, T* d, const T* s, size_t n, int root, int mem,
                            int* ret) {
  const int tid = static_cast<int>(threadIdx.x);
  if ((scope == kThread && tid != 0) || (scope == kWarp && tid >= 32)) return;
  const int r = mem ? mem_call(scope, k, t, d, s, n * sizeof(T), root) : DevCall<T>::run(scope, k, t, d, s, n, root);
  if (tid == 0) *ret = r;
}

template <typename T>
constexpr bool kGpuRedType = std::is_same_v<T, int> || std::is_same_v<T, float> || std::is_same_v<T, double> ||
                             std::is_same_v<T, unsigned int> || kIsF16<T>;

}  // namespace

// half / bfloat16 from the host by their typed names (header-only in gshmem/device.cuh).
#define MPC_HOST_CALL_F16(T, N)                                                                                \
  template <>                                                                                                  \
  int mpc::call<T>(Kind k, gshmem_team_t team, T * d, const T* s, std::size_t n, int root, bool mem) {         \
    if (g_mode != Mode::Host) return call_other<T>(g_mode, k, team, d, s, n, root, mem);                       \
    return k == Kind::Broadcast  ? gshmem_##N##_broadcast(team, d, s, n, root)                                 \
           : k == Kind::Fcollect ? gshmem_##N##_fcollect(team, d, s, n)                                        \
                                 : gshmem_##N##_alltoall(team, d, s, n);                                       \
  }
MPC_HOST_CALL_F16(__half, half)
MPC_HOST_CALL_F16(__nv_bfloat16, bfloat16)
#undef MPC_HOST_CALL_F16

template <typename T>
int mpc::call_other(Mode m, Kind k, gshmem_team_t team, T* d, const T* s, std::size_t n, int root, bool mem) {
  const int kk = k == Kind::Broadcast ? 0 : k == Kind::Fcollect ? 1 : 2;
  if (m == Mode::Stream) {
    int r;
    if constexpr (std::is_same_v<T, __half>) {
      r = kk == 0 ? gshmemx_half_broadcast_on_stream(team, d, s, n, root, stream)
          : kk == 1 ? gshmemx_half_fcollect_on_stream(team, d, s, n, stream)
                    : gshmemx_half_alltoall_on_stream(team, d, s, n, stream);
      CK(cudaStreamSynchronize(stream));
      return r;
    }
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      r = kk == 0 ? gshmemx_bfloat16_broadcast_on_stream(team, d, s, n, root, stream)
          : kk == 1 ? gshmemx_bfloat16_fcollect_on_stream(team, d, s, n, stream)
                    : gshmemx_bfloat16_alltoall_on_stream(team, d, s, n, stream);
      CK(cudaStreamSynchronize(stream));
      return r;
    }
    if constexpr (std::is_same_v<T, int>) {
      if (!mem) {
        r = kk == 0 ? gshmemx_int_broadcast_on_stream(team, d, s, n, root, stream)
            : kk == 1 ? gshmemx_int_fcollect_on_stream(team, d, s, n, stream)
                      : gshmemx_int_alltoall_on_stream(team, d, s, n, stream);
        CK(cudaStreamSynchronize(stream));
        return r;
      }
    }
    {
      const std::size_t b = n * sizeof(T);
      r = kk == 0 ? gshmemx_broadcastmem_on_stream(team, d, s, b, root, stream)
          : kk == 1 ? gshmemx_fcollectmem_on_stream(team, d, s, b, stream)
                    : gshmemx_alltoallmem_on_stream(team, d, s, b, stream);
    }
    CK(cudaStreamSynchronize(stream));
    return r;
  }
  const int scope = m == Mode::DeviceThread ? kThread : m == Mode::DeviceWarp ? kWarp : kBlock;
  int* ret = nullptr;
  CK(cudaMallocManaged(&ret, sizeof(int)));
  *ret = -1;
  coll_kernel<T><<<1, 256, 0, stream>>>(scope, kk, team, d, s, n, root, mem ? 1 : 0, ret);
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(stream));
  const int r = *ret;
  CK(cudaFree(ret));
  return r;
}

template <typename T>
int mpc::red_call_other(Mode m, Op op, bool scatter, gshmem_team_t team, T* d, const T* s, std::size_t n) {
  if constexpr (!kGpuRedType<T>) {
    mpt::require(false, "mp_collectives_gpu calls reductions of int, unsigned, float and double only");
    return -1;
  } else {
    using C = typename RedCall<T>::C;
    C* dc = reinterpret_cast<C*>(d);
    const C* sc = reinterpret_cast<const C*>(s);
    if (m == Mode::Stream) {
      const int r = RedCall<T>::on_stream(op, scatter, team, dc, sc, n, stream);
      CK(cudaStreamSynchronize(stream));
      return r;
    }
    if constexpr (kIsF16<T>) {
      if (m == Mode::HostNamed) return RedCall<T>::host(op, scatter, team, dc, sc, n);
    }
    int* ret = nullptr;
    CK(cudaMallocManaged(&ret, sizeof(int)));
    *ret = -1;
    if (m == Mode::DeviceThread) launch_red<T, kThread>(op, scatter, team, d, s, n, ret, stream);
    else if (m == Mode::DeviceWarp) launch_red<T, kWarp>(op, scatter, team, d, s, n, ret, stream);
    else launch_red<T, kBlock>(op, scatter, team, d, s, n, ret, stream);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(stream));
    const int r = *ret;
    CK(cudaFree(ret));
    return r;
  }
}

namespace {
// alltoalls: the device thread form (the only device form NVSHMEM has), thread 0 of the kernel.
template <typename T>
__global__ void alltoalls_kernel(gshmem_team_t t, T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n,
                                 int* ret) {
  if (threadIdx.x != 0) return;
  if constexpr (std::is_same_v<T, int>) *ret = gshmem_int_alltoalls(t, d, s, dst, sst, n);
  else if constexpr (std::is_same_v<T, double>) *ret = gshmem_double_alltoalls(t, d, s, dst, sst, n);
  else *ret = gshmem_uchar_alltoalls(t, d, s, dst, sst, n);
}
}  // namespace

template <typename T>
int mpc::alltoalls_other(Mode m, gshmem_team_t team, T* d, const T* s, std::ptrdiff_t dst, std::ptrdiff_t sst,
                         std::size_t n) {
  mpt::require(m == Mode::DeviceThread, "alltoalls has host and device thread forms only");
  int* ret = nullptr;
  CK(cudaMallocManaged(&ret, sizeof(int)));
  *ret = -1;
  alltoalls_kernel<T><<<1, 32, 0, stream>>>(team, d, s, dst, sst, n, ret);
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(stream));
  const int r = *ret;
  CK(cudaFree(ret));
  return r;
}

namespace {
void every_mode_and_team(Mode m) {
  g_mode = m;
  auto teams = make_teams();
  for (const auto& t : teams) {
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(1000)}) {
      run<int>(Kind::Fcollect, t, n, 0, false, false, 100 + n);
      run<int>(Kind::Alltoall, t, n, 0, false, false, 101 + n);
      run<int>(Kind::Broadcast, t, n, t.size - 1, false, false, 102 + n);
      run<double>(Kind::Fcollect, t, n, 0, false, false, 103 + n);
      run<uint16_t>(Kind::Alltoall, t, n, 0, false, false, 104 + n);
      run<unsigned char>(Kind::Broadcast, t, n, 0, true, false, 105 + n);
      run<int64_t>(Kind::Broadcast, t, n, t.size / 2, false, true, 106 + n);  // in place
      run<__half>(Kind::Alltoall, t, n, 0, false, false, 107 + n);
      run<__nv_bfloat16>(Kind::Fcollect, t, n, 0, false, false, 108 + n);
      run<__half>(Kind::Broadcast, t, n, t.size - 1, false, false, 109 + n);
    }
  }
  destroy(teams);
  const std::vector<TeamShape> world{{"world", GSHMEM_TEAM_WORLD, 0, 1, mpt::npes()}};
  run<unsigned char>(Kind::Alltoall, world[0], std::size_t(1) << 20, 0, true, false, 110);  // 1 MiB per member
  run<unsigned char>(Kind::Fcollect, world[0], (std::size_t(1) << 20) + 3, 0, true, false, 111);
  // 4 MiB and more: the stream form's broadcast goes two-shot at 3 PEs and more (by default; the device forms stay
  // one-shot), from a middle member, in place too.
  run<unsigned char>(Kind::Broadcast, world[0], (std::size_t(4) << 20) + 5, world[0].size / 2, true, false, 112);
  run<int>(Kind::Broadcast, world[0], (std::size_t(1) << 20) + 3, world[0].size - 1, false, true, 113);
  g_mode = Mode::Host;
}
}  // namespace

namespace {
// Reductions in one mode: a few ops and types on every team shape, in place, and 64K elements on the world.
void reductions(Mode m) {
  g_mode = m;
  auto teams = make_teams();
  for (const auto& t : teams) {
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(1000)})
      for (bool scatter : {false, true}) {
        run_red<int>(Op::Sum, scatter, t, n, false, 200 + n);
        run_red<float>(Op::Sum, scatter, t, n, false, 201 + n);
        run_red<double>(Op::Max, scatter, t, n, false, 202 + n);
        run_red<int>(Op::Prod, scatter, t, n, false, 203 + n);
        run_red<float>(Op::Min, scatter, t, n, false, 204 + n);
        if (m != Mode::Stream) run_red<unsigned int>(Op::Xor, scatter, t, n, false, 205 + n);  // device forms only
        run_red<Half16>(Op::Sum, scatter, t, n, false, 207 + n);
        run_red<Bf16>(Op::Prod, scatter, t, n, false, 208 + n);
        run_red<Half16>(Op::Max, scatter, t, n, false, 209 + n);
      }
    for (std::size_t n : {std::size_t(33), std::size_t(5000)}) run_red<double>(Op::Sum, false, t, n, true, 206 + n);
  }
  destroy(teams);
  const TeamShape world{"world", GSHMEM_TEAM_WORLD, 0, 1, mpt::npes()};
  run_red<float>(Op::Sum, false, world, std::size_t(1) << 16, false, 210);
  run_red<float>(Op::Sum, true, world, std::size_t(1) << 16, false, 211);
  // Two-shot (reduce of 1 MiB and more, and in place), over many CTAs in the stream form; sources that share
  // dest's misalignment to 16 bytes (16-byte passes after a few elements) and sources that do not.
  const std::size_t big = 300001;  // 1.2 MB of float
  run_red<float>(Op::Sum, false, world, big, false, 212);
  run_red<float>(Op::Sum, false, world, big, false, 213, true);
  run_red<float>(Op::Max, true, world, big, false, 214, true);
  run_red<double>(Op::Sum, false, world, big / 2 + 7, true, 215);  // in place
  run_red<Half16>(Op::Sum, false, world, 2 * big, false, 216, true);
  if (m != Mode::Stream) run_red<unsigned int>(Op::Xor, false, world, big, false, 217, true);  // device forms only
  if (m == Mode::Stream) {  // 16 MiB: 32 CTAs
    run_red<float>(Op::Sum, false, world, (std::size_t(1) << 22) + 3, false, 218, true);
    run_red<int>(Op::Sum, true, world, (std::size_t(1) << 22) + 1, false, 219, true);
  }
  g_mode = Mode::Host;
}
}  // namespace

// half and bfloat16 from the host by their typed names (the other modes are in reductions()).
MPT_CASE(reduce_float16_host_names) {
  g_mode = Mode::Host;
  auto teams = make_teams();
  for (const auto& t : teams)
    for (std::size_t n : {std::size_t(0), std::size_t(5), std::size_t(3000)}) {
      g_mode = Mode::HostNamed;
      for (Op op : kStandardOps) run_red<Half16>(op, n % 2 == 1, t, n, false, 300 + n);
      for (Op op : kStandardOps) run_red<Bf16>(op, n % 2 == 0, t, n, false, 301 + n);
      g_mode = Mode::Host;
      run<__half>(Kind::Fcollect, t, n, 0, false, false, 302 + n);
      run<__nv_bfloat16>(Kind::Broadcast, t, n, 0, false, false, 303 + n);
    }
  destroy(teams);
  g_mode = Mode::Host;
}

// alltoalls, device thread form: strides on either side, every team.
MPT_CASE(alltoalls_device) {
  g_mode = Mode::DeviceThread;
  auto teams = make_teams();
  for (const auto& t : teams)
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(9)}) {
      run_strided<int>(t, n, 2, 3, 310 + n);
      run_strided<double>(t, n, 1, 2, 311 + n);
      run_strided<unsigned char>(t, n, 3, 1, 312 + n);
    }
  destroy(teams);
  g_mode = Mode::Host;
}

// nvshmemx_double2_maxloc_reduce_block over the world: random values with deliberate ties (a few distinct x), so
// the tie rule (the smaller location) decides; locations are random too.
__global__ void maxloc_kernel(double2* d, const double2* s, size_t n, int* ret) {
  const int r = gshmemx_double2_maxloc_reduce_block(GSHMEM_TEAM_WORLD, d, s, n);
  if (threadIdx.x == 0) *ret = r;
}
MPT_CASE(maxloc_block) {
  const int np = mpt::npes(), me = mpt::me();
  for (std::size_t n : {std::size_t(1), std::size_t(77), std::size_t(5000)}) {
    double2* src = static_cast<double2*>(gshmem_malloc(n * sizeof(double2)));
    double2* dest = static_cast<double2*>(gshmem_malloc(n * sizeof(double2)));
    mpt::require(src && dest, "gshmem_malloc");
    auto val = [&](int p, std::size_t i) {
      const std::uint64_t r = mpt::rnd(mpt::tag_of("maxloc") + n, static_cast<std::uint64_t>(p), i);
      return make_double2(static_cast<double>(r % 3) - 1.5, static_cast<double>((r >> 8) % 1000));
    };
    std::vector<double2> mine(n), want(n), poison(n);
    for (std::size_t i = 0; i < n; ++i) {
      mine[i] = val(me, i);
      double2 w = val(0, i);
      for (int p = 1; p < np; ++p) {
        const double2 v = val(p, i);
        if (v.x > w.x || (v.x == w.x && v.y < w.y)) w = v;
      }
      want[i] = w;
      poison[i] = make_double2(-1e300, -1.0);
    }
    mpt::local_write(src, mine.data(), n * sizeof(double2));
    mpt::local_write(dest, poison.data(), n * sizeof(double2));
    gshmem_barrier_all();
    int* ret = nullptr;
    CK(cudaMallocManaged(&ret, sizeof(int)));
    *ret = -1;
    maxloc_kernel<<<1, 128, 0, stream>>>(dest, src, n, ret);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(stream));
    MPT_CHECK(*ret == 0) << "maxloc returned" << *ret;
    CK(cudaFree(ret));
    std::vector<double2> got = mpt::local_vec(dest, n);
    MPT_CHECK_ARRAY("double2_maxloc_reduce_block n " + std::to_string(n), got.data(), want.data(), n);
    gshmem_barrier_all();
    gshmem_free(dest);
    gshmem_free(src);
  }
}

// The _on_stream forms captured in a CUDA graph (fcollect, then a float sum reduce of its result, then a broadcast
// of the reduce's result from the last member) and replayed with fresh data written before each launch.
MPT_CASE(graph_capture) {
  const int np = mpt::npes(), me = mpt::me();
  const std::size_t n = 300;
  float* src = static_cast<float*>(gshmem_malloc(n * sizeof(float)));
  float* all = static_cast<float*>(gshmem_malloc(n * np * sizeof(float)));
  float* sum = static_cast<float*>(gshmem_malloc(n * np * sizeof(float)));
  float* out = static_cast<float*>(gshmem_malloc(n * np * sizeof(float)));
  mpt::require(src && all && sum && out, "gshmem_malloc");
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  gshmemx_float_fcollect_on_stream(GSHMEM_TEAM_WORLD, all, src, n, stream);
  gshmemx_float_sum_reduce_on_stream(GSHMEM_TEAM_WORLD, sum, all, n * np, stream);
  gshmemx_float_broadcast_on_stream(GSHMEM_TEAM_WORLD, out, sum, n * np, np - 1, stream);
  CK(cudaStreamEndCapture(stream, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int rep = 0; rep < 3; ++rep) {
    auto v = [&](int p, std::size_t i) {  // small integers: every sum is exact
      return static_cast<float>(mpt::rnd(mpt::tag_of("graph") + rep, static_cast<std::uint64_t>(p), i) % 2001) - 1000;
    };
    std::vector<float> mine(n), want(n * np), poison(n * np, -12345.f);
    for (std::size_t i = 0; i < n; ++i) mine[i] = v(me, i);
    for (std::size_t j = 0; j < n * np; ++j) {  // element j of `all` is member j / n's element j % n
      float acc = 0;
      for (int p = 0; p < np; ++p) acc += v(static_cast<int>(j / n), j % n);
      want[j] = acc;
    }
    mpt::local_write(src, mine.data(), n * sizeof(float));
    mpt::local_write(out, poison.data(), n * np * sizeof(float));
    gshmem_barrier_all();
    CK(cudaGraphLaunch(exec, stream));
    CK(cudaStreamSynchronize(stream));
    std::vector<float> got = mpt::local_vec(out, n * np);
    MPT_CHECK_ARRAY("graph replay " + std::to_string(rep), got.data(), want.data(), n * np);
    gshmem_barrier_all();  // every member has read `out` before the next replay's broadcast writes it
  }
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  gshmem_free(out);
  gshmem_free(sum);
  gshmem_free(all);
  gshmem_free(src);
}

// Broadcasts on two teams of the same 2 PEs (two splits of WORLD, each its own slot), issued in opposite orders:
// the root (PE 0) puts team X's on stream A and team Y's on stream B; PE 1 puts Y's, then X's, on one stream. Run
// with GSHMEM_COLL_BCAST_CE_BYTES (gpu.mp.collectives_dev.bcast_ce.n2): the root's copies by the copy engines must
// keep A and B independent, or X's copy on A holds Y's on B while PE 1 waits in Y (a hang). Then the same with
// X's broadcast captured in a CUDA graph on A while Y's runs uncaptured on B before the capture ends. Fresh data and
// poisoned destinations each round; 2 PEs only (a skip line otherwise). The capture rounds come after the plain ones,
// whose first calls made the root's second streams.
MPT_CASE(broadcast_streams) {
  const int np = mpt::npes(), me = mpt::me();
  if (np != 2) {
    if (me == 0) std::printf("broadcast_streams: needs 2 PEs, skipped\n");
    return;
  }
  const std::size_t bytes = (std::size_t{1} << 20) + 24;
  gshmem_team_t tx = GSHMEM_TEAM_INVALID, ty = GSHMEM_TEAM_INVALID;
  mpt::require(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, 2, nullptr, 0, &tx) == 0 &&
                   gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, 2, nullptr, 0, &ty) == 0,
               "gshmem_team_split_strided");
  char* src[2];
  char* dst[2];
  for (int k = 0; k < 2; ++k) {
    src[k] = static_cast<char*>(gshmem_malloc(bytes));
    dst[k] = static_cast<char*>(gshmem_malloc(bytes));
    mpt::require(src[k] && dst[k], "gshmem_malloc");
  }
  cudaStream_t other = nullptr;
  CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  for (int round = 0; round < 4; ++round) {
    const bool captured = round >= 2;
    std::vector<char> want[2];
    for (int k = 0; k < 2; ++k) {
      want[k].resize(bytes);
      for (std::size_t i = 0; i < bytes; ++i)
        want[k][i] = static_cast<char>(mpt::rnd(mpt::tag_of("bstreams") + round * 2 + k, 0, i));
      if (me == 0) mpt::local_write(src[k], want[k].data(), bytes);
      std::vector<char> poison(bytes, static_cast<char>(0x5a));
      mpt::local_write(dst[k], poison.data(), bytes);
    }
    gshmem_barrier_all();
    if (me == 0) {
      cudaGraph_t graph = nullptr;
      cudaGraphExec_t exec = nullptr;
      if (captured) CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
      gshmemx_broadcastmem_on_stream(tx, dst[0], src[0], bytes, 0, stream);
      gshmemx_broadcastmem_on_stream(ty, dst[1], src[1], bytes, 0, other);
      if (captured) {
        CK(cudaStreamEndCapture(stream, &graph));
        CK(cudaGraphInstantiate(&exec, graph, 0));
        CK(cudaGraphLaunch(exec, stream));
      }
      CK(cudaStreamSynchronize(other));
      CK(cudaStreamSynchronize(stream));
      if (exec) CK(cudaGraphExecDestroy(exec));
      if (graph) CK(cudaGraphDestroy(graph));
    } else {
      gshmemx_broadcastmem_on_stream(ty, dst[1], src[1], bytes, 0, stream);
      gshmemx_broadcastmem_on_stream(tx, dst[0], src[0], bytes, 0, stream);
      CK(cudaStreamSynchronize(stream));
    }
    for (int k = 0; k < 2; ++k) {
      std::vector<char> got = mpt::local_vec(dst[k], bytes);
      MPT_CHECK_ARRAY(std::string(k ? "team Y" : "team X") + (captured ? ", captured" : "") + ", round " +
                          std::to_string(round),
                      got.data(), want[k].data(), bytes);
    }
    gshmem_barrier_all();
  }
  CK(cudaStreamDestroy(other));
  for (int k = 0; k < 2; ++k) {
    gshmem_free(dst[k]);
    gshmem_free(src[k]);
  }
  gshmem_team_destroy(ty);
  gshmem_team_destroy(tx);
}

// broadcast, fcollect and alltoall from a source outside the heap (cudaMalloc: NVSHMEM asks only dest to be
// symmetric), host and stream forms, at LL, staged and large sizes: the source check takes the driver query for it
// (a heap source skips it, bench/NOTES.md entry 62), and the kernels read it in place.
MPT_CASE(private_source) {
  const int np = mpt::npes(), me = mpt::me();
  for (const std::size_t bytes : {std::size_t{1024}, std::size_t{65536 + 8}, std::size_t{(4u << 20) + 16}}) {
    char* priv = nullptr;
    CK(cudaMalloc(&priv, bytes * np));
    char* dest = static_cast<char*>(gshmem_malloc(bytes * np));
    mpt::require(dest != nullptr, "gshmem_malloc");
    for (int k = 0; k < 3; ++k) {
      for (int on_stream = 0; on_stream < 2; ++on_stream) {
        const std::uint64_t tag = mpt::tag_of("private_source") + (bytes % 1000) * 8 + k * 2 + on_stream;
        const std::size_t src_bytes = k == 2 ? bytes * np : bytes, out_bytes = k == 0 ? bytes : bytes * np;
        std::vector<char> mine(src_bytes), want(out_bytes), poison(out_bytes, static_cast<char>(0x5a));
        for (std::size_t i = 0; i < src_bytes; ++i) mine[i] = static_cast<char>(mpt::rnd(tag, me, i));
        for (int p = 0; p < (k == 0 ? 1 : np); ++p)
          for (std::size_t i = 0; i < bytes; ++i)  // broadcast: PE 0's; fcollect: block p is p's; alltoall: p's block me
            want[p * bytes + i] = static_cast<char>(mpt::rnd(tag, k == 0 ? 0 : p, k == 2 ? me * bytes + i : i));
        CK(cudaMemcpy(priv, mine.data(), src_bytes, cudaMemcpyHostToDevice));
        mpt::local_write(dest, poison.data(), out_bytes);
        gshmem_barrier_all();
        if (on_stream) {
          if (k == 0) gshmemx_broadcastmem_on_stream(GSHMEM_TEAM_WORLD, dest, priv, bytes, 0, stream);
          else if (k == 1) gshmemx_fcollectmem_on_stream(GSHMEM_TEAM_WORLD, dest, priv, bytes, stream);
          else gshmemx_alltoallmem_on_stream(GSHMEM_TEAM_WORLD, dest, priv, bytes, stream);
          CK(cudaStreamSynchronize(stream));
        } else {
          if (k == 0) gshmem_broadcastmem(GSHMEM_TEAM_WORLD, dest, priv, bytes, 0);
          else if (k == 1) gshmem_fcollectmem(GSHMEM_TEAM_WORLD, dest, priv, bytes);
          else gshmem_alltoallmem(GSHMEM_TEAM_WORLD, dest, priv, bytes);
        }
        std::vector<char> got = mpt::local_vec(dest, out_bytes);
        MPT_CHECK_ARRAY(std::string(k == 0 ? "broadcastmem" : k == 1 ? "fcollectmem" : "alltoallmem") +
                            (on_stream ? "_on_stream" : "") + " of " + std::to_string(bytes) +
                            " bytes from cudaMalloc memory",
                        got.data(), want.data(), out_bytes);
        gshmem_barrier_all();
      }
    }
    gshmem_free(dest);
    CK(cudaFree(priv));
  }
}

MPT_CASE(reduce_on_stream) { reductions(Mode::Stream); }
MPT_CASE(reduce_device_thread) { reductions(Mode::DeviceThread); }
MPT_CASE(reduce_device_warp) { reductions(Mode::DeviceWarp); }
MPT_CASE(reduce_device_block) { reductions(Mode::DeviceBlock); }
MPT_CASE(on_stream) { every_mode_and_team(Mode::Stream); }
MPT_CASE(device_thread) { every_mode_and_team(Mode::DeviceThread); }
MPT_CASE(device_warp) { every_mode_and_team(Mode::DeviceWarp); }
MPT_CASE(device_block) { every_mode_and_team(Mode::DeviceBlock); }

// `dev_overlap` (argv[1]): a device fcollect whose source overlaps its dest; the kernel must trap naming the call.
__global__ void overlap_kernel(int* buf) { gshmemx_int_fcollect_block(GSHMEM_TEAM_WORLD, buf, buf + 1, 8); }
int dev_overlap() {
  if (gshmem_init() != GSHMEM_SUCCESS) return 2;
  int* buf = static_cast<int*>(gshmem_malloc(64 * sizeof(int) * gshmem_n_pes()));
  overlap_kernel<<<1, 64>>>(buf);
  const cudaError_t e = cudaDeviceSynchronize();
  std::fprintf(stderr, "dev_overlap: the kernel ended with %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;  // (finalize is not reachable after a trap)
}

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "dev_overlap") return dev_overlap();
  static mpt::Registrar first("(create stream)", [] {
    if (!mpt::st().gpu) {
      std::fprintf(stderr, "[PE %d] FAIL: mp_collectives_gpu needs GPU PEs but this is a CPU PE\n", mpt::me());
      gshmem_global_exit(1);
    }
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    MPT_CHECK(stream != nullptr);
  });
  auto& c = mpt::cases();
  std::rotate(c.begin(), c.end() - 1, c.end());
  return mpt::main(argc, argv);
}
