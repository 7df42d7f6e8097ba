"""How gshmem.core reads the arrays of other libraries, makes them over symmetric memory, and finds a CUDA stream.

No hard dependency: torch and CuPy are looked at only if the program imported them (sys.modules), and each array
type's reader is found once and cached by type, so a call costs a dict lookup and a few attribute reads.

A reader returns (address, bytes, elements, dtype name, library) for a dense array (C order, or Fortran order as
array/tensor(morder="F") make; nvshmem4py moves the bytes either way): a torch tensor, a CuPy array, a NumPy array,
or any other DLPack producer (read through nanobind, C order). gshmem.core.memory adds its Buffer.
Dtype names are NumPy's ("float32", "int64", "bool", ...; "bfloat16" for torch.bfloat16).
"""
import sys

import numpy as np

from gshmem import _gshmem
from gshmem.core.types import GshmemInvalid

__all__ = ["describe", "address", "make_array", "stream_handle", "readers", "torch_dtype", "fast_learn",
           "DLPACK_CPU", "DLPACK_CUDA"]

DLPACK_CPU, DLPACK_CUDA = 1, 2  # DLPack device types
_NUMPY, _TORCH, _CUPY = 0, 1, 2  # _gshmem.wrap's framework codes

# (DLPack type code, bits) -> dtype name, for arrays read through DLPack.
_DLPACK_NAMES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64", (1, 8): "uint8",
                 (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64", (2, 16): "float16", (2, 32): "float32",
                 (2, 64): "float64", (4, 16): "bfloat16", (5, 64): "complex64", (5, 128): "complex128",
                 (6, 8): "bool"}


def _not_contiguous(call, what):
    return GshmemInvalid(f"{call}: {what} is not contiguous (in C or Fortran order). Fix: pass a contiguous array or "
                         "tensor (a slice along the first axis, or the whole array), or .contiguous() / .copy() it "
                         "first")


def _torch_f_dense(x):
    """A torch tensor whose elements fill one block in Fortran order (tensor(morder="F"), a transposed matrix)."""
    step = 1
    for extent, stride in zip(x.shape, x.stride()):
        if extent != 1 and stride != step:
            return False
        step *= extent
    return True


class _Names(dict):
    """dtype -> name, filled on first sight of each dtype (NumPy's dtype.name is slow Python code; torch's dtypes
    have none: "torch.float32" -> "float32")."""

    def __missing__(self, dtype):
        name = dtype.name if isinstance(dtype, np.dtype) else str(dtype).rpartition(".")[2]
        self[dtype] = name
        return name


_np_names = _Names()
_torch_names = _Names()


def _numpy(x, call, what):
    if not x.flags.c_contiguous and not x.flags.f_contiguous:
        raise _not_contiguous(call, what)
    return x.__array_interface__["data"][0], x.nbytes, x.size, _np_names[x.dtype], "numpy"


def _torch_ptr(x):
    """x.data_ptr(), except for a tensor of no elements, whose data_ptr() torch gives as 0: its storage's address
    plus its offset there (a symmetric tensor of 0 elements, or an empty slice of one, is still at its address)."""
    p = x.data_ptr()
    if p == 0 and x.numel() == 0:
        p = x.untyped_storage().data_ptr() + x.storage_offset() * x.element_size()
    return p


def _torch(x, call, what):
    if not x.is_contiguous() and not _torch_f_dense(x):
        raise _not_contiguous(call, what)
    return _torch_ptr(x), x.nbytes, x.numel(), _torch_names[x.dtype], "torch"


def _cupy(x, call, what):
    if not x.flags.c_contiguous and not x.flags.f_contiguous:
        raise _not_contiguous(call, what)
    return x.data.ptr, x.nbytes, x.size, _np_names[x.dtype], "cupy"


def _dlpack(x, call, what):
    try:
        p, nbytes, n, code, bits, _, _, contiguous = _gshmem.dlpack_info(x)
    except (TypeError, RuntimeError) as e:
        raise GshmemInvalid(f"{call}: {what} ({type(x).__name__}) could not be read through DLPack: {e}") from None
    if not contiguous:
        raise _not_contiguous(call, what)
    return p, nbytes, n, _DLPACK_NAMES.get((code, bits), f"dlpack({code},{bits})"), "dlpack"


readers = {np.ndarray: _numpy}  # type -> reader; gshmem.core.memory adds Buffer
_LIBRARY = {_numpy: "numpy", _torch: "torch", _cupy: "cupy", _dlpack: "dlpack"}


def _reader_for(t, call, what):
    torch = sys.modules.get("torch")
    cupy = sys.modules.get("cupy")
    if issubclass(t, np.ndarray):
        r = _numpy
    elif torch is not None and issubclass(t, torch.Tensor):
        r = _torch
    elif cupy is not None and issubclass(t, cupy.ndarray):
        r = _cupy
    elif hasattr(t, "__dlpack__"):
        r = _dlpack
    else:
        raise GshmemInvalid(f"{call}: {what} is a {t.__module__}.{t.__name__}; pass a torch tensor, a CuPy or NumPy "
                            "array, a gshmem.core Buffer, or another DLPack array")
    readers[t] = r
    return r


def fast_learn(x, library, code=-1):
    """Tells gshmem._gshmem's fast path (python/src/fast.cpp) what the full path just read: x's type (a torch
    tensor's, read by attribute calls, or a NumPy array's, read through the buffer protocol) and, for torch, its
    dtype's collective type code (-1: none; collective._TYPES) and bytes per element."""
    if library == "torch":
        _gshmem.fast_learn_type(type(x), "torch")
        _gshmem.fast_learn_dtype(x.dtype, code, x.element_size())
    elif library == "numpy":
        _gshmem.fast_learn_type(type(x), "buffer")


def describe(x, call, what):
    """(address, bytes, elements, dtype name, library) of array `x`; GshmemInvalid naming `call` if it is none."""
    r = readers.get(type(x))
    if r is None:
        r = _reader_for(type(x), call, what)
    return r(x, call, what)


def address(x, call, what):
    """The address of array `x`'s first element, contiguous or not (what free_* and views need)."""
    library = describe_library(x, call, what)
    if library == "torch":
        return _torch_ptr(x)
    if library == "cupy":
        return x.data.ptr
    if library == "numpy":
        return x.__array_interface__["data"][0]
    if library == "buffer":
        return x.handle
    return _gshmem.dlpack_info(x)[0]


def describe_library(x, call, what):
    """"numpy", "torch", "cupy", "buffer" or "dlpack": which reader `x` takes."""
    r = readers.get(type(x)) or _reader_for(type(x), call, what)
    return _LIBRARY.get(r, "buffer")


def torch_dtype(torch, dtype):
    """A torch.dtype from a torch.dtype, a name ("float32") or a NumPy dtype; None is torch.float32."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    try:
        name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    except TypeError:
        name = None
    t = getattr(torch, name, None) if name else None
    if not isinstance(t, torch.dtype):
        raise GshmemInvalid(f"tensor: dtype={dtype!r} is not a torch dtype (or the name of one)")
    return t


def make_array(library, p, nbytes, shape, dtype, device, order="C"):
    """An array of `library` ("torch", "cupy", "numpy") over `nbytes` at address p, viewed as `shape` and `dtype`
    (no copy) in `order` ("C", or "F": column-major). device: (DLPack device type, id) of the memory."""
    if library == "torch":
        import torch
        flat = _gshmem.wrap(_TORCH, p, nbytes, *device)
        t = flat.view(torch_dtype(torch, dtype))
        if order == "F" and len(shape) > 1:
            strides, step = [], 1
            for extent in shape:
                strides.append(step)
                step *= extent
            return t.as_strided(tuple(shape), strides)
        return t.view(shape)
    if library == "cupy":
        flat = _gshmem.wrap(_CUPY, p, nbytes, *device)
        return flat.view(dtype).reshape(shape, order=order)
    # NumPy (CPU PEs): through a ctypes buffer of the memory, which NumPy keeps writable.
    import ctypes
    dtype = np.dtype(dtype)
    raw = (ctypes.c_char * max(nbytes, 1)).from_address(p)
    count = nbytes // dtype.itemsize if dtype.itemsize else 0
    return np.frombuffer(raw, dtype=dtype, count=count).reshape(shape, order=order)


def _current_stream():
    """The current stream of torch (if the program uses CUDA through torch), else CuPy's, else the legacy default
    stream (0)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            return raw(torch._C._cuda_getDevice())
        return torch.cuda.current_stream().cuda_stream
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        return cupy.cuda.get_current_stream().ptr
    return 0


def _stream_getter(t):
    """How to read the handle of a stream of type t (found once per type): CUDA's stream protocol
    (__cuda_stream__ -> (version, handle)), a torch stream's .cuda_stream, a CuPy stream's .ptr; None if none.
    Returns (how, getter), how as the extension's fast path takes it (fast_learn_stream)."""
    proto = getattr(t, "__cuda_stream__", None)
    if proto is not None:
        if callable(proto):
            return "protocol_call", lambda s: int(s.__cuda_stream__()[1])
        return "protocol_attr", lambda s: int(s.__cuda_stream__[1])
    for attr in ("cuda_stream", "ptr"):
        if hasattr(t, attr):
            return attr, lambda s, a=attr: int(getattr(s, a))
    return None, None


_stream_getters = {int: int}


def stream_handle(stream, call):
    """The cudaStream_t (an int) of `stream`: None (the current stream), an int, an object with __cuda_stream__
    (cuda.core, CUDA's stream protocol), a torch stream (.cuda_stream) or a CuPy stream (.ptr)."""
    if stream is None:
        return _current_stream()
    get = _stream_getters.get(type(stream))
    if get is None:
        how, get = _stream_getter(type(stream))
        if get is None:
            raise GshmemInvalid(f"{call}: stream={stream!r} is not a CUDA stream. Fix: pass a torch.cuda.Stream, a "
                                "CuPy stream, an object with __cuda_stream__ (cuda.core), a cudaStream_t as an int, "
                                "or None for the current stream")
        _stream_getters[type(stream)] = get
        _gshmem.fast_learn_stream(type(stream), how)
    return get(stream)
