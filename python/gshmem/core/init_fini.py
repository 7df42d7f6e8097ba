"""init, finalize, unique ids and the PE queries."""
from gshmem import _gshmem
from gshmem.core import memory
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


def init(device=None, uid=None, rank=None, nranks=None, mpi_comm=None, initializer_method=""):
    """Starts this PE.

    With no arguments (gshmem's addition; nvshmem4py requires a method): from the environment, as gshmem_init does
    (gshmemrun, mpirun, torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, else a single PE).
    initializer_method="uid": uid (from get_unique_id on one process), rank and nranks. device is accepted and
    not used (gshmem picks the PE's device itself); "mpi" / "emulated_mpi" are not in this package yet.
    """
    if state.initialized:
        raise GshmemInvalid("init: gshmem is already initialized. Fix: call finalize() before init() again")
    if initializer_method in ("", None):
        if uid is not None or mpi_comm is not None:
            raise GshmemInvalid("init: uid or mpi_comm given without initializer_method. "
                                "Fix: pass initializer_method=\"uid\" (or \"mpi\")")
        _gshmem.init()
    elif initializer_method == "uid":
        if uid is None or rank is None or nranks is None or mpi_comm is not None:
            raise GshmemInvalid(f"init: initializer_method=\"uid\" needs uid, rank and nranks (got uid={uid!r}, "
                                f"rank={rank!r}, nranks={nranks!r}) and no mpi_comm")
        if not 0 <= int(rank) < int(nranks):
            raise GshmemInvalid(f"init: rank={rank} is out of range for nranks={nranks}")
        _gshmem.init_uid(bytes(uid), int(rank), int(nranks))
    elif initializer_method in ("mpi", "emulated_mpi"):
        raise NotImplementedError(
            f"init: initializer_method=\"{initializer_method}\" (an mpi4py communicator) is not in gshmem.core yet. "
            "Fix: start the processes with mpirun and call init() with no arguments, or use \"uid\"")
    else:
        raise GshmemInvalid(f"init: initializer_method={initializer_method!r}; valid: \"uid\", \"mpi\", "
                            "\"emulated_mpi\" or none (the environment)")
    ordinal, _ = _gshmem.device()
    state.cpu_pes = ordinal < 0
    state.initialized = True


def finalize():
    """Frees what gshmem.core still tracks (buffers, arrays) and ends this PE."""
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


