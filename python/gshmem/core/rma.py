"""put / get between symmetric arrays, tensors or buffers, their nbi forms, signals and quiet.

GPU PEs: every call is stream-ordered on `stream` (None: the current stream; see gshmem.core._interop), as
nvshmem4py's are; put/get complete in stream order, signal_wait holds the stream. CPU PEs: blocking host calls
(stream must be None); signal_wait returns the word's value.
"""
from enum import IntEnum

from gshmem import _gshmem
from gshmem.core._interop import describe, fast_learn, stream_handle
from gshmem.core.memory import symmetric_base
from gshmem.core.types import GshmemInvalid, require_init, require_no_stream, state

__all__ = ["put", "get", "put_nbi", "get_nbi", "put_signal", "put_signal_nbi", "signal_op", "signal_wait",
           "signal_fetch", "quiet", "flush", "SignalOp", "ComparisonType"]


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
    """(address, bytes, dtype name or None, library) of an array, tensor or Buffer; symmetric: it must be
    symmetric."""
    p, n, _, dtype, library = describe(obj, call, what)
    if symmetric:
        symmetric_base(p, n, call, what)
    return p, n, dtype, library


def _check_pe(pe, call, what="remote_pe"):
    pe = int(pe)
    if not 0 <= pe < state.n_pes:
        raise GshmemInvalid(f"{call}: {what}={pe} is out of range: this job has PEs 0..{state.n_pes - 1}")
    return pe


def _signal_word(signal_var, call):
    """The address of a symmetric 64-bit signal word: a uint64/int64 array or tensor (its first element) or a
    Buffer."""
    p, n, dtype, library = _span(signal_var, call, "signal_var", symmetric=True)
    if dtype is not None and dtype not in _SIGNAL_CODES:
        raise GshmemInvalid(f"{call}: signal_var is {dtype}; a signal is a 64-bit word. Fix: use "
                            "array((1,), dtype=\"uint64\") or tensor((1,), dtype=torch.uint64)")
    if n < 8 or p % 8:
        raise GshmemInvalid(f"{call}: signal_var must hold an 8-byte aligned 64-bit word")
    if dtype is not None:
        fast_learn(signal_var, library, _SIGNAL_CODES[dtype])
    return p


_SIGNAL_CODES = {"int64": 3, "uint64": 7}  # a signal word's dtypes, as collective._TYPES codes them


def _enum(cls, value, call, what):
    try:
        return int(cls(value))
    except ValueError:
        raise GshmemInvalid(f"{call}: {what}={value!r} is not a {cls.__name__} "
                            f"({', '.join(m.name for m in cls)})") from None


def _stream(stream, call):
    """The stream handle on GPU PEs; None on CPU PEs (after checking that no stream was given)."""
    if state.cpu_pes:
        require_no_stream(stream, call)
        return None
    return stream_handle(stream, call)


def _putget_args(call, dst, src, remote_pe, remote_is_dst):
    """(dst address, src address, bytes, pe) of a put (remote_is_dst) or get; the remote side must be symmetric.
    put / get / put_nbi / get_nbi try gshmem._gshmem.fast_rma first (python/src/fast.cpp), which takes only what
    this accepts."""
    if not state.initialized:
        require_init(call)
    d, dn, _, dt, dst_library = describe(dst, call, "dst")
    s, sn, _, st, src_library = describe(src, call, "src")
    if remote_is_dst:
        symmetric_base(d, dn, call, "dst")
    else:
        symmetric_base(s, sn, call, "src")
    if dt != st and dt is not None and st is not None:
        raise GshmemInvalid(f"{call}: dst is {dt} but src is {st}. Fix: pass arrays of one dtype")
    pe = int(remote_pe)
    if not 0 <= pe < state.n_pes:
        raise GshmemInvalid(f"{call}: remote_pe={pe} is out of range: this job has PEs 0..{state.n_pes - 1}")
    fast_learn(dst, dst_library)
    fast_learn(src, src_library)
    return d, s, (dn if dn < sn else sn), pe


# The host entries by (put, nbi) on CPU PEs, and by put on GPU PEs.
_HOST = {(True, False): "putmem", (True, True): "putmem_nbi", (False, False): "getmem", (False, True): "getmem_nbi"}
_ON_STREAM = {True: "putmem_on_stream", False: "getmem_on_stream"}


_fast_rma = _gshmem.fast_rma


def _rma(call, dst, src, remote_pe, stream, put, nbi):
    d, s, n, pe = _putget_args(call, dst, src, remote_pe, put)
    if state.cpu_pes:
        require_no_stream(stream, call)
        getattr(_gshmem, _HOST[put, nbi])(d, s, n, pe, call)
    else:
        getattr(_gshmem, _ON_STREAM[put])(d, s, n, pe, stream_handle(stream, call), call)


def put(dst, src, remote_pe=-1, stream=None):
    """Copies src (local) into the symmetric dst on remote_pe: min(dst, src) bytes. GPU PEs: on `stream`; CPU PEs:
    returns when it is done."""
    if not _fast_rma(dst, src, remote_pe, stream, True, False):
        _rma("put", dst, src, remote_pe, stream, True, False)


def get(dst, src, remote_pe=-1, stream=None):
    """Copies the symmetric src of remote_pe into dst (local): min(dst, src) bytes. GPU PEs: on `stream`."""
    if not _fast_rma(dst, src, remote_pe, stream, False, False):
        _rma("get", dst, src, remote_pe, stream, False, False)


def put_nbi(dst, src, remote_pe=-1, stream=None):
    """put that may return before it is done: complete after quiet() (GPU PEs: in stream order anyway)."""
    if not _fast_rma(dst, src, remote_pe, stream, True, True):
        _rma("put_nbi", dst, src, remote_pe, stream, True, True)


def get_nbi(dst, src, remote_pe=-1, stream=None):
    """get that may return before dst holds the data: complete after quiet() (GPU PEs: in stream order)."""
    if not _fast_rma(dst, src, remote_pe, stream, False, True):
        _rma("get_nbi", dst, src, remote_pe, stream, False, True)


def _put_signal(call, dst, src, signal_var, signal_val, signal_op, remote_pe, stream, nbi):
    d, s, n, pe = _putget_args(call, dst, src, remote_pe, True)
    sig = _signal_word(signal_var, call)
    op = _enum(SignalOp, signal_op, call, "signal_op")
    h = _stream(stream, call)
    if h is None:
        (_gshmem.putmem_signal_nbi if nbi else _gshmem.putmem_signal)(d, s, n, sig, int(signal_val), op, pe, call)
    else:
        _gshmem.putmem_signal_on_stream(d, s, n, sig, int(signal_val), op, pe, h, call)


_fast_put_signal = _gshmem.fast_put_signal
_fast_signal_op = _gshmem.fast_signal_op
_fast_signal_wait = _gshmem.fast_signal_wait


def put_signal(dst, src, signal_var, signal_val, signal_op, remote_pe=-1, stream=None):
    """put, then update remote_pe's signal word signal_var (SignalOp) once the data is there."""
    if not _fast_put_signal(dst, src, signal_var, signal_val, signal_op, remote_pe, stream, False):
        _put_signal("put_signal", dst, src, signal_var, signal_val, signal_op, remote_pe, stream, False)


def put_signal_nbi(dst, src, signal_var, signal_val, signal_op, remote_pe=-1, stream=None):
    """put_signal that may return before it is done (complete after quiet(); GPU PEs: in stream order)."""
    if not _fast_put_signal(dst, src, signal_var, signal_val, signal_op, remote_pe, stream, True):
        _put_signal("put_signal_nbi", dst, src, signal_var, signal_val, signal_op, remote_pe, stream, True)


def signal_op(signal_var, signal_val, signal_op, remote_pe=-1, stream=None):  # noqa: F811 (nvshmem4py's names)
    """Sets or adds signal_val to remote_pe's signal word signal_var (SignalOp)."""
    if _fast_signal_op(signal_var, signal_val, signal_op, remote_pe, stream):
        return
    require_init("signal_op")
    sig = _signal_word(signal_var, "signal_op")
    op = _enum(SignalOp, signal_op, "signal_op", "signal_op")
    pe = _check_pe(remote_pe, "signal_op")
    h = _stream(stream, "signal_op")
    if h is None:
        _gshmem.signal_op(sig, int(signal_val), op, pe, "signal_op")
    else:
        _gshmem.signal_op_on_stream(sig, int(signal_val), op, pe, h)


def signal_wait(signal_var, signal_val, signal_op, stream=None):  # noqa: F811
    """Waits until this PE's signal word satisfies `signal_var <signal_op> signal_val` (ComparisonType). GPU PEs:
    the stream waits (returns None); CPU PEs: returns the word's value. Bounded by GSHMEM_WAIT_TIMEOUT."""
    got = _fast_signal_wait(signal_var, signal_val, signal_op, stream)
    if got is not NotImplemented:
        return got
    require_init("signal_wait")
    sig = _signal_word(signal_var, "signal_wait")
    cmp = _enum(ComparisonType, signal_op, "signal_wait", "signal_op")
    h = _stream(stream, "signal_wait")
    if h is None:
        return _gshmem.signal_wait_until(sig, cmp, int(signal_val))
    _gshmem.signal_wait_until_on_stream(sig, cmp, int(signal_val), h)
    return None


def signal_fetch(signal_var):
    """The value of this PE's signal word signal_var, read now (a blocking host read on GPU PEs too)."""
    require_init("signal_fetch")
    return _gshmem.signal_fetch(_signal_word(signal_var, "signal_fetch"))


def _quiet(call, stream):
    require_init(call)
    h = _stream(stream, call)
    if h is None:
        _gshmem.quiet()
    else:
        _gshmem.quiet_on_stream(h)


def flush(stream=None):
    """nvshmem4py's flush (the sources of earlier put_nbi may be reused): gshmem completes them, as quiet()."""
    _quiet("flush", stream)


def quiet(stream=None):
    """Completes this PE's puts (GPU PEs: those issued on `stream` before, and all device-initiated ones)."""
    _quiet("quiet", stream)
