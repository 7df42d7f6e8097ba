// Host only (runs on CPU PEs too): what bindings and build scripts take from NVSHMEM's header tree beyond the API
// calls, used the way these programs use it (read for this test; none of their code copied):
//   - Triton-distributed's pynvshmem (shmem/nvshmem_bind/pynvshmem/src/pynvshmem.cc), a pybind module built by a
//     host compiler: it includes <bootstrap_device_host/nvshmem_uniqueid.h> for the unique-id type, makes one
//     binding a type with NVSHMEMI_REPT_FOR_STANDARD_RMA_TYPES over nvshmem_<T>_p (half and bfloat16 included, as
//     host functions), and passes teams as nvshmemx_team_t.
//   - NVSHMEM's version test and host shims in the wild: `#if NVSHMEM_VENDOR_VERSION >= ...`, the number being
//     major * 10000 + minor * 100 + patch; <non_abi/nvshmem_version.h> and <device_host_transport/
//     nvshmem_constants.h> included by path.
//   - NVSHMEM's perftests: per-type and per-(type, op) helpers generated with NVSHMEMI_REPT_FOR_WAIT_TYPES and
//     NVSHMEMI_REPT_TYPES_AND_OPS_FOR_REDUCE.
// Checks: the version macros agree with nvshmemx_vendor_get_version_info; a ring of nvshmem_<T>_p over every type
// of the standard RMA list and of the wait list (fresh random values each run, destination poisoned, read back
// with nvshmem_<T>_g, compared bit for bit); the reduction list has NVSHMEM 3.4.5's 138 (type, op) pairs, each a
// function of the library; half and bfloat16 sum and max reductions and their reduce-scatter on fresh small
// integers (exact in both formats), compared exactly with the reference.
#include <bootstrap_device_host/nvshmem_uniqueid.h>
#include <device_host_transport/nvshmem_constants.h>
#include <non_abi/nvshmem_version.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "compat_util.h"

#if !defined(NVSHMEM_VENDOR_VERSION) || NVSHMEM_VENDOR_VERSION < 30400
#error "NVSHMEM_VENDOR_VERSION is missing or below 3.4"
#endif

namespace {

int g_mype = 0, g_npes = 1;
uint64_t g_seed = 0;

// A value of T from random bits, exact in every format: integers take the bits, floating types a small integer
// (over 8 for float and double), half and bfloat16 an integer in [-256, 256].
template <typename T>
T make(uint64_t r) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(r);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(static_cast<int64_t>(r % 2001) - 1000) / static_cast<T>(8);
  } else {
    return T(static_cast<float>(static_cast<int>(r % 513) - 256));
  }
}
template <typename T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Each PE puts 8 values of T into its right neighbour's symmetric array with nvshmem_<T>_p, then reads its own with
// nvshmem_<T>_g and compares them with what the left neighbour sent. `stream` tells the types' values apart.
template <typename T, typename P, typename G>
void ring(const char* type, uint64_t stream, P put, G get) {
  constexpr int n = 8;
  const int right = (g_mype + 1) % g_npes, left = (g_mype + g_npes - 1) % g_npes;
  T* dst = static_cast<T*>(nvshmem_malloc(n * sizeof(T)));
  const T poison = make<T>(0x5A5A5A5A5A5A5A5Bull);
  for (int i = 0; i < n; ++i) put(&dst[i], poison, g_mype);
  nvshmem_quiet();
  nvshmem_barrier_all();
  for (int i = 0; i < n; ++i) put(&dst[i], make<T>(compat::mix(g_seed, stream * 64 + g_mype, i)), right);
  nvshmem_quiet();
  nvshmem_barrier_all();
  for (int i = 0; i < n; ++i) {
    const T want = make<T>(compat::mix(g_seed, stream * 64 + left, i));
    const T got = get(&dst[i], g_mype);
    if (!same_bits(got, want)) {
      compat::fail("nvshmem_%s_p / _g: element %d from PE %d differs", type, i, left);
      break;
    }
  }
  nvshmem_barrier_all();
  nvshmem_free(dst);
}

// half / bfloat16 sum and max reduce and sum reduce-scatter over fresh small integers: every partial sum and the
// maximum are exact in both formats (at most 4 PEs x 16 = 64 in magnitude), so the results compare exactly.
template <typename T, typename Sum, typename Max, typename SumScatter>
void float16_reductions(const char* type, uint64_t stream, Sum sum, Max max, SumScatter sum_scatter) {
  const size_t n = 13 * static_cast<size_t>(g_npes);  // reduce-scatter: 13 elements a PE
  T* src = static_cast<T*>(nvshmem_malloc(n * sizeof(T)));
  T* dst = static_cast<T*>(nvshmem_malloc(n * sizeof(T)));
  auto value = [&](int pe, size_t i) {
    return static_cast<float>(static_cast<int>(compat::mix(g_seed, stream * 64 + pe, i) % 33) - 16);
  };
  const T poison = T(-1000.0f);
  for (size_t i = 0; i < n; ++i) {
    const T v = T(value(g_mype, i));
    nvshmem_putmem(&src[i], &v, sizeof(T), g_mype);
    nvshmem_putmem(&dst[i], &poison, sizeof(T), g_mype);
  }
  nvshmem_quiet();
  nvshmem_barrier_all();
  for (int op = 0; op < 3; ++op) {
    const char* name = op == 0 ? "sum_reduce" : op == 1 ? "max_reduce" : "sum_reducescatter";
    for (size_t i = 0; i < n; ++i) nvshmem_putmem(&dst[i], &poison, sizeof(T), g_mype);
    nvshmem_quiet();
    nvshmem_barrier_all();
    const size_t count = op == 2 ? n / g_npes : n;
    const int rc = op == 0 ? sum(NVSHMEM_TEAM_WORLD, dst, src, n)
                   : op == 1 ? max(NVSHMEM_TEAM_WORLD, dst, src, n)
                             : sum_scatter(NVSHMEM_TEAM_WORLD, dst, src, count);
    if (rc != 0) compat::fail("nvshmem_%s_%s returned %d", type, name, rc);
    std::vector<T> got(n);
    nvshmem_getmem(got.data(), dst, n * sizeof(T), g_mype);
    for (size_t i = 0; i < n; ++i) {
      // reduce-scatter: this PE's block is elements [mype * count, (mype + 1) * count) of the full sum
      const size_t j = op == 2 ? g_mype * count + i : i;
      float want = op == 1 ? -1e9f : 0.0f;
      for (int pe = 0; pe < g_npes; ++pe) want = op == 1 ? std::max(want, value(pe, j)) : want + value(pe, j);
      const T expect = i < count ? T(want) : poison;
      if (!same_bits(got[i], expect)) {
        compat::fail("nvshmem_%s_%s: element %zu is %g, expected %g", type, name, i, static_cast<double>(float(got[i])),
                     static_cast<double>(float(expect)));
        break;
      }
    }
  }
  nvshmem_barrier_all();
  nvshmem_free(dst);
  nvshmem_free(src);
}

// The (type, op) pairs of NVSHMEM's reduction list, each the address of the library's function.
struct ReduceName {
  const char* type;
  const char* op;
  const void* fn;
};
#define HOST_HEADERS_REDUCE(TYPENAME, TYPE, OP) \
  ReduceName{#TYPENAME, #OP, reinterpret_cast<const void*>(&nvshmem_##TYPENAME##_##OP##_reduce)},
const ReduceName kReduceNames[] = {NVSHMEMI_REPT_TYPES_AND_OPS_FOR_REDUCE(HOST_HEADERS_REDUCE)};
#undef HOST_HEADERS_REDUCE

}  // namespace

int main(int argc, char** argv) {
  compat::Options opt;
  opt.gpu = false;
  g_mype = compat::init(&argc, &argv, "host_headers", opt);
  g_npes = nvshmem_n_pes();
  g_seed = compat::shared_seed();

  // version macros: one number, and the same three as the library reports
  int major = -1, minor = -1, patch = -1;
  nvshmemx_vendor_get_version_info(&major, &minor, &patch);
  if (NVSHMEM_VENDOR_VERSION != major * 10000 + minor * 100 + patch ||
      NVSHMEM_VENDOR_VERSION !=
          NVSHMEM_VENDOR_MAJOR_VERSION * 10000 + NVSHMEM_VENDOR_MINOR_VERSION * 100 + NVSHMEM_VENDOR_PATCH_VERSION)
    compat::fail("NVSHMEM_VENDOR_VERSION is %d, the library reports %d.%d.%d", NVSHMEM_VENDOR_VERSION, major, minor,
                 patch);
  // the unique-id types by their own header, as a binding declares them
  static_assert(sizeof(nvshmemx_uniqueid_t) == 128, "nvshmemx_uniqueid_t is 128 bytes in NVSHMEM 3.4.5");
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  nvshmemx_uniqueid_args_t id_args = NVSHMEMX_UNIQUEID_ARGS_INITIALIZER;
  if (id.version == 0 || id_args.version == 0) compat::fail("the unique-id initializers leave the version 0");
  // the team under its second name
  nvshmemx_team_t world = NVSHMEM_TEAM_WORLD;
  if (nvshmem_team_my_pe(world) != g_mype || nvshmem_team_n_pes(world) != g_npes)
    compat::fail("nvshmem_team_my_pe / n_pes through an nvshmemx_team_t disagree with my_pe / n_pes");

  // a binding a type: every standard RMA type, then every wait type, through the type-list macros
  uint64_t stream = 1;
#define HOST_HEADERS_RING(TYPENAME, TYPE) \
  ring<TYPE>(#TYPENAME, stream++, nvshmem_##TYPENAME##_p, nvshmem_##TYPENAME##_g);
  NVSHMEMI_REPT_FOR_STANDARD_RMA_TYPES(HOST_HEADERS_RING)
  const uint64_t rma_types = stream - 1;
  NVSHMEMI_REPT_FOR_WAIT_TYPES(HOST_HEADERS_RING)
  const uint64_t wait_types = stream - 1 - rma_types;
#undef HOST_HEADERS_RING
  if (rma_types != 25 || wait_types != 14)
    compat::fail("the type lists have %llu standard RMA and %llu wait types; NVSHMEM 3.4.5's have 25 and 14",
                 static_cast<unsigned long long>(rma_types), static_cast<unsigned long long>(wait_types));

  // the reduction list: 14 bitwise types x and/or/xor, 24 standard types x min/max and x sum/prod
  const size_t pairs = sizeof kReduceNames / sizeof kReduceNames[0];
  if (pairs != 138) compat::fail("NVSHMEMI_REPT_TYPES_AND_OPS_FOR_REDUCE gives %zu (type, op) pairs, not 138", pairs);
  // (each pair's function exists: the table above compiles only if it does)

  float16_reductions<half>("half", 100, nvshmem_half_sum_reduce, nvshmem_half_max_reduce,
                           nvshmem_half_sum_reducescatter);
  float16_reductions<__nv_bfloat16>("bfloat16", 101, nvshmem_bfloat16_sum_reduce, nvshmem_bfloat16_max_reduce,
                                    nvshmem_bfloat16_sum_reducescatter);
  return compat::finish();
}
