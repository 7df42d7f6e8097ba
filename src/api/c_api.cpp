// The C API (include/gshmem/gshmem.h): each call forwards to gshmem::host inside a guard. Typed names are
// generated here from the type lists in gshmem.h, nowhere else.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "api/guard.hpp"
#include "gshmem/gshmem.h"
#include "gshmem/gshmem.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime.hpp"

using namespace gshmem;
using gshmem::api::fatal_on_error;
using gshmem::api::null_on_out_of_memory;
using gshmem::api::status_on_error;

namespace {
template <typename T>
std::uint64_t bits(T v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <typename T>
T from_bits(std::uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}
template <typename T>
constexpr host::Wait wait_kind() {
  if constexpr (sizeof(T) == 2) return std::is_signed_v<T> ? host::Wait::I16 : host::Wait::U16;
  else if constexpr (sizeof(T) == 4) return std::is_signed_v<T> ? host::Wait::I32 : host::Wait::U32;
  else return std::is_signed_v<T> ? host::Wait::I64 : host::Wait::U64;
}
template <typename T>
T amo(const char* call, T* dest, host::Amo op, T value, T cond, int pe) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  return fatal_on_error(call, [&] {
    return from_bits<T>(host::atomic(dest, sizeof(T), op, bits(value), bits(cond), pe, call));
  });
}
}  // namespace

extern "C" {

const char* gshmemx_last_error(void) { return gshmem::api::last_error(); }
const char* gshmemx_status_string(int status) { return gshmem::status_name(status); }

namespace {
// Init failures are always printed: code written for NVSHMEM (whose init returns nothing) never reads the status.
int report_init(const char* call, int status) {
  if (status != GSHMEM_SUCCESS)
    gshmem::log::write(gshmem::log::Level::Error,
                       fmt::format("{} failed ({}): {}", call, gshmem::status_name(status), gshmem::api::last_error()));
  return status;
}
}  // namespace

int gshmemi_init(int major, int minor, int patch) {
  return report_init("gshmem_init",
                     status_on_error("gshmem_init", [&] { host::init(0, nullptr, major, minor, patch); }));
}
void gshmemi_nvshmem_init(void) {
  if (gshmemi_init(GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH) != GSHMEM_SUCCESS) {
    std::fprintf(stderr, "nvshmem_init (gshmem): initialisation failed (see the message above); exiting, as NVSHMEM "
                         "does\n");
    std::exit(EXIT_FAILURE);
  }
}
int gshmemxi_init_attr(unsigned int flags, gshmemx_init_attr_t* attr, int major, int minor, int patch) {
  return report_init("gshmemx_init_attr",
                     status_on_error("gshmemx_init_attr", [&] { host::init(flags, attr, major, minor, patch); }));
}
int gshmemi_init_thread(int requested, int* provided, int major, int minor, int patch) {
  return report_init("gshmem_init_thread", status_on_error("gshmem_init_thread", [&] {
                       host::init_thread(requested, provided, major, minor, patch);
                     }));
}
void gshmem_query_thread(int* provided) {
  fatal_on_error("gshmem_query_thread", [&] {
    if (!provided)
      fail(GSHMEM_ERROR_INVALID_VALUE, "gshmem_query_thread: provided is NULL. Fix: pass the address of an int");
    *provided = host::thread_level();
  });
}
int gshmemxi_hostlib_init_attr(unsigned int flags, gshmemx_init_attr_t* attr, int major, int minor, int patch) {
  return report_init("gshmemx_hostlib_init_attr", status_on_error("gshmemx_hostlib_init_attr", [&] {
                       host::init(flags, attr, major, minor, patch);
                     }));
}
void gshmemx_hostlib_finalize(void) {
  fatal_on_error("gshmemx_hostlib_finalize", [] { host::finalize(); });
}
int gshmemx_set_attr_mpi_comm_args(void* mpi_comm, gshmemx_init_attr_t* attr) {
  return status_on_error("gshmemx_set_attr_mpi_comm_args", [&] {
    if (!attr || !mpi_comm)
      fail(GSHMEM_ERROR_INVALID_VALUE, "gshmemx_set_attr_mpi_comm_args: mpi_comm and attr must not be NULL. Fix: "
           "pass the address of an MPI_Comm and of a gshmemx_init_attr_t");
    attr->mpi_comm = mpi_comm;
  });
}
int gshmemx_get_uniqueid(gshmemx_uniqueid_t* uid) {
  return status_on_error("gshmemx_get_uniqueid", [&] { host::get_unique_id(uid); });
}
int gshmemx_set_attr_uniqueid_args(int myrank, int nranks, const gshmemx_uniqueid_t* uid,
                                   gshmemx_init_attr_t* attr) {
  return status_on_error("gshmemx_set_attr_uniqueid_args", [&] {
    if (!attr || !uid)
      fail(GSHMEM_ERROR_INVALID_VALUE, "gshmemx_set_attr_uniqueid_args: uid and attr must not be NULL");
    attr->args.uid_args.myrank = myrank;
    attr->args.uid_args.nranks = nranks;
    attr->args.uid_args.id = const_cast<gshmemx_uniqueid_t*>(uid);  // NVSHMEM's member is not const; only read
  });
}
void gshmem_finalize(void) { fatal_on_error("gshmem_finalize", [] { host::finalize(); }); }
int gshmemx_init_status(void) {
  return Runtime::current() ? GSHMEM_STATUS_IS_INITIALIZED : GSHMEM_STATUS_NOT_INITIALIZED;
}
int gshmem_my_pe(void) { return fatal_on_error("gshmem_my_pe", [] { return host::my_pe(); }); }
int gshmem_n_pes(void) { return fatal_on_error("gshmem_n_pes", [] { return host::n_pes(); }); }
void gshmem_info_get_version(int* major, int* minor) {
  if (major) *major = GSHMEM_VERSION_MAJOR;
  if (minor) *minor = GSHMEM_VERSION_MINOR;
}
void gshmem_info_get_name(char* name) {
  if (name) std::strcpy(name, "gshmem " GSHMEM_VERSION_STRING);
}
void gshmem_global_exit(int status) {
  std::string why = "gshmem_global_exit(" + std::to_string(status) + ") called";
  if (Runtime* rt = Runtime::current())
    if (rt->boot) rt->boot->abort(why);
  std::fflush(nullptr);
  std::_Exit(status);
}
int gshmemx_query_device(int* ordinal, int* count) {
  return status_on_error("gshmemx_query_device", [&] { host::query_device(ordinal, count); });
}

// ---- heap ----
void* gshmem_malloc(size_t size) {
  return null_on_out_of_memory("gshmem_malloc", [&] { return host::malloc(size, 0, false, "gshmem_malloc"); });
}
void* gshmem_calloc(size_t count, size_t size) {
  return null_on_out_of_memory("gshmem_calloc", [&] {
    // C's calloc and OpenSHMEM's shmem_calloc give NULL when count * size does not fit a size_t: no heap holds it
    if (size && count > SIZE_MAX / size)
      fail(GSHMEM_ERROR_OUT_OF_MEMORY, "gshmem_calloc: count={} * size={} does not fit a size_t; no heap can hold it. Fix: check count "
           "and size (a negative count converted to size_t looks like this)", count, size);
    return host::malloc(count * size, 0, true, "gshmem_calloc");
  });
}
void* gshmem_align(size_t alignment, size_t size) {
  return null_on_out_of_memory("gshmem_align", [&] { return host::malloc(size, alignment, false, "gshmem_align"); });
}
void gshmem_free(void* ptr) { fatal_on_error("gshmem_free", [&] { host::free(ptr); }); }
void* gshmem_realloc(void* ptr, size_t size) {
  return null_on_out_of_memory("gshmem_realloc", [&] { return host::realloc(ptr, size); });
}
int gshmemx_buffer_register(void* addr, size_t length) {
  return status_on_error("gshmemx_buffer_register", [&] { host::buffer_register(addr, length); });
}
int gshmemx_buffer_unregister(void* addr) {
  return status_on_error("gshmemx_buffer_unregister", [&] { host::buffer_unregister(addr); });
}
void* gshmemx_buffer_register_symmetric(void* buf_ptr, size_t size, int flags) {
  void* out = nullptr;
  status_on_error("gshmemx_buffer_register_symmetric",
                  [&] { out = host::buffer_register_symmetric(buf_ptr, size, flags); });
  return out;
}
int gshmemx_buffer_unregister_symmetric(void* mmap_ptr, size_t size) {
  return status_on_error("gshmemx_buffer_unregister_symmetric",
                         [&] { host::buffer_unregister_symmetric(mmap_ptr, size); });
}
void gshmemx_buffer_unregister_all(void) {
  fatal_on_error("gshmemx_buffer_unregister_all", [] {
    Runtime::get("gshmemx_buffer_unregister_all");
    host::buffer_unregister_all();
  });
}
void* gshmemx_mc_ptr(gshmem_team_t team, const void* ptr) {
  return fatal_on_error("gshmemx_mc_ptr", [&]() -> void* {
    Runtime::get("gshmemx_mc_ptr");
    (void)team;
    (void)ptr;
    return nullptr;  // no NVLink multicast in gshmem: callers use unicast (docs/migration.md)
  });
}
void* gshmem_ptr(const void* dest, int pe) {
  return fatal_on_error("gshmem_ptr", [&] { return host::ptr(dest, pe); });
}
int gshmemx_heap_usage(gshmemx_heap_usage_t* usage) {
  return status_on_error("gshmemx_heap_usage", [&] {
    if (!usage) fail(GSHMEM_ERROR_INVALID_VALUE, "gshmemx_heap_usage: usage is NULL");
    *usage = host::heap_usage();
  });
}

// ---- teams ----
int gshmem_team_my_pe(gshmem_team_t team) {
  return fatal_on_error("gshmem_team_my_pe", [&] { return host::team_my_pe(team); });
}
int gshmem_team_n_pes(gshmem_team_t team) {
  return fatal_on_error("gshmem_team_n_pes", [&] { return host::team_n_pes(team); });
}
int gshmem_team_translate_pe(gshmem_team_t src_team, int src_pe, gshmem_team_t dest_team) {
  return fatal_on_error("gshmem_team_translate_pe",
                        [&] { return host::team_translate_pe(src_team, src_pe, dest_team); });
}
int gshmem_team_split_strided(gshmem_team_t parent, int start, int stride, int size, const gshmem_team_config_t*,
                              long, gshmem_team_t* new_team) {
  // A NULL new_team still takes part in the split, so every member reports the same error instead of waiting.
  return status_on_error("gshmem_team_split_strided", [&] {
    Runtime::get("gshmem_team_split_strided").teams->split_strided(parent, start, stride, size, new_team);
  });
}
int gshmem_team_split_2d(gshmem_team_t parent, int xrange, const gshmem_team_config_t*, long, gshmem_team_t* xteam,
                         const gshmem_team_config_t*, long, gshmem_team_t* yteam) {
  return status_on_error("gshmem_team_split_2d", [&] { host::team_split_2d(parent, xrange, xteam, yteam); });
}
int gshmemx_team_get_uniqueid(gshmemx_team_uniqueid_t* uniqueid) {
  return status_on_error("gshmemx_team_get_uniqueid", [&] {
    if (!uniqueid)
      fail(GSHMEM_ERROR_INVALID_VALUE, "gshmemx_team_get_uniqueid: uniqueid is NULL. Fix: pass the address of a "
           "gshmemx_team_uniqueid_t");
    *uniqueid = host::team_uniqueid();
  });
}
int gshmemx_team_init(gshmem_team_t* team, gshmem_team_config_t* config, long config_mask, int npes,
                      int pe_idx_in_team) {
  const char* call = "gshmemx_team_init";
  return status_on_error(call, [&] {
    if (team) *team = GSHMEM_TEAM_INVALID;
    if (!config)
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: config is NULL: the team's members find each other by the unique ID "
           "in config->uniqueid. Fix: pass a config whose uniqueid one member got from gshmemx_team_get_uniqueid "
           "and sent to the others", call);
    // The unique ID is read whatever config_mask says: programs pass 0 with it set (nvshmem4py users' code).
    (void)config_mask;
    Runtime::get(call).teams->init_team(config->uniqueid, npes, pe_idx_in_team, team);
  });
}
void gshmem_team_destroy(gshmem_team_t team) {
  fatal_on_error("gshmem_team_destroy", [&] { host::team_destroy(team); });
}
void gshmem_team_get_config(gshmem_team_t team, gshmem_team_config_t* config) {
  fatal_on_error("gshmem_team_get_config", [&] {
    if (host::team_n_pes(team) < 0) {
      // A predefined team that is none on this PE (GSHMEMX_TEAM_GPU_LEADERS on a PE that is not a leader): say why
      if (team >= 0 && team < GSHMEM_TEAMS_MIN)
        Runtime::get("gshmem_team_get_config").teams->get(team, "gshmem_team_get_config");
      fail(GSHMEM_ERROR_INVALID_VALUE, "gshmem_team_get_config: team {} is not a live team. Fix: pass a team "
           "handle a split returned on this PE, or a predefined team", team);
    }
    if (!config)
      fail(GSHMEM_ERROR_INVALID_VALUE, "gshmem_team_get_config: config is NULL. Fix: pass the address of a "
           "gshmem_team_config_t");
    *config = gshmem_team_config_t GSHMEM_TEAM_CONFIG_INITIALIZER;
    config->num_contexts = 0;  // gshmem has no communication contexts
  });
}

// ---- ordering ----
void gshmem_quiet(void) { fatal_on_error("gshmem_quiet", [] { host::quiet(); }); }
void gshmem_fence(void) { fatal_on_error("gshmem_fence", [] { host::fence(); }); }
void gshmem_barrier_all(void) {
  fatal_on_error("gshmem_barrier_all", [] { host::barrier(GSHMEM_TEAM_WORLD, true, "gshmem_barrier_all"); });
}
void gshmem_sync_all(void) {
  fatal_on_error("gshmem_sync_all", [] { host::barrier(GSHMEM_TEAM_WORLD, false, "gshmem_sync_all"); });
}
int gshmem_barrier(gshmem_team_t team) {
  return status_on_error("gshmem_barrier", [&] { host::barrier(team, true, "gshmem_barrier"); });
}
int gshmem_team_sync(gshmem_team_t team) {
  return status_on_error("gshmem_team_sync", [&] { host::barrier(team, false, "gshmem_team_sync"); });
}

// ---- RMA ----
void gshmem_putmem(void* dest, const void* source, size_t bytes, int pe) {
  fatal_on_error("gshmem_putmem", [&] { host::putmem(dest, source, bytes, pe, false, "gshmem_putmem"); });
}
void gshmem_getmem(void* dest, const void* source, size_t bytes, int pe) {
  fatal_on_error("gshmem_getmem", [&] { host::getmem(dest, source, bytes, pe, false, "gshmem_getmem"); });
}
void gshmem_putmem_nbi(void* dest, const void* source, size_t bytes, int pe) {
  fatal_on_error("gshmem_putmem_nbi", [&] { host::putmem(dest, source, bytes, pe, true, "gshmem_putmem_nbi"); });
}
void gshmem_getmem_nbi(void* dest, const void* source, size_t bytes, int pe) {
  fatal_on_error("gshmem_getmem_nbi", [&] { host::getmem(dest, source, bytes, pe, true, "gshmem_getmem_nbi"); });
}

#define GSHMEMI_DEF_SIZED(BITS)                                                                                \
  void gshmem_put##BITS(void* dest, const void* source, size_t nelems, int pe) {                               \
    fatal_on_error("gshmem_put" #BITS,                                                                         \
                   [&] { host::putmem(dest, source, nelems * (BITS / 8), pe, false, "gshmem_put" #BITS); });   \
  }                                                                                                            \
  void gshmem_get##BITS(void* dest, const void* source, size_t nelems, int pe) {                               \
    fatal_on_error("gshmem_get" #BITS,                                                                         \
                   [&] { host::getmem(dest, source, nelems * (BITS / 8), pe, false, "gshmem_get" #BITS); });   \
  }                                                                                                            \
  void gshmem_put##BITS##_nbi(void* dest, const void* source, size_t nelems, int pe) {                         \
    fatal_on_error("gshmem_put" #BITS "_nbi", [&] {                                                            \
      host::putmem(dest, source, nelems * (BITS / 8), pe, true, "gshmem_put" #BITS "_nbi");                    \
    });                                                                                                        \
  }                                                                                                            \
  void gshmem_get##BITS##_nbi(void* dest, const void* source, size_t nelems, int pe) {                         \
    fatal_on_error("gshmem_get" #BITS "_nbi", [&] {                                                            \
      host::getmem(dest, source, nelems * (BITS / 8), pe, true, "gshmem_get" #BITS "_nbi");                    \
    });                                                                                                        \
  }                                                                                                            \
  void gshmem_iput##BITS(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) { \
    fatal_on_error("gshmem_iput" #BITS,                                                                        \
                   [&] { host::iput(dest, source, dst, sst, BITS / 8, nelems, pe, "gshmem_iput" #BITS); });    \
  }                                                                                                            \
  void gshmem_iget##BITS(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) { \
    fatal_on_error("gshmem_iget" #BITS,                                                                        \
                   [&] { host::iget(dest, source, dst, sst, BITS / 8, nelems, pe, "gshmem_iget" #BITS); });    \
  }
GSHMEMI_DEF_SIZED(8)
GSHMEMI_DEF_SIZED(16)
GSHMEMI_DEF_SIZED(32)
GSHMEMI_DEF_SIZED(64)
GSHMEMI_DEF_SIZED(128)

#define GSHMEMI_DEF_RMA(T, N)                                                                                  \
  void gshmem_##N##_put(T* dest, const T* source, size_t nelems, int pe) {                                     \
    fatal_on_error("gshmem_" #N "_put",                                                                        \
                   [&] { host::putmem(dest, source, nelems * sizeof(T), pe, false, "gshmem_" #N "_put"); });   \
  }                                                                                                            \
  void gshmem_##N##_get(T* dest, const T* source, size_t nelems, int pe) {                                     \
    fatal_on_error("gshmem_" #N "_get",                                                                        \
                   [&] { host::getmem(dest, source, nelems * sizeof(T), pe, false, "gshmem_" #N "_get"); });   \
  }                                                                                                            \
  void gshmem_##N##_put_nbi(T* dest, const T* source, size_t nelems, int pe) {                                 \
    fatal_on_error("gshmem_" #N "_put_nbi", [&] {                                                              \
      host::putmem(dest, source, nelems * sizeof(T), pe, true, "gshmem_" #N "_put_nbi");                       \
    });                                                                                                        \
  }                                                                                                            \
  void gshmem_##N##_get_nbi(T* dest, const T* source, size_t nelems, int pe) {                                 \
    fatal_on_error("gshmem_" #N "_get_nbi", [&] {                                                              \
      host::getmem(dest, source, nelems * sizeof(T), pe, true, "gshmem_" #N "_get_nbi");                       \
    });                                                                                                        \
  }                                                                                                            \
  void gshmem_##N##_p(T* dest, T value, int pe) {                                                              \
    fatal_on_error("gshmem_" #N "_p", [&] { host::putmem(dest, &value, sizeof(T), pe, false, "gshmem_" #N "_p"); }); \
  }                                                                                                            \
  T gshmem_##N##_g(const T* source, int pe) {                                                                  \
    return fatal_on_error("gshmem_" #N "_g", [&] {                                                             \
      T v;                                                                                                     \
      host::g(&v, source, sizeof(T), pe, "gshmem_" #N "_g");                                                   \
      return v;                                                                                                \
    });                                                                                                        \
  }                                                                                                            \
  void gshmem_##N##_iput(T* dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {      \
    fatal_on_error("gshmem_" #N "_iput",                                                                       \
                   [&] { host::iput(dest, source, dst, sst, sizeof(T), nelems, pe, "gshmem_" #N "_iput"); });  \
  }                                                                                                            \
  void gshmem_##N##_iget(T* dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) {      \
    fatal_on_error("gshmem_" #N "_iget",                                                                       \
                   [&] { host::iget(dest, source, dst, sst, sizeof(T), nelems, pe, "gshmem_" #N "_iget"); });  \
  }                                                                                                            \
  void gshmem_##N##_put_signal(T* dest, const T* source, size_t nelems, uint64_t* sig_addr, uint64_t signal,   \
                               int sig_op, int pe) {                                                           \
    fatal_on_error("gshmem_" #N "_put_signal", [&] {                                                           \
      host::putmem_signal(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, false,               \
                          "gshmem_" #N "_put_signal");                                                         \
    });                                                                                                        \
  }                                                                                                            \
  void gshmem_##N##_put_signal_nbi(T* dest, const T* source, size_t nelems, uint64_t* sig_addr,                \
                                   uint64_t signal, int sig_op, int pe) {                                      \
    fatal_on_error("gshmem_" #N "_put_signal_nbi", [&] {                                                       \
      host::putmem_signal(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, true,                \
                          "gshmem_" #N "_put_signal_nbi");                                                     \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_##N##_put_on_stream(T* dest, const T* source, size_t nelems, int pe, gshmem_stream_t stream) {  \
    fatal_on_error("gshmemx_" #N "_put_on_stream", [&] {                                                       \
      host::putmem_on_stream(dest, source, nelems * sizeof(T), pe, stream, "gshmemx_" #N "_put_on_stream");    \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_##N##_get_on_stream(T* dest, const T* source, size_t nelems, int pe, gshmem_stream_t stream) {  \
    fatal_on_error("gshmemx_" #N "_get_on_stream", [&] {                                                       \
      host::getmem_on_stream(dest, source, nelems * sizeof(T), pe, stream, "gshmemx_" #N "_get_on_stream");    \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_##N##_p_on_stream(T* dest, T value, int pe, gshmem_stream_t stream) {                          \
    fatal_on_error("gshmemx_" #N "_p_on_stream", [&] {                                                         \
      host::p_on_stream(dest, bits(value), sizeof(T), pe, stream, "gshmemx_" #N "_p_on_stream");               \
    });                                                                                                        \
  }                                                                                                            \
  void gshmemx_##N##_put_signal_on_stream(T* dest, const T* source, size_t nelems, uint64_t* sig_addr,         \
                                          uint64_t signal, int sig_op, int pe, gshmem_stream_t stream) {       \
    fatal_on_error("gshmemx_" #N "_put_signal_on_stream", [&] {                                                \
      host::putmem_signal_on_stream(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, stream,    \
                                    "gshmemx_" #N "_put_signal_on_stream");                                    \
    });                                                                                                        \
  }
GSHMEM_RMA_TYPES(GSHMEMI_DEF_RMA)

// ---- atomics ----
#define GSHMEMI_DEF_AMO_STANDARD(T, N)                                                                         \
  T gshmem_##N##_atomic_fetch_inc(T* dest, int pe) {                                                           \
    return amo<T>("gshmem_" #N "_atomic_fetch_inc", dest, host::Amo::FetchAdd, static_cast<T>(1), static_cast<T>(0), pe);                \
  }                                                                                                            \
  void gshmem_##N##_atomic_inc(T* dest, int pe) {                                                              \
    amo<T>("gshmem_" #N "_atomic_inc", dest, host::Amo::FetchAdd, static_cast<T>(1), static_cast<T>(0), pe);                             \
  }                                                                                                            \
  T gshmem_##N##_atomic_fetch_add(T* dest, T value, int pe) {                                                  \
    return amo<T>("gshmem_" #N "_atomic_fetch_add", dest, host::Amo::FetchAdd, value, static_cast<T>(0), pe);               \
  }                                                                                                            \
  void gshmem_##N##_atomic_add(T* dest, T value, int pe) {                                                     \
    amo<T>("gshmem_" #N "_atomic_add", dest, host::Amo::FetchAdd, value, static_cast<T>(0), pe);                            \
  }                                                                                                            \
  T gshmem_##N##_atomic_compare_swap(T* dest, T cond, T value, int pe) {                                       \
    return amo<T>("gshmem_" #N "_atomic_compare_swap", dest, host::Amo::CompareSwap, value, cond, pe);         \
  }
#define GSHMEMI_DEF_AMO_EXTENDED(T, N)                                                                         \
  T gshmem_##N##_atomic_fetch(const T* source, int pe) {                                                       \
    return amo<T>("gshmem_" #N "_atomic_fetch", const_cast<T*>(source), host::Amo::Fetch, static_cast<T>(0), static_cast<T>(0), pe);     \
  }                                                                                                            \
  void gshmem_##N##_atomic_set(T* dest, T value, int pe) {                                                     \
    amo<T>("gshmem_" #N "_atomic_set", dest, host::Amo::Set, value, static_cast<T>(0), pe);                                 \
  }                                                                                                            \
  T gshmem_##N##_atomic_swap(T* dest, T value, int pe) {                                                       \
    return amo<T>("gshmem_" #N "_atomic_swap", dest, host::Amo::Swap, value, static_cast<T>(0), pe);                        \
  }
#define GSHMEMI_DEF_AMO_BITWISE(T, N)                                                                          \
  T gshmem_##N##_atomic_fetch_and(T* dest, T value, int pe) {                                                  \
    return amo<T>("gshmem_" #N "_atomic_fetch_and", dest, host::Amo::FetchAnd, value, static_cast<T>(0), pe);               \
  }                                                                                                            \
  void gshmem_##N##_atomic_and(T* dest, T value, int pe) {                                                     \
    amo<T>("gshmem_" #N "_atomic_and", dest, host::Amo::FetchAnd, value, static_cast<T>(0), pe);                            \
  }                                                                                                            \
  T gshmem_##N##_atomic_fetch_or(T* dest, T value, int pe) {                                                   \
    return amo<T>("gshmem_" #N "_atomic_fetch_or", dest, host::Amo::FetchOr, value, static_cast<T>(0), pe);                 \
  }                                                                                                            \
  void gshmem_##N##_atomic_or(T* dest, T value, int pe) {                                                      \
    amo<T>("gshmem_" #N "_atomic_or", dest, host::Amo::FetchOr, value, static_cast<T>(0), pe);                              \
  }                                                                                                            \
  T gshmem_##N##_atomic_fetch_xor(T* dest, T value, int pe) {                                                  \
    return amo<T>("gshmem_" #N "_atomic_fetch_xor", dest, host::Amo::FetchXor, value, static_cast<T>(0), pe);               \
  }                                                                                                            \
  void gshmem_##N##_atomic_xor(T* dest, T value, int pe) {                                                     \
    amo<T>("gshmem_" #N "_atomic_xor", dest, host::Amo::FetchXor, value, static_cast<T>(0), pe);                            \
  }
GSHMEM_AMO_STANDARD_TYPES(GSHMEMI_DEF_AMO_STANDARD)
GSHMEM_AMO_EXTENDED_TYPES(GSHMEMI_DEF_AMO_EXTENDED)
GSHMEM_AMO_BITWISE_TYPES(GSHMEMI_DEF_AMO_BITWISE)

// ---- point-to-point synchronisation ----
#define GSHMEMI_DEF_WAIT(T, N)                                                                                 \
  void gshmem_##N##_wait_until(T* ivar, int cmp, T cmp_value) {                                                \
    fatal_on_error("gshmem_" #N "_wait_until", [&] {                                                           \
      host::wait_until(ivar, wait_kind<T>(), cmp, bits(cmp_value), "gshmem_" #N "_wait_until");                \
    });                                                                                                        \
  }                                                                                                            \
  int gshmem_##N##_test(T* ivar, int cmp, T cmp_value) {                                                       \
    return fatal_on_error("gshmem_" #N "_test", [&] {                                                          \
      return host::test(ivar, wait_kind<T>(), cmp, bits(cmp_value), "gshmem_" #N "_test") ? 1 : 0;            \
    });                                                                                                        \
  }
GSHMEM_WAIT_TYPES(GSHMEMI_DEF_WAIT)

// ---- signals ----
void gshmem_putmem_signal(void* dest, const void* source, size_t bytes, uint64_t* sig_addr, uint64_t signal,
                          int sig_op, int pe) {
  fatal_on_error("gshmem_putmem_signal", [&] {
    host::putmem_signal(dest, source, bytes, sig_addr, signal, sig_op, pe, false, "gshmem_putmem_signal");
  });
}
void gshmem_putmem_signal_nbi(void* dest, const void* source, size_t bytes, uint64_t* sig_addr, uint64_t signal,
                              int sig_op, int pe) {
  fatal_on_error("gshmem_putmem_signal_nbi", [&] {
    host::putmem_signal(dest, source, bytes, sig_addr, signal, sig_op, pe, true, "gshmem_putmem_signal_nbi");
  });
}
void gshmemx_signal_op(uint64_t* sig_addr, uint64_t signal, int sig_op, int pe) {
  fatal_on_error("gshmemx_signal_op", [&] { host::signal_op(sig_addr, signal, sig_op, pe, "gshmemx_signal_op"); });
}
uint64_t gshmem_signal_fetch(uint64_t* sig_addr) {
  return fatal_on_error("gshmem_signal_fetch", [&] { return host::signal_fetch(sig_addr); });
}
uint64_t gshmem_signal_wait_until(uint64_t* sig_addr, int cmp, uint64_t cmp_value) {
  return fatal_on_error("gshmem_signal_wait_until",
                        [&] { return host::signal_wait_until(sig_addr, cmp, cmp_value); });
}

// ---- stream-ordered ----
void gshmemx_putmem_on_stream(void* dest, const void* source, size_t bytes, int pe, gshmem_stream_t stream) {
  fatal_on_error("gshmemx_putmem_on_stream",
                 [&] { host::putmem_on_stream(dest, source, bytes, pe, stream, "gshmemx_putmem_on_stream"); });
}
void gshmemx_getmem_on_stream(void* dest, const void* source, size_t bytes, int pe, gshmem_stream_t stream) {
  fatal_on_error("gshmemx_getmem_on_stream",
                 [&] { host::getmem_on_stream(dest, source, bytes, pe, stream, "gshmemx_getmem_on_stream"); });
}
void gshmemx_putmem_nbi_on_stream(void* dest, const void* source, size_t bytes, int pe, gshmem_stream_t stream) {
  fatal_on_error("gshmemx_putmem_nbi_on_stream", [&] {
    host::putmem_on_stream(dest, source, bytes, pe, stream, "gshmemx_putmem_nbi_on_stream");
  });
}
void gshmemx_getmem_nbi_on_stream(void* dest, const void* source, size_t bytes, int pe, gshmem_stream_t stream) {
  fatal_on_error("gshmemx_getmem_nbi_on_stream", [&] {
    host::getmem_on_stream(dest, source, bytes, pe, stream, "gshmemx_getmem_nbi_on_stream");
  });
}
void gshmemx_putmem_signal_nbi_on_stream(void* dest, const void* source, size_t bytes, uint64_t* sig_addr,
                                         uint64_t signal, int sig_op, int pe, gshmem_stream_t stream) {
  fatal_on_error("gshmemx_putmem_signal_nbi_on_stream", [&] {
    host::putmem_signal_on_stream(dest, source, bytes, sig_addr, signal, sig_op, pe, stream,
                                  "gshmemx_putmem_signal_nbi_on_stream");
  });
}
void gshmemx_putmem_signal_on_stream(void* dest, const void* source, size_t bytes, uint64_t* sig_addr,
                                     uint64_t signal, int sig_op, int pe, gshmem_stream_t stream) {
  fatal_on_error("gshmemx_putmem_signal_on_stream", [&] {
    host::putmem_signal_on_stream(dest, source, bytes, sig_addr, signal, sig_op, pe, stream,
                                  "gshmemx_putmem_signal_on_stream");
  });
}
void gshmemx_signal_op_on_stream(uint64_t* sig_addr, uint64_t signal, int sig_op, int pe,
                                 gshmem_stream_t stream) {
  fatal_on_error("gshmemx_signal_op_on_stream",
                 [&] { host::signal_op_on_stream(sig_addr, signal, sig_op, pe, stream); });
}
void gshmemx_signal_wait_until_on_stream(uint64_t* sig_addr, int cmp, uint64_t cmp_value, gshmem_stream_t stream) {
  fatal_on_error("gshmemx_signal_wait_until_on_stream",
                 [&] { host::signal_wait_until_on_stream(sig_addr, cmp, cmp_value, stream); });
}
void gshmemx_quiet_on_stream(gshmem_stream_t stream) {
  fatal_on_error("gshmemx_quiet_on_stream", [&] { host::quiet_on_stream(stream); });
}
void gshmemx_barrier_all_on_stream(gshmem_stream_t stream) {
  fatal_on_error("gshmemx_barrier_all_on_stream", [&] {
    host::barrier_on_stream(GSHMEM_TEAM_WORLD, true, stream, "gshmemx_barrier_all_on_stream");
  });
}
void gshmemx_sync_all_on_stream(gshmem_stream_t stream) {
  fatal_on_error("gshmemx_sync_all_on_stream", [&] {
    host::barrier_on_stream(GSHMEM_TEAM_WORLD, false, stream, "gshmemx_sync_all_on_stream");
  });
}
namespace {
// Programs call the team stream barriers as statements (NVSHMEM's perftests do) and go on unsynchronised when one
// fails, on a CPU PE every time: the status is returned and its message written at WARN too, as NVSHMEM prints its
// errors.
int said(int status) {
  if (status != GSHMEM_SUCCESS) log::warn("{}", gshmem::api::last_error());
  return status;
}
}  // namespace
int gshmemx_barrier_on_stream(gshmem_team_t team, gshmem_stream_t stream) {
  return said(status_on_error("gshmemx_barrier_on_stream",
                              [&] { host::barrier_on_stream(team, true, stream, "gshmemx_barrier_on_stream"); }));
}
int gshmemx_team_sync_on_stream(gshmem_team_t team, gshmem_stream_t stream) {
  return said(status_on_error("gshmemx_team_sync_on_stream",
                              [&] { host::barrier_on_stream(team, false, stream, "gshmemx_team_sync_on_stream"); }));
}

// ---- collectives (gshmem::host::collective; bad arguments end the job: see gshmem.h) ----
namespace {
int coll(host::Coll kind, const char* call, gshmem_team_t team, void* dest, const void* src, size_t nelems,
         size_t elem, int root) {
  fatal_on_error(call, [&] { host::collective(kind, team, dest, src, nelems, elem, root, call); });
  return GSHMEM_SUCCESS;
}
int coll_on_stream(host::Coll kind, const char* call, gshmem_team_t team, void* dest, const void* src,
                   size_t nelems, size_t elem, int root, gshmem_stream_t stream) {
  fatal_on_error(call, [&] { host::collective_on_stream(kind, team, dest, src, nelems, elem, root, stream, call); });
  return GSHMEM_SUCCESS;
}
}  // namespace
int gshmem_broadcastmem(gshmem_team_t team, void* dest, const void* source, size_t nelems, int PE_root) {
  return coll(host::Coll::Broadcast, "gshmem_broadcastmem", team, dest, source, nelems, 1, PE_root);
}
int gshmem_fcollectmem(gshmem_team_t team, void* dest, const void* source, size_t nelems) {
  return coll(host::Coll::Fcollect, "gshmem_fcollectmem", team, dest, source, nelems, 1, 0);
}
int gshmem_alltoallmem(gshmem_team_t team, void* dest, const void* source, size_t nelems) {
  return coll(host::Coll::Alltoall, "gshmem_alltoallmem", team, dest, source, nelems, 1, 0);
}
int gshmemx_broadcastmem_on_stream(gshmem_team_t team, void* dest, const void* source, size_t nelems, int PE_root,
                                   gshmem_stream_t stream) {
  return coll_on_stream(host::Coll::Broadcast, "gshmemx_broadcastmem_on_stream", team, dest, source, nelems, 1,
                        PE_root, stream);
}
int gshmemx_fcollectmem_on_stream(gshmem_team_t team, void* dest, const void* source, size_t nelems,
                                  gshmem_stream_t stream) {
  return coll_on_stream(host::Coll::Fcollect, "gshmemx_fcollectmem_on_stream", team, dest, source, nelems, 1, 0,
                        stream);
}
int gshmemx_alltoallmem_on_stream(gshmem_team_t team, void* dest, const void* source, size_t nelems,
                                  gshmem_stream_t stream) {
  return coll_on_stream(host::Coll::Alltoall, "gshmemx_alltoallmem_on_stream", team, dest, source, nelems, 1, 0,
                        stream);
}
#define GSHMEMI_DEF_COLL(T, N)                                                                                 \
  int gshmem_##N##_broadcast(gshmem_team_t team, T* dest, const T* source, size_t nelems, int PE_root) {       \
    return coll(host::Coll::Broadcast, "gshmem_" #N "_broadcast", team, dest, source, nelems, sizeof(T),       \
                PE_root);                                                                                      \
  }                                                                                                            \
  int gshmem_##N##_fcollect(gshmem_team_t team, T* dest, const T* source, size_t nelems) {                     \
    return coll(host::Coll::Fcollect, "gshmem_" #N "_fcollect", team, dest, source, nelems, sizeof(T), 0);     \
  }                                                                                                            \
  int gshmem_##N##_alltoall(gshmem_team_t team, T* dest, const T* source, size_t nelems) {                     \
    return coll(host::Coll::Alltoall, "gshmem_" #N "_alltoall", team, dest, source, nelems, sizeof(T), 0);     \
  }                                                                                                            \
  int gshmemx_##N##_broadcast_on_stream(gshmem_team_t team, T* dest, const T* source, size_t nelems,          \
                                        int PE_root, gshmem_stream_t stream) {                                 \
    return coll_on_stream(host::Coll::Broadcast, "gshmemx_" #N "_broadcast_on_stream", team, dest, source,     \
                          nelems, sizeof(T), PE_root, stream);                                                 \
  }                                                                                                            \
  int gshmemx_##N##_fcollect_on_stream(gshmem_team_t team, T* dest, const T* source, size_t nelems,           \
                                       gshmem_stream_t stream) {                                               \
    return coll_on_stream(host::Coll::Fcollect, "gshmemx_" #N "_fcollect_on_stream", team, dest, source,       \
                          nelems, sizeof(T), 0, stream);                                                       \
  }                                                                                                            \
  int gshmemx_##N##_alltoall_on_stream(gshmem_team_t team, T* dest, const T* source, size_t nelems,           \
                                       gshmem_stream_t stream) {                                               \
    return coll_on_stream(host::Coll::Alltoall, "gshmemx_" #N "_alltoall_on_stream", team, dest, source,       \
                          nelems, sizeof(T), 0, stream);                                                       \
  }
GSHMEM_RMA_TYPES(GSHMEMI_DEF_COLL)
#undef GSHMEMI_DEF_COLL
#define GSHMEMI_DEF_ALLTOALLS(T, N)                                                                            \
  int gshmem_##N##_alltoalls(gshmem_team_t team, T* dest, const T* source, ptrdiff_t dst, ptrdiff_t sst,       \
                             size_t nelems) {                                                                  \
    fatal_on_error("gshmem_" #N "_alltoalls", [&] {                                                           \
      host::alltoalls(team, dest, source, dst, sst, nelems, sizeof(T), "gshmem_" #N "_alltoalls");             \
    });                                                                                                        \
    return GSHMEM_SUCCESS;                                                                                     \
  }
GSHMEM_RMA_TYPES(GSHMEMI_DEF_ALLTOALLS)
#undef GSHMEMI_DEF_ALLTOALLS
int gshmemi_collective(int kind, gshmem_team_t team, void* dest, const void* source, size_t nelems, size_t elem,
                       int PE_root, ptrdiff_t dst, ptrdiff_t sst, int on_stream, gshmem_stream_t stream,
                       const char* call) {
  if (!call) call = "gshmemi_collective";
  fatal_on_error(call, [&] {
    if (kind < GSHMEMI_COLL_BROADCAST || kind > GSHMEMI_COLL_ALLTOALLS || elem == 0 ||
        (kind == GSHMEMI_COLL_ALLTOALLS && on_stream))
      fail(GSHMEM_ERROR_INVALID_VALUE, "{}: collective kind {} with {}-byte elements{} is not provided. Fix: "
                 "pass GSHMEMI_COLL_BROADCAST..ALLTOALLS, elem > 0 (alltoalls blocking only)", call, kind, elem,
                 on_stream ? " on a stream" : "");
    const auto k = static_cast<host::Coll>(kind);
    if (k == host::Coll::Alltoalls) host::alltoalls(team, dest, source, dst, sst, nelems, elem, call);
    else if (on_stream) host::collective_on_stream(k, team, dest, source, nelems, elem, PE_root, stream, call);
    else host::collective(k, team, dest, source, nelems, elem, PE_root, call);
  });
  return GSHMEM_SUCCESS;
}

// ---- reductions (gshmem::host::reduction) ----
extern "C++" {  // templates cannot have C linkage
namespace {
template <typename T>
constexpr host::ReduceType reduce_type() {
  using RT = host::ReduceType;
  if constexpr (std::is_floating_point_v<T>) return sizeof(T) == 4 ? RT::Float : RT::Double;
  else if constexpr (std::is_signed_v<T>)
    return sizeof(T) == 1 ? RT::Int8 : sizeof(T) == 2 ? RT::Int16 : sizeof(T) == 4 ? RT::Int32 : RT::Int64;
  else return sizeof(T) == 1 ? RT::Uint8 : sizeof(T) == 2 ? RT::Uint16 : sizeof(T) == 4 ? RT::Uint32 : RT::Uint64;
}
}  // namespace
}  // extern "C++"
namespace {
int red(host::ReduceOp op, host::ReduceType type, bool scatter, const char* call, gshmem_team_t team, void* dest,
        const void* src, size_t nreduce) {
  fatal_on_error(call, [&] { host::reduction(op, type, scatter, team, dest, src, nreduce, call); });
  return GSHMEM_SUCCESS;
}
int red_on_stream(host::ReduceOp op, host::ReduceType type, bool scatter, const char* call, gshmem_team_t team,
                  void* dest, const void* src, size_t nreduce, gshmem_stream_t stream) {
  fatal_on_error(call, [&] { host::reduction_on_stream(op, type, scatter, team, dest, src, nreduce, stream, call); });
  return GSHMEM_SUCCESS;
}
}  // namespace
#define GSHMEMI_DEF_REDUCE_OP(T, N, OP, O)                                                                     \
  int gshmem_##N##_##OP##_reduce(gshmem_team_t team, T* dest, const T* source, size_t nreduce) {              \
    return red(host::ReduceOp::O, reduce_type<T>(), false, "gshmem_" #N "_" #OP "_reduce", team, dest,    \
               source, nreduce);                                                                               \
  }                                                                                                            \
  int gshmem_##N##_##OP##_reducescatter(gshmem_team_t team, T* dest, const T* source, size_t nreduce) {       \
    return red(host::ReduceOp::O, reduce_type<T>(), true, "gshmem_" #N "_" #OP "_reducescatter", team,    \
               dest, source, nreduce);                                                                         \
  }                                                                                                            \
  int gshmemx_##N##_##OP##_reduce_on_stream(gshmem_team_t team, T* dest, const T* source, size_t nreduce,     \
                                            gshmem_stream_t stream) {                                          \
    return red_on_stream(host::ReduceOp::O, reduce_type<T>(), false,                                     \
                         "gshmemx_" #N "_" #OP "_reduce_on_stream", team, dest, source, nreduce, stream);      \
  }                                                                                                            \
  int gshmemx_##N##_##OP##_reducescatter_on_stream(gshmem_team_t team, T* dest, const T* source,              \
                                                   size_t nreduce, gshmem_stream_t stream) {                   \
    return red_on_stream(host::ReduceOp::O, reduce_type<T>(), true,                                      \
                         "gshmemx_" #N "_" #OP "_reducescatter_on_stream", team, dest, source, nreduce, stream); \
  }
#define GSHMEMI_DEF_REDUCE_BITWISE(T, N) GSHMEM_REDUCE_BITWISE_OPS(GSHMEMI_DEF_REDUCE_OP, T, N)
#define GSHMEMI_DEF_REDUCE_STANDARD(T, N) GSHMEM_REDUCE_ARITH_OPS(GSHMEMI_DEF_REDUCE_OP, T, N)
GSHMEM_REDUCE_BITWISE_TYPES(GSHMEMI_DEF_REDUCE_BITWISE)
GSHMEM_REDUCE_STANDARD_TYPES(GSHMEMI_DEF_REDUCE_STANDARD)
#undef GSHMEMI_DEF_REDUCE_STANDARD
#undef GSHMEMI_DEF_REDUCE_BITWISE
#undef GSHMEMI_DEF_REDUCE_OP
int gshmemi_reduction(int op, int type, int scatter, gshmem_team_t team, void* dest, const void* source,
                      size_t nreduce, int on_stream, gshmem_stream_t stream, const char* call) {
  if (!call) call = "gshmemi_reduction";
  const auto o = static_cast<host::ReduceOp>(op);
  const auto t = static_cast<host::ReduceType>(type);
  return on_stream ? red_on_stream(o, t, scatter != 0, call, team, dest, source, nreduce, stream)
                   : red(o, t, scatter != 0, call, team, dest, source, nreduce);
}

}  // extern "C"
