"""Host-initiated atomic memory operations on one element of a symmetric array, tensor or Buffer (nvshmem4py's
nvshmem.core.amo): atomic_fetch / set / swap / compare_swap / inc / fetch_inc / add / fetch_add / and / or / xor
and their fetch_ forms, on `remote_pe`'s copy. `offset` picks the element; a Buffer needs dtype= (an NVSHMEM type
name such as "int32", "uint64", "float", or a NumPy one). Blocking calls on CPU and GPU PEs alike.

Types: 32- and 64-bit integers for all of them; float32 / float64 for fetch, set, swap, add and fetch_add (add as
a compare-and-swap loop on the bits, as NVSHMEM's float extension does it atomically).
"""
import operator
import struct

import numpy as np

from gshmem import _gshmem
from gshmem.core._interop import describe
from gshmem.core.collective import NVSHMEM_DTYPES
from gshmem.core.memory import Buffer, symmetric_base
from gshmem.core.types import GshmemInvalid, require_init, state

__all__ = ["atomic_fetch", "atomic_set", "atomic_inc", "atomic_fetch_inc", "atomic_add", "atomic_fetch_add",
           "atomic_and", "atomic_fetch_and", "atomic_or", "atomic_fetch_or", "atomic_xor", "atomic_fetch_xor",
           "atomic_swap", "atomic_compare_swap"]

# gshmem::host::Amo
_FETCH, _SET, _SWAP, _CSWAP, _FADD, _FAND, _FOR, _FXOR = range(8)
_INTS = {"int32": (4, True), "uint32": (4, False), "int64": (8, True), "uint64": (8, False)}
_FLOATS = {"float32": (4, "<f"), "float64": (8, "<d")}
_NAMES = dict(NVSHMEM_DTYPES, uint="uint32", ulong="uint64", float32="float32", float64="float64")


def _target(target, offset, dtype, call):
    """(address of the element, dtype name) of the AMO's target."""
    require_init(call)
    if isinstance(target, Buffer):
        if dtype is None:
            raise GshmemInvalid(f"{call}: the target is a Buffer, so pass dtype= (e.g. dtype=\"int64\")")
        p, nbytes, name = target.handle, target.size, None
    else:
        p, nbytes, _, name, _ = describe(target, call, "target")
    if dtype is not None:
        asked = _NAMES.get(str(dtype), None) or _NAMES.get(str(dtype).rpartition(".")[2])
        if asked is None:
            try:
                asked = np.dtype(dtype).name
            except TypeError:
                asked = str(dtype)
        if name is not None and asked != name:
            raise GshmemInvalid(f"{call}: dtype={dtype!r} but the target is {name}")
        name = asked
    if name not in _INTS and name not in _FLOATS:
        raise GshmemInvalid(f"{call}: dtype {name} has no atomics; they take int32, uint32, int64, uint64 (and "
                            "float32 / float64 for fetch, set, swap, add, fetch_add)")
    if isinstance(offset, bool):
        raise GshmemInvalid(f"{call}: offset must be a non-negative integer, not {offset!r}")
    try:
        offset = operator.index(offset)
    except TypeError:
        raise GshmemInvalid(f"{call}: offset must be a non-negative integer, not {offset!r}") from None
    size = (_INTS.get(name) or _FLOATS[name])[0]
    if offset < 0 or (offset + 1) * size > nbytes:
        raise GshmemInvalid(f"{call}: offset={offset} is outside the target ({nbytes // size} elements of {name})")
    symmetric_base(p, nbytes, call, "target")
    return p + offset * size, name


def _pe(remote_pe, call):
    pe = operator.index(remote_pe)
    if not 0 <= pe < state.n_pes:
        raise GshmemInvalid(f"{call}: remote_pe={pe} is out of range: this job has PEs 0..{state.n_pes - 1}")
    return pe


def _bits(name, value):
    if name in _FLOATS:
        size, fmt = _FLOATS[name]
        return int.from_bytes(struct.pack(fmt, float(value)), "little")
    size, _ = _INTS[name]
    return operator.index(value) & ((1 << (8 * size)) - 1)


def _value(name, bits):
    if name in _FLOATS:
        size, fmt = _FLOATS[name]
        return struct.unpack(fmt, int(bits).to_bytes(size, "little"))[0]
    size, signed = _INTS[name]
    bits = int(bits) & ((1 << (8 * size)) - 1)
    return bits - (1 << (8 * size)) if signed and bits >> (8 * size - 1) else bits


def _amo(call, op, target, remote_pe, offset, dtype, value=0, cond=0, ints_only=False):
    p, name = _target(target, offset, dtype, call)
    pe = _pe(remote_pe, call)
    if name in _FLOATS and ints_only:
        raise GshmemInvalid(f"{call}: takes an integer target (int32, uint32, int64, uint64), not {name}")
    size = (_INTS.get(name) or _FLOATS[name])[0]
    if name in _FLOATS and op == _FADD:  # compare-and-swap on the bits until no other update came between
        old = _gshmem.atomic(p, size, _FETCH, 0, 0, pe, call)
        while True:
            new = _bits(name, _value(name, old) + float(value))
            seen = _gshmem.atomic(p, size, _CSWAP, new, old, pe, call)
            if seen == old:
                return _value(name, old)
            old = seen
    return _value(name, _gshmem.atomic(p, size, op, _bits(name, value), _bits(name, cond), pe, call))


def atomic_fetch(target, remote_pe=-1, *, offset=0, dtype=None):
    """The element's value on remote_pe."""
    return _amo("atomic_fetch", _FETCH, target, remote_pe, offset, dtype)


def atomic_set(target, value, remote_pe=-1, *, offset=0, dtype=None):
    _amo("atomic_set", _SET, target, remote_pe, offset, dtype, value)


def atomic_swap(target, value, remote_pe=-1, *, offset=0, dtype=None):
    """Stores value; returns the old value."""
    return _amo("atomic_swap", _SWAP, target, remote_pe, offset, dtype, value)


def atomic_compare_swap(target, cond, value, remote_pe=-1, *, offset=0, dtype=None):
    """Stores value if the element equals cond; returns the old value either way."""
    return _amo("atomic_compare_swap", _CSWAP, target, remote_pe, offset, dtype, value, cond, ints_only=True)


def atomic_inc(target, remote_pe=-1, *, offset=0, dtype=None):
    _amo("atomic_inc", _FADD, target, remote_pe, offset, dtype, 1, ints_only=True)


def atomic_fetch_inc(target, remote_pe=-1, *, offset=0, dtype=None):
    return _amo("atomic_fetch_inc", _FADD, target, remote_pe, offset, dtype, 1, ints_only=True)


def atomic_add(target, value, remote_pe=-1, *, offset=0, dtype=None):
    _amo("atomic_add", _FADD, target, remote_pe, offset, dtype, value)


def atomic_fetch_add(target, value, remote_pe=-1, *, offset=0, dtype=None):
    return _amo("atomic_fetch_add", _FADD, target, remote_pe, offset, dtype, value)


def atomic_and(target, value, remote_pe=-1, *, offset=0, dtype=None):
    _amo("atomic_and", _FAND, target, remote_pe, offset, dtype, value, ints_only=True)


def atomic_fetch_and(target, value, remote_pe=-1, *, offset=0, dtype=None):
    return _amo("atomic_fetch_and", _FAND, target, remote_pe, offset, dtype, value, ints_only=True)


def atomic_or(target, value, remote_pe=-1, *, offset=0, dtype=None):
    _amo("atomic_or", _FOR, target, remote_pe, offset, dtype, value, ints_only=True)


def atomic_fetch_or(target, value, remote_pe=-1, *, offset=0, dtype=None):
    return _amo("atomic_fetch_or", _FOR, target, remote_pe, offset, dtype, value, ints_only=True)


def atomic_xor(target, value, remote_pe=-1, *, offset=0, dtype=None):
    _amo("atomic_xor", _FXOR, target, remote_pe, offset, dtype, value, ints_only=True)


def atomic_fetch_xor(target, value, remote_pe=-1, *, offset=0, dtype=None):
    return _amo("atomic_fetch_xor", _FXOR, target, remote_pe, offset, dtype, value, ints_only=True)
