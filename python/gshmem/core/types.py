"""Teams, exceptions and state shared by gshmem.core's modules."""
from enum import IntEnum

from gshmem import _gshmem

__all__ = ["Teams", "NvshmemError", "NvshmemInvalid", "GshmemError", "GshmemInvalid"]

# gshmem's own errors come from the library with its message (the call, the cause and the fix) and .status.
GshmemError = _gshmem.GshmemError


class GshmemInvalid(GshmemError, ValueError):
    """A bad argument caught in Python before the library was called (the message names the call)."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg
        self.status = 1  # GSHMEM_ERROR_INVALID_VALUE


# nvshmem4py's names, so `except nvshmem.NvshmemError` keeps working after changing the import.
NvshmemError = GshmemError
NvshmemInvalid = GshmemInvalid


class Teams(IntEnum):
    """The predefined teams (nvshmem_team_id_t / gshmem.h's values)."""

    TEAM_INVALID = -1
    TEAM_WORLD = 0
    TEAM_WORLD_INDEX = 0
    TEAM_SHARED = 1
    TEAM_SHARED_INDEX = 1
    TEAM_NODE = 2
    TEAM_NODE_INDEX = 2
    TEAM_SAME_MYPE_NODE = 3
    TEAM_SAME_MYPE_NODE_INDEX = 3


class _State:
    initialized = False
    cpu_pes = True


state = _State()


def require_init(call):
    if not state.initialized:
        raise GshmemInvalid(f"{call}: gshmem is not initialized. Fix: call gshmem.core.init() first")


def require_cpu_stream(stream, call):
    """This slice runs the blocking host forms: a stream is accepted only as None (CPU PEs have no streams)."""
    if stream is not None:
        raise GshmemInvalid(
            f"{call}: stream={stream!r} but this gshmem.core runs blocking host calls only (CPU PEs; "
            "streams, CuPy arrays and torch tensors are not in the Python package yet). Fix: pass stream=None")
