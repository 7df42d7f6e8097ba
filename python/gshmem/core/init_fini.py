"""init, finalize, unique ids and the PE queries."""
import sys

from gshmem import _gshmem
from gshmem.core import memory
from gshmem.core._interop import DLPACK_CPU, DLPACK_CUDA
from gshmem.core.types import GshmemInvalid, require_init, state

__all__ = ["UniqueID", "get_unique_id", "init", "finalize", "my_pe", "n_pes", "team_my_pe", "team_n_pes",
           "get_version"]


class UniqueID:
    """The 128 bytes that UID-based init shares between processes (bytes(uid) to send them, UniqueID(b) back)."""

    __slots__ = ("_data",)

    def __init__(self, data=None):
        data = bytes(_gshmem.UNIQUEID_BYTES) if data is None else bytes(data)
        if len(data) != _gshmem.UNIQUEID_BYTES:
            raise GshmemInvalid(f"UniqueID: {len(data)} bytes, a unique id is {_gshmem.UNIQUEID_BYTES}")
        self._data = data

    def __bytes__(self):
        return self._data

    def __eq__(self, other):
        return isinstance(other, UniqueID) and other._data == self._data

    def __reduce__(self):  # picklable, e.g. for torch.distributed.broadcast_object_list
        return (UniqueID, (self._data,))


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
    """nvshmem4py's MPI start over an mpi4py communicator: PE i is rank i of mpi_comm. Rank 0's unique id goes to
    the others by MPI broadcast, then every rank starts from it (any MPI that mpi4py runs on)."""
    if mpi_comm is None or not hasattr(mpi_comm, "bcast") or not hasattr(mpi_comm, "Get_rank"):
        raise GshmemInvalid(f"init: initializer_method=\"mpi\" needs mpi_comm=<an mpi4py communicator>, got "
                            f"{mpi_comm!r}. Fix: init(mpi_comm=MPI.COMM_WORLD, initializer_method=\"mpi\")")
    rank, nranks = mpi_comm.Get_rank(), mpi_comm.Get_size()
    uid = mpi_comm.bcast(_gshmem.get_unique_id() if rank == 0 else None, root=0)
    _gshmem.init_uid(uid, rank, nranks)


def init(device=None, uid=None, rank=None, nranks=None, mpi_comm=None, initializer_method=""):
    """Starts this PE.

    With no arguments (gshmem's addition; nvshmem4py requires a method): from the environment, as gshmem_init does
    (gshmemrun, mpirun, torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, else a single PE).
    initializer_method="uid": uid (from get_unique_id on one process), rank and nranks. "mpi" / "emulated_mpi":
    mpi_comm, an mpi4py communicator. device: the GPU to use (a cuda.core Device, an int or torch.device); without
    it the GPU current at init, else the one of this PE's local rank. On GPU PEs torch's current device (when the
    program imported torch) is set to the PE's GPU, so tensors it makes are beside the symmetric heap.
    """
    if state.initialized:
        raise GshmemInvalid("init: gshmem is already initialized. Fix: call finalize() before init() again")
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
    ordinal, _ = _gshmem.device()
    state.cpu_pes = ordinal < 0
    state.device = (DLPACK_CPU, 0) if state.cpu_pes else (DLPACK_CUDA, ordinal)
    state.n_pes = _gshmem.n_pes()
    state.initialized = True
    torch = sys.modules.get("torch")
    if not state.cpu_pes and torch is not None and torch.cuda.is_available():
        torch.cuda.set_device(ordinal)


def finalize():
    """Frees what gshmem.core still tracks (buffers, arrays, tensors, registered regions) and ends this PE."""
    require_init("finalize")
    memory._free_all()
    state.initialized = False
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
    return ".".join(str(v) for v in _gshmem.VERSION)


def _check_team(team, call):
    require_init(call)
    n = _gshmem.team_n_pes(int(team))
    if n <= 0:
        raise GshmemInvalid(f"{call}: team={team!r} is not a valid team. Fix: pass a gshmem.core.Teams value or a "
                            "team from a split")
    return n


