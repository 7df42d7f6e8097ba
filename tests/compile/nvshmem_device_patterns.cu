// Compile check (no GPU needed, never launched): NVSHMEM device calls written the way public programs write them,
// built against gshmem's compat headers with plain nvcc (no -rdc, no device library). Each kernel names the program
// whose calling pattern it follows; the code is our own. Argument types on purpose match those programs (int
// literals for uint64_t signals, unsigned PEs, size_t counts, teams passed as kernel arguments, ...).
//
// torch's symm_mem defines NVSHMEM_HOSTLIB_ONLY for architectures below sm_70 before including <nvshmem.h>; the
// device API must stay usable where it is not defined (and the define itself must not break the headers).
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 700)
#define NVSHMEM_HOSTLIB_ONLY
#endif
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstddef>
#include <cstdint>

namespace {

// ppl-ai/pplx-kernels csrc/all_to_all/internode_dispatch.cu: a lane sets a remote count with signal_op (value is an
// unsigned + 1, PE unsigned), warps send tokens with putmem_signal_nbi_warp (size_t bytes, int literal signal),
// receivers wait with uint64_wait_until NE 0 then EQ a size_t count.
__global__ void pplx_dispatch(uint64_t* counts, uint64_t* recv, std::byte* out, const std::byte* in, size_t stride,
                              unsigned dst_rank, unsigned n) {
  if (threadIdx.x % 32 == 0) nvshmemx_signal_op(counts + blockIdx.x, n + 1, NVSHMEM_SIGNAL_SET, dst_rank);
  nvshmemx_putmem_signal_nbi_warp(out + stride * blockIdx.x, in, stride, &recv[blockIdx.x], 1, NVSHMEM_SIGNAL_ADD,
                                  dst_rank);
  nvshmem_uint64_wait_until(&counts[threadIdx.x], NVSHMEM_CMP_NE, 0);
  const size_t num_tokens = counts[threadIdx.x] - 1;
  nvshmem_uint64_wait_until(&recv[threadIdx.x], NVSHMEM_CMP_EQ, num_tokens);
}

// ppl-ai/pplx-kernels csrc/all_to_all/internode_combine.cu: block puts of a token back (nbi, then signal through
// signal_op after a fence), waiting with signal_wait_until.
__global__ void pplx_combine(std::byte* out, const std::byte* in, size_t bytes, uint64_t* flag, int pe) {
  nvshmemx_putmem_nbi_block(out, in, bytes, pe);
  if (threadIdx.x == 0) {
    nvshmem_fence();
    nvshmemx_signal_op(flag, 1, NVSHMEM_SIGNAL_ADD, pe);
    nvshmem_signal_wait_until(flag, NVSHMEM_CMP_GE, 1);
  }
}

// pytorch/pytorch torch/csrc/distributed/c10d/symm_mem/nvshmem_extension.cu: int64 p of split sizes, then
// nvshmemx_barrier_all_block; getmem_nbi_block of char* offsets (int64 byte counts) and nvshmem_quiet.
__global__ void torch_exchange_splits(int64_t* splits, const int64_t* offsets, int mype, int npes) {
  if (static_cast<int>(threadIdx.x) < npes) {
    nvshmem_int64_p(splits + mype, offsets[threadIdx.x], static_cast<int>(threadIdx.x));
  }
  nvshmemx_barrier_all_block();
}
__global__ void torch_all_to_all_v(void* send, void* recv, const int64_t* offs, size_t stride, int mype, int npes) {
  const int peer = (mype + static_cast<int>(blockIdx.x)) % npes;
  const auto size = offs[peer] * static_cast<int64_t>(stride);
  nvshmemx_getmem_nbi_block(static_cast<char*>(recv) + size, static_cast<char*>(send) + size, size, peer);
  nvshmem_quiet();
}

// pytorch/pytorch nvshmem_extension.cu (tile all-to-all, team kernels): a team passed by value to the kernel, its
// rank and size read in device code, translated to a global PE for the put, a team barrier by the block.
__global__ void torch_team_kernel(nvshmem_team_t team, float* dst, const float* src, size_t n) {
  const int me = nvshmem_team_my_pe(team);
  const int size = nvshmem_team_n_pes(team);
  const int peer = nvshmem_team_translate_pe(team, (me + 1) % size, NVSHMEM_TEAM_WORLD);
  nvshmemx_float_put_nbi_block(dst, src, n, peer);
  nvshmemx_barrier_block(team);
  nvshmemx_team_sync_block(team);
}

// pytorch/pytorch symm_mem (NVSHMEMSymmetricMemory / nvshmem_symm.cuh): peer pointers in device code, unicast through
// nvshmem_ptr and multicast through nvshmemx_mc_ptr (NULL: fall back), const source pointers.
__global__ void torch_ptrs(const float* buf, float* out, int pe) {
  const float* peer = static_cast<const float*>(nvshmem_ptr(buf, pe));
  void* mc = nvshmemx_mc_ptr(NVSHMEM_TEAM_WORLD, buf);
  if (peer != nullptr && mc == nullptr) out[threadIdx.x] = peer[threadIdx.x];
}

// deepseek-ai/DeepEP csrc/kernels/internode.cu / internode_ll.cu (non-IBGDA paths): warp nbi puts of int8 and bytes,
// fence, int atomic add to a remote counter, sync of a team the host split (kernel argument), sync_all by the block.
__global__ void deepep_internode(int8_t* dst, const int8_t* src, size_t n, int* counter, nvshmem_team_t rdma_team,
                                 int pe) {
  nvshmemx_int8_put_nbi_warp(dst, src, n, pe);
  nvshmemx_putmem_nbi_warp(dst + n, src, n, pe);
  if (threadIdx.x == 0) {
    nvshmem_fence();
    nvshmem_int_atomic_add(counter, 1, pe);
    nvshmem_sync(rdma_team);
    nvshmem_quiet();
  }
  nvshmemx_sync_all_block();
}

// deepseek-ai/DeepEP csrc/kernels/runtime.cu and internode_ll.cu: barrier of a block, fetch-add of a 64-bit counter,
// int p of a flag, wait on an int and on a uint64.
__global__ void deepep_runtime(int* flag, long long* cnt, uint64_t* sig, int pe) {
  nvshmemx_barrier_all_block();
  if (threadIdx.x == 0) {
    const long long old = nvshmem_longlong_atomic_fetch_add(cnt, 1LL, pe);
    nvshmem_int_p(flag, static_cast<int>(old), pe);
    nvshmem_int_wait_until(flag, NVSHMEM_CMP_EQ, 1);
    nvshmem_uint64_wait_until(sig, NVSHMEM_CMP_GE, 1ULL);
  }
}

// NVIDIA NVSHMEM perftest/device/pt-to-pt/shmem_put_bw.cu, shmem_p_latency.cu, shmem_signal_ping_pong_latency.cu:
// p/g in loops, putmem_signal (blocking) with a uint64 counter value, signal_fetch, int test, quiet.
__global__ void perftest_patterns(int* data, double* ddata, uint64_t* sig, int peer, int iter) {
  for (int i = 0; i < iter; i++) {
    nvshmem_int_p(data, i, peer);
    ddata[i] = nvshmem_double_g(ddata + i, peer);
    nvshmem_putmem_signal(data, data, sizeof(int), sig, static_cast<uint64_t>(i + 1), NVSHMEM_SIGNAL_SET, peer);
    nvshmem_signal_wait_until(sig, NVSHMEM_CMP_EQ, static_cast<uint64_t>(i + 1));
  }
  if (nvshmem_signal_fetch(sig) == 0 && nvshmem_int_test(data, NVSHMEM_CMP_EQ, 0)) nvshmem_quiet();
}

// NVIDIA NVSHMEM examples (on-stream / put-block / dev-guide ring): my_pe / n_pes in device code, barrier_all by one
// thread, block and warp put with element counts as int, uint64 wait_until_all with a NULL status.
__global__ void nvshmem_examples(float* dst, const float* src, int n, uint64_t* flags) {
  const int mype = nvshmem_my_pe();
  const int npes = nvshmem_n_pes();
  const int peer = (mype + 1) % npes;
  nvshmemx_float_put_block(dst, src, n, peer);
  nvshmemx_float_put_warp(dst, src, n, peer);
  if (threadIdx.x == 0) {
    nvshmem_barrier_all();
    nvshmem_uint64_wait_until_all(flags, static_cast<size_t>(npes), nullptr, NVSHMEM_CMP_EQ, 1);
    const int status[4] = {0, 0, 0, 0};
    (void)nvshmem_uint64_wait_until_any(flags, 4, status, NVSHMEM_CMP_EQ, 1);
  }
}

// NVSHMEM 3.4.5 nvshmem_defines.h declares nvshmemx_vendor_get_version_info (and nvshmem_info_get_version) for
// device code too; programs check the library version inside kernels and with the version macros.
__global__ void versions(int* out) {
  int major = 0, minor = 0, patch = 0;
  nvshmemx_vendor_get_version_info(&major, &minor, &patch);
  int oshmem_major = 0, oshmem_minor = 0;
  nvshmem_info_get_version(&oshmem_major, &oshmem_minor);
  out[1] = oshmem_major * 100 + oshmem_minor;
#if NVSHMEM_VENDOR_MAJOR_VERSION >= 3
  out[0] = major * 10000 + minor * 100 + patch;
#endif
}

// Signal helpers of MoE codes (e.g. the ones pplx-kernels and aristos write): a signal_op wrapper taking the signal
// as a plain int, sig_op from a variable, with NVSHMEM_SIGNAL_SET / ADD as int constants in a switch.
__device__ void signal_to(uint64_t* sig, int value, int op, int pe) {
  switch (op) {
    case NVSHMEM_SIGNAL_SET:
    case NVSHMEM_SIGNAL_ADD:
      nvshmemx_signal_op(sig, value, op, pe);
      break;
    default:
      break;
  }
}
__global__ void signal_wrappers(uint64_t* sig, int pe) { signal_to(sig, 1, NVSHMEM_SIGNAL_SET, pe); }

}  // namespace

void gshmem_compile_check_nvshmem_device_patterns() {
  (void)&pplx_dispatch;
  (void)&pplx_combine;
  (void)&torch_exchange_splits;
  (void)&torch_all_to_all_v;
  (void)&torch_team_kernel;
  (void)&torch_ptrs;
  (void)&deepep_internode;
  (void)&deepep_runtime;
  (void)&perftest_patterns;
  (void)&nvshmem_examples;
  (void)&versions;
  (void)&signal_wrappers;
}
