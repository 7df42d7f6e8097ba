// Block-scope RMA: every CTA moves its own chunk to the next PE with nvshmemx_putmem_block,
// nvshmemx_putmem_nbi_block (+ nvshmem_quiet) and nvshmemx_int_put_block, and reads the previous PE's chunk back
// with nvshmemx_getmem_block. Sizes include odd byte counts and offsets; results are compared exactly.
#include "compat_util.h"

constexpr int kBlocks = 8;

__global__ void put_blocks(char* dst, const char* src, size_t chunk, int peer, int mode) {
  const size_t off = blockIdx.x * chunk;
  if (mode == 0) nvshmemx_putmem_block(dst + off, src + off, chunk, peer);
  else if (mode == 1) {
    nvshmemx_putmem_nbi_block(dst + off, src + off, chunk, peer);
    nvshmem_quiet();
  } else {
    nvshmemx_int_put_block(reinterpret_cast<int*>(dst) + off / sizeof(int),
                           reinterpret_cast<const int*>(src) + off / sizeof(int), chunk / sizeof(int), peer);
  }
}

__global__ void get_blocks(char* dst, const char* src, size_t chunk, int peer) {
  const size_t off = blockIdx.x * chunk;
  nvshmemx_getmem_block(dst + off, src + off, chunk, peer);
}

int main(int argc, char** argv) {
  const int mype = compat::init(&argc, &argv, "block_put");
  const int npes = nvshmem_n_pes();
  const int right = (mype + 1) % npes, left = (mype + npes - 1) % npes;
  const uint64_t seed = compat::shared_seed();
  const size_t max_chunk = 1 << 18;
  char* src = static_cast<char*>(nvshmem_malloc(kBlocks * max_chunk + 64));
  char* dst = static_cast<char*>(nvshmem_malloc(kBlocks * max_chunk + 64));
  char* got = nullptr;
  COMPAT_CUDA(cudaMalloc(&got, kBlocks * max_chunk + 64));
  char* host = static_cast<char*>(std::malloc(kBlocks * max_chunk + 64));
  char* back = static_cast<char*>(std::malloc(kBlocks * max_chunk + 64));

  int round = 0;
  for (size_t chunk : {size_t(4), size_t(1000), size_t(4096), size_t(65536 + 12), max_chunk}) {
    for (int mode = 0; mode < 3; ++mode, ++round) {
      const size_t total = kBlocks * chunk;
      for (size_t i = 0; i < total; ++i) host[i] = static_cast<char>(compat::mix(seed, mype * 100 + round, i));
      COMPAT_CUDA(cudaMemcpy(src, host, total, cudaMemcpyHostToDevice));
      COMPAT_CUDA(cudaMemset(dst, 0xC3, total + 64));  // poison, with a guard tail
      COMPAT_CUDA(cudaDeviceSynchronize());
      nvshmem_barrier_all();
      put_blocks<<<kBlocks, 256>>>(dst, src, chunk, right, mode);
      COMPAT_CUDA(cudaGetLastError());
      COMPAT_CUDA(cudaDeviceSynchronize());
      nvshmem_barrier_all();
      COMPAT_CUDA(cudaMemcpy(back, dst, total + 64, cudaMemcpyDeviceToHost));
      size_t bad = 0;
      for (size_t i = 0; i < total; ++i)
        if (back[i] != static_cast<char>(compat::mix(seed, left * 100 + round, i)) && bad++ < 3)
          compat::fail("mode %d chunk %zu: byte %zu differs from PE %d's", mode, chunk, i, left);
      for (size_t i = total; i < total + 64; ++i)
        if (static_cast<unsigned char>(back[i]) != 0xC3 && bad++ < 3)
          compat::fail("mode %d chunk %zu: byte %zu past the end was written", mode, chunk, i);
      // and read it back from the right neighbour with getmem_block: what we sent
      COMPAT_CUDA(cudaMemset(got, 0x3C, total));
      get_blocks<<<kBlocks, 256>>>(got, dst, chunk, right);
      COMPAT_CUDA(cudaGetLastError());
      COMPAT_CUDA(cudaDeviceSynchronize());
      COMPAT_CUDA(cudaMemcpy(back, got, total, cudaMemcpyDeviceToHost));
      if (std::memcmp(back, host, total) != 0) compat::fail("mode %d chunk %zu: getmem_block from PE %d differs",
                                                            mode, chunk, right);
      nvshmem_barrier_all();
    }
  }
  std::free(back);
  std::free(host);
  COMPAT_CUDA(cudaFree(got));
  nvshmem_free(dst);
  nvshmem_free(src);
  return compat::finish();
}
