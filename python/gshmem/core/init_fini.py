"""init, finalize, unique ids and the PE queries."""
import atexit
import enum
import operator
import os
import sys

import numpy as np

from gshmem import _gshmem
from gshmem.core import memory
from gshmem.core._interop import DLPACK_CPU, DLPACK_CUDA, _current_stream
from gshmem.core.modules import library_finalize, library_init, module_finalize, module_init  # nvshmem4py's home
from gshmem.core.types import (NVSHMEM4PY_VERSION, NVSHMEM_VENDOR_VERSION, OPENSHMEM_VERSION, GshmemInvalid,
                               GshmemNotSupported, Version, require_init, state)

__all__ = ["UniqueID", "get_unique_id", "init", "finalize", "my_pe", "n_pes", "team_my_pe", "team_n_pes",
           "get_version", "get_name", "module_init", "module_finalize", "library_init", "library_finalize",
           "DeviceLibLanguage", "find_device_bitcode_library"]


# nvshmem4py's unique id (nvshmemx_uniqueid_v1): a one-element NumPy record array, so the programs' ways of moving
# it work unchanged: comm.Bcast(uid._data.view(np.int8), root=0) into an empty one, uid._data.view(np.uint8)[:] =
# received bytes, uid._data[:] = received.view(uid._data.dtype), pickling (torch's broadcast_object_list).
UNIQUEID_DTYPE = np.dtype([("version", np.int32), ("internal", np.int8, (124,))], align=True)


class UniqueID:
    """The 128 bytes that UID-based init shares between processes: ._data (a NumPy record array, written in place
    by MPI broadcasts), .ptr, .version; bytes(uid) and UniqueID(b) (gshmem's additions)."""

    __slots__ = ("_arr",)

    def __init__(self, data=None):
        self._arr = np.zeros(1, UNIQUEID_DTYPE).view(np.recarray)
        if data is not None:
            raw = bytes(data)
            if len(raw) != _gshmem.UNIQUEID_BYTES:
                raise GshmemInvalid(f"UniqueID: {len(raw)} bytes, a unique id is {_gshmem.UNIQUEID_BYTES}")
            self._arr.view(np.uint8)[:] = np.frombuffer(raw, np.uint8)

    @property
    def _data(self):
        return self._arr

    @_data.setter
    def _data(self, value):  # nvshmem4py's examples assign a received array back (uid._data = t.numpy())
        a = np.ascontiguousarray(value)
        if a.nbytes != UNIQUEID_DTYPE.itemsize:
            raise GshmemInvalid(f"UniqueID._data: {a.nbytes} bytes, a unique id is {UNIQUEID_DTYPE.itemsize}")
        self._arr = a.reshape(-1).view(np.uint8).view(UNIQUEID_DTYPE).view(np.recarray)

    @property
    def ptr(self):
        return self._arr.ctypes.data

    @property
    def version(self):
        return int(self._arr.version[0])

    def __len__(self):
        return 1

    def __bytes__(self):
        return self._arr.tobytes()

    def __eq__(self, other):
        return isinstance(other, UniqueID) and bytes(other) == bytes(self)

    def __hash__(self):
        return hash(bytes(self))

    def __reduce__(self):  # picklable, e.g. for torch.distributed.broadcast_object_list
        return (UniqueID, (bytes(self),))

    def __repr__(self):
        return f"<gshmem.core.UniqueID version={self.version}>"


def get_unique_id(empty=False):
    """A new unique id (one process calls this and shares it); empty=True: an empty one to receive into."""
    return UniqueID() if empty else UniqueID(_gshmem.get_unique_id())


def _select_device(device):
    """Makes `device` current before init, so gshmem takes it: a cuda.core Device (set_current), an int or a
    torch.device (through torch)."""
    if device is None:
        return
    if hasattr(device, "set_current"):
        device.set_current()
        return
    torch = sys.modules.get("torch")
    if torch is None:
        raise GshmemInvalid(f"init: device={device!r}: pass a cuda.core Device (or import torch to pass an int or a "
                            "torch.device), or leave it out: gshmem then takes the GPU of this PE's local rank")
    torch.cuda.set_device(device)


def _init_mpi(mpi_comm):
    """nvshmem4py's MPI start over an mpi4py communicator (None: MPI.COMM_WORLD, as nvshmem4py): PE i is rank i of
    mpi_comm. Rank 0's unique id goes to the others by MPI broadcast, then every rank starts from it (any MPI that
    mpi4py runs on)."""
    if mpi_comm is None:
        try:
            from mpi4py import MPI
        except ImportError:
            raise GshmemInvalid("init: initializer_method=\"mpi\" without mpi_comm uses MPI.COMM_WORLD, and mpi4py "
                                "is not installed. Fix: pip install mpi4py, or use initializer_method=\"uid\""
                                ) from None
        mpi_comm = MPI.COMM_WORLD
    if not hasattr(mpi_comm, "bcast") or not hasattr(mpi_comm, "Get_rank"):
        raise GshmemInvalid(f"init: initializer_method=\"mpi\" needs mpi_comm=<an mpi4py communicator>, got "
                            f"{mpi_comm!r}. Fix: init(mpi_comm=MPI.COMM_WORLD, initializer_method=\"mpi\")")
    rank, nranks = mpi_comm.Get_rank(), mpi_comm.Get_size()
    uid = mpi_comm.bcast(_gshmem.get_unique_id() if rank == 0 else None, root=0)
    _gshmem.init_uid(uid, rank, nranks)


_exit_hook_registered = []
_unhandled = []  # the exception that ended the program, recorded by the excepthook wrapper


def _record_unhandled(hook):
    def wrapper(typ, value, tb):
        _unhandled[:] = [value]
        return hook(typ, value, tb)
    return wrapper


def _leave_if_unhandled():
    """At interpreter exit while this PE is still initialised (the program ended on an unhandled exception, called
    sys.exit, or returned without finalize()): tell the other PEs now, naming the exception if there was one.
    Without this they wait for this PE until GSHMEM_WAIT_TIMEOUT, and under mpirun the ending itself can block
    (mpi4py's MPI_Finalize waits for ranks that wait for this PE). atexit runs its functions last registered
    first, so a finalize() registered after init still runs before this; one registered before init runs after
    it and finds the PE gone. A child made with fork() after init is not the PE: it says nothing."""
    if not state.initialized or os.getpid() != state.init_pid:
        return
    exc = _unhandled[0] if _unhandled else None
    how = (f"its Python program ended on an unhandled {type(exc).__name__}: {exc}" if exc is not None
           else "its Python program ended (returned or called sys.exit) without finalize()")
    _gshmem.leave(how[:300])


def _register_exit_hook():
    if not _exit_hook_registered:
        atexit.register(_leave_if_unhandled)
        sys.excepthook = _record_unhandled(sys.excepthook)
        _exit_hook_registered.append(True)


def init(device=None, uid=None, rank=None, nranks=None, mpi_comm=None, initializer_method="", except_on_del=True):
    """Starts this PE.

    With no arguments (gshmem's addition; nvshmem4py requires a method): from the environment, as gshmem_init does
    (gshmemrun, mpirun, torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, else a single PE).
    initializer_method="uid": uid (from get_unique_id on one process), rank and nranks. "mpi" / "emulated_mpi":
    mpi_comm, an mpi4py communicator. device: the GPU to use (a cuda.core Device, an int or torch.device); without
    it the GPU current at init, else the one of this PE's local rank. On GPU PEs torch's current device (when the
    program imported torch) is set to the PE's GPU, so tensors it makes are beside the symmetric heap.
    except_on_del (nvshmem4py 0.1's keyword: raise or log when a buffer is dropped without free()): accepted; gshmem
    never frees on garbage collection (finalize() frees what is left), so there is nothing to report.
    """
    if state.initialized:  # nvshmem4py (NVSHMEM) counts nested init calls: each needs its finalize()
        state.init_count += 1
        return
    if initializer_method in ("", None):
        if uid is not None or mpi_comm is not None:
            raise GshmemInvalid("init: uid or mpi_comm given without initializer_method. "
                                "Fix: pass initializer_method=\"uid\" (or \"mpi\")")
        _select_device(device)
        _gshmem.init()
    elif initializer_method == "uid":
        if uid is None or rank is None or nranks is None or mpi_comm is not None:
            raise GshmemInvalid(f"init: initializer_method=\"uid\" needs uid, rank and nranks (got uid={uid!r}, "
                                f"rank={rank!r}, nranks={nranks!r}) and no mpi_comm")
        if not 0 <= int(rank) < int(nranks):
            raise GshmemInvalid(f"init: rank={rank} is out of range for nranks={nranks}")
        _select_device(device)
        _gshmem.init_uid(bytes(uid), int(rank), int(nranks))
    elif initializer_method in ("mpi", "emulated_mpi"):
        _select_device(device)
        _init_mpi(mpi_comm)
    else:
        raise GshmemInvalid(f"init: initializer_method={initializer_method!r}; valid: \"uid\", \"mpi\", "
                            "\"emulated_mpi\" or none (the environment)")
    _started()


def _started():
    """What init does once the library has started this PE (here, or gshmem.bindings.hostlib_init_attr)."""
    ordinal, _ = _gshmem.device()
    state.cpu_pes = ordinal < 0
    state.device = (DLPACK_CPU, 0) if state.cpu_pes else (DLPACK_CUDA, ordinal)
    state.n_pes = _gshmem.n_pes()
    state.initialized = True
    state.init_count = 1
    state.generation += 1
    state.init_pid = os.getpid()
    memory._hits.clear()  # the fast path starts with no regions; so does the lookup cache it mirrors
    _gshmem.fast_start(state.cpu_pes, state.n_pes, None if state.cpu_pes else _current_stream)
    _register_exit_hook()
    torch = sys.modules.get("torch")
    if not state.cpu_pes and torch is not None and torch.cuda.is_available():
        torch.cuda.set_device(ordinal)


def finalize():
    """Frees what gshmem.core still tracks (buffers, arrays, tensors, registered regions) and ends this PE. After a
    nested init() (init called again while initialized), only the last finalize() ends it."""
    require_init("finalize")
    state.init_count -= 1
    if state.init_count > 0:
        return
    memory._free_all()
    state.initialized = False
    _gshmem.fast_stop()
    _gshmem.finalize()


def my_pe():
    return _gshmem.my_pe()


def n_pes():
    return _gshmem.n_pes()


def team_my_pe(team):
    return _gshmem.team_my_pe(int(team))


def team_n_pes(team):
    return _gshmem.team_n_pes(int(team))


def get_version():
    """A Version with nvshmem4py's attributes and what they mean there, since programs compare them: libnvshmem_version
    the NVSHMEM release whose API gshmem provides ("3.4.5", as nvshmemx_vendor_get_version_info reports),
    openshmem_spec_version NVSHMEM's OpenSHMEM level ("1.3", as nvshmem_info_get_version), nvshmem4py_version the
    nvshmem4py release gshmem.core follows ("0.4.1"). gshmem's own version: get_name(), gshmem.__version__ and
    repr() of the result."""
    return Version(openshmem_spec_version="%d.%d" % OPENSHMEM_VERSION, nvshmem4py_version=NVSHMEM4PY_VERSION,
                   libnvshmem_version="%d.%d.%d" % NVSHMEM_VENDOR_VERSION,
                   gshmem_version=".".join(str(x) for x in _gshmem.VERSION))


def get_name():
    """nvshmem_info_get_name: the library's name and version ("gshmem <major>.<minor>.<patch>"). Works before
    init too."""
    return _gshmem.info_get_name()


class DeviceLibLanguage(enum.Enum):
    """nvshmem4py's formats of NVIDIA's device library (find_device_bitcode_library's language)."""

    LLVM_BITCODE = "bc"
    LTOIR = "ltoir"
    STATIC = "a"


def find_device_bitcode_library(*, language=DeviceLibLanguage.LLVM_BITCODE, arch=None):
    """nvshmem4py's path to NVIDIA's device library, which Numba / CuTe DSL kernels link. gshmem has no device
    library: its device API is header-only CUDA C++ (no -rdc), so there is nothing to link; raises
    GshmemNotSupported saying what to use instead."""
    raise GshmemNotSupported(
        f"find_device_bitcode_library(language={DeviceLibLanguage(language).name}, arch={arch!r}): gshmem has no "
        "device library to link (its device API is header-only CUDA C++, built without -rdc). Fix: write the "
        "kernel in CUDA C++ against gshmem's headers (<nvshmem.h> from include/gshmem/nvshmem) and load it with "
        "module_init / library_init; Numba and CuTe DSL kernels linked with NVIDIA's device library do not run "
        "on gshmem")


def _check_team(team, call):
    require_init(call)
    # None is what team_split_* return on a PE outside the new team; like any non-team it is refused here, as
    # NvshmemInvalid (int(None) would escape as a TypeError). Teams members, ints and NumPy ints pass.
    try:
        n = _gshmem.team_n_pes(operator.index(team))
    except TypeError:
        n = 0
    if n <= 0:
        raise GshmemInvalid(f"{call}: team={team!r} is not a valid team. Fix: pass a gshmem.core.Teams value or a "
                            "team from a split")
    return n


