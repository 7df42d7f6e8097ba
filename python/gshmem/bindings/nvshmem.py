"""nvshmem4py's nvshmem.bindings.nvshmem over gshmem: NVSHMEM's host calls one for one, addresses and streams as
ints (`tensor.data_ptr()`, `buffer.handle`, `torch.cuda.current_stream().cuda_stream`), statuses raised as
NVSHMEMError, the init and team structs as NumPy-backed objects with `.ptr`, NVSHMEM's enums as IntEnums.

Each call goes straight to libgshmem's C function of the same name (gshmem_<name> or gshmemx_<name>) through
ctypes, on the library gshmem.core loaded, so the two mix freely: start with gshmem.core.init() and call these, or
start here (get_uniqueid, set_attr_uniqueid_args, hostlib_init_attr) and use gshmem.core after.

Where gshmem differs (python/README.md, "gshmem.bindings"): the *_on_stream calls raise NVSHMEMError
(ERROR_NOT_SUPPORTED) on CPU PEs instead of ending the job; float/double atomic_add and atomic_fetch_add (no C
function in gshmem) are a compare-and-swap loop; flush_on_stream is quiet_on_stream;
buffer_register_symmetric_at_preferred_address registers where buffer_register_symmetric would.
"""
import ctypes as _ct
import operator as _operator
from enum import IntEnum as _IntEnum

import numpy as _numpy

from gshmem import _gshmem
from gshmem.core.direct import InitStatus as _InitStatus, SmemAmount as _SmemAmount, ThreadSupport as _ThreadSupport
from gshmem.core.init_fini import UNIQUEID_DTYPE as _UNIQUEID_DTYPE
from gshmem.core.rma import ComparisonType as _ComparisonType
from gshmem.core.types import state as _state

_lib = _ct.CDLL(_gshmem.library_path())  # the library gshmem.core loaded (dlopen returns the same handle)

# NVSHMEM's API level that gshmem reports (gshmem.core.types, from the compat headers; python/tests check they
# agree).
from gshmem.core.types import NVSHMEM_VENDOR_VERSION as _VENDOR_VERSION  # noqa: E402
from gshmem.core.types import OPENSHMEM_VERSION as _OPENSHMEM_VERSION  # noqa: E402

###############################################################################
# Structs (NVSHMEM 3.4.5's layouts, which gshmem's C structs have: include/gshmem/gshmem.h)
###############################################################################

uniqueid_dtype = _UNIQUEID_DTYPE  # gshmem.core's UniqueID holds the same 128 bytes
init_attr_dtype = _numpy.dtype([("version", _numpy.int32), ("mpi_comm", _numpy.intp),
                                ("args", _numpy.int8, (128,))], align=True)
team_config_dtype = _numpy.dtype([("version", _numpy.int32), ("num_contexts", _numpy.int32),
                                  ("uniqueid", _numpy.uint64), ("padding", _numpy.int8, (48,))], align=True)
assert uniqueid_dtype.itemsize == 128 and init_attr_dtype.itemsize == 144 and team_config_dtype.itemsize == 64

# Layout versions, (major << 16) + size, as GSHMEMX_*_VERSION / NVSHMEM's.
_UNIQUEID_VERSION = (1 << 16) + 128
_UNIQUEID_ARGS_VERSION = (1 << 16) + 24
_INIT_ARGS_VERSION = (1 << 16) + 128
_INIT_ATTR_VERSION = (1 << 16) + 144
_TEAM_CONFIG_VERSION = (2 << 16) + 64


class _Pod:
    """A NumPy record array holding one or more C structs; `.ptr` is its address, to pass to the calls."""

    _dtype = None

    def __init__(self, size=1):
        self._data = _numpy.zeros(size, dtype=self._dtype).view(_numpy.recarray)

    @classmethod
    def from_data(cls, data):
        if not isinstance(data, _numpy.ndarray) or data.ndim != 1 or data.dtype != cls._dtype:
            raise ValueError(f"{cls.__name__}.from_data: a 1-D NumPy array of dtype {cls._dtype} is needed "
                             f"(got {type(data).__name__})")
        obj = cls.__new__(cls)
        obj._data = data.view(_numpy.recarray)
        return obj

    @classmethod
    def from_ptr(cls, ptr, size=1, readonly=False):
        """A view of `size` structs at address `ptr` (the memory stays the caller's)."""
        if not ptr:
            raise ValueError(f"{cls.__name__}.from_ptr: ptr must not be null (0)")
        raw = (_ct.c_char * (cls._dtype.itemsize * size)).from_address(int(ptr))
        data = _numpy.ndarray((size,), dtype=cls._dtype, buffer=raw)
        data.flags.writeable = not readonly
        return cls.from_data(data)

    @property
    def ptr(self):
        return self._data.ctypes.data

    def __int__(self):
        if self._data.size > 1:
            raise TypeError(f"int() of a {type(self).__name__} array of {self._data.size}: use .ptr")
        return self.ptr

    def __len__(self):
        return self._data.size

    def __bytes__(self):
        # the structs' bytes: in nvshmem4py core.UniqueID is bindings.uniqueid, so programs hand a bindings id to
        # nvshmem.core.init(uid=...), which takes bytes(uid)
        return self._data.tobytes()

    def __eq__(self, other):
        return (type(other) is type(self) and self._data.size == other._data.size and
                bool((self._data == other._data).all()))

    __hash__ = None

    def __getitem__(self, key):
        if isinstance(key, int):  # one struct, still a view of this array (key -1: [-1:None])
            return type(self).from_data(self._data[key:key + 1 or None])
        out = self._data[key]
        if isinstance(out, _numpy.ndarray) and out.dtype == self._dtype:
            return type(self).from_data(out)
        return out

    def __setitem__(self, key, value):
        self._data[key] = value

    def _field(self, name):
        values = getattr(self._data, name)
        return int(values[0]) if self._data.size == 1 else values

    def __repr__(self):
        return f"<gshmem.bindings.{type(self).__name__} of {self._data.size} at {hex(self.ptr)}>"


class uniqueid(_Pod):
    """nvshmemx_uniqueid_t (128 bytes): filled by get_uniqueid, read by set_attr_uniqueid_args."""

    _dtype = uniqueid_dtype

    def __init__(self, size=1):
        super().__init__(size)
        self._data.version = _UNIQUEID_VERSION

    version = property(lambda self: self._field("version"),
                       lambda self, v: setattr(self._data, "version", v))


class UniqueId(uniqueid):
    pass


class team_uniqueid:
    """nvshmemx_team_uniqueid_t (a uint64) with `.ptr` and `.value`."""

    def __init__(self, value=0):
        self._data = _numpy.array([value], dtype=_numpy.uint64)

    ptr = property(lambda self: self._data.ctypes.data)
    value = property(lambda self: int(self._data[0]), lambda self, v: self._data.__setitem__(0, v))

    def __repr__(self):
        return f"team_uniqueid(value={self.value})"


class TeamUniqueId(team_uniqueid):
    pass


class InitAttr(_Pod):
    """nvshmemx_init_attr_t (144 bytes): set_attr_uniqueid_args / set_attr_mpi_comm_args fill it for
    hostlib_init_attr. The layout versions are stamped here and again by hostlib_init_attr."""

    _dtype = init_attr_dtype

    def __init__(self):
        super().__init__(1)
        _stamp_init_attr(self.ptr)

    version = property(lambda self: self._field("version"),
                       lambda self, v: setattr(self._data, "version", v))
    mpi_comm = property(lambda self: self._field("mpi_comm"),
                        lambda self, v: setattr(self._data, "mpi_comm", v))


class TeamConfig(_Pod):
    """nvshmem_team_config_t (64 bytes, version 2): NVSHMEM_TEAM_CONFIG_INITIALIZER's values. gshmem has no
    communication contexts: num_contexts is accepted and not used; uniqueid is what team_init's members meet by."""

    _dtype = team_config_dtype

    def __init__(self):
        super().__init__(1)
        self._data.version = _TEAM_CONFIG_VERSION
        self._data.num_contexts = -1
        self._data.uniqueid = _numpy.iinfo(_numpy.uint64).max

    version = property(lambda self: self._field("version"),
                       lambda self, v: setattr(self._data, "version", v))
    num_contexts = property(lambda self: self._field("num_contexts"),
                            lambda self, v: setattr(self._data, "num_contexts", v))
    uniqueid = property(lambda self: self._field("uniqueid"),
                        lambda self, v: setattr(self._data, "uniqueid", v))


def _stamp_init_attr(attr):
    """nvshmemx_init_init_attr_ver_only on the struct at address `attr`: the versions of the attr, its args and
    the args' uid_args (offsets 0, 16 and 24 of the 144-byte layout)."""
    for offset, version in ((0, _INIT_ATTR_VERSION), (16, _INIT_ARGS_VERSION), (24, _UNIQUEID_ARGS_VERSION)):
        _ct.c_int32.from_address(attr + offset).value = version

###############################################################################
# Enums (values of gshmem's C API, which are NVSHMEM 3.4.5's)
###############################################################################


class Signal_op(_IntEnum):
    SIGNAL_SET = 9
    SIGNAL_ADD = 10


class Team_id(_IntEnum):
    TEAM_INVALID = -1
    TEAM_WORLD = 0
    TEAM_WORLD_INDEX = 0
    TEAM_SHARED = 1
    TEAM_SHARED_INDEX = 1
    TEAM_NODE = 2
    TEAM_NODE_INDEX = 2
    TEAM_SAME_MYPE_NODE = 3
    TEAM_SAME_MYPE_NODE_INDEX = 3
    TEAM_SAME_GPU_INDEX = 4
    TEAM_GPU_LEADERS_INDEX = 5
    TEAMS_MIN = 6


Smem_amount = _IntEnum("Smem_amount", [(m.name, int(m)) for m in _SmemAmount])


class Region_hint(_IntEnum):
    NONE = 0
    BATCH_RMA = 1


# gshmem.core's enums with nvshmem4py's extra sentinel members (the same values, one definition).
Cmp_type = _IntEnum("Cmp_type", [(m.name, int(m)) for m in _ComparisonType] + [("CMP_SENTINEL", 2**31 - 1)])


Thread_support = _IntEnum("Thread_support", [(m.name, int(m)) for m in _ThreadSupport])


Init_status = _IntEnum("Init_status", [(m.name, int(m)) for m in _InitStatus])


class Status(_IntEnum):
    SUCCESS = 0
    ERROR_INVALID_VALUE = 1
    ERROR_OUT_OF_MEMORY = 2
    ERROR_NOT_SUPPORTED = 3
    ERROR_SYMMETRY = 4
    ERROR_GPU_NOT_SELECTED = 5
    ERROR_COLLECTIVE_LAUNCH_FAILED = 6
    ERROR_INTERNAL = 7
    ERROR_SENTINEL = 8


class Flags(_IntEnum):
    INIT_THREAD_PES = 1
    INIT_WITH_MPI_COMM = 1 << 1
    INIT_WITH_SHMEM = 1 << 2
    INIT_WITH_UNIQUEID = 1 << 3
    INIT_MAX = 1 << 31

###############################################################################
# Errors
###############################################################################


class NVSHMEMError(Exception):
    """A call returned a status other than 0. `.status` is it; the message is gshmem's, naming the call, the cause
    and the fix (nvshmem4py's says only the code)."""

    def __init__(self, status, msg=None):
        self.status = status
        self.msg = msg or f"Status code {status}"
        super().__init__(self.msg)

    def __reduce__(self):
        return (type(self), (self.status, self.msg))


def check_status(status, call="gshmem.bindings"):
    if status != 0:
        detail = _gshmem.last_error()
        raise NVSHMEMError(status, f"{call}: status {status}" + (f": {detail}" if detail else ""))

###############################################################################
# The calls
###############################################################################

class _P(_ct.c_void_p):
    """An address argument: a Python int, anything with __index__ (NumPy integers, as nvshmem4py's intptr_t takes),
    or None / 0 for NULL."""

    @classmethod
    def from_param(cls, value):
        return _ct.c_void_p(None if value is None else _operator.index(value))


_I = _ct.c_int
_TEAM = _ct.c_int32
_SZ = _ct.c_size_t
_U64 = _ct.c_uint64
_L = _ct.c_long
_STATUS = object()  # marks a call whose int result is a status to raise on

__all__ = ["NVSHMEMError", "check_status", "uniqueid", "UniqueId", "team_uniqueid", "TeamUniqueId", "InitAttr",
           "TeamConfig", "uniqueid_dtype", "init_attr_dtype", "team_config_dtype", "Signal_op", "Team_id",
           "Smem_amount", "Region_hint", "Cmp_type", "Thread_support", "Init_status", "Status", "Flags"]


def _symbol(name):
    for prefix in ("gshmem_", "gshmemx_"):
        try:
            return getattr(_lib, prefix + name)
        except AttributeError:
            pass
    raise AttributeError(f"gshmem.bindings: libgshmem has no gshmem_{name} or gshmemx_{name}")


def _on_gpu_pes(call):
    """Stream calls need GPU PEs: on a CPU PE raise here rather than let the C call end the job."""
    if _state.initialized and _state.cpu_pes:  # set by gshmem.core.init and by hostlib_init_attr
        raise NVSHMEMError(Status.ERROR_NOT_SUPPORTED,
                           f"gshmem.bindings.{call}: stream calls need GPU PEs and this PE runs on the CPU "
                           "(GSHMEM_DEVICE=cpu, or no GPU). Fix: use the blocking host call (gshmem.core's put, "
                           "barrier_all, reduce, ... with stream=None) on CPU PEs, or run on GPUs")


def _define(name, restype, argtypes, c_name=None, on_stream=None):
    """Adds `name` to this module: the C function gshmem[x]_<c_name or name>, with ctypes' conversions."""
    fn = _symbol(c_name or name)
    # statuses are ints; addresses come back as plain c_void_p (a subclass would come back as itself, not an int)
    fn.restype = _I if restype is _STATUS else _ct.c_void_p if restype is _P else restype
    fn.argtypes = argtypes
    if on_stream is None:
        on_stream = name.endswith("_on_stream")

    if restype is _STATUS:
        def call(*args):
            if on_stream:
                _on_gpu_pes(name)
            check_status(fn(*args), name)
    elif on_stream:
        def call(*args):
            _on_gpu_pes(name)
            return fn(*args)
    else:
        call = fn
        if restype is _P:  # pointers come back as ints, NULL as 0 (ctypes gives None)
            def call(*args):
                return fn(*args) or 0
    if call is not fn:
        call.__name__ = call.__qualname__ = name
        call.__doc__ = f"gshmem.bindings.{name}: the C call {fn.__name__}."
    globals()[name] = call
    __all__.append(name)


# ---- init and queries ----
_define("barrier", _STATUS, [_TEAM])
_define("barrier_all", None, [])
_define("init_status", _I, [])
_define("query_thread", None, [_P])
_define("my_pe", _I, [])
_define("n_pes", _I, [])
_define("info_get_name", None, [_P])
_define("malloc", _P, [_SZ])
_define("calloc", _P, [_SZ, _SZ])
_define("align", _P, [_SZ, _SZ])
_define("free", None, [_P])
_define("ptr", _P, [_P, _I])
_define("mc_ptr", _P, [_TEAM, _P])
_define("signal_fetch", _U64, [_P])
_define("team_my_pe", _I, [_TEAM])
_define("team_n_pes", _I, [_TEAM])
_define("team_get_config", None, [_TEAM, _P])
_define("team_translate_pe", _I, [_TEAM, _I, _TEAM])
_define("team_split_strided", _STATUS, [_TEAM, _I, _I, _I, _P, _L, _P])
_define("team_split_2d", _STATUS, [_TEAM, _I, _P, _L, _P, _P, _L, _P])
_define("team_destroy", None, [_TEAM])
_define("set_attr_uniqueid_args", _STATUS, [_I, _I, _P, _P])
_define("set_attr_mpi_comm_args", _STATUS, [_P, _P])
_define("get_uniqueid", _STATUS, [_P])
_define("cumodule_init", _I, [_P], on_stream=False)
_define("cumodule_finalize", _I, [_P], on_stream=False)
_define("culibrary_init", _I, [_P], on_stream=False)
_define("culibrary_finalize", _I, [_P], on_stream=False)
_define("buffer_register_symmetric", _P, [_P, _SZ, _I])
_define("buffer_unregister_symmetric", _I, [_P, _SZ])


def info_get_version(major, minor):
    """Writes NVSHMEM's OpenSHMEM level (1, 3) to the ints at `major` and `minor` (either may be 0)."""
    for address, value in zip((major, minor), _OPENSHMEM_VERSION):
        if address:
            _ct.c_int.from_address(address).value = value


def vendor_get_version_info(major, minor, patch):
    """Writes the NVSHMEM API level gshmem provides (3, 4, 5) to the ints at `major`, `minor`, `patch`."""
    for address, value in zip((major, minor, patch), _VENDOR_VERSION):
        if address:
            _ct.c_int.from_address(address).value = value


_lib.gshmemxi_hostlib_init_attr.restype = _I
_lib.gshmemxi_hostlib_init_attr.argtypes = [_ct.c_uint, _P, _I, _I, _I]


def hostlib_init_attr(flags, attr):
    """Starts this PE as nvshmemx_hostlib_init_attr does (gshmem has one library: this is its init): `flags` 0 (the
    environment, as gshmem_init), INIT_WITH_UNIQUEID or INIT_WITH_MPI_COMM with `attr` filled by
    set_attr_uniqueid_args / set_attr_mpi_comm_args (an address, e.g. InitAttr().ptr; 0 with flags 0). Its layout
    versions are stamped first, so a struct never initialised works. gshmem.core is usable afterwards; called while
    already initialised it nests, as init does (each needs its hostlib_finalize)."""
    from gshmem.core import init_fini
    if init_fini.state.initialized:
        init_fini.state.init_count += 1
        return
    if attr:
        _stamp_init_attr(attr)
    major, minor, patch = _gshmem.VERSION
    check_status(_lib.gshmemxi_hostlib_init_attr(flags, attr or None, major, minor, patch), "hostlib_init_attr")
    init_fini._started()


def hostlib_finalize():
    """Ends this PE (gshmem.core's finalize: what it still tracks is freed); after a nested start, only the last."""
    from gshmem.core import init_fini
    init_fini.finalize()


_define("team_get_uniqueid", _STATUS, [_P])
_define("team_init", _STATUS, [_P, _P, _L, _I, _I])


def buffer_register_symmetric_at_preferred_address(buf_ptr, size, preferred_addr, flags):
    """buffer_register_symmetric: gshmem places registered buffers itself (at the top of each PE's heap slot), so
    the preferred address is not used; the returned address is where the buffer is, as NVSHMEM's may be too."""
    return buffer_register_symmetric(buf_ptr, size, flags)


__all__ += ["info_get_version", "vendor_get_version_info", "hostlib_init_attr", "hostlib_finalize",
            "buffer_register_symmetric_at_preferred_address"]

# ---- host atomics: NVSHMEM's type lists ----
_AMO_STANDARD = {"uint": _ct.c_uint, "ulong": _ct.c_ulong, "ulonglong": _ct.c_ulonglong, "int32": _ct.c_int32,
                 "uint32": _ct.c_uint32, "int64": _ct.c_int64, "uint64": _ct.c_uint64, "int": _ct.c_int,
                 "long": _ct.c_long, "longlong": _ct.c_longlong, "size": _ct.c_size_t, "ptrdiff": _ct.c_ssize_t}
_AMO_EXTENDED = dict(_AMO_STANDARD, float=_ct.c_float, double=_ct.c_double)
_AMO_BITWISE = {k: _AMO_STANDARD[k] for k in ("uint", "ulong", "ulonglong", "int32", "uint32", "int64", "uint64")}

for _n, _t in _AMO_STANDARD.items():
    _define(f"{_n}_atomic_inc", None, [_P, _I])
    _define(f"{_n}_atomic_fetch_inc", _t, [_P, _I])
    _define(f"{_n}_atomic_add", None, [_P, _t, _I])
    _define(f"{_n}_atomic_fetch_add", _t, [_P, _t, _I])
    _define(f"{_n}_atomic_compare_swap", _t, [_P, _t, _t, _I])
for _n, _t in _AMO_EXTENDED.items():
    _define(f"{_n}_atomic_fetch", _t, [_P, _I])
    _define(f"{_n}_atomic_set", None, [_P, _t, _I])
    _define(f"{_n}_atomic_swap", _t, [_P, _t, _I])
for _n, _t in _AMO_BITWISE.items():
    for _op in ("and", "or", "xor"):
        _define(f"{_n}_atomic_{_op}", None, [_P, _t, _I])
        _define(f"{_n}_atomic_fetch_{_op}", _t, [_P, _t, _I])


def _float_fetch_add(name, ftype, bits):
    """<float|double>_atomic_fetch_add: gshmem's C API has no floating add, so a compare-and-swap loop on the word's
    bits (uint32 / uint64), atomic as a whole like NVSHMEM's; the sum is rounded as C's (float + float in float32:
    an overflow gives inf)."""
    fetch = globals()[f"uint{bits}_atomic_fetch"]
    cas = globals()[f"uint{bits}_atomic_compare_swap"]
    utype = _numpy.uint32 if bits == 32 else _numpy.uint64

    def fetch_add(dest, value, pe):
        old = fetch(dest, pe)
        with _numpy.errstate(over="ignore", invalid="ignore"):
            while True:
                was = utype(old).view(ftype)
                seen = cas(dest, old, int((was + ftype(value)).view(utype)), pe)
                if seen == old:
                    return float(was)
                old = seen

    def add(dest, value, pe):
        fetch_add(dest, value, pe)

    fetch_add.__name__ = fetch_add.__qualname__ = f"{name}_atomic_fetch_add"
    add.__name__ = add.__qualname__ = f"{name}_atomic_add"
    globals()[fetch_add.__name__] = fetch_add
    globals()[add.__name__] = add
    __all__.extend([fetch_add.__name__, add.__name__])


_float_fetch_add("float", _numpy.float32, 32)
_float_fetch_add("double", _numpy.float64, 64)

# ---- collectives on streams: NVSHMEM's type lists; half and bfloat16 through the typeless entries ----
_COLL_TYPES = ("bfloat16", "half", "float", "double", "char", "short", "schar", "int", "long", "longlong", "int8",
               "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "size")
_REDUCE_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "size", "char", "schar",
                 "short", "int", "long", "longlong", "bfloat16", "half", "float", "double")
_SIXTEEN = {"half": 10, "bfloat16": 11}  # GSHMEMI_REDUCE_HALF / _BFLOAT16
_COLL_KIND = {"broadcast": 0, "fcollect": 1, "alltoall": 2}  # GSHMEMI_COLL_*
_REDUCE_OP = {"max": 3, "min": 4, "sum": 5}  # GSHMEMI_REDUCE_*
_lib.gshmemi_collective.restype = _I
_lib.gshmemi_collective.argtypes = [_I, _TEAM, _P, _P, _SZ, _SZ, _I, _ct.c_ssize_t, _ct.c_ssize_t, _I, _P,
                                    _ct.c_char_p]
_lib.gshmemi_reduction.restype = _I
_lib.gshmemi_reduction.argtypes = [_I, _I, _I, _TEAM, _P, _P, _SZ, _I, _P, _ct.c_char_p]


def _sixteen_coll(kind, t):
    name = f"{t}_{kind}_on_stream"
    label = f"nvshmemx_{name}".encode()
    if kind == "broadcast":
        def call(team, dest, src, nelem, pe_root, stream):
            _on_gpu_pes(name)
            check_status(_lib.gshmemi_collective(_COLL_KIND[kind], team, dest, src, nelem, 2, pe_root, 0, 0, 1,
                                                 stream, label), name)
    else:
        def call(team, dest, src, nelem, stream):
            _on_gpu_pes(name)
            check_status(_lib.gshmemi_collective(_COLL_KIND[kind], team, dest, src, nelem, 2, 0, 0, 0, 1, stream,
                                                 label), name)
    return name, call


def _sixteen_reduce(op, t, scatter):
    name = f"{t}_{op}_{'reducescatter' if scatter else 'reduce'}_on_stream"
    label = f"nvshmemx_{name}".encode()

    def call(team, dest, src, nreduce, stream):
        _on_gpu_pes(name)
        check_status(_lib.gshmemi_reduction(_REDUCE_OP[op], _SIXTEEN[t], int(scatter), team, dest, src, nreduce, 1,
                                            stream, label), name)
    return name, call


for _t in _COLL_TYPES:
    for _kind in ("alltoall", "broadcast", "fcollect"):
        if _t in _SIXTEEN:
            _name, _call = _sixteen_coll(_kind, _t)
            _call.__name__ = _call.__qualname__ = _name
            globals()[_name] = _call
            __all__.append(_name)
        elif _kind == "broadcast":
            _define(f"{_t}_broadcast_on_stream", _STATUS, [_TEAM, _P, _P, _SZ, _I, _P])
        else:
            _define(f"{_t}_{_kind}_on_stream", _STATUS, [_TEAM, _P, _P, _SZ, _P])
for _scatter in (False, True):
    for _op in _REDUCE_OP:
        for _t in _REDUCE_TYPES:
            if _t in _SIXTEEN:
                _name, _call = _sixteen_reduce(_op, _t, _scatter)
                _call.__name__ = _call.__qualname__ = _name
                globals()[_name] = _call
                __all__.append(_name)
            else:
                _define(f"{_t}_{_op}_{'reducescatter' if _scatter else 'reduce'}_on_stream", _STATUS,
                        [_TEAM, _P, _P, _SZ, _P])

# ---- synchronisation and RMA on streams ----
_define("barrier_on_stream", _STATUS, [_TEAM, _P])
_define("barrier_all_on_stream", None, [_P])
_define("team_sync_on_stream", _I, [_TEAM, _P])
_define("sync_all_on_stream", None, [_P])
_define("putmem_on_stream", None, [_P, _P, _SZ, _I, _P])
_define("putmem_nbi_on_stream", None, [_P, _P, _SZ, _I, _P])
_define("putmem_signal_on_stream", None, [_P, _P, _SZ, _P, _U64, _I, _I, _P])
_define("putmem_signal_nbi_on_stream", None, [_P, _P, _SZ, _P, _U64, _I, _I, _P])
_define("getmem_on_stream", None, [_P, _P, _SZ, _I, _P])
_define("getmem_nbi_on_stream", None, [_P, _P, _SZ, _I, _P])
_define("quiet_on_stream", None, [_P])
_define("flush_on_stream", None, [_P], c_name="quiet_on_stream")  # a flush is weaker than quiet, so quiet does
_define("signal_op_on_stream", None, [_P, _U64, _I, _I, _P])
_define("signal_wait_until_on_stream", None, [_P, _I, _U64, _P])

del _n, _t, _op, _kind, _scatter, _name, _call
