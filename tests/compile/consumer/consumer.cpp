// A program outside the gshmem tree: one PE, no launcher; allocates, puts to itself, reads back.
#include <gshmem/gshmem.hpp>

#include <cstdio>
#include <random>

int main() {
  gshmem::Context ctx;
  gshmem::Buffer<long> buf(ctx, 16);
  std::mt19937_64 rng{std::random_device{}()};
  long src[16], dst[16];
  for (auto& v : src) v = static_cast<long>(rng());
  for (auto& v : dst) v = -1;
  buf.put(src, 16, ctx.my_pe());
  ctx.barrier_all();
  buf.get(dst, 16, ctx.my_pe());
  for (int i = 0; i < 16; ++i)
    if (dst[i] != src[i]) {
      std::fprintf(stderr, "consumer: element %d is %ld, expected %ld\n", i, dst[i], src[i]);
      return 1;
    }
  std::printf("consumer: ok on %s PE %d of %d\n", ctx.on_gpu() ? "GPU" : "CPU", ctx.my_pe(), ctx.n_pes());
  return 0;
}
