// gshmem._gshmem's per-call fast path (python/README.md, "Host time per call"). gshmem.core's reduce /
// reducescatter, broadcast / fcollect / alltoall, put / get / put_nbi / get_nbi, put_signal / put_signal_nbi,
// signal_op and signal_wait try it first. It takes only the
// common case: two torch tensors or two NumPy arrays of types gshmem.core's full path has read before, dense in C
// order, of one dtype, their symmetric sides in regions the full path looked up before, a team or PE as an int (or
// IntEnum), and a stream given as None, an int, or an object of a stream type the full path has read before. For
// that it reads what it needs in C (a few attribute calls for torch, the buffer protocol for NumPy) and makes the
// library call; for anything else it answers False and the full path runs, which checks everything and raises what
// is wrong. So it accepts only what the full path accepts, and raises only what the library itself raises.
//
// It knows only what gshmem.core told it (the full path stays the one place of the rules): the array types and
// torch dtypes it read (fast_learn_type / fast_learn_dtype), the stream types it read and how (fast_learn_stream),
// the symmetric regions it looked up (fast_hit / fast_forget, a mirror of gshmem.core.memory._hits, cleared with
// it), and the PE's kind, size and current-stream function (fast_start / fast_stop at init and finalize).
// fast_stats counts the calls it made (for the tests); fast_dry(True) makes it skip the library call
// (bench/python/core_bench.py's figure of the layers alone).
#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "gshmem/gshmem.hpp"

namespace nb = nanobind;
namespace host = gshmem::host;

namespace {

// Element types: gshmem.core.collective's _TYPES codes (gshmem.h's GSHMEMI_REDUCE_<type>); -1: a dtype the
// collectives do not take (put / get move its bytes all the same).
constexpr int kNoCode = -1;
constexpr int kInt64 = 3, kUint64 = 7, kFloat32 = 8, kFloat64 = 9, kFloat16 = 10;

struct Dtype {
  PyObject* dtype;  // a torch.dtype (kept alive here)
  int code;
  std::size_t size;
};

struct State {
  bool started = false, cpu_pes = true;
  int n_pes = 0;
  PyObject* current_stream = nullptr;        // () -> the current cudaStream_t as an int
  std::vector<PyObject*> torch_types;        // torch.Tensor and subclasses read by the full path
  std::vector<PyObject*> buffer_types;       // numpy.ndarray (and subclasses) read by the full path
  // stream types the full path read, and how (_interop._stream_getter): __cuda_stream__ called or read (its
  // second item), or the .cuda_stream / .ptr attribute
  enum class StreamHow { ProtocolCall, ProtocolAttr, Attr };
  struct StreamType {
    PyObject* type;
    StreamHow how;
    PyObject* name;  // the attribute (interned)
  };
  std::vector<StreamType> stream_types;
  std::vector<Dtype> dtypes;                 // torch dtypes
  std::unordered_map<std::uintptr_t, std::uintptr_t> hits;  // address -> end of its symmetric region
  std::uint64_t taken = 0;                   // calls this path made (fast_stats, for the tests)
  bool dry = false;  // everything but the library call (fast_dry: core_bench's "Python layer alone" figure)
  PyObject *s_dtype = nullptr, *s_is_contiguous = nullptr, *s_data_ptr = nullptr, *s_numel = nullptr;
};

State& state() {
  static State s;
  return s;
}

bool has(const std::vector<PyObject*>& v, PyObject* t) { return std::find(v.begin(), v.end(), t) != v.end(); }

// One array as the call needs it.
struct Arr {
  std::uintptr_t p = 0;
  std::size_t n = 0;     // elements
  std::size_t size = 0;  // bytes per element
  int code = kNoCode;
  const void* kind = nullptr;  // the dtype's identity: a torch.dtype, or the NumPy format's table entry
};

// The value of an int object; false (and no Python error) where it does not fit a long long.
bool long_value(PyObject* i, long long& out) {
  out = PyLong_AsLongLong(i);
  if (out == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// A method call with no arguments whose result is a non-negative int; false (and no Python error) otherwise.
bool call_int(PyObject* x, PyObject* name, long long& out) {
  PyObject* r = PyObject_CallMethodObjArgs(x, name, nullptr);
  if (!r) {
    PyErr_Clear();
    return false;
  }
  const bool ok = PyLong_Check(r) && long_value(r, out);
  Py_DECREF(r);
  return ok && out >= 0;
}

bool read_torch(PyObject* x, Arr& a) {
  State& s = state();
  PyObject* dt = PyObject_GetAttr(x, s.s_dtype);
  if (!dt) {
    PyErr_Clear();
    return false;
  }
  Py_DECREF(dt);  // dtypes are singletons, and the learnt ones are kept alive in s.dtypes
  const Dtype* d = nullptr;
  for (const Dtype& e : s.dtypes)
    if (e.dtype == dt) d = &e;
  if (!d) return false;
  PyObject* c = PyObject_CallMethodObjArgs(x, s.s_is_contiguous, nullptr);
  if (!c) {
    PyErr_Clear();
    return false;
  }
  const bool contiguous = c == Py_True;
  Py_DECREF(c);
  long long p = 0, n = 0;
  if (!contiguous || !call_int(x, s.s_data_ptr, p) || !call_int(x, s.s_numel, n)) return false;
  if (p == 0) return false;  // torch gives 0 for a tensor of no elements: the full path finds its address
  a.p = static_cast<std::uintptr_t>(p);
  a.n = static_cast<std::size_t>(n);
  a.size = d->size;
  a.code = d->code;
  a.kind = d->dtype;
  return true;
}

// A NumPy buffer's format character (native order) and item size -> element code.
int format_code(char c, std::size_t size) {
  auto sized = [&](bool is_signed) {
    switch (size) {
      case 1: return is_signed ? 0 : 4;
      case 2: return is_signed ? 1 : 5;
      case 4: return is_signed ? 2 : 6;
      case 8: return is_signed ? 3 : 7;
      default: return kNoCode;
    }
  };
  switch (c) {
    case 'b': case 'h': case 'i': case 'l': case 'q': return sized(true);
    case 'B': case 'H': case 'I': case 'L': case 'Q': return sized(false);
    case '?': return size == 1 ? 4 : kNoCode;  // bool reduces as uint8, as gshmem.core's _TYPES says
    case 'e': return size == 2 ? kFloat16 : kNoCode;
    case 'f': return size == 4 ? kFloat32 : kNoCode;
    case 'd': return size == 8 ? kFloat64 : kNoCode;
    default: return kNoCode;
  }
}
// Distinct addresses standing for "the same NumPy dtype" in Arr::kind: one per element code, and bool's own (the
// full path compares dtype names, and "bool" is not "uint8").
const char kFormatKinds[12][8] = {};
const char* const kBoolKind = kFormatKinds[11];

bool read_buffer(PyObject* x, Arr& a, bool writable) {
  Py_buffer b;
  if (PyObject_GetBuffer(x, &b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) != 0) {
    PyErr_Clear();
    return false;
  }
  const char* f = b.format ? b.format : "B";
  const int code = f[0] && !f[1] ? format_code(f[0], static_cast<std::size_t>(b.itemsize)) : kNoCode;
  const bool ok = code != kNoCode && b.itemsize > 0 && b.buf != nullptr;
  if (ok) {
    a.p = reinterpret_cast<std::uintptr_t>(b.buf);
    a.size = static_cast<std::size_t>(b.itemsize);
    a.n = static_cast<std::size_t>(b.len) / a.size;
    a.code = code;
    a.kind = f[0] == '?' ? kBoolKind : kFormatKinds[code];  // bool reduces as uint8 but is not uint8's dtype
  }
  PyBuffer_Release(&b);  // the memory is gshmem's or the caller's, alive for the call either way
  return ok;
}

// Both arrays, of one kind of array and one dtype.
// One array of a type the full path read (a torch tensor, or an object with the buffer protocol; `writable`: the
// buffer is written to), by its type.
bool read_array(PyObject* x, Arr& a, bool writable) {
  State& st = state();
  PyObject* t = reinterpret_cast<PyObject*>(Py_TYPE(x));
  if (has(st.torch_types, t)) return read_torch(x, a);
  if (has(st.buffer_types, t)) return read_buffer(x, a, writable);
  return false;
}

bool read_pair(PyObject* dst, PyObject* src, Arr& d, Arr& s) {
  if (Py_TYPE(src) != Py_TYPE(dst)) return false;
  return read_array(dst, d, true) && read_array(src, s, false) && d.kind == s.kind;
}

// [p, p + bytes) inside a region the full path looked up.
bool symmetric(std::uintptr_t p, std::size_t bytes) {
  const auto& hits = state().hits;
  auto it = hits.find(p);
  return it != hits.end() && p + bytes <= it->second;
}

bool as_int(PyObject* x, long long& out) {
  PyObject* i = PyNumber_Index(x);
  if (!i) {
    PyErr_Clear();
    return false;
  }
  const bool ok = long_value(i, out);
  Py_DECREF(i);
  return ok;
}

// The team's size, or 0 where it is not one (the full path raises).
int team_size(PyObject* team, int& t) {
  long long v = 0;
  if (!as_int(team, v) || v < INT32_MIN || v > INT32_MAX) return 0;
  t = static_cast<int>(v);
  try {
    const int n = host::team_n_pes(t);
    return n > 0 ? n : 0;
  } catch (const gshmem::Error&) {
    return 0;
  }
}

// The stream: on CPU PEs only None is taken (has_stream false); on GPU PEs None (the current stream), an int, or
// an object of a stream type the full path read before, read the way it reads it.
bool stream_of(PyObject* st, bool& has_stream, std::uintptr_t& h) {
  State& s = state();
  has_stream = !s.cpu_pes;
  if (s.cpu_pes) return st == Py_None;
  PyObject* v = nullptr;
  if (st == Py_None) {
    if (!s.current_stream) return false;
    v = PyObject_CallObject(s.current_stream, nullptr);
  } else if (PyLong_CheckExact(st)) {
    v = st;
    Py_INCREF(v);
  } else {
    const State::StreamType* known = nullptr;
    for (const auto& e : s.stream_types)
      if (e.type == reinterpret_cast<PyObject*>(Py_TYPE(st))) known = &e;
    if (!known) return false;
    if (known->how == State::StreamHow::Attr) {
      v = PyObject_GetAttr(st, known->name);
    } else {
      PyObject* proto = known->how == State::StreamHow::ProtocolCall
                            ? PyObject_CallMethodObjArgs(st, known->name, nullptr)
                            : PyObject_GetAttr(st, known->name);
      if (proto) {
        v = PyTuple_Check(proto) && PyTuple_GET_SIZE(proto) == 2 ? PyTuple_GET_ITEM(proto, 1) : nullptr;
        Py_XINCREF(v);
        Py_DECREF(proto);
      }
    }
  }
  if (!v) {
    PyErr_Clear();
    return false;
  }
  bool ok = PyLong_Check(v);
  if (ok) {
    h = static_cast<std::uintptr_t>(PyLong_AsUnsignedLongLong(v));
    if (PyErr_Occurred()) {
      PyErr_Clear();
      ok = false;
    }
  }
  Py_DECREF(v);
  return ok;
}

gshmem_stream_t as_stream(std::uintptr_t h) { return reinterpret_cast<gshmem_stream_t>(h); }
void* addr(std::uintptr_t p) { return reinterpret_cast<void*>(p); }

// gshmem.core.collective's _OPS: the op names by code.
const char* const kOps[] = {"and", "or", "xor", "max", "min", "sum", "prod"};

bool fast_reduction(nb::handle team, nb::handle dst, nb::handle src, nb::handle op, bool scatter,
                    nb::handle stream) {
  State& s = state();
  if (!s.started || !PyUnicode_Check(op.ptr())) return false;
  int op_code = -1;
  for (int i = 0; i < 7; ++i)
    if (PyUnicode_CompareWithASCIIString(op.ptr(), kOps[i]) == 0) op_code = i;
  Arr d, r;
  if (op_code < 0 || !read_pair(dst.ptr(), src.ptr(), d, r) || d.code == kNoCode) return false;
  if (op_code <= 2 && d.code > 7) return false;  // bitwise ops take integer types only
  int t = 0;
  const int size = team_size(team.ptr(), t);
  if (size == 0 || r.n < (scatter ? d.n * static_cast<std::size_t>(size) : d.n)) return false;
  if (!symmetric(d.p, d.n * d.size) || !symmetric(r.p, r.n * r.size)) return false;
  bool has_stream = false;
  std::uintptr_t h = 0;
  if (!stream_of(stream.ptr(), has_stream, h)) return false;
  const char* call = scatter ? "reducescatter" : "reduce";
  const auto o = static_cast<host::ReduceOp>(op_code);
  const auto ty = static_cast<host::ReduceType>(d.code);
  ++s.taken;
  if (s.dry) return true;
  nb::gil_scoped_release release;
  if (has_stream)
    host::reduction_on_stream(o, ty, scatter, t, addr(d.p), addr(r.p), d.n, as_stream(h), call);
  else
    host::reduction(o, ty, scatter, t, addr(d.p), addr(r.p), d.n, call);
  return true;
}

// kind: gshmem.h's GSHMEMI_COLL_* (0 broadcast, 1 fcollect, 2 alltoall).
bool fast_collective(int kind, nb::handle team, nb::handle dst, nb::handle src, nb::handle root, nb::handle stream) {
  State& s = state();
  if (!s.started || kind < 0 || kind > 2) return false;
  Arr d, r;
  if (!read_pair(dst.ptr(), src.ptr(), d, r) || d.code == kNoCode) return false;
  int t = 0;
  const int size = team_size(team.ptr(), t);
  if (size == 0) return false;
  const std::size_t n = static_cast<std::size_t>(size);
  std::size_t nelems = 0;
  long long root_index = 0;
  if (kind == 0) {
    nelems = d.n;
    if (r.n < nelems || !as_int(root.ptr(), root_index) || root_index < 0 || root_index >= size) return false;
  } else if (kind == 1) {
    nelems = r.n;
    if (d.n < nelems * n) return false;
  } else {
    if (r.n % n) return false;
    nelems = r.n / n;
    if (d.n < nelems * n) return false;
  }
  if (!symmetric(d.p, d.n * d.size) || !symmetric(r.p, r.n * r.size)) return false;
  bool has_stream = false;
  std::uintptr_t h = 0;
  if (!stream_of(stream.ptr(), has_stream, h)) return false;
  static const char* const kNames[] = {"broadcast", "fcollect", "alltoall"};
  const auto c = static_cast<host::Coll>(kind);
  const int rt = static_cast<int>(root_index);
  ++s.taken;
  if (s.dry) return true;
  nb::gil_scoped_release release;
  if (has_stream)
    host::collective_on_stream(c, t, addr(d.p), addr(r.p), nelems, d.size, rt, as_stream(h), kNames[kind]);
  else
    host::collective(c, t, addr(d.p), addr(r.p), nelems, d.size, rt, kNames[kind]);
  return true;
}

// put (the remote side is dst) or get (src), blocking or nbi; min(dst, src) bytes.
bool fast_rma(nb::handle dst, nb::handle src, nb::handle remote_pe, nb::handle stream, bool put, bool nbi) {
  State& s = state();
  if (!s.started) return false;
  Arr d, r;
  if (!read_pair(dst.ptr(), src.ptr(), d, r)) return false;
  long long pe = 0;
  if (!as_int(remote_pe.ptr(), pe) || pe < 0 || pe >= s.n_pes) return false;
  const std::size_t bytes = std::min(d.n, r.n) * d.size;
  if (put ? !symmetric(d.p, d.n * d.size) : !symmetric(r.p, r.n * r.size)) return false;
  bool has_stream = false;
  std::uintptr_t h = 0;
  if (!stream_of(stream.ptr(), has_stream, h)) return false;
  static const char* const kNames[2][2] = {{"get", "get_nbi"}, {"put", "put_nbi"}};
  const char* call = kNames[put][nbi];
  const int p = static_cast<int>(pe);
  ++s.taken;
  if (s.dry) return true;
  nb::gil_scoped_release release;
  if (has_stream) {
    if (put)
      host::putmem_on_stream(addr(d.p), addr(r.p), bytes, p, as_stream(h), call);
    else
      host::getmem_on_stream(addr(d.p), addr(r.p), bytes, p, as_stream(h), call);
  } else if (put) {
    host::putmem(addr(d.p), addr(r.p), bytes, p, nbi, call);
  } else {
    host::getmem(addr(d.p), addr(r.p), bytes, p, nbi, call);
  }
  return true;
}

// A signal word as gshmem.core.rma._signal_word reads it: a torch tensor or NumPy array of a type the full path
// read, its dtype int64 or uint64, dense, at least 8 bytes, 8-byte aligned, inside a symmetric region it looked up.
bool signal_word(PyObject* x, std::uint64_t*& word) {
  Arr a;
  if (!read_array(x, a, false)) return false;
  if ((a.code != kInt64 && a.code != kUint64) || a.kind == kBoolKind || a.n * a.size < 8 || a.p % 8) return false;
  if (!symmetric(a.p, a.n * a.size)) return false;
  word = reinterpret_cast<std::uint64_t*>(a.p);
  return true;
}

// A non-negative int that fits 64 bits (the full path's int(value), then nanobind's uint64_t).
bool as_u64(PyObject* x, std::uint64_t& out) {
  if (!PyLong_CheckExact(x)) return false;
  out = PyLong_AsUnsignedLongLong(x);
  if (out == static_cast<std::uint64_t>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// An enum argument as the full path's SignalOp(value) / ComparisonType(value) finds it: an int, a bool or an
// IntEnum member (int subclasses, which the enum looks up by value); anything else (a 0-d tensor, a NumPy integer,
// an object with __index__) goes to the full path, whose lookup may refuse it.
bool enum_value(PyObject* x, long long& v) { return PyLong_Check(x) && long_value(x, v); }

// gshmem.core.rma.SignalOp's values (gshmem.h's GSHMEM_SIGNAL_SET / _ADD).
bool signal_op_code(PyObject* x, int& op) {
  long long v = 0;
  if (!enum_value(x, v) || (v != GSHMEM_SIGNAL_SET && v != GSHMEM_SIGNAL_ADD)) return false;
  op = static_cast<int>(v);
  return true;
}

bool fast_put_signal(nb::handle dst, nb::handle src, nb::handle signal_var, nb::handle signal_val,
                     nb::handle signal_op, nb::handle remote_pe, nb::handle stream, bool nbi) {
  State& s = state();
  if (!s.started) return false;
  Arr d, r;
  if (!read_pair(dst.ptr(), src.ptr(), d, r) || !symmetric(d.p, d.n * d.size)) return false;
  long long pe = 0;
  if (!as_int(remote_pe.ptr(), pe) || pe < 0 || pe >= s.n_pes) return false;
  std::uint64_t* sig = nullptr;
  std::uint64_t value = 0;
  int op = 0;
  if (!signal_word(signal_var.ptr(), sig) || !as_u64(signal_val.ptr(), value) || !signal_op_code(signal_op.ptr(), op))
    return false;
  bool has_stream = false;
  std::uintptr_t h = 0;
  if (!stream_of(stream.ptr(), has_stream, h)) return false;
  const std::size_t bytes = std::min(d.n, r.n) * d.size;
  const char* call = nbi ? "put_signal_nbi" : "put_signal";
  const int p = static_cast<int>(pe);
  ++s.taken;
  if (s.dry) return true;
  nb::gil_scoped_release release;
  if (has_stream)
    host::putmem_signal_on_stream(addr(d.p), addr(r.p), bytes, sig, value, op, p, as_stream(h), call);
  else
    host::putmem_signal(addr(d.p), addr(r.p), bytes, sig, value, op, p, nbi, call);
  return true;
}

bool fast_signal_op(nb::handle signal_var, nb::handle signal_val, nb::handle signal_op, nb::handle remote_pe,
                    nb::handle stream) {
  State& s = state();
  if (!s.started) return false;
  std::uint64_t* sig = nullptr;
  std::uint64_t value = 0;
  int op = 0;
  long long pe = 0;
  if (!signal_word(signal_var.ptr(), sig) || !as_u64(signal_val.ptr(), value) || !signal_op_code(signal_op.ptr(), op) ||
      !as_int(remote_pe.ptr(), pe) || pe < 0 || pe >= s.n_pes)
    return false;
  bool has_stream = false;
  std::uintptr_t h = 0;
  if (!stream_of(stream.ptr(), has_stream, h)) return false;
  const int p = static_cast<int>(pe);
  ++s.taken;
  if (s.dry) return true;
  nb::gil_scoped_release release;
  if (has_stream)
    host::signal_op_on_stream(sig, value, op, p, as_stream(h));
  else
    host::signal_op(sig, value, op, p, "signal_op");
  return true;
}

// signal_wait: NotImplemented where not taken; else what gshmem.core's signal_wait returns (the word's value on CPU
// PEs, None on GPU PEs, where the stream waits).
nb::object fast_signal_wait(nb::handle signal_var, nb::handle signal_val, nb::handle cmp, nb::handle stream) {
  State& s = state();
  const nb::object declined = nb::borrow(Py_NotImplemented);
  std::uint64_t* sig = nullptr;
  std::uint64_t value = 0;
  long long c = -1;
  if (!s.started || !signal_word(signal_var.ptr(), sig) || !as_u64(signal_val.ptr(), value) ||
      !enum_value(cmp.ptr(), c) || c < GSHMEM_CMP_EQ || c > GSHMEM_CMP_GE)
    return declined;
  bool has_stream = false;
  std::uintptr_t h = 0;
  if (!stream_of(stream.ptr(), has_stream, h)) return declined;
  ++s.taken;
  if (s.dry) return nb::none();
  std::uint64_t got = 0;
  {
    nb::gil_scoped_release release;
    if (has_stream)
      host::signal_wait_until_on_stream(sig, static_cast<int>(c), value, as_stream(h));
    else
      got = host::signal_wait_until(sig, static_cast<int>(c), value);
  }
  if (has_stream) return nb::none();
  return nb::int_(got);
}

void forget_all() {
  State& s = state();
  s.hits.clear();
}

}  // namespace

void def_fast_path(nb::module_& m) {
  State& s = state();
  s.s_dtype = PyUnicode_InternFromString("dtype");
  s.s_is_contiguous = PyUnicode_InternFromString("is_contiguous");
  s.s_data_ptr = PyUnicode_InternFromString("data_ptr");
  s.s_numel = PyUnicode_InternFromString("numel");

  // Every object argument may be None (then the call is not taken, except a stream of None).
  const auto any = [](const char* name) { return nb::arg(name).none(); };
  m.def("fast_reduction", &fast_reduction, any("team"), any("dst"), any("src"), any("op"), nb::arg("scatter"),
        any("stream"));
  m.def("fast_collective", &fast_collective, nb::arg("kind"), any("team"), any("dst"), any("src"), any("root"),
        any("stream"));
  m.def("fast_rma", &fast_rma, any("dst"), any("src"), any("remote_pe"), any("stream"), nb::arg("put"),
        nb::arg("nbi"));
  m.def("fast_put_signal", &fast_put_signal, any("dst"), any("src"), any("signal_var"), any("signal_val"),
        any("signal_op"), any("remote_pe"), any("stream"), nb::arg("nbi"));
  m.def("fast_signal_op", &fast_signal_op, any("signal_var"), any("signal_val"), any("signal_op"), any("remote_pe"),
        any("stream"));
  m.def("fast_signal_wait", &fast_signal_wait, any("signal_var"), any("signal_val"), any("cmp"), any("stream"));
  // What gshmem.core teaches it. fast_start(cpu_pes, n_pes, current_stream) after init, fast_stop() at finalize.
  m.def("fast_start", [](bool cpu_pes, int n_pes, nb::object current_stream) {
    State& st = state();
    st.cpu_pes = cpu_pes;
    st.n_pes = n_pes;
    Py_XDECREF(st.current_stream);
    st.current_stream = current_stream.is_none() ? nullptr : current_stream.release().ptr();
    forget_all();
    st.started = true;
  }, nb::arg("cpu_pes"), nb::arg("n_pes"), nb::arg("current_stream").none());
  m.def("fast_stop", [] {
    State& st = state();
    st.started = false;
    forget_all();
  });
  // An array type the full path read: "torch" (attribute calls) or "buffer" (the buffer protocol, NumPy).
  m.def("fast_learn_type", [](nb::handle type, const char* how) {
    State& st = state();
    auto& v = std::strcmp(how, "torch") == 0 ? st.torch_types : st.buffer_types;
    if (!has(v, type.ptr())) {
      Py_INCREF(type.ptr());
      v.push_back(type.ptr());
    }
  });
  // A torch dtype: its collective type code (-1: none) and bytes per element.
  m.def("fast_learn_dtype", [](nb::handle dtype, int code, std::size_t size) {
    State& st = state();
    for (Dtype& e : st.dtypes)
      if (e.dtype == dtype.ptr()) {
        if (code != kNoCode) e.code = code;
        return;
      }
    Py_INCREF(dtype.ptr());
    st.dtypes.push_back({dtype.ptr(), code, size});
  });
  // A stream type and how the full path reads it: "protocol_call" (__cuda_stream__() -> (version, handle)),
  // "protocol_attr" (__cuda_stream__ as a value), or the name of the attribute holding the handle.
  m.def("fast_learn_stream", [](nb::handle type, const std::string& how) {
    State& st = state();
    for (const auto& e : st.stream_types)
      if (e.type == type.ptr()) return;
    State::StreamHow h = how == "protocol_call"   ? State::StreamHow::ProtocolCall
                         : how == "protocol_attr" ? State::StreamHow::ProtocolAttr
                                                  : State::StreamHow::Attr;
    const char* name = h == State::StreamHow::Attr ? how.c_str() : "__cuda_stream__";
    Py_INCREF(type.ptr());
    st.stream_types.push_back({type.ptr(), h, PyUnicode_InternFromString(name)});
  });
  m.def("fast_hit", [](std::uintptr_t p, std::uintptr_t end) { state().hits[p] = end; });
  m.def("fast_forget", [] { forget_all(); });
  m.def("fast_stats", [] { return state().taken; });
  m.def("fast_dry", [](bool on) { state().dry = on; });
}
