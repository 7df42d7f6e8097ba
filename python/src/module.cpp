// gshmem._gshmem: the nanobind layer under gshmem.core. Each function is one call of the throwing host layer
// (gshmem::host in gshmem/gshmem.hpp); a gshmem::Error becomes gshmem._gshmem.GshmemError carrying the library's
// message (call, cause, fix) and status. Addresses cross as Python ints; gshmem.core does the Python-side checks
// (symmetric arrays, dtypes, sizes) and keeps the per-call work here to one C++ call. Blocking calls release the GIL.
// fast.cpp adds the per-call fast path of the collectives and put / get (fast_*).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "gshmem/gshmem.hpp"

namespace nb = nanobind;
namespace host = gshmem::host;

namespace {

void* addr(std::uintptr_t p) { return reinterpret_cast<void*>(p); }
std::uintptr_t as_int(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
gshmem_stream_t stream(std::uintptr_t s) { return reinterpret_cast<gshmem_stream_t>(s); }
std::uint64_t* word(std::uintptr_t p) { return static_cast<std::uint64_t*>(addr(p)); }
using nogil = nb::call_guard<nb::gil_scoped_release>;

// `bytes` of memory at `p` as a flat uint8 array of framework F (torch.Tensor, cupy.ndarray, numpy.ndarray),
// through DLPack, without a copy and without an owner: gshmem.core's table of allocations keeps the memory, as
// nvshmem4py's does. gshmem.core views it as the dtype and shape asked for.
template <typename F>
nb::object wrap_bytes(std::uintptr_t p, std::size_t bytes, int device_type, int device_id) {
  std::size_t shape[1] = {bytes};
  nb::ndarray<F, std::uint8_t, nb::ndim<1>> a(addr(p), 1, shape, nb::handle(), nullptr, nb::dtype<std::uint8_t>(),
                                              device_type, device_id);
  return nb::cast(a, nb::rv_policy::reference);
}

// A C entry's status as an exception carrying its message.
void check_status(int status) {
  if (status != GSHMEM_SUCCESS) throw gshmem::Error(status, gshmemx_last_error());
}

void init_attr(unsigned flags, gshmemx_init_attr_t* attr) {
  host::init(flags, attr, GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH);
}

}  // namespace

void def_fast_path(nb::module_& m);  // fast.cpp

NB_MODULE(_gshmem, m) {
  m.doc() = "gshmem's host API for gshmem.core (internal: use gshmem.core)";

  static nb::object error_type;
  error_type = nb::borrow(PyErr_NewExceptionWithDoc(
      "gshmem._gshmem.GshmemError", "An error reported by the gshmem library; .status is its GSHMEM_* code.",
      PyExc_RuntimeError, nullptr));
  m.attr("GshmemError") = error_type;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const gshmem::Error& e) {
      nb::object exc = error_type(nb::str(e.what()));
      exc.attr("status") = e.status();
      exc.attr("msg") = nb::str(e.what());  // nvshmem4py's exceptions carry .msg
      PyErr_SetObject(error_type.ptr(), exc.ptr());
    }
  });

  def_fast_path(m);
  m.attr("VERSION") = nb::make_tuple(GSHMEM_VERSION_MAJOR, GSHMEM_VERSION_MINOR, GSHMEM_VERSION_PATCH);
  m.attr("UNIQUEID_BYTES") = GSHMEMX_UNIQUEID_BYTES;

  // ---- init / query ----
  m.def("init", [] { init_attr(0, nullptr); }, nogil(),
        "Starts this PE from the environment (gshmemrun, mpirun, torchrun's variables, or a single PE).");
  m.def("get_unique_id", [] {
    gshmemx_uniqueid_t uid = GSHMEMX_UNIQUEID_INITIALIZER;
    host::get_unique_id(&uid);
    return nb::bytes(reinterpret_cast<const char*>(&uid), sizeof uid);
  });
  m.def(
      "init_uid",
      [](nb::bytes uid_bytes, int rank, int nranks) {
        if (uid_bytes.size() != sizeof(gshmemx_uniqueid_t))
          throw gshmem::Error(GSHMEM_ERROR_INVALID_VALUE,
                              "init: uid is " + std::to_string(uid_bytes.size()) + " bytes, a unique id is " +
                                  std::to_string(sizeof(gshmemx_uniqueid_t)) + ". Fix: pass get_unique_id()'s value");
        gshmemx_uniqueid_t uid;
        std::memcpy(&uid, uid_bytes.c_str(), sizeof uid);
        gshmemx_init_attr_t attr = GSHMEMX_INIT_ATTR_INITIALIZER;
        if (int s = gshmemx_set_attr_uniqueid_args(rank, nranks, &uid, &attr); s != GSHMEM_SUCCESS)
          throw gshmem::Error(s, gshmemx_last_error());
        nb::gil_scoped_release release;
        init_attr(GSHMEMX_INIT_WITH_UNIQUEID, &attr);
      },
      nb::arg("uid"), nb::arg("rank"), nb::arg("nranks"));
  m.def("finalize", &host::finalize, nogil());
  m.def("leave", [](const std::string& how) { host::leave(how.c_str()); }, nogil());
  m.def("initialized", &host::initialized);
  m.def("my_pe", &host::my_pe);
  m.def("n_pes", &host::n_pes);
  m.def("device", [] {
    int ordinal = -1, count = 0;
    host::query_device(&ordinal, &count);
    return nb::make_tuple(ordinal, count);
  });
  m.def("team_my_pe", &host::team_my_pe);
  m.def("team_n_pes", &host::team_n_pes);
  m.def("team_translate_pe", &host::team_translate_pe);
  m.def("team_split_strided", &host::team_split_strided, nogil());
  m.def("team_split_2d", [](int parent, int xrange) {
    gshmem_team_t x = GSHMEM_TEAM_INVALID, y = GSHMEM_TEAM_INVALID;
    {
      nb::gil_scoped_release release;
      host::team_split_2d(parent, xrange, &x, &y);
    }
    return nb::make_tuple(x, y);
  });
  m.def("team_destroy", &host::team_destroy, nogil());
  m.def("team_uniqueid", &host::team_uniqueid);
  // Queries nvshmem4py answers before init as well as after
  m.def("query_thread", [] {
    int provided = 0;
    gshmem_query_thread(&provided);
    return provided;
  });
  m.def("info_get_name", [] {
    char name[GSHMEM_MAX_NAME_LEN] = {};
    gshmem_info_get_name(name);
    return std::string(name);
  });
  m.def("ask_smem", [](int amount) { return gshmemx_ask_smem(static_cast<gshmemx_smem_amount_t>(amount)); });
  m.def("team_init", &host::team_init, nogil(), nb::arg("uniqueid"), nb::arg("npes"), nb::arg("pe_idx_in_team"));
  m.def("last_error", [] { return std::string(gshmemx_last_error()); });
  m.def("library_path", [] {  // the libgshmem this extension loaded
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&gshmemx_last_error), &info) || !info.dli_fname)
      throw gshmem::Error(GSHMEM_ERROR_INTERNAL, "library_path: dladdr found no file for libgshmem");
    return std::string(info.dli_fname);
  });

  // ---- memory ----
  m.def("malloc", [](std::size_t bytes, const char* call) { return as_int(host::malloc(bytes, 0, false, call)); },
        nogil());
  m.def("free", [](std::uintptr_t p) { host::free(addr(p)); }, nogil());
  m.def("ptr", [](std::uintptr_t p, int pe) { return as_int(host::ptr(addr(p), pe)); });
  m.def("register_symmetric", [](std::uintptr_t p, std::size_t bytes) {
    return as_int(host::buffer_register_symmetric(addr(p), bytes, 0));
  }, nogil());
  m.def("unregister_symmetric", [](std::uintptr_t p, std::size_t bytes) {
    host::buffer_unregister_symmetric(addr(p), bytes);
  }, nogil());

  // ---- arrays of other libraries (DLPack) ----
  // Framework codes: 0 NumPy, 1 torch, 2 CuPy, 3 nanobind's own array (the array API: __dlpack__, __dlpack_device__).
  m.def("wrap", [](int framework, std::uintptr_t p, std::size_t bytes, int device_type, int device_id) {
    switch (framework) {
      case 0: return wrap_bytes<nb::numpy>(p, bytes, device_type, device_id);
      case 1: return wrap_bytes<nb::pytorch>(p, bytes, device_type, device_id);
      case 2: return wrap_bytes<nb::cupy>(p, bytes, device_type, device_id);
      default: return wrap_bytes<nb::array_api>(p, bytes, device_type, device_id);
    }
  });
  // Any DLPack producer (a JAX array, a cuda.core buffer, ...): (address, bytes, elements, dtype code, bits,
  // device type, device id, C-contiguous).
  m.def("dlpack_info", [](nb::ndarray<nb::ro> a) {
    std::size_t elems = 1;
    bool contiguous = true;
    std::int64_t expect = 1;
    for (std::size_t i = a.ndim(); i-- > 0;) {
      elems *= a.shape(i);
      if (a.shape(i) != 1 && a.stride(i) != expect) contiguous = false;
      expect *= static_cast<std::int64_t>(a.shape(i));
    }
    const nb::dlpack::dtype t = a.dtype();
    return nb::make_tuple(as_int(a.data()), elems * ((t.bits * t.lanes + 7) / 8), elems, t.code, t.bits * t.lanes,
                          a.device_type(), a.device_id(), contiguous);
  });

  // ---- device code the program loads itself (CUmodule / CUlibrary handles as ints) ----
  m.def("cumodule_init", [](std::uintptr_t h) { check_status(gshmemx_cumodule_init(reinterpret_cast<CUmod_st*>(h))); });
  m.def("cumodule_finalize",
        [](std::uintptr_t h) { check_status(gshmemx_cumodule_finalize(reinterpret_cast<CUmod_st*>(h))); });
  m.def("culibrary_init",
        [](std::uintptr_t h) { check_status(gshmemx_culibrary_init(reinterpret_cast<CUlib_st*>(h))); });
  m.def("culibrary_finalize",
        [](std::uintptr_t h) { check_status(gshmemx_culibrary_finalize(reinterpret_cast<CUlib_st*>(h))); });

  // ---- RMA and synchronisation (blocking host forms) ----
  m.def("putmem", [](std::uintptr_t d, std::uintptr_t s, std::size_t n, int pe, const char* call) {
    host::putmem(addr(d), addr(s), n, pe, false, call);
  }, nogil());
  m.def("getmem", [](std::uintptr_t d, std::uintptr_t s, std::size_t n, int pe, const char* call) {
    host::getmem(addr(d), addr(s), n, pe, false, call);
  }, nogil());
  m.def("putmem_nbi", [](std::uintptr_t d, std::uintptr_t s, std::size_t n, int pe, const char* call) {
    host::putmem(addr(d), addr(s), n, pe, true, call);
  }, nogil());
  m.def("getmem_nbi", [](std::uintptr_t d, std::uintptr_t s, std::size_t n, int pe, const char* call) {
    host::getmem(addr(d), addr(s), n, pe, true, call);
  }, nogil());
  m.def("putmem_signal", [](std::uintptr_t d, std::uintptr_t s, std::size_t n, std::uintptr_t sig,
                            std::uint64_t value, int op, int pe, const char* call) {
    host::putmem_signal(addr(d), addr(s), n, word(sig), value, op, pe, false, call);
  }, nogil());
  m.def("putmem_signal_nbi", [](std::uintptr_t d, std::uintptr_t s, std::size_t n, std::uintptr_t sig,
                                std::uint64_t value, int op, int pe, const char* call) {
    host::putmem_signal(addr(d), addr(s), n, word(sig), value, op, pe, true, call);
  }, nogil());
  m.def("signal_op", [](std::uintptr_t sig, std::uint64_t value, int op, int pe, const char* call) {
    host::signal_op(word(sig), value, op, pe, call);
  }, nogil());
  m.def("signal_fetch", [](std::uintptr_t sig) { return host::signal_fetch(word(sig)); }, nogil());
  // One atomic of `bytes` (4 or 8) at dest on pe; op is gshmem::host::Amo's order (Fetch, Set, Swap, CompareSwap,
  // FetchAdd, FetchAnd, FetchOr, FetchXor); values are the bit patterns; returns the old bits where the op fetches.
  m.def("atomic", [](std::uintptr_t d, int bytes, int op, std::uint64_t value, std::uint64_t cond, int pe,
                     const char* call) {
    return host::atomic(addr(d), bytes, static_cast<host::Amo>(op), value, cond, pe, call);
  }, nogil());
  m.def("signal_wait_until", [](std::uintptr_t sig, int cmp, std::uint64_t value) {
    return host::signal_wait_until(word(sig), cmp, value);
  }, nogil());
  m.def("quiet", &host::quiet, nogil());
  m.def("barrier", [](int team, bool with_quiet, const char* call) { host::barrier(team, with_quiet, call); },
        nogil());

  // ---- stream-ordered forms (GPU PEs); a stream is a cudaStream_t as an int (0: the legacy default stream) ----
  m.def("putmem_on_stream", [](std::uintptr_t d, std::uintptr_t s, std::size_t n, int pe, std::uintptr_t st,
                               const char* call) { host::putmem_on_stream(addr(d), addr(s), n, pe, stream(st), call); },
        nogil());
  m.def("getmem_on_stream", [](std::uintptr_t d, std::uintptr_t s, std::size_t n, int pe, std::uintptr_t st,
                               const char* call) { host::getmem_on_stream(addr(d), addr(s), n, pe, stream(st), call); },
        nogil());
  m.def("putmem_signal_on_stream", [](std::uintptr_t d, std::uintptr_t s, std::size_t n, std::uintptr_t sig,
                                      std::uint64_t value, int op, int pe, std::uintptr_t st, const char* call) {
    host::putmem_signal_on_stream(addr(d), addr(s), n, word(sig), value, op, pe, stream(st), call);
  }, nogil());
  m.def("signal_op_on_stream", [](std::uintptr_t sig, std::uint64_t value, int op, int pe, std::uintptr_t st) {
    host::signal_op_on_stream(word(sig), value, op, pe, stream(st));
  }, nogil());
  m.def("signal_wait_until_on_stream", [](std::uintptr_t sig, int cmp, std::uint64_t value, std::uintptr_t st) {
    host::signal_wait_until_on_stream(word(sig), cmp, value, stream(st));
  }, nogil());
  m.def("quiet_on_stream", [](std::uintptr_t st) { host::quiet_on_stream(stream(st)); }, nogil());
  m.def("barrier_on_stream", [](int team, bool with_quiet, std::uintptr_t st, const char* call) {
    host::barrier_on_stream(team, with_quiet, stream(st), call);
  }, nogil());
  m.def("collective_on_stream", [](int kind, int team, std::uintptr_t d, std::uintptr_t s, std::size_t nelems,
                                   std::size_t elem, int root, std::uintptr_t st, const char* call) {
    host::collective_on_stream(static_cast<host::Coll>(kind), team, addr(d), addr(s), nelems, elem, root, stream(st),
                               call);
  }, nogil());
  m.def("reduction_on_stream", [](int op, int type, bool scatter, int team, std::uintptr_t d, std::uintptr_t s,
                                  std::size_t nelems, std::uintptr_t st, const char* call) {
    host::reduction_on_stream(static_cast<host::ReduceOp>(op), static_cast<host::ReduceType>(type), scatter, team,
                              addr(d), addr(s), nelems, stream(st), call);
  }, nogil());

  // ---- collectives: kinds and codes are gshmem.h's GSHMEMI_COLL_* / GSHMEMI_REDUCE_* ----
  m.def("collective", [](int kind, int team, std::uintptr_t d, std::uintptr_t s, std::size_t nelems,
                         std::size_t elem, int root, const char* call) {
    host::collective(static_cast<host::Coll>(kind), team, addr(d), addr(s), nelems, elem, root, call);
  }, nogil());
  m.def("reduction", [](int op, int type, bool scatter, int team, std::uintptr_t d, std::uintptr_t s,
                        std::size_t nelems, const char* call) {
    host::reduction(static_cast<host::ReduceOp>(op), static_cast<host::ReduceType>(type), scatter, team, addr(d),
                    addr(s), nelems, call);
  }, nogil());

  // ---- MoE dispatch / combine (gshmem.moe: pplx-kernels' AllToAll) ----
  // The handle is the host::MoeState* as an int; gshmem.moe.AllToAll keeps it and checks the arrays (dtypes,
  // shapes, contiguity, which memory) before each call. Types are host::ReduceType's values (Float 8, Half 10,
  // Bfloat16 11); address 0 is NULL (no scales).
  m.def("moe_create", [](std::uint64_t max_num_tokens, std::uint64_t num_experts, std::uint64_t experts_per_token,
                         std::uint64_t hidden_dim, std::uint64_t hidden_dim_bytes,
                         std::uint64_t hidden_dim_scale_bytes, int dp_size, const char* call) {
    const host::MoeConfig c{max_num_tokens, num_experts, experts_per_token, hidden_dim, hidden_dim_bytes,
                            hidden_dim_scale_bytes, dp_size, 0};
    return as_int(host::moe_create(c, call));
  }, nogil());
  m.def("moe_destroy", [](std::uintptr_t h, const char* call) {
    host::moe_destroy(reinterpret_cast<host::MoeState*>(h), call);
  }, nogil());
  m.def("moe_dispatch", [](std::uintptr_t h, std::uintptr_t out_num_tokens, std::uintptr_t out_x,
                           std::uintptr_t out_x_scale, std::uintptr_t x, std::uintptr_t x_scale,
                           std::uintptr_t indices, std::size_t num_tokens, const char* call) {
    host::moe_dispatch(reinterpret_cast<host::MoeState*>(h), static_cast<std::int32_t*>(addr(out_num_tokens)),
                       addr(out_x), addr(out_x_scale), addr(x), addr(x_scale),
                       static_cast<const std::uint32_t*>(addr(indices)), num_tokens, call);
  }, nogil());
  m.def("moe_combine", [](std::uintptr_t h, std::uintptr_t out, int out_type, std::uintptr_t indices,
                          std::uintptr_t weights, std::uintptr_t y, int y_type, std::size_t num_tokens,
                          const char* call) {
    host::moe_combine(reinterpret_cast<host::MoeState*>(h), addr(out), static_cast<host::ReduceType>(out_type),
                      static_cast<const std::uint32_t*>(addr(indices)), static_cast<const float*>(addr(weights)),
                      addr(y), static_cast<host::ReduceType>(y_type), num_tokens, call);
  }, nogil());
  // GPU PEs: the stream forms; bound_m is a device address (0: num_tokens), stream a cudaStream_t as an int.
  m.def("moe_dispatch_on_stream", [](std::uintptr_t h, std::uintptr_t out_num_tokens, std::uintptr_t out_x,
                                     std::uintptr_t out_x_scale, std::uintptr_t x, std::uintptr_t x_scale,
                                     std::uintptr_t indices, std::size_t num_tokens, std::uintptr_t bound_m,
                                     std::uintptr_t st, const char* call) {
    host::moe_dispatch_on_stream(reinterpret_cast<host::MoeState*>(h),
                                 static_cast<std::int32_t*>(addr(out_num_tokens)), addr(out_x), addr(out_x_scale),
                                 addr(x), addr(x_scale), static_cast<const std::uint32_t*>(addr(indices)),
                                 num_tokens, static_cast<const std::uint32_t*>(addr(bound_m)),
                                 stream(st), call);
  }, nogil());
  m.def("moe_combine_on_stream", [](std::uintptr_t h, std::uintptr_t out, int out_type, std::uintptr_t indices,
                                    std::uintptr_t weights, std::uintptr_t y, int y_type, std::size_t num_tokens,
                                    std::uintptr_t bound_m, std::uintptr_t st, const char* call) {
    host::moe_combine_on_stream(reinterpret_cast<host::MoeState*>(h), addr(out),
                                static_cast<host::ReduceType>(out_type),
                                static_cast<const std::uint32_t*>(addr(indices)),
                                static_cast<const float*>(addr(weights)), addr(y),
                                static_cast<host::ReduceType>(y_type), num_tokens,
                                static_cast<const std::uint32_t*>(addr(bound_m)),
                                stream(st), call);
  }, nogil());
}
