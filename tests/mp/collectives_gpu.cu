// mp_collectives_gpu: broadcast, fcollect and alltoall on GPU PEs through the _on_stream forms (typed and mem) and
// the device forms of each scope (gshmem_<T>_fcollect & co by one thread, gshmemx_<T>_*_warp by one warp,
// gshmemx_<T>_*_block by a block of 256, and the mem forms), with the checks of collectives_check.hpp (random
// data, poisoned destination with guards, exact comparison, source unchanged) on every team shape and size; the
// reductions (reduce, reducescatter) of a few ops over int, unsigned, float and double the same way.
// Needs GPU PEs (CTest label gpu; skipped without a GPU by gpu_or_skip.sh).
#include <cuda_runtime.h>

#include "collectives_check.hpp"
#include "cuda_check.cuh"
#include "gshmem/device.cuh"

using namespace mpc;

namespace {

cudaStream_t stream = nullptr;

enum : int { kThread = 0, kWarp = 1, kBlock = 2 };

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

// Reductions by name: the device forms of each scope and the _on_stream forms, for the types the test uses.
#define MPC_RED_CASE(N, OP, O, PRE, SUF)                                                                       \
  case Op::O:                                                                                                  \
    return scatter ? PRE##N##_##OP##_reducescatter##SUF(t, d, s, n) : PRE##N##_##OP##_reduce##SUF(t, d, s, n);
#define MPC_RED_STANDARD(N, PRE, SUF)                                                                          \
  MPC_RED_CASE(N, max, Max, PRE, SUF) MPC_RED_CASE(N, min, Min, PRE, SUF)                                     \
  MPC_RED_CASE(N, sum, Sum, PRE, SUF) MPC_RED_CASE(N, prod, Prod, PRE, SUF)
#define MPC_RED_BITWISE(N, PRE, SUF)                                                                           \
  MPC_RED_CASE(N, and, And, PRE, SUF) MPC_RED_CASE(N, or, Or, PRE, SUF) MPC_RED_CASE(N, xor, Xor, PRE, SUF)
#define MPC_RED_NONE(N, PRE, SUF)
#define MPC_STREAM_CASE(N, OP, O)                                                                              \
  case Op::O:                                                                                                  \
    return scatter ? gshmemx_##N##_##OP##_reducescatter_on_stream(t, d, s, n, stream)                          \
                   : gshmemx_##N##_##OP##_reduce_on_stream(t, d, s, n, stream);
template <typename T>
struct RedCall;
#define MPC_RED_CALL(T, N, BITWISE)                                                                            \
  template <>                                                                                                  \
  struct RedCall<T> {                                                                                          \
    static __device__ int dev(int scope, Op op, bool scatter, gshmem_team_t t, T* d, const T* s, size_t n) {   \
      if (scope == kThread) {                                                                                  \
        switch (op) {                                                                                          \
          MPC_RED_STANDARD(N, gshmem_, )                                                                       \
          BITWISE(N, gshmem_, )                                                                                \
          default: return -2;                                                                                  \
        }                                                                                                      \
      }                                                                                                        \
      if (scope == kWarp) {                                                                                    \
        switch (op) {                                                                                          \
          MPC_RED_STANDARD(N, gshmemx_, _warp)                                                                 \
          BITWISE(N, gshmemx_, _warp)                                                                          \
          default: return -2;                                                                                  \
        }                                                                                                      \
      }                                                                                                        \
      switch (op) {                                                                                            \
        MPC_RED_STANDARD(N, gshmemx_, _block)                                                                  \
        BITWISE(N, gshmemx_, _block)                                                                           \
        default: return -2;                                                                                    \
      }                                                                                                        \
    }                                                                                                          \
    static int on_stream(Op op, bool scatter, gshmem_team_t t, T* d, const T* s, size_t n) {                   \
      switch (op) {                                                                                            \
        MPC_STREAM_CASE(N, max, Max) MPC_STREAM_CASE(N, min, Min)                                             \
        MPC_STREAM_CASE(N, sum, Sum) MPC_STREAM_CASE(N, prod, Prod)                                           \
        default: return -2;                                                                                    \
      }                                                                                                        \
    }                                                                                                          \
  };
MPC_RED_CALL(int, int, MPC_RED_NONE)
MPC_RED_CALL(float, float, MPC_RED_NONE)
MPC_RED_CALL(double, double, MPC_RED_NONE)
MPC_RED_CALL(unsigned int, uint, MPC_RED_BITWISE)
#undef MPC_RED_CALL
#undef MPC_STREAM_CASE
#undef MPC_RED_NONE
#undef MPC_RED_BITWISE
#undef MPC_RED_STANDARD
#undef MPC_RED_CASE
template <typename T>
constexpr bool kGpuRedType = std::is_same_v<T, int> || std::is_same_v<T, float> || std::is_same_v<T, double> ||
                             std::is_same_v<T, unsigned int>;

template <typename T>
__global__ void red_kernel(int scope, Op op, bool scatter, gshmem_team_t t, T* d, const T* s, size_t n, int* ret) {
  const int tid = static_cast<int>(threadIdx.x);
  if ((scope == kThread && tid != 0) || (scope == kWarp && tid >= 32)) return;
  const int r = RedCall<T>::dev(scope, op, scatter, t, d, s, n);
  if (tid == 0) *ret = r;
}

}  // namespace

template <typename T>
int mpc::call_other(Mode m, Kind k, gshmem_team_t team, T* d, const T* s, std::size_t n, int root, bool mem) {
  const int kk = k == Kind::Broadcast ? 0 : k == Kind::Fcollect ? 1 : 2;
  if (m == Mode::Stream) {
    int r;
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
    if (m == Mode::Stream) {
      const int r = RedCall<T>::on_stream(op, scatter, team, d, s, n);
      CK(cudaStreamSynchronize(stream));
      return r;
    }
    const int scope = m == Mode::DeviceThread ? kThread : m == Mode::DeviceWarp ? kWarp : kBlock;
    int* ret = nullptr;
    CK(cudaMallocManaged(&ret, sizeof(int)));
    *ret = -1;
    red_kernel<T><<<1, 256, 0, stream>>>(scope, op, scatter, team, d, s, n, ret);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(stream));
    const int r = *ret;
    CK(cudaFree(ret));
    return r;
  }
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
    }
  }
  destroy(teams);
  const std::vector<TeamShape> world{{"world", GSHMEM_TEAM_WORLD, 0, 1, mpt::npes()}};
  run<unsigned char>(Kind::Alltoall, world[0], std::size_t(1) << 20, 0, true, false, 110);  // 1 MiB per member
  run<unsigned char>(Kind::Fcollect, world[0], (std::size_t(1) << 20) + 3, 0, true, false, 111);
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
      }
    for (std::size_t n : {std::size_t(33), std::size_t(5000)}) run_red<double>(Op::Sum, false, t, n, true, 206 + n);
  }
  destroy(teams);
  const TeamShape world{"world", GSHMEM_TEAM_WORLD, 0, 1, mpt::npes()};
  run_red<float>(Op::Sum, false, world, std::size_t(1) << 16, false, 210);
  run_red<float>(Op::Sum, true, world, std::size_t(1) << 16, false, 211);
  g_mode = Mode::Host;
}
}  // namespace

MPT_CASE(reduce_on_stream) { reductions(Mode::Stream); }
MPT_CASE(reduce_device_thread) { reductions(Mode::DeviceThread); }
MPT_CASE(reduce_device_warp) { reductions(Mode::DeviceWarp); }
MPT_CASE(reduce_device_block) { reductions(Mode::DeviceBlock); }
MPT_CASE(on_stream) { every_mode_and_team(Mode::Stream); }
MPT_CASE(device_thread) { every_mode_and_team(Mode::DeviceThread); }
MPT_CASE(device_warp) { every_mode_and_team(Mode::DeviceWarp); }
MPT_CASE(device_block) { every_mode_and_team(Mode::DeviceBlock); }

int main(int argc, char** argv) {
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
