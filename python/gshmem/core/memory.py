"""Symmetric memory: buffers, torch tensors, CuPy arrays (GPU PEs) and NumPy arrays (CPU PEs) on the symmetric heap.

gshmem.core tracks every region it handed out (start address -> bytes): heap allocations (buffer, tensor, array)
and external buffers registered symmetric (register_external_*). A call checks in O(log n) that an array lies in
one, and finalize() frees what is left. An array's memory is the heap itself (no copy): torch and CuPy see it
through DLPack, NumPy through a ctypes buffer. As in nvshmem4py, the memory belongs to the table, not to the array
objects: free_tensor / free_array release it (collectively) and views of it must not be used after that.

Peer views (get_peer_buffer / get_peer_array / get_peer_tensor of another PE) are remembered too, so that freeing
one is what it is in nvshmem4py: a local no-op (programs free the views of their peers before the allocation).
"""
import bisect
import collections
import warnings

import numpy as np

from gshmem import _gshmem
from gshmem.core._interop import address, describe, make_array, readers, torch_dtype
from gshmem.core.types import GshmemInvalid, NvshmemWarning, require_init, state

__all__ = ["Buffer", "NvshmemResource", "buffer", "free", "get_peer_buffer", "get_multicast_buffer",
           "register_external_buffer", "unregister_external_buffer", "array", "bytearray", "free_array",
           "get_peer_array", "get_multicast_array",
           "array_get_buffer", "tensor", "bytetensor", "free_tensor", "get_peer_tensor", "get_multicast_tensor",
           "tensor_get_buffer", "register_external_tensor", "unregister_external_tensor"]

_allocs = {}  # start address -> (bytes, external) of gshmem.core's live symmetric regions
_bases = []   # their start addresses, sorted
_peers = {}   # address of a live peer view of another PE -> (bytes, pe, start of the allocation it views)
# Addresses of peer views whose allocation was freed while they were still remembered: freeing such a view later is
# the local no-op it would have been before (programs free a list of every PE's views, their own PE's first, which
# frees the allocation: NVIDIA/cutlass's CuTe DSL distributed examples). Using one for anything else still raises.
_released_peers = set()


class _OnTheHeap:
    """cuda.core's memory queries, answered for the symmetric heap (GPU memory on GPU PEs, host memory on CPU PEs)."""
    __slots__ = ()

    @property
    def device_id(self):
        return state.device[1] if not state.cpu_pes else -1

    @property
    def is_device_accessible(self):
        return not state.cpu_pes

    @property
    def is_host_accessible(self):
        return state.cpu_pes


_Mnff = collections.namedtuple("_Mnff", "ptr size mr")


class Buffer(_OnTheHeap):
    """A symmetric allocation (nvshmem4py returns a cuda.core Buffer): .handle (the address), .size (bytes), and
    DLPack (torch.from_dlpack(buf) / cupy.from_dlpack(buf) see its bytes as uint8)."""

    __slots__ = ("handle", "size", "peer")

    def __init__(self, handle, size, peer=None):
        self.handle = handle
        self.size = size
        self.peer = peer  # the PE of a peer view (get_peer_buffer), else None

    @classmethod
    def from_handle(cls, ptr, size, mr=None, owner=None):
        """cuda.core's Buffer.from_handle: a Buffer over `size` bytes at address `ptr`, owning nothing (programs
        make prefix views of symmetric buffers this way, e.g. Buffer.from_handle(ptr=buf.handle, size=k * esz,
        mr=buf.memory_resource), to run a collective on k elements). Nothing is checked here, as in cuda.core: a
        call given it checks that its bytes lie in symmetric memory where the call needs that. mr, owner: accepted,
        not used. Do not free() a view: free the Buffer that buffer() returned."""
        return cls(int(ptr), int(size))

    @property
    def _mnff(self):
        """cuda.core Buffer's internal record (.ptr, .size, .mr), which programs read for the address
        (triton-distributed's nvshmem_signal_wait, nvmath's distributed helpers): the same as .handle and .size."""
        return _Mnff(self.handle, self.size, None)

    def __repr__(self):
        return f"<gshmem Buffer handle=0x{self.handle:x} size={self.size}" + (
            f" peer={self.peer}>" if self.peer is not None else ">")

    def __dlpack__(self, **kwargs):
        return _gshmem.wrap(3, self.handle, self.size, *state.device).__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return state.device

    # cuda.core Buffer's copies: through gshmem's put / get to this PE (or, for a peer view, to that PE), so the
    # GPU PEs' copy is stream-ordered like every other call on `stream` (the current stream where none is given)
    def _symmetric(self, call):
        """(this PE's address of the symmetric bytes this buffer shows, the PE whose copy they are)."""
        me = _gshmem.my_pe()
        if self.peer is None or self.peer == me:  # this PE's own view is its own address
            return self.handle, me
        entry = _peers.get(self.handle)
        if entry is None:
            raise GshmemInvalid(f"Buffer.{call}: this peer view (0x{self.handle:x}) was closed or its allocation "
                                "freed. Fix: get a new view with get_peer_buffer(buf, pe)")
        base = entry[2]
        return self.handle - (_peer_ptr(base, self.peer, f"Buffer.{call}") - base), self.peer

    def copy_to(self, dst=None, *, stream=None):
        """cuda.core's Buffer.copy_to: this buffer's bytes into dst — a Buffer, array or tensor in this process of
        exactly `size` bytes, or None: a new buffer from the memory resource (buffer(size): every PE must call
        then, as nvshmem4py's resource allocates collectively). Returns dst. GPU PEs: on `stream`; CPU PEs: done
        on return (no stream)."""
        from gshmem.core import rma
        require_init("Buffer.copy_to")
        if dst is None:
            dst = buffer(self.size)
        _same_size("copy_to", "dst", dst, self.size)
        local, pe = self._symmetric("copy_to")
        rma._rma("Buffer.copy_to", dst, Buffer(local, self.size), pe, stream, False, False)
        return dst

    def copy_from(self, src, *, stream=None):
        """cuda.core's Buffer.copy_from: src's bytes (a Buffer, array or tensor in this process of exactly `size`
        bytes) into this buffer (a peer view: into that PE's copy). GPU PEs: on `stream`; CPU PEs: done on
        return."""
        from gshmem.core import rma
        require_init("Buffer.copy_from")
        _same_size("copy_from", "src", src, self.size)
        local, pe = self._symmetric("copy_from")
        rma._rma("Buffer.copy_from", Buffer(local, self.size), src, pe, stream, True, False)

    # cuda.core Buffer's queries that programs read
    @property
    def memory_resource(self):
        """The NvshmemResource the buffer came from (one per process: the symmetric heap)."""
        return _resource()

    def close(self, stream=None):
        """cuda.core's Buffer.close as nvshmem4py's buffers have it: a peer view is forgotten (local), a buffer
        already freed does nothing, and a live allocation raises NvshmemInvalid (it must be freed with free(),
        a collective; nvshmem4py raises NvshmemError "freed implicitly" there)."""
        if not state.initialized:
            return
        if self.peer is not None:  # a peer view (its address may also be a live local allocation: my_pe's view)
            _peers.pop(self.handle, None)
            return
        entry = _allocs.get(self.handle)
        if entry is not None:
            what = "a registered external region: unregister_external_buffer(buf)" if entry[1] else \
                "a live allocation: free(buf) (every PE calls it)"
            raise GshmemInvalid(f"Buffer.close: buffer 0x{self.handle:x} ({self.size} bytes) is {what}; closing it "
                                "alone would leave the other PEs' copies allocated. Fix: release it that way")


readers[Buffer] = lambda b, call, what: (b.handle, b.size, b.size, None, "buffer")


def _same_size(call, what, obj, size):
    """cuda.core copies the whole buffer: the other side must have as many bytes."""
    n = describe(obj, f"Buffer.{call}", what)[1]
    if n != size:
        raise GshmemInvalid(f"Buffer.{call}: {what} has {n} bytes, this buffer {size}. Fix: pass a {what} of "
                            f"exactly {size} bytes (cuda.core copies whole buffers)")


class NvshmemResource(_OnTheHeap):
    """nvshmem4py's memory resource (a cuda.core MemoryResource there): where buffer() allocates. Here one per
    process over gshmem's symmetric heap, reached as buffer.memory_resource or made directly; its methods are the
    module functions (allocate: buffer(), deallocate: Buffer.close(), get_peer_buffer, get_mc_buffer,
    register_external_buffer, unregister_external_buffer)."""

    def __init__(self, device=None):
        self.device = device

    def allocate(self, size, stream=None, release=False, except_on_del=True):
        return buffer(size, release=release, except_on_del=except_on_del)

    def deallocate(self, ptr, size, stream=None):
        Buffer(int(ptr), int(size)).close(stream)

    def get_peer_buffer(self, buffer, pe):  # noqa: F811 (nvshmem4py's names)
        return get_peer_buffer(buffer, pe)

    def get_mc_buffer(self, team, buffer):  # noqa: F811
        return get_multicast_buffer(team, buffer)

    def register_external_buffer(self, buffer, call_register=True):  # noqa: F811
        return register_external_buffer(buffer)

    def unregister_external_buffer(self, buffer):  # noqa: F811
        unregister_external_buffer(buffer)


    def __repr__(self):
        return f"<gshmem NvshmemResource device={self.device_id}>"


_the_resource = []


def _resource():
    if not _the_resource:
        _the_resource.append(NvshmemResource())
    return _the_resource[0]


def _track(p, size, external=False):
    _allocs[p] = (size, external)
    bisect.insort(_bases, p)


def _untrack(p):
    del _allocs[p]
    del _bases[bisect.bisect_left(_bases, p)]
    _hits.clear()
    _gshmem.fast_forget()  # the fast path's mirror of _hits


# address -> (start, end) of its region, for addresses looked up before (programs reuse a few arrays); mirrored in
# gshmem._gshmem's fast path (fast_hit / fast_forget), which takes only addresses found here.
_hits = {}


def symmetric_base(p, nbytes, call, what):
    """The start of the tracked region holding [p, p + nbytes), or GshmemInvalid naming the call."""
    hit = _hits.get(p)
    if hit is not None and p + nbytes <= hit[1]:
        return hit[0]
    i = bisect.bisect_right(_bases, p) - 1
    if i >= 0:
        base = _bases[i]
        end = base + max(_allocs[base][0], 1)
        if p + nbytes <= end:
            if len(_hits) > 4096:
                _hits.clear()
                _gshmem.fast_forget()
            _hits[p] = (base, end)
            _gshmem.fast_hit(p, end)
            return base
    raise GshmemInvalid(f"{call}: {what} (address 0x{p:x}, {nbytes} bytes) is not symmetric memory of gshmem.core "
                        "(or was freed). Fix: allocate it with gshmem.core.tensor() / array() / buffer(), or "
                        "register it with register_external_tensor() (a tensor of your own is not symmetric)")


def _alloc(size, call):
    require_init(call)
    size = int(size)
    if size < 0:
        raise GshmemInvalid(f"{call}: size={size} is negative")
    p = _gshmem.malloc(max(size, 1), call)
    _track(p, size)
    return p


def _not_initialized(call):
    """free* before init or after finalize: nvshmem4py logs and returns (finalize freed everything); so do we,
    with an NvshmemWarning."""
    if state.initialized:
        return False
    warnings.warn(NvshmemWarning(f"{call}: gshmem is not initialized (finalize() frees what is left); nothing "
                                 "freed"), stacklevel=3)
    return True


def _release(p, call, what):
    require_init(call)
    entry = _allocs.get(p)
    if entry is None or entry[1]:
        why = "a registered external region: use unregister_external_*" if entry else \
            "freed twice, a peer view, or not allocated by gshmem.core"
        raise GshmemInvalid(f"{call}: {what} (address 0x{p:x}) is not a live allocation of gshmem.core ({why})")
    _untrack(p)
    for q in [q for q, (_, _, base) in _peers.items() if base == p]:
        del _peers[q]
        if len(_released_peers) > 65536:  # bounded: the oldest are forgotten wholesale (a later free raises)
            _released_peers.clear()
        _released_peers.add(q)
    _gshmem.free(p)


def _free_all():
    _peers.clear()
    _released_peers.clear()
    for p in list(_bases):
        size, external = _allocs[p]
        _untrack(p)
        if external:
            _gshmem.unregister_symmetric(p, size)
        else:
            _gshmem.free(p)


def _note_peer(p, q, n, pe):
    """Remembers q, the view of PE pe's copy of the allocation holding p (nothing to remember for this PE's own)."""
    if q != p:
        _peers[q] = (n, pe, symmetric_base(p, n, "get_peer", "the array"))
        _released_peers.discard(q)


def _peer_ptr(p, pe, call):
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


def _no_multicast(call):
    raise GshmemInvalid(
        f"{call}: no multicast memory: gshmem leaves NVLink multicast (NVLS) off unless GSHMEM_ENABLE_NVLS=1, and "
        "this build has no multicast objects. Fix: use get_peer_tensor / get_peer_array for each peer, or the "
        "collectives (reduce, fcollect, broadcast), which need no multicast")


# ---- buffers ----
def buffer(size, release=False, except_on_del=True):
    """A symmetric allocation of `size` bytes (collective: every PE calls it with the same size)."""
    return Buffer(_alloc(size, "buffer"), int(size))


def free(buf):
    """Frees a buffer() (collective). A peer buffer (get_peer_buffer) is only forgotten: a local no-op, as in
    nvshmem4py."""
    if _not_initialized("free"):
        return
    if not isinstance(buf, Buffer):
        raise GshmemInvalid(f"free: {buf!r} is not a buffer from gshmem.core.buffer()")
    if buf.peer is not None or buf.handle in _peers or buf.handle in _released_peers:
        # a peer view (this PE's own too, or one whose allocation was freed since): nothing to free
        _peers.pop(buf.handle, None)
        _released_peers.discard(buf.handle)
        return
    _release(buf.handle, "free", "the buffer")


def get_peer_buffer(buf, pe):
    """`buf`'s copy on PE `pe`, mapped into this process (PEs of one node). Freeing it is a local no-op."""
    require_init("get_peer_buffer")
    p, n, _, _, _ = describe(buf, "get_peer_buffer", "buffer")
    symmetric_base(p, n, "get_peer_buffer", "buffer")
    q = _peer_ptr(p, pe, "get_peer_buffer")
    _note_peer(p, q, n, int(pe))
    return Buffer(q, n, peer=int(pe))


def get_multicast_buffer(team, buf):
    """Not available: raises (multicast is off; see the message)."""
    _no_multicast("get_multicast_buffer")


def _handle_size(buf, call):
    if isinstance(buf, Buffer):
        return buf.handle, buf.size
    try:  # a cuda.core Buffer, or anything with an address and a size
        return int(buf.handle), int(buf.size)
    except (AttributeError, TypeError, ValueError):
        raise GshmemInvalid(f"{call}: {buf!r} is not a buffer (no .handle and .size)") from None


def _register(p, size, call):
    require_init(call)
    q = _gshmem.register_symmetric(p, size)
    _track(q, size, external=True)
    return q


def _unregister(q, call, what):
    require_init(call)
    entry = _allocs.get(q)
    if entry is None or not entry[1]:
        raise GshmemInvalid(f"{call}: {what} (address 0x{q:x}) is not a region register_external_* returned (pass "
                            "the tensor or buffer it returned, not the one you registered)")
    _untrack(q)
    _gshmem.unregister_symmetric(q, entry[0])


def register_external_buffer(buf):
    """Makes every PE's `buf` (same size everywhere; GPU PEs: CUDA VMM memory with a POSIX-fd handle type; CPU PEs:
    a MAP_SHARED file mapping) one symmetric region (collective); returns a Buffer at its symmetric address."""
    p, size = _handle_size(buf, "register_external_buffer")
    return Buffer(_register(p, size, "register_external_buffer"), size)


def unregister_external_buffer(buf):
    """Undoes register_external_buffer (collective); pass the Buffer it returned."""
    _unregister(_handle_size(buf, "unregister_external_buffer")[0], "unregister_external_buffer", "the buffer")


# ---- arrays and tensors ----
def _shape(shape):
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise GshmemInvalid(f"shape={shape} has a negative extent")
    return shape


def _count(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _array_library(call):
    if state.cpu_pes:
        return "numpy"
    try:
        import cupy  # noqa: F401
    except ImportError:
        raise GshmemInvalid(f"{call}: on GPU PEs arrays are CuPy arrays, and CuPy is not installed. Fix: pip "
                            "install cupy-cuda13x (or cupy-cuda12x), or use gshmem.core.tensor() for torch "
                            "tensors") from None
    return "cupy"


def _new(library, shape, dtype, itemsize, call, order="C"):
    require_init(call)
    shape = _shape(shape)
    nbytes = _count(shape) * itemsize
    p = _alloc(nbytes, call)
    return make_array(library, p, nbytes, shape, dtype, state.device, order)


def _check_morder(morder, call):
    if morder not in ("C", "F"):
        raise GshmemInvalid(f"{call}: morder={morder!r}; valid: \"C\" (row-major), \"F\" (column-major)")


def array(shape, dtype="float32", release=False, morder="C", device_id=None):
    """An array of `shape` (a tuple or an int) and `dtype` on the symmetric heap (collective): CuPy on GPU PEs,
    NumPy on CPU PEs. morder "F": Fortran order. release, device_id: accepted, not used (gshmem.core tracks every
    allocation; the PE's own GPU)."""
    _check_morder(morder, "array")
    library = _array_library("array")
    return _new(library, shape, np.dtype(dtype), np.dtype(dtype).itemsize, "array", morder)


def bytearray(shape, dtype="float32", release=False, device_id=None, morder="C"):
    """A flat uint8 array (CuPy / NumPy) of the bytes an array(shape, dtype) takes, on the symmetric heap."""
    _check_morder(morder, "bytearray")
    library = _array_library("bytearray")
    nbytes = _count(_shape(shape)) * np.dtype(dtype).itemsize
    return _new(library, (nbytes,), np.dtype("uint8"), 1, "bytearray")


def _import_torch(call):
    try:
        import torch
    except ImportError:
        raise GshmemInvalid(f"{call}: torch is not installed. Fix: pip install torch, or use gshmem.core.array() "
                            "for CuPy / NumPy arrays") from None
    return torch


def tensor(shape, dtype="float32", release=False, morder="C", except_on_del=True):
    """A torch tensor of `shape` (a tuple or an int) and `dtype` on the symmetric heap (collective): on the PE's
    GPU, or in host memory on CPU PEs. As in nvshmem4py, dtype left out is torch.float32 and dtype=None is torch's
    default dtype. morder "F": column-major strides over the same memory."""
    torch = _import_torch("tensor")
    _check_morder(morder, "tensor")
    dtype = torch_dtype(torch, torch.get_default_dtype() if dtype is None else dtype)
    return _new("torch", shape, dtype, dtype.itemsize, "tensor", morder)


def bytetensor(shape, dtype="float32", release=False, morder="C", except_on_del=True):
    """A torch uint8 tensor of `shape` on the symmetric heap (dtype is not used: nvshmem4py's behaviour)."""
    torch = _import_torch("bytetensor")
    return tensor(shape, dtype=torch.uint8, release=release, morder=morder)


def _free_view(x, call, what):
    """Frees the allocation array / tensor x starts (collective), or forgets x if it is a peer view (local)."""
    if _not_initialized(call):
        return
    p = address(x, call, what)
    if p in _peers:
        del _peers[p]
        return
    if p in _released_peers:  # a view of another PE's copy of an allocation freed since: nothing left to do
        _released_peers.discard(p)
        return
    base = symmetric_base(p, 1, call, what)
    if base != p:
        raise GshmemInvalid(f"{call}: {what} is a view into an allocation (offset {p - base}), not the one "
                            "gshmem.core returned")
    _release(p, call, what)


def free_array(arr):
    """Frees an array() (collective); pass the array array() returned (or one over the same memory, e.g.
    from_dlpack of a buffer()). A peer array (get_peer_array of another PE) is only forgotten (local no-op)."""
    _free_view(arr, "free_array", "the array")


def free_tensor(tensor):  # noqa: F811 (nvshmem4py's names)
    """Frees a tensor() / bytetensor() (collective). A peer tensor of another PE is only forgotten (local
    no-op), also after its allocation was freed."""
    _free_view(tensor, "free_tensor", "the tensor")


def _order(x):
    """"F" for a multi-dimensional array in Fortran order (array/tensor(morder="F")), else "C"."""
    if len(x.shape) < 2:
        return "C"
    flags = getattr(x, "flags", None)
    if flags is not None:
        return "F" if flags.f_contiguous and not flags.c_contiguous else "C"
    return "C" if x.is_contiguous() else "F"  # torch (describe() accepted it: C or F dense)


def _peer_view(x, pe, call):
    require_init(call)
    p, n, _, _, library = describe(x, call, "the array")
    symmetric_base(p, n, call, "the array")
    q = _peer_ptr(p, pe, call)
    _note_peer(p, q, n, int(pe))
    return make_array(library, q, n, tuple(x.shape), x.dtype, state.device, _order(x))


def _get_buffer(x, call):
    """(Buffer, bytes, dtype as the library prints it) of a symmetric array / tensor or a peer view."""
    require_init(call)
    p, n, _, _, _ = describe(x, call, "the array")
    peer = _peers.get(p)
    if peer is None:
        symmetric_base(p, n, call, "the array")
    return Buffer(p, n, peer=peer[1] if peer else None), n, str(x.dtype)


def array_get_buffer(array):  # noqa: F811
    """nvshmem4py's (Buffer, size in bytes, dtype string) of a symmetric array: the Buffer is what put_signal /
    signal_op / signal_wait and the AMOs take."""
    return _get_buffer(array, "array_get_buffer")


def tensor_get_buffer(tensor):  # noqa: F811
    """nvshmem4py's (Buffer, size in bytes, str(dtype)) of a symmetric tensor."""
    return _get_buffer(tensor, "tensor_get_buffer")


def get_multicast_array(team, array):  # noqa: F811
    """Not available: raises (multicast is off; see the message)."""
    _no_multicast("get_multicast_array")


def get_peer_array(arr, peer_pe=None):
    """An array over PE `peer_pe`'s copy of the symmetric `arr` (loads and stores go straight to it). Freeing it is
    a local no-op."""
    return _peer_view(arr, peer_pe, "get_peer_array")


def get_peer_tensor(tensor, peer_pe=None):  # noqa: F811
    """A torch tensor over PE `peer_pe`'s copy of the symmetric `tensor` (PEs of one node: NVLink / shared
    memory); kernels and copies on it read and write the peer's memory directly."""
    return _peer_view(tensor, peer_pe, "get_peer_tensor")


def get_multicast_tensor(team, tensor):  # noqa: F811
    """Not available: raises (multicast is off; see the message)."""
    _no_multicast("get_multicast_tensor")


def _register_external(obj, call, what):
    """register_external_tensor / _array: `obj` (a tensor or an array of any library) registered, and the same
    library's object of its shape and dtype at the symmetric address returned."""
    p, n, _, _, library = describe(obj, call, what)
    return make_array(library, _register(p, n, call), n, tuple(obj.shape), obj.dtype, state.device)


def _unregister_external(obj, call, what):
    _unregister(describe(obj, call, what)[0], call, f"the {what}")


def register_external_tensor(tensor):  # noqa: F811
    """Makes every PE's `tensor` (same bytes everywhere; GPU PEs: CUDA VMM memory with a POSIX-fd handle type, not
    torch's caching allocator; CPU PEs: a tensor over a MAP_SHARED file mapping) one symmetric region (collective);
    returns a tensor of the same shape and dtype at its symmetric address."""
    return _register_external(tensor, "register_external_tensor", "tensor")


def register_external_array(array):
    """nvshmem4py's interop.cupy.register_external_array: register_external_tensor for arrays (CuPy on GPU PEs, over
    CUDA VMM memory with a POSIX-fd handle type, not CuPy's memory pool; NumPy over a MAP_SHARED file mapping on
    CPU PEs); returns an array of the same shape and dtype at the symmetric address (collective)."""
    return _register_external(array, "register_external_array", "array")


def unregister_external_array(array):
    """Undoes register_external_array (collective); pass the array it returned."""
    _unregister_external(array, "unregister_external_array", "array")


def unregister_external_tensor(tensor):  # noqa: F811
    """Undoes register_external_tensor (collective); pass the tensor it returned."""
    _unregister_external(tensor, "unregister_external_tensor", "tensor")

