"""Collectives on symmetric NumPy arrays and barriers (blocking host forms; stream must be None).

The element counts follow nvshmem4py: reduce, reducescatter and broadcast take theirs from dst_array; fcollect
and alltoall from src_array (alltoall: src_array.size / team size per peer). The other array must be large
enough; both must have one dtype and lie on the symmetric heap. Each call is one call of the library's typeless
entries (gshmem.h: gshmemi_reduction / gshmemi_collective with the GSHMEMI_* codes).
"""
import numpy as np

from gshmem import _gshmem
from gshmem.core.init_fini import _check_team
from gshmem.core.memory import _data_ptr, _symmetric_base
from gshmem.core.types import GshmemInvalid, Teams, require_cpu_stream, require_init

__all__ = ["reduce", "reducescatter", "alltoall", "fcollect", "broadcast", "barrier", "sync", "barrier_all",
           "sync_all"]

# gshmem.h's GSHMEMI_COLL_*, GSHMEMI_REDUCE_<op> and GSHMEMI_REDUCE_<type>.
_COLL = {"broadcast": 0, "fcollect": 1, "alltoall": 2}
_OPS = {"and": 0, "or": 1, "xor": 2, "max": 3, "min": 4, "sum": 5, "prod": 6}
_TYPES = {"int8": 0, "int16": 1, "int32": 2, "int64": 3, "uint8": 4, "uint16": 5, "uint32": 6, "uint64": 7,
          "float32": 8, "float64": 9, "float16": 10, "bfloat16": 11, "bool": 4}
_BITWISE_OK = {0, 1, 2, 3, 4, 5, 6, 7}


def _pair(call, dst, src, stream):
    require_init(call)
    require_cpu_stream(stream, call)
    _symmetric_base(dst, call, "dst_array")
    _symmetric_base(src, call, "src_array")
    if dst.dtype != src.dtype:
        raise GshmemInvalid(f"{call}: dst_array is {dst.dtype} but src_array is {src.dtype}. "
                            "Fix: pass arrays of one dtype")
    code = _TYPES.get(dst.dtype.name)
    if code is None:
        raise GshmemInvalid(f"{call}: dtype {dst.dtype} is not supported; supported: {', '.join(sorted(_TYPES))}")
    return code


def _need(call, what, arr, elems):
    if arr.size < elems:
        raise GshmemInvalid(f"{call}: {what} has {arr.size} elements but this call needs {elems}")


def _reduction(call, team, dst, src, op, scatter, stream):
    code = _pair(call, dst, src, stream)
    op_code = _OPS.get(str(op).lower()) if op is not None else None
    if op_code is None:
        raise GshmemInvalid(f"{call}: op={op!r}; valid: {', '.join(_OPS)}")
    if op_code <= 2 and code not in _BITWISE_OK:
        raise GshmemInvalid(f"{call}: op=\"{op}\" needs an integer dtype, not {dst.dtype}")
    size = _check_team(team, call)
    nelems = dst.size
    _need(call, "src_array", src, nelems * size if scatter else nelems)
    _gshmem.reduction(op_code, code, scatter, int(team), _data_ptr(dst), _data_ptr(src), nelems, call)


def reduce(team, dst_array, src_array, op="sum", stream=None):
    """dst_array = op over every member's src_array (an all-reduce; dst_array.size elements)."""
    _reduction("reduce", team, dst_array, src_array, op, False, stream)


def reducescatter(team, dst_array, src_array, op="sum", stream=None):
    """Member i gets op over block i (dst_array.size elements) of every member's src_array."""
    _reduction("reducescatter", team, dst_array, src_array, op, True, stream)


def _collective(call, team, dst, src, root, stream):
    _pair(call, dst, src, stream)
    size = _check_team(team, call)
    elem = dst.dtype.itemsize
    if call == "broadcast":
        nelems = dst.size
        _need(call, "src_array", src, nelems)
        if not 0 <= int(root) < size:
            raise GshmemInvalid(f"broadcast: root={root} is out of range for a team of {size} PEs")
    elif call == "fcollect":
        nelems = src.size
        _need(call, "dst_array", dst, nelems * size)
    else:  # alltoall
        if src.size % size:
            raise GshmemInvalid(f"alltoall: src_array has {src.size} elements, "
                                f"not a multiple of the team's {size} PEs")
        nelems = src.size // size
        _need(call, "dst_array", dst, nelems * size)
    _gshmem.collective(_COLL[call], int(team), _data_ptr(dst), _data_ptr(src), nelems, elem, int(root), call)


def alltoall(team, dst_array, src_array, stream=None):
    """Block j of src_array goes to member j, into block i (this member's index) of its dst_array."""
    _collective("alltoall", team, dst_array, src_array, 0, stream)


def fcollect(team, dst_array, src_array, stream=None):
    """dst_array = every member's src_array, concatenated in team order."""
    _collective("fcollect", team, dst_array, src_array, 0, stream)


def broadcast(team, dst_array, src_array, root=0, stream=None):
    """dst_array = root's src_array on every member (root: an index in the team)."""
    _collective("broadcast", team, dst_array, src_array, root, stream)


def _barrier(call, team, with_quiet, stream):
    require_cpu_stream(stream, call)
    _check_team(team, call)
    _gshmem.barrier(int(team), with_quiet, call)


def barrier(team, stream=None):
    """Completes this PE's puts, then waits for every member of `team`."""
    _barrier("barrier", team, True, stream)


def sync(team, stream=None):
    """Waits for every member of `team` (no completion of puts)."""
    _barrier("sync", team, False, stream)


def barrier_all(stream=None):
    _barrier("barrier_all", Teams.TEAM_WORLD, True, stream)


def sync_all(stream=None):
    _barrier("sync_all", Teams.TEAM_WORLD, False, stream)
