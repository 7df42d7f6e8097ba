"""Symmetric memory: buffer / free, array / free_array / get_peer_array (NumPy arrays on the heap of CPU PEs).

gshmem.core tracks every allocation it made (start address -> size), so a call can check that an array is on the
symmetric heap, and finalize() frees what is left. An array's memory is the heap itself (no copy): NumPy sees it
through a ctypes buffer of the allocation.
"""
import ctypes

import numpy as np

from gshmem import _gshmem
from gshmem.core.types import GshmemInvalid, require_init, state

__all__ = ["Buffer", "buffer", "free", "get_peer_buffer", "array", "bytearray", "free_array", "get_peer_array"]

_allocs = {}  # start address -> bytes, for gshmem.core's live symmetric allocations


class Buffer:
    """A symmetric allocation (nvshmem4py returns a cuda.core Buffer; this has its handle and size)."""

    __slots__ = ("handle", "size", "peer")

    def __init__(self, handle, size, peer=None):
        self.handle = handle
        self.size = size
        self.peer = peer  # the PE of a peer view (get_peer_buffer), else None

    def __repr__(self):
        return f"<gshmem Buffer handle=0x{self.handle:x} size={self.size}" + (
            f" peer={self.peer}>" if self.peer is not None else ">")


def _alloc(size, call):
    require_init(call)
    size = int(size)
    if size < 0:
        raise GshmemInvalid(f"{call}: size={size} is negative")
    p = _gshmem.malloc(max(size, 1), call)
    _allocs[p] = size
    return p


def _release(p, call):
    require_init(call)
    if p not in _allocs:
        raise GshmemInvalid(f"{call}: 0x{p:x} is not a live allocation of gshmem.core (freed twice, a peer view, "
                            "or not allocated here)")
    del _allocs[p]
    _gshmem.free(p)


def _free_all():
    for p in list(_allocs):
        del _allocs[p]
        _gshmem.free(p)


def buffer(size, release=False, except_on_del=True):
    """A symmetric allocation of `size` bytes (collective: every PE calls it with the same size)."""
    return Buffer(_alloc(size, "buffer"), int(size))


def free(buf):
    """Frees a buffer() (collective)."""
    if not isinstance(buf, Buffer) or buf.peer is not None:
        raise GshmemInvalid(f"free: {buf!r} is not a buffer from gshmem.core.buffer()")
    _release(buf.handle, "free")


def get_peer_buffer(buf, pe):
    """`buf`'s copy on PE `pe`, mapped into this process (PEs of one node)."""
    require_init("get_peer_buffer")
    p = _peer_ptr(buf.handle, buf.size, pe, "get_peer_buffer")
    return Buffer(p, buf.size, peer=int(pe))


def _ndarray_at(ptr, shape, dtype):
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    raw = (ctypes.c_char * max(count * dtype.itemsize, 1)).from_address(ptr)
    return np.frombuffer(raw, dtype=dtype, count=count).reshape(shape)


def _normalize_shape(shape):
    return (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)


def array(shape, dtype="float32", device_id=None):
    """A NumPy array of `shape` and `dtype` on the symmetric heap (CPU PEs; collective). device_id: unused."""
    return _array(shape, dtype, "array")


def bytearray(shape, dtype="float32", device_id=None):
    """A flat uint8 NumPy array of the bytes an array(shape, dtype) takes, on the symmetric heap."""
    shape = _normalize_shape(shape)
    return _array((int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize,), "uint8", "bytearray")


def _array(shape, dtype, call):
    require_init(call)
    if not state.cpu_pes:
        raise NotImplementedError(f"{call}: this PE runs on a GPU; CuPy arrays and torch tensors are not in "
                                  "gshmem.core yet. Fix: run CPU PEs (GSHMEM_DEVICE=cpu) for NumPy arrays")
    shape = _normalize_shape(shape)
    if any(s < 0 for s in shape):
        raise GshmemInvalid(f"{call}: shape={shape} has a negative extent")
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return _ndarray_at(_alloc(nbytes, call), shape, dtype)


def _data_ptr(arr):
    return arr.__array_interface__["data"][0]


def _symmetric_base(arr, call, what="array"):
    """The allocation holding all of `arr` (a C-contiguous NumPy array), or GshmemInvalid."""
    if not isinstance(arr, np.ndarray):
        raise GshmemInvalid(f"{call}: {what} is a {type(arr).__name__}, not a NumPy array from gshmem.core.array()")
    if not arr.flags.c_contiguous:
        raise GshmemInvalid(f"{call}: {what} is not C-contiguous. Fix: pass a contiguous array (a slice along the "
                            "first axis, or the whole array)")
    p, n = _data_ptr(arr), arr.nbytes
    for base, size in _allocs.items():
        if base <= p and p + n <= base + max(size, 1):
            return base
    raise GshmemInvalid(f"{call}: {what} (address 0x{p:x}, {n} bytes) is not on the symmetric heap. Fix: allocate it "
                        "with gshmem.core.array() (a NumPy array of your own is not symmetric)")


def free_array(arr):
    """Frees an array() (collective); pass the array array() returned."""
    require_init("free_array")
    base = _symmetric_base(arr, "free_array")
    if base != _data_ptr(arr):
        raise GshmemInvalid("free_array: the array is a view into an allocation, not the array array() returned")
    _release(base, "free_array")


def _peer_ptr(p, nbytes, pe, call):
    if pe is None:
        raise GshmemInvalid(f"{call}: no PE given. Fix: pass the peer's PE number")
    pe = int(pe)
    n = _gshmem.n_pes()
    if not 0 <= pe < n:
        raise GshmemInvalid(f"{call}: pe={pe} is out of range: this job has PEs 0..{n - 1}")
    q = _gshmem.ptr(p, pe)
    if not q:
        raise GshmemInvalid(f"{call}: PE {pe}'s memory cannot be mapped into this process (another node?). "
                            "Fix: use put/get for that PE")
    return q


def get_peer_array(arr, peer_pe=None):
    """A NumPy array over PE `peer_pe`'s copy of the symmetric `arr` (loads and stores go straight to it)."""
    require_init("get_peer_array")
    _symmetric_base(arr, "get_peer_array")
    q = _peer_ptr(_data_ptr(arr), arr.nbytes, peer_pe, "get_peer_array")
    return _ndarray_at(q, arr.shape, arr.dtype)
