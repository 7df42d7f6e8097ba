// Host-side calls added after the first compat programs (runs on CPU PEs too): nvshmem_realloc (grow, shrink, NULL
// pointer, size 0) keeping contents, nvshmem_query_thread, nvshmemx_mc_ptr (NULL without NVLink multicast, which
// the compat runs switch off), nvshmemx_set_attr_mpi_comm_args and nvshmemx_init_init_attr_ver_only on an
// attribute struct (set up only, not used to init); nvshmemx_ask_smem from the host (NVSHMEM 3.7: the dynamic
// shared memory a kernel launch reserves for TMA), through NVSHMEM's header by its installed sub-path. Fresh random
// data, poisoned growth, exact comparison.
#include <host/nvshmemx_api.h>

#include "compat_util.h"

int main(int argc, char** argv) {
  compat::Options opt;
  opt.gpu = false;
  const int mype = compat::init(&argc, &argv, "host_ext", opt);
  const int npes = nvshmem_n_pes();
  const int right = (mype + 1) % npes, left = (mype + npes - 1) % npes;
  const uint64_t seed = compat::shared_seed();

  int level = -1;
  nvshmem_query_thread(&level);
  if (level < NVSHMEM_THREAD_SINGLE || level > NVSHMEM_THREAD_MULTIPLE)
    compat::fail("nvshmem_query_thread gave %d, not a thread level", level);
  if (nvshmemx_mc_ptr(NVSHMEM_TEAM_WORLD, nullptr) != nullptr)
    compat::fail("nvshmemx_mc_ptr is not NULL with NVLink multicast off");
  // Programs launch with RECOMMENDED bytes and keep their own data after BARRIERS_ONLY's; NVSHMEM's sizes for the
  // first two (64 and 32 KiB), since programs size their own staging from them.
  const int rec = nvshmemx_ask_smem(NVSHMEMX_SMEM_RECOMMENDED), least = nvshmemx_ask_smem(NVSHMEMX_SMEM_MINIMUM),
            bars = nvshmemx_ask_smem(NVSHMEMX_SMEM_BARRIERS_ONLY);
  if (rec != 65536 || least != 32768 || bars < 0 || bars >= least)
    compat::fail("nvshmemx_ask_smem gave RECOMMENDED %d, MINIMUM %d, BARRIERS_ONLY %d", rec, least, bars);

  // NVSHMEM 3.4.5's predefined team handles and slot numbers; SAME_GPU holds this PE, GPU_LEADERS holds it or
  // (a PE that is not the lowest of its GPU) answers -1
  static_assert(NVSHMEM_TEAM_WORLD_INDEX == 0 && NVSHMEM_TEAM_SHARED_INDEX == 1 && NVSHMEM_TEAM_NODE_INDEX == 2 &&
                    NVSHMEM_TEAM_SAME_MYPE_NODE_INDEX == 3 && NVSHMEMI_TEAM_SAME_GPU == 4 &&
                    NVSHMEM_TEAM_SAME_GPU_INDEX == 4 && NVSHMEMI_TEAM_GPU_LEADERS == 5 &&
                    NVSHMEM_TEAM_GPU_LEADERS_INDEX == 5 && NVSHMEM_TEAMS_MIN == 6,
                "NVSHMEM's predefined team numbers");
  const int gpu_rank = nvshmem_team_my_pe(NVSHMEMI_TEAM_SAME_GPU);
  if (gpu_rank < 0 || nvshmem_team_translate_pe(NVSHMEMI_TEAM_SAME_GPU, gpu_rank, NVSHMEM_TEAM_WORLD) != mype)
    compat::fail("NVSHMEMI_TEAM_SAME_GPU: my index %d does not translate to my PE %d", gpu_rank, mype);
  const int leader_rank = nvshmem_team_my_pe(NVSHMEMI_TEAM_GPU_LEADERS);
  if (leader_rank >= 0 ? nvshmem_team_translate_pe(NVSHMEMI_TEAM_GPU_LEADERS, leader_rank, NVSHMEM_TEAM_WORLD) != mype
                       : nvshmem_team_n_pes(NVSHMEMI_TEAM_GPU_LEADERS) != -1)
    compat::fail("NVSHMEMI_TEAM_GPU_LEADERS: index %d, %d PEs", leader_rank,
                 nvshmem_team_n_pes(NVSHMEMI_TEAM_GPU_LEADERS));

  nvshmemx_init_attr_t attr;
  std::memset(&attr, 0, sizeof attr);
  nvshmemx_init_init_attr_ver_only(attr);
  int dummy_comm = 0;
  if (nvshmemx_set_attr_mpi_comm_args(&dummy_comm, &attr) != 0 || attr.mpi_comm != &dummy_comm)
    compat::fail("nvshmemx_set_attr_mpi_comm_args did not set attr.mpi_comm");

  // realloc: every PE puts its data into the right PE's object, then the object grows, shrinks, grows again;
  // what was there must stay.
  int n = 33;
  int* p = static_cast<int*>(nvshmem_realloc(nullptr, n * sizeof(int)));  // NULL: a plain allocation
  if (!p) compat::fail("nvshmem_realloc(NULL, %d) returned NULL", n);
  for (int i = 0; i < n; ++i) nvshmem_int_p(&p[i], static_cast<int>(compat::mix(seed, mype, i)), right);
  nvshmem_quiet();
  nvshmem_barrier_all();
  int kept = n;
  for (int size : {1000, 7, 4096, 7}) {
    int* q = static_cast<int*>(nvshmem_realloc(p, size * sizeof(int)));
    if (!q) {
      compat::fail("nvshmem_realloc to %d ints returned NULL", size);
      break;
    }
    if (size < kept) kept = size;
    for (int i = 0; i < kept; ++i) {
      const int want = static_cast<int>(compat::mix(seed, left, i));
      const int got = nvshmem_int_g(&q[i], mype);
      if (got != want) {
        compat::fail("after realloc to %d ints: element %d is %d, expected %d", size, i, got, want);
        break;
      }
    }
    // a put into the new object's tail works on every PE (it is symmetric)
    if (size > kept) nvshmem_int_p(&q[size - 1], mype, right);
    nvshmem_quiet();
    nvshmem_barrier_all();
    if (size > kept && nvshmem_int_g(&q[size - 1], mype) != left)
      compat::fail("after realloc to %d ints: a put into the new tail did not arrive", size);
    nvshmem_barrier_all();
    p = q;
  }
  if (nvshmem_realloc(p, 0) != nullptr) compat::fail("nvshmem_realloc(p, 0) did not return NULL");
  return compat::finish();
}
