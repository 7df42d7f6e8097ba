// The NVSHMEM exports of libnvshmem_host.so.3 that no trampoline can give (gen_trampolines.py): their gshmem
// function is inline in the headers, or NVSHMEM's has no gshmem function of its own. Each is a real function here.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include <gshmem/nvshmem/nvshmem_host.h>  // gshmem.h, and the NVSHMEM version numbers gshmem's compat headers report

// The compat headers define the NVSHMEM names as macros over gshmem's, so each function here is declared under a
// name of its own and exported under NVSHMEM's by an asm label (a string: no macro reaches it).
#define GSHMEM_ABI(decl, name) extern "C" __attribute__((visibility("default"))) decl __asm__(name); decl

// NVSHMEM's host library starts the PEs without its device library (nvshmem4py, JAX, Mojo): gshmem needs none.
// Stamps the layout versions first, as NVSHMEM's init does (nvshmem4py hands over a struct whose versions it never
// set: measured, its two ranks' attr->version read 182980 and 170819).
GSHMEM_ABI(int abi_hostlib_init_attr(unsigned int flags, gshmemx_init_attr_t* attr), "nvshmemx_hostlib_init_attr") {
  return gshmemx_hostlib_init_attr(flags, attr);  // gshmem.h's inline: stamps, then starts
}
// The OpenSHMEM version NVSHMEM reports (NVSHMEM_MAJOR_VERSION / NVSHMEM_MINOR_VERSION).
GSHMEM_ABI(void abi_info_get_version(int* major, int* minor), "nvshmem_info_get_version") {
  gshmemi_nvshmem_info_get_version(major, minor);  // the compat header's inline
}
// The NVSHMEM API level gshmem matches (NVSHMEM_VENDOR_*_VERSION): what programs that check NVSHMEM's version
// before using it compare against (nvshmem4py does).
GSHMEM_ABI(void abi_vendor_get_version_info(int* major, int* minor, int* patch), "nvshmemx_vendor_get_version_info") {
  gshmemi_nvshmemx_vendor_get_version_info(major, minor, patch);  // the compat header's inline
}

// Reductions of half and bfloat16 (combined in float, rounded after each step, as gshmem's CUDA-header forms):
// nvshmem_<T>_<op>_reduce / _reducescatter, blocking and nvshmemx_..._on_stream. `call` in errors: NVSHMEM's name.
#define GSHMEM_ABI_REDUCE(T, TYPE, OP, OPCODE)                                                                     \
  GSHMEM_ABI(int abi_##T##_##OP##_reduce(gshmem_team_t team, void* dest, const void* source, size_t n),            \
             "nvshmem_" #T "_" #OP "_reduce") {                                                                    \
    return gshmemi_reduction(OPCODE, TYPE, 0, team, dest, source, n, 0, nullptr, "nvshmem_" #T "_" #OP "_reduce"); \
  }                                                                                                                \
  GSHMEM_ABI(int abi_##T##_##OP##_reducescatter(gshmem_team_t team, void* dest, const void* source, size_t n),     \
             "nvshmem_" #T "_" #OP "_reducescatter") {                                                             \
    return gshmemi_reduction(OPCODE, TYPE, 1, team, dest, source, n, 0, nullptr,                                   \
                             "nvshmem_" #T "_" #OP "_reducescatter");                                              \
  }                                                                                                                \
  GSHMEM_ABI(int abi_##T##_##OP##_reduce_on_stream(gshmem_team_t team, void* dest, const void* source, size_t n,   \
                                                   gshmem_stream_t stream),                                        \
             "nvshmemx_" #T "_" #OP "_reduce_on_stream") {                                                         \
    return gshmemi_reduction(OPCODE, TYPE, 0, team, dest, source, n, 1, stream,                                    \
                             "nvshmemx_" #T "_" #OP "_reduce_on_stream");                                          \
  }                                                                                                                \
  GSHMEM_ABI(int abi_##T##_##OP##_reducescatter_on_stream(gshmem_team_t team, void* dest, const void* source,      \
                                                          size_t n, gshmem_stream_t stream),                       \
             "nvshmemx_" #T "_" #OP "_reducescatter_on_stream") {                                                  \
    return gshmemi_reduction(OPCODE, TYPE, 1, team, dest, source, n, 1, stream,                                    \
                             "nvshmemx_" #T "_" #OP "_reducescatter_on_stream");                                   \
  }
#define GSHMEM_ABI_REDUCE_OPS(T, TYPE)                \
  GSHMEM_ABI_REDUCE(T, TYPE, max, GSHMEMI_REDUCE_MAX) \
  GSHMEM_ABI_REDUCE(T, TYPE, min, GSHMEMI_REDUCE_MIN) \
  GSHMEM_ABI_REDUCE(T, TYPE, sum, GSHMEMI_REDUCE_SUM) \
  GSHMEM_ABI_REDUCE(T, TYPE, prod, GSHMEMI_REDUCE_PROD)
GSHMEM_ABI_REDUCE_OPS(half, GSHMEMI_REDUCE_HALF)
GSHMEM_ABI_REDUCE_OPS(bfloat16, GSHMEMI_REDUCE_BFLOAT16)

// NVIDIA's device library (libnvshmem_device.a / .bc, linked into a program or into a library such as PyTorch's
// libtorch_nvshmem.so) starts and ends NVSHMEM through these three, handing over its own device state. gshmem keeps
// none of NVIDIA's device state, so such code cannot run on this library. They are here so that a library built that
// way still loads in a process where this one is libnvshmem_host.so.3 (Python imports resolve every symbol at load):
// init_status says NVIDIA's device library is not started, and starting it fails with a message that says why.
// Signatures: NVSHMEM 3.4.5's include/device_host/nvshmem_common.cuh.
namespace {
struct NvDeviceLibVersion {
  int major, minor, patch;
};
}  // namespace
GSHMEM_ABI(int abi_id_hostlib_init_attr(int requested, int* provided, unsigned int bootstrap_flags,
                                        gshmemx_init_attr_t* attr, NvDeviceLibVersion version, void* callback),
           "nvshmemid_hostlib_init_attr") {
  (void)requested, (void)provided, (void)bootstrap_flags, (void)attr, (void)callback;
  std::fprintf(stderr,
               "[gshmem] ERROR: nvshmemid_hostlib_init_attr: code built with NVIDIA NVSHMEM's device library %d.%d.%d "
               "(linked into this program or into a library it loaded, such as PyTorch's libtorch_nvshmem.so) tried "
               "to start NVSHMEM through gshmem's libnvshmem_host.so.3, which cannot run it (that code reads NVIDIA's "
               "device state). Fix: build that code against gshmem's headers (docs/migration.md), or take gshmem's "
               "nvshmem_abi folder off this program's LD_LIBRARY_PATH / LD_PRELOAD\n",
               version.major, version.minor, version.patch);
  return GSHMEM_ERROR_NOT_SUPPORTED;
}
GSHMEM_ABI(void abi_id_hostlib_finalize(void* device_ctx, void* transport_device_ctx), "nvshmemid_hostlib_finalize") {
  (void)device_ctx, (void)transport_device_ctx;  // its init never succeeds here: nothing to end
}
GSHMEM_ABI(int abi_id_init_status(void), "nvshmemid_init_status") { return GSHMEM_STATUS_NOT_INITIALIZED; }

// NVSHMEM's internal logger, which its transport and bootstrap plugins import from the host library (NVSHMEM
// 3.4.5's src/include/internal/host/debug.h: level NONE 0, VERSION 1, WARN 2, INFO 3, ABORT 4, TRACE 5; `flags` a
// subsystem mask). Here a line on stderr when `level` is at or below NVSHMEM_DEBUG's (VERSION, WARN, INFO, ABORT or
// TRACE; unset or anything else: none, as in NVSHMEM): "NVSHMEM <LEVEL> <file>:<line> <message>".
namespace {
const char* const kDebugLevels[] = {"NONE", "VERSION", "WARN", "INFO", "ABORT", "TRACE"};
int debug_threshold() {
  static const int level = [] {
    const char* v = std::getenv("NVSHMEM_DEBUG");
    for (int i = 1; v && i < 6; ++i)
      if (strcasecmp(v, kDebugLevels[i]) == 0) return i;
    return 0;
  }();
  return level;
}
}  // namespace
GSHMEM_ABI(void abi_debug_log(int level, unsigned long flags, const char* filefunc, int line, const char* fmt, ...),
           "nvshmem_debug_log") {
  (void)flags;
  if (level <= 0 || level > debug_threshold() || fmt == nullptr) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const size_t n = std::strlen(msg);
  std::fprintf(stderr, "NVSHMEM %s %s:%d %s%s", kDebugLevels[level > 5 ? 5 : level], filefunc ? filefunc : "?", line, msg,
               n && msg[n - 1] == '\n' ? "" : "\n");
}
