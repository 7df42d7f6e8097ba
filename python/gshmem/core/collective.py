"""Collectives on symmetric arrays / tensors, and barriers.

GPU PEs: every call is enqueued on `stream` (None: the current stream; see gshmem.core._interop), as nvshmem4py's
are, and is complete in stream order. CPU PEs: blocking host calls (stream must be None).

The element counts follow nvshmem4py: reduce, reducescatter and broadcast take theirs from dst_array; fcollect
and alltoall from src_array (alltoall: src_array's elements / team size per peer). The other array must be large
enough; both must have one dtype and be symmetric. Each call is one call of the library's typeless entries
(gshmem.h: gshmemi_reduction / gshmemi_collective with the GSHMEMI_* codes, or their _on_stream forms).
"""
import sys
import time

from gshmem import _gshmem
from gshmem.core._interop import describe, fast_learn
from gshmem.core.init_fini import _check_team
from gshmem.core.memory import symmetric_base
from gshmem.core.rma import _stream
from gshmem.core.types import GshmemInvalid, Teams, require_init, state

__all__ = ["reduce", "reducescatter", "alltoall", "fcollect", "broadcast", "barrier", "sync", "barrier_all",
           "sync_all", "collective_on_buffer"]

# gshmem.h's GSHMEMI_COLL_*, GSHMEMI_REDUCE_<op> and GSHMEMI_REDUCE_<type>.
_BROADCAST, _FCOLLECT, _ALLTOALL = 0, 1, 2
_COLL = {"broadcast": _BROADCAST, "fcollect": _FCOLLECT, "alltoall": _ALLTOALL}
_OPS = {"and": 0, "or": 1, "xor": 2, "max": 3, "min": 4, "sum": 5, "prod": 6}
_TYPES = {"int8": 0, "int16": 1, "int32": 2, "int64": 3, "uint8": 4, "uint16": 5, "uint32": 6, "uint64": 7,
          "float32": 8, "float64": 9, "float16": 10, "bfloat16": 11, "bool": 4}
# NVSHMEM's type names (collective_on_buffer's dtype=, nvshmem4py's perftests) -> the NumPy names above.
NVSHMEM_DTYPES = {"half": "float16", "fp16": "float16", "bfloat16": "bfloat16", "float": "float32",
                  "double": "float64", "char": "int8", "schar": "int8", "int8": "int8", "uint8": "uint8",
                  "int16": "int16", "uint16": "uint16", "int": "int32", "int32": "int32", "int32_t": "int32",
                  "uint32": "uint32", "uint32_t": "uint32", "long": "int64", "longlong": "int64", "int64": "int64",
                  "int64_t": "int64", "ptrdiff": "int64", "ulonglong": "uint64", "uint64": "uint64",
                  "uint64_t": "uint64", "size": "uint64"}
# nvshmem4py.core.collective's module-level tables, which programs (and its amo.py) read: the ops it takes, the
# collectives collective_on_buffer names, and array dtype names (str(torch dtype) / NumPy / CuPy) -> NVSHMEM's.
valid_ops = ["min", "max", "sum", None]
valid_collectives = ["reduce", "reducescatter", "alltoall", "fcollect", "broadcast"]
external_to_nvshmem_dtypes = {f"{prefix}{name}": nv for prefix in ("torch.", "")
                              for name, nv in (("float16", "half"), ("bfloat16", "bfloat16"), ("float32", "float"),
                                               ("float64", "double"), ("uint8", "uint8"), ("int8", "int8"),
                                               ("int16", "int16"), ("int32", "int32"), ("int64", "int64"),
                                               ("bool", "uint8"))}
_BITWISE_OK = {0, 1, 2, 3, 4, 5, 6, 7}
_ITEMSIZE = {0: 1, 1: 2, 2: 4, 3: 8, 4: 1, 5: 2, 6: 4, 7: 8, 8: 4, 9: 8, 10: 2, 11: 2}


# The per-call fast path (python/src/fast.cpp; python/README.md, "Host time per call"): each public call tries it
# first; it does the call and answers True only for what the full path below would accept, else False.
_fast_reduction = _gshmem.fast_reduction
_fast_collective = _gshmem.fast_collective


def _pair(call, dst, src):
    """(dst address, src address, dst elements, src elements, type code) of two symmetric arrays of one dtype."""
    if not state.initialized:
        require_init(call)
    d, dn, de, dt, library = describe(dst, call, "dst_array")
    s, sn, se, st, src_library = describe(src, call, "src_array")
    symmetric_base(d, dn, call, "dst_array")
    symmetric_base(s, sn, call, "src_array")
    if dt != st:
        raise GshmemInvalid(f"{call}: dst_array is {dt} but src_array is {st}. Fix: pass arrays of one dtype")
    code = _TYPES.get(dt)
    if code is None:
        raise GshmemInvalid(f"{call}: dtype {dt} is not supported; supported: {', '.join(sorted(_TYPES))}")
    fast_learn(dst, library, code)
    fast_learn(src, src_library, code)
    return d, s, de, se, code


def _need(call, what, have, elems):
    if have < elems:
        raise GshmemInvalid(f"{call}: {what} has {have} elements but this call needs {elems}")


def _reduction(call, team, dst, src, op, scatter, stream):
    d, s, de, se, code = _pair(call, dst, src)
    op_code = _OPS.get(op)
    if op_code is None and op is not None:
        op_code = _OPS.get(str(op).lower())
    if op_code is None:
        raise GshmemInvalid(f"{call}: op={op!r}; valid: {', '.join(_OPS)}")
    if op_code <= 2 and code not in _BITWISE_OK:
        raise GshmemInvalid(f"{call}: op=\"{op}\" needs an integer dtype, not {_dtype_name(code)}")
    size = _check_team(team, call)
    _need(call, "src_array", se, de * size if scatter else de)
    h = _stream(stream, call)
    if h is None:
        _gshmem.reduction(op_code, code, scatter, int(team), d, s, de, call)
    else:
        _gshmem.reduction_on_stream(op_code, code, scatter, int(team), d, s, de, h, call)


def _dtype_name(code):
    return next(name for name, c in _TYPES.items() if c == code)


def reduce(team, dst_array, src_array, op="sum", stream=None):
    """dst_array = op over every member's src_array (an all-reduce of dst_array's elements)."""
    if not _fast_reduction(team, dst_array, src_array, op, False, stream):
        _reduction("reduce", team, dst_array, src_array, op, False, stream)


def reducescatter(team, dst_array, src_array, op="sum", stream=None):
    """Member i gets op over block i (dst_array's elements) of every member's src_array."""
    if not _fast_reduction(team, dst_array, src_array, op, True, stream):
        _reduction("reducescatter", team, dst_array, src_array, op, True, stream)


def _collective(call, team, dst, src, root, stream):
    d, s, de, se, code = _pair(call, dst, src)
    size = _check_team(team, call)
    if call == "broadcast":
        nelems = de
        _need(call, "src_array", se, nelems)
        if not 0 <= int(root) < size:
            raise GshmemInvalid(f"broadcast: root={root} is out of range for a team of {size} PEs")
    elif call == "fcollect":
        nelems = se
        _need(call, "dst_array", de, nelems * size)
    else:  # alltoall
        if se % size:
            raise GshmemInvalid(f"alltoall: src_array has {se} elements, not a multiple of the team's {size} PEs")
        nelems = se // size
        _need(call, "dst_array", de, nelems * size)
    h = _stream(stream, call)
    if h is None:
        _gshmem.collective(_COLL[call], int(team), d, s, nelems, _ITEMSIZE[code], int(root), call)
    else:
        _gshmem.collective_on_stream(_COLL[call], int(team), d, s, nelems, _ITEMSIZE[code], int(root), h, call)


def alltoall(team, dst_array, src_array, stream=None):
    """Block j of src_array goes to member j, into block i (this member's index) of its dst_array."""
    if not _fast_collective(_ALLTOALL, team, dst_array, src_array, 0, stream):
        _collective("alltoall", team, dst_array, src_array, 0, stream)


def fcollect(team, dst_array, src_array, stream=None):
    """dst_array = every member's src_array, concatenated in team order."""
    if not _fast_collective(_FCOLLECT, team, dst_array, src_array, 0, stream):
        _collective("fcollect", team, dst_array, src_array, 0, stream)


def broadcast(team, dst_array, src_array, root=0, stream=None):
    """dst_array = root's src_array on every member (root: an index in the team)."""
    if not _fast_collective(_BROADCAST, team, dst_array, src_array, root, stream):
        _collective("broadcast", team, dst_array, src_array, root, stream)


def _barrier(call, team, with_quiet, stream):
    _check_team(team, call)
    h = _stream(stream, call)
    if h is None:
        _gshmem.barrier(int(team), with_quiet, call)
    else:
        _gshmem.barrier_on_stream(int(team), with_quiet, h, call)


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


def _elapsed_ms(h, run):
    """run() bracketed by timing events on the CUDA stream h (torch's or CuPy's events), in ms."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        ext = torch.cuda.ExternalStream(h)
        t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0.record(ext)
        run()
        t1.record(ext)
        t1.synchronize()
        return float(t0.elapsed_time(t1))
    cupy = sys.modules.get("cupy")
    if cupy is None:
        raise GshmemInvalid("collective_on_buffer: enable_timing=True on GPU PEs times with torch's or CuPy's CUDA "
                            "events, and neither is in use. Fix: import torch (or cupy) first")
    ext = cupy.cuda.ExternalStream(h)
    t0, t1 = cupy.cuda.Event(), cupy.cuda.Event()
    t0.record(ext)
    run()
    t1.record(ext)
    t1.synchronize()
    return float(cupy.cuda.get_elapsed_time(t0, t1))


def collective_on_buffer(coll, team, dest, src, dtype=None, op=None, root=0, stream=None, enable_timing=False):
    """nvshmem4py's collective on raw symmetric buffers (buffer() / register_external_buffer()): coll "reduce",
    "reducescatter", "alltoall", "fcollect" or "broadcast"; dtype an NVSHMEM type name ("float", "double", "half",
    "int", "int64", "uint64", "size", ...) or a NumPy one; op for the reductions. Element counts as nvshmem4py:
    from src's size for fcollect and alltoall (alltoall: per member), else from dest's. enable_timing: returns the
    collective's time in ms (GPU PEs: CUDA events on `stream`; CPU PEs: the blocking call's wall time), else 0."""
    call = "collective_on_buffer"
    require_init(call)
    if coll not in ("reduce", "reducescatter", "alltoall", "fcollect", "broadcast"):
        raise GshmemInvalid(f"{call}: coll={coll!r}; valid: reduce, reducescatter, alltoall, fcollect, broadcast")
    name = NVSHMEM_DTYPES.get(dtype, dtype) if isinstance(dtype, str) else dtype
    code = _TYPES.get(name) if isinstance(name, str) else None
    if code is None:
        raise GshmemInvalid(f"{call}: dtype={dtype!r}; valid: {', '.join(NVSHMEM_DTYPES)} (NVSHMEM's names) or "
                            "NumPy's")
    d, dn, _, _, _ = describe(dest, call, "dest")
    s, sn, _, _, _ = describe(src, call, "src")
    symmetric_base(d, dn, call, "dest")
    symmetric_base(s, sn, call, "src")
    size = _check_team(team, call)
    elem = _ITEMSIZE[code]
    if coll in ("reduce", "reducescatter"):
        op_code = _OPS.get(op if isinstance(op, str) else None)
        if op_code is None:
            raise GshmemInvalid(f"{call}: op={op!r}; valid: {', '.join(_OPS)}")
        if op_code <= 2 and code not in _BITWISE_OK:
            raise GshmemInvalid(f"{call}: op=\"{op}\" needs an integer dtype, not {name}")
        nelems = max(1, dn // elem)
        _need(call, "src", sn // elem, nelems * size if coll == "reducescatter" else nelems)
        args = (op_code, code, coll == "reducescatter", int(team), d, s, nelems, call)
        host, on_stream = _gshmem.reduction, _gshmem.reduction_on_stream
    else:
        if coll == "broadcast":
            nelems = max(1, dn // elem)
            _need(call, "src", sn // elem, nelems)
            if not 0 <= int(root) < size:
                raise GshmemInvalid(f"{call}: root={root} is out of range for a team of {size} PEs")
        elif coll == "fcollect":
            nelems = max(1, sn // elem)
            _need(call, "dest", dn // elem, nelems * size)
        else:
            nelems = max(1, sn // (elem * size))
            _need(call, "dest", dn // elem, nelems * size)
        args = (_COLL[coll], int(team), d, s, nelems, elem, int(root), call)
        host, on_stream = _gshmem.collective, _gshmem.collective_on_stream
    h = _stream(stream, call)
    if h is None:
        t0 = time.perf_counter()
        host(*args)
        return (time.perf_counter() - t0) * 1e3 if enable_timing else 0
    if not enable_timing:
        on_stream(*args[:-1], h, args[-1])
        return 0
    return _elapsed_ms(h, lambda: on_stream(*args[:-1], h, args[-1]))
