"""put / get between symmetric arrays or buffers (blocking host forms)."""
import numpy as np

from gshmem import _gshmem
from gshmem.core.memory import Buffer, _allocs, _data_ptr, _symmetric_base
from gshmem.core.types import GshmemInvalid, require_cpu_stream, require_init

__all__ = ["put", "get", "quiet"]


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


def _putget(fn, call, dst, src, remote_pe, stream, remote_is_dst):
    require_init(call)
    require_cpu_stream(stream, call)
    d, dn, dt = _span(dst, call, "dst", symmetric=remote_is_dst)
    s, sn, st = _span(src, call, "src", symmetric=not remote_is_dst)
    if dt is not None and st is not None and dt != st:
        raise GshmemInvalid(f"{call}: dst is {dt} but src is {st}. Fix: pass arrays of one dtype")
    n = _gshmem.n_pes()
    if not 0 <= int(remote_pe) < n:
        raise GshmemInvalid(f"{call}: remote_pe={remote_pe} is out of range: this job has PEs 0..{n - 1}")
    fn(d, s, min(dn, sn), int(remote_pe), call)


def put(dst, src, remote_pe=-1, stream=None):
    """Copies src (local) into the symmetric dst on remote_pe: min(dst, src) bytes; returns when it is done."""
    _putget(_gshmem.putmem, "put", dst, src, remote_pe, stream, remote_is_dst=True)


def get(dst, src, remote_pe=-1, stream=None):
    """Copies the symmetric src of remote_pe into dst (local): min(dst, src) bytes; returns when it is done."""
    _putget(_gshmem.getmem, "get", dst, src, remote_pe, stream, remote_is_dst=False)


def quiet(stream=None):
    require_init("quiet")
    require_cpu_stream(stream, "quiet")
    _gshmem.quiet()
