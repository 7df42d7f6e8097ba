"""put / get between symmetric arrays or buffers, their nbi forms, and signals (host forms)."""
from enum import IntEnum

import numpy as np

from gshmem import _gshmem
from gshmem.core.memory import Buffer, _allocs, _data_ptr, _symmetric_base
from gshmem.core.types import GshmemInvalid, require_cpu_stream, require_init

__all__ = ["put", "get", "put_nbi", "get_nbi", "put_signal", "signal_op", "signal_wait", "quiet", "SignalOp",
           "ComparisonType"]


class SignalOp(IntEnum):
    """How put_signal / signal_op update the remote signal word (gshmem.h's values)."""

    SIGNAL_SET = 9
    SIGNAL_ADD = 10


class ComparisonType(IntEnum):
    """signal_wait's comparisons (gshmem.h's GSHMEM_CMP_*)."""

    CMP_EQ = 0
    CMP_NE = 1
    CMP_GT = 2
    CMP_LE = 3
    CMP_LT = 4
    CMP_GE = 5


def _span(obj, call, what, symmetric):
    """(address, bytes, dtype or None) of an array or Buffer; symmetric: it must be on the symmetric heap."""
    if isinstance(obj, Buffer):
        if obj.peer is not None or obj.handle not in _allocs:
            raise GshmemInvalid(f"{call}: {what} is not a live buffer from gshmem.core.buffer()")
        return obj.handle, obj.size, None
    if not isinstance(obj, np.ndarray):
        raise GshmemInvalid(f"{call}: {what} is a {type(obj).__name__}; pass a gshmem.core array or buffer")
    if symmetric:
        _symmetric_base(obj, call, what)
    elif not obj.flags.c_contiguous:
        raise GshmemInvalid(f"{call}: {what} is not C-contiguous")
    return _data_ptr(obj), obj.nbytes, obj.dtype


def _check_pe(pe, call, what="remote_pe"):
    n = _gshmem.n_pes()
    if not 0 <= int(pe) < n:
        raise GshmemInvalid(f"{call}: {what}={pe} is out of range: this job has PEs 0..{n - 1}")
    return int(pe)


def _signal_word(signal_var, call):
    """The address of a symmetric 64-bit signal word: a uint64/int64 array (its first element) or a Buffer."""
    if isinstance(signal_var, np.ndarray) and signal_var.dtype.itemsize != 8:
        raise GshmemInvalid(f"{call}: signal_var is {signal_var.dtype}; a signal is a 64-bit word. Fix: use "
                            "array((1,), dtype=\"uint64\")")
    a, n, _ = _span(signal_var, call, "signal_var", symmetric=True)
    if n < 8 or a % 8:
        raise GshmemInvalid(f"{call}: signal_var must hold an 8-byte aligned 64-bit word")
    return a


def _enum(cls, value, call, what):
    try:
        return int(cls(value))
    except ValueError:
        raise GshmemInvalid(f"{call}: {what}={value!r} is not a {cls.__name__} "
                            f"({', '.join(m.name for m in cls)})") from None


def _putget_args(call, dst, src, remote_pe, stream, remote_is_dst):
    require_init(call)
    require_cpu_stream(stream, call)
    d, dn, dt = _span(dst, call, "dst", symmetric=remote_is_dst)
    s, sn, st = _span(src, call, "src", symmetric=not remote_is_dst)
    if dt is not None and st is not None and dt != st:
        raise GshmemInvalid(f"{call}: dst is {dt} but src is {st}. Fix: pass arrays of one dtype")
    return d, s, min(dn, sn), _check_pe(remote_pe, call)


def _putget(fn, call, dst, src, remote_pe, stream, remote_is_dst):
    d, s, n, pe = _putget_args(call, dst, src, remote_pe, stream, remote_is_dst)
    fn(d, s, n, pe, call)


def put(dst, src, remote_pe=-1, stream=None):
    """Copies src (local) into the symmetric dst on remote_pe: min(dst, src) bytes; returns when it is done."""
    _putget(_gshmem.putmem, "put", dst, src, remote_pe, stream, remote_is_dst=True)


def get(dst, src, remote_pe=-1, stream=None):
    """Copies the symmetric src of remote_pe into dst (local): min(dst, src) bytes; returns when it is done."""
    _putget(_gshmem.getmem, "get", dst, src, remote_pe, stream, remote_is_dst=False)


def put_nbi(dst, src, remote_pe=-1, stream=None):
    """put that may return before it is done: complete after quiet() (or a barrier)."""
    _putget(_gshmem.putmem_nbi, "put_nbi", dst, src, remote_pe, stream, remote_is_dst=True)


def get_nbi(dst, src, remote_pe=-1, stream=None):
    """get that may return before dst holds the data: complete after quiet()."""
    _putget(_gshmem.getmem_nbi, "get_nbi", dst, src, remote_pe, stream, remote_is_dst=False)


def put_signal(dst, src, signal_var, signal_val, signal_op, remote_pe=-1, stream=None):
    """put, then update remote_pe's signal word signal_var (SignalOp) once the data is there."""
    d, s, n, pe = _putget_args("put_signal", dst, src, remote_pe, stream, True)
    _gshmem.putmem_signal(d, s, n, _signal_word(signal_var, "put_signal"), int(signal_val),
                          _enum(SignalOp, signal_op, "put_signal", "signal_op"), pe, "put_signal")


def signal_op(signal_var, signal_val, signal_op, remote_pe=-1, stream=None):  # noqa: F811 (nvshmem4py's names)
    """Sets or adds signal_val to remote_pe's signal word signal_var (SignalOp)."""
    require_init("signal_op")
    require_cpu_stream(stream, "signal_op")
    _gshmem.signal_op(_signal_word(signal_var, "signal_op"), int(signal_val), _enum(SignalOp, signal_op, "signal_op", "signal_op"),
                      _check_pe(remote_pe, "signal_op"), "signal_op")


def signal_wait(signal_var, signal_val, signal_op, stream=None):  # noqa: F811
    """Waits until this PE's signal word satisfies `signal_var <signal_op> signal_val` (ComparisonType); returns its
    value (bounded by GSHMEM_WAIT_TIMEOUT)."""
    require_init("signal_wait")
    require_cpu_stream(stream, "signal_wait")
    return _gshmem.signal_wait_until(_signal_word(signal_var, "signal_wait"), _enum(ComparisonType, signal_op, "signal_wait", "signal_op"),
                                     int(signal_val))


def quiet(stream=None):
    require_init("quiet")
    require_cpu_stream(stream, "quiet")
    _gshmem.quiet()
